// SPDX-License-Identifier: Apache-2.0
/// @file
/// The empirical privacy auditor: lower bounds on a mechanism's privacy loss from many
/// releases on two neighbouring inputs, the way StatDP (Ding et al., CCS 2018), DP-Sniper (Bichsel
/// et al., S&P 2021) and Google's DP stochastic tester check implementations.
///
/// For an output event E, a mechanism that is (eps, delta)-DP must satisfy
/// `P[M(D) in E] <= e^eps P[M(D') in E] + delta` and the same with D and D' exchanged.
/// Run N releases on D and N on D' (each from its own fixed-seed context), count how often each
/// event happens, and bound both probabilities with exact Clopper-Pearson intervals. Then
/// - `eps >= ln(lower(p_D) / upper(p_D'))` (pure DP; every event, both directions)
/// - `delta >= lower(p_D) - e^eps_claimed upper(p_D')` (approximate DP at the claimed eps)
///
/// hold with the stated confidence. Events are chosen first, from a separate selection run with
/// other seeds (the events with the most extreme estimated ratios), so the test run's bounds are
/// honest; the test run's 4 one-sided bounds per event are Bonferroni-corrected together, so the
/// reported maximum over all events and both directions holds jointly at `confidence`.
///
/// A mechanism passes when the lower bound does not exceed its claim: eps_lower <= eps for pure
/// mechanisms, delta_lower <= delta at the claimed eps for approximate ones. Passing is evidence,
/// not proof; failing (with the confidence stated) proves the implementation breaks its claim.
///
/// Host functions (host/audit/). The audits run on synthetic neighbouring inputs from fixed-seed
/// contexts: nothing here releases anything about real data or charges an accountant.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "dpselect/context.hpp"

