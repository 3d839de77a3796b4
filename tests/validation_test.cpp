// SPDX-License-Identifier: Apache-2.0
// Every bad input gets an InvalidArgument (a std::invalid_argument) naming the parameter and
// the value, before any stream is drawn: the next release of the same context still gets
// stream 0.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dpselect/dpselect.hpp"
#include "support/expect_invalid.hpp"

namespace {

using dpselect::Backend;
using dpselect::Context;
using dpselect::InvalidArgument;
using dpselect::Mechanism;
using dpselect::Release;
using dpselect::SelectionParams;
using dpselect::testing::expect_invalid_message;
using dpselect::testing::kInf;
using dpselect::testing::kNaN;


SelectionParams good_params() {
  SelectionParams params;
  params.mechanism = Mechanism::exponential;
  params.epsilon = 1.0;
  params.sensitivity = 1.0;
  params.backend = Backend::Cpu;
  return params;
}

const std::vector<double> kUtilities = {0.0, 1.0, 2.0};

// As above, then checks that no stream was drawn from `context`.
template <class Call>
void expect_invalid(Context& context, Call call, std::initializer_list<std::string> fragments) {
  expect_invalid_message(call, fragments);
  const dpselect::Selection next = dpselect::select(context, std::span<const double>(kUtilities), good_params());
  EXPECT_EQ(next.report.stream, 0u) << "a stream was drawn before the error";
}

struct BadValue {
  double value;
  const char* text;
};
const BadValue kBadPositives[] = {{0.0, "(got 0)"}, {-1.0, "(got -1)"}, {kNaN, "(got nan)"},
                                  {kInf, "(got inf)"}, {-kInf, "(got -inf)"}};

// One check per bad value of one positive, finite parameter.
void expect_each_bad_value_rejected(double SelectionParams::*field, const std::string& name) {
  for (const BadValue& bad : kBadPositives) {
    Context context = Context::with_fixed_seed(1);
    SelectionParams params = good_params();
    params.*field = bad.value;
    expect_invalid(context, [&] { dpselect::select(context, std::span<const double>(kUtilities), params); },
                   {name, bad.text});
  }
}

TEST(Validation, EpsilonZeroNegativeNanInfinite) {
  expect_each_bad_value_rejected(&SelectionParams::epsilon, "epsilon");
}

TEST(Validation, SensitivityZeroNegativeNanInfinite) {
  expect_each_bad_value_rejected(&SelectionParams::sensitivity, "sensitivity");
}

TEST(Validation, BeginReleaseRejectsBadParamsWithoutDrawingAStream) {
  Context context = Context::with_fixed_seed(1);
  SelectionParams params = good_params();
  params.epsilon = -2.0;
  expect_invalid(context, [&] { context.begin_release(params); }, {"epsilon", "(got -2)"});
}

TEST(Validation, ScoreScaleThatUnderflows) {
  Context context = Context::with_fixed_seed(1);
  SelectionParams params = good_params();
  params.epsilon = 1e-300;
  params.sensitivity = 1e300;
  expect_invalid(context, [&] { dpselect::select(context, std::span<const double>(kUtilities), params); },
                 {"epsilon / (2 * sensitivity)", "(got 0)"});
}

TEST(Validation, EmptyUtilities) {
  Context context = Context::with_fixed_seed(1);
  expect_invalid(context, [&] { dpselect::select(context, std::span<const double>(), good_params()); },
                 {"utilities", "(got size 0)"});
}

TEST(Validation, EmptyRange) {
  Context context = Context::with_fixed_seed(1);
  expect_invalid(context, [&] {
    dpselect::select_functor(context, [](std::uint64_t) { return 0.0; }, dpselect::IndexRange{5, 5}, good_params());
  }, {"range", "[5, 5)"});
}

TEST(Validation, BeginAfterEnd) {
  Context context = Context::with_fixed_seed(1);
  expect_invalid(context, [&] {
    dpselect::select_functor(context, [](std::uint64_t) { return 0.0; }, dpselect::IndexRange{7, 3}, good_params());
  }, {"range", "begin 7", "end 3"});
}

// Utility values are read in the fused pass; a bad one throws from finish() before anything
// is released (the release's stream is consumed but its result never leaves the library).
void expect_bad_utility(double value, const char* text) {
  for (const bool as_float : {false, true}) {
    Context context = Context::with_fixed_seed(1);
    std::vector<double> utilities = {0.0, 1.0, 2.0, value, 3.0};
    std::vector<float> utilities_f(utilities.begin(), utilities.end());
    try {
      if (as_float) dpselect::select(context, std::span<const float>(utilities_f), good_params());
      else dpselect::select(context, std::span<const double>(utilities), good_params());
      ADD_FAILURE() << "no exception for utility " << text;
    } catch (const InvalidArgument& error) {
      EXPECT_NE(std::string(error.what()).find("utilities[3]"), std::string::npos) << error.what();
      EXPECT_NE(std::string(error.what()).find(text), std::string::npos) << error.what();
    }
  }
}

TEST(Validation, NanUtility) { expect_bad_utility(kNaN, "(got nan)"); }
TEST(Validation, PositiveInfiniteUtility) { expect_bad_utility(kInf, "(got inf)"); }

TEST(Validation, ScaledUtilityThatOverflows) {
  Context context = Context::with_fixed_seed(1);
  SelectionParams params = good_params();
  params.epsilon = 1e10;
  const std::vector<double> utilities = {0.0, 1e300};
  EXPECT_THROW(dpselect::select(context, std::span<const double>(utilities), params), InvalidArgument);
}

TEST(Validation, UtilitiesTooLargeForDoublePrecisionNoise) {
  // A spread of 2e17 around the reference (the first utility) makes |score| 1e17, which leaves the
  // noise below one ulp: the slack would exceed epsilon. The message blames epsilon and never
  // quotes max |utility - reference| (for pricing, the optimal revenue).
  Context context = Context::with_fixed_seed(1);
  const std::vector<double> utilities = {1e17, -1e17 - 64};
  try {
    dpselect::select(context, std::span<const double>(utilities), good_params());
    ADD_FAILURE() << "no exception";
  } catch (const InvalidArgument& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("epsilon is too small for double-precision noise"), std::string::npos) << message;
    EXPECT_NE(message.find("use a larger epsilon, or give a public bound on |utility| (utility_bound"), std::string::npos) << message;
    EXPECT_EQ(message.find("200000000000000064"), std::string::npos) << message;
    EXPECT_EQ(message.find("2e+17"), std::string::npos) << message;
    EXPECT_EQ(message.find("1e+17"), std::string::npos) << message;
  }
}

