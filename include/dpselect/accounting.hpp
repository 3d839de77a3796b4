// SPDX-License-Identifier: Apache-2.0
/// @file
/// Privacy accounting: how much (epsilon, delta) a sequence of releases spends, a thread-safe
/// budget that refuses a release before any noise is drawn, and how to split a budget.
///
/// Composition theorems (k releases on the same dataset, each chosen possibly adaptively from the
/// earlier outputs, with privacy parameters fixed in advance):
/// - basic: (sum eps_i, sum delta_i) (Dwork & Roth Thm 3.16);
/// - advanced: (eps sqrt(2k ln(1/delta')) + k eps (e^eps - 1), k delta + delta') (Dwork, Rothblum &
///   Vadhan 2010; Dwork & Roth Thm 3.20);
/// - optimal: the exact privacy profile of k eps-DP mechanisms (Kairouz, Oh & Viswanath 2015,
///   Thm 3.3);
/// - zCDP: rho = eps^2/2 (pure), eps^2/8 (exponential mechanism), rhos add, then (eps, delta)
///   (Bun & Steinke 2016 Prop 1.4, Lemma 1.7; Cesar & Rogers 2021 (eps-BR => eps^2/8-zCDP);
///   Canonne, Kamath & Steinke 2020 Prop 12 / Cor 13).
///
/// The optimal profile is tight: k-fold randomized response attains it, so no valid bound for
/// general eps-DP mechanisms lies below it. The exponential mechanism is eps-bounded-range, a
/// smaller class (randomized response at eps is only 2 eps-bounded-range), so its zCDP bound may
/// lie below the profile at eps; it never lies below the profile at eps/2, which randomized
/// response at eps/2 (an eps-bounded-range mechanism) attains.
///
/// Rounding: every bound is an upper bound of the exact value. Long computations (the optimal
/// profile, a sum of up to k terms; the zCDP conversions, an infimum; every inverse, an
/// iteration) carry a derived error margin and are rounded up. Closed forms of a few operations
/// (basic and advanced composition) are rounded to nearest, within a few units in the last place
/// (relative 1e-15), far below the floating-point slack each release reports (>= 2^-37).
///
/// Adaptively chosen parameters: the theorems above assume the sequence of (kind, epsilon,
/// delta) is fixed before the first release (the mechanisms themselves may adapt). If later
/// epsilons are chosen from earlier outputs, only basic composition is known to stay valid as a
/// stopping rule here (a privacy filter: Rogers, Roth, Ullman & Vadhan 2016, "Privacy odometers
/// and filters"); construct the accountant with ParameterChoice::adaptive.
///
/// The zCDP conversions (epsilon_from_zcdp, epsilon_from_zcdp_tight, delta_from_zcdp) also turn
/// the rho of a top-k release (TopKReport::rho) into (epsilon, delta).
///
/// Example:
/// @code{.cpp}
/// dpselect::PrivacyAccountant accountant({.epsilon = 1.0, .delta = 1e-6});
/// const double eps = dpselect::per_release_epsilon(100, 1.0, 1e-6, dpselect::ReleaseKind::exponential_mechanism);
/// for (int i = 0; i < 100; ++i) {
///   accountant.charge(dpselect::ReleaseKind::exponential_mechanism, eps);  // throws if over budget
///   // ... select(context, utilities, params with epsilon = eps) ...
/// }
/// accountant.spent();  // (<= 1, <= 1e-6), and which composition theorem gave it
/// @endcode
#pragma once

#include <cstdint>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

#include "dpselect/errors.hpp"
#include "dpselect/types.hpp"

