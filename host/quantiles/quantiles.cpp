// SPDX-License-Identifier: Apache-2.0
// Several quantiles at once (select_quantiles): the dispatcher, recursive splitting, independent
// releases, the accuracy calculators and the NOT PRIVATE diagnostics. JointExp: joint_exponential.cpp.
//
// Every method charges its whole release once, after every check, then draws one stream. Within a
// stream the exponential mechanisms of one release use disjoint candidate ranges, each starting
// on a group boundary (noise_positions.hpp: kCandidatesPerGroup), and disjoint stage-2 draws, so their noise
// is independent.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "dpselect/accounting.hpp"
#include "dpselect/detail/noise_positions.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/noise.hpp"
#include "selection/cpu_backend.hpp"
#include "validation/validation.hpp"
#include "quantiles/gpu.hpp"
#include "quantiles/quantiles_internal.hpp"

namespace dpselect {
namespace {

std::uint64_t group_aligned(std::uint64_t index) {
  const std::uint64_t group = detail::kCandidatesPerGroup;
  return (index + group - 1) / group * group;
}

// ceil(log2(m + 1)): the depth of recursive splitting's tree, the number of its releases that any
// one record takes part in (Kaplan, Schnapp & Stemmer 2022, Sec. 3).
std::uint64_t recursion_levels(std::uint64_t m) {
  std::uint64_t levels = 0;
  while ((std::uint64_t{1} << levels) < m + 1) ++levels;
  return levels;
}

// The epsilon of each exponential mechanism of recursive splitting: the budget over the levels,
// and over both changed nodes of a level when a record is replaced (a replacement is a removal
// and an addition: Dwork & Roth 2014, Thm 2.2, group privacy for 2).
std::uint64_t recursive_mechanisms_per_record(RecordNeighbours neighbours, std::uint64_t m) {
  const std::uint64_t levels = recursion_levels(m);
  return neighbours == RecordNeighbours::replace_one_record ? 2 * levels : levels;
}

struct Node {
  std::uint64_t grid_begin;  // the node's window [grid_begin, grid_end) of the grid
  std::uint64_t grid_end;
  std::span<const std::uint64_t> positions;  // its values' sorted slots
  std::size_t first_level;                   // its levels qs[first_level, last_level)
  std::size_t last_level;
  double level_begin;  // the quantile levels of the window's ends in the parent's scale
  double level_end;
};

// Recursive splitting (Kaplan, Schnapp & Stemmer 2022, Alg. 1): the middle level first, on all the
// data, with the add/remove single-quantile mechanism (the node's count is private); the values
// below and at-or-above the released point then go to the two halves with their levels rescaled.
class RecursiveSplitting {
 public:
  RecursiveSplitting(std::span<const double> qs, double epsilon_each, const detail::NoiseSpec& spec, std::uint64_t grid_size)
      : qs_(qs), epsilon_each_(epsilon_each), spec_(spec), grid_size_(grid_size), chosen_(qs.size()) {}
  // spec.mechanism picks each node's mechanism: exponential or permute_and_flip.

  std::vector<std::uint64_t> run(std::span<const std::uint64_t> positions) {
    split(Node{0, grid_size_, positions, 0, qs_.size(), 0.0, 1.0});
    return chosen_;
  }

  double total_delta() const { return total_delta_; }

