// SPDX-License-Identifier: Apache-2.0
// Floating-point slack of a noisy-max release (docs/design.md, "Large ranges"; Mironov 2012 on
// floating-point noise that breaks differential privacy).
//
// Write u_i for the utilities, r for the release's reference (NoiseSpec::utility_reference) and
// c = eps/(2 Delta) or eps/Delta. Every mechanism here outputs the arg-max of c u_i + N_i, which
// is the arg-max of c (u_i - r) + N_i: the exact mechanism's distribution is the same for every r,
// so take s_i = c (u_i - r) as the exact scaled utilities and N_i for exact noise from continuous
// uniforms. The implementation computes S_i = fma(c~, v_i, N~_i) with v_i = u_i - r rounded once
// (exact for r = 0), c~ = c rounded once and N~_i the noise of the group-maximum construction
// (screened_scoring.hpp, exponential_race.hpp): a transform of the race time T_i = E_V / 32 (+ E'_i),
// from the uniforms V of i's group and W_i. Couple N~_i with N_i through the same uniforms.
// Outside the bad event B (some continuous uniform's v < 2^-88; two draws per candidate, so
// P(B) <= n * 2^-86) every computed score is within
//     eta = 2^-38 + 2^-53 * (max_i |c~ v_i| + 93) [+ 2^-53 (1 + 2^-51) max_i |c~ v_i| for r != 0]
// of c~ (u_i - r) + N_i: 2^-38 bounds the race noise's error (docs/group_maximum.md, section 5:
// the uniforms' 2^-40, the race time's roundings and the transforms' logarithms), the second term
// is the fma's one rounding (|score| <= |c~ v| + 93), and the third the subtraction's, c~ |u - r|
// <= c~ |v| (1 + 2^-52). The error follows the spread of the utilities around r, not their
// magnitude.
//
// If the implementation outputs r outside B, then r would win the exact mechanism with its
// score raised by 2*eta. For Gumbel, exponential and Laplace noise the density f satisfies
// f(y - t) <= e^t f(y) and f(y + t) >= e^-t f(y) for t >= 0 (unit scale), so raising one
// candidate's score by t multiplies its exact win probability by at most e^t, and lowering it
// by t by at least e^-t. Summing over r in any output set R:
//     e^{-2 eta} P*(R) - P(B) <= P~(R) <= e^{2 eta} P*(R) + P(B).
// Chaining through the exact mechanism's (eps~)-DP between neighbours D, D' (eta taken for
// both, so the bound on |u - r| grows by Delta, or by 2 Delta when r is a utility of the data,
// which moves too) gives
//     P~_D(R) <= e^{eps~ + 4 eta} P~_D'(R) + (1 + e^{eps~ + 4 eta}) P(B),
// and eps~ <= eps (1 + 2^-52) covers the rounding of c. Hence
//     slack.epsilon = 4 eta + eps * 2^-52,   slack.delta = (1 + e^{eps + slack.epsilon}) n 2^-86.
#include "selection/floating_point_slack.hpp"

#include <bit>
#include <cmath>

#include "dpselect/detail/noise_positions.hpp"
#include "dpselect/noise.hpp"
#include "noise/truncated_geometric.hpp"