namespace dpselect {

/// An (epsilon, delta)-DP guarantee: P[M(D) in S] <= e^epsilon P[M(D') in S] + delta for all
/// neighbouring D, D' and every set S of outputs.
struct PrivacyBound {
  double epsilon = 0.0;  ///< The privacy loss epsilon: finite and >= 0.
  double delta = 0.0;    ///< The failure probability delta: in [0, 1).
};

/// What one release guarantees, as the accountant needs to know it.
/// Selects the composition theorems that apply (an exponential-mechanism release composes more
/// tightly in zCDP than a general epsilon-DP one).
enum class ReleaseKind {
  /// epsilon-DP: Laplace or exponential noise, permute-and-flip, report-noisy-max with Laplace.
  pure,
  /// The exponential mechanism at epsilon (either scale, monotone or not; one pick of one-shot
  /// top-k): epsilon-DP and epsilon-bounded-range, hence (epsilon^2/8)-zCDP (Cesar & Rogers 2021).
  exponential_mechanism,
  /// (epsilon, delta)-DP for a delta in [0, 1).
  approximate,
};

/// Which composition theorem gave a bound.
enum class CompositionRoute {
  basic,                ///< sums (Dwork & Roth Thm 3.16)
  advanced,             ///< Dwork & Roth Thm 3.20
  optimal_homogeneous,  ///< Kairouz, Oh & Viswanath Thm 3.3
  zcdp,                 ///< rho added up, converted by Canonne, Kamath & Steinke Cor 13
};

/// What a selection with `mechanism` guarantees: exponential_mechanism for Mechanism::exponential,
/// pure for permute-and-flip and Laplace report-noisy-max.
/// @param mechanism A selection mechanism.
/// @return Its ReleaseKind.
/// @throws InvalidArgument for a value outside the enumeration.
ReleaseKind release_kind(Mechanism mechanism);

/// `count` releases of one kind and (epsilon, delta), charged together (1 <= count <= 2^53).
struct PrivacyCharge {
  ReleaseKind kind = ReleaseKind::pure;  ///< What each release guarantees.
  double epsilon = 0.0;  ///< Each release's epsilon: finite and > 0.
  double delta = 0.0;    ///< Each release's delta: 0 unless kind is approximate, then in [0, 1).
  std::uint64_t count = 1;  ///< How many such releases: 1 <= count <= 2^53.
};

/// The enumerator's name ("exponential_mechanism", ...), for messages and reports.
std::string_view to_string(ReleaseKind kind);
/// The enumerator's name ("optimal_homogeneous", ...), for messages and reports.
std::string_view to_string(CompositionRoute route);

/// A composed bound and the theorem that gave it.
struct AccountedBound {
  double epsilon = 0.0;  ///< The composed epsilon (an upper bound of the exact value).
  double delta = 0.0;    ///< The composed delta.
  CompositionRoute route = CompositionRoute::basic;  ///< The theorem that gave the smallest epsilon.
};

// ---- Composition of a list of releases --------------------------------------------------------

/// Basic composition (Dwork & Roth 2014, Thm 3.16): (sum eps_i, sum delta_i).
/// Each release needs epsilon finite and > 0, delta in [0, 1); at least one release. The sums are
/// compensated (Neumaier), so they do not depend on the order of the releases beyond an ulp.
/// @param releases The releases' guarantees.
/// @return The composed (epsilon, delta).
/// @throws InvalidArgument naming the first bad entry ("releases[3].epsilon ..."), or for an empty
///   list.
PrivacyBound basic_composition(std::span<const PrivacyBound> releases);

/// Advanced composition of k releases, each (epsilon, delta)-DP (Dwork, Rothblum & Vadhan 2010;
/// Dwork & Roth Thm 3.20): (epsilon sqrt(2 k ln(1/delta_slack)) + k epsilon (e^epsilon - 1),
/// k delta + delta_slack). 1 <= k <= 2^53; delta_slack in (0, 1). The delta of the result may
/// reach 1 (then the bound says nothing, but is still true).
/// @param k The number of releases.
/// @param per_release Each release's (epsilon, delta): epsilon finite and > 0, delta in [0, 1).
/// @param delta_slack The delta' the theorem trades for a smaller epsilon.
/// @throws InvalidArgument naming the parameter outside its range and its value.
PrivacyBound advanced_composition(std::uint64_t k, PrivacyBound per_release, double delta_slack);

// ---- Optimal composition of k epsilon-DP releases (Kairouz, Oh & Viswanath 2015) ------------

/// The exact privacy profile of k releases, each epsilon-DP: the smallest delta such that the k
/// releases together are (epsilon_total, delta)-DP for every choice of epsilon-DP mechanisms
/// (KOV Thm 3.3; attained by k-fold randomized response):
///   delta(eps_g) = sum_{l=0}^{k} C(k,l) p^(k-l) q^l max(0, 1 - e^(eps_g - (k-2l) eps)),
///   p = e^eps/(1+e^eps), q = 1/(1+e^eps).
/// Computed in log space (binomial terms by Loader's saddle-point form, long double), summed
/// outward from the largest term until a geometric tail bound is negligible, then rounded up by a
/// derived error margin: never below the exact value, above it by a relative 1e-12 at most for
/// k <= 10^6. O(sqrt(k)) terms. epsilon_total finite and >= 0 (0 gives the total variation
/// distance); 1 <= k <= 2^53.
/// @param k The number of releases.
/// @param epsilon Each release's epsilon: finite and > 0.
/// @param epsilon_total The epsilon at which to read the profile.
/// @return delta(epsilon_total), rounded up.
/// @throws InvalidArgument naming the parameter outside its range and its value.
double optimal_composition_delta(std::uint64_t k, double epsilon, double epsilon_total);

/// The inverse: the smallest epsilon_total with optimal_composition_delta(k, epsilon,
/// epsilon_total) <= delta_total, found by a bracketing root search on the monotone profile and
/// returned from the feasible side, so never below the exact value (within a relative 2^-40 of
/// it). delta_total in [0, 1); delta_total = 0 gives k epsilon (rounded up). 1 <= k <= 2^53;
/// epsilon finite and > 0.
/// @throws InvalidArgument naming the parameter outside its range and its value.
double optimal_composition_epsilon(std::uint64_t k, double epsilon, double delta_total);

// ---- Zero-concentrated DP ---------------------------------------------------------------------

/// rho of an epsilon-DP release: epsilon^2 / 2 (Bun & Steinke 2016, Prop 1.4).
/// @param epsilon Finite and > 0.
/// @throws InvalidArgument for another epsilon.
double zcdp_of_pure(double epsilon);
/// rho of the exponential mechanism at epsilon: epsilon^2 / 8 (it is epsilon-bounded-range;
/// Cesar & Rogers 2021, "Bounding, concentrating, and truncating": eps-bounded-range implies
/// (eps^2/8)-zCDP). zCDP composes by adding rho (Bun & Steinke 2016, Lemma 1.7).
/// @param epsilon Finite and > 0.
/// @throws InvalidArgument for another epsilon.
double zcdp_of_exponential_mechanism(double epsilon);

/// The smallest delta such that rho-zCDP implies (epsilon, delta)-DP by Canonne, Kamath & Steinke
/// 2020 (Cor 13): inf over alpha > 1 of exp((alpha-1)(alpha rho - epsilon))/(alpha-1) (1-1/alpha)^alpha,
/// and never more than sqrt(1 - e^-rho) (total variation via Bretagnolle-Huber, KL <= rho).
/// Rounded up; rho finite and > 0, epsilon finite and >= 0.
/// @throws InvalidArgument naming the parameter outside its range and its value.
double delta_from_zcdp(double rho, double epsilon);

/// The smallest epsilon such that rho-zCDP implies (epsilon, delta)-DP by the same conversion:
/// inf over alpha > 1 of alpha rho + (ln(1/delta) + (alpha-1) ln(1 - 1/alpha) - ln alpha)/(alpha-1),
/// or 0 when delta >= sqrt(1 - e^-rho). Never larger than epsilon_from_zcdp (below), the
/// plain rho + 2 sqrt(rho ln(1/delta)) of Bun & Steinke. Rounded up; rho finite and > 0, delta in (0, 1).
/// @throws InvalidArgument naming the parameter outside its range and its value.
double epsilon_from_zcdp_tight(double rho, double delta);

/// (epsilon, delta)-DP implied by rho-zCDP: rho + 2 sqrt(rho ln(1/delta)) (Bun & Steinke 2016,
/// Prop 1.3). epsilon_from_zcdp_tight is never larger.
/// @param rho The zCDP parameter: finite and > 0.
/// @param delta In (0, 1).
/// @return The epsilon, for that delta.
/// @throws InvalidArgument naming the parameter outside its range and its value.
double epsilon_from_zcdp(double rho, double delta);

// ---- The best bound for k equal releases ------------------------------------------------------

/// The bound the accountant reports after k releases of `kind` (pure or exponential_mechanism),
/// each at epsilon, with delta_budget the delta it may use: the smallest epsilon over basic,
/// advanced and optimal composition (the releases are epsilon-DP) and zCDP converted at
/// delta_budget. The delta of the result is 0 for basic composition and delta_budget otherwise.
/// 1 <= k <= 2^53; epsilon finite and > 0; delta_budget in [0, 1).
/// @throws InvalidArgument naming the parameter outside its range and its value (also for kind
///   approximate).
AccountedBound compose_homogeneous(std::uint64_t k, double epsilon, ReleaseKind kind, double delta_budget);

// ---- Splitting a budget -----------------------------------------------------------------------

/// epsilon_total / k, rounded down so that k copies sum (in any order) to at most epsilon_total:
/// the exact k * share is at most epsilon_total (1 - 2^-50). 1 <= k <= 2^53; epsilon_total finite
/// and > 0.
/// @throws InvalidArgument naming the parameter outside its range and its value, or when the share
///   would round to 0.
double split_evenly(double epsilon_total, std::uint64_t k);

/// Shares of epsilon_total proportional to the weights (each finite and > 0), scaled so that their
/// sum, in any order, is at most epsilon_total (within a relative 2^-50 below it). Throws
/// InvalidArgument when a weight is so small next to the largest that its share rounds to 0, for
/// an empty list, and naming the first bad weight ("weights[2] ...").
std::vector<double> split_by_weights(double epsilon_total, std::span<const double> weights);

/// The largest per-release epsilon such that k releases of `kind` (pure or exponential_mechanism)
/// stay within (target_epsilon, target_delta) by compose_homogeneous, i.e. by the best theorem the
/// accountant uses: charging it k times into a PrivacyAccountant with that budget succeeds. Found
/// by bisection from the basic split (always feasible) to within a relative 2^-40. O(sqrt(k)) per
/// step through the optimal profile. 1 <= k <= 2^53; target_epsilon finite and > 0; target_delta
/// in [0, 1).
/// @throws InvalidArgument naming the parameter outside its range and its value (also for kind
///   approximate).
double per_release_epsilon(std::uint64_t k, double target_epsilon, double target_delta, ReleaseKind kind);

// ---- The accountant ---------------------------------------------------------------------------

/// Whether the releases' parameters are fixed before the first release (every theorem applies) or
/// may be chosen from earlier outputs (only basic composition, a valid privacy filter).
enum class ParameterChoice {
  fixed_in_advance,  ///< Every (kind, epsilon, delta) is fixed before the first release.
  adaptive,          ///< Later parameters may depend on earlier outputs: basic composition only.
};

namespace detail {

/// A running sum with Neumaier's compensation: order-independent to about an ulp.
struct CompensatedSum {
  double sum = 0.0;
  double compensation = 0.0;
  void add(double value);
  double value() const { return sum + compensation; }
};

/// What the composition routes need to know about the releases charged so far.
struct ReleaseLedger {
  std::uint64_t pure_count = 0;
  std::uint64_t exponential_count = 0;
  std::uint64_t approximate_count = 0;
  /// True while every pure and exponential-mechanism release has the same epsilon (shared_epsilon).
  bool one_epsilon = true;
  double shared_epsilon = 0.0;
  CompensatedSum dp_epsilon;  ///< pure and exponential-mechanism epsilons
  CompensatedSum rho;         ///< their zCDP
  CompensatedSum approximate_epsilon;
  CompensatedSum approximate_delta;

