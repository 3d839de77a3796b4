// SPDX-License-Identifier: Apache-2.0
/// @file
/// Private quantiles over a public range [lower, upper]: the exponential mechanism over a grid of
/// the range with the tie-aware rank utility `u(t) = -dist(q n, [#{i : x_i < t}, #{i : x_i <= t}])`
/// (Smith 2011's `-|#{i : x_i < t} - q n|` where no value sits on t), sampled exactly.
///
/// Outputs are points of a public grid over the range (QuantileRange::grid: 2^40 + 1 points, or
/// the multiples of a public resolution, e.g. 1 for integer data), never doubles whose low bits
/// depend on the data (Mironov 2012). Values outside the range are clipped to it (their number is
/// private and is not reported); NaN is an error naming its index.
///
/// The utility is constant between consecutive sorted values except at a grid point that holds
/// values itself: the EM's mass of the other grid points between two values is (number of points)
/// x exp(scale u), and each grid point holding values is an atom with its own score. Stage 1 picks
/// an interval or an atom by its log-mass with the selection engine (Gumbel-max over the n + 1
/// intervals and up to n atoms, empty ones never chosen), stage 2 picks a grid point uniformly
/// inside a chosen interval. O(n) after the sort, whatever the grid.
///
/// Several quantiles: QuantilesMethod (JointExp, recursive splitting, independent releases under
/// basic or zCDP composition); docs/quantiles.md says which to use when.
///
/// Every release scores its intervals from utilities as they are (no utility reference) and charges
/// the context's accountant (Context::charge_to) once, after every check and before its stream.
///
/// Example:
/// @code{.cpp}
/// dpselect::Context ctx;
/// dpselect::QuantileParams params{.range = {0.0, 1000.0}, .epsilon = 1.0};
/// dpselect::QuantileData data(std::span<const double>(values), params.range);  // sorted once
/// auto median = dpselect::select_quantile(ctx, data, 0.5, params);              // median.value
/// @endcode
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "dpselect/chunked_values.hpp"
#include "dpselect/context.hpp"
#include "dpselect/detail/host_device.hpp"
#include "dpselect/types.hpp"

namespace dpselect {

/// Which datasets are neighbours. replace_one_record keeps n public; add_or_remove_record does not.
enum class RecordNeighbours {
  replace_one_record,    ///< one record changes: sensitivity of u is 1
  add_or_remove_record,  ///< one record more or less: sensitivity max(q, 1 - q)
};
/// The name of a neighbouring relation, as the command prints it.
/// @param neighbours Any value.
/// @return "replace" or "add-remove" ("unknown" for a value outside the enumeration); a view of a
///         static string.
std::string_view to_string(RecordNeighbours neighbours);  // "replace", "add-remove"

/// The points lower + i step, i in [0, size): the outputs of every quantile release over a range.
///
/// Made by QuantileRange::grid (or QuantileData::grid); a release's output is always one of its points.
struct QuantileGrid {
  double lower = 0.0;      ///< The first point: the range's lower end.
  double step = 0.0;       ///< The distance between consecutive points; > 0.
  /// The number of points: 2^40 + 1 (fewer where the step was raised), or range / resolution + 1.
  std::uint64_t size = 0;
  /// Whether values are rounded to their nearest point (a grid of a public resolution): the data
  /// are taken to be multiples of the step, so a value off the grid by a rounding error is tied with
  /// the point it stands for. Otherwise values are compared with the points exactly.
  bool rounds_to_points = false;

