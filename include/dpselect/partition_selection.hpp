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
///
/// The weighted strategies give each key a weight rather than a count: a user keeping t keys adds
/// at most 1 to the L2 norm of the weight vector, however it spreads it, so a user with one key
/// pushes it as far as a count would and a user with many keys spends its budget where it helps.
/// A key of weight w is released with probability P(w + N(0, sigma^2) > rho) (weighted_keep_probability).
/// - weighted_gaussian: each of a user's t keys gets weight 1/sqrt(t); sigma the analytic Gaussian
///   sigma at (eps, delta / 2) for L2 sensitivity 1 (Balle & Wang 2018), rho = max over t <= m of
///   1/sqrt(t) + sigma Phi^-1((1 - delta / 2)^(1/t)), so that a user's keys nobody else holds (t
///   of them, weight 1/sqrt(t) each) pass with probability at most delta / 2 (Gopi, Gulhane,
///   Kulkarni, Shen, Shokouhi & Yekhanin 2020, "Differentially private set union", the Weighted
///   Gaussian mechanism).
/// - policy_gaussian: the users in a random order (by the release's stream), each spending an L2
///   budget of 1 on its keys still below the cutoff Gamma = rho + policy_cutoff_sigmas sigma: the
///   gaps g = Gamma - w of those keys grow their weights by min(1, |g|_2) g / |g|_2 (L2 descent);
///   sigma and rho as for weighted_gaussian. The update is L2-contractive, so one user moves the
///   weight vector by at most 1 in L2, and its keys nobody else holds share one gap each, so they
///   get at most 1/sqrt(t) each (Gopi et al. 2020, the Policy Gaussian mechanism with L2 descent).
/// - dp_sips: weighted_gaussian in `rounds` rounds, each on the pairs whose keys no earlier round
///   released (every user bounded again to m of its remaining keys); round i of R gets the share
///   f_i proportional to round_budget_ratio^(R - 1 - i) of the budget: sigma_i = sigma / sqrt(f_i)
///   and a threshold for delta_i = f_i delta / 2, sigma the analytic Gaussian sigma at
///   (eps, delta / 2). The rounds' Gaussian noises compose to one of sigma (Gaussian differential
///   privacy composes as mu^2 = sum mu_i^2, Dong, Roth & Su 2022, Cor. 3.3; and sigma is
///   (eps, delta / 2)-DP, Balle & Wang 2018, Thm 8) and the thresholds' delta_i add up to delta / 2
///   (Swanberg, Desfontaines & Haney 2023, "DP-SIPS: a simpler, more scalable mechanism for
///   differentially private partition selection").
///
/// Every strategy needs delta > 0: with delta = 0 a key only one user holds can never be
/// released, and then no key can.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dpselect/context.hpp"
#include "dpselect/random_key.hpp"
#include "dpselect/types.hpp"

namespace dpselect {

/// How a key's number of users decides whether it is released (sources in the file comment).
enum class PartitionStrategy : std::uint8_t {
  truncated_geometric,  ///< the optimal keep probability for (eps, delta) (Desfontaines et al. 2022)
  laplace_threshold,    ///< a noisy count above a threshold, Laplace noise (Korolova et al. 2009)
  gaussian_threshold,   ///< a noisy count above a threshold, Gaussian noise (Wilson et al. 2020)
  weighted_gaussian,    ///< a noisy weight above a threshold, weights 1/sqrt(t) (Gopi et al. 2020)
  policy_gaussian,      ///< weights spent on the keys still below a cutoff (Gopi et al. 2020)
  dp_sips,              ///< weighted_gaussian in rounds of growing budget (Swanberg et al. 2023)
};

/// The strategy's name: "truncated-geometric", "laplace", "gaussian", "weighted-gaussian",
/// "policy-gaussian" or "dp-sips" (the names `dpselect keys --strategy` takes); "unknown" for a
/// value outside the enumeration.
/// @param strategy Any value.
/// @return A view of a static string.
std::string_view to_string(PartitionStrategy strategy);

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
  /// Where the pairs are sorted, bounded and decided: Auto (the GPU when one is usable), Cpu or
  /// Gpu (BackendUnavailable without one). Every backend releases the same keys for the same key
  /// and stream.
  Backend backend = Backend::Auto;
  /// dp_sips: the number of rounds, in [1, kMaxPartitionRounds].
  std::uint32_t rounds = 3;
  /// dp_sips: each round's share of the budget over the next round's, in (0, 1] (1: equal
  /// shares; smaller: the later rounds, which see fewer keys, get more of the budget).
  double round_budget_ratio = 0.3;
  /// policy_gaussian: how many sigma above the threshold rho the cutoff Gamma lies, finite and
  /// >= 0 (a user stops spending on a key whose weight reached Gamma).
  double policy_cutoff_sigmas = 3.0;
  /// A public minimum count: a key that fewer than pre_threshold users hold (after contribution
  /// bounding) is never released; >= 1 (1: no minimum). The count strategies keep a key of n >=
  /// pre_threshold users with the probability of n - pre_threshold + 1 users, so it costs no budget
  /// and leaves epsilon, delta and delta_float as they are: the shifted count max(0, n -
  /// pre_threshold + 1) moves by at most 1 when n does and is 0 where n is, so the shifted counts
  /// of neighbouring datasets differ as the counts of two neighbouring datasets do, which is all
  /// the strategies' guarantees assume (Desfontaines et al. 2022, Sec. 3; Wilson et al. 2020).
  /// The weighted strategies take 1 only: their weights are not counts.
  std::uint64_t pre_threshold = 1;

