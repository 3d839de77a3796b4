// SPDX-License-Identifier: Apache-2.0
#include "rows/small_rows.hpp"

#include <algorithm>
#include <exception>

#include "dpselect/chacha20.hpp"
#include "dpselect/detail/chacha20_batch.hpp"
#include "dpselect/detail/noise_positions.hpp"
#include "dpselect/detail/screened_scoring.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/random_key.hpp"
#include "engine/release_steps.hpp"
#include "validation/validation.hpp"
#include "selection/screened_group.hpp"

namespace dpselect::detail {
namespace {

constexpr unsigned kBatchRows = kChaChaBatchBlocks;  // one SIMD lane per release
constexpr unsigned kMaxCandidateBlocks = kSmallRowMaxColumns / 4;
static_assert(kSmallRowMaxColumns == kCandidatesPerGroup, "a small row is one group of the screen");

// Position p of a stream is quarter p % 4 of its ChaCha20 block p / 4 (chacha20.hpp).
constexpr std::uint64_t kRaceBlock = kRacePositionOffset / 4;
constexpr std::uint64_t kFirstCandidateBlock = kDetailPositionOffset / 4;

// The blocks that group 0 of up to eight releases reads, release l of the batch in lane l.
struct BatchBlocks {
  std::uint32_t screen[kBatchRows][16];  // block 0: the group's screen (position 0)
  std::uint32_t race[kBatchRows][16];    // the race block (position kRacePositionOffset)
  std::uint32_t candidates[kMaxCandidateBlocks][kBatchRows][16];  // positions kDetailPositionOffset + 4j ..
};

void compute_batch(const ChaChaKey& key, const std::uint64_t (&streams)[kBatchRows], unsigned candidate_blocks,
                   BatchBlocks& out) {
  std::uint64_t blocks[kBatchRows];
  std::fill(std::begin(blocks), std::end(blocks), std::uint64_t{0});
  chacha20_blocks_of_streams(key, streams, blocks, out.screen);
  std::fill(std::begin(blocks), std::end(blocks), kRaceBlock);
  chacha20_blocks_of_streams(key, streams, blocks, out.race);
  for (unsigned j = 0; j < candidate_blocks; ++j) {
    std::fill(std::begin(blocks), std::end(blocks), kFirstCandidateBlock + j);
    chacha20_blocks_of_streams(key, streams, blocks, out.candidates[j]);
  }
}

// One release's view of a batch, as the scoring asks for blocks: as screen blocks (at(position))
// and as race and candidate blocks (at(key, stream, position)). A position the batch does not
// hold, which one group never reads, is computed as random_block would.
class LaneBlocks {
 public:
  LaneBlocks(const BatchBlocks& batch, unsigned lane, unsigned candidate_blocks, const NoiseSpec& spec)
      : batch_(batch), lane_(lane), candidate_blocks_(candidate_blocks), spec_(spec) {}

  RandomBlock at(std::uint64_t position) const {
    if (position < 4) return chacha20_quarter(batch_.screen[lane_], static_cast<unsigned>(position));
    return random_block(spec_.key, spec_.stream, position);
  }

  RandomBlock at(const RandomKey& key, std::uint64_t stream, std::uint64_t position) const {
    if (position >= kRacePositionOffset && position - kRacePositionOffset < 4) {
      return chacha20_quarter(batch_.race[lane_], static_cast<unsigned>(position - kRacePositionOffset));
    }
    if (position >= kDetailPositionOffset && position - kDetailPositionOffset < 4 * std::uint64_t{candidate_blocks_}) {
      const std::uint64_t offset = position - kDetailPositionOffset;
      return chacha20_quarter(batch_.candidates[offset / 4][lane_], static_cast<unsigned>(offset % 4));
    }
    return random_block(key, stream, position);
  }

