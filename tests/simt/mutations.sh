#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Mutation check of the simt build: each mutant below is one single-line defect in device code.
# Each is applied alone to a scratch copy of the source tree, which is rebuilt with the `simt`
# preset; the GPU tests that should notice it then run under the SIMT runtime. A mutant is killed
# when a test fails (or the runtime reports a device fault); one that builds and passes survives,
# which means the tests cannot see that defect. Before any mutant, the unmutated copy must pass the
# same tests.
#
#   tests/simt/mutations.sh [RECORD.md]
#
# Prints a Markdown table (and writes it to RECORD.md when given), ending with the line
# "mutants: K killed of N". Exit status 0 when every mutant was killed. The scratch copy lives in
# $MUTATION_WORK (default: a fresh temporary folder); SIMT_SEED is passed on to the runtime.
set -euo pipefail
source_dir=$(cd "$(dirname "$0")/../.." && pwd)
record=${1:-}
[[ -n $record ]] && record=$(realpath -m "$record")
work=${MUTATION_WORK:-$(mktemp -d -t dpselect-mutations.XXXXXX)}

# id | file | exact text (once in the file) | replacement | the tests that should notice | what it breaks
mutants=(
  "shuffle-wrong-lane|include/dpselect/detail/device_groups.cuh|const std::uint32_t shared = __shfl_sync(0xFFFFFFFFu, words[w], owner);|const std::uint32_t shared = __shfl_sync(0xFFFFFFFFu, words[w], (owner + 1) % kWarpLanes);|CpuGpuEquality.TenThousandSeededReleases:CpuGpuEquality.TopK|each tile takes its ChaCha20 screen words from the next tile's lane"
  "top-k-sort-barrier-dropped|kernels/top_k.cu|        __syncthreads();|        ;|CpuGpuEquality.TopK:HostStreamingGpu.TopKInManyChunksEqualsDevice|no block barrier between the bitonic stages of the top-k block sort"
  "block-reduce-barrier-dropped|kernels/common/device_values.cu|  __syncthreads();|  ;|SparseVectorGpu.*|two cub::BlockReduce calls share their temp storage without a barrier"
  "tile-tail-off-by-one|include/dpselect/detail/device_groups.cuh|return (groups.first_group() + groups.group_count() - 1) / kTileGroups + 1;|return (groups.first_group() + groups.group_count()) / kTileGroups;|CpuGpuEquality.TenThousandSeededReleases:Rows.BackendMemoryRowsEqualSingleReleases|a partial last tile is never scored"
  "stale-threshold-word|kernels/select_rows.cu|if (member == 0) team_published[team] = kNoPublishedScore;|if (member == 0 && row < row_step) team_published[team] = kNoPublishedScore;|CpuGpuEquality.RowsOfRisingUtilities:Rows.BackendMemoryRowsEqualSingleReleases|a team screens a row against the threshold word of its previous row"
  "atomic-max-as-store|kernels/common/device_values.cu|atomicMax(largest_abs_bits, block_largest);|*largest_abs_bits = block_largest;|SparseVectorGpu.DeviceBatchEqualsHostBatch|the largest magnitude is the last block's, not the largest"
  "race-follower-skipped|include/dpselect/detail/device_groups.cuh|if (in_group && !leader && !(fma_rn(spec.score_scale, u, follower_bound) < follower_threshold)) {|if (in_group && !leader && lane + 1 < kWarpLanes && !(fma_rn(spec.score_scale, u, follower_bound) < follower_threshold)) {|CpuGpuEquality.TopK:CpuGpuEquality.TenThousandSeededReleases|lane 31 never takes part in a warp race as a follower"
  "row-index-off-by-one|kernels/select_rows.cu|const ArraySource<T> source{utilities + row * row_stride, 0};|const ArraySource<T> source{utilities + (row + 1) % rows * row_stride, 0};|Rows.EachRowEqualsASingleReleaseInRowOrder:Rows.SmallRowsEqualReleasesOfEachRow|row r is scored on row r + 1's utilities"
  "partition-chunk-boundary|kernels/partition_selection.cu|kept_keys_on_device(pairs_from_records(pairs, stream), pairs.size(), max_partitions, drawn, stream);|kept_keys_on_device(pairs_from_records(pairs, stream), pairs.size() - 1, max_partitions, drawn, stream);|PartitionSelectionGpu.*|the last pair of every chunk of users is dropped"
  "partition-bound-off-by-one|kernels/partition_selection.cu|keep[j] = j - first < max_partitions;|keep[j] = j - first <= max_partitions;|PartitionSelectionGpu.*|a user over the bound keeps one partition too many"
  "quantile-interval-length|kernels/quantiles.cu|return quantile_interval_utility(interval, end - begin, target, score_scale);|return quantile_interval_utility(interval, end - begin + 1, target, score_scale);|QuantilesGpu.IntervalPassEqualsCpuScoreForScore:QuantilesGpu.SameReleaseOnCpuAndGpu|every interval is scored as one value longer"
  "noise-retry-coordinate|kernels/noise_vector.cu|const std::uint64_t coordinate = first_coordinate + i;|const std::uint64_t coordinate = first_coordinate + i + 1;|NoiseVectorGpu.*|a retried noise sample reads the next coordinate's random bits"
)

