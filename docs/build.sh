#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Renders the documentation (the guide, the C++ reference from the public headers, the Python
# reference from the package) into OUTPUT_DIR (default build/docs/html); any warning fails it.
#
#   docs/build.sh [OUTPUT_DIR]
#
# Needs Doxygen (Debian: doxygen) and Python 3.9+ with venv. Works in the virtual environment
# DPSELECT_DOCS_VENV (default build/docs-venv), which it creates when missing: it installs
# docs/requirements.txt there, and the Python package (`pip install ./python`, CPU-only) when
# `import dpselect` fails there. Give a virtual environment that already holds the package to
# document that build (the tests pass the one of the fresh-install test).
set -euo pipefail
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
output=$(realpath -m "${1:-$source_dir/build/docs/html}")
venv=$(realpath -m "${DPSELECT_DOCS_VENV:-$source_dir/build/docs-venv}")

command -v doxygen >/dev/null 2>&1 || {
  echo "docs/build.sh: doxygen is missing (Debian: sudo apt-get install -y doxygen)" >&2
  exit 2
}
[[ -x $venv/bin/python ]] || python3 -m venv "$venv"
python=$venv/bin/python
"$python" -m pip install --quiet --disable-pip-version-check -r "$source_dir/docs/requirements.txt"
if ! (cd / && "$python" -c "import dpselect" 2>/dev/null); then
  CMAKE_ARGS="${CMAKE_ARGS:--DDPSELECT_CUDA=OFF}" \
    "$python" -m pip install --quiet --disable-pip-version-check "$source_dir/python"
fi

# A fresh build each time (-E): a stale environment could hide a warning. The Doxygen XML goes
# next to the pages, not into the source tree.
mkdir -p "$output"
DPSELECT_DOXYGEN_OUTPUT="$output/../doxygen" \
  "$python" -m sphinx -E -W --keep-going -q -b html "$source_dir/docs" "$output"
echo "docs/build.sh: $output/index.html"