  /// fma(i, step, lower), rounded once: the same bits on the CPU and the GPU.
  /// @param i The point's index, < size.
  /// @return The i-th point.
  DPSELECT_HD DPSELECT_FORCEINLINE double point(std::uint64_t i) const {
    return detail::fma_rn(detail::u64_to_double_rn(i), step, lower);
  }
  /// The number of grid points <= the value clipped to [lower, point(size - 1)]: in [1, size] (not
  /// NaN). With x_i clipped, `#{i : x_i < point(j)} = #{i : points_at_or_below(x_i) <= j}`.
  /// @param value Any value that is not NaN (+-inf are clipped).
  /// @return The value's grid position, in [1, size].
  DPSELECT_HD std::uint64_t points_at_or_below(double value) const {
    if (!(value > lower)) return 1;
    const double estimate = floor((value - lower) / step);
    std::uint64_t index = estimate >= static_cast<double>(size) ? size : static_cast<std::uint64_t>(estimate);
    while (index > 0 && point(index - 1) > value) --index;  // the division's rounding: a step or two
    while (index < size && point(index) <= value) ++index;
    return index;
  }
  /// The value's slot on the grid: 2 k + 1 when the value (clipped, and rounded to its nearest point
  /// when rounds_to_points; half-way to the lower one) is the point k, and 2 p when it lies strictly
  /// between points p - 1 and p. Slots order as the values do, and `#{i : x_i < point(j)} =
  /// #{i : slot_i <= 2 j}`, `#{i : x_i <= point(j)} = #{i : slot_i <= 2 j + 1}`.
  /// @param value Any value that is not NaN (+-inf are clipped).
  /// @return The slot, in [1, 2 size - 1].
  DPSELECT_HD std::uint64_t slot(double value) const {
    const std::uint64_t at_or_below = points_at_or_below(value);  // >= 1: the point at_or_below - 1 is <= value
    const double last = point(size - 1);
    const double clipped = value > lower ? (value < last ? value : last) : lower;
    const double below = point(at_or_below - 1);
    if (!rounds_to_points) return clipped == below ? 2 * at_or_below - 1 : 2 * at_or_below;
    const bool nearer_above =
        at_or_below < size && detail::sub_rn(point(at_or_below), clipped) < detail::sub_rn(clipped, below);
    return nearer_above ? 2 * at_or_below + 1 : 2 * at_or_below - 1;
  }
};

/// The public range [lower, upper]: both finite, lower < upper, |lower|, |upper| <= 2^960; and
/// optionally its public resolution.
///
/// Public: choose it from public knowledge, not from the data (values outside it are clipped).
/// Give a resolution where the data are multiples of a known step (1 for integers such as ages,
/// counts or prices in whole units, 0.01 for cents): the outputs are then those multiples, and a
/// value held by many records (a tie) can be released itself, which is where the rank error is
/// smallest (docs/quantiles.md).
struct QuantileRange {
  double lower = 0.0;  ///< The lower end; finite, |lower| <= 2^960.
  double upper = 0.0;  ///< The upper end; finite, > lower, |upper| <= 2^960.
  /// The public step of the data and of the outputs (none: a grid of 2^40 + 1 points). Finite and
  /// > 0, dividing upper - lower (up to a relative 2^-44 of the range's magnitude, for decimal
  /// steps such as 0.01 that doubles hold inexactly) into at most 2^40 steps, and at least
  /// max(|lower|, |upper|) 2^-50 so that consecutive points differ. Values are rounded to the
  /// nearest multiple (QuantileGrid::rounds_to_points).
  std::optional<double> resolution = std::nullopt;

  /// Throws InvalidArgument naming "range lower", "range upper" or "range resolution" and the value.
  ///
  /// Also refuses a range too narrow for the grid to have a positive step (narrower than 2^-1034).
  /// @throws InvalidArgument for a range that breaks the constraints.
  void validate() const;
  /// Without a resolution: 2^40 + 1 points lower + i (upper - lower) 2^-40 (the step raised to
  /// max(|lower|, |upper|) 2^-50 where it would fall below, so that consecutive points differ); the
  /// last is <= upper. With one: the (upper - lower) / resolution + 1 points lower + i resolution
  /// (the last is upper up to the rounding of fma), values rounded to the nearest.
  /// @return The grid.
  /// @throws InvalidArgument for an invalid range (validate()).
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
///
/// The host positions are computed at construction and sorted when a release first needs them
/// sorted (JointExp, recursive splitting, a GPU pass, sorted_positions()): a single quantile on the
/// CPU usually does without (docs/quantiles.md). Copies share the prepared data, which is
/// immutable; several threads may release from one QuantileData at once. The data are private:
/// nothing read from a QuantileData (its size, its positions) may be published.
class QuantileData {
 public:
  /// @name Values in host memory
  ///@{