namespace dpselect::audit {

// ---- Statistics --------------------------------------------------------------------------------

/// A closed interval [lower, upper] within [0, 1] bounding a probability.
struct Interval {
  double lower = 0.0;  ///< The lower bound; 0 by default (and when there are no successes).
  double upper = 1.0;  ///< The upper bound; 1 by default (and when every trial succeeded).
};

/// Exact (Clopper-Pearson) bounds on a binomial probability p from `successes` of `trials`: lower
/// is the largest p with P[Bin(trials, p) >= successes] <= alpha, upper the smallest p with
/// P[Bin(trials, p) <= successes] <= alpha (each bound one-sided at level alpha; together a
/// 1 - 2 alpha interval). Beta quantiles by bisection on the regularized incomplete beta, in long
/// double, each rounded outward. Throws InvalidArgument for trials 0, successes > trials, or
/// alpha outside (0, 1/2].
/// @param successes The number of successes; at most `trials`.
/// @param trials The number of trials; >= 1.
/// @param alpha The level of each one-sided bound; in (0, 1/2].
/// @return `{lower, upper}`, lower 0 when successes is 0 and upper 1 when successes == trials.
/// @throws InvalidArgument `trials` 0, `successes` > `trials`, or `alpha` outside (0, 1/2], named
///         with its value.
Interval clopper_pearson(std::uint64_t successes, std::uint64_t trials, double alpha);

/// The regularized incomplete beta I_x(a, b) (continued fraction, Numerical Recipes §6.4), in long
/// double; relative accuracy about 1e-15. For x in [0, 1], a, b > 0.
/// @param x The argument; x <= 0 gives 0 and x >= 1 gives 1.
/// @param a The first shape parameter; > 0 (not checked).
/// @param b The second shape parameter; > 0 (not checked).
/// @return I_x(a, b), in [0, 1] up to rounding. Never throws.
long double regularized_incomplete_beta(long double x, long double a, long double b);

// ---- Events and bounds -----------------------------------------------------------------------

/// A release's output reduced to one integer: the index a selection released, a code of the set of
/// indices a top-k or sparse vector released, the bin of a numeric output. Event = "key == e".
using OutputKey = std::int64_t;
/// How many releases gave each output key (keys never seen are absent).
using OutputCounts = std::unordered_map<OutputKey, std::uint64_t>;

/// The counts of one event, "output key == event", in the runs on D and on D'.
struct EventCounts {
  OutputKey event = 0;  ///< The output key that defines the event.
  std::uint64_t on_d = 0;        ///< releases on D with this output
  std::uint64_t on_d_prime = 0;  ///< releases on D' with this output
};

/// The lower bounds on the privacy loss from one event in one direction.
struct EventBound {
  OutputKey event = 0;  ///< The output key that defines the event.
  bool d_over_d_prime = true;  ///< the bound is for P[M(D) in E] / P[M(D') in E] (else the reverse)
  double p_d = 0.0;            ///< estimated probabilities (counts / runs)
  double p_d_prime = 0.0;      ///< The estimated probability on D' (count / runs).
  double epsilon_lower = 0.0;  ///< ln(lower / upper), or 0 when lower is 0
  double delta_lower = 0.0;    ///< lower - e^claimed_eps upper, or 0
};

/// The largest lower bounds over all events and both directions, and where they came from.
struct Bounds {
  double epsilon_lower = 0.0;  ///< max over events and directions (0 when no event shows any loss)
  double delta_lower = 0.0;    ///< max over events and directions, at claimed_epsilon
  /// the event and direction that gave epsilon_lower (default-constructed when it is 0)
  EventBound worst_epsilon;
  EventBound worst_delta;      ///< ... and delta_lower (default-constructed when it is 0)
};

/// The bounds above from the counts of `events` over `runs` releases on each input, jointly valid
/// with probability >= confidence (Bonferroni over the 4 one-sided bounds of every event).
/// Throws InvalidArgument for runs 0, a count above runs, confidence outside (0, 1), claimed_epsilon
/// negative or not finite.
/// @param events The events' counts; none above `runs`. Empty gives all-zero bounds.
/// @param runs The number of releases on each input; >= 1.
/// @param confidence The joint confidence of all the bounds; in (0, 1). Each one-sided
///        Clopper-Pearson bound is at level (1 - confidence) / (4 events.size()).
/// @param claimed_epsilon The epsilon at which delta_lower is computed; finite and >= 0.
/// @return The largest epsilon and delta lower bounds (each >= 0) and the events that gave them.
/// @throws InvalidArgument `runs` 0, `confidence` outside (0, 1), `claimed_epsilon` negative or not
///         finite, or a count above `runs`, named with its value.
Bounds privacy_loss_bounds(const std::vector<EventCounts>& events, std::uint64_t runs, double confidence,
                           double claimed_epsilon);

// ---- Audits ------------------------------------------------------------------------------------

/// One mechanism on one pair of neighbouring inputs.
struct AuditTarget {
  std::string mechanism;   ///< e.g. "exponential", "above-threshold"
  std::string neighbours;  ///< e.g. "one utility +Delta"
  double claimed_epsilon = 0.0;  ///< The epsilon the mechanism claims; finite and >= 0.
  /// The delta it claims; 0 for a pure claim (judged on epsilon_lower), > 0 for an approximate
  /// claim (judged on delta_lower at claimed_epsilon).
  double claimed_delta = 0.0;
  /// Makes `runs` releases on D (on_d_prime false) or D' (true) from `context` and adds 1 to
  /// counts[key] for each output. run_audit calls it several times on one context, in chunks of
  /// kAuditChunk releases (the last one shorter), so that it can report progress: the counts must
  /// not depend on that split (true when every release draws fresh streams from the context and
  /// any internal batch size divides kAuditChunk).
  std::function<void(bool on_d_prime, Context& context, std::uint64_t runs, OutputCounts& counts)> run;
};

/// Releases per call of AuditTarget::run (a multiple of the library's internal batch of 2^16).
inline constexpr std::uint64_t kAuditChunk = std::uint64_t{1} << 16;

/// How run_audit runs: the number of releases of each phase, the confidence, the number of events,
/// the seed, and an optional progress hook.
struct AuditOptions {
  std::uint64_t selection_runs = 20'000;  ///< per input, to choose the events (in [1, 2^40])
  std::uint64_t runs = 200'000;           ///< per input, to bound them (in [1, 2^40])
  double confidence = 0.95;  ///< The joint confidence of the bounds; in (0, 1).
  std::size_t max_events = 16;  ///< events carried from the selection run to the test run (>= 1)
  std::uint64_t seed = 1;       ///< fixed seeds derived from it: audits are reproducible
  /// Optional progress hook of run_audit: called on the calling thread with the releases made so
  /// far and the total, 2 (selection_runs + runs): once with done = 0 before the first release,
  /// after every chunk of at most kAuditChunk releases, and last with done == total. `done` never
  /// decreases. Rate-limited by the chunk size only: a caller that draws on a screen should limit
  /// its own redraws. An exception it throws ends the audit.
  std::function<void(std::uint64_t done, std::uint64_t total)> progress;
};

/// The outcome of run_audit for one target.
struct AuditResult {
  std::string mechanism;  ///< The target's mechanism name.
  std::string neighbours;  ///< The target's neighbour pattern.
  double claimed_epsilon = 0.0;  ///< The target's claimed epsilon.
  double claimed_delta = 0.0;  ///< The target's claimed delta (0: a pure claim).
  Bounds bounds;  ///< The test run's lower bounds, jointly valid at `confidence`.
  std::uint64_t runs = 0;  ///< Releases per input in the test run (options.runs).
  double confidence = 0.0;  ///< The joint confidence of `bounds` (options.confidence).
  std::size_t events_tested = 0;  ///< The number of events bounded (at most options.max_events).
  /// eps_lower <= claimed eps (pure claims) or delta_lower <= claimed delta (approximate claims),
  /// with a relative tolerance of 1e-9 for the rounding of the bounds.
  bool passed = false;
};

/// Selection run (selection_runs per input, seeds 2 seed and 2 seed + 1): keeps the max_events
/// keys with the largest |ln((count_D + 1) / (count_D' + 1))| among those seen at least 10 times
/// (plus the most frequent key, so an honest mechanism is tested on something). Test run (runs per
/// input, seeds 2 seed + 2 and 2 seed + 3): privacy_loss_bounds on those keys. Throws
/// InvalidArgument for bad options (naming the field) and whatever the target's run throws.
///
/// Each of the four runs uses its own `Context::with_fixed_seed(seed)` (ChaCha20) and calls
/// `target.run` in chunks of kAuditChunk releases, on the calling thread (the target may use
/// several threads inside). Reproducible for the same options. An exception from `target.run` or
/// from `options.progress` propagates and ends the audit.
/// @param target The mechanism, its claim and its release function (`run` must be set).
/// @param options The run sizes, confidence, number of events, seed and progress hook.
/// @return The claims, the bounds and whether the target passed.
/// @throws InvalidArgument `selection_runs` or `runs` 0 or above 2^40, `confidence` outside
///         (0, 1), `max_events` 0, or `target.run` empty, before any release; `claimed_epsilon`
///         negative or not finite, after the releases (from privacy_loss_bounds).
AuditResult run_audit(const AuditTarget& target, const AuditOptions& options);

// ---- The library's audits -----------------------------------------------------------------------

/// Every mechanism of the library on its neighbour patterns, at CI-friendly parameters (small
/// ranges, epsilon around 1), for `dpselect audit` and the table in docs/audit.md. Each target's
/// claim is the library's documented guarantee; every one must pass.
///
/// This list: EM, permute-and-flip, noisy max, top-k, pricing, rows.
/// @return The targets, each with its mechanism, neighbour pattern, claim and release function.
std::vector<AuditTarget> selection_audits();
/// The library's sparse vector audits: AboveThreshold, Sparse, NumericSparse (both algorithms), on
/// the neighbour patterns of StatDP (Ding et al., CCS 2018), at CI-friendly parameters.
/// @return The targets, each with its mechanism, neighbour pattern, claim and release function.
std::vector<AuditTarget> sparse_vector_audits();
/// The library's noise audits: Laplace, Gaussian, GG vectors; secure noise (x = 0 against
/// x = Delta in every coordinate; events: the bin of each released value).
/// @return The targets, each with its mechanism, neighbour pattern, claim and release function.
std::vector<AuditTarget> noise_audits();
/// The single quantile (both neighbour relations), JointExp, recursive splitting, independent
/// releases under basic composition.
/// @return The targets, each with its mechanism, neighbour pattern, claim and release function.
std::vector<AuditTarget> quantile_audits();
/// The library's partition selection audits: each strategy on a user with two keys nobody else holds
/// (max_partitions 2) and on a user added to a key of a few users (max_partitions 1), claimed at
/// (epsilon, delta + delta_float) and judged on delta.
/// @return The targets, each with its mechanism, neighbour pattern, claim and release function.
std::vector<AuditTarget> partition_selection_audits();
/// Every audit of the library: the five lists, in that order (selection_audits,
/// sparse_vector_audits, noise_audits, quantile_audits, partition_selection_audits).
/// @return The concatenated targets.
std::vector<AuditTarget> all_audits();

}  // namespace dpselect::audit
