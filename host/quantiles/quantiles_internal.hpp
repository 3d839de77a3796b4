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
#include "dpselect/quantiles.hpp"
#include "dpselect/shard_result.hpp"

namespace dpselect {

// The grid positions (QuantileGrid::points_at_or_below of each clipped value): in host memory,
// in input order until a release needs them sorted; or, for device data, sorted in device memory
// (a buffer the storage owns and frees; for float32 values the sorted values, from which a
// position is one QuantileGrid::points_at_or_below away).
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

// The data intervals of sorted positions g_0 <= ... <= g_{n-1} over the grid indices
// [grid_begin, grid_end) (the whole grid, or a window of it for a node of recursive splitting;
// grid_begin <= g_i <= grid_end): interval r in [0, n] holds the grid indices j with exactly r
// values below point(j), [g_{r-1}, g_r) with g_{-1} = grid_begin and g_n = grid_end. Empty
// intervals (ties, or no grid point between two values) have length 0.
struct DataIntervals {
  std::span<const std::uint64_t> positions;
  std::uint64_t grid_end = 0;
  std::uint64_t grid_begin = 0;

  std::uint64_t count() const { return positions.size() + 1; }
  std::uint64_t begin(std::uint64_t r) const { return r == 0 ? grid_begin : positions[r - 1]; }
  std::uint64_t end(std::uint64_t r) const { return r == positions.size() ? grid_end : positions[r]; }
  std::uint64_t length(std::uint64_t r) const { return end(r) - begin(r); }
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

struct QuantileIntervalUtilities {
  DataIntervals intervals;
  double target = 0.0;  // q n, rounded once
  double score_scale = 0.0;
  std::uint64_t first_index = 0;  // the candidate index of interval 0
  static void fill(const void* self, std::uint64_t first, std::uint64_t count, double* out);
};

// Sensitivity of u(t) = -|#{x_i < t} - q n| (Smith 2011): 1 when one record is replaced (n
// fixed); max(q, 1 - q) when one is added or removed (the count moves by 0 or 1, q n by q).
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

// Stage 1 over host positions (all cores): the engine's shard over all n + 1 intervals.
ShardResult score_quantile_intervals_cpu(const SingleQuantilePlan& plan, const NoiseSpec& spec,
                                         std::span<const std::uint64_t> positions, std::uint64_t grid_size);
// The same for any node (a window of the grid, candidates from utilities.first_index on): the
// intervals around the target rank first, then the rest screened by their best score.
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

// The GPU side (kernels/quantiles.cu; host/engine/gpu_unavailable.cpp throws BackendUnavailable):
// device values to sorted device positions (NaN: InvalidArgument naming data[i]).
std::shared_ptr<const QuantileData::Storage> gpu_prepare_quantile_data(const double* values, std::uint64_t count,
                                                                       const QuantileRange& range,
                                                                       cuda_stream_t stream);
std::shared_ptr<const QuantileData::Storage> gpu_prepare_quantile_data(const float* values, std::uint64_t count,
                                                                       const QuantileRange& range,
                                                                       cuda_stream_t stream);
// Stage 1 on the GPU over `range` of the data's intervals (host positions, sorted first, stream
// through the device in chunks).
ShardResult gpu_score_quantile_intervals(const SingleQuantilePlan& plan, const NoiseSpec& spec,
                                         const QuantileData::Storage& data, IndexRange range);
// Device positions back to the host: positions [first, first + count).
std::vector<std::uint64_t> gpu_read_quantile_positions(const QuantileData::Storage& data, std::uint64_t first,
                                                       std::uint64_t count);

}  // namespace dpselect::detail
