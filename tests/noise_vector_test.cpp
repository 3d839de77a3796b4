// SPDX-License-Identifier: Apache-2.0
// Continuous noise samplers (continuous_noise.hpp) and noise vectors (noise_vector.hpp) on the CPU.
//
// Statistical checks and their false-failure rates (fixed seeds, so each run gives the same
// verdict; the rates say how unlucky a seed would have to be):
//   moments of GG(p, 1): 5 p x 3 q = 15 checks at 5 standard errors (two-sided normal tail
//     5.7e-7 each): < 1e-5 together;
//   Gamma(a): 4 shapes x (mean at 5, variance at 6 standard errors; the variance of skewed
//     small-shape samples converges slowly, hence the larger z): < 3e-6 together;
//   KS (asymptotic Kolmogorov, alpha = 1e-6 each): 7 tests, < 7e-6 together;
//   normal tail frequencies: 2 checks at 5 binomial standard errors, < 2e-6;
//   scale checks of add_noise: 4 checks at 5 standard errors, < 3e-6.
// Total false-failure rate < 3e-5.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include <omp.h>

#include "dpselect/accounting.hpp"
#include "dpselect/continuous_noise.hpp"
#include "dpselect/context.hpp"
#include "dpselect/detail/portable_exp.hpp"
#include "dpselect/discrete_noise.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/generalized_gaussian.hpp"
#include "dpselect/noise_vector.hpp"
#include "dpselect/select.hpp"
#include "random/chacha20_coordinate_quads.hpp"
#include "noise/noise_vector_internal.hpp"
#include "validation/validation.hpp"

