// SPDX-License-Identifier: Apache-2.0
/// @file
/// Private quantiles over a continuous public range [lower, upper]: the exponential mechanism
/// with utility u(t) = -|#{i : x_i < t} - q n| (Smith 2011), sampled exactly by data intervals.
///
/// Outputs are points of a public grid over the range (2^40 + 1 points, QuantileRange::grid),
/// never doubles whose low bits depend on the data (Mironov 2012). Values outside the range are
/// clipped to it (their number is private and is not reported); NaN is an error naming its index.
///
/// The utility is constant between consecutive sorted values, so the EM's mass of all grid points
/// between two of them is (number of grid points) x exp(scale u): stage 1 picks such an interval
/// by its log-mass with the selection engine (Gumbel-max over n + 1 intervals, empty ones never
/// chosen), stage 2 picks a grid point uniformly inside it. O(n) after the sort, whatever the grid.
///
/// Several quantiles: QuantilesMethod (JointExp, recursive splitting, independent releases under
/// basic or zCDP composition); docs/quantiles.md says which to use when.
///
/// Example:
///   dpselect::Context ctx;
///   dpselect::QuantileParams params{.range = {0.0, 1000.0}, .epsilon = 1.0};
///   dpselect::QuantileData data(std::span<const double>(values), params.range);  // sorted once
///   auto median = dpselect::select_quantile(ctx, data, 0.5, params);              // median.value
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "dpselect/context.hpp"
#include "dpselect/detail/host_device.hpp"
#include "dpselect/types.hpp"

namespace dpselect {

/// Which datasets are neighbours. replace_one_record keeps n public; add_or_remove_record does not.
enum class RecordNeighbours {
  replace_one_record,    ///< one record changes: sensitivity of u is 1
  add_or_remove_record,  ///< one record more or less: sensitivity max(q, 1 - q)
};
std::string_view to_string(RecordNeighbours neighbours);  // "replace", "add-remove"

/// The points lower + i step, i in [0, size): the outputs of every quantile release over a range.
struct QuantileGrid {
  double lower = 0.0;
  double step = 0.0;
  std::uint64_t size = 0;

  /// fma(i, step, lower), rounded once: the same bits on the CPU and the GPU.
  DPSELECT_HD DPSELECT_FORCEINLINE double point(std::uint64_t i) const {
    return detail::fma_rn(detail::u64_to_double_rn(i), step, lower);
  }
  /// The number of grid points <= the value clipped to [lower, point(size - 1)]: in [1, size] (not
  /// NaN). With x_i clipped, #{i : x_i < point(j)} = #{i : points_at_or_below(x_i) <= j}.
  DPSELECT_HD std::uint64_t points_at_or_below(double value) const {
    if (!(value > lower)) return 1;
    const double estimate = floor((value - lower) / step);
    std::uint64_t index = estimate >= static_cast<double>(size) ? size : static_cast<std::uint64_t>(estimate);
    while (index > 0 && point(index - 1) > value) --index;  // the division's rounding: a step or two
    while (index < size && point(index) <= value) ++index;
    return index;
  }
};

/// The public range [lower, upper]: both finite, lower < upper, |lower|, |upper| <= 2^960.
struct QuantileRange {
  double lower = 0.0;
  double upper = 0.0;

  /// Throws InvalidArgument naming "range lower" or "range upper" and the value.
  void validate() const;
  /// 2^40 + 1 points lower + i (upper - lower) 2^-40 (the step raised to max(|lower|, |upper|)
  /// 2^-50 where it would fall below, so that consecutive points differ); the last is <= upper.
  QuantileGrid grid() const;
};

/// The data of quantile releases over one range, prepared once: each value clipped to the range,
/// replaced by its position on the grid (QuantileGrid::points_at_or_below) and sorted. Releases
/// read only these positions; 8 bytes per value (4 for float32 values in device memory, below).
/// Up to 2^40 values.
///
/// Host values are sorted on all cores (a radix sort of the positions). Device values (a CUDA
/// build with a usable GPU) are sorted on the device with CUB and stay there; releases over them
/// run their interval pass on the GPU. float32 device values keep only their sorted copy (4 bytes
/// per value), from which the passes compute the same positions.
class QuantileData {
 public:
  /// Throws InvalidArgument for an invalid range, no values, more than 2^40, or a NaN (naming
  /// "data[i]"). +-inf are clipped like any value outside the range.
  QuantileData(std::span<const double> values, const QuantileRange& range);
  QuantileData(std::span<const float> values, const QuantileRange& range);
  /// Values in device memory, read on `stream` (the call synchronizes it before returning).
  /// Throws BackendUnavailable without a usable GPU.
  static QuantileData from_device(DeviceSpan<const double> values, const QuantileRange& range,
                                  cuda_stream_t stream = nullptr);
  static QuantileData from_device(DeviceSpan<const float> values, const QuantileRange& range,
                                  cuda_stream_t stream = nullptr);

  std::uint64_t size() const;
  const QuantileRange& range() const;
  QuantileGrid grid() const;
  bool on_device() const;
  /// The sorted grid positions (copied from the device for device data).
  std::vector<std::uint64_t> sorted_positions() const;

