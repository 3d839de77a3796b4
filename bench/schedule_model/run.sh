#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the schedule model with g++ and runs it over every policy, generator and data shape at
# 2^30 candidates (about 3 minutes on 2 cores; no GPU needed).
#
#   bench/schedule_model/run.sh [schedule_model options...]     e.g. --shape bench --policy per-lane
#
# BUILD_DIR (default $TMPDIR/schedule_model_build) holds the binary. With SASS=1 the per-region
# instruction counts are first derived again from the sm_90 kernel: kernels/select_arrays.cu is
# compiled to a cubin with the library's CUDA flags and disassembled with line information
# (needs nvcc and nvdisasm; NVDISASM names the latter if it is not on PATH), and sass_regions.py
# prints each kernel's costs, the numbers RegionCosts in schedule_model.cpp holds. The regions
# are those of the per-lane kernel (add_tiles calling score_scanned_group for each lane's group);
# SASS_COMMIT=<commit> takes the kernel's sources from that commit (git archive) instead of the
# working tree.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD_DIR:-${TMPDIR:-/tmp}/schedule_model_build}
mkdir -p "$build"

if [[ "${SASS:-0}" == 1 ]]; then
  nvdisasm=${NVDISASM:-nvdisasm}
  src=$repo
  if [[ -n "${SASS_COMMIT:-}" ]]; then
    src=$build/src-$SASS_COMMIT
    rm -rf "$src" && mkdir -p "$src"
    git -C "$repo" archive "$SASS_COMMIT" include kernels host | tar -x -C "$src"
  fi
  # The flags of the library's sm_90 build (build.ninja: -O3 -DNDEBUG, no contraction, no fmad);
  # -lineinfo adds the line table only, the code is the same.
  nvcc -O3 -DNDEBUG -arch=sm_90 -cubin -Xcompiler=-ffp-contract=off --fmad=false -std=c++20 -lineinfo \
    -I"$src/include" -I"$src/host" -o "$build/select_arrays.cubin" "$src/kernels/select_arrays.cu"
  "$nvdisasm" -c -gi "$build/select_arrays.cubin" > "$build/select_arrays.sass"
  for g in 0:chacha20 1:philox; do
    # fused_select_kernel<ArraySource<float>, G, 256>: from its .text label to the next kernel's
    awk -v want="ArraySourceIfEELNS_9GeneratorE${g%%:*}ELi256E" \
      '/^\.text\./ { keep = index($0, want) > 0 } keep' "$build/select_arrays.sass" > "$build/${g##*:}.sass"
    echo "== ${g##*:}"
    python3 "$repo/bench/schedule_model/sass_regions.py" "$build/${g##*:}.sass" "$src/include"
  done
fi

g++ -O2 -std=c++20 -fopenmp -ffp-contract=off -Wall -Wextra -I"$repo/include" \
  -o "$build/schedule_model" "$repo/bench/schedule_model/schedule_model.cpp"
"$build/schedule_model" --check "$@"