  /// Throws InvalidArgument for an invalid range, no values, more than 2^40, or a NaN (naming
  /// "data[i]"). +-inf are clipped like any value outside the range.
  /// @param values The private values: 1 to 2^40 of them, none NaN. They are not kept.
  /// @param range The public range (QuantileRange); every release over these data must use it.
  /// @throws InvalidArgument as above.
  QuantileData(std::span<const double> values, const QuantileRange& range);
  QuantileData(std::span<const float> values, const QuantileRange& range);
  /// Values read a chunk at a time (chunked_values.hpp), never held whole: the data keep only their
  /// grid positions (8 bytes a value), as for a span. The same data as from the span of the same
  /// values.
  /// @param values The private values' count (1 to 2^40), reader and chunk size; none NaN.
  /// @param range The public range (QuantileRange).
  /// @throws InvalidArgument as for a span (a NaN named "data[i]" by its index in the whole input),
  ///         and for an empty reader or a chunk size of 0; whatever `values.read` throws.
  QuantileData(const ChunkedValues<double>& values, const QuantileRange& range);
  QuantileData(const ChunkedValues<float>& values, const QuantileRange& range);
  ///@}
  /// @name Values in device memory
  ///@{

  /// Values in device memory, read on `stream` (the call synchronizes it before returning).
  /// Throws BackendUnavailable without a usable GPU.
  ///
  /// The prepared data live in the library's memory pool on the current device for as long as any
  /// copy of the result lives (device_memory.hpp); the input may be freed once the call returns.
  /// @param values The private values in memory the current device can read (DeviceSpan): 1 to 2^40
  ///        of them, none NaN.
  /// @param range The public range (QuantileRange).
  /// @param stream A stream of the current device (nullptr, the default: the legacy default stream).
  /// @return The prepared data (on_device() true).
  /// @throws InvalidArgument for an invalid range, no values, more than 2^40, a pointer the device
  ///         cannot read, or a NaN (naming "data[i]").
  /// @throws BackendUnavailable without a usable GPU.
  /// @throws CudaError if a CUDA call fails (among them too little free device memory for the sort).
  /// @par Synchronisation
  /// The NaN scan and the sort are enqueued on `stream` behind the work already there (so values
  /// written by earlier work on `stream` are read as written), and the call synchronizes `stream`
  /// before it returns.
  static QuantileData from_device(DeviceSpan<const double> values, const QuantileRange& range,
                                  cuda_stream_t stream = nullptr);
  static QuantileData from_device(DeviceSpan<const float> values, const QuantileRange& range,
                                  cuda_stream_t stream = nullptr);
  ///@}

  /// The number of values n. NOT PRIVATE under add/remove-record neighbours.
  /// @return n, in [1, 2^40].
  std::uint64_t size() const;
  /// The range the data were prepared for.
  /// @return The range given at construction.
  const QuantileRange& range() const;
  /// The output grid of every release over these data.
  /// @return range().grid().
  QuantileGrid grid() const;
  /// Whether the prepared data live in device memory (from_device).
  /// @return true for data made by from_device.
  bool on_device() const;
  /// The sorted grid positions (copied from the device for device data).
  ///
  /// NOT PRIVATE: the data themselves, reduced to the grid; for diagnostics and tests.
  /// @return n positions in ascending order, each in [1, grid().size].
  /// @throws CudaError if the copy from the device fails.
  std::vector<std::uint64_t> sorted_positions() const;

  struct Storage;  ///< host or device positions (host/quantiles/quantile_data.cpp)
  /// The prepared positions, for the library's own passes (the type is opaque to applications).
  /// @return The shared storage.
  const Storage& storage() const { return *storage_; }
  /// Wraps prepared storage; the library's own constructor, not for applications.
  /// @param storage The prepared positions; not nullptr.
  explicit QuantileData(std::shared_ptr<const Storage> storage);

