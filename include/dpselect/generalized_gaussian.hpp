// SPDX-License-Identifier: Apache-2.0
/// @file
/// Calibration of the generalized Gaussian (GG) mechanism for k counting queries (Ganesh & Zhao 2021:
/// Ganesh & Zhao, "Privately Answering Counting Queries with Generalized Gaussian Mechanisms").
///
/// GG(p, sigma) on k coordinates releases d + x, x_i iid with density
/// `exp(-(|x_i| / sigma)^p) / (2 sigma Gamma(1 + 1/p))` (Ganesh & Zhao 2021, Def. of GG_{p,sigma}).
///
/// Parametrization trap: GG(2, sigma) = N(0, sigma^2 / 2), so at p = 2 the GG sigma is sqrt(2)
/// times the Gaussian standard deviation; GG(1, sigma) is Laplace with scale sigma.
///
/// Privacy guarantee: neighbouring inputs change every answer by at most 1 (l_inf sensitivity 1,
/// the counting-query setting of Ganesh & Zhao 2021). Only p >= 1 is supported: the proof that a shift of
/// exactly 1 in every coordinate is the worst case needs log-concave noise (see
/// generalized_gaussian_delta). The delta returned is an upper bound (pessimistic privacy loss
/// discretization with a bound on the floating-point error; rigorous up to the 8-point
/// Gauss-Legendre quadrature of each cell's probability mass, estimated below 1e-16 relative and
/// not bounded formally: see host/accounting/generalized_gaussian_calibration.cpp); sigma is
/// returned from the safe side.
///
/// Plain C++ header: no CUDA. Host functions (host/accounting/generalized_gaussian_calibration.cpp);
/// all are deterministic and thread-safe, and none draws randomness or charges an accountant.
#pragma once

#include <cstdint>
#include <span>

