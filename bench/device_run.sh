#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One bounded call on a separate GPU machine: unpacks what bench/device_pack.sh built here, then
# runs, each phase under its own time limit so that a slow phase cannot take the others' time:
#
#   1. benchmarks, alone on the GPU (bench/run_gpu_bench.sh with SKIP_BUILD=1; BENCH_FILTER,
#      DPSELECT_QUANTILE_BENCH_LOG2N as there); meanwhile the Python package is built from source
#      (pip, nanobind and scikit-build-core of the machine's image, CUDA backend);
#   2. at once: the GPU tests (ctest -L gpu), every other test label except mpi and install,
#      compute-sanitizer (memcheck, racecheck, synccheck; SANITIZER_TOOLS) over every suite of the
#      GPU test binary, one process per tool and suite (SANITIZER_JOBS at a time), the Python tests
#      (CuPy and PyTorch CUDA tensors included) and the audit of the single-pick mechanisms at
#      AUDIT_RUNS releases per input.
#
# Logs go to a folder that is packed into $OUT/results.tgz after every phase (what the device
# tool brings back survives a timeout); $OUT/summary.txt holds the lines worth reading first.
#
#   device tool: run  command='bash bench/device_run.sh'  carry=['build/device']  timeout_s=560
#
# Limits (seconds): BENCH_LIMIT=150 TEST_LIMIT=300 (phase 2, sanitizers included) SANITIZER_LIMIT=200
# (one tool over one suite) SANITIZER_PARTIAL_LIMIT=90 (a suite of statistical tests alone)
# AUDIT_RUNS=10^7.
# Narrower calls: BENCH_FILTER / QUANTILE_BENCH_FILTER / PARTITIONS_BENCH_FILTER (run_gpu_bench.sh's;
# SKIP_SELECTION=1 and SKIP_PARTITIONS=1 skip the selection and the partition selection
# benchmarks, DPSELECT_PARTITIONS_BENCH_LOG2N sizes the latter), ALONE_TESTS (a ctest -R regex run alone on the GPU after the
# benchmarks), GPU_TESTS (ctest -R within label gpu), SANITIZER_SUITES (a regex of suite names),
# SANITIZER_JOBS_FILE (lines "tool gtest-filter" instead of every suite), SKIP_SANITIZERS, SKIP_OTHER_TESTS, SKIP_AUDIT and
# SKIP_PYTHON (SKIP_PYTHON=1 also makes a dry run of this script on a machine without a GPU),
# SANITIZERS_AFTER_TESTS (the sanitizers wait for the GPU tests), NCU_JOBS_FILE (Nsight Compute
# profiles after the benchmarks; NCU_LIMIT seconds each).
set -uo pipefail
T0=$(date +%s)
elapsed() { echo $(( $(date +%s) - T0 )); }
OUT="${OUT:-/tmp/device-out}"
mkdir -p "${OUT}"
LOGS=/tmp/device-results
rm -rf "${LOGS}"
mkdir -p "${LOGS}"
SUMMARY="${OUT}/summary.txt"
note() { echo "[$(elapsed) s] $*" | tee -a "${SUMMARY}"; }
pack() { tar -C /tmp -czf "${OUT}/results.tgz" device-results 2> /dev/null; }

# The CTest files name the checkout where device_pack.sh ran (build/device/source_root.txt): make
# that path this copy.
ROOT=$(pwd -P)
PACKED_ROOT="$(cat build/device/source_root.txt 2> /dev/null || echo /work/main)"
if [[ "${ROOT}" != "${PACKED_ROOT}" ]]; then
  # The packed path is replaced by a link: neither may hold the other.
  case "${PACKED_ROOT}/" in "${ROOT}/"*) note "${PACKED_ROOT} lies inside this copy ${ROOT}"; exit 1 ;; esac
  case "${ROOT}/" in "${PACKED_ROOT}/"*) note "this copy ${ROOT} lies inside ${PACKED_ROOT}"; exit 1 ;; esac
  mkdir -p "$(dirname "${PACKED_ROOT}")"
  rm -rf "${PACKED_ROOT}"
  ln -s "${ROOT}" "${PACKED_ROOT}"
fi
cd "${PACKED_ROOT}" || exit 1
[[ -x /usr/bin/cmake ]] || ln -sf "$(command -v cmake)" /usr/bin/cmake  # CTest files name it
export LD_LIBRARY_PATH="${PACKED_ROOT}/build/device/lib${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}"
tar -xJf build/device/prebuilt.tar.xz || { note "unpack failed"; exit 1; }
mkdir -p build/default/tests/cli/output_files
export DPSELECT_COMMIT="$(cat build/device/commit.txt)"
note "commit ${DPSELECT_COMMIT}; unpacked"

