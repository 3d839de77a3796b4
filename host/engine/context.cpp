// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "selection/cpu_backend.hpp"
#include "dpselect/context.hpp"
#include "dpselect/detail/noise_positions.hpp"
#include "dpselect/detail/release_access.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/release_ticket.hpp"
#include "selection/floating_point_slack.hpp"
#include "device/gpu.hpp"
#include "selection/gpu.hpp"
#include "engine/release_steps.hpp"
#include "engine/release_tags.hpp"
#include "random/os_entropy.hpp"
#include "validation/validation.hpp"

namespace dpselect {
namespace detail {

struct ReleaseState {
  SelectionParams params;
  NoiseSpec spec;
  std::mutex mutex;
  std::vector<IndexRange> claimed;  // sorted by begin, pairwise disjoint
  std::uint64_t claimed_candidates = 0;
  std::uint64_t claimed_coverage = 0;
  std::uint64_t release_tag = 0;
  // Other processes may evaluate shards of this release (Context::with_shared_key): finish() can
  // then only check that the merge covers at least the local shards.
  bool shared_key = false;
  bool finished = false;
  // spec.utility_reference is fixed once: at begin_release from the params, else by a one-shot
  // entry point from the range's first utility (ReleaseAccess::fix_reference_from_data) or at 0
  // by the first use of the spec.
  bool reference_fixed = false;
  UtilityReference reference = UtilityReference::zero;
  // Set by Release::ticket: the candidates the tickets' shards must tile, and the flag the tickets
  // read to refuse evaluating for a release that can no longer be finished.
  std::optional<IndexRange> ticket_range;
  std::optional<double> ticket_first_utility;
  std::shared_ptr<std::atomic<bool>> spent;

