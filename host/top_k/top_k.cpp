// SPDX-License-Identifier: Apache-2.0
// One-shot Gumbel top-k on all CPU cores or on the GPU (see top_k.hpp for the privacy accounting).
#include "dpselect/detail/screened_scoring.hpp"
#include "dpselect/top_k.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>
#include <vector>

#include "dpselect/detail/release_access.hpp"
#include "dpselect/errors.hpp"
#include "selection/chunked_passes.hpp"
#include "device/gpu.hpp"
#include "top_k/gpu.hpp"
#include "selection/parallel_groups.hpp"
#include "random/ranked_lists.hpp"
#include "selection/screened_group.hpp"
#include "top_k/top_k_steps.hpp"
#include "validation/validation.hpp"

namespace dpselect {
namespace {

using detail::RankedCandidate;

// Higher score first; equal scores: smaller index first (the library's tie rule).
bool ranks_before(const RankedCandidate& a, const RankedCandidate& b) {
  return detail::ranks_before(a.score, a.index, b.score, b.index);
}

// Per-thread state: the tally of every candidate seen and the k best so far, kept as a heap
// whose front is the worst of them (the bar a new candidate has to clear).
struct TopKState {
  ShardResult tally;
  std::vector<RankedCandidate> heap;
  std::uint64_t k = 1;

  double threshold() const { return heap.size() < k ? -detail::kInfinity : heap.front().score; }