  void add(ReleaseKind kind, double epsilon, double delta, std::uint64_t count = 1);
};

/// The best bound over the routes `choice` allows for the releases in `ledger`: the smallest
/// epsilon, with the routes that trade delta for epsilon using all of budget.delta that approximate
/// releases leave. budget.epsilon (+inf for none) only seeds the search of the optimal route.
AccountedBound best_bound(const ReleaseLedger& ledger, const PrivacyBound& budget, ParameterChoice choice);

/// Whether some route `choice` allows bounds the releases in `ledger` within `budget`: the same
/// computations best_bound reports, cheapest first, with the optimal profile evaluated once at the
/// leftover epsilon instead of inverted. When it says yes, best_bound reports a bound within budget.
bool fits_budget(const ReleaseLedger& ledger, const PrivacyBound& budget, ParameterChoice choice);

}  // namespace detail

/// A total privacy budget and the releases charged against it. Charge each release before any of
/// its noise is drawn; a charge that would take the best bound (detail::best_bound over every
/// route `choice` allows) beyond the budget in epsilon or in delta throws BudgetExceeded and
/// records nothing. All member functions may be called from several threads at once (one mutex).
///
/// Cost: a charge checks the cheap routes first (basic, advanced, zCDP: microseconds to 0.2 ms) and
/// evaluates the optimal profile once, O(sqrt(k)), only when they all say no; spent() inverts the
/// profile (O(sqrt(k)) per step, about 0.1 s at k = 10^6) the first time it is called after a charge.
class PrivacyAccountant {
 public:
  /// budget.epsilon finite and > 0; budget.delta in [0, 1). Throws InvalidArgument.
  explicit PrivacyAccountant(PrivacyBound budget, ParameterChoice choice = ParameterChoice::fixed_in_advance);