  ReleaseState() = default;
  ReleaseState(const ReleaseState&) = delete;
  ReleaseState& operator=(const ReleaseState&) = delete;
  ~ReleaseState() {
    if (spent) spent->store(true, std::memory_order_release);
  }
};

// A fingerprint of one evaluated range; merge() sums them (mod 2^64). It is H(end) - H(begin) for
// a hash H of an index (the splitmix64 finaliser), so the fingerprints of ranges that tile [b, e)
// sum to that of [b, e) whatever the tiling: a driver that knows only the whole range (a ticket's)
// checks the merge of shards it never saw. A shard merged twice, or one missing, changes the sum
// unless hashes collide, and changes the candidate count besides.
std::uint64_t coverage_fingerprint(IndexRange range) {
  auto hash = [](std::uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  return hash(range.end) - hash(range.begin);
}

namespace {

// Fixes the release's reference where nothing fixed it yet (at spec.utility_reference, 0 unless an
// entry point set it) and tags the parameters and reference its shards are scored under.
void fix_reference_locked(ReleaseState& state) {
  if (state.reference_fixed) return;
  state.reference_fixed = true;
  state.release_tag = release_tag(state.spec.key, state.spec.stream, state.params, state.spec.utility_reference);
}

}  // namespace

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
  if (range.end > kIndexLimit) {
    throw InvalidArgument("dpselect: range end must be <= 2^63 (got end " + std::to_string(range.end) + ")");
  }
}

void validate_device_utilities(const void* data, std::uint64_t size, std::uint64_t first_index,
                               Backend backend) {
  validate_candidate_count("utilities", size, first_index);
  if (backend == Backend::Cpu) {
    throw InvalidArgument("dpselect: backend must be Gpu or Auto for utilities in device memory "
                          "(got Cpu)");
  }
  if (data == nullptr) {
    throw InvalidArgument("dpselect: utilities.data must be a device pointer (got nullptr)");
  }
  resolve_backend(Backend::Gpu);
  validate_device_pointer(data, "utilities.data");
}

ReleaseState& ReleaseAccess::state(const Release& release) {
  if (release.state_ == nullptr) {
    throw UsageError("dpselect: this release was moved from; use the release it was moved to");
  }
  return *release.state_;
}

NoiseSpec ReleaseAccess::noise_spec(const Release& release) {
  ReleaseState& release_state = state(release);
  std::lock_guard lock(release_state.mutex);
  fix_reference_locked(release_state);  // r = 0 where nothing fixed it first
  return release_state.spec;
}

bool ReleaseAccess::takes_reference_from_data(const Release& release) {
  const SelectionParams& params = state(release).params;
  return !params.utility_reference.has_value() && !(params.utility_bound > 0.0);
}

void ReleaseAccess::fix_reference_from_data(Release& release, double first_utility) {
  ReleaseState& release_state = state(release);
  std::lock_guard lock(release_state.mutex);
  if (release_state.reference_fixed || !takes_reference_from_data(release)) return;
  release_state.reference = UtilityReference::from_data;
  release_state.spec.utility_reference = reference_from_first_utility(first_utility);
  fix_reference_locked(release_state);
}

NoiseSpec ReleaseAccess::noise_spec_loading_reference(const Release& release) {
  const bool reference_from_data = takes_reference_from_data(release);
  ReleaseState& release_state = state(release);
  std::lock_guard lock(release_state.mutex);
  NoiseSpec spec = release_state.spec;
  if (!release_state.reference_fixed && reference_from_data) {
    // The value stays on the device: nothing on the host reads it once the range is claimed whole
    // (the release's tag covers r = 0 then; its one shard is stamped and finished here).
    release_state.reference = UtilityReference::from_data;
    spec.reference_on_device = true;
  }
  fix_reference_locked(release_state);
  return spec;
}

void ReleaseAccess::claim(Release& release, IndexRange range) {
  validate_range(range);
  ReleaseState& state = ReleaseAccess::state(release);
  std::lock_guard lock(state.mutex);
  if (state.finished) throw UsageError("dpselect: release already finished; begin a new release");
  if (state.ticket_range) {
    throw UsageError("dpselect: this release handed out a ticket for candidates [" +
                     std::to_string(state.ticket_range->begin) + ", " + std::to_string(state.ticket_range->end) +
                     "); evaluate its shards with the ticket (ReleaseTicket::evaluate)");
  }
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
  state.claimed_candidates += range.size();
  state.claimed_coverage += coverage_fingerprint(range);
}

ShardResult ReleaseAccess::stamped(const Release& release, IndexRange range, ShardResult result) {
  result.release_tag = state(release).release_tag;
  result.coverage = coverage_fingerprint(range);
  return result;
}

namespace {

bool same_first_utility(std::optional<double> a, std::optional<double> b) {
  if (a.has_value() != b.has_value()) return false;
  return !a.has_value() || double_bits(*a) == double_bits(*b);
}

std::string range_text(IndexRange range) {
  return "[" + std::to_string(range.begin) + ", " + std::to_string(range.end) + ")";
}

}  // namespace

ReleaseTicket ReleaseAccess::issue_ticket(Release& release, IndexRange range, std::optional<double> first_utility) {
  validate_range(range);
  ReleaseState& state = ReleaseAccess::state(release);
  std::lock_guard lock(state.mutex);
  if (state.finished) throw UsageError("dpselect: release already finished; begin a new release");
  if (state.ticket_range) {
    if (state.ticket_range->begin != range.begin || state.ticket_range->end != range.end ||
        !same_first_utility(state.ticket_first_utility, first_utility)) {
      throw UsageError("dpselect: this release already handed out a ticket for candidates " +
                       range_text(*state.ticket_range) +
                       "; ask again with the same range and first utility (got range " + range_text(range) + ")");
    }
  } else {
    if (!state.claimed.empty()) {
      throw UsageError("dpselect: this release already evaluated shards itself; a release is evaluated either "
                       "by itself or through its ticket: begin a new release for the ticket");
    }
    state.ticket_range = range;
    state.ticket_first_utility = first_utility;
    state.spent = std::make_shared<std::atomic<bool>>(false);
    if (!state.reference_fixed && first_utility.has_value() && takes_reference_from_data(release)) {
      state.reference = UtilityReference::from_data;
      state.spec.utility_reference = reference_from_first_utility(*first_utility);
    }
    fix_reference_locked(state);  // r = 0 where nothing fixed it, as for evaluate
  }
  ReleaseTicket ticket;
  ticket.key_ = state.spec.key;
  ticket.stream_ = state.spec.stream;
  ticket.params_ = state.params;
  ticket.utility_reference_ = state.spec.utility_reference;
  ticket.range_ = range;
  ticket.release_tag_ = state.release_tag;
  ticket.release_spent_ = state.spent;
  return ticket;
}

Backend ReleaseAccess::resolved_backend(const Release& release) {
  return resolve_backend(state(release).params.backend);
}

}  // namespace detail

struct Context::State {
  State(RandomKey key, std::uint64_t first_stream, bool fixed_seed, bool shared_key)
      : key(key), next_stream(first_stream), fixed_seed(fixed_seed), shared_key(shared_key) {}
  RandomKey key;
  std::atomic<std::uint64_t> next_stream;
  bool fixed_seed;
  bool shared_key;
  mutable std::mutex accountant_mutex;
  std::shared_ptr<PrivacyAccountant> accountant;  // guarded by accountant_mutex
};

namespace {

RandomKey key_from_os_entropy(Generator generator) {
  if (generator == Generator::philox) {
    PhiloxKey key;
    detail::fill_from_os_entropy(&key, sizeof key);
    return key;
  }
  std::uint8_t bytes[32];
  detail::fill_from_os_entropy(bytes, sizeof bytes);
  return ChaChaKey::from_bytes(bytes);
}

void validate_generator(Generator generator) {
  if (generator != Generator::chacha20 && generator != Generator::philox) {
    throw InvalidArgument("dpselect: generator must be chacha20 or philox (got " +
                          std::to_string(static_cast<int>(generator)) + ")");
  }
}

}  // namespace

Context::Context() : Context(key_from_os_entropy(Generator::chacha20), 0, false, false) {}

Context Context::from_os_entropy(Generator generator) {
  validate_generator(generator);
  return Context(key_from_os_entropy(generator), 0, false, false);
}

Context::Context(RandomKey key, std::uint64_t first_stream, bool fixed_seed, bool shared_key)
    : state_(std::make_unique<State>(key, first_stream, fixed_seed, shared_key)) {}

Context Context::with_fixed_seed(std::uint64_t seed, Generator generator) {
  validate_generator(generator);
  return Context(RandomKey::from_seed(seed, generator), 0, true, false);
}

Context Context::with_shared_key(RandomKey key, std::uint64_t first_stream) {
  validate_generator(key.generator);
  // An all-zero key is what a default-constructed key holds: anyone can predict its noise.
  const bool all_zero = key.generator == Generator::philox
                            ? key.philox == PhiloxKey{}
                            : key.chacha == ChaChaKey{};
  if (all_zero) {
    throw InvalidArgument(std::string("dpselect: key must not be all zero (got the all-zero ") +
                          std::string(to_string(key.generator)) + " key; share a key drawn from a CSPRNG)");
  }
  return Context(key, first_stream, false, true);
}

Context::Context(Context&& other) noexcept = default;
Context& Context::operator=(Context&& other) noexcept = default;
Context::~Context() = default;

bool Context::is_fixed_seed() const { return state_ != nullptr && state_->fixed_seed; }

Generator Context::generator() const { return state().key.generator; }

Context::State& Context::state() const {
  if (state_ == nullptr) {
    throw UsageError("dpselect: this context was moved from; use the context it was moved to");
  }
  return *state_;
}

void Context::charge_to(std::shared_ptr<PrivacyAccountant> accountant) {
  State& context = state();
  const std::lock_guard lock(context.accountant_mutex);
  context.accountant = std::move(accountant);
}

std::shared_ptr<PrivacyAccountant> Context::accountant() const {
  const State& context = state();
  const std::lock_guard lock(context.accountant_mutex);
  return context.accountant;
}

Release Context::begin_release(const SelectionParams& params) { return start_release(params, true); }

detail::NoiseSpec detail::release_noise_spec(const SelectionParams& params, double score_scale, const RandomKey& key,
                                             std::uint64_t stream, UtilityReference& reference) {
  NoiseSpec spec{params.mechanism, score_scale, key, stream,
                 params.utility_bound > 0.0 ? params.utility_bound : kInfinity};
  reference = UtilityReference::zero;
  if (params.utility_reference.has_value()) {
    spec.utility_reference = *params.utility_reference;
    reference = *params.utility_reference == 0.0 ? UtilityReference::zero : UtilityReference::public_value;
  }
  return spec;
}

Release Context::start_release(const SelectionParams& params, bool charge) {
  State& context = state();
  const double score_scale = detail::validate_release_params(params);
  if (charge) {
    const PrivacyCharge release_charge{release_kind(params.mechanism), params.epsilon, 0.0, 1};
    detail::ContextAccess::charge(*this, std::span(&release_charge, 1));
  }
  auto release = std::make_unique<detail::ReleaseState>();
  release->params = params;
  release->spec = detail::release_noise_spec(params, score_scale, context.key,
                                             context.next_stream.fetch_add(1, std::memory_order_relaxed),
                                             release->reference);
  if (params.utility_reference.has_value()) detail::fix_reference_locked(*release);
  release->shared_key = context.shared_key;
  return Release(std::move(release));
}

detail::ContextAccess::KeyedStream detail::ContextAccess::draw_stream(Context& context) {
  return draw_streams(context, 1);
}

detail::ContextAccess::KeyedStream detail::ContextAccess::draw_streams(Context& context, std::uint64_t count) {
  Context::State& state = context.state();
  return {state.key, state.next_stream.fetch_add(count, std::memory_order_relaxed)};
}

void detail::ContextAccess::charge(Context& context, std::span<const PrivacyCharge> charges) {
  if (const std::shared_ptr<PrivacyAccountant> accountant = context.accountant()) accountant->charge(charges);
}

Release detail::ContextAccess::begin_charged_release(Context& context, const SelectionParams& params) {
  return context.start_release(params, false);
}

Release::Release(std::unique_ptr<detail::ReleaseState> state) : state_(std::move(state)) {}
Release::Release(Release&&) noexcept = default;
Release& Release::operator=(Release&&) noexcept = default;
Release::~Release() = default;

const SelectionParams& Release::params() const { return detail::ReleaseAccess::state(*this).params; }
std::uint64_t Release::stream() const { return detail::ReleaseAccess::state(*this).spec.stream; }

namespace {

template <class T>
ShardResult evaluate_host(Release& release, std::span<const T> utilities, std::uint64_t first_index) {
  detail::validate_candidate_count("utilities", utilities.size(), first_index);
  const IndexRange range{first_index, first_index + utilities.size()};
  const Backend backend = detail::ReleaseAccess::resolved_backend(release);
  detail::ReleaseAccess::claim(release, range);
  const detail::NoiseSpec spec = detail::ReleaseAccess::noise_spec(release);
  return detail::ReleaseAccess::stamped(release, range,
                                        detail::evaluate_host_array(backend, spec, utilities.data(), range));
}

// reference_on_device: the kernel takes the reference from the first utility itself (a release
// over the whole range in one array, ReleaseAccess::evaluate_whole_device_array).
template <class T>
ShardResult evaluate_device(Release& release, DeviceSpan<const T> utilities,
                            std::uint64_t first_index, cuda_stream_t stream, bool reference_on_device = false) {
  detail::validate_device_utilities(utilities.data, utilities.size, first_index, release.params().backend);
  const IndexRange range{first_index, first_index + utilities.size};
  detail::ReleaseAccess::claim(release, range);
  const detail::NoiseSpec spec = reference_on_device ? detail::ReleaseAccess::noise_spec_loading_reference(release)
                                                     : detail::ReleaseAccess::noise_spec(release);
  return detail::ReleaseAccess::stamped(release, range,
                                        detail::gpu_evaluate_device(spec, utilities.data, range, stream));
}

}  // namespace

ShardResult detail::ReleaseAccess::evaluate_whole_device_array(Release& release, DeviceSpan<const float> utilities,
                                                               cuda_stream_t stream) {
  return evaluate_device(release, utilities, 0, stream, true);
}
ShardResult detail::ReleaseAccess::evaluate_whole_device_array(Release& release, DeviceSpan<const double> utilities,
                                                               cuda_stream_t stream) {
  return evaluate_device(release, utilities, 0, stream, true);
}

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

ReleaseTicket Release::ticket(IndexRange range, std::optional<double> first_utility) {
  return detail::ReleaseAccess::issue_ticket(*this, range, first_utility);
}

Selection Release::finish(const ShardResult& merged) {
  detail::ReleaseState& state = detail::ReleaseAccess::state(*this);
  std::lock_guard lock(state.mutex);
  if (state.finished) throw UsageError("dpselect: release already finished; begin a new release");
  state.finished = true;  // whatever happens below, this release's noise is never used again
  if (state.spent) state.spent->store(true, std::memory_order_release);
  detail::fix_reference_locked(state);
  if (merged.from_several_releases || (merged.candidates != 0 && merged.release_tag != state.release_tag)) {
    throw UsageError("dpselect: the ShardResult passed to finish() comes from another release, or was scored "
                     "under other parameters (a ticket's bytes changed, say)");
  }
  if (state.ticket_range) {
    const IndexRange range = *state.ticket_range;
    if (merged.candidates != range.size()) {
      throw UsageError("dpselect: the ShardResult passed to finish() covers " + std::to_string(merged.candidates) +
                       " candidates but the ticket's range " + detail::range_text(range) + " holds " +
                       std::to_string(range.size()) + "; merge every shard of the range exactly once");
    }
    if (merged.coverage != detail::coverage_fingerprint(range)) {
      throw UsageError("dpselect: the ShardResult passed to finish() covers as many candidates as the ticket's "
                       "range " + detail::range_text(range) +
                       " but not each of them once (a shard merged twice, another missing, or one outside the "
                       "range); merge every shard of the range exactly once");
    }
    return detail::finish_selection(state.params, state.spec, state.reference, merged);
  }
  const bool covers_local_shards =
      state.shared_key ? merged.candidates >= state.claimed_candidates
                       : merged.candidates == state.claimed_candidates && merged.coverage == state.claimed_coverage;
  if (!covers_local_shards) {
    throw UsageError("dpselect: the ShardResult passed to finish() covers " +
                     std::to_string(merged.candidates) + " candidates but this release evaluated " +
                     std::to_string(state.claimed_candidates) +
                     "; merge every shard exactly once first");
  }
  return detail::finish_selection(state.params, state.spec, state.reference, merged);
}

Selection detail::finish_selection(const SelectionParams& params, const NoiseSpec& spec, UtilityReference reference,
                                   const ShardResult& merged) {
  if (merged.first_invalid_index != kNoIndex) {
    // A utility is an aggregate of the data (a count, a score): only NaN or +inf, which say nothing
    // about it, is quoted back.
    const double value = merged.first_invalid_value;
    throw InvalidArgument("dpselect: utilities[" + std::to_string(merged.first_invalid_index) +
                          "] must be finite or -inf (excluded), within utility_bound when one is "
                          "given, with a finite scaled score (got " +
                          (std::isfinite(value) ? std::string("a finite value beyond those limits")
                                                : detail::format_value(value)) +
                          ")");
  }
  if (merged.candidates == 0) {
    throw InvalidArgument("dpselect: utilities must hold at least one candidate (got 0 evaluated)");
  }
  if (merged.best_score == -detail::kInfinity) {
    throw InvalidArgument("dpselect: utilities must include at least one candidate that is not "
                          "excluded (got all " + std::to_string(merged.candidates) + " equal to -inf)");
  }
  const bool bound_given = params.utility_bound > 0.0;
  FloatingPointSlack slack = floating_point_slack(params.epsilon, spec.score_scale, params.sensitivity,
                                                  bound_given ? params.utility_bound : merged.max_abs_shifted_utility,
                                                  merged.candidates, reference);
  slack.depends_on_data = !bound_given;
  if (!(slack.epsilon < params.epsilon)) {
    detail::throw_epsilon_too_small_for_slack();
  }
  SelectionReport report;
  report.mechanism = params.mechanism;
  report.epsilon_spent = params.epsilon;
  report.sensitivity = params.sensitivity;
  report.monotone = params.monotone;
  report.noise_scale = 1.0 / spec.score_scale;
  report.executed_on = merged.executed_on;
  if (merged.executed_on == ExecutedOn::cpu && params.backend == Backend::Auto) {
    report.cpu_fallback_reason = detail::gpu_unusable_reason();
  }
  report.candidates = merged.candidates;
  report.slack = slack;
  report.stream = spec.stream;
  report.generator = spec.key.generator;
  return Selection{merged.best_index, report};
}

}  // namespace dpselect