  void offer(double score, std::uint64_t index) {
    const RankedCandidate candidate{score, index};
    if (heap.size() < k) {
      heap.push_back(candidate);
      std::push_heap(heap.begin(), heap.end(), ranks_before);
    } else if (ranks_before(candidate, heap.front())) {
      std::pop_heap(heap.begin(), heap.end(), ranks_before);
      heap.back() = candidate;
      std::push_heap(heap.begin(), heap.end(), ranks_before);
    }
  }
};

// Candidates [first_index, first_index + utilities.size()); utilities non-empty.
template <class T>
detail::TopKShard cpu_top_k(const detail::NoiseSpec& spec, std::span<const T> utilities, std::uint64_t first_index,
                            std::uint64_t k) {
  TopKState initial;
  initial.k = k;
  initial.tally.executed_on = ExecutedOn::cpu;
  // The k-th best score only rises, as score_groups' screening requires of a threshold.
  const detail::ScreenBounds& bounds = detail::screen_bounds(spec.mechanism);
  TopKState top = detail::parallel_groups(
      IndexRange{first_index, first_index + utilities.size()}, initial,
      [&](const detail::GroupRange& groups, std::uint64_t first, std::uint64_t last, TopKState& state) {
        detail::SequentialBlocks screen_blocks(spec.key, spec.stream);
        detail::score_groups(spec, bounds, groups, first, last, screen_blocks, utilities.data(), first_index, state.tally,
                             state);
      },
      [](TopKState& total, const TopKState& part) {
        total.tally = merge(total.tally, part.tally);
        for (const RankedCandidate& r : part.heap) total.offer(r.score, r.index);
      });
  std::sort(top.heap.begin(), top.heap.end(), ranks_before);
  return detail::TopKShard{top.tally, std::move(top.heap)};
}

template <class T>
std::uint64_t candidate_count(std::span<const T> utilities) {
  return utilities.size();
}
template <class T>
std::uint64_t candidate_count(DeviceSpan<const T> utilities) {
  return utilities.size;
}

// Host spans run on the backend params ask for (Auto: the GPU when usable and k <= kGpuTopKMax);
// device spans on the GPU. Every check runs before the charge.
template <class Utilities, class... Stream>
TopKSelection top_k(Context& context, Utilities utilities, const TopKParams& params, Stream... stream) {
  constexpr bool kDeviceMemory = sizeof...(Stream) == 1;
  const std::uint64_t n = candidate_count(utilities);
  detail::validate_release_params(params.selection);
  if constexpr (kDeviceMemory) {
    detail::validate_device_utilities(utilities.data, n, 0, params.selection.backend);
  } else {
    detail::validate_candidate_count("utilities", n, 0);
  }
  detail::validate_top_k(params, n);
  const SelectionParams per_pick = detail::per_pick_params(params);
  Backend backend = kDeviceMemory ? Backend::Gpu : detail::resolve_backend(per_pick.backend);
  if (backend == Backend::Gpu && params.k > detail::kGpuTopKMax) {
    if (kDeviceMemory || per_pick.backend == Backend::Gpu) {
      throw InvalidArgument("dpselect: k must be at most " + std::to_string(detail::kGpuTopKMax) +
                            " on the GPU backend (got " + std::to_string(params.k) + ")");
    }
    backend = Backend::Cpu;  // Auto: the CPU pass has no limit on k
  }
  const IndexRange range{0, n};
  const PrivacyCharge picks = detail::top_k_charge(params);
  detail::ContextAccess::charge(context, std::span(&picks, 1));
  Release release = detail::ContextAccess::begin_charged_release(context, per_pick);
  detail::ReleaseAccess::claim(release, range);
  const detail::NoiseSpec spec = detail::ReleaseAccess::noise_spec(release);

  detail::TopKShard top;
  if constexpr (kDeviceMemory) {
    top = detail::gpu_top_k_device(spec, utilities.data, n, params.k, stream...);
  } else {
    top = backend == Backend::Gpu ? detail::gpu_top_k_host(spec, utilities.data(), n, params.k)
                                  : cpu_top_k(spec, utilities, 0, params.k);
  }
  return detail::finish_top_k(release, params, detail::ReleaseAccess::stamped(release, range, top.tally), top.top);
}

// The chunks' CPU passes, each over its global indices, merged as the threads' lists are: the k
// best of the union are among each chunk's k best.
template <class T>
TopKSelection top_k_chunks(Context& context, const ChunkedValues<T>& utilities, const TopKParams& params) {
  detail::validate_release_params(params.selection);
  std::vector<T> buffer = detail::chunk_buffer(utilities);
  detail::validate_top_k(params, utilities.size);
  const SelectionParams per_pick = detail::per_pick_params(params);
  if (per_pick.backend == Backend::Gpu) {
    throw InvalidArgument("dpselect: a top-k over chunked utilities runs on the CPU (got backend Gpu); use Auto or Cpu");
  }
  const IndexRange range{0, utilities.size};
  const PrivacyCharge picks = detail::top_k_charge(params);
  detail::ContextAccess::charge(context, std::span(&picks, 1));
  Release release = detail::ContextAccess::begin_charged_release(context, per_pick);
  detail::ReleaseAccess::claim(release, range);
  const detail::NoiseSpec spec = detail::ReleaseAccess::noise_spec(release);

  TopKShardResult merged;
  detail::for_each_chunk(utilities, buffer, [&](std::span<const T> chunk, std::uint64_t first) {
    detail::TopKShard part = cpu_top_k(spec, chunk, first, params.k);
    merged = merge(merged, TopKShardResult{std::move(part.top), part.tally, params.k});
  });
  return detail::finish_top_k(release, params, detail::ReleaseAccess::stamped(release, range, merged.tally), merged.best);
}

}  // namespace

namespace detail {

void validate_top_k(const TopKParams& params, std::uint64_t candidates) {
  if (params.selection.mechanism != Mechanism::exponential) {
    throw InvalidArgument("dpselect: top-k mechanism must be exponential (one-shot Gumbel top-k equals "
                          "peeling EM only for Gumbel noise; got " + std::string(to_string(params.selection.mechanism)) +
                          ")");
  }
  if (params.k == 0 || params.k > candidates) {
    throw InvalidArgument("dpselect: k must be between 1 and the number of candidates, " + std::to_string(candidates) +
                          " (got " + std::to_string(params.k) + ")");
  }
  if (!std::isnormal(per_pick_epsilon(params))) {
    throw InvalidArgument("dpselect: epsilon / k must be a normal double (epsilon " +
                          format_value(params.selection.epsilon) + ", k " + std::to_string(params.k) + ")");
  }
  detail::validate_release_params(per_pick_params(params));  // a utility_bound's slack against epsilon'
}

double per_pick_epsilon(const TopKParams& params) {
  const double k = static_cast<double>(params.k);
  double epsilon = params.selection.epsilon / k;
  while (epsilon > 0.0 && k * epsilon > params.selection.epsilon) epsilon = std::nextafter(epsilon, 0.0);
  return epsilon;
}

SelectionParams per_pick_params(const TopKParams& params) {
  SelectionParams per_pick = params.selection;
  per_pick.epsilon = per_pick_epsilon(params);
  return per_pick;
}

PrivacyCharge top_k_charge(const TopKParams& params) {
  // k rounds of peeling EM at epsilon' (Durfee & Rogers 2019): k exponential-mechanism picks,
  // epsilon in all by basic composition (Dwork & Roth 2014, Thm 3.16).
  return PrivacyCharge{ReleaseKind::exponential_mechanism, per_pick_epsilon(params), 0.0, params.k};
}

TopKSelection finish_top_k(Release& release, const TopKParams& params, ShardResult tally,
                           const std::vector<RankedScore>& best) {
  // The tally carries the best candidate so finish() applies the usual checks and the slack
  // (and throws for invalid utilities, which may have left the list short or empty).
  if (!best.empty()) {
    tally.best_score = best.front().score;
    tally.best_index = best.front().index;
  }
  const Selection first = release.finish(tally);
  if (best.size() < params.k || best[params.k - 1].score == -kInfinity) {
    throw InvalidArgument("dpselect: k must not exceed the number of candidates that are not excluded (-inf) (got " +
                          std::to_string(params.k) + ")");
  }
  TopKSelection selection;
  selection.indices.reserve(params.k);
  for (std::uint64_t i = 0; i < params.k; ++i) selection.indices.push_back(best[i].index);
  selection.report.per_pick = first.report;
  selection.report.k = params.k;
  const double k = static_cast<double>(params.k);
  const double epsilon = per_pick_epsilon(params);
  // Dwork & Roth 2014, Thm 3.16 (basic composition) over the k picks: at most selection.epsilon.
  selection.report.epsilon_total_basic = k * epsilon;
  // Each pick is epsilon'-bounded-range (Durfee & Rogers 2019; at the monotone scale too, since all
  // utility differences then lie in [0, Delta]), hence (epsilon'^2/8)-zCDP (Cesar & Rogers 2021);
  // zCDP adds up over the k picks.
  selection.report.rho = k * epsilon * epsilon / 8.0;
  return selection;
}

TopKShard cpu_top_k_shard(const NoiseSpec& spec, std::span<const float> utilities, std::uint64_t first_index,
                          std::uint64_t k) {
  return cpu_top_k(spec, utilities, first_index, k);
}
TopKShard cpu_top_k_shard(const NoiseSpec& spec, std::span<const double> utilities, std::uint64_t first_index,
                          std::uint64_t k) {
  return cpu_top_k(spec, utilities, first_index, k);
}
}  // namespace detail

TopKShardResult merge(const TopKShardResult& a, const TopKShardResult& b) {
  TopKShardResult out;
  out.k = std::max(a.k, b.k);
  out.tally = merge(a.tally, b.tally);
  out.best.reserve(a.best.size() + b.best.size());
  std::merge(a.best.begin(), a.best.end(), b.best.begin(), b.best.end(), std::back_inserter(out.best), ranks_before);
  if (out.best.size() > out.k) out.best.resize(out.k);
  return out;
}

TopKRelease begin_top_k_release(Context& context, const TopKParams& params, IndexRange range) {
  detail::validate_range(range);
  detail::validate_release_params(params.selection);
  detail::validate_top_k(params, range.size());
  if (params.selection.backend == Backend::Gpu) {
    throw InvalidArgument("dpselect: a sharded top-k runs its shards on the CPU (got backend Gpu); use Auto or Cpu");
  }
  const PrivacyCharge picks = detail::top_k_charge(params);
  detail::ContextAccess::charge(context, std::span(&picks, 1));
  return TopKRelease(detail::ContextAccess::begin_charged_release(context, detail::per_pick_params(params)), params,
                     range);
}

TopKTicket TopKRelease::ticket() { return TopKTicket(release_.ticket(range_), params_.k); }

TopKSelection TopKRelease::finish(const TopKShardResult& merged) {
  if (merged.tally.candidates != 0 && merged.k != params_.k) {
    throw UsageError("dpselect: the TopKShardResult passed to finish() keeps " + std::to_string(merged.k) +
                     " candidates but this release keeps " + std::to_string(params_.k));
  }
  return detail::finish_top_k(release_, params_, merged.tally, merged.best);
}

template <class T>
TopKShardResult TopKTicket::evaluate_shard(std::span<const T> utilities, std::uint64_t first_index) const {
  const detail::NoiseSpec spec = ticket_.shard_spec(utilities.size(), first_index);
  detail::TopKShard top = detail::cpu_top_k_shard(spec, utilities, first_index, k_);
  const IndexRange range{first_index, first_index + utilities.size()};
  return TopKShardResult{std::move(top.top), ticket_.stamped(top.tally, range), k_};
}

TopKShardResult TopKTicket::evaluate(std::span<const float> utilities, std::uint64_t first_index) const {
  return evaluate_shard(utilities, first_index);
}
TopKShardResult TopKTicket::evaluate(std::span<const double> utilities, std::uint64_t first_index) const {
  return evaluate_shard(utilities, first_index);
}

TopKSelection select_top_k(Context& context, std::span<const float> utilities, const TopKParams& params) {
  return top_k(context, utilities, params);
}
TopKSelection select_top_k(Context& context, std::span<const double> utilities, const TopKParams& params) {
  return top_k(context, utilities, params);
}
TopKSelection select_top_k(Context& context, const ChunkedValues<float>& utilities, const TopKParams& params) {
  return top_k_chunks(context, utilities, params);
}
TopKSelection select_top_k(Context& context, const ChunkedValues<double>& utilities, const TopKParams& params) {
  return top_k_chunks(context, utilities, params);
}
TopKSelection select_top_k(Context& context, DeviceSpan<const float> utilities, const TopKParams& params,
                           cuda_stream_t stream) {
  return top_k(context, utilities, params, stream);
}
TopKSelection select_top_k(Context& context, DeviceSpan<const double> utilities, const TopKParams& params,
                           cuda_stream_t stream) {
  return top_k(context, utilities, params, stream);
}

}  // namespace dpselect
