// SPDX-License-Identifier: Apache-2.0
// One private quantile: the exponential mechanism over the grid of a public range, sampled by data
// intervals and atoms (quantiles.hpp).
//
// The utility (quantiles.hpp): u(t) = -dist(q n, [a(t), b(t)]), a(t) = #{x_i < t}, b(t) =
// #{x_i <= t}. Its sensitivity is that of Smith's -|a(t) - q n|, since dist(q n, [a, b]) =
// max(a - q n, q n - b, 0) and each term moves by at most Delta (Dwork & Roth 2014, Def. 3.1):
//   - one record replaced (n fixed): a and b each move by at most 1, q n not at all: Delta = 1;
//   - one record added (a removal is symmetric): a and b each grow by 0 or 1 and q n by q, so
//     a - q n moves within [-q, 1 - q] and q n - b within [q - 1, q]: Delta = max(q, 1 - q).
// A maximum of functions that each move by at most Delta moves by at most Delta. Where no value
// sits on t, a(t) = b(t) and u is Smith's (Smith 2011, Sec. 3).
//
// Floating-point slack (quantile_interval_slack). The exact mechanism: EM over grid indices j with
// weights exp(c~ u(j)), c~ the rounded score scale; it is eps~-DP with eps~ <= eps (1 + 2^-52).
// Stage 1 picks interval r (length L, rank r) by Gumbel-max over the computed score
// fma(c~, w_r, G~_r), w_r = -|r - fl(q n)| + log~(L) / c~ (quantile_interval_utility); an atom
// (length 1) has w = -dist(fl(q n), [r, r + c]) (quantile_atom_utility), fewer roundings of terms
// no larger.
// Against the exact log-mass c~ (-|r - q n|) + ln L, w_r carries the roundings of q n, of the
// subtraction, of the logarithm (portable_log: < 1 ulp of ln L <= ln M), of the division and of
// the addition: each at most 2^-53 times a term of size <= U + ln M / c~, where U >= n bounds
// |r - q n|. So with S = c~ U, the computed score is within
//     eta1 = 2^-38 + 2^-50 (S + 93 + ln M)
// of the exact log-mass plus exact Gumbel noise (the race noise's 2^-38, the fma's rounding of a
// score <= S + ln M + 93; 2^-50 covers the five roundings with room), outside the race's bad
// event. The weights inside an interval are exactly equal (the utility is constant there), so
// stage 2 (uniform: truncated_geometric at rate 0) adds only its digit error. The rest is the
// bid-interval argument (floating_point_slack.cpp) with no linearity term.
//
// Permute-and-flip (permute_and_flip.cpp) has the same slack. Its exact mechanism: report-noisy-max
// over grid indices with scores c~ u(j) + E_j, E_j i.i.d. Exp(1); a run of L points is one candidate
// with exact noise h(T / L), h(t) = -ln(1 - e^-t), T its exact race time (quantiles_internal.hpp).
// The computed noise h~(fl(T~ / L)): T~ carries the race's error, which moves h by at most the
// engine's 2^-38 (|t h'(t)| = t / (e^t - 1) <= 1, as for Gumbel's -ln t: a relative error of t
// becomes at most as large an absolute one); the division adds 2^-53 relative, at most 2^-53 to h;
// the noise now reaches 93 + ln M (T >= 2^-133, L <= M), whose logarithm errs by 2^-52 (93 + ln M);
// and the fma rounds the score, at most S + 93 + ln M, once. All within the eta1 above. The run's
// exact noise has density g(y) = L e^-y (1 - e^-y)^(L-1), with g(y - t) <= e^t g(y) and g(y + t) >=
// e^-t g(y) for t >= 0 (the factor (1 - e^-y)^(L-1) is increasing), the property the noisy-max
// argument needs; inside the run the exact arg-max is uniform, as stage 2 draws it. So the same
// two-stage slack, over the same n + 1 intervals and their atoms.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "dpselect/detail/noise_positions.hpp"
#include "dpselect/errors.hpp"
#include "selection/cpu_backend.hpp"
#include "selection/floating_point_slack.hpp"
#include "validation/validation.hpp"
#include "noise/truncated_geometric.hpp"
#include "quantiles/gpu.hpp"
#include "quantiles/quantiles_internal.hpp"