  /// Checks every field.
  /// @throws InvalidArgument naming the first bad field and its value: epsilon not finite and
  ///         > 0, delta not in (0, 1), max_partitions 0 (or above kMaxWeightedPartitions for a
  ///         weighted strategy), rounds out of range, round_budget_ratio not in (0, 1],
  ///         policy_cutoff_sigmas not finite and >= 0, a backend other than Auto or Cpu for a
  ///         weighted strategy (they run on the CPU), pre_threshold 0, or above 1 for a weighted
  ///         strategy.
  void validate() const;
};

/// The most rounds of dp_sips.
inline constexpr std::uint32_t kMaxPartitionRounds = 16;
/// The largest max_partitions of the weighted strategies (their threshold is a maximum over every
/// t <= max_partitions).
inline constexpr std::uint64_t kMaxWeightedPartitions = std::uint64_t{1} << 16;

/// Whether the strategy weighs keys (weighted_gaussian, policy_gaussian, dp_sips) rather than
/// counting their users.
/// @param strategy Any value.
/// @return true for the weighted strategies.
bool is_weighted(PartitionStrategy strategy);

/// One round of a weighted strategy: a key of weight w is released with probability
/// P(w + N(0, noise_scale^2) > threshold).
struct WeightedRound {
  double budget_share = 1.0;  ///< f_i, the round's share of the budget (1 for one round)
  double noise_scale = 0.0;   ///< sigma_i
  double threshold = 0.0;     ///< rho_i
  /// delta_i: the most probability with which any of one user's keys that nobody else holds
  /// passes this round's threshold.
  double key_delta = 0.0;
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
  /// params.pre_threshold. geometric_until, always_kept and the threshold above count the users
  /// beyond pre_threshold - 1: a key of n users is kept as one of n - pre_threshold + 1 would be
  /// without a minimum (never below pre_threshold).
  std::uint64_t pre_threshold = 1;
  /// The weighted strategies' rounds (one but for dp_sips; the count strategies: none). For
  /// weighted_gaussian and policy_gaussian noise_scale, threshold and key_delta above are the
  /// round's; for dp_sips they are sigma (the rounds' noises composed), 0 and delta / 2.
  std::vector<WeightedRound> rounds;
  /// policy_gaussian: the cutoff Gamma; 0 for the others.
  double policy_cutoff = 0.0;
};

/// The strategy's rule for these parameters.
/// @param params The selection's parameters (validated).
/// @return The per-key budget, noise scale, threshold and certainty point.
/// @throws InvalidArgument as PartitionSelectionParams::validate, and for laplace_threshold an epsilon
///         so small that max_partitions / epsilon overflows.
PartitionKeepRule partition_keep_rule(const PartitionSelectionParams& params);

/// The probability that a key held by `users` distinct users (after contribution bounding) is
/// released: 0 for 0 users, non-decreasing in `users`. For a weighted strategy, where the release
/// depends on what else the users hold, the probability for users that hold no other key (weight
/// `users`; policy_gaussian: min(users, Gamma); dp_sips: not released in any round before).
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

/// The probability that a key of weight `weight` is released in a weighted round:
/// P(weight + N(0, sigma^2) > rho), 0 for a weight <= 0 (a key nobody holds).
/// @param round A round of partition_keep_rule(params).rounds.
/// @param weight The key's weight.
/// @return The probability, in [0, 1], non-decreasing in the weight.
double weighted_keep_probability(const WeightedRound& round, double weight);

