// SPDX-License-Identifier: Apache-2.0
// The sparse vector technique: scales with their sources, the exact probability of one
// comparison, streaming = batched for the same key, halting, the accuracy theorems holding
// empirically, the calculators, and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "dpselect/dpselect.hpp"
#include "support/clopper_pearson.hpp"
#include "support/expect_invalid.hpp"
#include "support/frequencies.hpp"

namespace dpselect::testing {
namespace {

SparseVectorParams svt_params(double epsilon, std::uint64_t c, double delta = 0.0, bool numeric = false) {
  SparseVectorParams params;
  params.epsilon = epsilon;
  params.delta = delta;
  params.sensitivity = 1.0;
  params.threshold = 10.0;
  params.max_positives = c;
  params.numeric = numeric;
  return params;
}

SparseVectorParams lyu_params(double epsilon, std::uint64_t c, bool monotone = false, bool numeric = false) {
  SparseVectorParams params = svt_params(epsilon, c, 0.0, numeric);
  params.algorithm = SparseVectorAlgorithm::lyu_su_li;
  params.monotone = monotone;
  return params;
}

TEST(SparseVector, ScalesFollowTheirSources) {
  // AboveThreshold (Dwork & Roth 2014, Alg. 1): T + Lap(2/eps), queries + Lap(4/eps).
  SparseVectorScales s = sparse_vector_scales(svt_params(0.5, 1));
  EXPECT_DOUBLE_EQ(s.threshold_noise, 4.0);
  EXPECT_DOUBLE_EQ(s.query_noise, 8.0);
  EXPECT_EQ(s.answer_noise, 0.0);
  // Sparse, delta = 0: sigma = 2 c Delta / eps; delta > 0: sqrt(32 c ln(1/delta)) Delta / eps.
  s = sparse_vector_scales(svt_params(1.0, 3));
  EXPECT_DOUBLE_EQ(s.threshold_noise, 6.0);
  EXPECT_DOUBLE_EQ(s.query_noise, 12.0);
  s = sparse_vector_scales(svt_params(2.0, 4, 1e-6));
  EXPECT_DOUBLE_EQ(s.threshold_noise, std::sqrt(32.0 * 4 * std::log(1e6)) / 2.0);
  // NumericSparse, delta = 0: eps1 = 8 eps/9 -> sigma = 2c/eps1; answers Lap(2c/eps2), eps2 = 2 eps/9.
  s = sparse_vector_scales(svt_params(1.0, 2, 0.0, true));
  EXPECT_DOUBLE_EQ(s.threshold_noise, 2.0 * 2 / (8.0 / 9.0));
  EXPECT_DOUBLE_EQ(s.answer_noise, 2.0 * 2 / (2.0 / 9.0));
  EXPECT_DOUBLE_EQ(s.epsilon_comparisons + s.epsilon_answers, 1.0);
  // delta > 0: eps1 = sqrt(512) eps/(sqrt(512)+1), eps2 = 2 eps/(sqrt(512)+1), ln(2/delta).
  s = sparse_vector_scales(svt_params(1.0, 2, 1e-5, true));
  const double root = std::sqrt(512.0);
  const double sigma_unit = std::sqrt(32.0 * 2 * std::log(2.0 / 1e-5));
  EXPECT_DOUBLE_EQ(s.threshold_noise, sigma_unit / (root / (root + 1)));
  EXPECT_DOUBLE_EQ(s.answer_noise, sigma_unit / (2.0 / (root + 1)));
  EXPECT_DOUBLE_EQ(s.epsilon_comparisons + s.epsilon_answers, 1.0);

  // Lyu, Su & Li 2017: rho = Lap(Delta/eps1), nu = Lap(2c Delta/eps2) (c Delta/eps2 monotone),
  // eps1 : eps2 = 1 : (2c)^(2/3) (1 : c^(2/3) monotone); NumericSparse answers Lap(c Delta/eps3),
  // eps3 = eps/9. Here c = 4: (2c)^(2/3) = 4 exactly, c^(2/3) = 2^(4/3).
  s = sparse_vector_scales(lyu_params(1.0, 4));
  EXPECT_DOUBLE_EQ(s.threshold_noise, 1.0 / (1.0 / 5.0));
  EXPECT_DOUBLE_EQ(s.query_noise, 8.0 / (4.0 / 5.0));
  EXPECT_FALSE(s.threshold_redrawn);
  const double r = std::pow(2.0, 4.0 / 3.0);
  s = sparse_vector_scales(lyu_params(2.0, 4, true));
  EXPECT_DOUBLE_EQ(s.threshold_noise, 1.0 / (2.0 / (1 + r)));
  EXPECT_DOUBLE_EQ(s.query_noise, 4.0 / (2.0 * r / (1 + r)));
  s = sparse_vector_scales(lyu_params(0.9, 4, false, true));
  EXPECT_DOUBLE_EQ(s.epsilon_answers, 0.1);
  EXPECT_DOUBLE_EQ(s.answer_noise, 4.0 / 0.1);
  EXPECT_DOUBLE_EQ(s.threshold_noise, 1.0 / (0.8 / 5.0));
  EXPECT_DOUBLE_EQ(s.query_noise, 8.0 / (0.8 * 4.0 / 5.0));
  EXPECT_DOUBLE_EQ(s.epsilon_comparisons + s.epsilon_answers, 0.9);
}

// The Laplace(b) survival function P[L > x] and density, in long double.
long double laplace_survival(long double x, long double b) {
  return x >= 0 ? 0.5L * std::exp(-x / b) : 1.0L - 0.5L * std::exp(x / b);
}
long double laplace_density(long double x, long double b) { return std::exp(-std::fabs(x) / b) / (2.0L * b); }

// The joint law of the answers to two queries f_1 = f_2 = T + gap with c = 2 (no halting in
// between), exactly: with ONE threshold (lyu_su_li) the answers are dependent through rho,
//   P[a_1, a_2] = int p_rho(r) prod_i P[nu_i >= r - gap or < r - gap] dr,
// integrated by composite Simpson on [-60 b_T, 60 b_T] split at the kinks 0 and gap (4000
// panels a side: error far below 1e-9). With a fresh threshold after the first "above"
// (dwork_roth) the same integral holds with the second factor averaged over a new threshold.
// So this tells the two algorithms apart and checks that lyu_su_li never redraws.
TEST(SparseVector, OneThresholdForTheWholeRunUnderLyuSuLi) {
  constexpr int kTrials = 40'000;
  const SparseVectorParams params = lyu_params(1.0, 2);
  const SparseVectorScales scales = sparse_vector_scales(params);
  const long double bt = scales.threshold_noise;
  const long double bq = scales.query_noise;
  auto integrate = [&](auto&& f) {
    const std::vector<long double> knots = {-60 * bt, 0.0L, 1.0L, 60 * bt};  // gap = 1 below
    long double total = 0;
    for (std::size_t piece = 0; piece + 1 < knots.size(); ++piece) {
      const int panels = 4000;
      const long double h = (knots[piece + 1] - knots[piece]) / (2 * panels);
      long double sum = f(knots[piece]) + f(knots[piece + 1]);
      for (int i = 1; i < 2 * panels; ++i) sum += (i % 2 ? 4 : 2) * f(knots[piece] + i * h);
      total += sum * h / 3;
    }
    return total;
  };
  const long double gap = 1.0L;
  std::vector<long double> exact(4);  // index: 2 * above_1 + above_2
  for (int pattern = 0; pattern < 4; ++pattern) {
    exact[pattern] = integrate([&](long double r) {
      const long double above = laplace_survival(r - gap, bq);
      return laplace_density(r, bt) * ((pattern & 2) ? above : 1 - above) * ((pattern & 1) ? above : 1 - above);
    });
  }
  ASSERT_NEAR(static_cast<double>(exact[0] + exact[1] + exact[2] + exact[3]), 1.0, 1e-9);
  Context context = Context::with_fixed_seed(29);
  std::vector<int> counts(4, 0);
  const std::vector<double> values = {10.0 + 1.0, 10.0 + 1.0};
  for (int trial = 0; trial < kTrials; ++trial) {
    const SparseVectorBatch batch = sparse_vector_batch(context, values, params);
    ASSERT_EQ(batch.report.queries, 2u);
    int pattern = 0;
    for (const SparseVectorAbove& a : batch.above) pattern += a.index == 0 ? 2 : 1;
    ++counts[pattern];
  }
  expect_frequencies_match(counts, exact, kTrials, "lyu_su_li, two queries at T + 1");
}

// One query: "above" iff f + nu >= T + tau with nu ~ Lap(b1 = 4/eps), tau ~ Lap(b2 = 2/eps).
// nu - tau has characteristic function 1/((1 + b1^2 t^2)(1 + b2^2 t^2)), so for x >= 0
// P[nu - tau > x] = (b1^2 e^{-x/b1} - b2^2 e^{-x/b2}) / (2 (b1^2 - b2^2)), and the symmetric
// value below 0.
TEST(SparseVector, OneComparisonHasTheExactProbability) {
  constexpr int kTrials = 20'000;
  const double epsilon = 1.0;
  const long double b1 = 4.0L / epsilon;
  const long double b2 = 2.0L / epsilon;
  auto tail = [&](long double x) {  // P[nu - tau > x]
    if (x < 0) return 1.0L - (b1 * b1 * std::exp(x / b1) - b2 * b2 * std::exp(x / b2)) / (2 * (b1 * b1 - b2 * b2));
    return (b1 * b1 * std::exp(-x / b1) - b2 * b2 * std::exp(-x / b2)) / (2 * (b1 * b1 - b2 * b2));
  };
  Context context = Context::with_fixed_seed(17);
  for (const double gap : {-12.0, -3.0, 0.0, 2.5, 9.0}) {  // f - T
    int above = 0;
    for (int trial = 0; trial < kTrials; ++trial) {
      SparseVector svt(context, svt_params(epsilon, 1));
      above += svt.answer(10.0 + gap).above;
    }
    const long double p = tail(-gap);
    expect_frequencies_match({kTrials - above, above}, {1 - p, p}, kTrials, "f - T = " + std::to_string(gap));
  }
}

TEST(SparseVector, StreamingAndBatchedAgreeForTheSameKey) {
  std::vector<double> values;
  for (int i = 0; i < 400; ++i) values.push_back(10.0 + 12.0 * std::sin(i * 0.37));
  std::vector<SparseVectorParams> variants;
  for (const bool numeric : {false, true}) {
    for (const double delta : {0.0, 1e-6}) variants.push_back(svt_params(1.0, 4, delta, numeric));
    for (const bool monotone : {false, true}) variants.push_back(lyu_params(1.0, 4, monotone, numeric));
  }
  for (const SparseVectorParams& params : variants) {
    for (std::uint64_t seed = 0; seed < 10; ++seed) {
      Context streaming_context = Context::with_fixed_seed(seed);
      Context batch_context = Context::with_fixed_seed(seed);
      SparseVector svt(streaming_context, params);
      const SparseVectorBatch batch = sparse_vector_batch(batch_context, values, params);
      std::vector<SparseVectorAbove> streamed;
      for (std::size_t i = 0; i < values.size() && !svt.halted(); ++i) {
        const SparseVectorAnswer a = svt.answer(values[i]);
        EXPECT_EQ(a.value.has_value(), params.numeric && a.above);
        if (a.above) streamed.push_back({i, a.value});
      }
      ASSERT_EQ(streamed.size(), batch.above.size());
      for (std::size_t j = 0; j < streamed.size(); ++j) {
        EXPECT_EQ(streamed[j].index, batch.above[j].index) << "above answer " << j;
        EXPECT_EQ(streamed[j].value, batch.above[j].value) << "above answer " << j;
      }
      EXPECT_EQ(svt.report().queries, batch.report.queries);
      EXPECT_EQ(svt.report().positives, batch.report.positives);
      EXPECT_EQ(svt.report().halted, batch.report.halted);
    }
  }
}

// Batches long enough for the parallel windows (2^14 queries and more), with "above" answers
// far apart, close together and at window edges: still exactly the streaming answers.
TEST(SparseVector, LongBatchesMatchStreamingAcrossWindows) {
  constexpr std::size_t kQueries = 300'000;
  // T = 10 and noise scales <= 6: -1000 is "below" except with probability e^-160, 100 is
  // "above" except with probability e^-15 (the test holds either way; the count check needs it).
  std::vector<double> values(kQueries, -1000.0);
  for (const std::size_t i : {std::size_t{255}, std::size_t{256}, std::size_t{70'000}, std::size_t{70'001},
                              std::size_t{131'071}, std::size_t{299'999}}) {
    values[i] = 100.0;
  }
  for (const SparseVectorParams& base : {svt_params(4.0, 6), lyu_params(4.0, 6, false, true)}) {
    SparseVectorParams params = base;
    Context streaming_context = Context::with_fixed_seed(77);
    Context batch_context = Context::with_fixed_seed(77);
    SparseVector svt(streaming_context, params);
    const SparseVectorBatch batch = sparse_vector_batch(batch_context, values, params);
    std::vector<SparseVectorAbove> streamed;
    for (std::size_t i = 0; i < values.size() && !svt.halted(); ++i) {
      const SparseVectorAnswer a = svt.answer(values[i]);
      if (a.above) streamed.push_back({i, a.value});
    }
    ASSERT_EQ(streamed.size(), batch.above.size()) << to_string(params.algorithm);
    EXPECT_GE(streamed.size(), 4u);  // the far-above queries are found
    for (std::size_t j = 0; j < streamed.size(); ++j) {
      EXPECT_EQ(streamed[j].index, batch.above[j].index);
      EXPECT_EQ(streamed[j].value, batch.above[j].value);
    }
    EXPECT_EQ(svt.report().queries, batch.report.queries);
  }
}

// Without a usable GPU the device-memory batch refuses before its charge and before touching the
// pointer (the GPU tests cover it where one is usable).
TEST(SparseVector, DeviceBatchWithoutAGpuThrowsBeforeTheCharge) {
  if (gpu_usable()) GTEST_SKIP() << "a GPU is usable: sparse_vector_gpu_test covers the device batch";
  auto accountant = std::make_shared<PrivacyAccountant>(PrivacyBound{1.0, 0.0});
  Context context = Context::with_fixed_seed(2);
  context.charge_to(accountant);
  static const double not_device_memory[1] = {1.0};
  EXPECT_THROW(sparse_vector_batch(context, DeviceSpan<const double>{not_device_memory, 1}, svt_params(0.5, 1), nullptr),
               BackendUnavailable);
  expect_invalid_message(
      [&] { sparse_vector_batch(context, DeviceSpan<const double>{nullptr, 4}, svt_params(0.5, 1), nullptr); },
      {"values.data", "nullptr"});
  EXPECT_EQ(accountant->release_count(), 0u);
}

// A copy would answer with the same noise (comparing copies reveals the query values), so there
// is none; a move hands the run over and spends the source.
TEST(SparseVector, CannotBeCopiedAndAMoveSpendsTheSource) {
  static_assert(!std::is_copy_constructible_v<SparseVector>);
  static_assert(!std::is_copy_assignable_v<SparseVector>);
  Context first = Context::with_fixed_seed(8);
  Context second = Context::with_fixed_seed(8);
  SparseVector original(first, svt_params(1.0, 3));
  SparseVector reference(second, svt_params(1.0, 3));
  const std::vector<double> values = {9.0, 11.0, 10.5, 8.0, 12.0, 10.0};
  original.answer(values[0]);
  reference.answer(values[0]);
  SparseVector moved = std::move(original);
  EXPECT_TRUE(original.spent());  // NOLINT(bugprone-use-after-move)
  EXPECT_THROW(original.answer(values[1]), UsageError);
  for (std::size_t i = 1; i < values.size() && !moved.spent(); ++i) {
    EXPECT_EQ(moved.answer(values[i]).above, reference.answer(values[i]).above) << "query " << i;
  }
  SparseVector assigned(first, svt_params(1.0, 3));
  assigned = std::move(moved);
  EXPECT_TRUE(moved.spent());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(assigned.report().queries, reference.report().queries);
}

TEST(SparseVector, HaltsAfterTheCthAboveAnswer) {
  Context context = Context::with_fixed_seed(3);
  SparseVector svt(context, svt_params(1.0, 2));
  int answered = 0;
  while (!svt.halted()) {
    svt.answer(1000.0);  // far above: every answer is "above" except with probability ~e^-200
    ++answered;
  }
  EXPECT_EQ(answered, 2);
  const SparseVectorReport report = svt.report();
  EXPECT_TRUE(report.halted);
  EXPECT_EQ(report.positives, 2u);
  EXPECT_EQ(report.queries, 2u);
  EXPECT_TRUE(report.slack.depends_on_data);
  EXPECT_GT(report.slack.epsilon, 0.0);
  EXPECT_LT(report.slack.epsilon, 1e-9);
  EXPECT_THROW(svt.answer(0.0), UsageError);
}

struct AccuracyCase {
  std::string name;
  SparseVectorParams params;
};

// The accuracy theorems on query streams that meet their premise: k queries of which c sit just
// above T + alpha (positions spread over the stream, the last one last) and the rest just below
// T - alpha. Failure: a "below" for a query above T + alpha, an "above" for one below T - alpha,
// halting before the last query, or (NumericSparse) |a_i - f_i| > alpha. The theorems bound the
// failure probability by beta; the check fails only if the Clopper-Pearson lower bound at
// confidence 1 - 1e-6 exceeds beta (a correct mechanism: false failure <= 1e-6). The bounds are
// loose (observed failures are near 0); a query noise 10 times too large fails the Dwork-Roth
// cases. The Lyu-Su-Li cases take alpha from the implementation's own scales, so they check the
// noise against those scales; ScalesFollowTheirSources checks the scales against the paper.
TEST(SparseVector, AccuracyTheoremsHoldEmpirically) {
  constexpr int kTrials = 2000;
  constexpr std::uint64_t kQueries = 100;
  constexpr double kBeta = 0.05;
  const std::vector<AccuracyCase> cases = {
      {"AboveThreshold", svt_params(1.0, 1)},
      {"Sparse c=3", svt_params(1.0, 3)},
      {"Sparse c=3 delta=1e-6", svt_params(1.0, 3, 1e-6)},
      {"NumericSparse c=2", svt_params(1.0, 2, 0.0, true)},
      {"NumericSparse c=2 delta=1e-6", svt_params(1.0, 2, 1e-6, true)},
      {"Lyu-Su-Li c=3", lyu_params(1.0, 3)},
      {"Lyu-Su-Li c=3 monotone", lyu_params(1.0, 3, true)},
      {"Lyu-Su-Li numeric c=2", lyu_params(1.0, 2, false, true)},
  };
  for (const AccuracyCase& test_case : cases) {
    const SparseVectorParams& params = test_case.params;
    const double alpha = sparse_vector_alpha(params, kQueries, kBeta);
    const std::uint64_t c = params.max_positives;
    std::vector<double> values(kQueries, params.threshold - alpha * (1 + 1e-9));
    std::vector<bool> is_above(kQueries, false);
    for (std::uint64_t j = 1; j <= c; ++j) {
      const std::uint64_t position = j * kQueries / c - 1;
      values[position] = params.threshold + alpha * (1 + 1e-9);
      is_above[position] = true;
    }
    Context context = Context::with_fixed_seed(1000 + c);
    int failures = 0;
    for (int trial = 0; trial < kTrials; ++trial) {
      const SparseVectorBatch batch = sparse_vector_batch(context, values, params);
      // Every query answered (the c-th "above" is the last query) and the "above" answers are
      // exactly the queries above T + alpha.
      bool failed = batch.report.queries < kQueries || batch.above.size() != c;
      for (const SparseVectorAbove& a : batch.above) {
        failed = failed || !is_above[a.index];
        if (a.value) failed = failed || std::fabs(*a.value - values[a.index]) > alpha;
      }
      failures += failed;
    }
    EXPECT_TRUE(within_clopper_pearson(failures, kTrials, kBeta))
        << test_case.name << ": " << failures << " failures in " << kTrials << " at alpha " << alpha;
  }
}

TEST(SparseVector, AccuracyCalculators) {
  // Dwork & Roth 2014, Thm 3.24: 8 (ln k + ln(2/beta)) / eps.
  EXPECT_DOUBLE_EQ(sparse_vector_alpha(svt_params(0.5, 1), 100, 0.05), 8 * (std::log(100.0) + std::log(40.0)) / 0.5);
  // Dwork & Roth 2014, Thm 3.28, delta = 0: 9c(ln k + ln(4c/beta))/eps.
  EXPECT_DOUBLE_EQ(sparse_vector_alpha(svt_params(1.0, 3, 0.0, true), 1000, 0.1),
                   9 * 3 * (std::log(1000.0) + std::log(120.0)));
  // delta > 0: (ln k + ln(4c/beta)) sqrt(c ln(2/delta)) (sqrt(512) + 1) / eps.
  EXPECT_DOUBLE_EQ(sparse_vector_alpha(svt_params(2.0, 3, 1e-6, true), 1000, 0.1),
                   (std::log(1000.0) + std::log(120.0)) * std::sqrt(3 * std::log(2e6)) * (std::sqrt(512.0) + 1) / 2.0);
  for (const SparseVectorParams& params : {svt_params(1.0, 1), svt_params(0.3, 5, 1e-7), svt_params(1.0, 2, 0.0, true),
                                           svt_params(1.0, 2, 1e-4, true)}) {
    for (const double beta : {0.5, 0.01, 1e-9}) {
      EXPECT_NEAR(sparse_vector_beta(params, 500, sparse_vector_alpha(params, 500, beta)), beta, beta * 1e-9);
    }
  }
  EXPECT_EQ(sparse_vector_beta(svt_params(1.0, 1), 100, 1e-3), 1.0);  // clamped

  // lyu_su_li: the union bound e^{-alpha/(2 b_T)} + k e^{-alpha/(2 b_q)} (+ c e^{-alpha/b_a}),
  // alpha by bisection from the safe side.
  for (const SparseVectorParams& params : {lyu_params(1.0, 1), lyu_params(0.5, 6, true), lyu_params(1.0, 3, false, true)}) {
    const SparseVectorScales scales = sparse_vector_scales(params);
    for (const double beta : {0.3, 0.01, 1e-9}) {
      const double alpha = sparse_vector_alpha(params, 500, beta);
      const long double bound = [&](long double a) {
        long double b = std::exp(-a / (2 * scales.threshold_noise)) + 500 * std::exp(-a / (2 * scales.query_noise));
        if (params.numeric) b += params.max_positives * std::exp(-a / scales.answer_noise);
        return b;
      }(alpha);
      EXPECT_LE(bound, beta);
      EXPECT_GT(bound, beta * (1 - 1e-12));
      EXPECT_NEAR(sparse_vector_beta(params, 500, alpha), beta, beta * 1e-12);
    }
  }
  // Lyu-Su-Li's split beats Dwork-Roth's fresh thresholds for several positives.
  EXPECT_LT(sparse_vector_alpha(lyu_params(1.0, 8), 1000, 0.05), sparse_vector_alpha(svt_params(1.0, 8), 1000, 0.05));

  SelectionParams em;
  em.epsilon = 1.0;
  em.sensitivity = 2.0;
  // Dwork & Roth 2014, Thm 3.11: (2 Delta/eps)(ln(|R|/|R_OPT|) + ln(1/beta)); monotone halves it.
  EXPECT_DOUBLE_EQ(exponential_mechanism_alpha(em, 1000, 10, 0.01), 4.0 * (std::log(100.0) + std::log(100.0)));
  em.monotone = true;
  EXPECT_DOUBLE_EQ(exponential_mechanism_alpha(em, 1000, 10, 0.01), 2.0 * (std::log(100.0) + std::log(100.0)));
  EXPECT_NEAR(exponential_mechanism_beta(em, 1000, 10, exponential_mechanism_alpha(em, 1000, 10, 0.02)), 0.02, 1e-12);
}

TEST(SparseVector, BadInput) {
  Context context = Context::with_fixed_seed(1);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Bad {
    void (*change)(SparseVectorParams&);
    std::string name;
    std::string value;
  };
  const std::vector<Bad> bad = {
      {[](SparseVectorParams& p) { p.epsilon = 0.0; }, "epsilon", "0"},
      {[](SparseVectorParams& p) { p.epsilon = -1.0; }, "epsilon", "-1"},
      {[](SparseVectorParams& p) { p.epsilon = std::numeric_limits<double>::quiet_NaN(); }, "epsilon", "nan"},
      {[](SparseVectorParams& p) { p.epsilon = std::numeric_limits<double>::infinity(); }, "epsilon", "inf"},
      {[](SparseVectorParams& p) { p.delta = -0.1; }, "delta", "-0.1"},
      {[](SparseVectorParams& p) { p.delta = 1.0; }, "delta", "1"},
      {[](SparseVectorParams& p) { p.delta = std::numeric_limits<double>::quiet_NaN(); }, "delta", "nan"},
      {[](SparseVectorParams& p) { p.sensitivity = 0.0; }, "sensitivity", "0"},
      {[](SparseVectorParams& p) { p.threshold = std::numeric_limits<double>::quiet_NaN(); }, "threshold", "nan"},
      {[](SparseVectorParams& p) { p.threshold = -std::numeric_limits<double>::infinity(); }, "threshold", "-inf"},
      {[](SparseVectorParams& p) { p.max_positives = 0; }, "max_positives", "0"},
      {[](SparseVectorParams& p) { p.value_bound = -1.0; }, "value_bound", "-1"},
      {[](SparseVectorParams& p) { p.epsilon = 1e-320; }, "sensitivity / epsilon", "inf"},
      {[](SparseVectorParams& p) { p.monotone = true; }, "monotone", "lyu_su_li only"},
      {[](SparseVectorParams& p) {
         p.algorithm = SparseVectorAlgorithm::lyu_su_li;
         p.delta = 1e-6;
       }, "delta", "1e-06"},
      {[](SparseVectorParams& p) { p.algorithm = static_cast<SparseVectorAlgorithm>(7); }, "algorithm", "7"},
  };
  for (const Bad& b : bad) {
    SparseVectorParams params = svt_params(1.0, 2);
    b.change(params);
    expect_invalid_message([&] { SparseVector svt(context, params); }, {b.name, b.value});
    expect_invalid_message([&] { sparse_vector_batch(context, std::vector<double>{1.0}, params); }, {b.name, b.value});
    expect_invalid_message([&] { sparse_vector_alpha(params, 10, 0.1); }, {b.name, b.value});
  }
  // Query values: NaN and infinities, and beyond a declared bound; nothing is answered, and the
  // streaming object is spent (fail closed: the check must not be repeatable for free).
  for (const double value : {nan, inf, -inf}) {
    SparseVector svt(context, svt_params(1.0, 2));
    svt.answer(1.0);
    expect_invalid_message([&] { svt.answer(value); }, {"query value 1", "finite"});
    EXPECT_EQ(svt.report().queries, 1u);
    EXPECT_TRUE(svt.spent());
    EXPECT_THROW(svt.answer(1.0), UsageError);
    expect_invalid_message([&] { sparse_vector_batch(context, std::vector<double>{1.0, value}, svt_params(1.0, 2)); },
                           {"query value 1", "finite"});
  }
  SparseVectorParams bounded = svt_params(1.0, 2);
  bounded.value_bound = 100.0;
  SparseVector bounded_svt(context, bounded);
  // A query answer is an aggregate of the data: the message names the query, never its value.
  try {
    bounded_svt.answer(100.5);
    ADD_FAILURE() << "no exception for a value beyond value_bound";
  } catch (const InvalidArgument& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("query value 0 must be within value_bound (100)"), std::string::npos) << message;
    EXPECT_EQ(message.find("100.5"), std::string::npos) << message;
  }
  EXPECT_FALSE(bounded_svt.report().slack.depends_on_data);
  EXPECT_THROW(bounded_svt.answer(1.0), UsageError);
  // Calculators.
  expect_invalid_message([&] { sparse_vector_alpha(svt_params(1.0, 1), 0, 0.1); }, {"queries", "0"});
  expect_invalid_message([&] { sparse_vector_alpha(svt_params(1.0, 1), 10, 0.0); }, {"beta", "0"});
  expect_invalid_message([&] { sparse_vector_alpha(svt_params(1.0, 1), 10, 1.0); }, {"beta", "1"});
  expect_invalid_message([&] { sparse_vector_beta(svt_params(1.0, 1), 10, -2.0); }, {"alpha", "-2"});
  SelectionParams em;
  em.epsilon = 1.0;
  em.sensitivity = 1.0;
  expect_invalid_message([&] { exponential_mechanism_alpha(em, 10, 11, 0.1); }, {"optimal_candidates", "11"});
  expect_invalid_message([&] { exponential_mechanism_alpha(em, 10, 0, 0.1); }, {"optimal_candidates", "0"});
}

}  // namespace
}  // namespace dpselect::testing