namespace dpselect::detail {

void QuantileIntervalUtilities::fill(const void* self, std::uint64_t first, std::uint64_t count, double* out) {
  const auto& utilities = *static_cast<const QuantileIntervalUtilities*>(self);
  const DataIntervals& intervals = utilities.intervals;
  for (std::uint64_t k = 0; k < count; ++k) {
    const std::uint64_t r = first + k - utilities.first_index;
    out[k] = quantile_interval_utility(r, intervals.length_without_atom(r), utilities.target, utilities.score_scale);
  }
}

void QuantileIntervalUtilities::fill_atoms(const void* self, std::uint64_t first, std::uint64_t count, double* out) {
  const auto& utilities = *static_cast<const QuantileIntervalUtilities*>(self);
  const DataIntervals& intervals = utilities.intervals;
  for (std::uint64_t k = 0; k < count; ++k) {
    const std::uint64_t r = first + k - kAtomCandidateOffset - utilities.first_index;
    out[k] = intervals.ends_with_atom(r) ? quantile_atom_utility(r, intervals.atom_ties(r), utilities.target)
                                         : -INFINITY;
  }
}

double quantile_sensitivity(RecordNeighbours neighbours, double q) {
  // Replacing a record moves #{x_i < t} by at most 1 and leaves q n (Smith 2011, Sec. 3).
  if (neighbours == RecordNeighbours::replace_one_record) return 1.0;
  // Adding a record moves #{x_i < t} by 0 or 1 and q n by q: |u| moves by <= max(q, 1 - q)
  // (Dwork & Roth 2014, Def. 3.1 of sensitivity applied to u; the same for a removal).
  return std::max(q, 1.0 - q);
}

FloatingPointSlack quantile_interval_slack(double epsilon, double score_scale, double largest_abs_utility,
                                           std::uint64_t grid_size, std::uint64_t intervals) {
  const long double largest_score = static_cast<long double>(score_scale) * largest_abs_utility;
  const long double log_grid = std::log(static_cast<long double>(grid_size));
  const long double eta1 =
      kRaceNoiseErrorBound + 0x1p-50L * (largest_score + kMaxAbsRaceNoise + log_grid);
  return two_stage_interval_slack(epsilon, eta1, 0.0L, intervals);
}

void validate_quantile_level(double q, std::string_view name) {
  if (!(q >= 0.0 && q <= 1.0)) throw_invalid(name, "in [0, 1]", q);
}

void validate_quantile_levels(std::span<const double> qs) {
  if (qs.empty()) throw InvalidArgument("dpselect: qs must hold at least one quantile level (got none)");
  // JointExp's 2m choices take candidate ranges of up to 2^40 + 1 each: below 2^62 in all.
  if (qs.size() > kMaxQuantileLevels) {
    throw InvalidArgument("dpselect: qs must hold at most 2^20 levels (got " + std::to_string(qs.size()) + ")");
  }
  for (std::size_t j = 0; j < qs.size(); ++j) {
    const std::string name = "qs[" + std::to_string(j) + "]";
    validate_quantile_level(qs[j], name);
    if (j > 0 && !(qs[j] > qs[j - 1])) {
      throw_invalid(name, "> qs[" + std::to_string(j - 1) + "] = " + format_value(qs[j - 1]) +
                              " (levels strictly increasing)",
                    qs[j]);
    }
  }
}

void validate_quantile_params(const QuantileParams& params, const QuantileData& data) {
  params.range.validate();
  const auto describe = [](const QuantileRange& range) {
    return "[" + format_value(range.lower) + ", " + format_value(range.upper) + "]" +
           (range.resolution ? " with resolution " + format_value(*range.resolution) : std::string());
  };
  if (params.range.lower != data.range().lower || params.range.upper != data.range().upper ||
      params.range.resolution != data.range().resolution) {
    throw InvalidArgument("dpselect: range must be the range the data were prepared for, " + describe(data.range()) +
                          " (got " + describe(params.range) + ")");
  }
  validate_positive_finite("epsilon", params.epsilon);
  if (params.neighbours != RecordNeighbours::replace_one_record &&
      params.neighbours != RecordNeighbours::add_or_remove_record) {
    throw InvalidArgument("dpselect: neighbours must be replace_one_record or add_or_remove_record (got " +
                          std::to_string(static_cast<int>(params.neighbours)) + ")");
  }
  if (params.max_points != 0 && data.size() > params.max_points) {
    throw InvalidArgument("dpselect: data must hold at most max_points values, " + std::to_string(params.max_points) +
                          " (got more)");
  }
  if (params.backend != Backend::Auto && params.backend != Backend::Cpu && params.backend != Backend::Gpu) {
    throw InvalidArgument("dpselect: backend must be Auto, Cpu or Gpu (got " +
                          std::to_string(static_cast<int>(params.backend)) + ")");
  }
  if (params.backend == Backend::Cpu && data.on_device()) {
    throw InvalidArgument("dpselect: backend must be Auto or Gpu for data in device memory (got Cpu)");
  }
  validate_quantile_mechanism(params.mechanism, params.range);
  if (params.backend == Backend::Gpu) resolve_backend(Backend::Gpu);
}

void validate_quantile_mechanism(Mechanism mechanism, const QuantileRange& range) {
  if (mechanism != Mechanism::exponential && mechanism != Mechanism::permute_and_flip) {
    throw InvalidArgument("dpselect: mechanism must be exponential or permute_and_flip for quantiles (got " +
                          std::string(to_string(mechanism)) + ")");
  }
  if (mechanism == Mechanism::permute_and_flip && !range.resolution) {
    throw InvalidArgument(
        "dpselect: mechanism permute_and_flip needs a range with a resolution (got a range without one, whose "
        "2^40 + 1 points make it the exponential mechanism: give the data's public step, or use exponential)");
  }
}

SingleQuantilePlan plan_single_quantile(const QuantileParams& params, const QuantileData& data, double q) {
  validate_quantile_level(q);
  validate_quantile_params(params, data);
  SingleQuantilePlan plan;
  plan.selection.mechanism = params.mechanism;
  plan.selection.epsilon = params.epsilon;
  plan.selection.sensitivity = quantile_sensitivity(params.neighbours, q);
  plan.selection.monotone = false;  // a point's utility rises or falls with the added record's side
  plan.selection.backend = data.on_device() ? Backend::Gpu : (params.backend == Backend::Gpu ? Backend::Gpu : Backend::Cpu);
  // Exponential mechanism at scale eps / (2 Delta) (McSherry & Talwar 2007; Dwork & Roth 2014, Thm 3.10);
  // permute-and-flip at the same c = eps / (2 Delta) (McKenna & Sheldon 2020, Thm 1).
  plan.score_scale = score_scale(plan.selection);
  const std::uint64_t n = data.size();
  plan.target = q * static_cast<double>(n);
  const QuantileGrid grid = data.grid();
  // Under replacement n is public; under addition or removal only max_points is.
  const bool count_is_public = params.neighbours == RecordNeighbours::replace_one_record || params.max_points != 0;
  const std::uint64_t count_bound = params.max_points != 0 ? params.max_points : n;
  plan.slack = quantile_interval_slack(params.epsilon, plan.score_scale, static_cast<double>(count_bound), grid.size,
                                       2 * count_bound + 1);
  plan.slack.depends_on_data = !count_is_public;
  if (!(plan.slack.epsilon < params.epsilon)) throw_epsilon_too_small_for_slack();
  // |utility| <= |r - q n| + ln(M) / scale <= n + ln(M) / scale (permute-and-flip: no log term, and
  // q n rounds to at most n): a public bound when n is.
  if (count_is_public) {
    plan.selection.utility_bound =
        params.mechanism == Mechanism::permute_and_flip
            ? static_cast<double>(count_bound)
            : static_cast<double>(count_bound) +
                  std::log(static_cast<double>(grid.size)) / plan.score_scale * (1.0 + 0x1p-40);
  }
  validate_params(plan.selection);
  return plan;
}

ShardResult score_quantile_intervals_cpu(const QuantileIntervalUtilities& utilities, const NoiseSpec& spec) {
  // Utilities rise towards the target rank and fall after it, so a pass in index order would
  // keep finding new bests (and score every group) until the target. The intervals and atoms
  // around the target go first; their best score lets the screen skip nearly every other group.
  // The merged result is the one-pass result (cpu_backend.hpp).
  const std::uint64_t n = utilities.intervals.positions.size();
  const auto target_rank = static_cast<std::uint64_t>(std::clamp(utilities.target, 0.0, static_cast<double>(n)));
  constexpr std::uint64_t kLeadHalfWidth = std::uint64_t{1} << 12;
  const std::uint64_t lead_begin = target_rank > kLeadHalfWidth ? target_rank - kLeadHalfWidth : 0;
  const std::uint64_t lead_end = target_rank + kLeadHalfWidth + 1;
  struct Part {
    IndexRange candidates;
    FillUtilities fill;
  };
  const IndexRange intervals = utilities.interval_candidates();
  const IndexRange atoms = utilities.atom_candidates();
  const auto lead_of = [&](IndexRange all) {
    return IndexRange{std::min(all.end, all.begin + lead_begin), std::min(all.end, all.begin + lead_end)};
  };
  const Part leads[] = {{lead_of(intervals), &QuantileIntervalUtilities::fill},
                        {lead_of(atoms), &QuantileIntervalUtilities::fill_atoms}};
  const Part rests[] = {{IndexRange{intervals.begin, leads[0].candidates.begin}, &QuantileIntervalUtilities::fill},
                        {IndexRange{leads[0].candidates.end, intervals.end}, &QuantileIntervalUtilities::fill},
                        {IndexRange{atoms.begin, leads[1].candidates.begin}, &QuantileIntervalUtilities::fill_atoms},
                        {IndexRange{leads[1].candidates.end, atoms.end}, &QuantileIntervalUtilities::fill_atoms}};
  ShardResult result;
  for (const Part& lead : leads) {
    if (lead.candidates.begin < lead.candidates.end) {
      result = merge(result, cpu_evaluate_generated(spec, lead.candidates, lead.fill, &utilities));
    }
  }
  const double known_score = result.best_score;
  for (const Part& rest : rests) {
    if (rest.candidates.begin < rest.candidates.end) {
      result = merge(result, cpu_evaluate_generated(spec, rest.candidates, rest.fill, &utilities, known_score));
    }
  }
  return result;
}

std::uint64_t uniform_grid_point(const NoiseSpec& spec, std::uint64_t begin, std::uint64_t end, std::uint64_t draw) {
  if (end <= begin) throw std::logic_error("dpselect: an empty quantile interval was chosen");
  return begin + truncated_geometric(spec.key, spec.stream, 0.0, end - begin, draw);
}

namespace {

// The intervals whose ends are the order statistics of ranks [first_rank, first_rank + ends.size())
// (host data not yet sorted): exact utilities, as QuantileIntervalUtilities computes them.
struct WindowIntervalUtilities {
  std::span<const std::uint64_t> ends;
  std::uint64_t first_rank = 0;
  std::uint64_t count = 0;  // n
  std::uint64_t grid_size = 0;
  double target = 0.0;
  double score_scale = 0.0;