/// What a partition selection did.
struct PartitionSelectionReport {
  PartitionSelectionParams params;  ///< the parameters it ran with
  PartitionKeepRule rule;           ///< the strategy's rule (public: a function of the parameters)
  /// The delta the rounding of the keep probabilities may add to the guarantee. The count
  /// strategies keep a key when a 53-bit uniform integer falls below floor(p 2^53), which is never
  /// more likely than p and at most 2^-53 less likely. truncated_geometric and laplace_threshold:
  /// each of a user's keys may lose e^eps' 2^-53 on its inequalities, max_partitions e^eps' 2^-53
  /// in all; gaussian_threshold: the release on the user's keys moves by at most
  /// max_partitions 2^-53 in total variation on either side, (1 + e^eps) max_partitions 2^-53.
  /// The weighted strategies break ties of the 53 bits with further bits (the streams after
  /// `stream`), so each key is kept with exactly its computed probability: 0.
  double delta_float = 0.0;
  std::uint64_t stream = 0;      ///< the first stream the selection drew from its context
  /// The consecutive streams drawn from `stream` on: 1 for the count strategies, 9 a round for
  /// the weighted ones (the bounding and the coins, then the coins' tie bits).
  std::uint64_t streams = 1;
  Generator generator = Generator::chacha20;  ///< the generator of that stream
  ExecutedOn executed_on = ExecutedOn::cpu;   ///< where the pairs were sorted, bounded and decided
  /// The number of distinct keys after contribution bounding. NOT PRIVATE: a count of the data's
  /// keys; for diagnostics, never published with the release.
  std::uint64_t keys_considered = 0;
};

/// The released keys (ascending) and the report.
struct PartitionSelection {
  std::vector<std::uint64_t> keys;  ///< the released keys, each a key of the data, ascending
  PartitionSelectionReport report;  ///< what the selection did
};

/// One private partition selection over (user, key) contributions in host memory, on
/// params.backend (the CPU's cores or the GPU, the same keys either way): pair i says that
/// user `users[i]` contributes to key `keys[i]` (repeated pairs count once). Each user keeps at most
/// params.max_partitions of its distinct keys, chosen uniformly at random with the release's
/// stream; each key's number of distinct users n is then counted, and the key is released with
/// probability keep_probability(params, n).
///
/// Randomness (counter-based, from the stream the selection draws, by the identity of each user
/// and key rather than its place in any order): a user u over the bound keeps the first
/// max_partitions keys of a partial Fisher-Yates shuffle of its distinct keys in ascending order,
/// step i drawing its offset exactly (Lemire's multiply-and-reject) from the first 64 bits of
/// block mix(u) + i 2^20 + attempt (mix the SplitMix64 finalizer, a bijection); key k is kept when
/// the top 53 bits of the last 64 bits of block k fall below floor(p 2^53). So a fixed seed gives
/// the same keys on every machine, at every thread count, and however the pairs are split among
/// processes (mpi::select_partitions).
///
/// The weighted strategies run on the CPU, in the same layout, each round on its own nine streams
/// (round r of dp_sips from stream + 9 r): the bounding and the coins on the first, the coin's
/// 53 bits compared with p 2^53 and, on a tie (probability 2^-53), the fraction compared with the
/// next 64-bit words of block k, words 0-1 then 2-3 of each of the other eight streams in turn,
/// which is an exact Bernoulli(p) for every double p. Weights are summed in a fixed order (a
/// key's users by ascending number of kept keys), so they too are the same at every thread count.
/// policy_gaussian takes its users in ascending order of the first 64 bits of block mix(u) - 2^20
/// (ties by id), a block no draw of u's own bounding uses, and updates them one after another,
/// each user's kept keys in ascending order.
/// @param context The source of the selection's stream and its accountant.
/// @param users The user of each contribution (any 64-bit ids).
/// @param keys The key of each contribution (any 64-bit ids; the released set holds some of them).
/// @param params The selection's parameters.
/// @return The released keys and the report.
/// @throws InvalidArgument before anything is charged or drawn: bad params (as
///         PartitionSelectionParams::validate), users and keys of different lengths, or no
///         contributions.
/// @throws BudgetExceeded when the context's accountant refuses the release; nothing drawn.
/// @throws BackendUnavailable for Backend::Gpu without a usable CUDA device, before the charge.
/// @throws CudaError when the GPU pass fails (a device error, or memory that other code took
///         during the call: the pass sizes its chunks by the device's free memory at the start);
///         the release stays charged.
/// @par Memory (Backend::Gpu)
/// About 48 bytes of device memory a pair at the peak. Pairs beyond what the device has free go in
/// chunks of whole users (grouped by a hash of the user on the host, about 32 more bytes of host
/// memory a pair), each chunk's kept keys brought back to the host and, where they do not fit the
/// device either, decided in chunks of whole keys; the released keys are the same.
/// @par Privacy
/// (epsilon, delta + report.delta_float)-DP between datasets that add or remove one user (with all
/// of their contributions): the keep probability meets the per-key inequalities of the file
/// comment, and one user changes the user counts of at most max_partitions keys by one each
/// (Desfontaines et al. 2022, Sec. 3; Korolova et al. 2009; Wilson et al. 2020). The weighted
/// strategies: one user moves the weight vector of the keys others hold by at most 1 in L2, and
/// its own keys pass with probability at most delta / 2 (Gopi et al. 2020; Swanberg et al. 2023).
/// Their analysis is of exact weights and the exact Gaussian tail; the passes compute both in
/// double precision (relative errors of a few units of 2^-53 each), as every floating-point
/// implementation of these mechanisms does, and delta_float does not count that error (for
/// policy_gaussian, whose contraction may move the weight of any key, it concerns every key). The context's accountant is charged
/// one approximate release at (epsilon, delta), before the stream is drawn.
PartitionSelection select_partitions(Context& context, std::span<const std::uint64_t> users,
                                     std::span<const std::uint64_t> keys, const PartitionSelectionParams& params);