namespace dpselect {
namespace {

using continuous::CoordinateNoise;
using continuous::KeyedBlocks;
using continuous::NoiseShape;

constexpr double kMomentZ = 5.0;

// Standard noise of coordinates [0, n) under (seed, stream 7).
std::vector<double> standard_samples(const CoordinateNoise& noise, std::uint64_t n, std::uint64_t seed,
                                     Generator generator = Generator::philox) {
  KeyedBlocks blocks{RandomKey::from_seed(seed, generator), 7};
  std::vector<double> z(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    EXPECT_TRUE(continuous::standard_noise(blocks, noise, i, z[i]));
  }
  return z;
}

// sup |F_n - F| of the samples against the continuous CDF F.
double ks_statistic(std::vector<double> samples, const std::function<double(double)>& cdf) {
  std::sort(samples.begin(), samples.end());
  const double n = static_cast<double>(samples.size());
  double d = 0.0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const double f = cdf(samples[i]);
    d = std::max({d, static_cast<double>(i + 1) / n - f, f - static_cast<double>(i) / n});
  }
  return d;
}

// Critical value of the KS statistic at level alpha (asymptotic Kolmogorov distribution:
// P[sqrt(n) D > t] ~ 2 exp(-2 t^2)).
double ks_critical(double alpha, std::size_t n) {
  return std::sqrt(-std::log(alpha / 2.0) / 2.0) / std::sqrt(static_cast<double>(n));
}

// E|z|^q for GG(p, 1): Gamma((q + 1)/p) / Gamma(1/p), in long double.
long double gg_abs_moment(double p, double q) {
  return std::exp(std::lgamma(static_cast<long double>((q + 1.0) / p)) - std::lgamma(static_cast<long double>(1.0 / p)));
}

// ---- portable_exp -----------------------------------------------------------------------------

TEST(ContinuousNoise, PortableExpAccuracy) {
  // Error in ulps against expl over [-708, 709]: fdlibm documents < 1 ulp.
  double worst = 0.0;
  const int n = 200000;
  for (int i = 0; i <= n; ++i) {
    for (const double x : {-708.0 + 1417.0 * i / n, -2.0 + 4.0 * i / n, 1e-9 * (i - n / 2)}) {
      const double got = detail::portable_exp(x);
      const long double exact = std::exp(static_cast<long double>(x));
      const double ulp = std::nextafter(static_cast<double>(exact), std::numeric_limits<double>::infinity()) -
                         static_cast<double>(exact);
      worst = std::max(worst, static_cast<double>(std::fabs(static_cast<long double>(got) - exact) / ulp));
    }
  }
  EXPECT_LT(worst, 1.0);
  EXPECT_EQ(detail::portable_exp(0.0), 1.0);
  EXPECT_EQ(detail::portable_exp(710.0), std::numeric_limits<double>::infinity());
  EXPECT_EQ(detail::portable_exp(-709.0), 0.0);  // flushed below the smallest normal
  EXPECT_EQ(detail::portable_exp(std::log(0x1p-1022) + 1e-9) >= 0x1p-1022, true);
}

// ---- the samplers -----------------------------------------------------------------------------

TEST(ContinuousNoise, GeneralizedGaussianMoments) {
  const std::uint64_t n = 200000;
  for (const double p : {1.0, 1.5, 2.0, 3.0, 4.0}) {
    const CoordinateNoise noise = continuous::make_coordinate_noise(NoiseShape::generalized_gaussian, 1.0, p);
    const std::vector<double> z = standard_samples(noise, n, 1000 + static_cast<std::uint64_t>(p * 10));
    for (const double q : {1.0, 2.0, 4.0}) {
      long double sum = 0.0L;
      for (const double x : z) sum += std::pow(std::fabs(static_cast<long double>(x)), q);
      const long double mean = sum / n;
      const long double expected = gg_abs_moment(p, q);
      // Standard error of the mean of |z|^q: sqrt((E|z|^2q - (E|z|^q)^2) / n).
      const long double se = std::sqrt((gg_abs_moment(p, 2 * q) - expected * expected) / n);
      EXPECT_LT(std::fabs(mean - expected), kMomentZ * se) << "p " << p << " q " << q;
    }
  }
}

TEST(ContinuousNoise, GammaMeanAndVariance) {
  const std::uint64_t n = 200000;
  for (const double a : {1.0 / 32.0, 0.25, 0.5, 1.0}) {
    const continuous::GammaShape shape = continuous::gamma_shape(a);
    KeyedBlocks blocks{RandomKey::from_seed(77, Generator::philox), 3};
    long double sum = 0.0L;
    long double sum2 = 0.0L;
    for (std::uint64_t i = 0; i < n; ++i) {
      auto bits = continuous::coordinate_bits(blocks, i);
      double x = -1.0;
      ASSERT_TRUE(continuous::gamma_small_shape(bits, shape, x));
      ASSERT_GE(x, 0.0);
      sum += x;
      sum2 += static_cast<long double>(x) * x;
    }
    const long double mean = sum / n;
    const long double variance = sum2 / n - mean * mean;
    // Gamma(a): mean a, variance a, fourth central moment 3a^2 + 6a; Var(sample variance) ~
    // (mu4 - sigma^4) / n.
    EXPECT_LT(std::fabs(mean - a), kMomentZ * std::sqrt(a / n)) << "a " << a;
    EXPECT_LT(std::fabs(variance - a), 6.0 * std::sqrt((2 * a * a + 6 * a) / n)) << "a " << a;
  }
}

TEST(ContinuousNoise, KolmogorovSmirnov) {
  const std::size_t n = 100000;
  const double critical = ks_critical(1e-6, n);  // 0.0085
  const auto laplace_cdf = [](double x) { return x < 0 ? 0.5 * std::exp(x) : 1.0 - 0.5 * std::exp(-x); };
  const auto normal_cdf = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
  const auto half_variance_normal_cdf = [](double x) { return 0.5 * std::erfc(-x); };  // N(0, 1/2)
  EXPECT_LT(ks_statistic(standard_samples(continuous::make_coordinate_noise(NoiseShape::generalized_gaussian, 1, 1),
                                          n, 11),
                         laplace_cdf),
            critical)
      << "GG(1) vs Laplace";
  EXPECT_LT(ks_statistic(standard_samples(continuous::make_coordinate_noise(NoiseShape::generalized_gaussian, 1, 2),
                                          n, 12),
                         half_variance_normal_cdf),
            critical)
      << "GG(2) vs N(0, 1/2)";
  EXPECT_LT(ks_statistic(standard_samples(continuous::make_coordinate_noise(NoiseShape::normal, 1, 2), n, 13,
                                          Generator::chacha20),
                         normal_cdf),
            critical)
      << "normal vs Phi";
  EXPECT_LT(ks_statistic(standard_samples(continuous::make_coordinate_noise(NoiseShape::laplace, 1, 2), n, 14),
                         laplace_cdf),
            critical)
      << "Laplace";
}

TEST(ContinuousNoise, GeneralizedGaussianAbsoluteValueKolmogorovSmirnov) {
  // |z| of GG(p, 1) against P[|z| <= t] = P(1/p, t^p) (generalized_gaussian_abs_cdf), including
  // p = 32 where the boost exponent is largest.
  const std::size_t n = 50000;
  const double critical = ks_critical(1e-6, n);
  for (const double p : {1.5, 3.0, 32.0}) {
    std::vector<double> z = standard_samples(continuous::make_coordinate_noise(NoiseShape::generalized_gaussian, 1, p),
                                             n, 21 + static_cast<std::uint64_t>(p));
    for (double& x : z) x = std::fabs(x);
    EXPECT_LT(ks_statistic(z, [p](double t) { return generalized_gaussian_abs_cdf(t, 1.0, p); }), critical)
        << "p " << p;
  }
}

TEST(ContinuousNoise, NormalTailFrequencies) {
  // P[|Z| > t] for t = 3, 4 against 2 Phi(-t), n = 10^6, 5 binomial standard errors.
  const std::uint64_t n = 1000000;
  const std::vector<double> z =
      standard_samples(continuous::make_coordinate_noise(NoiseShape::normal, 1, 2), n, 31);
  for (const double t : {3.0, 4.0}) {
    const double tail = std::erfc(t / std::sqrt(2.0));
    const double count = static_cast<double>(std::count_if(z.begin(), z.end(), [t](double x) { return std::fabs(x) > t; }));
    EXPECT_LT(std::fabs(count - n * tail), kMomentZ * std::sqrt(n * tail * (1 - tail))) << "t " << t;
  }
}

// A bit source that hands out fixed blocks.
struct FixedBits {
  std::vector<RandomBlock> blocks;
  std::size_t next_index = 0;
  bool next(RandomBlock& out) {
    if (next_index == blocks.size()) return false;
    out = blocks[next_index++];
    return true;
  }
};

TEST(ContinuousNoise, NormalTailIsFiniteAndRunsOutCleanly) {
  // Smallest magnitudes: Y = 0 gives 2^-128 for both u1 and u2, so s = 2^-255: the largest |z|.
  FixedBits tiny{{RandomBlock{{0x80000000u, 0, 0, 0}}, RandomBlock{{0, 0, 0, 0}}}};
  double z = 0.0;
  ASSERT_TRUE(continuous::standard_normal(tiny, z));
  EXPECT_LT(z, 0.0);  // the sign bit of u1
  const long double s = std::ldexp(1.0L, -255);
  EXPECT_NEAR(-z, std::ldexp(1.0L, -128) * std::sqrt(-2.0L * std::log(s) / s), 1e-12 * -z);
  EXPECT_LT(-z, 18.9);
  // Largest magnitudes (s >= 1) are rejected; with no more blocks the sampler says so.
  FixedBits ones{{RandomBlock{{0x7FFFFFFFu, ~0u, ~0u, ~0u}}, RandomBlock{{0x7FFFFFFFu, ~0u, ~0u, ~0u}}}};
  EXPECT_FALSE(continuous::standard_normal(ones, z));
  FixedBits odd{{RandomBlock{{0, 1, 2, 3}}}};
  EXPECT_FALSE(continuous::standard_normal(odd, z));
}

TEST(ContinuousNoise, RandomnessBudget) {
  // Mean blocks per sample (the budget in continuous_noise.hpp assumes each polar attempt ends the
  // GG sample with probability >= 0.749): measured, and the largest seen far below 2^10.
  for (const double p : {1.0, 2.0, 32.0}) {
    const continuous::GeneralizedGaussianShape shape = continuous::generalized_gaussian_shape(p);
    KeyedBlocks blocks{RandomKey::from_seed(5, Generator::philox), 1};
    std::uint64_t total = 0;
    std::uint64_t largest = 0;
    const std::uint64_t n = 20000;
    for (std::uint64_t i = 0; i < n; ++i) {
      auto bits = continuous::coordinate_bits(blocks, i);
      double z = 0.0;
      ASSERT_TRUE(continuous::standard_generalized_gaussian(bits, shape, z));
      total += bits.used();
      largest = std::max(largest, bits.used());
    }
    // 1 + E[attempts] (2 + 1): attempts ~ 1/0.749 at worst: <= 5.1 blocks.
    EXPECT_LT(static_cast<double>(total) / n, 5.1) << "p " << p;
    EXPECT_LT(largest, 64u);
  }
  // A coordinate never reads beyond its 2^10 rows: a source with its last row exhausted fails.
  KeyedBlocks blocks{RandomKey::from_seed(5, Generator::philox), 1};
  continuous::CoordinateBits<KeyedBlocks> bits{blocks, 3, continuous::kBlocksPerCoordinate - 1};
  RandomBlock b;
  EXPECT_TRUE(bits.next(b));
  EXPECT_FALSE(bits.next(b));
  double z = 0.0;
  EXPECT_FALSE(continuous::standard_normal(bits, z));
}

// The GPU kernels' schedule of a coordinate (kernels/noise_vector.cu), run on the CPU with either
// generator: a first try from the rows every sample of the shape reads, and for the samples it
// hands on, a normal resumed one polar attempt at a time after the first try, any other shape
// sampled in full. Each value has the bits of noisy_value; the first try hands on a fair share of
// the normals and generalized Gaussians (a rejection in their first attempt) and no Laplace.
TEST(ContinuousNoise, FirstTryAndRetriesGiveTheFullSample) {
  const std::uint64_t n = 4000;
  for (const Generator generator : {Generator::chacha20, Generator::philox}) {
    for (const NoiseShape shape : {NoiseShape::laplace, NoiseShape::normal, NoiseShape::generalized_gaussian}) {
      const CoordinateNoise noise = continuous::make_coordinate_noise(shape, 0.5, 1.5);
      KeyedBlocks keyed{RandomKey::from_seed(21, generator), 6};
      const unsigned first_rows = continuous::rows_always_read(shape);
      const unsigned attempt = continuous::independent_attempt_rows(shape);
      std::uint64_t handed_on = 0;
      for (std::uint64_t i = 0; i < n; ++i) {
        const double value = static_cast<double>(i % 13) - 6.0;
        double expected = 0.0;
        ASSERT_TRUE(continuous::noisy_value(keyed, noise, i, value, expected));
        double out = 0.0;
        bool ok = false;
        switch (shape) {
          case NoiseShape::laplace:
            ok = continuous::noisy_value_in_rows_of<NoiseShape::laplace>(keyed, noise, i, 0, first_rows, value, out);
            break;
          case NoiseShape::normal:
            ok = continuous::noisy_value_in_rows_of<NoiseShape::normal>(keyed, noise, i, 0, first_rows, value, out);
            for (std::uint64_t row = first_rows; !ok; row += attempt) {
              ASSERT_LT(row, continuous::kBlocksPerCoordinate);
              if (row == first_rows) ++handed_on;
              ok = continuous::noisy_value_in_rows_of<NoiseShape::normal>(keyed, noise, i, row, row + attempt, value,
                                                                          out);
            }
            break;
          case NoiseShape::generalized_gaussian:
            ok = continuous::noisy_value_in_rows_of<NoiseShape::generalized_gaussian>(keyed, noise, i, 0, first_rows,
                                                                                      value, out);
            if (!ok) {
              ++handed_on;
              ok = continuous::noisy_value_of<NoiseShape::generalized_gaussian>(keyed, noise, i, value, out);
            }
            break;
        }
        ASSERT_TRUE(ok) << "coordinate " << i;
        ASSERT_EQ(std::bit_cast<std::uint64_t>(out), std::bit_cast<std::uint64_t>(expected))
            << to_string(generator) << " shape " << static_cast<int>(shape) << " coordinate " << i;
      }
      if (shape == NoiseShape::laplace) {
        EXPECT_EQ(handed_on, 0u);
      } else {
        // A normal's first polar attempt is rejected with probability 1 - pi/4 = 0.215: 4000
        // coordinates hand on 859 on average, with a standard deviation of 26; the generalized
        // Gaussian hands on at least as many. The bounds are over 9 standard deviations away.
        EXPECT_GT(handed_on, 620u) << to_string(generator) << " shape " << static_cast<int>(shape);
        EXPECT_LT(handed_on, 1400u) << to_string(generator) << " shape " << static_cast<int>(shape);
      }
    }
  }
}

TEST(ContinuousNoise, CoordinateDependsOnlyOnKeyStreamAndIndex) {
  const std::uint64_t n = 1000;
  for (const Generator generator : {Generator::chacha20, Generator::philox}) {
    for (const NoiseShape shape : {NoiseShape::laplace, NoiseShape::normal, NoiseShape::generalized_gaussian}) {
      const CoordinateNoise noise = continuous::make_coordinate_noise(shape, 1.0, 1.7);
      const RandomKey key = RandomKey::from_seed(9, generator);
      std::vector<std::uint64_t> forward(n);
      KeyedBlocks keyed{key, 4};
      for (std::uint64_t i = 0; i < n; ++i) {
        double z = 0.0;
        ASSERT_TRUE(continuous::standard_noise(keyed, noise, i, z));
        forward[i] = std::bit_cast<std::uint64_t>(z);
      }
      // Reverse order, one fresh source per coordinate.
      for (std::uint64_t i = n; i-- > 0;) {
        KeyedBlocks fresh{key, 4};
        double z = 0.0;
        ASSERT_TRUE(continuous::standard_noise(fresh, noise, i, z));
        EXPECT_EQ(std::bit_cast<std::uint64_t>(z), forward[i]);
      }
      // The CPU pass (cached ChaCha20 rows) on 1, 3 and 4 threads, and on a sub-slice with its
      // coordinate offset.
      const int default_threads = omp_get_max_threads();
      for (const int threads : {1, 3, 4}) {
        omp_set_num_threads(threads);
        std::vector<double> zeros(n, 0.0);
        ASSERT_TRUE(detail::cpu_add_noise(zeros, 0, key, 4, noise));
        for (std::uint64_t i = 0; i < n; ++i) EXPECT_EQ(std::bit_cast<std::uint64_t>(zeros[i]), forward[i]) << i;
      }
      omp_set_num_threads(default_threads);
      std::vector<double> slice(333, 0.0);
      ASSERT_TRUE(detail::cpu_add_noise(slice, 501, key, 4, noise));
      for (std::uint64_t i = 0; i < slice.size(); ++i) {
        EXPECT_EQ(std::bit_cast<std::uint64_t>(slice[i]), forward[501 + i]);
      }
      // Another stream, other noise.
      KeyedBlocks other{key, 5};
      double z = 0.0;
      ASSERT_TRUE(continuous::standard_noise(other, noise, 0, z));
      EXPECT_NE(std::bit_cast<std::uint64_t>(z), forward[0]);
    }
  }
}

// ---- add_noise --------------------------------------------------------------------------------

NoiseVectorParams laplace(double epsilon) {
  return {.distribution = NoiseDistribution::laplace, .epsilon = epsilon};
}
NoiseVectorParams gaussian(double epsilon, double delta) {
  return {.distribution = NoiseDistribution::gaussian, .epsilon = epsilon, .delta = delta};
}
NoiseVectorParams generalized(double epsilon, double delta, double p) {
  return {.distribution = NoiseDistribution::generalized_gaussian, .epsilon = epsilon, .delta = delta, .p = p};
}

TEST(NoiseVector, ScalesAreReported) {
  Context context = Context::with_fixed_seed(1);
  std::vector<double> values(1000, 0.0);
  NoiseVectorParams params = laplace(0.5);
  params.sensitivity = 3.0;
  const NoiseVectorReport lap = add_noise(context, values, params);
  EXPECT_EQ(lap.scale, 3.0 / 0.5);
  EXPECT_EQ(lap.distribution, NoiseDistribution::laplace);
  EXPECT_EQ(lap.p, 1.0);
  EXPECT_EQ(lap.delta, 0.0);
  EXPECT_EQ(lap.coordinates, 1000u);
  EXPECT_EQ(lap.executed_on, ExecutedOn::cpu);
  EXPECT_EQ(lap.generator, Generator::chacha20);

  params = gaussian(1.0, 1e-6);
  params.sensitivity = 2.0;
  const NoiseVectorReport gauss = add_noise(context, values, params);
  EXPECT_EQ(gauss.scale, discrete::analytic_gaussian_sigma(1.0, 1e-6, 2.0));
  EXPECT_EQ(gauss.p, 2.0);
  EXPECT_NE(gauss.stream, lap.stream);  // every call draws a fresh stream

  params = generalized(1.0, 1e-6, 3.0);
  params.sensitivity = 4.0;
  const NoiseVectorReport gg = add_noise(context, values, params);
  EXPECT_EQ(gg.scale, 4.0 * generalized_gaussian_sigma(1.0, 1e-6, 3.0, 1000));
  EXPECT_EQ(gg.p, 3.0);
  EXPECT_EQ(noise_vector_scale(params, 1000), gg.scale);
}

TEST(NoiseVector, ValuesAreValuePlusScaledNoiseOfTheReportedStream) {
  for (const Generator generator : {Generator::chacha20, Generator::philox}) {
    for (const NoiseVectorParams& params : {laplace(1.0), gaussian(1.0, 1e-5), generalized(1.0, 1e-5, 1.5)}) {
      Context context = Context::with_fixed_seed(42, generator);
      std::vector<double> values(4099);
      for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i) - 17.25;
      const std::vector<double> original = values;
      const NoiseVectorReport report = add_noise(context, values, params);
      const CoordinateNoise noise = continuous::make_coordinate_noise(
          params.distribution == NoiseDistribution::laplace    ? NoiseShape::laplace
          : params.distribution == NoiseDistribution::gaussian ? NoiseShape::normal
                                                               : NoiseShape::generalized_gaussian,
          report.scale, params.p);
      KeyedBlocks blocks{RandomKey::from_seed(42, generator), report.stream};
      for (std::size_t i = 0; i < values.size(); ++i) {
        double expected = 0.0;
        ASSERT_TRUE(continuous::noisy_value(blocks, noise, i, original[i], expected));
        ASSERT_EQ(std::bit_cast<std::uint64_t>(values[i]), std::bit_cast<std::uint64_t>(expected)) << i;
      }
      // Two calls on equal inputs draw different streams, hence different noise.
      std::vector<double> again = original;
      const NoiseVectorReport second = add_noise(context, again, params);
      EXPECT_NE(second.stream, report.stream);
      EXPECT_NE(again, values);
    }
  }
}

