# Finding the libraries pipeline-run needs on the GPU machine (sourced by
# run.sh; docs/gpu.md). The image holds the CUDA toolkit and PyTorch's
# wheels; cuBLAS, cuBLASLt and NCCL may live only in the wheels' folders
# (site-packages/nvidia/*/lib), which no RUNPATH names.

# The folders searched, in order: GPU_KIT_LIB_ROOTS when set, else the CUDA
# toolkit, Python's site-packages, /opt and /usr/local/lib (the system's
# own folders the loader searches anyway).
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
  echo "$roots /opt /usr/local/lib"
}

# libs_missing FILE...: the libraries ldd cannot resolve or load, one
# soname per line, each once ("not found", a file that is no library, or
# one older than the symbol versions asked for: "libc.so.6(GLIBC_2.38)").
libs_missing() {
  local f
  for f in "$@"; do
    ldd "$f" 2>&1 | awk '
      $2 == "=>" && $3 == "not" { print $1 }
      /error while loading shared libraries: / {
        sub(/.*shared libraries: /, ""); sub(/: .*/, ""); sub(/.*\//, ""); print }
      /: version `.*'"'"' not found/ {
        lib = $0; sub(/: version .*/, "", lib); sub(/.*\//, "", lib)
        v = $0; sub(/.*version `/, "", v); sub(/'"'"'.*/, "", v); print lib "(" v ")" }'
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

# libs_resolve FILE...: appends to LD_LIBRARY_PATH the folder of each
# library FILE needs and ldd does not find, until nothing more is found (a
# library found may itself need another: cuBLAS needs cuBLASLt). Appended,
# so that the kit's MPI stays first.
libs_resolve() {
  local round soname dir found
  for round in 1 2 3 4; do
    found=0
    for soname in $(libs_missing "$@"); do
      dir=$(libs_find "$soname") || continue
      case ":${LD_LIBRARY_PATH:-}:" in *":$dir:"*) continue ;; esac
      echo "gpu-kit: $soname from $dir"
      export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$dir
      found=1
    done
    [ "$found" = 1 ] || return 0
  done
}

# libs_check FILE...: names each library that a FILE needs and that is
# still not found, once, with the files that need it and where it was
# looked for; status 3 if any.
libs_check() {
  local f soname
  for f in "$@"; do
    for soname in $(libs_missing "$f"); do echo "$soname ${f##*/}"; done
  done | awk -v roots="$(libs_search_roots)" '
    { if (!($1 in users)) order[++n] = $1; count[$1]++
      if (count[$1] <= 3) users[$1] = users[$1] (count[$1] > 1 ? ", " : "") $2 }
    END {
      for (i = 1; i <= n; i++) {
        s = order[i]; more = count[s] > 3 ? " and " count[s] - 3 " more" : ""
        printf "gpu-kit: %s: not found or not loadable, needed by %s%s (searched: LD_LIBRARY_PATH, the system'"'"'s folders, %s)\n", s, users[s], more, roots
        if (s ~ /\(GLIBC_/) old_glibc = 1
      }
      if (old_glibc) print "gpu-kit: this machine'"'"'s glibc is older than the kit'"'"'s binaries need: run with --build-here (docs/gpu.md)"
      exit n > 0 ? 3 : 0
    }' >&2
}
