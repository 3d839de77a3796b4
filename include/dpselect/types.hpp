// SPDX-License-Identifier: Apache-2.0
/// @file
/// Parameter and result types of the selection API.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace dpselect {

/// Which private selection to run. All three add i.i.d. noise to every candidate's scaled
/// utility and report the arg-max; they differ in the noise and hence in the distribution.
///
/// Each is epsilon-DP for a utility of sensitivity Delta (SelectionParams::sensitivity) under exact
/// arithmetic; with SelectionParams::monotone the noise scale halves (Delta/eps instead of 2*Delta/eps).
/// Ties in the noisy scores go to the smallest index. The accountant records an exponential
/// release as ReleaseKind::exponential_mechanism and the other two as ReleaseKind::pure
/// (release_kind() in `<dpselect/accounting.hpp>`).
enum class Mechanism {
  /// Exponential mechanism: `P(r)` proportional to `exp(eps * u(r) / (2 * Delta))`, sampled exactly
  /// as arg-max of `eps*u/(2*Delta)` + Gumbel noise (Dwork & Roth 2014, Def. 3.4, Thm 3.10).
  exponential,
  /// Permute-and-flip (McKenna & Sheldon 2020) = report-noisy-max with one-sided exponential
  /// noise of scale `2*Delta/eps` (Ding et al. 2021). Never worse than the EM in expected utility.
  /// It is not the exponential mechanism: on u = (0, 1) with `eps/(2*Delta)` = 1 the EM picks index 1
  /// with probability 0.7311, permute-and-flip with 0.8161.
  permute_and_flip,
  /// Report-noisy-max with Laplace noise of scale `2*Delta/eps`: Dwork & Roth Claim 3.9 proves
  /// `Lap(Delta/eps)` for monotone (counting) utilities; the same proof with shifts of up to Delta
  /// in both directions gives `2*Delta/eps` in general.
  laplace_noisy_max,
};

/// Where to compute. Auto uses the GPU when one is usable and the CPU otherwise; the report
/// says which ran.
///
/// The backend changes neither the distribution nor, for the same key and stream, the chosen index:
/// the CPU and the GPU compute bit-identical noisy scores.
enum class Backend {
  /// The GPU when gpu_usable() is true, else the CPU (SelectionReport::cpu_fallback_reason says why
  /// when an NVIDIA GPU is present but unusable). Utilities in device memory need a usable GPU.
  Auto,
  /// The CPU, on all cores (OpenMP). An error (InvalidArgument) for utilities in device memory.
  Cpu,
  /// The GPU; BackendUnavailable where gpu_usable() is false. Host arrays stream through the device
  /// in chunks.
  Gpu
};

/// What actually ran a release (a sharded release may use both).
enum class ExecutedOn : std::uint8_t {
  none = 0,         ///< nothing was evaluated (a default ShardResult, e.g. an empty shard)
  cpu = 1,          ///< every evaluated shard ran on the CPU
  gpu = 2,          ///< every evaluated shard ran on the GPU
  cpu_and_gpu = 3   ///< the merge of shards run on the CPU and on the GPU (the bits are OR-ed)
};

/// The name of a mechanism, as the command and the reports print it.
/// @param mechanism any Mechanism value.
/// @return "exponential", "permute-and-flip" or "laplace-noisy-max" ("unknown" for a value outside
///   the enumeration); a string with static storage duration.
std::string_view to_string(Mechanism mechanism);
/// The name of a backend.
/// @param backend any Backend value.
/// @return "auto", "cpu" or "gpu" ("unknown" for a value outside the enumeration); a string with
///   static storage duration.
std::string_view to_string(Backend backend);
/// The name of what ran a release.
/// @param executed_on any ExecutedOn value.
/// @return "none", "cpu", "gpu" or "cpu+gpu" ("unknown" for a value outside the enumeration); a
///   string with static storage duration.
std::string_view to_string(ExecutedOn executed_on);