 private:
  void split(const Node& node) {
    if (node.first_level >= node.last_level) return;
    const std::size_t middle = node.first_level + (node.last_level - node.first_level) / 2;
    // The middle level within the node: its share of the node's values.
    const double width = node.level_end - node.level_begin;
    const double q = std::clamp((qs_[middle] - node.level_begin) / width, 0.0, 1.0);
    const double sensitivity = detail::quantile_sensitivity(RecordNeighbours::add_or_remove_record, q);
    // Exponential mechanism at scale eps / (2 Delta) (Dwork & Roth 2014, Thm 3.10); permute-and-flip
    // at the same c (McKenna & Sheldon 2020, Thm 1).
    detail::NoiseSpec spec = spec_;
    spec.score_scale = epsilon_each_ / (2.0 * sensitivity);
    spec.utility_limit = std::numeric_limits<double>::infinity();
    const std::uint64_t n = node.positions.size();
    const detail::DataIntervals intervals{node.positions, node.grid_end, node.grid_begin};
    // Intervals at [first, first + n + 1), atoms at kAtomCandidateOffset + [first, first + n):
    // group-aligned starts, so no two nodes share a group's noise.
    const detail::QuantileIntervalUtilities utilities{intervals, q * static_cast<double>(n), spec.score_scale,
                                                      next_index_};
    const IndexRange range = utilities.interval_candidates();
    next_index_ = group_aligned(range.end);
    const ShardResult result = spec.mechanism == Mechanism::permute_and_flip
                                   ? detail::permute_and_flip_quantile_runs_cpu(utilities, spec)
                                   : detail::score_quantile_intervals_cpu(utilities, spec);
    std::uint64_t begin = 0;
    std::uint64_t end = 0;
    if (result.best_index >= detail::kAtomCandidateOffset) {  // the atom of interval r: one point
      const std::uint64_t r = result.best_index - detail::kAtomCandidateOffset - range.begin;
      begin = intervals.end(r) - 1;
      end = begin + 1;
    } else {
      const std::uint64_t r = result.best_index - range.begin;
      begin = intervals.begin(r);
      end = begin + intervals.length_without_atom(r);
    }
    const std::uint64_t point = detail::uniform_grid_point(spec, begin, end, draws_++);
    chosen_[middle] = point;
    const FloatingPointSlack slack = detail::quantile_interval_slack(
        epsilon_each_, spec.score_scale, static_cast<double>(n), node.grid_end - node.grid_begin, 2 * n + 1);
    total_delta_ += slack.delta;
    // Values below point(point) have slots <= 2 point (QuantileGrid::slot).
    const auto split_at = std::upper_bound(node.positions.begin(), node.positions.end(), 2 * point);
    const auto below = static_cast<std::size_t>(split_at - node.positions.begin());
    split(Node{node.grid_begin, point + 1, node.positions.first(below), node.first_level, middle, node.level_begin,
               qs_[middle]});
    split(Node{point, node.grid_end, node.positions.subspan(below), middle + 1, node.last_level, qs_[middle],
               node.level_end});
  }

