// SPDX-License-Identifier: Apache-2.0
// Shared by the quantile samplers (single_quantile.cpp, joint_exponential.cpp, quantiles.cpp) and
// the data preparation (quantile_data.cpp, kernels/quantiles.cu). Not public API.
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string_view>
#include <span>
#include <vector>

#include "dpselect/detail/host_device.hpp"
#include "dpselect/detail/noise_spec.hpp"
#include "dpselect/detail/portable_log.hpp"
#include "dpselect/detail/release_access.hpp"
#include "dpselect/detail/screened_scoring.hpp"
#include "dpselect/quantiles.hpp"
#include "dpselect/shard_result.hpp"

namespace dpselect {

// The grid slots (QuantileGrid::slot of each value: its grid position, 2 points_at_or_below, less
// one where the value sits on a point): in host memory, in input order until a release needs them
// sorted; or, for device data, sorted in device memory (a buffer the storage owns and frees; for
// float32 values the sorted values, from which a slot is one QuantileGrid::slot away). The
// "positions" below are these slots.
//
// A single quantile over host data needs only the order statistics around its target rank
// (single_quantile.cpp), so host positions are sorted on first need (JointExp, recursive
// splitting, a fallback, the diagnostics, a GPU pass), once, in place. Readers of the unsorted
// positions hold a shared lock that the sort excludes; once sorted they never change.
struct QuantileData::Storage {
  QuantileRange range;
  QuantileGrid grid;
  std::uint64_t count = 0;
  // Device data, on device_ordinal (null for host data): the count sorted positions (uint64), or,
  // for float32 values, the count sorted values themselves, whose positions the passes compute
  // where they read them (kernels/quantiles.cu).
  std::shared_ptr<void> device_data;
  bool device_data_is_sorted_floats = false;
  int device_ordinal = -1;
  // Whether any value sits on a grid point (an odd slot), so that a single quantile has atoms to
  // score (set by the preparation, on the host or on the device).
  bool has_values_on_points = true;

  bool on_device() const { return device_data != nullptr; }

  // Host data: the positions sorted (sorting them on the first call; thread-safe).
  std::span<const std::uint64_t> sorted_host_positions() const;
  // Host data: runs `read` on the positions in whatever order they are now (sorted or not, and
  // says which), with the sort held off until it returns.
  template <class Read>
  auto read_host_positions(Read read) const {
    std::shared_lock lock(sort_mutex_);
    return read(std::span<const std::uint64_t>(host_positions_), sorted_.load(std::memory_order_acquire));
  }
  // Host data: the positions in input order (set once by the preparation, before sharing).
  void set_host_positions(std::vector<std::uint64_t> positions) { host_positions_ = std::move(positions); }

 private:
  mutable std::vector<std::uint64_t> host_positions_;  // empty for device data
  mutable std::shared_mutex sort_mutex_;
  mutable std::atomic<bool> sorted_{false};
};

}  // namespace dpselect

