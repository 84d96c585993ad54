#!/usr/bin/env bash
# Rebuilds the test programs of this directory from their specs with the
# compiler, NAME.mlir -> NAME.json: the runtime's tests run only programs
# the compiler makes (integration/fixtures.test recompiles every spec and
# fails when a checked-in program differs). A spec's line
# "// pipeline-compile: OPTIONS" adds OPTIONS to its compile. The invalid
# programs under invalid/ and deadlock-2.json are written by hand: no
# compiler makes them.
#
#   regenerate.sh [PIPELINE-COMPILE]   (default: <repository>/build/bin/pipeline-compile)
set -eu
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
compile=${1:-$here/../../../build/bin/pipeline-compile}
[ -x "$compile" ] || { echo "regenerate.sh: no $compile (build the compiler first)" >&2; exit 1; }
for spec in "$here"/*.mlir; do
  # shellcheck disable=SC2046 # the options are words
  "$compile" "$spec" $(sed -n 's|^// pipeline-compile: ||p' "$spec") -o "${spec%.mlir}.json"
done
echo "regenerated $(ls "$here"/*.mlir | wc -l) programs"