  std::span<const double> qs_;
  double epsilon_each_;
  detail::NoiseSpec spec_;
  std::uint64_t grid_size_;
  std::vector<std::uint64_t> chosen_;
  std::uint64_t next_index_ = 0;
  std::uint64_t draws_ = 0;
  double total_delta_ = 0.0;
};

// The sorted slots on the host: a view of host data (sorted on first need), a copy of device data.
struct HostPositions {
  explicit HostPositions(const QuantileData& data)
      : copied(data.on_device() ? detail::gpu_read_quantile_positions(data.storage(), 0, data.size())
                                : std::vector<std::uint64_t>{}),
        sorted(data.on_device() ? std::span<const std::uint64_t>(copied) : data.storage().sorted_host_positions()) {}
  std::vector<std::uint64_t> copied;
  std::span<const std::uint64_t> sorted;
};

// (2 Delta / eps) (ln M + ln(1 / beta)): Dwork & Roth 2014, Thm 3.11 for one exponential
// mechanism over M grid points (the best interval holds at least one). The same for
// permute-and-flip, as report-noisy-max with Exp(1) noise at c = eps / (2 Delta): a point more than
// alpha below the best wins only if its noise exceeds c alpha (the best point's noise is >= 0), and
// a union bound over the M points gives M e^{-c alpha} = beta.
double single_alpha(double sensitivity, double epsilon, std::uint64_t grid_size, double beta) {
  return 2.0 * sensitivity / epsilon * (std::log(static_cast<double>(grid_size)) - std::log(beta));
}

void validate_beta(double beta) {
  if (!(beta > 0.0 && beta < 1.0)) detail::throw_invalid("beta", "in (0, 1)", beta);
}

void validate_method(const QuantilesParams& params) {
  switch (params.method) {
    case QuantilesMethod::independent_zcdp:
      if (!(params.delta > 0.0 && params.delta < 1.0)) {
        detail::throw_invalid("delta", "in (0, 1) for the zcdp method", params.delta);
      }
      return;
    case QuantilesMethod::joint_exponential:
    case QuantilesMethod::recursive_splitting:
    case QuantilesMethod::independent_basic:
      if (params.delta != 0.0) {
        detail::throw_invalid("delta", "0 except for the zcdp method (this method is pure DP)", params.delta);
      }
      return;
  }
  throw InvalidArgument("dpselect: method must be joint, recursive, basic or zcdp (got " +
                        std::to_string(static_cast<int>(params.method)) + ")");
}

// Permute-and-flip runs where the method releases single quantiles (basic, recursive). JointExp is
// one exponential mechanism over sorted tuples, sampled through its tables, with no noisy-max form;
// zcdp composes exponential mechanisms by their eps^2/8 (bounded range), which permute-and-flip
// does not have.
void validate_method_mechanism(const QuantilesParams& params) {
  if (params.base.mechanism != Mechanism::permute_and_flip) return;
  if (params.method == QuantilesMethod::joint_exponential || params.method == QuantilesMethod::independent_zcdp) {
    throw InvalidArgument(std::string("dpselect: mechanism permute_and_flip applies to the recursive and basic methods "
                                      "(got method ") +
                          std::string(to_string(params.method)) + ")");
  }
}

// The epsilon of each of the m independent releases.
double independent_epsilon(const QuantilesParams& params, std::uint64_t m) {
  if (params.method == QuantilesMethod::independent_basic) {
    // Basic composition: m releases of eps / m (Dwork & Roth 2014, Thm 3.16).
    return split_evenly(params.base.epsilon, m);
  }
  // The largest epsilon whose m exponential mechanisms (each eps^2/8-zCDP, Cesar & Rogers 2021)
  // the accountant's best theorem keeps within (epsilon, delta).
  return per_release_epsilon(m, params.base.epsilon, params.delta, ReleaseKind::exponential_mechanism);
}

}  // namespace

std::string_view to_string(QuantilesMethod method) {
  switch (method) {
    case QuantilesMethod::joint_exponential:
      return "joint";
    case QuantilesMethod::recursive_splitting:
      return "recursive";
    case QuantilesMethod::independent_basic:
      return "basic";
    case QuantilesMethod::independent_zcdp:
      return "zcdp";
  }
  return "unknown";
}

QuantilesRelease select_quantiles(Context& context, const QuantileData& data, std::span<const double> qs,
                                  const QuantilesParams& params) {
  detail::validate_quantile_levels(qs);
  validate_method(params);
  detail::validate_quantile_params(params.base, data);
  validate_method_mechanism(params);
  const auto m = static_cast<std::uint64_t>(qs.size());
  const ReleaseKind kind = release_kind(params.base.mechanism);
  const QuantileGrid grid = data.grid();
  QuantilesRelease release;
  release.method = params.method;
  release.epsilon_spent = params.base.epsilon;

  if (params.method == QuantilesMethod::joint_exponential) {
    const detail::JointExponentialPlan plan = detail::plan_joint_exponential(params, data, qs);
    const PrivacyCharge charge{ReleaseKind::exponential_mechanism, params.base.epsilon, 0.0, 1};
    detail::ContextAccess::charge(context, std::span(&charge, 1));
    const auto stream = detail::ContextAccess::draw_stream(context);
    const HostPositions host(data);
    const std::span<const std::uint64_t> positions = host.sorted;
    release.grid_indices = detail::sample_joint_exponential(plan, positions, grid.size, stream.key, stream.stream);
    release.epsilon_per_mechanism = params.base.epsilon;
    release.mechanisms = 1;
    release.slack = plan.slack;
    release.streams = {stream.stream};
  } else if (params.method == QuantilesMethod::recursive_splitting) {
    const std::uint64_t per_record = recursive_mechanisms_per_record(params.base.neighbours, m);
    // Each record reaches one node per level, so the levels compose (Kaplan, Schnapp & Stemmer
    // 2022, Sec. 3; basic composition, Dwork & Roth 2014, Thm 3.16) and the nodes of a level in
    // parallel (McSherry 2009, Thm 4).
    const double epsilon_each = split_evenly(params.base.epsilon, per_record);
    // Each node's slack is checked against its own epsilon before any charge: the worst node is
    // the whole data at the public bound on its count.
    const std::uint64_t count_bound = params.base.max_points != 0 ? params.base.max_points : data.size();
    const double largest_scale = epsilon_each / (2.0 * 0.5);
    const FloatingPointSlack worst = detail::quantile_interval_slack(epsilon_each, largest_scale,
                                                                     static_cast<double>(count_bound), grid.size,
                                                                     2 * count_bound + 1);
    if (!(worst.epsilon < epsilon_each)) detail::throw_epsilon_too_small_for_slack();
    const PrivacyCharge charge{kind, epsilon_each, 0.0, per_record};
    detail::ContextAccess::charge(context, std::span(&charge, 1));
    const auto stream = detail::ContextAccess::draw_stream(context);
    const HostPositions host(data);
    const std::span<const std::uint64_t> positions = host.sorted;
    const detail::NoiseSpec spec{params.base.mechanism, 1.0, stream.key, stream.stream,
                                 std::numeric_limits<double>::infinity()};
    RecursiveSplitting splitting(qs, epsilon_each, spec, grid.size);
    release.grid_indices = splitting.run(positions);
    release.epsilon_per_mechanism = epsilon_each;
    release.mechanisms = m;
    // Along any record's path the slack adds up over its per_record mechanisms, each at most the
    // worst node's; the deltas of all nodes add up.
    release.slack.epsilon = static_cast<double>(per_record) * worst.epsilon * (1.0 + 0x1p-40);
    release.slack.delta = splitting.total_delta();
    release.slack.depends_on_data =
        params.base.neighbours == RecordNeighbours::add_or_remove_record && params.base.max_points == 0;
    release.streams = {stream.stream};
  } else {
    const double epsilon_each = independent_epsilon(params, m);
    QuantileParams single = params.base;
    single.epsilon = epsilon_each;
    std::vector<detail::SingleQuantilePlan> plans;
    plans.reserve(qs.size());
    for (const double q : qs) plans.push_back(detail::plan_single_quantile(single, data, q));
    const PrivacyCharge charge{kind, epsilon_each, 0.0, m};
    detail::ContextAccess::charge(context, std::span(&charge, 1));
    for (const detail::SingleQuantilePlan& plan : plans) {
      Release each = detail::ContextAccess::begin_charged_release(context, plan.selection);
      const QuantileRelease chosen = detail::finish_single_quantile(each, plan, data.storage());
      release.grid_indices.push_back(chosen.grid_index);
      release.streams.push_back(chosen.report.stream);
      release.slack.epsilon += plan.slack.epsilon;
      release.slack.delta += plan.slack.delta;
      release.slack.depends_on_data = plan.slack.depends_on_data;
    }
    release.epsilon_per_mechanism = epsilon_each;
    release.mechanisms = m;
    release.delta_spent = params.method == QuantilesMethod::independent_zcdp ? params.delta : 0.0;
  }
  // Independent releases need not come out ordered; the released set is the same sorted.
  std::sort(release.grid_indices.begin(), release.grid_indices.end());
  for (const std::uint64_t index : release.grid_indices) release.values.push_back(grid.point(index));
  return release;
}

double quantile_rank_error_bound(const QuantileParams& params, double q, double beta) {
  detail::validate_quantile_level(q);
  params.range.validate();
  detail::validate_quantile_mechanism(params.mechanism, params.range);
  detail::validate_positive_finite("epsilon", params.epsilon);
  validate_beta(beta);
  return single_alpha(detail::quantile_sensitivity(params.neighbours, q), params.epsilon, params.range.grid().size,
                      beta);
}

double quantiles_rank_error_bound(const QuantilesParams& params, std::span<const double> qs, double beta) {
  detail::validate_quantile_levels(qs);
  validate_method(params);
  params.base.range.validate();
  detail::validate_quantile_mechanism(params.base.mechanism, params.base.range);
  validate_method_mechanism(params);
  detail::validate_positive_finite("epsilon", params.base.epsilon);
  validate_beta(beta);
  const auto m = static_cast<std::uint64_t>(qs.size());
  const std::uint64_t grid_size = params.base.range.grid().size;
  const double beta_each = beta / static_cast<double>(m);  // a union bound over the m releases
  switch (params.method) {
    case QuantilesMethod::joint_exponential:
      return detail::joint_exponential_rank_error_bound(params.base.epsilon, m, grid_size, beta);
    case QuantilesMethod::recursive_splitting: {
      // A node's error shifts its children's targets by at most as much (the rescaled level times
      // the error in its count), so errors add up along the depth of the tree.
      const double epsilon_each =
          split_evenly(params.base.epsilon, recursive_mechanisms_per_record(params.base.neighbours, m));
      return static_cast<double>(recursion_levels(m)) * single_alpha(1.0, epsilon_each, grid_size, beta_each);
    }
    case QuantilesMethod::independent_basic:
    case QuantilesMethod::independent_zcdp: {
      const double epsilon_each = independent_epsilon(params, m);
      double alpha = 0.0;
      for (const double q : qs) {
        alpha = std::max(alpha, single_alpha(detail::quantile_sensitivity(params.base.neighbours, q), epsilon_each,
                                             grid_size, beta_each));
      }
      return alpha;
    }
  }
  return std::numeric_limits<double>::infinity();
}

double nonprivate_rank_error(const QuantileData& data, std::uint64_t grid_index, double q) {
  detail::validate_quantile_level(q);
  if (grid_index >= data.grid().size) {
    throw InvalidArgument("dpselect: grid_index must be below the grid size, " + std::to_string(data.grid().size) +
                          " (got " + std::to_string(grid_index) + ")");
  }
  const HostPositions host(data);
  const std::span<const std::uint64_t> slots = host.sorted;
  // #{x_i < t} = #{slot_i <= 2 j}, #{x_i <= t} = #{slot_i <= 2 j + 1} (QuantileGrid::slot).
  const auto below = static_cast<std::uint64_t>(std::upper_bound(slots.begin(), slots.end(), 2 * grid_index) -
                                                slots.begin());
  const auto at_or_below = static_cast<std::uint64_t>(
      std::upper_bound(slots.begin(), slots.end(), 2 * grid_index + 1) - slots.begin());
  return std::fabs(detail::quantile_atom_utility(below, at_or_below - below, q * static_cast<double>(data.size())));
}

QuantileDiagnostics nonprivate_quantile_diagnostics(const QuantileData& data, double q) {
  detail::validate_quantile_level(q);
  const HostPositions host(data);
  const detail::DataIntervals intervals{host.sorted, data.grid().size};
  const double target = q * static_cast<double>(data.size());
  QuantileDiagnostics best{0, std::numeric_limits<double>::infinity()};
  // In grid order (each interval's points, then its atom), so that ties keep the smallest index.
  for (std::uint64_t r = 0; r < intervals.count(); ++r) {
    if (intervals.length_without_atom(r) > 0) {
      const double error = std::fabs(static_cast<double>(r) - target);
      if (error < best.best_rank_error) best = QuantileDiagnostics{intervals.begin(r), error};
    }
    if (intervals.ends_with_atom(r)) {
      const double error = std::fabs(detail::quantile_atom_utility(r, intervals.atom_ties(r), target));
      if (error < best.best_rank_error) best = QuantileDiagnostics{intervals.end(r) - 1, error};
    }
  }
  return best;
}

}  // namespace dpselect
