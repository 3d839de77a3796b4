#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the schedule model with g++ and runs it over every policy, generator and data shape at
# 2^30 candidates (about 3.5 minutes on 2 cores; no GPU needed).
#
#   bench/schedule_model/run.sh [schedule_model options...]     e.g. --shape bench --policy per-lane,implemented
#   bench/schedule_model/run.sh --kernel rows [--rows R --cols C]   the rows kernel (default 4096 x 131072)
#   bench/schedule_model/run.sh --kernel top-k [--k 16,1024]        the top-k kernel's pass 1
#
# BUILD_DIR (default $TMPDIR/schedule_model_build) holds the binary. With SASS=1 the per-region
# instruction counts are first derived again from the sm_90 kernel: kernels/select_arrays.cu is
# compiled to a cubin with the library's CUDA flags and disassembled with line information
# (needs nvcc and nvdisasm; NVDISASM names the latter if it is not on PATH), and sass_regions.py
# prints each kernel's costs (constants in fused_pass.cpp): RegionCosts for the per-lane kernel
# (add_tiles calling score_scanned_group for each lane's group, commit e7c9489), WarpCosts for the
# warp-wide one (add_tiles calling WarpScreenThreshold::score); the script tells them apart.
# SASS_COMMIT=<commit> takes the kernel's sources from that commit (git archive) instead of the
# working tree. With CUOBJDUMP (a cuobjdump) it also prints every fused_select_kernel's
# registers, stack and size. SASS_KERNEL=rows does the same for the rows kernel instead:
# kernels/select_rows.cu, select_rows_kernel<float, G, 256> (whose costs are the kRows* constants
# of rows.hpp: the per-lane kernel at SASS_COMMIT=1900c764, the warp-wide one since);
# SASS_TEAM=32 reads select_rows_kernel<float, G, 32> instead, the warp-per-row teams (the
# kRows*WarpTeam* constants of rows_whatifs.cpp). MODEL=0 stops after the SASS's costs.
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
  unit=select_arrays
  kernel=ArraySourceIfEELNS_9GeneratorE%sELi256E  # fused_select_kernel<ArraySource<float>, G, 256>
  team=${SASS_TEAM:-256}
  if [[ "${SASS_KERNEL:-fused}" == rows ]]; then
    unit=select_rows
    kernel=select_rows_kernelIfLNS_9GeneratorE%sELi${team}E  # select_rows_kernel<float, G, team>
  fi
  nvcc -O3 -DNDEBUG -arch=sm_90 -cubin -Xcompiler=-ffp-contract=off --fmad=false -std=c++20 -lineinfo \
    -I"$src/include" -I"$src/host" -o "$build/$unit.cubin" "$src/kernels/$unit.cu"
  "$nvdisasm" -c -gi "$build/$unit.cubin" > "$build/$unit.sass"
  for g in 0:chacha20 1:philox; do
    # the kernel: from its .text label to the next kernel's
    # shellcheck disable=SC2059
    awk -v want="$(printf "$kernel" "${g%%:*}")" \
      '/^\.text\./ { keep = index($0, want) > 0 } keep' "$build/$unit.sass" > "$build/$unit-${g##*:}.sass"
    echo "== ${g##*:}"
    python3 "$repo/bench/schedule_model/sass_regions.py" "$build/$unit-${g##*:}.sass" "$src/include"
  done
  if [[ -n "${CUOBJDUMP:-}" && $unit == select_rows ]]; then
    echo "== select_rows_kernel<T, G, $team>: resources (cuobjdump -res-usage), SASS instructions"
    "$CUOBJDUMP" -res-usage "$build/$unit.cubin" 2>&1 | grep -A1 "select_rows_kernel.*Li${team}E" | grep -v '^--' |
      sed 's/.*select_rows_kernelI\(.\)LNS_9GeneratorE\(.\).*/\1 \2/' | paste -d' ' - - |
      sed 's/^f /float /; s/^d /double /; s/ 0 / chacha20 /; s/ 1 / philox /'
    awk -v want="Li${team}E" '/^\.text\./ { name = $0 } /^ *\/\*[0-9a-f]+\*\// { if (index(name, "select_rows_kernel") && index(name, want)) n[name]++ }
         END { for (k in n) { t = index(k, "kernelIfL") ? "float" : "double";
                              g = index(k, "GeneratorE0") ? "chacha20" : "philox";
                              printf "%s %s: %d instructions (%d bytes)\n", t, g, n[k], 16 * n[k] } }' \
      "$build/$unit.sass" | sort
  elif [[ -n "${CUOBJDUMP:-}" ]]; then
    echo "== fused_select_kernel<ArraySource<T>, G, 256>: resources (cuobjdump -res-usage), SASS instructions"
    "$CUOBJDUMP" -res-usage "$build/select_arrays.cubin" 2>&1 | grep -A1 'fused_select_kernel' | grep -v '^--' |
      sed 's/.*ArraySourceI\(.\)EELNS_9GeneratorE\(.\).*/\1 \2/' | paste -d' ' - - |
      sed 's/^f /float /; s/^d /double /; s/ 0 / chacha20 /; s/ 1 / philox /'
    awk '/^\.text\./ { name = $0 } /^ *\/\*[0-9a-f]+\*\// { if (index(name, "fused_select_kernel")) n[name]++ }
         END { for (k in n) { t = index(k, "ArraySourceIfE") ? "float" : "double";
                              g = index(k, "GeneratorE0") ? "chacha20" : "philox";
                              printf "%s %s: %d instructions (%d bytes)\n", t, g, n[k], 16 * n[k] } }' \
      "$build/select_arrays.sass" | sort
  fi
fi

[[ "${MODEL:-1}" == 1 ]] || exit 0  # MODEL=0: the SASS's costs only
model=$repo/bench/schedule_model
g++ -O2 -std=c++20 -fopenmp -ffp-contract=off -Wall -Wextra -I"$repo/include" -I"$repo/host" -o "$build/schedule_model" \
  "$model/schedule_model.cpp" "$model/fused_pass.cpp" "$model/rows.cpp" "$model/rows_whatifs.cpp" "$model/top_k.cpp"
"$build/schedule_model" --check "$@"