  struct Storage;  ///< host or device positions (host/quantiles/quantile_data.cpp)
  const Storage& storage() const { return *storage_; }
  explicit QuantileData(std::shared_ptr<const Storage> storage);

 private:
  std::shared_ptr<const Storage> storage_;
};

struct QuantileParams {
  QuantileRange range;
  /// Privacy loss of the release (for several quantiles: of all of them together); finite, > 0.
  double epsilon = 0.0;
  RecordNeighbours neighbours = RecordNeighbours::replace_one_record;
  /// Optional public upper bound on the number of values (0: none). Under add_or_remove_record the
  /// floating-point slack is then computed from it; without it the slack reveals n
  /// (report.slack.depends_on_data), so do not publish it. More values than max_points is an error.
  std::uint64_t max_points = 0;
  /// Where the interval pass runs: Auto follows the data (GPU for device data, CPU for host data);
  /// Gpu for host data copies the positions to the device.
  Backend backend = Backend::Auto;
};

struct QuantileRelease {
  double value = 0.0;            ///< a grid point
  std::uint64_t grid_index = 0;  ///< its index on range.grid()
  /// epsilon_spent, sensitivity, noise_scale, slack, stream; candidates = the grid size.
  SelectionReport report;
};

/// One private q-quantile (q in [0, 1]). Charges params.epsilon to the context's accountant after
/// every check (InvalidArgument before any charge).
QuantileRelease select_quantile(Context& context, const QuantileData& data, double q, const QuantileParams& params);

/// How several quantiles are released together (docs/quantiles.md):
enum class QuantilesMethod {
  /// One exponential mechanism over sorted m-tuples of grid points (Gillenwater, Joseph & Kulesza,
  /// ICML 2021), sampled exactly in O(m^2 n) after the sort. Best accuracy for m up to about 10.
  joint_exponential,
  /// Recursive splitting (Kaplan, Schnapp & Stemmer, ICML 2022): the middle quantile first, then
  /// each side recursively; each value takes part in ceil(log2(m + 1)) releases. Best for large m.
  recursive_splitting,
  /// m independent single-quantile releases, epsilon / m each (basic composition).
  independent_basic,
  /// m independent releases composed in zCDP (each exponential mechanism is eps^2/8-zCDP), an
  /// (epsilon, delta)-DP total: needs params delta > 0.
  independent_zcdp,
};
std::string_view to_string(QuantilesMethod method);  // "joint", "recursive", "basic", "zcdp"

struct QuantilesParams {
  QuantileParams base;  ///< range, total epsilon, neighbours, max_points, backend
  QuantilesMethod method = QuantilesMethod::joint_exponential;
  double delta = 0.0;  ///< independent_zcdp only: the total delta, in (0, 1); 0 for the others
};

struct QuantilesRelease {
  std::vector<double> values;  ///< grid points, non-decreasing, one per requested q (in order)
  std::vector<std::uint64_t> grid_indices;
  QuantilesMethod method = QuantilesMethod::joint_exponential;
  double epsilon_spent = 0.0;
  double delta_spent = 0.0;
  /// The epsilon of each exponential mechanism run (one for joint_exponential). The accountant is
  /// charged `mechanisms` exponential-mechanism releases at this epsilon (recursive splitting: as
  /// many as one record takes part in), so that it composes them by its best theorem. For
  /// independent_zcdp that is what keeps (epsilon, delta); an adaptive accountant, which may only
  /// add epsilons up, records m times this epsilon, a little more than epsilon.
  double epsilon_per_mechanism = 0.0;
  std::uint64_t mechanisms = 0;
  /// Summed over the mechanisms run.
  FloatingPointSlack slack;
  std::vector<std::uint64_t> streams;  ///< the context streams the release drew, in order
};

/// Several quantiles: qs non-empty, each in [0, 1], strictly increasing (for every method, so that
/// the output is ordered the same way). Charges the whole release once, after every check.
QuantilesRelease select_quantiles(Context& context, const QuantileData& data, std::span<const double> qs,
                                  const QuantilesParams& params);

/// Accuracy calculators (Dwork & Roth 2014, Thm 3.11, applied to each method's mechanisms): with
/// probability >= 1 - beta every released quantile o_j has rank error
///     |#{i : x_i < o_j} - q_j n| <= alpha + e_j,
/// where e_j = min over grid points t of |#{i : x_i < t} - q_j n| is the error the grid and ties
/// force on any output (<= 1/2 for data without ties whose neighbouring values have a grid point
/// between them; JointExp adds up to 2 (e_1 + ... + e_m)). alpha does not depend on the data.
double quantile_rank_error_bound(const QuantileParams& params, double q, double beta);
double quantiles_rank_error_bound(const QuantilesParams& params, std::span<const double> qs, double beta);

/// NOT PRIVATE: the exact quantile and rank errors, for diagnostics and tests only.
struct QuantileDiagnostics {
  std::uint64_t best_grid_index = 0;  ///< a grid point of smallest rank error
  double best_rank_error = 0.0;       ///< e = min_t |#{x_i < t} - q n|
};
QuantileDiagnostics nonprivate_quantile_diagnostics(const QuantileData& data, double q);
/// |#{i : x_i < grid.point(grid_index)} - q n| for the prepared data.
double nonprivate_rank_error(const QuantileData& data, std::uint64_t grid_index, double q);

}  // namespace dpselect