TEST(Validation, AllCandidatesExcluded) {
  Context context = Context::with_fixed_seed(1);
  const std::vector<double> utilities = {-kInf, -kInf};
  expect_invalid_message([&] { dpselect::select(context, std::span<const double>(utilities), good_params()); },
                         {"utilities", "-inf"});
}

TEST(Validation, CpuBackendCannotReadDeviceMemory) {
  Context context = Context::with_fixed_seed(1);
  const float dummy = 0.0f;
  EXPECT_THROW(dpselect::select(context, dpselect::DeviceSpan<const float>{&dummy, 1}, good_params(), nullptr),
               InvalidArgument);
}

TEST(Validation, GpuFunctorNeedsTheCudaHeader) {
  Context context = Context::with_fixed_seed(1);
  SelectionParams params = good_params();
  params.backend = Backend::Gpu;
  expect_invalid(context, [&] {
    dpselect::select_functor(context, [](std::uint64_t) { return 0.0; }, dpselect::IndexRange{0, 4}, params);
  }, {"backend", "select.cuh"});
}

TEST(Validation, GpuBackendWithoutDeviceIsReportedNotIgnored) {
  if (dpselect::gpu_usable()) GTEST_SKIP() << "a GPU is usable here";
  Context context = Context::with_fixed_seed(1);
  SelectionParams params = good_params();
  params.backend = Backend::Gpu;
  EXPECT_THROW(dpselect::select(context, std::span<const double>(kUtilities), params),
               dpselect::BackendUnavailable);
}

}  // namespace