  // No value sits on a grid point (the caller's condition), so no interval ends with an atom.
  std::uint64_t begin(std::uint64_t r) const { return r == 0 ? 0 : grid_position_of_slot(ends[r - 1 - first_rank]); }
  std::uint64_t end(std::uint64_t r) const {
    return r == count ? grid_size : grid_position_of_slot(ends[r - first_rank]);
  }
  static void fill(const void* self, std::uint64_t first, std::uint64_t length, double* out) {
    const auto& window = *static_cast<const WindowIntervalUtilities*>(self);
    for (std::uint64_t k = 0; k < length; ++k) {
      const std::uint64_t r = first + k;
      out[k] = quantile_interval_utility(r, window.end(r) - window.begin(r), window.target, window.score_scale);
    }
  }
};

// An upper bound of every interval's utility, needing no data: -|r - target| + ln(M) / scale,
// rounded up (an interval holds at most M grid points; portable_log errs by < 1 ulp).
struct BoundedIntervalUtilities {
  double target = 0.0;
  double log_length_bound = 0.0;

  static void fill(const void* self, std::uint64_t first, std::uint64_t length, double* out) {
    const auto& bound = *static_cast<const BoundedIntervalUtilities*>(self);
    for (std::uint64_t k = 0; k < length; ++k) {
      const double distance = sub_rn(u64_to_double_rn(first + k), bound.target);
      out[k] = add_rn(-(distance < 0.0 ? -distance : distance), bound.log_length_bound);
    }
  }
};

struct IntervalChoice {
  ShardResult result;
  std::uint64_t begin = 0;  // the chosen interval's grid indices, its atom left out (an atom: one point)
  std::uint64_t end = 0;
};

// The grid points of the winner of stage 1 over n values (candidate indices from 0): interval r
// without its atom, or the atom of interval r alone. slot_at(i) reads sorted slot i (i = r - 1 or
// r only).
template <class SlotAt>
IntervalChoice choice_of(const ShardResult& result, std::uint64_t n, std::uint64_t grid_size, SlotAt slot_at) {
  IntervalChoice choice;
  choice.result = result;
  const std::uint64_t index = result.best_index;
  if (index == kNoIndex) return choice;  // nothing chosen: finish() refuses the result
  if (index >= kAtomCandidateOffset) {
    choice.begin = grid_position_of_slot(slot_at(index - kAtomCandidateOffset)) - 1;
    choice.end = choice.begin + 1;
    return choice;
  }
  choice.begin = index == 0 ? 0 : grid_position_of_slot(slot_at(index - 1));
  if (index == n) {
    choice.end = grid_size;
  } else {
    const std::uint64_t end_slot = slot_at(index);
    choice.end = grid_position_of_slot(end_slot) - (slot_is_point(end_slot) ? 1 : 0);
  }
  return choice;
}

// Beyond this many ranks (plus 128 noise scales) from the target, no interval's utility bound plus
// its group's noise bound reaches the best score near the target, but with negligible probability.
constexpr std::uint64_t kWindowHalfWidth = std::uint64_t{1} << 12;

// Stage 1 over host positions in input order, exactly as over sorted ones: the order statistics
// around the target give the intervals near it their exact utilities; every other interval is
// screened with the bound of its utility against the best score near the target. If an interval
// far away could still reach it, nothing is decided here (nullopt) and the caller sorts.
std::optional<IntervalChoice> choose_interval_unsorted(const SingleQuantilePlan& plan, const NoiseSpec& spec,
                                                       std::span<const std::uint64_t> positions,
                                                       std::uint64_t grid_size) {
  const std::uint64_t n = positions.size();
  const double reach = std::ceil(128.0 / plan.score_scale) + static_cast<double>(kWindowHalfWidth);
  const auto half_width = reach >= static_cast<double>(n) ? n : static_cast<std::uint64_t>(reach);
  const auto target_rank = static_cast<std::uint64_t>(std::clamp(plan.target, 0.0, static_cast<double>(n)));
  const std::uint64_t lead_begin = target_rank > half_width ? target_rank - half_width : 0;
  const std::uint64_t lead_end = std::min(n + 1, target_rank + half_width + 1);
  const std::uint64_t first_rank = lead_begin == 0 ? 0 : lead_begin - 1;
  const std::uint64_t last_rank = std::min(lead_end, n);
  const std::vector<std::uint64_t> ends = order_statistics(positions, first_rank, last_rank);
  const WindowIntervalUtilities window{ends, first_rank, n, grid_size, plan.target, plan.score_scale};
  IntervalChoice choice;
  choice.result = cpu_evaluate_generated(spec, IndexRange{lead_begin, lead_end}, &WindowIntervalUtilities::fill, &window);
  const double largest_log_length = div_rn(portable_log(u64_to_double_rn(grid_size)), plan.score_scale);
  const BoundedIntervalUtilities bound{plan.target, std::nextafter(largest_log_length * (1.0 + 0x1p-40), INFINITY)};
  const double known_score = choice.result.best_score;
  for (const IndexRange far : {IndexRange{0, lead_begin}, IndexRange{lead_end, n + 1}}) {
    if (far.begin == far.end) continue;
    const ShardResult screened =
        cpu_evaluate_generated(spec, far, &BoundedIntervalUtilities::fill, &bound, known_score);
    if (screened.best_index != kNoIndex) return std::nullopt;  // a far interval might win: sort
    choice.result = merge(choice.result, screened);
  }
  choice.begin = window.begin(choice.result.best_index);
  choice.end = window.end(choice.result.best_index);
  return choice;
}

IntervalChoice choose_interval_sorted(const SingleQuantilePlan& plan, const NoiseSpec& spec,
                                      std::span<const std::uint64_t> sorted, std::uint64_t grid_size,
                                      bool has_atoms) {
  QuantileIntervalUtilities utilities{DataIntervals{sorted, grid_size}, plan.target, plan.score_scale};
  utilities.has_atoms = has_atoms;
  return choice_of(score_quantile_intervals_cpu(utilities, spec), sorted.size(), grid_size,
                   [&](std::uint64_t i) { return sorted[i]; });
}

// The grid points of stage 1's winner, its one or two slots read from where the data are.
IntervalChoice choice_read_from(const ShardResult& result, const QuantileData::Storage& storage) {
  const std::uint64_t n = storage.count;
  const std::uint64_t index = result.best_index;
  if (index == kNoIndex) return choice_of(result, n, storage.grid.size, [](std::uint64_t) { return std::uint64_t{0}; });
  const std::uint64_t rank = index >= kAtomCandidateOffset ? index - kAtomCandidateOffset : index;
  const std::uint64_t first = index >= kAtomCandidateOffset || rank == 0 ? rank : rank - 1;
  const std::uint64_t last = std::min(rank, n - 1);  // interval n reads slot n - 1 alone
  const std::vector<std::uint64_t> slots = gpu_read_quantile_positions(storage, first, last - first + 1);
  return choice_of(result, n, storage.grid.size, [&](std::uint64_t i) { return slots[i - first]; });
}

// Stage 1 on the GPU: the intervals there; the atoms there too for device data, on the CPU for host
// data (the same noise, by candidate index, either way).
IntervalChoice choose_interval_gpu(const SingleQuantilePlan& plan, const NoiseSpec& spec,
                                   const QuantileData::Storage& storage, IndexRange intervals, IndexRange atoms) {
  ShardResult result = gpu_score_quantile_intervals(plan, spec, storage, intervals);
  if (atoms.begin < atoms.end) {
    if (storage.on_device()) {
      result = merge(result, gpu_score_quantile_atoms(plan, spec, storage, atoms, result.best_score));
    } else {
      const QuantileIntervalUtilities utilities{DataIntervals{storage.sorted_host_positions(), storage.grid.size},
                                                plan.target, plan.score_scale};
      result = merge(result, cpu_evaluate_generated(spec, atoms, &QuantileIntervalUtilities::fill_atoms, &utilities,
                                                    result.best_score));
    }
  }
  return choice_read_from(result, storage);
}

// Permute-and-flip's stage 1 over every run (permute_and_flip.cpp): on the GPU for device data
// or Backend::Gpu, else over the sorted host slots.
IntervalChoice choose_run_permute_and_flip(const SingleQuantilePlan& plan, const NoiseSpec& spec,
                                           const QuantileData::Storage& storage, bool has_atoms) {
  if (plan.selection.backend == Backend::Gpu) {
    return choice_read_from(gpu_permute_and_flip_quantile_runs(plan, spec, storage, has_atoms), storage);
  }
  const std::span<const std::uint64_t> sorted = storage.sorted_host_positions();
  QuantileIntervalUtilities utilities{DataIntervals{sorted, storage.grid.size}, plan.target, plan.score_scale};
  utilities.has_atoms = has_atoms;
  return choice_of(permute_and_flip_quantile_runs_cpu(utilities, spec), sorted.size(), storage.grid.size,
                   [&](std::uint64_t i) { return sorted[i]; });
}

}  // namespace

QuantileRelease finish_single_quantile(Release& release, const SingleQuantilePlan& plan,
                                       const QuantileData::Storage& storage) {
  const std::uint64_t n = storage.count;
  const IndexRange intervals{0, n + 1};
  // Atoms only where a value sits on a grid point: otherwise each would be -inf, and leaving them
  // out changes nothing but the work.
  const IndexRange atoms = storage.has_values_on_points ? IndexRange{kAtomCandidateOffset, kAtomCandidateOffset + n}
                                                        : IndexRange{kAtomCandidateOffset, kAtomCandidateOffset};
  ReleaseAccess::claim(release, intervals);
  if (atoms.begin < atoms.end) ReleaseAccess::claim(release, atoms);
  const NoiseSpec spec = ReleaseAccess::noise_spec(release);
  const std::uint64_t grid_size = storage.grid.size;
  IntervalChoice choice;
  if (plan.selection.mechanism == Mechanism::permute_and_flip) {
    choice = choose_run_permute_and_flip(plan, spec, storage, atoms.begin < atoms.end);
  } else if (plan.selection.backend == Backend::Gpu) {
    choice = choose_interval_gpu(plan, spec, storage, intervals, atoms);
  } else if (storage.has_values_on_points) {
    choice = choose_interval_sorted(plan, spec, storage.sorted_host_positions(), grid_size, true);
  } else {
    std::optional<IntervalChoice> unsorted = storage.read_host_positions(
        [&](std::span<const std::uint64_t> positions, bool sorted) -> std::optional<IntervalChoice> {
          if (sorted) return choose_interval_sorted(plan, spec, positions, grid_size, false);
          return choose_interval_unsorted(plan, spec, positions, grid_size);
        });
    choice = unsorted ? *unsorted
                      : choose_interval_sorted(plan, spec, storage.sorted_host_positions(), grid_size, false);
  }
  // One stamp per claimed range: the coverages add up (the empty result adds no candidates).
  ShardResult stamped = ReleaseAccess::stamped(release, intervals, choice.result);
  if (atoms.begin < atoms.end) stamped = merge(stamped, ReleaseAccess::stamped(release, atoms, ShardResult{}));
  Selection chosen = release.finish(stamped);
  const std::uint64_t index = uniform_grid_point(spec, choice.begin, choice.end);
  chosen.report.candidates = grid_size;
  chosen.report.slack = plan.slack;
  return QuantileRelease{storage.grid.point(index), index, chosen.report};
}

}  // namespace dpselect::detail

namespace dpselect {

QuantileRelease select_quantile(Context& context, const QuantileData& data, double q, const QuantileParams& params) {
  const detail::SingleQuantilePlan plan = detail::plan_single_quantile(params, data, q);
  Release release = context.begin_release(plan.selection);
  return detail::finish_single_quantile(release, plan, data.storage());
}

}  // namespace dpselect
