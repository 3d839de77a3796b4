// SPDX-License-Identifier: Apache-2.0
// The generalized Gaussian + sparse vector answerer (linf_answers.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "dpselect/accounting.hpp"
#include "dpselect/context.hpp"
#include "dpselect/discrete_noise.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/generalized_gaussian.hpp"
#include "dpselect/linf_answers.hpp"
#include "dpselect/noise_vector.hpp"
#include "dpselect/sparse_vector.hpp"

namespace dpselect {
namespace {

std::vector<double> counts(std::uint64_t k, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> count(0, 500);
  std::vector<double> d(k);
  for (double& x : d) x = count(rng);
  return d;
}

double linf(const std::vector<double>& a, const std::vector<double>& b) {
  double largest = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) largest = std::max(largest, std::fabs(a[i] - b[i]));
  return largest;
}

TEST(LinfAnswers, PlanSplitsTheBudgetAndUsesTheCalibratedScales) {
  const LinfAnswerParams params{.epsilon = 1.0, .delta = 1e-6, .p = 2.0};
  const LinfAnswerPlan plan = plan_linf_answers(params, 10'000);
  ASSERT_TRUE(plan.repair_with_sparse_vector);
  EXPECT_EQ(plan.queries, 10'000u);
  EXPECT_EQ(plan.p, 2.0);
  EXPECT_NEAR(plan.epsilon_noise + plan.check.epsilon + plan.epsilon_repair, 1.0, 1e-15);
  EXPECT_NEAR(plan.delta_noise + plan.check.delta + plan.delta_repair, 1e-6, 1e-21);
  EXPECT_EQ(plan.sigma, generalized_gaussian_sigma(plan.epsilon_noise, plan.delta_noise, 2.0, 10'000));
  const double c = static_cast<double>(plan.check.max_positives);
  EXPECT_EQ(plan.repair_std, discrete::analytic_gaussian_sigma(plan.epsilon_repair, plan.delta_repair, std::sqrt(c)));
  EXPECT_EQ(plan.check.sensitivity, 1.0);
  EXPECT_GT(plan.check.threshold, 0.0);
  EXPECT_GE(plan.bound, plan.check.threshold);
  // The plan is a function of its parameters.
  const LinfAnswerPlan again = plan_linf_answers(params, 10'000);
  EXPECT_EQ(again.bound, plan.bound);
  EXPECT_EQ(again.check.threshold, plan.check.threshold);
}

TEST(LinfAnswers, GeneralizedGaussianAloneIsTheNoiseVector) {
  const LinfAnswerParams params{.epsilon = 1.0, .delta = 1e-6, .p = 3.0, .repair_with_sparse_vector = false};
  const std::vector<double> d = counts(1000, 1);
  std::vector<double> answered = d;
  Context a = Context::with_fixed_seed(5);
  const LinfAnswerReport report = answer_counting_queries(a, answered, params);
  EXPECT_FALSE(report.plan.repair_with_sparse_vector);
  EXPECT_EQ(report.repaired, 0u);
  EXPECT_EQ(report.plan.epsilon_noise, 1.0);
  std::vector<double> expected = d;
  Context b = Context::with_fixed_seed(5);
  add_noise(b, expected, {.distribution = NoiseDistribution::generalized_gaussian, .epsilon = 1.0, .delta = 1e-6,
                          .sensitivity = 1.0, .p = 3.0});
  EXPECT_EQ(answered, expected);
}

TEST(LinfAnswers, OneQueryIsTheGeneralizedGaussianAlone) {
  const LinfAnswerParams params{.epsilon = 1.0, .delta = 1e-6, .p = 2.0};
  const LinfAnswerPlan plan = plan_linf_answers(params, 1);
  EXPECT_FALSE(plan.repair_with_sparse_vector);
  EXPECT_EQ(plan.sigma, generalized_gaussian_sigma(1.0, 1e-6, 2.0, 1));
  std::vector<double> one = {42.0};
  Context context = Context::with_fixed_seed(3);
  const LinfAnswerReport report = answer_counting_queries(context, one, params);
  EXPECT_EQ(report.repaired, 0u);
  EXPECT_TRUE(std::isfinite(one[0]));
  EXPECT_NE(one[0], 42.0);
}

// The three steps rebuilt from the public pieces on a context with the same seed (the answerer
// draws its three streams in order: noise, check, repair). The plan's threshold is lowered to
// about one GG scale so that many coordinates are flagged and the run halts after c repairs.
TEST(LinfAnswers, ReleaseIsNoiseThenCheckThenRepair) {
  const LinfAnswerParams params{.epsilon = 1.0, .delta = 1e-6, .p = 1.5, .max_repairs = 8};
  const std::vector<double> d = counts(2000, 2);
  LinfAnswerPlan plan = plan_linf_answers(params, d.size());
  ASSERT_TRUE(plan.repair_with_sparse_vector);
  ASSERT_EQ(plan.check.max_positives, 8u);
  for (const double threshold : {plan.check.threshold, plan.sigma}) {
    plan.check.threshold = threshold;
    for (std::uint64_t seed = 0; seed < 3; ++seed) {
      std::vector<double> answered = d;
      Context context = Context::with_fixed_seed(seed);
      const LinfAnswerReport report = answer_counting_queries(context, answered, plan);

      Context replay = Context::with_fixed_seed(seed);
      std::vector<double> y = d;
      add_noise(replay, y, {.distribution = NoiseDistribution::generalized_gaussian, .epsilon = plan.epsilon_noise,
                            .delta = plan.delta_noise, .sensitivity = 1.0, .p = plan.p});
      std::vector<double> errors(d.size());
      for (std::size_t i = 0; i < d.size(); ++i) errors[i] = std::fabs(y[i] - d[i]);
      const SparseVectorBatch flags = sparse_vector_batch(replay, std::span<const double>(errors), plan.check);
      std::vector<double> repaired;
      for (const SparseVectorAbove& above : flags.above) repaired.push_back(d[above.index]);
      if (!repaired.empty()) {
        add_noise(replay, repaired, {.distribution = NoiseDistribution::gaussian, .epsilon = plan.epsilon_repair,
                                     .delta = plan.delta_repair, .sensitivity = std::sqrt(8.0)});
      }
      for (std::size_t j = 0; j < repaired.size(); ++j) y[flags.above[j].index] = repaired[j];

      EXPECT_EQ(answered, y) << "seed " << seed;
      EXPECT_EQ(report.repaired, flags.above.size());
      if (threshold == plan.sigma) {
        // About a third of GG(1.5) coordinates exceed one scale: the check flags c and halts.
        EXPECT_EQ(report.repaired, 8u);
        EXPECT_TRUE(report.halted);
        for (const SparseVectorAbove& above : flags.above) EXPECT_NE(answered[above.index], d[above.index]);
      }
    }
  }
}

TEST(LinfAnswers, AnEditedPlanIsCheckedAgain) {
  const std::vector<double> d = counts(100, 6);
  const LinfAnswerPlan good = plan_linf_answers({.epsilon = 1.0, .delta = 1e-6, .p = 2.0, .max_repairs = 4}, 100);
  Context context = Context::with_fixed_seed(1);
  auto refused = [&](auto edit, const std::string& start) {
    LinfAnswerPlan plan = good;
    edit(plan);
    std::vector<double> answers = d;
    try {
      answer_counting_queries(context, answers, plan);
      ADD_FAILURE() << "expected InvalidArgument: " << start;
    } catch (const InvalidArgument& error) {
      EXPECT_EQ(std::string(error.what()).rfind(start, 0), 0u) << error.what();
    }
    EXPECT_EQ(answers, d);
  };
  refused([](LinfAnswerPlan& p) { p.sigma *= 0.99; }, "dpselect: plan.sigma must be at least the calibrated ");
  refused([](LinfAnswerPlan& p) { p.repair_std *= 0.99; }, "dpselect: plan.repair_std must be at least the calibrated ");
  refused([](LinfAnswerPlan& p) { p.queries = 99; }, "dpselect: plan.queries must equal answers.size() = 100 (got 99)");
  refused([](LinfAnswerPlan& p) { p.check.numeric = true; }, "dpselect: plan.check.numeric must be false (got true)");
  refused([](LinfAnswerPlan& p) { p.check.sensitivity = 0.5; }, "dpselect: plan.check.sensitivity must be at least 1");
  refused([](LinfAnswerPlan& p) { p.check.max_positives = 8; }, "dpselect: plan.repair_std must be at least the calibrated ");
  // Claiming less privacy loss than the noise was calibrated for.
  refused([](LinfAnswerPlan& p) { p.epsilon_noise = 0.5; }, "dpselect: plan.sigma must be at least the calibrated ");
  refused([](LinfAnswerPlan& p) { p.p = 0.5; }, "dpselect: plan.p must be in [1, 32] (got 0.5)");
  refused([](LinfAnswerPlan& p) { p.delta_repair = 0.0; }, "dpselect: plan.delta_repair must be in (0, 1) (got 0)");
  // The unedited plan is accepted; a larger sigma (more noise) too.
  std::vector<double> answers = d;
  EXPECT_NO_THROW(answer_counting_queries(context, answers, good));
  LinfAnswerPlan noisier = good;
  noisier.sigma *= 2;
  EXPECT_NO_THROW(answer_counting_queries(context, answers, noisier));
}

// With probability >= 1 - beta the error is within plan.bound. 40 runs at beta = 0.05: more than
// 10 runs above the bound has probability below 1e-5 if the bound is right.
TEST(LinfAnswers, ErrorStaysWithinThePlansBound) {
  const LinfAnswerParams params{.epsilon = 1.0, .delta = 1e-6, .beta = 0.05, .p = 2.0};
  const std::vector<double> d = counts(20'000, 3);
  Context context = Context::with_fixed_seed(99);
  int above_bound = 0;
  double bound = 0.0;
  double largest = 0.0;
  for (int run = 0; run < 40; ++run) {
    std::vector<double> answered = d;
    const LinfAnswerReport report = answer_counting_queries(context, answered, params);
    bound = report.plan.bound;
    largest = std::max(largest, linf(answered, d));
    above_bound += linf(answered, d) > bound;
    EXPECT_LE(report.repaired, report.plan.check.max_positives);
  }
  EXPECT_LE(above_bound, 10) << "bound " << bound;
  // The bound is a union bound, not a wild overestimate: the largest of 40 errors comes within a
  // factor 2 of it (measured: see the message).
  EXPECT_GE(largest, bound / 2) << "largest error " << largest << ", bound " << bound;
}

TEST(LinfAnswers, ChargesThreePartsTogetherOrNothing) {
  const LinfAnswerParams params{.epsilon = 1.0, .delta = 1e-6, .p = 2.0};
  Context context = Context::with_fixed_seed(1);
  auto accountant = std::make_shared<PrivacyAccountant>(PrivacyBound{1.2, 1e-5});
  context.charge_to(accountant);
  std::vector<double> d = counts(500, 4);
  answer_counting_queries(context, d, params);
  // Basic composition of the three parts is (1, 1e-6); the accountant may find a tighter route.
  EXPECT_LE(accountant->spent().epsilon, 1.0 + 1e-12);
  EXPECT_GT(accountant->spent().epsilon, 0.5);
  EXPECT_LE(accountant->spent().delta, 1e-5);
  const AccountedBound after_first = accountant->spent();
  // A second release would overspend epsilon: refused before anything is written.
  const std::vector<double> before = d;
  EXPECT_THROW(answer_counting_queries(context, d, params), BudgetExceeded);
  EXPECT_EQ(d, before);
  EXPECT_EQ(accountant->spent().epsilon, after_first.epsilon);
}

template <class Call>
void expect_invalid(Call call, const std::string& message) {
  try {
    call();
    ADD_FAILURE() << "expected InvalidArgument: " << message;
  } catch (const InvalidArgument& error) {
    EXPECT_EQ(std::string(error.what()), message);
  }
}

TEST(LinfAnswers, BadInputIsRefusedBeforeAnythingIsWritten) {
  Context context = Context::with_fixed_seed(1);
  std::vector<double> d = counts(10, 5);
  const std::vector<double> before = d;
  const LinfAnswerParams good{.epsilon = 1.0, .delta = 1e-6, .p = 2.0};
  auto with = [&](auto change) {
    LinfAnswerParams params = good;
    change(params);
    return params;
  };
  const auto answer = [&](const LinfAnswerParams& params) { return [&, params] { answer_counting_queries(context, d, params); }; };
  expect_invalid(answer(with([](auto& p) { p.epsilon = 0.0; })), "dpselect: epsilon must be finite and > 0 (got 0)");
  expect_invalid(answer(with([](auto& p) { p.epsilon = NAN; })), "dpselect: epsilon must be finite and > 0 (got nan)");
  expect_invalid(answer(with([](auto& p) { p.delta = 0.0; })), "dpselect: delta must be in (0, 1) (got 0)");
  expect_invalid(answer(with([](auto& p) { p.delta = 1.0; })), "dpselect: delta must be in (0, 1) (got 1)");
  expect_invalid(answer(with([](auto& p) { p.beta = 0.0; })), "dpselect: beta must be in (0, 1) (got 0)");
  expect_invalid(answer(with([](auto& p) { p.p = 0.5; })),
                 "dpselect: p must be 0 (chosen by the planner) or in [1, 32] (got 0.5)");
  expect_invalid(answer(with([](auto& p) { p.p = INFINITY; })),
                 "dpselect: p must be 0 (chosen by the planner) or in [1, 32] (got inf)");
  expect_invalid(answer(with([](auto& p) { p.max_repairs = 6; })),
                 "dpselect: max_repairs must be 0 (chosen by the planner) or at most queries / 2 = 5 (got 6)");
  std::vector<double> empty;
  expect_invalid([&] { answer_counting_queries(context, empty, good); }, "dpselect: queries must be in [1, 2^32] (got 0)");
  d[3] = NAN;
  expect_invalid([&] { answer_counting_queries(context, d, good); }, "dpselect: answers[3] must be finite with magnitude <= 1e300 (got nan)");
  d[3] = 2e300;
  expect_invalid([&] { answer_counting_queries(context, d, good); },
                 "dpselect: answers[3] must be finite with magnitude <= 1e300 (got 2e+300)");
  d[3] = before[3];
  EXPECT_EQ(d, before);
  expect_invalid([&] { plan_linf_answers(with([](auto& p) { p.epsilon = -1.0; }), 10); },
                 "dpselect: epsilon must be finite and > 0 (got -1)");
}

}  // namespace
}  // namespace dpselect
