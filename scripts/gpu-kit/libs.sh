# Finding the libraries pipeline-run needs on the GPU machine (sourced by
# run.sh; docs/gpu.md). The image holds the CUDA toolkit and PyTorch's
# wheels; cuBLAS, cuBLASLt and NCCL may live only in the wheels' folders
# (site-packages/nvidia/*/lib), which no RUNPATH names.

# The folders searched, in order: GPU_KIT_LIB_ROOTS when set, else the CUDA
# toolkit, Python's site-packages and the usual library folders.
libs_search_roots() {
  if [ -n "${GPU_KIT_LIB_ROOTS:-}" ]; then
    echo "$GPU_KIT_LIB_ROOTS"
    return
  fi
  local roots="/usr/local/cuda /usr/local/cuda-13.0 /usr/local/nvidia"
  local py
  for py in python3 /opt/torch/.venv/bin/python3; do
    command -v "$py" >/dev/null 2>&1 || continue
    roots+=" $("$py" -c 'import site; print(*site.getsitepackages())' 2>/dev/null)"
  done
  echo "$roots /opt /usr/local/lib /usr/lib/x86_64-linux-gnu"
}

# libs_missing FILE...: the sonames ldd cannot resolve, one per line, each
# once.
libs_missing() {
  local f
  for f in "$@"; do
    ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 == "not" { print $1 }'
  done | sort -u
}

# libs_find SONAME: the first folder under the search roots that holds it.
libs_find() {
  local root hit
  for root in $(libs_search_roots); do
    [ -d "$root" ] || continue
    hit=$(find -L "$root" -maxdepth 7 -name "$1" \( -type f -o -type l \) -print -quit 2>/dev/null)
    [ -n "$hit" ] && { dirname "$hit"; return 0; }
  done
  return 1
}

# libs_resolve FILE...: adds to LD_LIBRARY_PATH the folder of each library
# FILE needs and ldd does not find, until nothing more is found (a library
# found may itself need another: cuBLAS needs cuBLASLt).
libs_resolve() {
  local round soname dir found
  for round in 1 2 3 4; do
    found=0
    for soname in $(libs_missing "$@"); do
      dir=$(libs_find "$soname") || continue
      case ":${LD_LIBRARY_PATH:-}:" in *":$dir:"*) continue ;; esac
      echo "gpu-kit: $soname from $dir"
      export LD_LIBRARY_PATH=$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
      found=1
    done
    [ "$found" = 1 ] || return 0
  done
}

# libs_check FILE...: names each library a FILE needs that is still not
# found, with where it was looked for; status 3 if any.
libs_check() {
  local f soname status=0
  for f in "$@"; do
    for soname in $(libs_missing "$f"); do
      echo "gpu-kit: $f needs $soname: not found (LD_LIBRARY_PATH, the system, and under: $(libs_search_roots))" >&2
      status=3
    done
  done
  return $status
}
