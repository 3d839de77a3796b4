#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's two set-up commands, on a fresh Debian/Ubuntu machine:
#
#   cmake/quickstart.sh demo   installs what is missing, builds the library and the dpselect
#                              command, and runs the demo (a synthetic auction)
#   cmake/quickstart.sh test   installs what is missing, builds everything and runs the whole
#                              test suite: the `default` preset (CUDA for sm_90 when nvcc is
#                              found; GPU tests report as skipped without a GPU), the `cpu-only`
#                              one, and the sanitizer workflows `asan-ubsan` and `tsan`. Both of
#                              the first two also install the Python package in a fresh virtual
#                              environment, as the README says (pip takes its build requirements
#                              from PyPI), and the cpu-only one runs the Python tests against it
#
# Missing Debian packages are installed when this runs as root with apt-get; otherwise it stops
# at once with exit status 2 and prints the one apt-get line to run. CI (.ci/run) calls
# `cmake/quickstart.sh test` exactly as the README writes it.
set -euo pipefail

usage() {
  echo "usage: cmake/quickstart.sh demo|test" >&2
  exit 2
}
[[ $# -eq 1 ]] || usage
task=$1
[[ $task == demo || $task == test ]] || usage

cd "$(dirname "${BASH_SOURCE[0]}")/.."

# What each task needs from Debian: the build tools, CLI11 for the command, and for the tests
# GoogleTest, Google Benchmark and Open MPI (the optional dpselect::mpi target and its `mpi`
# tests, run under mpiexec). The CUDA Toolkit is optional and never installed here.
packages=(cmake ninja-build g++ libcli11-dev)
# clang and LLVM's OpenMP runtime build the ThreadSanitizer workflow (its Archer tool tells TSan
# about OpenMP's synchronization; docs/reliability.md).
# Doxygen reads the public headers for the rendered reference (docs/build.sh, the docs_reference test).
# Java runs PySpark in local mode for the dpselect.spark tests.
# Boost.Context runs the kernels' threads as fibers in the `simt` build (tests/simt).
[[ $task == test ]] && packages+=(libgtest-dev libbenchmark-dev libopenmpi-dev openmpi-bin python3-venv python3-dev
  clang libomp-dev doxygen default-jre-headless libboost-context-dev)

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for package in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
    [[ $status == "install ok installed" ]] || missing+=("$package")
  done
else
  # Not a Debian system: check the tools; CMake reports any library it cannot find.
  for tool in cmake ninja g++; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
  done
fi

if ((${#missing[@]} > 0)); then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    echo "quickstart: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    # The package lists of a fresh image may be empty or stale: update once if the install fails.
    apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
      { apt-get update >/dev/null && apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null; }
  else
    echo "quickstart: missing ${missing[*]}; install them with:" >&2
    echo "  sudo apt-get install -y ${missing[*]}" >&2
    exit 2
  fi
fi

cmake_version=$(cmake --version | sed -n '1s/^cmake version \([0-9]*\.[0-9]*\).*/\1/p')
if [[ $(printf '%s\n' 3.25 "$cmake_version" | sort -V | head -n 1) != 3.25 ]]; then
  echo "quickstart: CMake >= 3.25 is needed (found ${cmake_version:-none})" >&2
  exit 2
fi

case $task in
  demo)
    # DPSELECT_CUDA=AUTO (the default): the CUDA backend for this machine's GPU where there is one
    # and nvcc, else the CPU-only library, saying so.
    cmake --preset command >/dev/null
    cmake --build --preset command --target dpselect_cli
    build/command/host/cli/dpselect demo
    ;;
  test)
    # Each step's wall time on stderr (CI's budget is kept per step; docs/development.md).
    step() {
      local name=$1 start=$SECONDS
      shift
      "$@"
      echo "quickstart: $name took $((SECONDS - start)) s" >&2
    }
    # The CUDA build (sm_90 alone: the `default` preset). With a usable GPU every test runs; without
    # one the tests whose outcome depends on this build run (GPU tests, reported as skipped; unit
    # tests, which include the device probe; the documentation's programs; installs), and the rest,
    # the same CPU code, run in the cpu-only build below.
    step 'default: configure' cmake --preset default
    step 'default: build' cmake --build --preset default
    # The README's first command, as written there (its own build, for this machine).
    step 'readme: demo' bash -euo pipefail -c "$(python3 tests/install/doc_block.py README.md quickstart_demo)"
    # Without a GPU, two tests at a time (the pip install, the longest, starts first: its COST);
    # with one, one at a time, so that no two tests share the device.
    if nvidia-smi -L >/dev/null 2>&1; then
      step 'default: tests' ctest --preset default
    else
      step 'default: tests' ctest --preset default -L '^(gpu|unit|docs|install|pip)$' -j2
    fi
    # Without nvcc: everything but the benchmarks and the documentation's programs (built and run
    # above); the Python package is built by pip in a fresh virtual environment, and the Python
    # test suite runs against it (python_pip_install_fresh). Two tests at a time (the preset's jobs).
    step 'cpu-only: configure' cmake --preset cpu-only -DDPSELECT_BUILD_BENCHMARKS=OFF -DDPSELECT_BUILD_EXAMPLES=OFF
    step 'cpu-only: build' cmake --build --preset cpu-only
    step 'cpu-only: tests' ctest --preset cpu-only
    # The kernels run on the CPU, thread by thread (tests/simt): every GPU test, with the CUDA
    # Toolkit's headers (read by clang; no GPU and no nvcc run). Without the toolkit it cannot be
    # built, and says so.
    if command -v nvcc >/dev/null 2>&1 || [[ -x /usr/local/cuda/bin/nvcc ]]; then
      step 'simt: workflow' cmake --workflow --preset simt
    else
      echo "quickstart: simt skipped: no CUDA Toolkit (its headers: cuda_runtime_api.h, libcu++)" >&2
    fi
    # The sanitizers (docs/reliability.md): AddressSanitizer + UndefinedBehaviorSanitizer over the
    # unit, CLI and install tests; ThreadSanitizer over the concurrency tests.
    step 'asan-ubsan: workflow' cmake --workflow --preset asan-ubsan
    step 'tsan: workflow' cmake --workflow --preset tsan
    ;;
esac
