#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Packs the sm_90 build of the default preset (every test, benchmark, example and command
# binary, with the CTest files that name them) into build/device/, for a separate GPU machine whose
# image has nvcc but no GoogleTest, Google Benchmark or CLI11. Build first, then pack, here:
#
#   cmake --preset default && cmake --build --preset default
#   bench/device_pack.sh
#   WHEEL=build/wheel312/dpselect-0.1.0-cp312-cp312-linux_x86_64.whl bench/device_pack.sh
#
# and carry build/device with the device tool; bench/device_run.sh unpacks it there. The CTest
# files hold absolute paths of this checkout (recorded in build/device/source_root.txt);
# device_run.sh links that path to the copy it runs in. Debian's Google Benchmark is a shared library, so it travels too.
set -euo pipefail

if [[ ! -f CMakePresets.json ]]; then
  echo "device_pack.sh: run this from the dpselect repository root" >&2
  exit 2
fi
BUILD_DIR=build/default
if [[ ! -x "${BUILD_DIR}/tests/dpselect_gpu_tests" ]]; then
  echo "device_pack.sh: ${BUILD_DIR} is not built (cmake --build --preset default)" >&2
  exit 1
fi
DEST=build/device
rm -rf "${DEST}"
mkdir -p "${DEST}/lib"
cp -a /usr/lib/x86_64-linux-gnu/libbenchmark.so* "${DEST}/lib/"
# The command links Open MPI (its MPI_Init runs only under a launcher), which that image lacks,
# and OpenMP's runtime: their libraries travel, the C and C++ runtimes and CUDA's do not.
ldd "${BUILD_DIR}/host/cli/dpselect" "${BUILD_DIR}/tests/dpselect_unit_tests" |
  awk '$3 ~ /^\// {print $3}' | sort -u |
  grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|libdl|libpthread|librt|libcudart|libcurand|libz)\.so' |
  xargs -r cp -L -t "${DEST}/lib/"
# Executables and CTest scripts; object files, dependency files and libdpselect.a stay here.
find "${BUILD_DIR}" -path "${BUILD_DIR}/CMakeFiles" -prune -o \
  \( -name CTestTestfile.cmake -o -name '*_include.cmake' -o -name '*_tests.cmake' \
  -o \( -type f -perm -u+x ! -name '*.so*' ! -path '*/CMakeFiles/*' \) \) -print |
  sort > "${DEST}/files.txt"
tar -cf - -T "${DEST}/files.txt" | xz -T2 -6 > "${DEST}/prebuilt.tar.xz"
git rev-parse HEAD > "${DEST}/commit.txt"
pwd -P > "${DEST}/source_root.txt"
# A wheel of the Python package for the machine's Python (WHEEL=path; device_run.sh builds the
# package there from source when none travels).
if [[ -n "${WHEEL:-}" ]]; then cp "${WHEEL}" "${DEST}/"; fi
ls -l "${DEST}"
du -sh "${DEST}"