TEST(NoiseVector, NoiseHasTheReportedScale) {
  // Sample standard deviation of the added noise against the exact one, 5 standard errors
  // (Var of the sample variance ~ (mu4 - sigma^4) / n; kurtosis 6 for Laplace, 3 for the normal).
  const std::size_t n = 100000;
  Context context = Context::with_fixed_seed(8);
  for (const auto& [params, kurtosis] : {std::pair{laplace(2.0), 6.0}, std::pair{gaussian(0.5, 1e-6), 3.0}}) {
    std::vector<double> values(n, 10.0);
    const NoiseVectorReport report = add_noise(context, values, params);
    const double variance = params.distribution == NoiseDistribution::laplace ? 2.0 * report.scale * report.scale
                                                                              : report.scale * report.scale;
    long double sum = 0.0L;
    long double sum2 = 0.0L;
    for (const double v : values) {
      sum += v - 10.0;
      sum2 += static_cast<long double>(v - 10.0) * (v - 10.0);
    }
    const long double mean = sum / n;
    const long double sample_variance = sum2 / n - mean * mean;
    EXPECT_LT(std::fabs(mean), kMomentZ * std::sqrt(variance / n));
    EXPECT_LT(std::fabs(sample_variance - variance), kMomentZ * variance * std::sqrt((kurtosis - 1.0) / n));
  }
}