  PrivacyAccountant(const PrivacyAccountant&) = delete;
  PrivacyAccountant& operator=(const PrivacyAccountant&) = delete;

  /// Records one release of `kind` at epsilon (finite and > 0) and delta (0 for pure and
  /// exponential-mechanism releases; in [0, 1) for approximate ones). Throws InvalidArgument for
  /// bad parameters and BudgetExceeded when over budget; in both cases nothing is recorded.
  void charge(ReleaseKind kind, double epsilon, double delta = 0.0);
  /// Records every release in `charges` or none of them: the budget check covers them together
  /// (a top-k release of k picks, one release per row of a matrix). Throws InvalidArgument naming
  /// the first bad entry ("charges[2].epsilon ..."), or BudgetExceeded; nothing is recorded then.
  void charge(std::span<const PrivacyCharge> charges);

  /// The best bound on everything charged so far ((0, 0) by basic composition before the first
  /// charge); within the budget. Routes that trade delta for epsilon (advanced, optimal, zCDP) use
  /// all of the delta budget that approximate releases left, so their delta is the budget's.
  AccountedBound spent() const;

  /// The budget given at construction.
  PrivacyBound budget() const { return budget_; }
  /// The ParameterChoice given at construction.
  ParameterChoice parameter_choice() const { return choice_; }
  /// The number of releases charged so far (a PrivacyCharge of count n counts n).
  std::uint64_t release_count() const;

 private:
  const PrivacyBound budget_;
  const ParameterChoice choice_;
  mutable std::mutex mutex_;
  detail::ReleaseLedger ledger_;
  /// spent() computes the bound on demand and keeps it until the next charge.
  mutable AccountedBound spent_;
  mutable bool spent_is_current_ = true;
};

}  // namespace dpselect