namespace dpselect::detail {

namespace {

FloatingPointSlack computed_floating_point_slack(double epsilon, double score_scale, double sensitivity,
                                                 double max_abs_shifted_utility, std::uint64_t candidates,
                                                 UtilityReference reference) {
  // Computed in long double and rounded up a little so the reported bound is never below the
  // derived one.
  const long double neighbour_shift = reference == UtilityReference::from_data ? 2.0L * sensitivity : sensitivity;
  const long double largest_score = static_cast<long double>(score_scale) *
                                    (static_cast<long double>(max_abs_shifted_utility) + neighbour_shift);
  const long double shift_rounding =
      reference == UtilityReference::zero ? 0.0L : 0x1p-53L * (1.0L + 0x1p-51L) * largest_score;
  const long double eta =
      kRaceNoiseErrorBound + 0x1p-53L * (largest_score + kMaxAbsRaceNoise) + shift_rounding;
  const long double slack_epsilon = 4.0L * eta + static_cast<long double>(epsilon) * 0x1p-52L;
  const long double bad_event = static_cast<long double>(candidates) * kRaceBadEventProbability;
  const long double slack_delta = (1.0L + std::exp(static_cast<long double>(epsilon) + slack_epsilon)) * bad_event;
  constexpr long double kRoundUp = 1.0L + 0x1p-40L;
  return FloatingPointSlack{static_cast<double>(slack_epsilon * kRoundUp),
                            static_cast<double>(slack_delta * kRoundUp)};
}

}  // namespace

FloatingPointSlack floating_point_slack(double epsilon, double score_scale, double sensitivity,
                                        double max_abs_shifted_utility, std::uint64_t candidates,
                                        UtilityReference reference) {
  // Many releases of one call often ask for the same slack (select_repeated: every release over the
  // same row), and computed_floating_point_slack's long double exp costs more than scoring a few
  // candidates: the last answer of this thread is kept. A pure function of its arguments, so the
  // cache changes nothing.
  struct Last {
    double epsilon, score_scale, sensitivity, max_abs_shifted_utility;
    std::uint64_t candidates;
    UtilityReference reference;
    FloatingPointSlack slack;
    bool valid = false;
  };
  thread_local Last last;
  const auto same_bits = [](double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); };
  if (last.valid && same_bits(last.epsilon, epsilon) && same_bits(last.score_scale, score_scale) &&
      same_bits(last.sensitivity, sensitivity) && same_bits(last.max_abs_shifted_utility, max_abs_shifted_utility) &&
      last.candidates == candidates && last.reference == reference) {
    return last.slack;
  }
  last = Last{epsilon, score_scale, sensitivity, max_abs_shifted_utility, candidates, reference,
              computed_floating_point_slack(epsilon, score_scale, sensitivity, max_abs_shifted_utility, candidates,
                                            reference),
              true};
  return last.slack;
}

// Slack of the bid-interval pricing sampler (host/pricing/pricing_intervals.cpp).
//
// The exact mechanism: EM over grid indices j with weights exp(c~ k_j p_j), p_j the rounded grid
// prices, k_j = #{bids >= p_j}; it is (eps~)-DP with eps~ <= eps (1 + 2^-52) as above. The
// sampler instead treats the prices of interval r (k bidders, L prices, top price P) as exactly
// linear, P - t step: each weight's exponent is then off by at most c~ k 2^-52 max p <= 2^-52 S
// where S = c~ * revenue_bound (each of p_j and P carries one rounding of 2^-53 max p).
//
// Stage 1 picks interval r by Gumbel-max over its log-mass
//     l_r = c~ k P + g_r,   g_r = ln sum_{t<L} e^{-a t} = ln(-expm1(-a L)) - ln(-expm1(-a)),
// a = c~ k step. The computed score fma(c~, w_r, G~_r) with w_r = k P + g_r / c~ is within
//     eta1 = 2^-38 + 2^-50 (S + 93 + ln M) + e_g
// of l_r + G_r: the race noise (2^-38), five roundings of terms at most S + ln M + 93 (2^-50 covers
// them with room), and e_g, the error of g_r. Since x h'(x) <= 1 for h(x) = ln(-expm1(-x)), the
// relative error of a and a L (3 roundings) moves each logarithm by at most 3 2^-53 absolute;
// expm1 and log (<= 2 ulp each, glibc) add 2^-51 (|h| + 1). With |h| <= |ln(c~ step)| + 1
// (a >= c~ step for k >= 1), e_g <= 2^-49 + 2^-50 (|ln(c~ step)| + 2). As for noisy max, stage 1
// then picks r with probability within e^{+-2 eta1} of the exact interval mass.
//
// Stage 2 picks the price inside r by truncated_geometric: within e^{+-rho2} of the exact
// conditional, rho2 = 2 * 4 digits * kDigitRelativeError (truncated_geometric.hpp).
//
// Per output, the implementation is within e^{+-lambda} of the exact mechanism, outside the bad
// event B: lambda = 2 eta1 + 2 * 2^-52 S + rho2 (the linearity error enters both stages). As
// before, slack.epsilon = 2 lambda + eps 2^-52 and slack.delta = (1 + e^{eps + slack.epsilon}) P(B),
// where P(B) <= runs 2^-86 (stage 1's two uniforms per interval) + 4 * 128 2^-87 (stage 2's
//             uniforms' tails) + 2^-128 (128 rejections)
//             + 4 * 128 * (2^-1000 (digits of rate > 700) + 2^-111 (the 2^-127 lattice of v)).
// `runs` must not depend on the data in a public report: the caller passes max_bidders + 1.
FloatingPointSlack two_stage_interval_slack(double epsilon, long double stage1_score_error,
                                            long double exponent_error, std::uint64_t runs) {
  const long double rho2 = 2.0L * kGeometricDigitsPerAttempt * kDigitRelativeError;
  const long double lambda = 2.0L * stage1_score_error + exponent_error + rho2;
  const long double slack_epsilon = 2.0L * lambda + static_cast<long double>(epsilon) * 0x1p-52L;
  const long double draws = static_cast<long double>(kGeometricDigitsPerAttempt) * kMaxGeometricAttempts;
  const long double bad_event = static_cast<long double>(runs) * kRaceBadEventProbability +
                                draws * noise::kBadEventProbability +
                                0x1p-128L + draws * (0x1p-1000L + 0x1p-111L);
  const long double slack_delta = (1.0L + std::exp(static_cast<long double>(epsilon) + slack_epsilon)) * bad_event;
  constexpr long double kRoundUp = 1.0L + 0x1p-40L;
  return FloatingPointSlack{static_cast<double>(slack_epsilon * kRoundUp),
                            static_cast<double>(slack_delta * kRoundUp)};
}