TEST(NoiseVector, ChargesTheAccountantOnceWithTheRightKind) {
  const struct {
    NoiseVectorParams params;
    double delta;
  } cases[] = {{laplace(0.25), 0.0}, {gaussian(0.25, 1e-7), 1e-7}, {generalized(0.25, 1e-7, 2.0), 1e-7}};
  for (const auto& c : cases) {
    Context context = Context::with_fixed_seed(3);
    // With a delta budget of 0 only a pure release fits: Laplace's charge must be pure.
    auto accountant = std::make_shared<PrivacyAccountant>(PrivacyBound{1.0, c.delta == 0.0 ? 0.0 : 1e-5});
    context.charge_to(accountant);
    std::vector<double> values(10, 1.0);
    add_noise(context, values, c.params);
    EXPECT_EQ(accountant->release_count(), 1u);
    EXPECT_DOUBLE_EQ(accountant->spent().epsilon, 0.25);
    EXPECT_EQ(accountant->spent().delta, c.delta);
    // Bad input: nothing charged.
    std::vector<double> bad(10, 1.0);
    bad[4] = std::numeric_limits<double>::infinity();
    EXPECT_THROW(add_noise(context, bad, c.params), InvalidArgument);
    EXPECT_EQ(accountant->release_count(), 1u);
  }
  // Over budget: BudgetExceeded, values untouched, no stream drawn.
  Context context = Context::with_fixed_seed(3);
  context.charge_to(std::make_shared<PrivacyAccountant>(PrivacyBound{0.1, 0.0}));
  std::vector<double> values(10, 1.0);
  EXPECT_THROW(add_noise(context, values, laplace(0.25)), BudgetExceeded);
  EXPECT_EQ(values, std::vector<double>(10, 1.0));
}

