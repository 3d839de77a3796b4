// SPDX-License-Identifier: Apache-2.0
// Permute-and-flip for quantiles on a resolution grid, stage 1 on the CPU: the noisy maximum over
// the runs of equal utility (an interval's points other than its atom, and each atom), each run's
// noise the largest of its points' exponential noises (quantiles_internal.hpp,
// permute_and_flip_run_score). The GPU pass (kernels/quantiles.cu) computes every run's score
// with the same functions; this pass skips the groups that cannot win, which changes nothing.
//
// Privacy: permute-and-flip with utility u(t) = -dist(q n, [#{x_i < t}, #{x_i <= t}]) of
// sensitivity Delta (single_quantile.cpp) is eps-DP at c = eps / (2 Delta) (McKenna & Sheldon 2020,
// Thm 1), and it is report-noisy-max with Exp(2 Delta / eps) noise (Ding et al. 2021), which this
// draws exactly per run (quantiles_internal.hpp). Floating-point slack: single_quantile.cpp.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "quantiles/quantiles_internal.hpp"

namespace dpselect::detail {
namespace {

struct Run {
  double utility = -INFINITY;
  std::uint64_t points = 0;  // 0: no grid point (an empty interval, or no atom there)
};

Run interval_run(const QuantileIntervalUtilities& utilities, std::uint64_t rank) {
  return Run{quantile_rank_utility(rank, utilities.target), utilities.intervals.length_without_atom(rank)};
}

Run atom_run(const QuantileIntervalUtilities& utilities, std::uint64_t rank) {
  if (!utilities.intervals.ends_with_atom(rank)) return Run{};
  return Run{quantile_atom_utility(rank, utilities.intervals.atom_ties(rank), utilities.target), 1};
}

// The runs of ranks [begin, end) of one kind, run `rank` at candidate index base + rank, a group of
// 32 candidate indices at a time: each group's noise bound against the best score so far first,
// its race drawn only if it might reach it.
template <class RunAt>
void score_runs(const QuantileIntervalUtilities& utilities, const NoiseSpec& spec, std::uint64_t base,
                std::uint64_t begin, std::uint64_t end, RunAt run_at, ShardResult& result) {
  Run runs[kCandidatesPerGroup];
  for (std::uint64_t rank = begin; rank < end;) {
    const std::uint64_t group = (base + rank) / kCandidatesPerGroup;
    const std::uint64_t group_end = std::min(end, (group + 1) * kCandidatesPerGroup - base);
    double best_utility = -INFINITY;
    std::uint64_t largest_points = 0;
    for (std::uint64_t r = rank; r < group_end; ++r) {
      const Run run = run_at(utilities, r);
      runs[r - rank] = run;
      if (run.points == 0) continue;
      best_utility = std::max(best_utility, run.utility);
      largest_points = std::max(largest_points, run.points);
    }
    // fma_rn is monotone in both terms, so no run of the group scores above this.
    const bool might_win =
        largest_points > 0 &&
        fma_rn(spec.score_scale, best_utility,
               permute_and_flip_group_noise_bound(group_screen(spec, group), largest_points)) >= result.best_score;
    for (std::uint64_t r = rank; r < group_end; ++r) {
      const Run& run = runs[r - rank];
      if (run.points == 0) {
        ++result.candidates;
      } else {
        const std::uint64_t index = base + r;
        offer_run(result, index, run.utility,
                  might_win ? permute_and_flip_run_score(spec, index, run.utility, run.points) : -INFINITY);
      }
    }
    rank = group_end;
  }
}

}  // namespace

ShardResult permute_and_flip_quantile_runs_cpu(const QuantileIntervalUtilities& utilities, const NoiseSpec& spec) {
  // As for the exponential mechanism (score_quantile_intervals_cpu): the runs around the target
  // rank first, whose best score then screens nearly every other group.
  const std::uint64_t n = utilities.intervals.positions.size();
  const auto target_rank = static_cast<std::uint64_t>(std::clamp(utilities.target, 0.0, static_cast<double>(n)));
  constexpr std::uint64_t kLeadHalfWidth = std::uint64_t{1} << 12;
  const std::uint64_t lead_begin = target_rank > kLeadHalfWidth ? target_rank - kLeadHalfWidth : 0;
  const std::uint64_t lead_end = std::min(n + 1, target_rank + kLeadHalfWidth + 1);
  const std::uint64_t interval_base = utilities.first_index;
  const std::uint64_t atom_base = kAtomCandidateOffset + utilities.first_index;
  const std::uint64_t atoms_end = utilities.has_atoms ? n : 0;
  ShardResult result;
  result.executed_on = ExecutedOn::cpu;
  score_runs(utilities, spec, interval_base, lead_begin, lead_end, interval_run, result);
  score_runs(utilities, spec, atom_base, std::min(lead_begin, atoms_end), std::min(lead_end, atoms_end), atom_run,
             result);
  score_runs(utilities, spec, interval_base, 0, lead_begin, interval_run, result);
  score_runs(utilities, spec, interval_base, lead_end, n + 1, interval_run, result);
  score_runs(utilities, spec, atom_base, 0, std::min(lead_begin, atoms_end), atom_run, result);
  score_runs(utilities, spec, atom_base, std::min(lead_end, atoms_end), atoms_end, atom_run, result);
  return result;
}

}  // namespace dpselect::detail
