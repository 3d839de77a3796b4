#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the default preset and runs the GPU and CPU benchmarks with JSON output into
# bench/results/<date>-<gpu-name>/. Run from the repository root on a machine with a GPU
# (written for an H200):
#
#   bench/run_gpu_bench.sh                      # everything
#   BENCH_FILTER='gpu_select/float' bench/run_gpu_bench.sh
#   BENCH_MIN_TIME=1.0 bench/run_gpu_bench.sh   # longer runs per benchmark
#   SKIP_CPU=1 bench/run_gpu_bench.sh           # GPU benchmarks only
#   RUN_TESTS=1 bench/run_gpu_bench.sh          # first the test suite (GPU tests included)
#   RUN_AUDIT=1 bench/run_gpu_bench.sh          # then the full-size audit of the single-pick
#                                               # mechanisms (10^8 releases per input, docs/audit.md)
#   SKIP_BUILD=1 bench/run_gpu_bench.sh         # use build/default as it is (built elsewhere for
#                                               # the GPU's architecture and copied, say)
#   DPSELECT_QUANTILE_BENCH_LOG2N=24,30 bench/run_gpu_bench.sh
#                                               # the quantile benchmarks' sizes (log2; default
#                                               # 20,24,27,30: 2^30 floats need ~20 GiB)
#   SKIP_QUANTILES=1 bench/run_gpu_bench.sh     # without dpselect_bench_quantiles_gpu
#   QUANTILE_BENCH_FILTER=float/ bench/run_gpu_bench.sh
#                                               # its own filter (BENCH_FILTER is the others')
#   SKIP_SELECTION=1 bench/run_gpu_bench.sh     # without dpselect_bench_gpu
#   SKIP_PARTITIONS=1 bench/run_gpu_bench.sh    # without dpselect_bench_partitions_gpu
#   DPSELECT_PARTITIONS_BENCH_LOG2N=24,30 bench/run_gpu_bench.sh
#                                               # its sizes (log2; default 20,24,27,30: 2^30 pairs
#                                               # need ~64 GiB)
#
# Extra arguments are passed to every benchmark binary (e.g. --benchmark_repetitions=3).
set -euo pipefail

if [[ ! -f CMakePresets.json || ! -d bench ]]; then
  echo "run_gpu_bench.sh: run this from the dpselect repository root" >&2
  exit 2
fi

BENCH_FILTER="${BENCH_FILTER:-.}"
BENCH_MIN_TIME="${BENCH_MIN_TIME:-0.5}"
BUILD_DIR=build/default

echo "== nvidia-smi"
if command -v nvidia-smi > /dev/null 2>&1; then
  nvidia-smi || true
  GPU_NAME="$(nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -n 1 || true)"
else
  echo "nvidia-smi not found: the GPU benchmarks will report 'no usable CUDA device'" >&2
  GPU_NAME=""
fi
[[ -n "${GPU_NAME}" ]] || GPU_NAME="no-gpu"
GPU_SLUG="$(printf '%s' "${GPU_NAME}" | tr '[:upper:]' '[:lower:]' | tr -c 'a-z0-9' '-' |
  sed -e 's/--*/-/g' -e 's/^-//' -e 's/-$//')"
DATE="$(date -u +%Y-%m-%d)"
OUT_DIR="bench/results/${DATE}-${GPU_SLUG}"
if [[ -e "${OUT_DIR}" ]]; then
  OUT_DIR="${OUT_DIR}-$(date -u +%H%M%S)"
fi
mkdir -p "${OUT_DIR}"
echo "== results go to ${OUT_DIR}"

COMMIT="${DPSELECT_COMMIT:-$(git rev-parse HEAD 2> /dev/null || echo unknown)}"  # a copy without .git names it
DIRTY=""
if [[ -n "$(git status --porcelain --untracked-files=no 2> /dev/null || true)" ]]; then
  DIRTY=" (working tree modified)"
fi

{
  echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname)"
  echo "commit: ${COMMIT}${DIRTY}"
  echo "gpu: ${GPU_NAME}"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo 2> /dev/null | cut -d: -f2- | sed 's/^ //' || echo unknown)"
  echo "cpu_cores: $(nproc)"
  echo "kernel: $(uname -srm)"
  command -v nvcc > /dev/null 2>&1 && echo "nvcc: $(nvcc --version | tail -n 1)"
  echo "filter: ${BENCH_FILTER}"
  echo "min_time: ${BENCH_MIN_TIME}"
  echo "extra_args: $*"
} > "${OUT_DIR}/machine.txt"
if command -v nvidia-smi > /dev/null 2>&1; then
  nvidia-smi -q > "${OUT_DIR}/nvidia-smi-q.txt" 2>&1 || true
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit,pstate \
    --format=csv > "${OUT_DIR}/nvidia-smi.csv" 2>&1 || true
  cat "${OUT_DIR}/nvidia-smi.csv"
fi

if [[ -n "${SKIP_BUILD:-}" ]]; then
  echo "== SKIP_BUILD: using ${BUILD_DIR} as it is"