 private:
  const BatchBlocks& batch_;
  unsigned lane_;
  unsigned candidate_blocks_;
  const NoiseSpec& spec_;
};

// What Release::evaluate's CPU pass (cpu_evaluate_array: one chunk of one group) gives for the row.
template <class T, class ScreenBlocks, class DetailBlocks>
ShardResult score_row(const NoiseSpec& spec, const T* row, std::uint64_t cols, ScreenBlocks& screen_blocks,
                      DetailBlocks& detail_blocks) {
  ShardAccumulator accumulator;
  accumulator.result.executed_on = ExecutedOn::cpu;
  score_groups_with_blocks<BaselineGroupMath>(spec, screen_bounds(spec.mechanism), GroupRange{0, cols}, 0, 1,
                                              screen_blocks, row, 0, accumulator.result, accumulator, detail_blocks);
  return accumulator.result;
}

template <class T>
RowFailure select_rows(std::span<const SelectionParams> row_params, const RandomKey& key, std::uint64_t first_stream,
                       const T* data, std::uint64_t cols, std::uint64_t row_stride, std::span<Selection> out) {
  const std::uint64_t rows = out.size();
  const std::uint64_t batches = (rows + kBatchRows - 1) / kBatchRows;
  const auto candidate_blocks = static_cast<unsigned>((cols + 3) / 4);
  const bool per_row = row_params.size() > 1;
  RowFailure failure;
  std::exception_ptr unexpected;
#pragma omp parallel for schedule(dynamic, 16) if (batches > 1)
  for (std::uint64_t batch = 0; batch < batches; ++batch) {
    try {
      const std::uint64_t first = batch * kBatchRows;
      const auto count = static_cast<unsigned>(std::min<std::uint64_t>(kBatchRows, rows - first));
      NoiseSpec specs[kBatchRows];
      UtilityReference reference = UtilityReference::zero;  // fixed by the params: the same for every row
      for (unsigned l = 0; l < count; ++l) {
        const SelectionParams& params = row_params[per_row ? first + l : 0];
        specs[l] = release_noise_spec(params, score_scale(params), key, first_stream + first + l, reference);
      }
      ShardResult results[kBatchRows];
      if (key.generator == Generator::chacha20) {
        std::uint64_t streams[kBatchRows];
        for (unsigned l = 0; l < kBatchRows; ++l) streams[l] = specs[std::min(l, count - 1)].stream;
        BatchBlocks blocks;
        compute_batch(key.chacha, streams, candidate_blocks, blocks);
        for (unsigned l = 0; l < count; ++l) {
          LaneBlocks lane(blocks, l, candidate_blocks, specs[l]);
          results[l] = score_row(specs[l], data + (first + l) * row_stride, cols, lane, lane);
        }
      } else {
        for (unsigned l = 0; l < count; ++l) {
          SequentialBlocks screen_blocks(key, specs[l].stream);
          RaceBlockCache detail_blocks(key, specs[l].stream);
          results[l] = score_row(specs[l], data + (first + l) * row_stride, cols, screen_blocks, detail_blocks);
        }
      }
      for (unsigned l = 0; l < count; ++l) {
        try {
          out[first + l] = finish_selection(row_params[per_row ? first + l : 0], specs[l], reference, results[l]);
        } catch (const InvalidArgument&) {
#pragma omp critical(dpselect_small_rows_failure)
          if (first + l < failure.row) failure = RowFailure{first + l, std::current_exception()};
        }
      }
    } catch (...) {
#pragma omp critical(dpselect_small_rows_failure)
      if (!unexpected) unexpected = std::current_exception();
    }
  }
  if (unexpected) std::rethrow_exception(unexpected);
  return failure;
}

}  // namespace

RowFailure select_small_rows_on_cpu(std::span<const SelectionParams> row_params, const RandomKey& key,
                                    std::uint64_t first_stream, const float* data, std::uint64_t cols,
                                    std::uint64_t row_stride, std::span<Selection> out) {
  return select_rows(row_params, key, first_stream, data, cols, row_stride, out);
}

RowFailure select_small_rows_on_cpu(std::span<const SelectionParams> row_params, const RandomKey& key,
                                    std::uint64_t first_stream, const double* data, std::uint64_t cols,
                                    std::uint64_t row_stride, std::span<Selection> out) {
  return select_rows(row_params, key, first_stream, data, cols, row_stride, out);
}

}  // namespace dpselect::detail