{
  nvidia-smi
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit,pstate --format=csv
  nvcc --version | tail -n 1
  compute-sanitizer --version | tail -n 1
  python3 -c 'import sys, numpy, torch, cupy; print(sys.version.split()[0], "numpy", numpy.__version__, "torch", torch.__version__, "cupy", cupy.__version__)'
  nproc
  free -g
} > "${LOGS}/machine.txt" 2>&1
grep -E "NVIDIA|Build|Version|^3\." "${LOGS}/machine.txt" | head -6 | tee -a "${SUMMARY}"

# The Python package: the wheel device_pack.sh carried (built here for the machine's Python),
# else built from source while the benchmarks run (they time the GPU with events).
(
  if [[ -n "${SKIP_PYTHON:-}" ]]; then
    echo "SKIP_PYTHON set" > "${LOGS}/python-build.log"
    exit 0
  elif compgen -G "build/device/*.whl" > /dev/null; then
    python3 -m pip install --no-deps --no-index --no-cache-dir build/device/*.whl > "${LOGS}/python-build.log" 2>&1
  else
    cd python && CMAKE_BUILD_PARALLEL_LEVEL=12 timeout 400 nice python3 -m pip install \
      --no-build-isolation --no-deps --no-cache-dir -v . > "${LOGS}/python-build.log" 2>&1
  fi
  echo "python install rc $?" >> "${LOGS}/python-build.log"
) &
PYTHON_BUILD=$!

# Each mechanism and generator over 2^24 and 2^30 float32 against one read, CUB ArgMax and a copy;
# the data shapes that a screen finds hard at 2^30; rows, top-k, pricing and repeated releases; every
# noise shape with both generators at 10^7 and 10^9 values.
DEFAULT_FILTER='gpu_(select|cub_argmax|read|memcpy_d2d)/float/.*n:(16777216|1073741824)/|gpu_select/double/.*n:1073741824/'
DEFAULT_FILTER+='|gpu_select_shape/float/.*/n:1073741824/'
DEFAULT_FILTER+='|gpu_rows/float/rows:(4096/cols:131072|32/cols:262144)/|gpu_top_k/float/k:(16|1024)/n:1073741824/'
DEFAULT_FILTER+='|gpu_pricing/per_price/bids:1000000/prices:1000000000/|gpu_repeated/double/n:8/releases:65536/'
DEFAULT_FILTER+='|gpu_noise_vector/.*/n:(10000000|1000000000)/'
note "phase 1: benchmarks"
SKIP_BUILD=1 SKIP_CPU=1 BENCH_MIN_TIME="${BENCH_MIN_TIME:-0.2}" BENCH_FILTER="${BENCH_FILTER:-${DEFAULT_FILTER}}" \
  QUANTILE_BENCH_FILTER="${QUANTILE_BENCH_FILTER:-float/}" DPSELECT_QUANTILE_BENCH_LOG2N="${DPSELECT_QUANTILE_BENCH_LOG2N:-24,30}" \
  DPSELECT_PARTITIONS_BENCH_LOG2N="${DPSELECT_PARTITIONS_BENCH_LOG2N:-24,30}" \
  timeout "${BENCH_LIMIT:-150}" bash bench/run_gpu_bench.sh > "${LOGS}/bench-log.txt" 2>&1
note "benchmarks rc $?"
RESULTS_DIR=$(ls -dt bench/results/*/ | head -n 1)
cp -r "${RESULTS_DIR}" "${LOGS}/bench-results"
grep -E "cub_sort_ratio|gpu_quantile_total|gpu_select/float/exponential|gpu_partitions_(chunked|cub)" "${LOGS}/bench-log.txt" | head -16 >> "${SUMMARY}"
pack
# Tests to time alone on the GPU, before phase 2 shares it out (ctest -R; none by default).
if [[ -n "${ALONE_TESTS:-}" ]]; then
  (cd build/default && timeout "${ALONE_LIMIT:-60}" ctest -R "${ALONE_TESTS}" -j4 --timeout 60 --output-on-failure \
    > "${LOGS}/ctest-alone.txt" 2>&1; echo "ctest alone rc $?" >> "${LOGS}/ctest-alone.txt")
  grep -E "Test +#|rc [0-9]+$" "${LOGS}/ctest-alone.txt" >> "${SUMMARY}"
  pack
fi

# Nsight Compute profiles, alone on the GPU (NCU_JOBS_FILE: lines "name kernel-regex launch-count
# command...", the command run from the root under ncu with the clocks left as found). Each writes
# ncu-<name>.ncu-rep and its details page as text.
if [[ -n "${NCU_JOBS_FILE:-}" ]]; then
  note "phase 1b: Nsight Compute"
  while read -r name kernels count command; do
    [[ -z "${name}" || "${name}" == \#* ]] && continue
    # shellcheck disable=SC2086  # the command's words, as written in the file
    timeout "${NCU_LIMIT:-60}" ncu --clock-control none --set detailed --kernel-name-base function \
      -k "regex:${kernels}" --launch-count "${count}" -f -o "${LOGS}/ncu-${name}" env ${command} \
      > "${LOGS}/ncu-${name}.log" 2>&1
    echo "ncu ${name} rc $?" >> "${LOGS}/ncu-${name}.log"
    ncu -i "${LOGS}/ncu-${name}.ncu-rep" --page details > "${LOGS}/ncu-${name}.txt" 2>&1
    tail -n 1 "${LOGS}/ncu-${name}.log" >> "${SUMMARY}"
    pack
  done < "${NCU_JOBS_FILE}"
fi

note "phase 2: tests, sanitizers, Python, audit"
TEST_LIMIT="${TEST_LIMIT:-300}"
(
  cd build/default && timeout "${TEST_LIMIT}" ctest -L gpu -R "${GPU_TESTS:-.}" -j"${GPU_TEST_JOBS:-6}" --timeout 240 --output-on-failure \
    > "${LOGS}/ctest-gpu.txt" 2>&1
  echo "ctest gpu rc $?" >> "${LOGS}/ctest-gpu.txt"
) &
GPU_CTEST=$!
[[ -n "${SKIP_OTHER_TESTS:-}" ]] || (
  cd build/default && timeout "${TEST_LIMIT}" nice ctest -LE "gpu|mpi|install" -j4 --timeout 200 \
    --output-on-failure > "${LOGS}/ctest-other.txt" 2>&1
  echo "ctest other rc $?" >> "${LOGS}/ctest-other.txt"
) &
# compute-sanitizer over every suite of the GPU test binary, one process per (tool, suite), so that
# no suite is left out when time runs short and the 16 cores share the work. The statistical tests
# (10^5 to 10^6 releases each) would take a tool's whole time: a suite's job leaves them out, and a
# suite made of them alone (SelectionDistribution, say) runs them until SANITIZER_PARTIAL_LIMIT, its
# log marked "partial". Tests that provoke a CUDA error on purpose (an allocation larger than the
# device) run in a job of their own with --report-api-errors no, every other check still on.
# SANITIZER_JOBS_FILE: lines "tool gtest-filter" to run instead (a rerun of what a cut-off call left).
STATISTICAL='*SelectionDistribution*:*Frequencies*:EmVersusPermuteAndFlip.*:CpuGpuEquality.TenThousandSeededReleases'
STATISTICAL+=':Quantiles.SingleQuantileMatchesExactIntervalProbabilities:Quantiles.PointInsideTheIntervalIsUniform'
STATISTICAL+=':Quantiles.RankError*:Quantiles.UnsortedAndSorted*:Pricing.AccuracyBoundHoldsEmpirically'
DELIBERATE_API_ERRORS='DeviceMemoryGpu.AnAllocationTooLargeLeavesNoErrorBehind:DeviceMemoryGpu.ChunkHalvesUntilTheDeviceHoldsIt'
SANITIZER_TOOLS="${SANITIZER_TOOLS:-memcheck racecheck synccheck}"
SANITIZER_DEADLINE=$(( $(date +%s) + TEST_LIMIT ))
GPU_TEST_BINARY=build/default/tests/dpselect_gpu_tests
matches_tests() { "${GPU_TEST_BINARY}" --gtest_list_tests --gtest_filter="$1" | grep -q '^  '; }
sanitize_job() {  # tool gtest-filter log-name cap [compute-sanitizer options]
  local tool="$1" filter="$2" log="${LOGS}/sanitizer-${1}-${3//\//_}.txt" cap="$4"
  shift 4
  local left=$(( SANITIZER_DEADLINE - $(date +%s) ))
  (( left < cap )) && cap="${left}"
  if (( cap < 10 )); then echo "compute-sanitizer ${tool} ${filter} not started (no time left)" >> "${log}"; return; fi
  timeout "${cap}" compute-sanitizer --tool "${tool}" --error-exitcode 9 --print-limit 50 "$@" \
    "${GPU_TEST_BINARY}" --gtest_filter="${filter}" >> "${log}" 2>&1
  echo "compute-sanitizer ${tool} ${filter} rc $?" >> "${log}"
}
sanitize_suite() {  # tool suite
  local tool="$1" suite="$2" cap="${SANITIZER_LIMIT:-200}"
  local filter="${suite}.*-${STATISTICAL}:${DELIBERATE_API_ERRORS}"
  if ! matches_tests "${filter}"; then
    filter="${suite}.*"
    cap="${SANITIZER_PARTIAL_LIMIT:-90}"
    echo "partial: statistical tests only, run for at most ${cap} s" > "${LOGS}/sanitizer-${tool}-${suite//\//_}.txt"
  fi
  sanitize_job "${tool}" "${filter}" "${suite}" "${cap}"
  local deliberate="${DELIBERATE_API_ERRORS//:/$'\n'}"
  deliberate=$(grep "^${suite}\." <<< "${deliberate}" | paste -sd:)
  if [[ -n "${deliberate}" ]]; then
    sanitize_job "${tool}" "${deliberate}" "${suite}-deliberate-api-errors" "${cap}" --report-api-errors no
  fi
}
sanitize_line() {  # tool gtest-filter (one line of SANITIZER_JOBS_FILE)
  local options=()
  [[ ":${DELIBERATE_API_ERRORS}:" == *":$2:"* ]] && options=(--report-api-errors no)
  sanitize_job "$1" "$2" "$2" "${SANITIZER_LIMIT:-200}" "${options[@]}"
}
export -f matches_tests sanitize_job sanitize_suite sanitize_line
export LOGS STATISTICAL DELIBERATE_API_ERRORS SANITIZER_DEADLINE GPU_TEST_BINARY SANITIZER_LIMIT SANITIZER_PARTIAL_LIMIT
[[ -n "${SKIP_SANITIZERS:-}" ]] || (
  # SANITIZERS_AFTER_TESTS=1: the sanitizers start once the GPU tests are done (the tests time-slice
  # the device with nothing instrumented), and get what is left of TEST_LIMIT.
  if [[ -n "${SANITIZERS_AFTER_TESTS:-}" ]]; then
    while kill -0 "${GPU_CTEST}" 2> /dev/null; do sleep 2; done
  fi
  if [[ -n "${SANITIZER_JOBS_FILE:-}" ]]; then
    xargs -P "${SANITIZER_JOBS:-10}" -L 1 bash -c 'sanitize_line "$0" "$1"' < "${SANITIZER_JOBS_FILE}"
  else
    suites=$("${GPU_TEST_BINARY}" --gtest_list_tests | grep -E '^[A-Za-z0-9_/]+\.' | sed 's/\..*//' |
      grep -E "${SANITIZER_SUITES:-.}")
    for tool in ${SANITIZER_TOOLS}; do for suite in ${suites}; do echo "${tool} ${suite}"; done; done |
      xargs -P "${SANITIZER_JOBS:-10}" -L 1 bash -c 'sanitize_suite "$0" "$1"'
  fi
) &
[[ -n "${SKIP_PYTHON:-}" ]] || (
  wait_for=$(( T0 + 400 ))
  while kill -0 "${PYTHON_BUILD}" 2> /dev/null && (( $(date +%s) < wait_for )); do sleep 2; done
  # From the root: python -m puts the working folder first on sys.path, and python/dpselect
  # (the sources, without the extension) would shadow the installed package.
  DPSELECT_CLI="${PACKED_ROOT}/build/default/host/cli/dpselect" PYTHONUNBUFFERED=1 timeout 150 \
    python3 -m pytest -q -rs -p no:cacheprovider python/tests \
    > "${LOGS}/pytest.txt" 2>&1
  echo "pytest rc $?" >> "${LOGS}/pytest.txt"
) &
[[ -n "${SKIP_AUDIT:-}" ]] || (
  for claims in ' (general)' ' (monotone)'; do
    timeout "${TEST_LIMIT}" build/default/host/cli/dpselect audit --only "${claims}" \
      --runs "${AUDIT_RUNS:-10000000}" --selection-runs 1000000 >> "${LOGS}/audit.md" 2>&1
    echo "audit${claims} rc $?" >> "${LOGS}/audit.md"
  done
) &
while (( $(jobs -rp | wc -l) > 0 )); do sleep 10; pack; done
wait

note "phase 2 done"
{
  grep -h -E "tests passed|tests failed|rc [0-9]+$" "${LOGS}"/ctest-*.txt
  grep -h -A30 "The following tests FAILED" "${LOGS}"/ctest-*.txt | head -30
  for f in "${LOGS}"/sanitizer-*.txt; do
    echo "$(basename "$f" .txt): $(grep -c '\[       OK \]' "$f") passed, $(grep -c '\[  FAILED  \]' "$f") failed;" \
      "$(grep -h -E 'ERROR SUMMARY|^partial|rc [0-9]+$|not started|before first instrumented' "$f" | tr '\n' ' ')"
  done
  tail -n 4 "${LOGS}/pytest.txt"
  tail -n 1 "${LOGS}/python-build.log"
  grep -E "^\||rc [0-9]+$" "${LOGS}/audit.md" | tail -14
} >> "${SUMMARY}" 2>&1
pack
note "all done"
cat "${SUMMARY}"
