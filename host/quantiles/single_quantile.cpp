// SPDX-License-Identifier: Apache-2.0
// One private quantile: the exponential mechanism over the grid of a public range, sampled by data
// intervals (quantiles.hpp).
//
// Floating-point slack (quantile_interval_slack). The exact mechanism: EM over grid indices j with
// weights exp(c~ u(j)), u(j) = -|c(j) - q n|, c~ the rounded score scale; it is eps~-DP with
// eps~ <= eps (1 + 2^-52). Stage 1 picks interval r (length L, rank r) by Gumbel-max over the
// computed score fma(c~, w_r, G~_r), w_r = -|r - fl(q n)| + log~(L) / c~ (quantile_interval_utility).
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
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "dpselect/detail/noise_positions.hpp"
#include "dpselect/errors.hpp"
#include "engine/cpu_backend.hpp"
#include "engine/floating_point_slack.hpp"
#include "engine/validation.hpp"
#include "noise/truncated_geometric.hpp"
#include "quantiles/quantiles_internal.hpp"

namespace dpselect::detail {

void QuantileIntervalUtilities::fill(const void* self, std::uint64_t first, std::uint64_t count, double* out) {
  const auto& utilities = *static_cast<const QuantileIntervalUtilities*>(self);
  const DataIntervals& intervals = utilities.intervals;
  for (std::uint64_t k = 0; k < count; ++k) {
    const std::uint64_t r = first + k - utilities.first_index;
    out[k] = quantile_interval_utility(r, intervals.length(r), utilities.target, utilities.score_scale);
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
  if (params.range.lower != data.range().lower || params.range.upper != data.range().upper) {
    throw InvalidArgument("dpselect: range must be the range the data were prepared for, [" +
                          format_value(data.range().lower) + ", " + format_value(data.range().upper) + "] (got [" +
                          format_value(params.range.lower) + ", " + format_value(params.range.upper) + "])");
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
  if (params.backend == Backend::Gpu) resolve_backend(Backend::Gpu);
}

SingleQuantilePlan plan_single_quantile(const QuantileParams& params, const QuantileData& data, double q) {
  validate_quantile_level(q);
  validate_quantile_params(params, data);
  SingleQuantilePlan plan;
  plan.selection.mechanism = Mechanism::exponential;
  plan.selection.epsilon = params.epsilon;
  plan.selection.sensitivity = quantile_sensitivity(params.neighbours, q);
  plan.selection.monotone = false;  // a point's utility rises or falls with the added record's side
  plan.selection.backend = data.on_device() ? Backend::Gpu : (params.backend == Backend::Gpu ? Backend::Gpu : Backend::Cpu);
  // Exponential mechanism at scale eps / (2 Delta) (McSherry & Talwar 2007; Dwork & Roth 2014, Thm 3.10).
  plan.score_scale = score_scale(plan.selection);
  const std::uint64_t n = data.size();
  plan.target = q * static_cast<double>(n);
  const QuantileGrid grid = data.grid();
  // Under replacement n is public; under addition or removal only max_points is.
  const bool count_is_public = params.neighbours == RecordNeighbours::replace_one_record || params.max_points != 0;
  const std::uint64_t count_bound = params.max_points != 0 ? params.max_points : n;
  plan.slack = quantile_interval_slack(params.epsilon, plan.score_scale, static_cast<double>(count_bound), grid.size,
                                       count_bound + 1);
  plan.slack.depends_on_data = !count_is_public;
  if (!(plan.slack.epsilon < params.epsilon)) throw_epsilon_too_small_for_slack();
  // |utility| <= |r - q n| + ln(M) / scale <= n + ln(M) / scale: a public bound when n is.
  if (count_is_public) {
    plan.selection.utility_bound = static_cast<double>(count_bound) +
                                   std::log(static_cast<double>(grid.size)) / plan.score_scale * (1.0 + 0x1p-40);
  }
  validate_params(plan.selection);
  return plan;
}

ShardResult score_quantile_intervals_cpu(const SingleQuantilePlan& plan, const NoiseSpec& spec,
                                         std::span<const std::uint64_t> positions, std::uint64_t grid_size) {
  return score_quantile_intervals_cpu(
      QuantileIntervalUtilities{DataIntervals{positions, grid_size}, plan.target, plan.score_scale}, spec);
}

ShardResult score_quantile_intervals_cpu(const QuantileIntervalUtilities& utilities, const NoiseSpec& spec) {
  // Utilities rise towards the target rank and fall after it, so a pass in index order would
  // keep finding new bests (and score every group) until the target. The groups around the
  // target go first; their best score lets the screen skip nearly every other group. The merged
  // result is the one-pass result (cpu_backend.hpp).
  const std::uint64_t first = utilities.first_index;
  const std::uint64_t end = first + utilities.intervals.count();
  const auto target_rank = static_cast<std::uint64_t>(std::clamp(utilities.target, 0.0, static_cast<double>(end - first - 1)));
  constexpr std::uint64_t kLeadHalfWidth = std::uint64_t{1} << 12;
  const std::uint64_t lead_begin = first + (target_rank > kLeadHalfWidth ? target_rank - kLeadHalfWidth : 0);
  const std::uint64_t lead_end = std::min(end, first + target_rank + kLeadHalfWidth + 1);
  const FillUtilities fill = &QuantileIntervalUtilities::fill;
  ShardResult result = cpu_evaluate_generated(spec, IndexRange{lead_begin, lead_end}, fill, &utilities);
  const double known_score = result.best_score;
  if (lead_begin > first) {
    result = merge(result, cpu_evaluate_generated(spec, IndexRange{first, lead_begin}, fill, &utilities, known_score));
  }
  if (lead_end < end) {
    result = merge(result, cpu_evaluate_generated(spec, IndexRange{lead_end, end}, fill, &utilities, known_score));
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

  std::uint64_t begin(std::uint64_t r) const { return r == 0 ? 0 : ends[r - 1 - first_rank]; }
  std::uint64_t end(std::uint64_t r) const { return r == count ? grid_size : ends[r - first_rank]; }
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
  std::uint64_t begin = 0;  // the chosen interval's grid indices
  std::uint64_t end = 0;
};

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
                                      std::span<const std::uint64_t> sorted, std::uint64_t grid_size) {
  IntervalChoice choice;
  choice.result = score_quantile_intervals_cpu(plan, spec, sorted, grid_size);
  const DataIntervals intervals{sorted, grid_size};
  choice.begin = intervals.begin(choice.result.best_index);
  choice.end = intervals.end(choice.result.best_index);
  return choice;
}

}  // namespace

QuantileRelease finish_single_quantile(Release& release, const SingleQuantilePlan& plan,
                                       const QuantileData::Storage& storage) {
  const IndexRange range{0, storage.count + 1};
  ReleaseAccess::claim(release, range);
  const NoiseSpec spec = ReleaseAccess::noise_spec(release);
  const std::uint64_t grid_size = storage.grid.size;
  IntervalChoice choice;
  if (plan.selection.backend == Backend::Gpu) {
    choice.result = gpu_score_quantile_intervals(plan, spec, storage, range);
    const std::uint64_t interval = choice.result.best_index;
    if (interval != kNoIndex) {  // the interval's ends: positions interval - 1 and interval
      const std::uint64_t first = interval == 0 ? 0 : interval - 1;
      const std::uint64_t count = (interval == 0 || interval == storage.count) ? 1 : 2;
      std::vector<std::uint64_t> ends;
      if (storage.on_device()) {
        ends = gpu_read_quantile_positions(storage, first, count);
      } else {
        const std::span<const std::uint64_t> sorted = storage.sorted_host_positions().subspan(first, count);
        ends.assign(sorted.begin(), sorted.end());
      }
      choice.begin = interval > 0 ? ends.front() : 0;
      choice.end = interval < storage.count ? ends.back() : grid_size;
    }
  } else {
    std::optional<IntervalChoice> unsorted = storage.read_host_positions(
        [&](std::span<const std::uint64_t> positions, bool sorted) -> std::optional<IntervalChoice> {
          if (sorted) return choose_interval_sorted(plan, spec, positions, grid_size);
          return choose_interval_unsorted(plan, spec, positions, grid_size);
        });
    choice = unsorted ? *unsorted : choose_interval_sorted(plan, spec, storage.sorted_host_positions(), grid_size);
  }
  Selection chosen = release.finish(ReleaseAccess::stamped(release, range, choice.result));
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
