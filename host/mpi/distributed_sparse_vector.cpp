// SPDX-License-Identifier: Apache-2.0
// dpselect::mpi: the batched sparse vector over a stream of query answers split into contiguous
// blocks across the ranks (include/dpselect/mpi.hpp). Every rank drives the same windowed
// find-first as one process (sparse_vector_internal.hpp's run_batch): each searches the part of
// the window it holds, one min-reduction gives the window's first "above", and every rank then
// records it and redraws the threshold alike, from the same key and stream.
#include <mpi.h>

#include <cmath>
#include <string>

#include "dpselect/detail/release_access.hpp"
#include "dpselect/mpi.hpp"
#include "dpselect/sparse_vector.hpp"
#include "mpi/collective.hpp"
#include "sparse_vector/sparse_vector_internal.hpp"

namespace dpselect::mpi {
namespace {

// The params every rank must pass, in a form that compares bit for bit.
struct ParamsImage {
  double epsilon;
  double delta;
  double sensitivity;
  double threshold;
  double value_bound;
  std::uint64_t max_positives;
  std::int32_t numeric;
  std::int32_t algorithm;
  std::int32_t monotone;
  std::int32_t padding;
};

ParamsImage image_of(const SparseVectorParams& p) {
  ParamsImage image{};
  image.epsilon = p.epsilon;
  image.delta = p.delta;
  image.sensitivity = p.sensitivity;
  image.threshold = p.threshold;
  image.value_bound = p.value_bound;
  image.max_positives = p.max_positives;
  image.numeric = p.numeric ? 1 : 0;
  image.algorithm = static_cast<std::int32_t>(p.algorithm);
  image.monotone = p.monotone ? 1 : 0;
  return image;
}

}  // namespace

SparseVectorBatch sparse_vector_batch(DistributedContext& context, std::span<const double> values,
                                      std::uint64_t first_index, const SparseVectorParams& params) {
  DistributedContext::State& s = detail::Access::state(context);
  const ParamsImage image = image_of(params);
  detail::Finding finding =
      detail::invalid_unless_empty(detail::differs_from_root(context, &image, sizeof image, "params"));
  // One process's checks (sparse_vector_batch.cpp), each value named by its place in the stream.
  SparseVectorScales scales;
  if (finding.kind == detail::none) finding = detail::finding_of([&] { scales = sparse_vector_scales(params); });
  if (finding.kind == detail::none) {
    finding = detail::invalid_unless_empty(
        detail::shard_end_error(context, first_index, values.size(), "first_index", "query answers"));
  }
  double largest_abs_value = 0.0;
  if (finding.kind == detail::none) {
    finding = detail::finding_of([&] {
      for (std::size_t i = 0; i < values.size(); ++i) {
        dpselect::detail::validate_sparse_value(params, values[i], first_index + i);
        largest_abs_value = std::fmax(largest_abs_value, std::fabs(values[i]));
      }
    });
  }
  // The slack of the whole stream's values, as one process computes it.
  MPI_Allreduce(MPI_IN_PLACE, &largest_abs_value, 1, MPI_DOUBLE, MPI_MAX, s.comm);

  detail::ShardRules rules;
  rules.unit = "query answers";
  rules.from_zero = true;
  rules.max_total = dpselect::detail::kSparseQueryLimit;
  const IndexRange shard =
      finding.kind == detail::none ? IndexRange{first_index, first_index + values.size()} : IndexRange{};
  const detail::AgreedShards agreed = detail::agree_and_charge(
      context, nullptr, shard, std::move(finding), detail::ChargeRule{dpselect::detail::sparse_vector_charge(params)},
      rules);
  const dpselect::detail::ContextAccess::KeyedStream drawn = dpselect::detail::ContextAccess::draw_stream(s.local);

  const std::uint64_t end_here = first_index + values.size();
  const auto first_above = [&](std::uint64_t begin, std::uint64_t end, const dpselect::detail::SparseQueryNoise& noise,
                               double noisy_threshold) {
    // This rank's part of the window [begin, end), searched on its cores; then the smallest.
    const std::uint64_t from = std::max(begin, first_index);
    const std::uint64_t to = std::min(end, end_here);
    std::uint64_t found = from < to ? dpselect::detail::cpu_first_above(values.data(), first_index, from, to, noise,
                                                                        noisy_threshold)
                                    : to;
    if (found == to) found = end;
    MPI_Allreduce(MPI_IN_PLACE, &found, 1, MPI_UINT64_T, MPI_MIN, s.comm);
    return found;
  };
  const auto value_at = [&](std::uint64_t index) {
    if (!params.numeric) return 0.0;  // only NumericSparse releases a value
    // From the rank that holds it: the lowest rank holding the index (there is one).
    const bool here = index >= first_index && index < end_here;
    int owner = here ? s.rank : s.size;
    MPI_Allreduce(MPI_IN_PLACE, &owner, 1, MPI_INT, MPI_MIN, s.comm);
    double value = here ? values[index - first_index] : 0.0;
    MPI_Bcast(&value, 1, MPI_DOUBLE, owner, s.comm);
    return value;
  };
  return dpselect::detail::run_batch(drawn, params, scales, agreed.total, largest_abs_value,
                                     dpselect::detail::kCpuWindows, first_above, value_at);
}

}  // namespace dpselect::mpi