else
  echo "== configure and build (preset default)"
  cmake --preset default
  if [[ -n "${RUN_TESTS:-}" ]]; then
    cmake --build --preset default
  else
    cmake --build --preset default --target dpselect_bench_gpu dpselect_bench_quantiles_gpu \
      dpselect_bench_partitions_gpu dpselect_bench_cpu dpselect_cli
  fi
fi
if [[ -n "${RUN_TESTS:-}" ]]; then
  echo "== ctest (preset default; GPU tests included)"
  ctest --preset default --output-on-failure 2>&1 | tee "${OUT_DIR}/ctest.txt"
fi

run_one() {
  local binary="$1" name="$2" filter="$3"
  shift 3
  local command=("${BUILD_DIR}/bench/${binary}" "--benchmark_filter=${filter}"
    "--benchmark_min_time=${BENCH_MIN_TIME}" "--benchmark_format=console"
    "--benchmark_out_format=json" "--benchmark_out=${OUT_DIR}/${name}.json" "$@")
  echo "== ${command[*]}"
  echo "${command[*]}" >> "${OUT_DIR}/commands.txt"
  "${command[@]}" 2>&1 | tee "${OUT_DIR}/${name}.txt"
}

if [[ ! -x "${BUILD_DIR}/bench/dpselect_bench_gpu" ]]; then
  echo "run_gpu_bench.sh: ${BUILD_DIR}/bench/dpselect_bench_gpu was not built (nvcc not found?)" >&2
  exit 1
fi
if [[ -z "${SKIP_SELECTION:-}" ]]; then
  run_one dpselect_bench_gpu gpu "${BENCH_FILTER}" "$@"
fi
if [[ -z "${SKIP_QUANTILES:-}" ]]; then
  # QuantileData::from_device + select_quantile against a CUB sort of the same array (cub_sort_ratio).
  run_one dpselect_bench_quantiles_gpu quantiles_gpu "${QUANTILE_BENCH_FILTER:-.}" "$@"
fi
if [[ -z "${SKIP_PARTITIONS:-}" ]]; then
  # select_partitions over device pairs against a CUB sort of the same pairs (cub_sort_ratio).
  run_one dpselect_bench_partitions_gpu partitions_gpu "${PARTITIONS_BENCH_FILTER:-.}" "$@"
fi
if [[ -z "${SKIP_CPU:-}" ]]; then
  run_one dpselect_bench_cpu cpu "${BENCH_FILTER}" "$@"
fi

if [[ -n "${RUN_AUDIT:-}" ]]; then
  for claims in ' (general)' ' (monotone)'; do
    command=("${BUILD_DIR}/host/cli/dpselect" audit --only "${claims}" --runs 100000000 --selection-runs 1000000)
    echo "== ${command[*]}"
    echo "${command[*]}" >> "${OUT_DIR}/audit-commands.txt"
    "${command[@]}" 2>&1 | tee -a "${OUT_DIR}/audit.md"
  done
fi

# A short Markdown summary next to the JSON (python3 is optional).
SUMMARY="${OUT_DIR}/README.md"
{
  echo "# dpselect benchmarks ${DATE}"
  echo
  echo "| date | machine | GPU | commit | command |"
  echo "|---|---|---|---|---|"
  while IFS= read -r command; do
    command="${command//|/\\|}"  # a '|' in a filter would end the table cell
    echo "| ${DATE} | $(hostname), $(nproc) cores | ${GPU_NAME} | ${COMMIT:0:12}${DIRTY} | \`${command}\` |"
  done < "${OUT_DIR}/commands.txt"
  echo
} > "${SUMMARY}"
if command -v python3 > /dev/null 2>&1; then
  python3 - "${OUT_DIR}" >> "${SUMMARY}" << 'PY'
import json, os, sys
out = sys.argv[1]
def si(x):
    for unit, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(x) >= scale:
            return f"{x / scale:.3g} {unit}"
    return f"{x:.3g}"
for name in ("gpu", "quantiles_gpu", "partitions_gpu", "cpu"):
    path = os.path.join(out, name + ".json")
    if not os.path.exists(path):
        continue
    try:
        with open(path) as f:
            data = json.load(f)
    except ValueError:  # no benchmark matched the filter: the file is empty
        print(f"## {name}\n\n(no results in {name}.json)\n")
        continue
    # The quantile program's last column is its time over a CUB sort of the same array.
    last, last_key = (("time / CUB sort", "cub_sort_ratio") if name in ("quantiles_gpu", "partitions_gpu")
                      else ("fraction of copy bandwidth", "fraction_of_copy_bandwidth"))
    print(f"## {name}\n")
    print(f"| benchmark | time | unit | items/s | bytes/s | {last} |")
    print("|---|---|---|---|---|---|")
    for b in data.get("benchmarks", []):
        if b.get("error_occurred"):
            print(f"| {b['name']} | skipped: {b.get('error_message', '')} | | | | |")
            continue
        frac = b.get(last_key)
        print(f"| {b['name']} | {b['real_time']:.4g} | {b['time_unit']} | "
              f"{si(b.get('items_per_second', 0.0))} | "
              f"{si(b['bytes_per_second']) if 'bytes_per_second' in b else ''} | "
              f"{'' if frac is None else f'{frac:.3f}'} |")
    print()
PY
fi
echo "== done: ${OUT_DIR}"
ls -l "${OUT_DIR}"