 private:
  std::shared_ptr<const Storage> storage_;
};

/// The parameters of a single-quantile release (and, as QuantilesParams::base, of several).
///
/// Checked before any charge (InvalidArgument naming the field).
struct QuantileParams {
  /// The public range; the same range the data were prepared for (InvalidArgument otherwise).
  QuantileRange range;
  /// Privacy loss of the release (for several quantiles: of all of them together); finite, > 0.
  double epsilon = 0.0;
  /// Which datasets are neighbours (default replace_one_record: n public, sensitivity 1).
  RecordNeighbours neighbours = RecordNeighbours::replace_one_record;
  /// Optional public upper bound on the number of values (0: none). Under add_or_remove_record the
  /// floating-point slack is then computed from it; without it the slack reveals n
  /// (report.slack.depends_on_data), so do not publish it. More values than max_points is an error.
  std::uint64_t max_points = 0;
  /// Where the interval pass runs: Auto follows the data (GPU for device data, CPU for host data);
  /// Gpu for host data copies the positions to the device. Cpu is an error for device data
  /// (InvalidArgument), Gpu without a usable GPU too (BackendUnavailable).
  Backend backend = Backend::Auto;
  /// The mechanism over the grid: Mechanism::exponential (the default) or
  /// Mechanism::permute_and_flip (McKenna & Sheldon 2020), which never has a larger expected rank
  /// error and often a smaller one, at the same epsilon (docs/quantiles.md says when each is better).
  /// permute_and_flip needs a range with a resolution: on the 2^40 + 1 points of a range without
  /// one, each data interval holds so many points that the largest of their noises is Gumbel noise
  /// plus the log of their number, the exponential mechanism's own law, so it brings nothing there.
  /// Anything else is InvalidArgument naming "mechanism".
  Mechanism mechanism = Mechanism::exponential;
};

/// The result of one private quantile.
struct QuantileRelease {
  double value = 0.0;            ///< a grid point: the private output
  std::uint64_t grid_index = 0;  ///< its index on range.grid()
  /// epsilon_spent, sensitivity, noise_scale, slack, stream; candidates = the grid size.
  SelectionReport report;
};

/// One private q-quantile (q in [0, 1]). Charges params.epsilon to the context's accountant after
/// every check (InvalidArgument before any charge).
///
/// The interval pass runs where params.backend says (Auto: on the GPU for device data, on the CPU for
/// host data), then the point inside the chosen interval is drawn on the host.
/// @param context The context whose key and next stream the release uses (and whose accountant it
///        charges).
/// @param data The prepared private values (QuantileData).
/// @param q The quantile level, in [0, 1] (0.5: the median). Public.
/// @param params The release's parameters (QuantileParams).
/// @return The released grid point, its grid index and the report (candidates: the grid size).
/// @throws InvalidArgument before the charge for q outside [0, 1], a range other than the data's,
///         bad epsilon or neighbours, more values than max_points, Backend::Cpu for device data, or a
///         floating-point slack that would reach epsilon.
/// @throws BackendUnavailable for Backend::Gpu without a usable GPU, before the charge.
/// @throws BudgetExceeded when the context's accountant refuses the release; nothing is drawn.
/// @throws UsageError on a moved-from context.
/// @throws CudaError if a CUDA call of the GPU pass fails.
/// @throws std::runtime_error if every attempt of the draw inside the chosen interval is rejected
///         (probability <= 2^-128), after the charge; nothing is released.
/// @par Synchronisation
/// For device data (or Backend::Gpu) the pass runs on the data's device on a stream of the library's
/// own and is complete when the call returns; no stream of the caller's is used.
/// @par Privacy
/// The value is epsilon-DP under exact arithmetic: the exponential mechanism over the grid with utility
/// `-dist(q n, [#{i : x_i < t}, #{i : x_i <= t}])` (Smith 2011's, ties counted), sensitivity 1
/// (replace_one_record) or max(q, 1 - q) (add_or_remove_record), at scale `eps / (2 Delta)` (Dwork &
/// Roth 2014, Thm 3.10), over the values as the grid takes them (clipped, and rounded to the nearest
/// point with a resolution: a map applied to each record alone, so neighbouring data stay
/// neighbours and the guarantee holds for the raw values); the computed
/// release is (epsilon + report.slack.epsilon, report.slack.delta)-DP. The accountant is charged one
/// exponential-mechanism release at params.epsilon after every check and before the stream is drawn.
/// The report's slack reveals n under add_or_remove_record without max_points
/// (slack.depends_on_data): do not publish it then.
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
/// The name of a method, as the command prints it.
/// @param method Any value.
/// @return "joint", "recursive", "basic" or "zcdp" ("unknown" for a value outside the enumeration); a
///         view of a static string.
std::string_view to_string(QuantilesMethod method);  // "joint", "recursive", "basic", "zcdp"

/// The parameters of a release of several quantiles.
struct QuantilesParams {
  QuantileParams base;  ///< range, total epsilon, neighbours, max_points, backend
  QuantilesMethod method = QuantilesMethod::joint_exponential;  ///< How (default JointExp).
  double delta = 0.0;  ///< independent_zcdp only: the total delta, in (0, 1); 0 for the others
};

/// The result of a release of several quantiles.
struct QuantilesRelease {
  std::vector<double> values;  ///< grid points, non-decreasing, one per requested q (in order)
  std::vector<std::uint64_t> grid_indices;  ///< their indices on the range's grid, in the same order
  QuantilesMethod method = QuantilesMethod::joint_exponential;  ///< the method that ran
  double epsilon_spent = 0.0;  ///< the total epsilon: params.base.epsilon
  double delta_spent = 0.0;    ///< the total delta: params.delta for independent_zcdp, 0 otherwise
  /// The epsilon of each exponential mechanism run (one for joint_exponential). The accountant is
  /// charged `mechanisms` exponential-mechanism releases at this epsilon (recursive splitting: as
  /// many as one record takes part in), so that it composes them by its best theorem. For
  /// independent_zcdp that is what keeps (epsilon, delta); an adaptive accountant, which may only
  /// add epsilons up, records m times this epsilon, a little more than epsilon.
  ///
  /// For recursive splitting the count charged is not `mechanisms` (m) but ceil(log2(m + 1)), twice
  /// that under replace_one_record, and this epsilon is epsilon divided by that count.
  double epsilon_per_mechanism = 0.0;
  /// The number of exponential mechanisms run: 1 for joint_exponential, m for the other methods.
  std::uint64_t mechanisms = 0;
  /// Summed over the mechanisms run.
  FloatingPointSlack slack;
  std::vector<std::uint64_t> streams;  ///< the context streams the release drew, in order
};

/// Several quantiles: qs non-empty, each in [0, 1], strictly increasing (for every method, so that
/// the output is ordered the same way). Charges the whole release once, after every check.
///
/// joint_exponential and recursive_splitting run on the CPU (device data's sorted positions are
/// copied to the host first); the independent methods run each release's interval pass as
/// select_quantile does. The values come back sorted (independent releases may cross).
/// @param context The context whose key and next stream(s) the release uses (and whose accountant it
///        charges).
/// @param data The prepared private values (QuantileData).
/// @param qs The quantile levels: 1 to 2^20 of them, each in [0, 1], strictly increasing. Public.
/// @param params The release's parameters (QuantilesParams): base as for select_quantile, delta in
///        (0, 1) for independent_zcdp and 0 for the other methods.
/// @return The released grid points and the release's account.
/// @throws InvalidArgument before the charge for bad levels (naming `qs[j]`), a bad method or delta,
///         bad base params (as for select_quantile), or a floating-point slack that would reach the
///         epsilon of a mechanism.
/// @throws BackendUnavailable for Backend::Gpu without a usable GPU, before the charge.
/// @throws BudgetExceeded when the context's accountant refuses the release; nothing is drawn.
/// @throws UsageError on a moved-from context.
/// @throws CudaError if a CUDA call (a GPU pass, or the copy of device positions) fails.
/// @throws std::runtime_error if every attempt of a draw inside a chosen interval is rejected
///         (probability <= 2^-128), after the charge; nothing is released.
/// @par Synchronisation
/// Device work runs on streams of the library's own and is complete when the call returns.
/// @par Privacy
/// The values together are (epsilon_spent, delta_spent)-DP under exact arithmetic, plus the
/// release's slack (QuantilesRelease::slack):
/// - joint_exponential: one exponential mechanism over sorted m-tuples, epsilon-DP (Gillenwater,
///   Joseph & Kulesza 2021); charged one exponential-mechanism release at epsilon.
/// - recursive_splitting: exponential mechanisms at epsilon / L each, L = ceil(log2(m + 1)) (2 L under
///   replace_one_record), composed along each record's path (Kaplan, Schnapp & Stemmer 2022; Dwork &
///   Roth 2014, Thm 3.16): epsilon-DP; charged L (or 2 L) exponential-mechanism releases at epsilon / L
///   (or epsilon / 2 L).
/// - independent_basic: m releases at epsilon / m, epsilon-DP by basic composition (Dwork & Roth 2014,
///   Thm 3.16); charged m exponential-mechanism releases at epsilon / m.
/// - independent_zcdp: m releases at the largest epsilon_i whose m exponential mechanisms (each
///   epsilon_i^2/8-zCDP, Cesar & Rogers 2021) the accountant's best theorem keeps within
///   (epsilon, delta); charged m exponential-mechanism releases at epsilon_i.
///
/// The whole release is charged once, after every check and before the first stream. Its slack
/// reveals n under add_or_remove_record without max_points (slack.depends_on_data).
QuantilesRelease select_quantiles(Context& context, const QuantileData& data, std::span<const double> qs,
                                  const QuantilesParams& params);

/// Accuracy calculators (Dwork & Roth 2014, Thm 3.11, applied to each method's mechanisms): with
/// probability >= 1 - beta every released quantile o_j has rank error (ties counted)
///     dist(q_j n, [#{i : x_i < o_j}, #{i : x_i <= o_j}]) <= alpha + e_j,
/// where e_j = min over grid points t of that distance is the error the grid forces on any output
/// (<= 1/2 for data without ties whose neighbouring values have a grid point between them). JointExp
/// scores tuples with Smith's utility, which does not count ties: for it e_j is min_t
/// |#{i : x_i < t} - q_j n|, and it adds up to 2 (e_1 + ... + e_m). alpha does not depend on the data.
///
/// For one quantile: `alpha = (2 Delta / epsilon)(ln M + ln(1 / beta))` over the M grid points. Needs
/// no data: it may be computed and published before the release.
/// @param params The release's parameters (range, epsilon and neighbours are read and checked).
/// @param q The quantile level, in [0, 1].
/// @param beta The failure probability, in (0, 1).
/// @return alpha, in ranks (numbers of values).
/// @throws InvalidArgument for q, beta, the range or epsilon out of bounds.
double quantile_rank_error_bound(const QuantileParams& params, double q, double beta);
/// The same bound for a release of several quantiles by params.method: a union bound over the m
/// mechanisms of the independent methods (beta / m each), a sum over the levels of recursive
/// splitting, and the count of sorted m-tuples for JointExp. Needs no data.
/// @param params The release's parameters (base range, epsilon and neighbours, method and delta are
///        read and checked).
/// @param qs The quantile levels, as for select_quantiles.
/// @param beta The failure probability for all levels together, in (0, 1).
/// @return alpha, in ranks, bounding every level's error beyond its e_j.
/// @throws InvalidArgument for bad levels, method, delta, beta, range or epsilon.
double quantiles_rank_error_bound(const QuantilesParams& params, std::span<const double> qs, double beta);

/// NOT PRIVATE: the exact quantile and rank errors, for diagnostics and tests only.
struct QuantileDiagnostics {
  std::uint64_t best_grid_index = 0;  ///< a grid point of smallest rank error
  double best_rank_error = 0.0;       ///< e = min_t dist(q n, [#{x_i < t}, #{x_i <= t}])
};
/// NOT PRIVATE: the grid point of smallest rank error for level q and that error.
/// @param data The prepared values.
/// @param q The quantile level, in [0, 1].
/// @return The best grid index (the smallest among ties) and its rank error.
/// @throws InvalidArgument for q outside [0, 1].
/// @throws CudaError if the copy of device positions fails.
/// @par Privacy
/// NOT PRIVATE: a function of the data; for diagnostics and tests, never part of a release.
QuantileDiagnostics nonprivate_quantile_diagnostics(const QuantileData& data, double q);
/// The rank error of a grid point t counting ties, `dist(q n, [#{i : x_i < t}, #{i : x_i <= t}])`
/// (0 when q n lies in that interval), for the prepared data.
/// @param data The prepared values.
/// @param grid_index A grid index, below data.grid().size (e.g. QuantileRelease::grid_index).
/// @param q The quantile level, in [0, 1].
/// @return The rank error of that point.
/// @throws InvalidArgument for q outside [0, 1] or a grid index beyond the grid.
/// @throws CudaError if the copy of device positions fails.
/// @par Privacy
/// NOT PRIVATE: a function of the data; for diagnostics and tests, never part of a release.
double nonprivate_rank_error(const QuantileData& data, std::uint64_t grid_index, double q);

}  // namespace dpselect