/// select_partitions over pairs already in device memory (the current device's, or any memory it
/// can read), ordered on `stream`, which is synchronized before the call returns: sorted, bounded
/// and decided on the GPU, the same keys as over the same pairs in host memory. params.backend
/// must be Auto or Gpu.
/// @param context The source of the selection's stream and its accountant.
/// @param users The user of each contribution, in device memory.
/// @param keys The key of each contribution, in device memory, as many.
/// @param params The selection's parameters.
/// @param stream A stream of the current device (nullptr: the legacy default stream).
/// @return The released keys (in host memory) and the report.
/// @throws InvalidArgument as the host select_partitions, Backend::Cpu, or memory the device
///         cannot read, before the charge.
/// @throws BackendUnavailable without a usable CUDA device, before the charge.
/// @throws BudgetExceeded when the context's accountant refuses the release; nothing drawn.
/// @throws CudaError when the GPU pass fails; the release stays charged.
/// @par Memory
/// As the host select_partitions; pairs beyond what the device has free beside them are first
/// copied to host memory, then go in chunks.
/// @par Privacy
/// As the host select_partitions.
PartitionSelection select_partitions(Context& context, DeviceSpan<const std::uint64_t> users,
                                     DeviceSpan<const std::uint64_t> keys, const PartitionSelectionParams& params,
                                     cuda_stream_t stream = nullptr);

/// The released keys of a selection over string keys (ascending in byte order) and the report.
struct StringPartitionSelection {
  std::vector<std::string> keys;    ///< the released keys, each a key of the data, ascending
  PartitionSelectionReport report;  ///< what the selection did
};

/// Each string numbered by the rank of its value among the distinct values, in byte order
/// (std::string_view's comparison): equal strings get equal codes, and the codes sort as the
/// strings do. What select_partitions does with string keys, for callers with string users.
/// @param values Any strings (bytes; the empty string is a value too).
/// @return codes[i] in [0, number of distinct values).
std::vector<std::uint64_t> dictionary_codes(std::span<const std::string_view> values);

/// dictionary_codes with the way back: the codes, and for each code the row where its value
/// first occurs, so that a caller holding the values in its own form (Python objects, an Arrow
/// column) turns released codes back into its values without a copy of them.
struct DictionaryNumbering {
  std::vector<std::uint64_t> codes;       ///< codes[i]: the rank of values[i] among the distinct values
  std::vector<std::uint64_t> first_rows;  ///< first_rows[c]: the first row holding the value of code c
};

/// The distinct values are found with a hash table in one pass over the values (expected O(1)
/// each), and only they are sorted: O(n + d log d) for n values of which d are distinct, where a
/// sort of all the values would cost O(n log n) comparisons of strings.
/// @param values Any strings (bytes; the empty string is a value too); at most 2^32 - 1 distinct.
/// @return The codes (as dictionary_codes) and the first rows, by code.
/// @throws InvalidArgument for 2^32 or more distinct values.
DictionaryNumbering dictionary_numbering(std::span<const std::string_view> values);

/// select_partitions over keys that are byte strings (search queries, URLs): the keys are
/// numbered by dictionary_codes and selected as integers, so the release is the same as that of
/// the integer keys' order-preserving codes (NumPy's `numpy.unique(keys, return_inverse=True)`
/// numbers keys alike), and the released strings are copies of keys of the data.
/// @param context The source of the selection's stream and its accountant.
/// @param users The user of each contribution (any 64-bit ids; dictionary_codes numbers string
///        users).
/// @param keys The key of each contribution; read during the call only.
/// @param params The selection's parameters.
/// @return The released keys and the report.
/// @throws InvalidArgument as the integer select_partitions, before the keys are numbered where the
///         parameters or the lengths are bad.
/// @throws BudgetExceeded as the integer select_partitions.
/// @par Privacy
/// As the integer select_partitions.
StringPartitionSelection select_partitions(Context& context, std::span<const std::uint64_t> users,
                                           std::span<const std::string_view> keys,
                                           const PartitionSelectionParams& params);

}  // namespace dpselect
