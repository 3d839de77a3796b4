#!/usr/bin/env bash
# Device-side driver: MODE=tests|bench|sanitize|audit|profile (space separated list)
set -uo pipefail
T0=$(date +%s)
elapsed() { echo $(( $(date +%s) - T0 )); }
ROOT=$PWD
if [[ "$ROOT" != /work/main ]]; then mkdir -p /work; rm -rf /work/main; ln -s "$ROOT" /work/main; fi
cd /work/main
[[ -x /usr/bin/cmake ]] || ln -sf "$(command -v cmake)" /usr/bin/cmake
export LD_LIBRARY_PATH=/work/main/.device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if [[ ! -x build/default/tests/dpselect_gpu_tests ]]; then tar -xJf .device/prebuilt.tar.xz; fi
mkdir -p build/default/tests/cli/output_files
echo "== setup done at $(elapsed) s; root was $ROOT"
for mode in ${MODE}; do
  echo "== mode $mode at $(elapsed) s"
  case $mode in
    info)
      nvidia-smi; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,clocks.sm,clocks.mem,power.limit,pstate --format=csv | tee $OUT/nvidia-smi.csv
      nvcc --version | tail -1; cmake --version | head -1; command -v compute-sanitizer ncu ;;
    tests)
      (cd build/default && timeout ${GPU_TEST_LIMIT:-240} ctest -L gpu -j4 --timeout 120 --output-on-failure > $OUT/ctest-gpu.txt 2>&1; echo "gpu ctest rc $?")
      grep -E "tests passed|tests failed|Total Test time" $OUT/ctest-gpu.txt
      grep -E "\*\*\*Failed|\*\*\*Exception|Timeout|Not Run" $OUT/ctest-gpu.txt | head -40
      (cd build/default && timeout ${CPU_TEST_LIMIT:-200} ctest -LE "gpu|mpi|install" -j16 --timeout 150 > $OUT/ctest-rest.txt 2>&1; echo "rest ctest rc $?")
      grep -E "tests passed|tests failed|Total Test time" $OUT/ctest-rest.txt
      grep -E "\*\*\*Failed|\*\*\*Exception|Timeout|Not Run" $OUT/ctest-rest.txt | head -20 ;;
    bench)
      SKIP_BUILD=1 SKIP_CPU=${SKIP_CPU:-1} BENCH_MIN_TIME=${BENCH_MIN_TIME:-0.3} BENCH_FILTER="${BENCH_FILTER:-.}" timeout ${BENCH_LIMIT:-300} bash bench/run_gpu_bench.sh > $OUT/bench-log.txt 2>&1; echo "bench rc $?"
      d=$(ls -dt bench/results/*/ | head -1); echo "results in $d"; tar -czf $OUT/results.tgz "$d"; tail -5 $OUT/bench-log.txt ;;
    auditpar)
      pids=()
      for m in 'exponential (general)' 'permute-and-flip (general)' 'laplace-noisy-max (general)' 'exponential (monotone)' 'permute-and-flip (monotone)' 'laplace-noisy-max (monotone)'; do
        tag=$(echo "$m" | tr -c 'a-z' '-')
        ( TIMEFORMAT="$m: %R s wall"; time timeout ${AUDIT_LIMIT:-330} build/default/host/cli/dpselect audit --only "$m" --runs ${AUDIT_RUNS:-100000000} --selection-runs 1000000 > $OUT/audit-$tag.md 2>&1 ) 2>> $OUT/audit-times.txt &
        pids+=($!)
      done
      sleep 2 ;;
    auditwait)
      wait; cat $OUT/audit-times.txt; cat $OUT/audit-*.md | grep -E "^\|" | sort -u ;;
    audit)
      for claims in ' (general)' ' (monotone)'; do
        timeout ${AUDIT_LIMIT:-150} build/default/host/cli/dpselect audit --only "$claims" --runs ${AUDIT_RUNS:-100000000} --selection-runs 1000000 2>&1 | tee -a $OUT/audit.md
      done ;;
    sanitize)
      for tool in ${SAN_TOOLS:-memcheck racecheck synccheck}; do
        timeout ${SAN_LIMIT:-120} compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 20 build/default/tests/dpselect_gpu_tests --gtest_filter="${SAN_FILTER:-*}" > $OUT/sanitizer-$tool.txt 2>&1; echo "$tool rc $?"
        tail -4 $OUT/sanitizer-$tool.txt
      done ;;
    retest)
      (cd build/default && ctest -R "${RETEST:-HostStreamingGpu}" --output-on-failure > $OUT/ctest-retest.txt 2>&1; echo "retest rc $?"); grep -E "tests passed|tests failed" $OUT/ctest-retest.txt ;;
    profile)
      prof() { local tag=$1 kernel=$2 filter=$3
        timeout ${PROF_LIMIT:-60} ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section Occupancy --section LaunchStats --section SchedulerStats --section WarpStateStats -k "regex:$kernel" -c 1 build/default/bench/dpselect_bench_gpu --benchmark_filter="$filter" --benchmark_min_time=0.01 > $OUT/ncu-$tag.txt 2>&1; echo "ncu $tag rc $?"
        grep -E "Duration|DRAM Throughput|Memory Throughput|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Size|Grid Size|Issue Slots Busy|Executed Ipc A|One or More Eligible|Warp Cycles Per Issued" $OUT/ncu-$tag.txt | head -20; }
      prof em-chacha fused_select 'gpu_select/float/exponential/chacha20/n:1073741824/'
      prof em-philox fused_select 'gpu_select/float/exponential/philox/n:1073741824/'
      prof rows select_rows 'gpu_rows/float/rows:4096/cols:131072/'
      prof repeated select_rows 'gpu_repeated/double/n:8/releases:65536/'
      timeout 60 nsys --version 2>/dev/null | head -1
      (time build/default/bench/dpselect_bench_gpu --benchmark_filter='gpu_repeated/double/n:8/releases:65536/' --benchmark_min_time=0.5) 2>&1 | tail -8 ;;
  esac
done
echo "== all done at $(elapsed) s"
