// SPDX-License-Identifier: Apache-2.0
// Rows of at most one group of candidates (cols <= 32) on the CPU, many releases at once: the
// shape of select_repeated over a short row (the auditor) and of select_rows over a batch of small
// choices. Each row's Selection is, bit for bit and report included, what begin_release,
// Release::evaluate on the CPU and Release::finish give for it (the same scoring,
// score_groups_with_blocks, over the same bits, and the same begin and finish steps); only the
// noise's blocks are computed differently, and no Release is built. A release of c candidates reads 2 + ceil(c / 4) ChaCha20 blocks, one
// position each of its own stream (its group's screen, its race and its candidates' blocks,
// noise_positions.hpp), and computing them one stream at a time wastes most of each 8-block
// batch. Here eight releases' blocks at each position come from one batch (one SIMD lane per
// stream, chacha20_blocks_of_streams), so a release costs a quarter of what Release::evaluate
// costs in noise, and nothing in per-release bookkeeping; each batch is begun, scored and
// finished on one thread. Philox keys draw their blocks as Release::evaluate does.
#pragma once

#include <cstdint>
#include <exception>
#include <span>

#include "dpselect/context.hpp"
#include "dpselect/random_key.hpp"
#include "dpselect/shard_result.hpp"

namespace dpselect::detail {

// The most columns select_small_rows_on_cpu takes: one group of the screen.
inline constexpr std::uint64_t kSmallRowMaxColumns = 32;

// The lowest row whose finish threw (kNoIndex: none), and what it threw.
struct RowFailure {
  std::uint64_t row = kNoIndex;
  std::exception_ptr error;
};

// For every r < out.size(): the release with params row_params[r] (row_params[0] when it holds
// one entry for all rows) on stream first_stream + r of `key` over the utilities data + r *
// row_stride (cols of them), begun, scored on the CPU and finished into out[r] exactly as
// begin_release, Release::evaluate and Release::finish would (release_steps.hpp), on all cores.
// cols in [1, kSmallRowMaxColumns]; row_stride 0 reads one row for every release. A row whose
// finish throws leaves its out[r] alone; the lowest such row is returned (the others finish).
RowFailure select_small_rows_on_cpu(std::span<const SelectionParams> row_params, const RandomKey& key,
                                    std::uint64_t first_stream, const float* data, std::uint64_t cols,
                                    std::uint64_t row_stride, std::span<Selection> out);
RowFailure select_small_rows_on_cpu(std::span<const SelectionParams> row_params, const RandomKey& key,
                                    std::uint64_t first_stream, const double* data, std::uint64_t cols,
                                    std::uint64_t row_stride, std::span<Selection> out);

}  // namespace dpselect::detail