# Replaces the one occurrence of $2 in file $1 by $3; an error unless it occurs exactly once.
replace_once() {
  python3 - "$1" "$2" "$3" <<'EOF'
import sys
path, old, new = sys.argv[1:4]
text = open(path).read()
if text.count(old) != 1:
    sys.exit(f"mutations.sh: {path}: the text to mutate occurs {text.count(old)} times, not once: {old!r}")
open(path, 'w').write(text.replace(old, new))
EOF
}

echo "mutations.sh: scratch copy in $work" >&2
mkdir -p "$work/src"
(cd "$source_dir" && git ls-files -co --exclude-standard -z | grep -zv '^build/' | tar --null -T - -cf -) |
  tar -xf - -C "$work/src"
cd "$work/src"
cmake --preset simt >/dev/null
build() { cmake --build --preset simt --target dpselect_gpu_tests >"$work/build.log" 2>&1; }
run_tests() { SIMT_SEED=${SIMT_SEED:-1} build/simt/tests/dpselect_gpu_tests --gtest_filter="$1" >"$work/test.log" 2>&1; }

all_filters=$(printf '%s\n' "${mutants[@]}" | cut -d'|' -f5 | paste -sd:)
build || { echo "mutations.sh: the unmutated tree does not build (see $work/build.log)" >&2; exit 2; }
run_tests "$all_filters" || { echo "mutations.sh: the unmutated tree fails its tests (see $work/test.log)" >&2; exit 2; }

table="| mutant | file | defect | tests run | result |"$'\n'"|---|---|---|---|---|"
killed=0
for mutant in "${mutants[@]}"; do
  IFS='|' read -r id file old new filter what <<<"$mutant"
  cp "$source_dir/$file" "$file"
  replace_once "$file" "$old" "$new"
  if ! build; then
    result="does not build (a defect in this script)"
  elif run_tests "$filter"; then
    result="**survived**"
  else
    failed=$(grep -E '^\[  FAILED  \] [A-Za-z]' "$work/test.log" | sed 's/^\[  FAILED  \] //; s/ .*//' | sort -u |
             paste -sd, | sed 's/,/, /g')
    [[ -z $failed ]] && failed="device fault: $(grep -m1 -E 'simt:' "$work/test.log" | cut -c1-120)"
    result="killed ($failed)"
    killed=$((killed + 1))
  fi
  cp "$source_dir/$file" "$file"
  table+=$'\n'"| \`$id\` | \`$file\` | $what | \`$filter\` | $result |"
  echo "mutations.sh: $id: $result" >&2
done
build >/dev/null || true
summary="mutants: $killed killed of ${#mutants[@]}"
printf '%s\n\n%s\n' "$table" "$summary"
[[ -n $record ]] && printf '%s\n\n%s\n' "$table" "$summary" >"$record"
[[ $killed -eq ${#mutants[@]} ]]
