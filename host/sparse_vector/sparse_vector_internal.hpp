// What the streaming sparse vector (sparse_vector.cpp) and the batched paths
// (sparse_vector_batch.cpp) share: one answer of the mechanism, the charge, the report.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "dpselect/context.hpp"
#include "dpselect/detail/release_access.hpp"
#include "dpselect/detail/sparse_vector_noise.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/sparse_vector.hpp"
#include "noise/secure_noise_internal.hpp"

namespace dpselect::detail {

// Throws InvalidArgument naming "query value <index>" unless `value` is finite and within
// params.value_bound (when one is given).
void validate_sparse_value(const SparseVectorParams& params, double value, std::uint64_t index);

// Charges the context's accountant one pure release at epsilon (delta = 0) or one approximate
// release at (epsilon, delta). Call after every check, before drawing the stream.
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

// The batch over values in host memory on the stream `drawn`, which the caller has charged for
// (sparse_vector_batch without its charge and draw, for mechanisms built on the sparse vector).
// Validates params and values like sparse_vector_batch.
SparseVectorBatch sparse_vector_batch_on_stream(const ContextAccess::KeyedStream& drawn,
                                                std::span<const double> values, const SparseVectorParams& params);

}  // namespace dpselect::detail