namespace dpselect {

/// An upper bound on the smallest delta such that GG(p, sigma) on k coordinates is
/// (epsilon, delta)-DP for l_inf sensitivity 1. Method: privacy-loss distribution of one coordinate
/// under the worst pair (shift 1), discretized pessimistically ("connect the dots", Doroshenko,
/// Ghazi, Kamath, Kumar & Manurangsi 2022), composed k times by repeated squaring, with a bound on
/// the rounding error added. Deterministic; runs in O(log k) convolutions of ~10^3 points.
/// Requires sigma and epsilon finite and > 0, p finite in [1, 32], 1 <= k <= 2^32.
/// Throws InvalidArgument naming the parameter and value.
///
/// Usage:
/// @code{.cpp}
/// double d = dpselect::generalized_gaussian_delta(40.0, 2.0, 1000, 1.0);
/// @endcode
/// @param sigma The GG scale (for sensitivity 1); finite and > 0.
/// @param p The GG exponent; finite, in [1, 32].
/// @param k The number of coordinates; in [1, 2^32].
/// @param epsilon The target epsilon; finite and > 0.
/// @return An upper bound on delta, in [0, 1].
/// @throws InvalidArgument A parameter out of range, or `sigma` so small that the privacy-loss
///         grid of one coordinate leaves the representable range (named "sigma").
double generalized_gaussian_delta(double sigma, double p, std::uint64_t k, double epsilon);

/// The smallest sigma (to a relative tolerance of 1e-5, by bisection, the upper end returned) with
/// generalized_gaussian_delta(sigma, p, k, epsilon) <= delta: an (epsilon, delta)-DP calibration.
/// Requires epsilon finite, > 0 and at most 1e6 (there the scale is under 2e-3 of the
/// sensitivity and the calibration leaves its numerical range), delta in (0, 1), p and k as
/// above. Throws InvalidArgument for those, and naming delta when no sigma up to 2^960 (the
/// largest noise scale; 2^(16000 / p) for p > 16.7, where sigma^p leaves long double's range)
/// passes. The search gallops from a Gaussian guess and bisects on log sigma: a few dozen
/// compositions at most.
/// Thread-safe; the last 64 results are cached (the search costs ~0.1-1 s).
///
/// Usage:
/// @code{.cpp}
/// double s = dpselect::generalized_gaussian_sigma(1.0, 1e-6, 2.0, 1000);
/// @endcode
/// @param epsilon The target epsilon; finite, > 0 and <= 1e6.
/// @param delta The target delta; in (0, 1).
/// @param p The GG exponent; finite, in [1, 32].
/// @param k The number of coordinates; in [1, 2^32].
/// @return sigma for l_inf sensitivity 1 (multiply by the sensitivity Delta for queries of
///         sensitivity Delta), within relative 1e-5 above the smallest passing value.
/// @throws InvalidArgument A parameter out of range (named with its value), or no sigma up to the
///         largest noise scale passes (named "delta").
double generalized_gaussian_sigma(double epsilon, double delta, double p, std::uint64_t k);

/// E max_i |x_i| for x with k iid GG(p, sigma) coordinates: integral over t >= 0 of 1 - F(t)^k,
/// F(t) = P[|x_i| <= t] = P(1/p, (t/sigma)^p) (regularized lower incomplete gamma). Numerical
/// quadrature, relative accuracy about 1e-9. Requires sigma finite > 0, p in [1, 32],
/// 1 <= k <= 2^32. Throws InvalidArgument.
/// @param sigma The GG scale; finite and > 0.
/// @param p The GG exponent; finite, in [1, 32].
/// @param k The number of coordinates; in [1, 2^32].
/// @return E max_i |x_i|, in the units of sigma.
/// @throws InvalidArgument A parameter out of range (named with its value).
double generalized_gaussian_expected_linf(double sigma, double p, std::uint64_t k);

/// P[|x_i| <= t] for one GG(p, sigma) coordinate (the regularized lower incomplete gamma
/// P(1/p, (t/sigma)^p)); t < 0 gives 0. Same requirements on sigma and p as above.
/// @param t The threshold; any value but NaN (t <= 0 gives 0, +inf gives 1).
/// @param sigma The GG scale; finite and > 0.
/// @param p The GG exponent; finite, in [1, 32].
/// @return The probability, in [0, 1].
/// @throws InvalidArgument `t` NaN, or `sigma` or `p` out of range (named with its value).
double generalized_gaussian_abs_cdf(double t, double sigma, double p);

/// A rule-of-thumb p from Ganesh & Zhao 2021: the l_inf error of GG(p) answering k counting
/// queries is minimized near p = ln ln k, and near p = ln ln ln k when it is composed with the
/// sparse vector technique. We return max(2, ln ln k) alone (p = 2, the Gaussian, is the natural
/// choice at moderate k, where ln ln k < 2, i.e. k < e^{e^2} ~ 1618) and max(1, ln ln ln k) with
/// sparse vector (ln ln ln k <= 1 until k > e^{e^e} ~ 3.8e6, so this is Laplace-like p = 1 in
/// practice). Requires k >= 1; throws InvalidArgument for k = 0.
/// @param k The number of counting queries; >= 1.
/// @param composed_with_sparse_vector true for the GG composed with the sparse vector technique
///        (linf_answers.hpp), false for the GG alone.
/// @return With the sparse vector max(1, ln ln ln k) (1 for k <= e^e), alone max(2, ln ln k)
///         (2 for k <= e).
/// @throws InvalidArgument `k` is 0.
double generalized_gaussian_recommended_p(std::uint64_t k, bool composed_with_sparse_vector);

/// The result of generalized_gaussian_best_p: the exponent with the smallest expected l_inf error
/// over a grid, and its calibration.
struct GeneralizedGaussianChoice {
  double p;              ///< the grid value with the smallest expected l_inf error
  double sigma;          ///< generalized_gaussian_sigma(epsilon, delta, p, k)
  double expected_linf;  ///< generalized_gaussian_expected_linf(sigma, p, k)
};

/// Calibrates sigma for every p in p_grid and returns the one with the smallest E||x||_inf.
/// An empty p_grid uses {1, 1.25, 1.5, ..., 4}. Each grid point costs one calibration (~0.1-1 s).
/// Requires epsilon, delta, k as in generalized_gaussian_sigma and every grid p in [1, 32].
/// Throws InvalidArgument.
/// @param epsilon The target epsilon; finite, > 0 and <= 1e6.
/// @param delta The target delta; in (0, 1).
/// @param k The number of coordinates; in [1, 2^32].
/// @param p_grid The exponents to try, each finite in [1, 32]; empty: {1, 1.25, ..., 4}.
/// @return The grid point with the smallest expected l_inf error (the first of equal ones), its
///         sigma and that error.
/// @throws InvalidArgument A parameter or grid point out of range (checked before any
///         calibration), or a calibration failing as in generalized_gaussian_sigma.
GeneralizedGaussianChoice generalized_gaussian_best_p(double epsilon, double delta, std::uint64_t k,
                                                      std::span<const double> p_grid = {});

}  // namespace dpselect
