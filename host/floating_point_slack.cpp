// Floating-point slack of a noisy-max release (DESIGN.md §4).
//
// Write s_i = c*u_i for the exact scaled utilities (c = eps/(2 Delta) or eps/Delta) and
// N_i for exact noise from a continuous uniform. The implementation computes
// S_i = fma(c~, u_i, N~_i) where c~ is c rounded once and N~_i is the noise of noise.hpp.
// Couple N~_i with N_i through the same uniform. Outside the bad event B (some continuous
// v_i < 2^-88; P(B) <= n * 2^-87) every computed score is within
//     eta = 2^-39 + 2^-53 * (max_i |c~ u_i| + 89)
// of c~ u_i + N_i: 2^-39 is the noise error (noise.hpp) and the second term is the fma's one
// rounding, |score| <= |c~ u| + 89.
//
// If the implementation outputs r outside B, then r would win the exact mechanism with its
// score raised by 2*eta. For Gumbel, exponential and Laplace noise the density f satisfies
// f(y - t) <= e^t f(y) and f(y + t) >= e^-t f(y) for t >= 0 (unit scale), so raising one
// candidate's score by t multiplies its exact win probability by at most e^t, and lowering it
// by t by at least e^-t. Summing over r in any output set R:
//     e^{-2 eta} P*(R) - P(B) <= P~(R) <= e^{2 eta} P*(R) + P(B).
// Chaining through the exact mechanism's (eps~)-DP between neighbours D, D' (eta taken for
// both, so the utility bound grows by Delta) gives
//     P~_D(R) <= e^{eps~ + 4 eta} P~_D'(R) + (1 + e^{eps~ + 4 eta}) P(B),
// and eps~ <= eps (1 + 2^-52) covers the rounding of c. Hence
//     slack.epsilon = 4 eta + eps * 2^-52,   slack.delta = (1 + e^{eps + slack.epsilon}) n 2^-87.
#include "floating_point_slack.hpp"

#include <cmath>

#include "dpselect/noise.hpp"

namespace dpselect::detail {

FloatingPointSlack floating_point_slack(double epsilon, double score_scale, double sensitivity,
                                        double max_abs_utility, std::uint64_t candidates) {
  // Computed in long double and rounded up a little so the reported bound is never below the
  // derived one.
  const long double largest_score =
      static_cast<long double>(score_scale) * (static_cast<long double>(max_abs_utility) + sensitivity);
  const long double eta = noise::kNoiseErrorBound + 0x1p-53L * (largest_score + noise::kMaxAbsNoise);
  const long double slack_epsilon = 4.0L * eta + static_cast<long double>(epsilon) * 0x1p-52L;
  const long double bad_event = static_cast<long double>(candidates) * noise::kBadEventProbability;
  const long double slack_delta = (1.0L + std::exp(static_cast<long double>(epsilon) + slack_epsilon)) * bad_event;
  constexpr long double kRoundUp = 1.0L + 0x1p-40L;
  return FloatingPointSlack{static_cast<double>(slack_epsilon * kRoundUp),
                            static_cast<double>(slack_delta * kRoundUp)};
}

}  // namespace dpselect::detail
