#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "cpu_backend.hpp"
#include "dpselect/context.hpp"
#include "dpselect/detail/release_access.hpp"
#include "dpselect/errors.hpp"
#include "floating_point_slack.hpp"
#include "gpu_backend.hpp"
#include "os_entropy.hpp"
#include "validation.hpp"

namespace dpselect {
namespace detail {

struct ReleaseState {
  SelectionParams params;
  NoiseSpec spec;
  std::mutex mutex;
  std::vector<IndexRange> claimed;  // sorted by begin, pairwise disjoint
  bool finished = false;
};

Backend resolve_backend(Backend requested) {
  if (requested == Backend::Cpu) return Backend::Cpu;
  const bool usable = cuda_device_usable();
  if (requested == Backend::Gpu && !usable) {
    throw BackendUnavailable(cuda_backend_compiled()
                                 ? "dpselect: backend Gpu requested but no CUDA device is usable"
                                 : "dpselect: backend Gpu requested but this build has no CUDA "
                                   "backend");
  }
  return usable ? Backend::Gpu : Backend::Cpu;
}

void validate_range(IndexRange range) {
  if (range.begin > range.end) {
    throw InvalidArgument("dpselect: range must have begin <= end (got begin " +
                          std::to_string(range.begin) + ", end " + std::to_string(range.end) + ")");
  }
  if (range.begin == range.end) {
    throw InvalidArgument("dpselect: range must hold at least one candidate (got the empty range [" +
                          std::to_string(range.begin) + ", " + std::to_string(range.end) + "))");
  }
}

NoiseSpec ReleaseAccess::noise_spec(const Release& release) { return release.state_->spec; }

void ReleaseAccess::claim(Release& release, IndexRange range) {
  validate_range(range);
  ReleaseState& state = *release.state_;
  std::lock_guard lock(state.mutex);
  if (state.finished) throw UsageError("dpselect: release already finished; begin a new release");
  auto next = std::lower_bound(state.claimed.begin(), state.claimed.end(), range,
                               [](const IndexRange& a, const IndexRange& b) { return a.begin < b.begin; });
  const bool overlaps_next = next != state.claimed.end() && next->begin < range.end;
  const bool overlaps_previous = next != state.claimed.begin() && std::prev(next)->end > range.begin;
  if (overlaps_next || overlaps_previous) {
    throw UsageError("dpselect: candidates [" + std::to_string(range.begin) + ", " +
                     std::to_string(range.end) +
                     ") overlap a range this release already evaluated; evaluating a candidate "
                     "twice would reuse its noise");
  }
  state.claimed.insert(next, range);
}

Backend ReleaseAccess::resolved_backend(const Release& release) {
  return resolve_backend(release.state_->params.backend);
}

}  // namespace detail

Context::Context() : next_stream_(0), fixed_seed_(false) {
  std::uint32_t words[2];
  detail::fill_from_os_entropy(words, sizeof words);
  key_ = PhiloxKey{words[0], words[1]};
}

Context::Context(PhiloxKey key, std::uint64_t first_stream, bool fixed_seed)
    : key_(key), next_stream_(first_stream), fixed_seed_(fixed_seed) {}

Context Context::with_fixed_seed(std::uint64_t seed) {
  return Context(PhiloxKey::from_seed(seed), 0, true);
}

Context Context::with_shared_key(PhiloxKey key, std::uint64_t first_stream) {
  return Context(key, first_stream, false);
}

Context::Context(Context&& other) noexcept
    : key_(other.key_), next_stream_(other.next_stream_.load()), fixed_seed_(other.fixed_seed_) {}

Context::~Context() = default;

Release Context::begin_release(const SelectionParams& params) {
  detail::validate_params(params);
  auto state = std::make_unique<detail::ReleaseState>();
  state->params = params;
  state->spec = detail::NoiseSpec{params.mechanism, detail::score_scale(params), key_,
                                  next_stream_.fetch_add(1, std::memory_order_relaxed)};
  return Release(std::move(state));
}

Release::Release(std::unique_ptr<detail::ReleaseState> state) : state_(std::move(state)) {}
Release::Release(Release&&) noexcept = default;
Release& Release::operator=(Release&&) noexcept = default;
Release::~Release() = default;

const SelectionParams& Release::params() const { return state_->params; }
std::uint64_t Release::stream() const { return state_->spec.stream; }

namespace {

template <class T>
ShardResult evaluate_host(Release& release, std::span<const T> utilities, std::uint64_t first_index) {
  detail::validate_candidate_count("utilities", utilities.size(), first_index);
  const IndexRange range{first_index, first_index + utilities.size()};
  const Backend backend = detail::ReleaseAccess::resolved_backend(release);
  detail::ReleaseAccess::claim(release, range);
  const detail::NoiseSpec spec = detail::ReleaseAccess::noise_spec(release);
  return backend == Backend::Gpu ? detail::gpu_evaluate_host(spec, utilities.data(), range)
                                 : detail::cpu_evaluate_array(spec, utilities.data(), range);
}

template <class T>
ShardResult evaluate_device(Release& release, DeviceSpan<const T> utilities,
                            std::uint64_t first_index, cuda_stream_t stream) {
  detail::validate_candidate_count("utilities", utilities.size, first_index);
  if (release.params().backend == Backend::Cpu) {
    throw InvalidArgument("dpselect: backend must be Gpu or Auto for utilities in device memory "
                          "(got Cpu)");
  }
  if (utilities.data == nullptr) {
    throw InvalidArgument("dpselect: utilities.data must be a device pointer (got nullptr)");
  }
  detail::resolve_backend(Backend::Gpu);
  const IndexRange range{first_index, first_index + utilities.size};
  detail::ReleaseAccess::claim(release, range);
  return detail::gpu_evaluate_device(detail::ReleaseAccess::noise_spec(release), utilities.data,
                                     range, stream);
}

}  // namespace

ShardResult Release::evaluate(std::span<const float> utilities, std::uint64_t first_index) {
  return evaluate_host(*this, utilities, first_index);
}
ShardResult Release::evaluate(std::span<const double> utilities, std::uint64_t first_index) {
  return evaluate_host(*this, utilities, first_index);
}
ShardResult Release::evaluate(DeviceSpan<const float> utilities, std::uint64_t first_index,
                              cuda_stream_t stream) {
  return evaluate_device(*this, utilities, first_index, stream);
}
ShardResult Release::evaluate(DeviceSpan<const double> utilities, std::uint64_t first_index,
                              cuda_stream_t stream) {
  return evaluate_device(*this, utilities, first_index, stream);
}

Selection Release::finish(const ShardResult& merged) {
  detail::ReleaseState& state = *state_;
  std::lock_guard lock(state.mutex);
  if (state.finished) throw UsageError("dpselect: release already finished; begin a new release");
  state.finished = true;  // whatever happens below, this release's noise is never used again
  if (merged.first_invalid_index != kNoIndex) {
    throw InvalidArgument("dpselect: utilities[" + std::to_string(merged.first_invalid_index) +
                          "] must be finite or -inf (excluded) with a finite scaled score (got " +
                          detail::format_value(merged.first_invalid_value) + ")");
  }
  if (merged.candidates == 0) {
    throw InvalidArgument("dpselect: utilities must hold at least one candidate (got 0 evaluated)");
  }
  if (merged.best_score == -detail::kInfinity) {
    throw InvalidArgument("dpselect: utilities must include at least one candidate that is not "
                          "excluded (got all " + std::to_string(merged.candidates) + " equal to -inf)");
  }
  const SelectionParams& params = state.params;
  const FloatingPointSlack slack =
      detail::floating_point_slack(params.epsilon, state.spec.score_scale, params.sensitivity,
                                   merged.max_abs_utility, merged.candidates);
  if (!(slack.epsilon < params.epsilon)) {
    throw InvalidArgument("dpselect: utilities must be small enough for double-precision noise: "
                          "max |utility| * epsilon / sensitivity makes the floating-point slack " +
                          detail::format_value(slack.epsilon) + " exceed epsilon (got max |utility| " +
                          detail::format_value(merged.max_abs_utility) + "); shift or rescale them");
  }
  SelectionReport report;
  report.mechanism = params.mechanism;
  report.epsilon_spent = params.epsilon;
  report.sensitivity = params.sensitivity;
  report.monotone = params.monotone;
  report.noise_scale = 1.0 / state.spec.score_scale;
  report.executed_on = merged.executed_on;
  report.candidates = merged.candidates;
  report.slack = slack;
  report.stream = state.spec.stream;
  return Selection{merged.best_index, report};
}

}  // namespace dpselect
