// SPDX-License-Identifier: Apache-2.0
// What the streaming sparse vector (sparse_vector.cpp) and the batched paths
// (sparse_vector_batch.cpp) share: one answer of the mechanism, the charge, the report.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>

#include "dpselect/context.hpp"
#include "dpselect/detail/release_access.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/sparse_vector.hpp"
#include "noise/secure_noise_internal.hpp"
#include "random/sparse_vector_noise.hpp"

namespace dpselect::detail {

// Throws InvalidArgument naming "query value <index>" unless `value` is finite and within
// params.value_bound (when one is given).
void validate_sparse_value(const SparseVectorParams& params, double value, std::uint64_t index);

// What a run costs: one pure release at epsilon (delta = 0) or one approximate release at
// (epsilon, delta) (sparse_vector.hpp names the theorems).
PrivacyCharge sparse_vector_charge(const SparseVectorParams& params);
// Charges the context's accountant sparse_vector_charge(params). Call after every check, before
// drawing the stream.
void charge_sparse_vector(Context& context, const SparseVectorParams& params);

// The mechanism's state between answers, over counters the caller owns (so the streaming object
// keeps them as members and the batched paths on their stack).
struct SparseVectorRun {
  const SparseVectorParams& params;
  const SparseVectorScales& scales;
  RandomKey key;
  std::uint64_t stream;
  std::uint64_t& queries;
  std::uint64_t& positives;
  double& noisy_threshold;

  SparseQueryNoise query_noise() const { return {key, stream, scales.query_noise}; }

  // The threshold of the current epoch (after `positives` "above" answers).
  void draw_threshold() {
    noisy_threshold = sparse_vector_laplace(key, stream, kSparseThresholdPositionOffset + positives,
                                            scales.threshold_noise, params.threshold);
  }

  // The value of the next "above" answer (number `positives`): a secure Laplace on the grid of
  // scales.answer_granularity (secure_noise.hpp), the same on the streaming and the batched paths.
  double numeric_answer(double value) const {
    const SecureNoisePlan plan{scales.answer_granularity, 0.0,
                               static_cast<std::uint64_t>(scales.answer_noise_secure / scales.answer_granularity), 1,
                               scales.answer_noise_secure, 0.0};
    const SecureNoiseCore core = secure_core(plan, false, key, stream, kSparseSecureAnswerPositionOffset);
    bool exhausted = false;
    const double released = secure_coordinate(core, positives, value, &exhausted);
    if (exhausted) {
      throw RandomnessExhausted("dpselect: a NumericSparse answer ran past its random-bit budget "
                                "(probability < 2^-300000)");
    }
    return released;
  }

  // Records that query `index` (the next one) is "above": its NumericSparse value, then the
  // next epoch's threshold where the algorithm redraws it.
  std::optional<double> record_above(std::uint64_t index, double value) {
    queries = index + 1;
    std::optional<double> released;
    if (params.numeric) released = numeric_answer(value);
    ++positives;
    if (scales.threshold_redrawn && positives < params.max_positives) draw_threshold();
    return released;
  }

  SparseVectorAnswer answer(double value) {
    const std::uint64_t index = queries;
    if (!query_noise().above(index, value, noisy_threshold)) {
      queries = index + 1;
      return {false, std::nullopt};
    }
    return {true, record_above(index, value)};
  }
};

// The report after `queries` answers with `positives` "above"; the slack from value_bound when
// one is given, else from largest_abs_value (then it depends on the data).
SparseVectorReport sparse_vector_report(const SparseVectorParams& params, const SparseVectorScales& scales,
                                        Generator generator, std::uint64_t stream, std::uint64_t queries, std::uint64_t positives,
                                        double largest_abs_value);

// The batched find-first (sparse_vector_batch.cpp, and its distributed form in host/mpi/).
// Windows restart small after each "above" (positives may come close together) and double while
// none is found, so the work beyond the queries answered is at most one window plus as much again.
struct WindowSizes {
  std::uint64_t first;
  std::uint64_t largest;
};
inline constexpr WindowSizes kCpuWindows{256, std::uint64_t{1} << 22};

// Runs the mechanism over `count` queries on the stream `drawn` (already charged).
// FirstAbove(begin, end, noise, noisy_threshold) returns the first i in [begin, end) whose noisy
// value clears the threshold, or end; ValueAt(i) returns value i (for NumericSparse answers).
template <class FirstAbove, class ValueAt>
SparseVectorBatch run_batch(const ContextAccess::KeyedStream& drawn, const SparseVectorParams& params,
                            const SparseVectorScales& scales, std::uint64_t count, double largest_abs_value,
                            WindowSizes windows, FirstAbove first_above, ValueAt value_at) {
  std::uint64_t queries = 0;
  std::uint64_t positives = 0;
  double noisy_threshold = 0.0;
  SparseVectorRun run{params, scales, drawn.key, drawn.stream, queries, positives, noisy_threshold};
  run.draw_threshold();
  SparseVectorBatch batch;
  std::uint64_t window = windows.first;
  while (queries < count && positives < params.max_positives) {
    const std::uint64_t end = queries + std::min(window, count - queries);
    const std::uint64_t found = first_above(queries, end, run.query_noise(), noisy_threshold);
    if (found == end) {
      queries = end;
      window = std::min(window * 2, windows.largest);
      continue;
    }
    batch.above.push_back({found, run.record_above(found, value_at(found))});
    window = windows.first;
  }
  // Conservative: the slack uses the largest of all values given, answered or not.
  batch.report = sparse_vector_report(params, scales, drawn.key.generator, drawn.stream, queries, positives,
                                      largest_abs_value);
  return batch;
}

// The first i in [begin, end) whose noisy value clears the threshold, or end, on all CPU cores;
// query i's value is values[i - first_index] (first_index <= begin).
std::uint64_t cpu_first_above(const double* values, std::uint64_t first_index, std::uint64_t begin,
                              std::uint64_t end, const SparseQueryNoise& noise, double noisy_threshold);

// The batch over values in host memory on the stream `drawn`, which the caller has charged for
// (sparse_vector_batch without its charge and draw, for mechanisms built on the sparse vector).
// Validates params and values like sparse_vector_batch.
SparseVectorBatch sparse_vector_batch_on_stream(const ContextAccess::KeyedStream& drawn,
                                                std::span<const double> values, const SparseVectorParams& params);

}  // namespace dpselect::detail
