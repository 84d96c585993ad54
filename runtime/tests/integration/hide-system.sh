#!/usr/bin/env bash
# Runs a command with parts of this machine hidden, as the GPU machine
# lacks them (gpu-kit*.test): every file of the named Debian packages, and
# the named folders. Run it inside a private mount namespace
# (unshare -m --propagation private), which ends with the command.
#
#   hide-system.sh [--package NAME]... [--dir PATH]... -- COMMAND...
#
# A folder that only hidden packages own, and each --dir, is covered by an
# empty tmpfs: its files are absent. Any other file of a hidden package is
# covered by a script that says "hidden" and exits 127: a library there no
# longer loads, a program no longer runs. Prints what it hid; fails if it
# cannot mount (then nothing is proven).
set -u
packages=() dirs=()
while [ $# -gt 0 ]; do
  case $1 in
    --package) packages+=("$2"); shift 2 ;;
    --dir) dirs+=("$(readlink -f "$2")"); shift 2 ;;
    --) shift; break ;;
    *) echo "hide-system: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
installed=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' && installed+=("$p")
done
# The topmost folders that hidden packages alone own, from dpkg's file
# lists read once (dpkg-query -S per folder takes minutes).
owned_folders() {
  local p
  for p in "${installed[@]}"; do dpkg -L "$p"; done | sort -u |
    while read -r d; do [ -d "$d" ] && [ ! -L "$d" ] && echo "$d"; done |
    awk -v hidden="${installed[*]}" '
      BEGIN { n = split(hidden, h, " "); for (i = 1; i <= n; i++) mine[h[i]] = 1 }
      FNR == NR { want[$0] = 1; next }
      ($0 in want) {
        p = FILENAME; sub(/.*\//, "", p); sub(/\.list$/, "", p); sub(/:.*/, "", p)
        if (p in mine) ours[$0] = 1; else theirs[$0] = 1
      }
      END { for (d in ours) if (!(d in theirs)) print d }' - /var/lib/dpkg/info/*.list | sort
}
while read -r d; do
  covered=0
  for t in "${dirs[@]}"; do [[ "$d" == "$t" || "$d" == "$t"/* ]] && covered=1; done
  [ "$covered" = 1 ] || dirs+=("$d")
done < <(owned_folders)

for d in "${dirs[@]}"; do
  mount -t tmpfs -o size=1m hidden "$d" || { echo "hide-system: cannot mount over $d" >&2; exit 1; }
done
marker=$(mktemp "${TMPDIR:-/tmp}/hidden.XXXXXX")
printf '#!/bin/sh\necho "hidden: $0" >&2\nexit 127\n' >"$marker"
chmod +x "$marker"
files=0
for p in "${installed[@]}"; do
  while read -r f; do
    # A link is left alone: what it names is another file of some package
    # (a -dev package's libz.so names zlib1g's library).
    [ -f "$f" ] && [ ! -L "$f" ] || continue
    f=$(readlink -f "$f")
    mount --bind "$marker" "$f" 2>/dev/null && files=$((files + 1))
  done < <(dpkg -L "$p")
done
echo "hide-system: hid ${#installed[@]} packages (${installed[*]}): ${#dirs[@]} folders and $files files"
exec "$@"
