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
enum class Mechanism {
  /// Exponential mechanism: P(r) proportional to exp(eps * u(r) / (2 * Delta)), sampled exactly
  /// as arg-max of eps*u/(2*Delta) + Gumbel noise (Dwork & Roth 2014, Def. 3.4, Thm 3.10).
  exponential,
  /// Permute-and-flip (McKenna & Sheldon 2020) = report-noisy-max with one-sided exponential
  /// noise of scale 2*Delta/eps (Ding et al. 2021). Never worse than the EM in expected utility.
  permute_and_flip,
  /// Report-noisy-max with Laplace noise of scale 2*Delta/eps: Dwork & Roth Claim 3.9 proves
  /// Lap(Delta/eps) for monotone (counting) utilities; the same proof with shifts of up to Delta
  /// in both directions gives 2*Delta/eps in general.
  laplace_noisy_max,
};

/// Where to compute. Auto uses the GPU when one is usable and the CPU otherwise; the report
/// says which ran.
enum class Backend { Auto, Cpu, Gpu };

/// What actually ran a release (a sharded release may use both).
enum class ExecutedOn : std::uint8_t { none = 0, cpu = 1, gpu = 2, cpu_and_gpu = 3 };

std::string_view to_string(Mechanism mechanism);
std::string_view to_string(Backend backend);
std::string_view to_string(ExecutedOn executed_on);

/// The privacy parameters of one selection.
struct SelectionParams {
  Mechanism mechanism = Mechanism::exponential;
  /// Privacy loss of this release; finite and > 0.
  double epsilon = 0.0;
  /// Sensitivity Delta of the utility: max over candidates r and neighbouring datasets D, D' of
  /// |u(D, r) - u(D', r)|; finite and > 0.
  double sensitivity = 0.0;
  /// True when, between any two neighbours, all utilities move in the same direction (adding a
  /// record never decreases any u(r), or never increases any; e.g. counting queries). The noise
  /// scale then halves: Delta/eps instead of 2*Delta/eps (Dwork & Roth §3.4; McKenna & Sheldon).
  bool monotone = false;
  /// Optional public bound B >= |u(r)| (>= |u(r) - utility_reference| when a reference is given)
  /// for every candidate and every possible dataset; 0 means none. With a bound the floating-point
  /// slack is computed from B, so it is data-independent and checked before any work, and a
  /// utility beyond B is an error. Without one the slack is computed from the data's largest
  /// |u - reference| and is itself data-dependent.
  double utility_bound = 0.0;
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
  std::optional<double> utility_reference;
};

/// The floating-point slack of one release: the computed mechanism is
/// (epsilon + slack.epsilon, slack.delta)-DP where the exact-arithmetic mechanism is epsilon-DP
/// (see host/engine/floating_point_slack.cpp for the derivation). It grows with the largest |utility|.
/// With SelectionParams::utility_bound it is computed from that public bound; without one it is
/// computed from the data (depends_on_data is true) and reveals the data's largest |utility|, so
/// do not publish it then.
struct FloatingPointSlack {
  double epsilon = 0.0;
  double delta = 0.0;
  bool depends_on_data = false;
};

}  // namespace dpselect