/// The privacy parameters of one selection.
///
/// Checked by Context::begin_release and every entry point before any stream is drawn (InvalidArgument
/// naming the field): epsilon and sensitivity finite and > 0, with `epsilon / (2 * sensitivity)` (or
/// `epsilon / sensitivity` when monotone) a positive normal double; utility_bound finite and >= 0, and
/// small enough that the floating-point slack it implies stays below epsilon; utility_reference finite
/// when given. Use designated initializers:
/// @code{.cpp}
/// dpselect::SelectionParams p{.mechanism = dpselect::Mechanism::exponential,
///                             .epsilon = 1.0, .sensitivity = 1.0};
/// @endcode
struct SelectionParams {
  /// The mechanism (default: the exponential mechanism). Its noise is on Mechanism.
  Mechanism mechanism = Mechanism::exponential;
  /// Privacy loss of this release; finite and > 0 (the default 0 is invalid: set it).
  double epsilon = 0.0;
  /// Sensitivity Delta of the utility: max over candidates r and neighbouring datasets D, D' of
  /// |u(D, r) - u(D', r)|, in units of the utility; finite and > 0 (the default 0 is invalid: set it).
  double sensitivity = 0.0;
  /// True when, between any two neighbours, all utilities move in the same direction (adding a
  /// record never decreases any u(r), or never increases any; e.g. counting queries). The noise
  /// scale then halves: `Delta/eps` instead of `2*Delta/eps` (Dwork & Roth §3.4; McKenna & Sheldon).
  /// Default false. Setting it for a utility that is not monotone breaks the guarantee.
  bool monotone = false;
  /// Optional public bound B >= |u(r)| (>= |u(r) - utility_reference| when a reference is given)
  /// for every candidate and every possible dataset; 0 means none. With a bound the floating-point
  /// slack is computed from B, so it is data-independent and checked before any work, and a
  /// utility beyond B is an error. Without one the slack is computed from the data's largest
  /// |u - reference| and is itself data-dependent. Finite and >= 0; a bound so large that the slack
  /// would reach epsilon is refused (InvalidArgument) before any charge.
  double utility_bound = 0.0;
  /// Where the pass runs (default Backend::Auto). Does not change the result for a given key.
  Backend backend = Backend::Auto;
  /// The reference `ref` the scores are computed from: each noisy score is built from u(r) - ref,
  /// which leaves the distribution unchanged (every mechanism here is invariant to adding one
  /// constant to all utilities) and makes the floating-point error follow the utilities' spread
  /// around ref rather than their magnitude: utilities 10^15 + (2, 1, 0) keep their differences.
  /// - Given (a public value near the utilities, e.g. a known offset): it is used, and
  ///   utility_bound, if given, bounds |u(r) - ref| instead of |u(r)|, so the public slack follows
  ///   the spread.
  /// - Not given, with a utility_bound: ref = 0 (the bound speaks of |u(r)|).
  /// - Not given, without a bound: select() over an array (and mpi::select, the command, Python's
  ///   select) takes ref from the data, as the range's first utility (0 when it is not finite);
  ///   the slack, already data-dependent then, follows the spread around it. A Release begun with
  ///   begin_release, functor utilities, rows, top-k, pricing and quantiles use ref = 0: a
  ///   Release's shards must all use one ref before any is seen, so give utility_reference there
  ///   for large magnitudes.
  ///
  /// Finite when given (InvalidArgument otherwise). Give only a public value (one that does not
  /// change between neighbouring datasets): the slack of a given reference is derived for a fixed ref.
  std::optional<double> utility_reference;

  /// Checks the fields as every release checks them before anything is charged or drawn (the
  /// constraints above, and that a given utility_bound leaves a slack below epsilon), for callers
  /// that do work of their own before the release begins (a data engine's first look at its
  /// partitions, dpselect.dask).
  /// @throws InvalidArgument naming the field and its value.
  void validate() const;
};

/// The floating-point slack of one release: the computed mechanism is
/// (epsilon + slack.epsilon, slack.delta)-DP where the exact-arithmetic mechanism is epsilon-DP
/// (see host/selection/floating_point_slack.cpp for the derivation). It grows with the largest |utility|.
/// With SelectionParams::utility_bound it is computed from that public bound; without one it is
/// computed from the data (depends_on_data is true) and reveals the data's largest |utility|, so
/// do not publish it then.
struct FloatingPointSlack {
  /// The additive epsilon of the computed mechanism over the exact one: report it next to the
  /// release's epsilon. Always below that epsilon (a release whose slack would reach it is refused).
  double epsilon = 0.0;
  /// The delta of the computed mechanism. For a noisy-max release over n candidates it is
  /// `(1 + e^(epsilon + slack.epsilon)) * n * 2^-86`, where `n * 2^-86` bounds the probability that
  /// some uniform of the noise falls below 2^-88; the interval samplers of pricing and quantiles
  /// derive theirs the same way.
  double delta = 0.0;
  /// True when the slack was computed from the data (no public bound was given): it then reveals
  /// the data's largest |utility| (or, for pricing and quantiles, the best revenue or the number of
  /// values) and must not be published.
  bool depends_on_data = false;
};

}  // namespace dpselect