namespace {

TEST(Validation, UtilityBoundNegativeNanInfinite) {
  for (const BadValue& bad : {BadValue{-1.0, "(got -1)"}, BadValue{kNaN, "(got nan)"}, BadValue{kInf, "(got inf)"}}) {
    Context context = Context::with_fixed_seed(1);
    SelectionParams params = good_params();
    params.utility_bound = bad.value;
    expect_invalid(context, [&] { dpselect::select(context, std::span<const double>(kUtilities), params); },
                   {"utility_bound", bad.text});
  }
}

TEST(Validation, UtilityReferenceNanInfinite) {
  for (const BadValue& bad :
       {BadValue{kNaN, "(got nan)"}, BadValue{kInf, "(got inf)"}, BadValue{-kInf, "(got -inf)"}}) {
    Context context = Context::with_fixed_seed(1);
    SelectionParams params = good_params();
    params.utility_reference = bad.value;
    expect_invalid(context, [&] { dpselect::select(context, std::span<const double>(kUtilities), params); },
                   {"utility_reference", bad.text});
  }
}

TEST(Validation, UtilityBeyondItsBoundAroundThePublicReference) {
  Context context = Context::with_fixed_seed(1);
  SelectionParams params = good_params();
  params.utility_reference = 1e15;
  params.utility_bound = 4.0;
  // Within 4 of the reference: accepted, though far beyond 4 in magnitude.
  const std::vector<double> near = {1e15 - 4.0, 1e15 + 3.5, 1e15};
  EXPECT_NO_THROW(dpselect::select(context, std::span<const double>(near), params));
  const std::vector<double> beyond = {1e15, 1e15 + 4.5, 1e15 + 1.0};
  expect_invalid_message([&] { dpselect::select(context, std::span<const double>(beyond), params); },
                         {"utilities[1]", "utility_bound", "(got a finite value beyond those limits)"});
}

TEST(Validation, UtilityBoundTooLargeForDoublePrecisionNoise) {
  Context context = Context::with_fixed_seed(1);
  SelectionParams params = good_params();
  params.utility_bound = 1e17;
  expect_invalid(context, [&] { context.begin_release(params); }, {"utility_bound", "(got 1e+17)"});
}

TEST(Validation, UtilityBeyondItsDeclaredBound) {
  Context context = Context::with_fixed_seed(1);
  SelectionParams params = good_params();
  params.utility_bound = 2.5;
  const std::vector<double> utilities = {0.0, 2.5, -2.5, -3.0};
  // A utility is data (often a count): the message names its index, never its value.
  expect_invalid_message([&] { dpselect::select(context, std::span<const double>(utilities), params); },
                         {"utilities[3]", "utility_bound", "(got a finite value beyond those limits)"});
  try {
    dpselect::select(context, std::span<const double>(utilities), params);
  } catch (const InvalidArgument& error) {
    EXPECT_EQ(std::string(error.what()).find("-3"), std::string::npos) << error.what();
  }
}

TEST(Validation, IndicesAtOrAboveTwoToThe63) {
  Context context = Context::with_fixed_seed(1);
  const auto zero = [](std::uint64_t) { return 0.0; };
  const std::uint64_t limit = std::uint64_t{1} << 63;
  expect_invalid(context, [&] {
    dpselect::select_functor(context, zero, dpselect::IndexRange{limit - 4, limit + 4}, good_params());
  }, {"range", "2^63"});
  Release release = context.begin_release(good_params());
  EXPECT_THROW(release.evaluate(std::span<const double>(kUtilities), limit - 2), InvalidArgument);
  EXPECT_NO_THROW(release.evaluate(std::span<const double>(kUtilities), limit - 3));
}

TEST(Validation, DeviceMemoryChecksRunBeforeAStreamIsDrawn) {
  Context context = Context::with_fixed_seed(1);
  SelectionParams params = good_params();
  params.backend = Backend::Auto;
  expect_invalid(context, [&] {
    dpselect::select(context, dpselect::DeviceSpan<const float>{nullptr, 3}, params, nullptr);
  }, {"utilities.data", "nullptr"});
}

TEST(Validation, SelectionParamsValidateAsEveryReleaseDoes) {
  EXPECT_NO_THROW(good_params().validate());
  SelectionParams params = good_params();
  params.epsilon = 0.0;
  expect_invalid_message([&] { params.validate(); }, {"epsilon", "0"});
  params = good_params();
  params.utility_reference = kNaN;
  expect_invalid_message([&] { params.validate(); }, {"utility_reference", "nan"});
  params = good_params();
  params.utility_bound = 1e300;  // a public bound whose slack reaches epsilon: refused before any work
  EXPECT_THROW(params.validate(), InvalidArgument);
}

TEST(Release, MovedFromContextIsSpent) {
  Context original = Context::with_fixed_seed(9);
  const dpselect::Selection first = dpselect::select(original, std::span<const double>(kUtilities), good_params());
  Context moved = std::move(original);
  EXPECT_THROW(original.begin_release(good_params()), dpselect::UsageError);  // NOLINT(bugprone-use-after-move)
  const dpselect::Selection second = dpselect::select(moved, std::span<const double>(kUtilities), good_params());
  EXPECT_EQ(first.report.stream, 0u);
  EXPECT_EQ(second.report.stream, 1u);  // the counter moved with the key
}

TEST(Release, FinishRefusesAResultFromAnotherRelease) {
  Context context = Context::with_fixed_seed(9);
  Release a = context.begin_release(good_params());
  Release b = context.begin_release(good_params());
  const dpselect::ShardResult from_a = a.evaluate(std::span<const double>(kUtilities), 0);
  const dpselect::ShardResult from_b = b.evaluate(std::span<const double>(kUtilities), 0);
  EXPECT_THROW(b.finish(from_a), dpselect::UsageError);
  Release c = context.begin_release(good_params());
  EXPECT_THROW(c.finish(dpselect::merge(from_a, from_b)), dpselect::UsageError);
}

TEST(Release, FinishRefusesAnIncompleteMerge) {
  Context context = Context::with_fixed_seed(9);
  Release release = context.begin_release(good_params());
  const dpselect::ShardResult left = release.evaluate(std::span<const double>(kUtilities), 0);
  release.evaluate(std::span<const double>(kUtilities), 3);
  EXPECT_THROW(release.finish(left), dpselect::UsageError);
}

TEST(Release, SlackFromADeclaredBoundDoesNotDependOnTheData) {
  SelectionParams params = good_params();
  const std::vector<double> small = {0.0, 1.0};
  const std::vector<double> large = {0.0, 900.0};
  Context context = Context::with_fixed_seed(2);
  const auto data_small = dpselect::select(context, std::span<const double>(small), params).report.slack;
  const auto data_large = dpselect::select(context, std::span<const double>(large), params).report.slack;
  EXPECT_TRUE(data_small.depends_on_data);
  EXPECT_LT(data_small.epsilon, data_large.epsilon);  // computed from max |u|: it reveals it
  params.utility_bound = 1000.0;
  const auto bound_small = dpselect::select(context, std::span<const double>(small), params).report.slack;
  const auto bound_large = dpselect::select(context, std::span<const double>(large), params).report.slack;
  EXPECT_FALSE(bound_small.depends_on_data);
  EXPECT_EQ(bound_small.epsilon, bound_large.epsilon);
  EXPECT_EQ(bound_small.delta, bound_large.delta);
}

}  // namespace