namespace dpselect::detail {

// Host positions sorted in place, without a second buffer (quantile_data.cpp: what data of 2^27
// values or more are sorted by, where a buffer would double their memory).
void sort_positions_in_place(std::vector<std::uint64_t>& positions);

// Slots (QuantileGrid::slot): 2 k + 1 for a value on grid point k, 2 p for one strictly between
// points p - 1 and p. The grid position of either, points_at_or_below, is (slot + 1) / 2.
DPSELECT_HD DPSELECT_FORCEINLINE std::uint64_t grid_position_of_slot(std::uint64_t slot) { return (slot + 1) >> 1; }
DPSELECT_HD DPSELECT_FORCEINLINE bool slot_is_point(std::uint64_t slot) { return (slot & 1u) != 0; }

// The length of the run of equal elements of `sorted` (size elements) that starts at `first`: an
// exponential search forward, O(log length), so that scoring every atom is O(n) in all.
template <class Sorted>
DPSELECT_HD std::uint64_t tied_run_length(const Sorted& sorted, std::uint64_t first, std::uint64_t size) {
  const std::uint64_t value = sorted[first];
  std::uint64_t known = 1;  // sorted[first .. first + known) all equal value
  std::uint64_t reach = 1;
  while (first + known + reach - 1 < size && sorted[first + known + reach - 1] == value) {
    known += reach;
    reach *= 2;
  }
  // The run ends in [first + known, first + known + reach - 1], which is a different element or size.
  std::uint64_t low = first + known;
  std::uint64_t high = first + known + reach - 1 < size ? first + known + reach - 1 : size;
  while (low < high) {
    const std::uint64_t middle = low + (high - low) / 2;
    if (sorted[middle] == value) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  return low - first;
}

// Atoms (grid points holding values) draw their noise from candidate indices 2^62 + the rank of
// the first value on them (+ the release's first index): disjoint from the intervals' indices
// (below 2^46 for every method) and below the engine's 2^63 limit.
inline constexpr std::uint64_t kAtomCandidateOffset = std::uint64_t{1} << 62;

// The data intervals of sorted slots s_0 <= ... <= s_{n-1} (grid positions g_i = (s_i + 1) / 2)
// over the grid indices [grid_begin, grid_end) (the whole grid, or a window of it for a node of
// recursive splitting; grid_begin <= g_i <= grid_end): interval r in [0, n] holds the grid indices
// j with exactly r values below point(j), [g_{r-1}, g_r) with g_{-1} = grid_begin and g_n =
// grid_end. Empty intervals (ties, or no grid point between two values) have length 0.
//
// A nonempty interval r < n ends with the atom g_r - 1 when value r sits on that point (s_r odd):
// there #{x_i <= t} = r + c (c values tied on it), elsewhere in the interval r. The atom belongs
// to the first value on it, so each atom is counted once.
struct DataIntervals {
  std::span<const std::uint64_t> positions;  // slots
  std::uint64_t grid_end = 0;
  std::uint64_t grid_begin = 0;

  std::uint64_t count() const { return positions.size() + 1; }
  std::uint64_t begin(std::uint64_t r) const {
    return r == 0 ? grid_begin : grid_position_of_slot(positions[r - 1]);
  }
  std::uint64_t end(std::uint64_t r) const {
    return r == positions.size() ? grid_end : grid_position_of_slot(positions[r]);
  }
  // Every grid point of the interval, its atom included (JointExp's cells).
  std::uint64_t length(std::uint64_t r) const { return end(r) - begin(r); }
  // Whether interval r ends with an atom: value r on a point and first on it.
  bool ends_with_atom(std::uint64_t r) const {
    return r < positions.size() && slot_is_point(positions[r]) && length(r) > 0;
  }
  // The grid points of the interval other than its atom: those with #{x_i <= t} = #{x_i < t} = r.
  std::uint64_t length_without_atom(std::uint64_t r) const { return length(r) - (ends_with_atom(r) ? 1 : 0); }
  // The number of values on the atom of interval r (ends_with_atom(r)).
  std::uint64_t atom_ties(std::uint64_t r) const { return tied_run_length(positions.data(), r, positions.size()); }
};

// The single-quantile EM's stage-1 utility of an interval at rank r holding `length` grid points:
// -|r - target| + ln(length) / scale (-inf when empty), in utility units, so that scale times it
// is the interval's log-mass. The same bits on the CPU and the GPU (portable_log, no contraction).
DPSELECT_HD DPSELECT_FORCEINLINE double quantile_interval_utility(std::uint64_t rank, std::uint64_t length,
                                                                  double target, double score_scale) {
  if (length == 0) return -INFINITY;
  const double distance = sub_rn(u64_to_double_rn(rank), target);
  const double log_length = length == 1 ? 0.0 : portable_log(u64_to_double_rn(length));
  return add_rn(-(distance < 0.0 ? -distance : distance), div_rn(log_length, score_scale));
}

// The utility of an atom with `rank` values below it and `ties` on it: minus the distance from the
// target to [rank, rank + ties] (0 inside). rank + ties <= 2^40 is exact in a double.
DPSELECT_HD DPSELECT_FORCEINLINE double quantile_atom_utility(std::uint64_t rank, std::uint64_t ties, double target) {
  const double below = sub_rn(u64_to_double_rn(rank), target);
  if (below > 0.0) return -below;
  const double above = sub_rn(target, u64_to_double_rn(rank + ties));
  return above > 0.0 ? -above : 0.0;
}

// Stage 1's candidates over DataIntervals: interval r at first_index + r (its points other than
// the atom), the atom of interval r at kAtomCandidateOffset + first_index + r (-inf where there is
// none).
struct QuantileIntervalUtilities {
  DataIntervals intervals;
  double target = 0.0;  // q n, rounded once
  double score_scale = 0.0;
  std::uint64_t first_index = 0;  // the candidate index of interval 0
  bool has_atoms = true;           // false: no value sits on a grid point (every atom would be -inf)
  static void fill(const void* self, std::uint64_t first, std::uint64_t count, double* out);
  static void fill_atoms(const void* self, std::uint64_t first, std::uint64_t count, double* out);
  IndexRange interval_candidates() const { return {first_index, first_index + intervals.count()}; }
  IndexRange atom_candidates() const {
    const std::uint64_t begin = kAtomCandidateOffset + first_index;
    return {begin, has_atoms ? begin + intervals.positions.size() : begin};
  }
};

// Permute-and-flip over the grid (McKenna & Sheldon 2020, Alg. 1), drawn as report-noisy-max with
// one-sided exponential noise of scale 2 Delta / eps (Ding et al. 2021: the two are the same
// mechanism): the grid point of largest c u(t) + E_t, c = eps / (2 Delta), E_t i.i.d. Exp(1).
// A run of L grid points of equal utility (an interval's points other than its atom) is one
// candidate whose noise is the largest of L i.i.d. Exp(1). Each E_t is the transform
// exponential_from_race of its own race time T_t ~ Exp(1) (exponential_race.hpp), decreasing in
// T_t, so the largest of the L is the transform at the smallest of their race times, which is
// Exp(1) / L (Renyi 1953): the run's noise is exponential_from_race(T / L), T the candidate's own
// race time (its CDF (1 - e^-x)^L, drawn in O(1)). By symmetry the arg-max inside the run is uniform.
// An atom (one point) is the case L = 1. The same bits on the CPU and the GPU.
DPSELECT_HD DPSELECT_FORCEINLINE double permute_and_flip_run_noise(double race_time, std::uint64_t points) {
  return exponential_from_race(div_rn(race_time, u64_to_double_rn(points)));
}
// The noisy score of a run: c u + its noise, u in rank units (-|r - q n| for an interval's points,
// quantile_atom_utility for an atom), rounded once.
template <class Blocks = AnyGeneratorBlocks>
DPSELECT_HD DPSELECT_FORCEINLINE double permute_and_flip_run_score(const NoiseSpec& spec, std::uint64_t index,
                                                                   double utility, std::uint64_t points) {
  return fma_rn(spec.score_scale, utility,
                permute_and_flip_run_noise(candidate_race_time<Blocks>(spec, index), points));
}
// An upper bound of the noise of every run of at most `largest_points` points in a group whose
// screen is `screen`: the noise at the smallest leader time the screen allows (race times of the
// group are at least it, and a correctly rounded division is monotone), plus kScreenMargin for
// the transform's few ulps of non-monotonicity; +inf where the screen allows any.
DPSELECT_HD DPSELECT_FORCEINLINE double permute_and_flip_group_noise_bound(std::uint32_t screen,
                                                                          std::uint64_t largest_points) {
  const double e_v = race_exponential_lower_bound(screen_bound_slot(screen));
  if (e_v == 0.0) return kInfinity;
  return add_rn(permute_and_flip_run_noise(race_leader(e_v), largest_points), kScreenMargin);
}
// The utility of an interval's points other than its atom: -|rank - q n| (no log-length term:
// permute-and-flip takes the run's length through its noise).
DPSELECT_HD DPSELECT_FORCEINLINE double quantile_rank_utility(std::uint64_t rank, double target) {
  const double distance = sub_rn(u64_to_double_rn(rank), target);
  return -(distance < 0.0 ? -distance : distance);
}
// One run offered to a pass's running result: counted, and kept when its score beats the best
// (ties to the smaller index, as merge() breaks them). Excluded runs (no points) are counted only.
DPSELECT_HD DPSELECT_FORCEINLINE void offer_run(ShardResult& result, std::uint64_t index, double utility,
                                               double score) {
  ++result.candidates;
  const double magnitude = utility < 0.0 ? -utility : utility;
  if (magnitude > result.max_abs_shifted_utility) result.max_abs_shifted_utility = magnitude;
  if (score > result.best_score || (score == result.best_score && score > -kInfinity && index < result.best_index)) {
    result.best_score = score;
    result.best_index = index;
  }
}

// Permute-and-flip's stage 1 over sorted host slots: the runs of `utilities` (its intervals and
// atoms, candidate indices as for the exponential mechanism; score_scale c = eps / (2 Delta)),
// those around the target rank first and every other group of 32 screened by its noise bound.
// The arg-max of every run's permute_and_flip_run_score: the GPU pass's result bit for bit.
ShardResult permute_and_flip_quantile_runs_cpu(const QuantileIntervalUtilities& utilities, const NoiseSpec& spec);

// Sensitivity of u(t) = -dist(q n, [#{x_i < t}, #{x_i <= t}]) (Smith 2011, ties counted: the
// derivation in single_quantile.cpp): 1 when one record is replaced (n fixed); max(q, 1 - q) when
// one is added or removed (the counts move by 0 or 1, q n by q).
double quantile_sensitivity(RecordNeighbours neighbours, double q);

// The floating-point slack of one single-quantile release (derivation in single_quantile.cpp):
// `largest_abs_utility` bounds every |interval utility| before its log term, `intervals` is the
// number of data intervals (n + 1; from max_points when public).
FloatingPointSlack quantile_interval_slack(double epsilon, double score_scale, double largest_abs_utility,
                                           std::uint64_t grid_size, std::uint64_t intervals);

// Every check of params (range, epsilon, neighbours, max_points against the data, backend) and
// of one q; throws InvalidArgument naming the parameter before any charge.
void validate_quantile_params(const QuantileParams& params, const QuantileData& data);
void validate_quantile_level(double q, std::string_view name = "q");
// exponential or permute_and_flip, the latter over a range with a resolution (InvalidArgument
// naming "mechanism").
void validate_quantile_mechanism(Mechanism mechanism, const QuantileRange& range);
// A list of levels for several quantiles: non-empty, at most kMaxQuantileLevels, each in [0, 1],
// strictly increasing (InvalidArgument naming "qs[j]").
inline constexpr std::uint64_t kMaxQuantileLevels = std::uint64_t{1} << 20;
void validate_quantile_levels(std::span<const double> qs);

// A checked single-quantile release, ready to charge: its selection parameters (for
// Context::begin_release) and slack.
struct SingleQuantilePlan {
  SelectionParams selection;
  FloatingPointSlack slack;
  double target = 0.0;
  double score_scale = 0.0;
};
SingleQuantilePlan plan_single_quantile(const QuantileParams& params, const QuantileData& data, double q);

// Stage 1 over sorted host slots (all cores) for any node (the whole grid, or a window of it,
// candidates from utilities.first_index on): the engine's shard over the n + 1 intervals and the
// atoms, those around the target rank first, then the rest screened by their best score.
ShardResult score_quantile_intervals_cpu(const QuantileIntervalUtilities& utilities, const NoiseSpec& spec);

// Stages 1 and 2 of a single-quantile release that the caller began (and so charged): the
// engine's pass on the plan's backend, then the point inside the chosen interval.
QuantileRelease finish_single_quantile(Release& release, const SingleQuantilePlan& plan,
                                       const QuantileData::Storage& storage);

// The order statistics of ranks [first_rank, last_rank) of unsorted positions (0 <= first_rank <
// last_rank <= positions.size()), sorted: a few histogram passes over the positions and a sort of
// the values that fall in the buckets holding those ranks (quantile_data.cpp).
std::vector<std::uint64_t> order_statistics(std::span<const std::uint64_t> positions, std::uint64_t first_rank,
                                            std::uint64_t last_rank);

// Within the interval [begin, end) of the grid, a point uniformly (stage 2; `draw` selects
// disjoint random positions of the stream: truncated_geometric.hpp).
std::uint64_t uniform_grid_point(const NoiseSpec& spec, std::uint64_t begin, std::uint64_t end,
                                 std::uint64_t draw = 0);

// JointExp (joint_exponential.cpp): every check before any charge, the mechanism's parameters
// (sensitivity 2, scale) and its slack; then the sample on a drawn stream.
struct JointExponentialPlan {
  std::vector<double> qs;
  double epsilon = 0.0;
  double sensitivity = 0.0;
  double score_scale = 0.0;  // epsilon / (2 sensitivity)
  FloatingPointSlack slack;
};
JointExponentialPlan plan_joint_exponential(const QuantilesParams& params, const QuantileData& data,
                                            std::span<const double> qs);
// The sorted grid indices (one per q) of one JointExp sample from `positions` (host), drawing
// only from `stream` of `key`.
std::vector<std::uint64_t> sample_joint_exponential(const JointExponentialPlan& plan,
                                                    std::span<const std::uint64_t> positions,
                                                    std::uint64_t grid_size, const RandomKey& key,
                                                    std::uint64_t stream);
// The natural log of the sampler's total mass over all sorted tuples (its tables' normalising
// constant), for tests against brute-force enumeration.
double joint_exponential_log_mass(const JointExponentialPlan& plan, std::span<const std::uint64_t> positions,
                                  std::uint64_t grid_size);
// alpha of quantiles_rank_error_bound for JointExp over a grid of grid_size points.
double joint_exponential_rank_error_bound(double epsilon, std::uint64_t quantiles, std::uint64_t grid_size,
                                          double beta);

// NOT PRIVATE: the sorted slots of the data on the host (a copy; read from the device for device
// data), for the library's multi-quantile methods, diagnostics and tests.
std::vector<std::uint64_t> sorted_slots(const QuantileData& data);

}  // namespace dpselect::detail