// Runs add_noise with `params` on `values`, expecting InvalidArgument with exactly `message`, and
// checks that the values are unchanged and that the context drew no stream.
void expect_refused(const NoiseVectorParams& params, std::vector<double> values, const std::string& message) {
  Context context = Context::with_fixed_seed(5);
  auto accountant = std::make_shared<PrivacyAccountant>(PrivacyBound{100.0, 0.5});
  context.charge_to(accountant);
  const std::vector<double> before = values;
  try {
    add_noise(context, values, params);
    ADD_FAILURE() << "no exception; expected " << message;
  } catch (const InvalidArgument& error) {
    EXPECT_EQ(std::string(error.what()), message);
  }
  // Bit for bit (NaN values compare unequal); memcmp must not see the null data of an empty vector.
  EXPECT_TRUE(values.empty() || std::memcmp(values.data(), before.data(), values.size() * sizeof(double)) == 0);
  EXPECT_EQ(accountant->release_count(), 0u);
  // The next release still gets the context's first stream: nothing was drawn.
  std::vector<double> one{0.0};
  Context fresh = Context::with_fixed_seed(5);
  EXPECT_EQ(add_noise(context, one, laplace(1.0)).stream, add_noise(fresh, one, laplace(1.0)).stream);
}

TEST(NoiseVector, RefusesBadParametersWithExactMessages) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> v(5, 1.0);
  for (const NoiseVectorParams& base : {laplace(1.0), gaussian(1.0, 1e-6), generalized(1.0, 1e-6, 2.0)}) {
    for (const double eps : {0.0, -1.0, nan, inf}) {
      NoiseVectorParams p = base;
      p.epsilon = eps;
      expect_refused(p, v, "dpselect: epsilon must be finite and > 0 (got " + detail::format_value(eps) + ")");
    }
    for (const double sensitivity : {0.0, -2.0, nan, inf}) {
      NoiseVectorParams p = base;
      p.sensitivity = sensitivity;
      expect_refused(p, v, "dpselect: sensitivity must be finite and > 0 (got " + detail::format_value(sensitivity) + ")");
    }
    expect_refused(base, {}, "dpselect: values must hold at least one value (got size 0)");
    for (const double bad : {nan, inf, -inf}) {
      std::vector<double> values = v;
      values[3] = bad;
      expect_refused(base, values, "dpselect: values[3] must be finite (got " + detail::format_value(bad) + ")");
    }
    NoiseVectorParams p = base;
    p.backend = static_cast<Backend>(9);
    expect_refused(p, v, "dpselect: backend must be Auto, Cpu or Gpu (got 9)");
  }
  // A scale whose draws overflow doubles (1.5e307 / 0.1 gave infinite noisy values; found by
  // tests/fuzz/fuzz_parameters), and the largest one taken.
  NoiseVectorParams huge = laplace(0.1);
  huge.sensitivity = 1.5026977895109075e307;
  expect_refused(huge, v, "dpselect: the noise scale (from sensitivity and epsilon) must be a positive normal finite "
                          "double, at most 2^960 (got " + detail::format_value(huge.sensitivity / 0.1) + ")");
  huge.sensitivity = 0x1p950;  // scale about 2^953
  std::vector<double> noisy = v;
  Context huge_context = Context::with_fixed_seed(3);
  add_noise(huge_context, std::span<double>(noisy), huge);
  for (const double value : noisy) EXPECT_TRUE(std::isfinite(value));
  for (const double delta : {1e-6, -1e-6, nan, 1.0}) {
    NoiseVectorParams p = laplace(1.0);
    p.delta = delta;
    expect_refused(p, v, "dpselect: delta must be 0 for laplace noise (got " + detail::format_value(delta) + ")");
  }
  for (const NoiseVectorParams& base : {gaussian(1.0, 1e-6), generalized(1.0, 1e-6, 2.0)}) {
    for (const double delta : {0.0, -1e-6, 1.0, 2.0, nan, inf}) {
      NoiseVectorParams p = base;
      p.delta = delta;
      expect_refused(p, v, "dpselect: delta must be in (0, 1) (got " + detail::format_value(delta) + ")");
    }
  }
  for (const double bad_p : {0.5, 0.999, 32.5, -1.0, nan, inf}) {
    expect_refused(generalized(1.0, 1e-6, bad_p), v, "dpselect: p must be in [1, 32] (got " + detail::format_value(bad_p) + ")");
  }
  NoiseVectorParams unknown = laplace(1.0);
  unknown.distribution = static_cast<NoiseDistribution>(7);
  expect_refused(unknown, v, "dpselect: distribution must be laplace, gaussian or generalized_gaussian (got 7)");
  // p is ignored unless the distribution is generalized_gaussian.
  NoiseVectorParams ignored = laplace(1.0);
  ignored.p = nan;
  Context context = Context::with_fixed_seed(6);
  std::vector<double> values = v;
  EXPECT_NO_THROW(add_noise(context, values, ignored));
}

TEST(NoiseVector, GpuBackendAndDeviceSpansNeedADevice) {
  Context context = Context::with_fixed_seed(5);
  std::vector<double> values(4, 0.0);
  NoiseVectorParams params = laplace(1.0);
  params.backend = Backend::Cpu;
  EXPECT_THROW(add_noise(context, DeviceSpan<double>{nullptr, 4}, params, nullptr), InvalidArgument);
  params.backend = Backend::Auto;
  EXPECT_THROW(add_noise(context, DeviceSpan<double>{nullptr, 4}, params, nullptr), InvalidArgument);  // nullptr
  if (!gpu_usable()) {
    params.backend = Backend::Gpu;
    EXPECT_THROW(add_noise(context, values, params), BackendUnavailable);
    EXPECT_EQ(values, std::vector<double>(4, 0.0));
  }
}

}  // namespace
}  // namespace dpselect
