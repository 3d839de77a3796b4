// SPDX-License-Identifier: Apache-2.0
/// @file
/// Private partition selection: which keys of an unknown domain (search queries, URLs, product
/// ids taken from the users' own data) may appear in a released histogram. Each user contributes
/// to at most `max_partitions` distinct keys; a key held by n users is kept with a probability
/// p(n) that a strategy fixes in advance, and p is what makes the release (epsilon, delta)-DP:
/// between neighbours that add or remove one user, every key's n moves by at most 1, and
///
///     p(n + 1) <= e^eps' p(n) + delta'   and   1 - p(n) <= e^eps' (1 - p(n + 1)) + delta'
///
/// for every n >= 0 (p(0) = 0: a key nobody holds is never released), with eps' and delta' the
/// per-key share of the budget for one user's `max_partitions` keys.
///
/// The strategies (PartitionStrategy) and their keep probabilities, exact functions of n:
/// - truncated_geometric: the largest p satisfying the two inequalities, in the closed form of
///   Desfontaines, Voss, Gipson & Mandayam 2022, "Differentially private partition selection",
///   Thm 1; per key eps' = eps / max_partitions, delta' = delta / max_partitions (basic
///   composition over the user's keys, Dwork & Roth 2014, Thm 3.16).
/// - laplace_threshold: keep iff n + Lap(b) > T, b = max_partitions / eps (the count vector's L1
///   sensitivity over eps), T = 1 - b ln(2 delta') so that a key only one user holds passes with
///   probability delta' = 1 - (1 - delta)^(1 / max_partitions): the user's keys' noises are
///   independent, so one of them passes with probability at most delta (Korolova, Kenthapadi,
///   Mishra & Ntoulas 2009; Wilson, Zhang, Lam, Desfontaines, Simmons-Marengo & Gipson 2020,
///   "Differentially private SQL with bounded user contribution").
/// - gaussian_threshold: keep iff n + N(0, sigma^2) > T, sigma the analytic Gaussian sigma at
///   (eps, delta / 2) for the L2 sensitivity sqrt(max_partitions) (Balle & Wang 2018), T = 1 +
///   sigma Phi^-1(1 - delta_t) with delta_t = 1 - (1 - delta / 2)^(1 / max_partitions) for the
///   other half of delta (Wilson et al. 2020).
///
/// Every strategy needs delta > 0: with delta = 0 a key only one user holds can never be
/// released, and then no key can.
#pragma once

#include <cstdint>

namespace dpselect {

/// How a key's number of users decides whether it is released (sources in the file comment).
enum class PartitionStrategy : std::uint8_t {
  truncated_geometric,  ///< the optimal keep probability for (eps, delta) (Desfontaines et al. 2022)
  laplace_threshold,    ///< a noisy count above a threshold, Laplace noise (Korolova et al. 2009)
  gaussian_threshold,   ///< a noisy count above a threshold, Gaussian noise (Wilson et al. 2020)
};

/// The parameters of one partition selection.
struct PartitionSelectionParams {
  /// The privacy loss of the whole selection; finite and > 0.
  double epsilon = 0.0;
  /// Its delta; in (0, 1).
  double delta = 0.0;
  /// The most distinct keys one user contributes to (each user's keys beyond it are dropped at
  /// random before counting); >= 1.
  std::uint64_t max_partitions = 1;
  /// The keep rule.
  PartitionStrategy strategy = PartitionStrategy::truncated_geometric;

  /// Checks every field.
  /// @throws InvalidArgument naming the first bad field and its value: epsilon not finite and
  ///         > 0, delta not in (0, 1), max_partitions 0.
  void validate() const;
};

/// What a strategy computes from its parameters alone (public): the per-key budget, the noise and
/// the threshold of the thresholding strategies, and the number of users from which a key is kept
/// for certain.
struct PartitionKeepRule {
  /// eps' of each key: eps / max_partitions (truncated_geometric, laplace_threshold), or eps, the
  /// Gaussian noise's over the user's keys together (gaussian_threshold).
  double key_epsilon = 0.0;
  /// delta' of each key: delta / max_partitions (truncated_geometric), the probability that a key
  /// only one user holds passes the threshold (the thresholding strategies).
  double key_delta = 0.0;
  double noise_scale = 0.0;  ///< Laplace b or Gaussian sigma; 0 for truncated_geometric
  double threshold = 0.0;    ///< T of the thresholding strategies; 0 for truncated_geometric
  /// truncated_geometric: n1, the last n at which p grows geometrically (p(n) = e^eps' p(n - 1) +
  /// delta'); 0 for the others.
  double geometric_until = 0.0;
  /// truncated_geometric: the least n with p(n) = 1; the thresholding strategies: 0 (never certain).
  std::uint64_t always_kept = 0;
};

/// The strategy's rule for these parameters.
/// @param params The selection's parameters (validated).
/// @return The per-key budget, noise scale, threshold and certainty point.
/// @throws InvalidArgument as PartitionSelectionParams::validate.
PartitionKeepRule partition_keep_rule(const PartitionSelectionParams& params);

/// The probability that a key held by `users` distinct users (after contribution bounding) is
/// released: 0 for 0 users, non-decreasing in `users`.
/// @param params The selection's parameters (validated).
/// @param users The key's number of distinct users.
/// @return p(users), in [0, 1].
/// @throws InvalidArgument as PartitionSelectionParams::validate.
double keep_probability(const PartitionSelectionParams& params, std::uint64_t users);
/// The same, from a rule already computed (no validation: a rule from partition_keep_rule).
/// @param rule The strategy's rule (partition_keep_rule).
/// @param strategy The strategy the rule was computed for.
/// @param users The key's number of distinct users.
/// @return p(users), in [0, 1].
double keep_probability(const PartitionKeepRule& rule, PartitionStrategy strategy, std::uint64_t users);

}  // namespace dpselect
