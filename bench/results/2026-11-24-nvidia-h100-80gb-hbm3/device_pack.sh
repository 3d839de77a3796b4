#!/usr/bin/env bash
# Packs the locally built sm_90 tree (binaries + ctest files) for the device machine.
set -euo pipefail
cd /work/main
files=$( (find build/default -name CTestTestfile.cmake; find build/default -name '*_include.cmake'; find build/default -name '*_tests.cmake';
  ls build/default/tests/dpselect_*_tests build/default/tests/contraction/dpselect_contraction_tests \
     build/default/bench/dpselect_bench_gpu build/default/bench/dpselect_bench_cpu build/default/host/cli/dpselect) | sort -u)
mkdir -p .device/lib
cp -a /usr/lib/x86_64-linux-gnu/libbenchmark.so* .device/lib/
tar -cf - $files | xz -T2 -6 > .device/prebuilt.tar.xz
ls -la .device/prebuilt.tar.xz
