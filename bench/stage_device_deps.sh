#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Stages what a build on a separate GPU machine needs and its image lacks (it has nvcc, CMake and
# ninja, no network, and no GoogleTest, Google Benchmark or CLI11) into build/device-deps/, an
# ignored folder small enough (~5 MiB) to travel with the device tool's `carry`. Run it here, from
# the repository root:
#
#   bench/stage_device_deps.sh
#
# It takes them from this machine's Debian packages: GoogleTest as sources (libgtest-dev ships
# them in /usr/src/googletest; they are built there, against that image's C++ library), Google
# Benchmark as Debian's shared library, headers and CMake package (Debian ships no sources), and
# CLI11's headers and CMake package. On the GPU machine, with build/device-deps carried:
#
#   deps=$PWD/build/device-deps/prefix
#   cmake -S build/device-deps/googletest-src -B /tmp/gtest -G Ninja -DCMAKE_INSTALL_PREFIX="$deps" \
#     && cmake --build /tmp/gtest && cmake --install /tmp/gtest
#   export CMAKE_PREFIX_PATH="$deps" LD_LIBRARY_PATH="$deps/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
#   RUN_TESTS=1 RUN_AUDIT=1 bench/run_gpu_bench.sh
#
# If Debian's libbenchmark does not load there (another C library), configure with
# -DDPSELECT_BUILD_BENCHMARKS=OFF to run the tests and the audit.
set -euo pipefail

if [[ ! -f CMakePresets.json ]]; then
  echo "stage_device_deps.sh: run this from the dpselect repository root" >&2
  exit 2
fi
for needed in /usr/src/googletest /usr/include/benchmark /usr/lib/x86_64-linux-gnu/cmake/benchmark \
  /usr/include/CLI /usr/share/cmake/CLI11; do
  if [[ ! -e "${needed}" ]]; then
    echo "stage_device_deps.sh: ${needed} is missing (apt-get install libgtest-dev libbenchmark-dev libcli11-dev)" >&2
    exit 1
  fi
done

DEST=build/device-deps
PREFIX="${DEST}/prefix"
rm -rf "${DEST}"
mkdir -p "${PREFIX}/include" "${PREFIX}/lib/x86_64-linux-gnu/cmake" "${PREFIX}/share/cmake"
cp -r /usr/src/googletest "${DEST}/googletest-src"
cp -r /usr/include/benchmark /usr/include/CLI "${PREFIX}/include/"
cp -a /usr/lib/x86_64-linux-gnu/libbenchmark.so* /usr/lib/x86_64-linux-gnu/libbenchmark_main.a \
  "${PREFIX}/lib/x86_64-linux-gnu/"
# The CMake packages compute their prefix from their own location, so the /usr layout is kept.
cp -r /usr/lib/x86_64-linux-gnu/cmake/benchmark "${PREFIX}/lib/x86_64-linux-gnu/cmake/"
cp -r /usr/share/cmake/CLI11 "${PREFIX}/share/cmake/"
du -sh "${DEST}"