FloatingPointSlack bid_interval_slack(double epsilon, double score_scale, double revenue_bound, double grid_step,
                                      std::uint64_t grid_size, std::uint64_t runs) {
  const long double largest_score = static_cast<long double>(score_scale) * revenue_bound;
  const long double log_grid = std::log(static_cast<long double>(grid_size));
  const long double log_rate_floor =
      std::fabs(std::log(static_cast<long double>(score_scale) * static_cast<long double>(grid_step)));
  const long double error_of_g = 0x1p-49L + 0x1p-50L * (log_rate_floor + 2.0L);
  const long double eta1 =
      kRaceNoiseErrorBound + 0x1p-50L * (largest_score + kMaxAbsRaceNoise + log_grid) + error_of_g;
  return two_stage_interval_slack(epsilon, eta1, 2.0L * 0x1p-52L * largest_score, runs);
}

}  // namespace dpselect::detail

namespace dpselect::detail {

// Slack of the sparse vector technique (host/sparse_vector/sparse_vector.cpp).
//
// Each comparison computes fma(b_q, L~_i, f_i) >= fma(b_T, L~_T, T) with L~ the Laplace noise
// of noise.hpp, within 2^-39 of the exact L outside the bad event B. So the computed noisy query
// is within m_q = b_q 2^-39 + 2^-53 (|f_i| + 89 b_q) of f_i + b_q L_i, and the computed
// threshold within m_T = b_T 2^-39 + 2^-53 (|T| + 89 b_T) of T + b_T L_T. Whatever the
// implementation answers, the exact mechanism gives the same answers when every query is moved
// by at most m = m_q + m_T towards that answer. Moving all queries by m <= Delta changes the
// probability of any answer sequence by at most e^{eps_cmp m / Delta}: it is the shift the
// privacy proof of Sparse absorbs at cost eps_cmp for m = Delta (Dwork & Roth Thm 3.25; every
// round's threshold-and-query coupling scales linearly in the shift). Chaining through the
// exact mechanism's guarantee between neighbours D, D' (m taken for both, the value bound
// growing by Delta) gives slack.epsilon = 2 eps_cmp m / Delta, and
// slack.delta = (1 + e^{eps + slack.epsilon}) draws 2^-87.
// For monotone Lyu-Su-Li runs the query noise is halved on the premise that all queries move
// one way; the rounding shifts move them both ways, so the caller passes 2 eps_cmp (>= eps1 +
// 2 eps2, the cost of the general argument) as eps_cmp.
// NumericSparse's released values are outside this analysis (sparse_vector.hpp).
FloatingPointSlack sparse_vector_slack(double epsilon_comparisons, double sensitivity, double threshold_scale,
                                       double query_scale, double threshold, double largest_abs_value,
                                       std::uint64_t draws, double epsilon_total) {
  const long double value = static_cast<long double>(largest_abs_value) + sensitivity;
  const long double shift =
      query_scale * noise::kNoiseErrorBound + 0x1p-53L * (value + noise::kMaxAbsNoise * query_scale) +
      threshold_scale * noise::kNoiseErrorBound +
      0x1p-53L * (std::fabs(static_cast<long double>(threshold)) + noise::kMaxAbsNoise * threshold_scale);
  const long double slack_epsilon = 2.0L * epsilon_comparisons * shift / sensitivity;
  const long double bad_event = static_cast<long double>(draws) * noise::kBadEventProbability;
  const long double slack_delta =
      (1.0L + std::exp(static_cast<long double>(epsilon_total) + slack_epsilon)) * bad_event;
  constexpr long double kRoundUp = 1.0L + 0x1p-40L;
  return FloatingPointSlack{static_cast<double>(slack_epsilon * kRoundUp),
                            static_cast<double>(slack_delta * kRoundUp)};
}

}  // namespace dpselect::detail
