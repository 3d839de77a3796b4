#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's Python install, exactly as written, in a fresh virtual environment with pip's
# build isolation (the build requirements come from PyPI), from a copy of the repository's
# tracked files; then the README's Python hello world with that environment, and the installed
# package's version, licence and backend.
#
#   pip_install_fresh.sh SOURCE_DIR WORK_DIR cpu|cuda [CMAKE_ARGS [DPSELECT_CLI]]
#
# cpu: the package must be built without CUDA; cuda: with it. CMAKE_ARGS (the README's way to pass
# CMake options to pip) goes to the build as the README says (CI passes one GPU architecture).
# With DPSELECT_CLI (the command of the same sources), the whole Python test suite (python/tests,
# with pytest, matplotlib, mypy, Dask, PySpark, PyArrow and python-dp from PyPI; Spark runs on
# Debian's Java) then runs against the installed package.
set -euo pipefail
source_dir=$1 work=$2 backend=$3
export CMAKE_ARGS=${4:-}
cli=${5:-}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work/tree" "$work/run"
# A clean copy: the tracked files as they are in the work tree (no build folders, no virtualenvs).
git -C "$source_dir" ls-files -z | tar -C "$source_dir" --null -T - -cf - | tar -C "$work/tree" -xf -
python3 "$here/doc_block.py" "$source_dir/README.md" python_install > "$work/install.sh"
python3 "$here/doc_block.py" "$source_dir/README.md" hello_python > "$work/run/hello.py"
# No virtualenv of the caller leaks into the fresh one.
unset VIRTUAL_ENV PYTHONPATH
PATH=$(printf '%s' "$PATH" | tr ':' '\n' | grep -v -- '-venv/bin$' | paste -sd: -)
start=$(date +%s)
(cd "$work/tree" && bash -euo pipefail "$work/install.sh")
echo "pip_install_fresh.sh: README install took $(($(date +%s) - start)) s (CMAKE_ARGS='$CMAKE_ARGS')"
python=$work/tree/.venv/bin/python
(cd "$work/run" && "$python" hello.py)
expected_version=$(sed -n 's/^project(dpselect VERSION \([0-9.]*\).*/\1/p' "$source_dir/CMakeLists.txt")
"$python" - "$expected_version" "$backend" <<'PY'
import importlib.metadata
import sys

import dpselect

expected_version, backend = sys.argv[1], sys.argv[2]
metadata = importlib.metadata.metadata("dpselect")
problems = []
if dpselect.__version__ != expected_version or metadata["Version"] != expected_version:
    problems.append(f"version {dpselect.__version__} / {metadata['Version']}, expected {expected_version}")
if metadata["License-Expression"] != "Apache-2.0":
    problems.append(f"licence {metadata['License-Expression']!r}, expected 'Apache-2.0'")
if dpselect.built_with_cuda() != (backend == "cuda"):
    problems.append(f"built_with_cuda() is {dpselect.built_with_cuda()} for a {backend} build")
if problems:
    sys.exit("pip_install_fresh.sh: " + "; ".join(problems))
print(f"pip_install_fresh.sh: dpselect {dpselect.__version__}, Apache-2.0, {backend} build: ok")
PY
if [[ -n $cli ]]; then
  "$python" -m pip install --quiet --disable-pip-version-check pytest matplotlib mypy "dask[distributed,dataframe]" \
    pyspark pyarrow python-dp
  # From outside the tree, so that `import dpselect` is the installed package.
  (cd "$work/run" && DPSELECT_CLI=$cli OMP_NUM_THREADS=2 "$python" -m pytest -q -p no:cacheprovider "$work/tree/python/tests")
fi