namespace {

TEST(Release, MovedFromReleaseIsSpent) {
  Context context = Context::with_fixed_seed(9);
  Release original = context.begin_release(good_params());
  Release moved = std::move(original);
  EXPECT_THROW(original.evaluate(std::span<const double>(kUtilities), 0), dpselect::UsageError);  // NOLINT
  EXPECT_THROW(original.finish(dpselect::ShardResult{}), dpselect::UsageError);                   // NOLINT
  EXPECT_NO_THROW(moved.finish(moved.evaluate(std::span<const double>(kUtilities), 0)));
}

}  // namespace

namespace {

TEST(Release, FinishRefusesAResultFromAnotherContextWithTheSameStream) {
  Context a = Context::with_fixed_seed(1);
  Context b = Context::with_fixed_seed(2);
  Release from_a = a.begin_release(good_params());
  Release from_b = b.begin_release(good_params());
  ASSERT_EQ(from_a.stream(), from_b.stream());
  const dpselect::ShardResult result_a = from_a.evaluate(std::span<const double>(kUtilities), 0);
  from_b.evaluate(std::span<const double>(kUtilities), 0);
  EXPECT_THROW(from_b.finish(result_a), dpselect::UsageError);
}

TEST(Release, FinishRefusesAShardMergedTwiceInsteadOfItsTwin) {
  Context context = Context::with_fixed_seed(3);
  Release release = context.begin_release(good_params());
  const dpselect::ShardResult first = release.evaluate(std::span<const double>(kUtilities), 0);
  const dpselect::ShardResult second = release.evaluate(std::span<const double>(kUtilities), 3);
  ASSERT_EQ(first.candidates, second.candidates);  // same count: only the fingerprint differs
  EXPECT_THROW(release.finish(dpselect::merge(first, first)), dpselect::UsageError);
}

TEST(Release, SharedKeyReleaseAcceptsShardsFromOtherProcesses) {
  const dpselect::PhiloxKey key{0x1234u, 0x5678u};
  Context rank0 = Context::with_shared_key(key, 40);
  Context rank1 = Context::with_shared_key(key, 40);
  Release local = rank0.begin_release(good_params());
  Release remote = rank1.begin_release(good_params());
  const dpselect::ShardResult mine = local.evaluate(std::span<const double>(kUtilities), 0);
  const dpselect::ShardResult theirs = remote.evaluate(std::span<const double>(kUtilities), 3);
  const dpselect::Selection s = local.finish(dpselect::merge(mine, theirs));
  EXPECT_EQ(s.report.candidates, 6u);
  EXPECT_EQ(s.report.stream, 40u);
}

}  // namespace
