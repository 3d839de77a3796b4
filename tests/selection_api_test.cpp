// SPDX-License-Identifier: Apache-2.0
// Release mechanics on the test's backend: determinism, fresh streams, sharding, indices above
// 2^32, functor and array paths agreeing, the report, and misuse.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "dpselect/detail/screened_scoring.hpp"
#include "support/test_backend.hpp"

namespace dpselect::testing {
namespace {

std::vector<double> wavy_utilities(std::size_t n) {
  std::vector<double> u(n);
  for (std::size_t i = 0; i < n; ++i) u[i] = 3.0 * std::sin(0.001 * static_cast<double>(i)) + 0.5 * std::cos(0.37 * i);
  return u;
}

using ReleaseApi = BackendTest;

TEST_F(ReleaseApi, FixedSeedIsReproducibleAndEachReleaseTakesAFreshStream) {
  const std::vector<double> u = wavy_utilities(5000);
  const SelectionParams params = params_for(Mechanism::exponential, 0.5, 1.0);
  Context a = Context::with_fixed_seed(99);
  Context b = Context::with_fixed_seed(99);
  Context c = Context::with_fixed_seed(100);
  int differs_from_other_seed = 0;
  for (std::uint64_t release = 0; release < 50; ++release) {
    const Selection sa = select(a, std::span<const double>(u), params);
    const Selection sb = select(b, std::span<const double>(u), params);
    const Selection sc = select(c, std::span<const double>(u), params);
    EXPECT_EQ(sa.index, sb.index);
    EXPECT_EQ(sa.report.stream, release);
    differs_from_other_seed += sa.index != sc.index;
  }
  // Each pick has entropy of several bits here; 50 equal picks from two keys would mean the key
  // is ignored.
  EXPECT_GT(differs_from_other_seed, 25);
}

TEST_F(ReleaseApi, OsEntropyContextsDiffer) {
  const std::vector<double> u(4096, 0.0);  // uniform over 4096 candidates
  const SelectionParams params = params_for(Mechanism::exponential, 1.0, 1.0);
  int equal = 0;
  for (int i = 0; i < 20; ++i) {
    Context a;
    Context b;
    equal += select(a, std::span<const double>(u), params).index == select(b, std::span<const double>(u), params).index;
  }
  EXPECT_LT(equal, 3);  // P(>= 3 equal of 20 at 1/4096 each) < 2e-8
}

TEST_F(ReleaseApi, ShardedRangeGivesTheWholeRangeAnswer) {
  constexpr std::uint64_t kFirst = (std::uint64_t{1} << 33) + 12345;  // indices above 2^32
  constexpr std::uint64_t kCount = 200'003;
  const std::vector<double> u = wavy_utilities(kCount);
  for (const Mechanism mechanism : {Mechanism::exponential, Mechanism::permute_and_flip, Mechanism::laplace_noisy_max}) {
    const SelectionParams params = params_for(mechanism, 2.0, 1.0);
    for (std::uint64_t seed = 0; seed < 10; ++seed) {
      Context whole_context = Context::with_fixed_seed(seed);
      Release whole = whole_context.begin_release(params);
      const ShardResult whole_result = whole.evaluate(std::span<const double>(u), kFirst);
      const Selection expected = whole.finish(whole_result);

      // Uneven shards in shuffled order, host arrays and a functor mixed.
      Context shard_context = Context::with_fixed_seed(seed);
      Release sharded = shard_context.begin_release(params);
      const std::uint64_t cuts[] = {0, 1, 65'537, 65'538, 150'000, kCount};
      ShardResult merged;
      for (int s : {3, 0, 4, 2, 1}) {
        const std::uint64_t lo = cuts[s];
        const std::uint64_t hi = cuts[s + 1];
        merged = merge(merged, sharded.evaluate(std::span<const double>(u.data() + lo, hi - lo), kFirst + lo));
      }
      const Selection got = sharded.finish(merged);
      EXPECT_EQ(got.index, expected.index) << "seed " << seed;
      EXPECT_GE(got.index, kFirst);
      EXPECT_EQ(merged.best_score, whole_result.best_score);
      EXPECT_EQ(got.report.candidates, kCount);
    }
  }
}

// A reader over `u` that records the ranges it was asked for.
template <class T>
ChunkedValues<T> chunked(const std::vector<T>& u, std::uint64_t chunk_size,
                            std::vector<std::pair<std::uint64_t, std::uint64_t>>* asked = nullptr) {
  return {u.size(),
          [&u, asked](std::uint64_t first, std::span<T> out) {
            if (asked != nullptr) asked->emplace_back(first, out.size());
            std::copy_n(u.begin() + static_cast<std::ptrdiff_t>(first), out.size(), out.begin());
          },
          chunk_size};
}

template <class T>
void expect_chunked_equals_whole(const std::vector<T>& u, const SelectionParams& params,
                                 std::initializer_list<std::uint64_t> chunk_sizes) {
  for (const std::uint64_t chunk_size : chunk_sizes) {
    for (std::uint64_t seed = 0; seed < 4; ++seed) {
      Context whole_context = Context::with_fixed_seed(seed);
      const Selection expected = select(whole_context, std::span<const T>(u), params);
      Context chunked_context = Context::with_fixed_seed(seed);
      std::vector<std::pair<std::uint64_t, std::uint64_t>> asked;
      const Selection got = select(chunked_context, chunked(u, chunk_size, &asked), params);
      EXPECT_EQ(got.index, expected.index) << "seed " << seed << ", chunks of " << chunk_size;
      EXPECT_EQ(got.report.stream, expected.report.stream);
      EXPECT_EQ(got.report.candidates, expected.report.candidates);
      EXPECT_EQ(got.report.slack.epsilon, expected.report.slack.epsilon);
      EXPECT_EQ(got.report.slack.delta, expected.report.slack.delta);
      // Consecutive ranges in order, each candidate once, none longer than a chunk.
      std::uint64_t next = 0;
      for (const auto& [first, size] : asked) {
        EXPECT_EQ(first, next);
        EXPECT_LE(size, chunk_size);
        next = first + size;
      }
      EXPECT_EQ(next, u.size());
    }
  }
}

TEST_F(ReleaseApi, ChunkedValuesReleaseWhatTheWholeArrayReleases) {
  std::vector<double> u = wavy_utilities(100'003);
  for (double& x : u) x += 1e6;  // the reference, taken from the first chunk, matters to the scores
  u[17] = -std::numeric_limits<double>::infinity();
  const std::vector<double> few(u.begin(), u.begin() + 300);
  for (const Mechanism mechanism : {Mechanism::exponential, Mechanism::permute_and_flip, Mechanism::laplace_noisy_max}) {
    expect_chunked_equals_whole(u, params_for(mechanism, 2.0, 1.0), {7'919, 65'536, u.size() + 1});
    expect_chunked_equals_whole(few, params_for(mechanism, 2.0, 1.0), {1, 7});
  }
  SelectionParams bounded = params_for(Mechanism::exponential, 2.0, 1.0, true);
  bounded.utility_bound = 1e7;
  expect_chunked_equals_whole(u, bounded, {65'536});
  const std::vector<float> floats(u.begin(), u.end());
  expect_chunked_equals_whole(floats, params_for(Mechanism::permute_and_flip, 0.5, 1.0), {7'919, u.size()});
}

TEST_F(ReleaseApi, ChunkedValuesAreCheckedBeforeTheCharge) {
  auto accountant = std::make_shared<PrivacyAccountant>(PrivacyBound{10.0, 0.0});
  Context context = Context::with_fixed_seed(3);
  context.charge_to(accountant);
  const std::vector<double> u = wavy_utilities(10);
  const SelectionParams params = params_for(Mechanism::exponential, 1.0, 1.0);
  ChunkedValues<double> empty = chunked(u, 4);
  empty.size = 0;
  EXPECT_THROW(select(context, empty, params), InvalidArgument);
  ChunkedValues<double> no_reader = chunked(u, 4);
  no_reader.read = nullptr;
  EXPECT_THROW(select(context, no_reader, params), InvalidArgument);
  EXPECT_THROW(select(context, chunked(u, 0), params), InvalidArgument);
  EXPECT_EQ(accountant->release_count(), 0u);
  // A NaN in the third chunk: refused by finish, naming its index, after the charge.
  std::vector<double> bad = u;
  bad[9] = std::nan("");
  try {
    select(context, chunked(bad, 4), params);
    ADD_FAILURE() << "a NaN was accepted";
  } catch (const InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("9"), std::string::npos) << error.what();
  }
  EXPECT_EQ(accountant->release_count(), 1u);
}

TEST_F(ReleaseApi, FunctorAndArrayPathsAgreeAcrossLargeIndices) {
  const Affine utility{0.01, -3.0};
  constexpr std::uint64_t kFirst = (std::uint64_t{1} << 40) - 50'000;  // straddles 2^40
  constexpr std::uint64_t kCount = 100'000;
  std::vector<double> values(kCount);
  for (std::uint64_t i = 0; i < kCount; ++i) values[i] = utility(kFirst + i);
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    const SelectionParams params = params_for(Mechanism::exponential, 1.0, 1.0);
    Context array_context = Context::with_fixed_seed(seed);
    const Selection from_array = [&] {
      Release r = array_context.begin_release(params);
      return r.finish(r.evaluate(std::span<const double>(values), kFirst));
    }();
    Context functor_context = Context::with_fixed_seed(seed);
    Release r = functor_context.begin_release(params);
    const ShardResult shard = evaluate_functor_on_backend(r, utility, IndexRange{kFirst, kFirst + kCount});
    EXPECT_EQ(r.finish(shard).index, from_array.index);
  }
}

TEST_F(ReleaseApi, CandidateAboveTwoToThe32IsSelected) {
  constexpr std::uint64_t kFirst = std::uint64_t{1} << 32;
  std::vector<float> u(1000, 0.0f);
  u[5] = 100.0f;  // leads by 50 noise scales: any other pick has probability < 1000 e^-50
  Context context = Context::with_fixed_seed(3);
  Release r = context.begin_release(params_for(Mechanism::permute_and_flip, 1.0, 1.0));
  EXPECT_EQ(r.finish(r.evaluate(std::span<const float>(u), kFirst)).index, kFirst + 5);
}

// The fused passes screen out candidates whose noise bound cannot reach the best score so far
// (noise_positions.hpp). That must never change the answer: compare index and winning score with an
// unscreened scalar loop over detail::noisy_score, for every mechanism, at sizes around the CPU
// chunk (8192) and GPU block (256 threads x 8) boundaries and a prime, on varied utilities, flat
// ones (many ties, where screening prunes most) and ones with excluded candidates.
TEST_F(ReleaseApi, ScreeningNeverChangesTheAnswer) {
  const std::size_t sizes[] = {1, 7, 9, 255, 2049, 8191, 8193, 65537, 1'000'003};
  for (const Mechanism mechanism : {Mechanism::exponential, Mechanism::permute_and_flip, Mechanism::laplace_noisy_max}) {
    for (const std::size_t n : sizes) {
      for (int shape = 0; shape < 3; ++shape) {
        std::vector<double> u = wavy_utilities(n);
        if (shape == 1) std::fill(u.begin(), u.end(), 42.0);
        if (shape == 2) for (std::size_t i = 0; i < n; i += 3) u[i] = -INFINITY;
        if (shape == 2 && n == 1) u[0] = 1.0;
        const SelectionParams params = params_for(mechanism, 3.0, 1.0);
        const std::uint64_t first = 5 + n;  // groups of 8 do not start at the range's start
        const std::uint64_t seed = n * 3 + shape;
        const Generator generator = seed % 2 == 0 ? Generator::chacha20 : Generator::philox;
        Context context = Context::with_fixed_seed(seed, generator);
        Release release = context.begin_release(params);
        const ShardResult got = release.evaluate(std::span<const double>(u), first);
        const detail::NoiseSpec spec{mechanism, 1.5, RandomKey::from_seed(seed, generator), 0, detail::kInfinity};
        std::uint64_t best = kNoIndex;
        double best_score = -INFINITY;
        for (std::uint64_t i = 0; i < n; ++i) {
          const double score = std::isinf(u[i]) ? -INFINITY : detail::noisy_score(spec, first + i, u[i]);
          if (score > best_score || best == kNoIndex) {
            best_score = score;
            best = first + i;
          }
        }
        EXPECT_EQ(got.best_index, best) << to_string(mechanism) << ", n = " << n << ", shape " << shape;
        EXPECT_EQ(got.best_score, best_score);
        EXPECT_EQ(release.finish(got).report.candidates, n);
      }
    }
  }
}

// Host arrays larger than one device chunk (32 MiB) stream through the GPU in several chunks (256
// MiB here); the answer must equal that of two shards, each also in several chunks.
TEST_F(ReleaseApi, HostArrayLargerThanOneDeviceChunk) {
  const std::size_t n = (std::size_t{1} << 26) + 3;
  std::vector<float> u(n);
  for (std::size_t i = 0; i < n; ++i) u[i] = static_cast<float>((i * 2654435761u) % 1000) * 0.01f;
  const SelectionParams params = params_for(Mechanism::exponential, 1.0, 1.0);
  Context whole_context = Context::with_fixed_seed(21);
  Release whole = whole_context.begin_release(params);
  const ShardResult whole_result = whole.evaluate(std::span<const float>(u), 0);
  Context shard_context = Context::with_fixed_seed(21);
  Release sharded = shard_context.begin_release(params);
  const std::size_t half = n / 2;
  const ShardResult merged = merge(sharded.evaluate(std::span<const float>(u.data(), half), 0),
                                   sharded.evaluate(std::span<const float>(u.data() + half, n - half), half));
  EXPECT_EQ(whole_result.best_index, merged.best_index);
  EXPECT_EQ(whole_result.best_score, merged.best_score);
  EXPECT_EQ(whole.finish(whole_result).report.candidates, n);
}

TEST_F(ReleaseApi, ExcludedCandidatesAreNeverSelected) {
  std::vector<double> u(3000, -INFINITY);
  u[17] = -5.0;
  u[2999] = -4.0;
  Context context = Context::with_fixed_seed(8);
  for (int i = 0; i < 200; ++i) {
    const Selection s = select(context, std::span<const double>(u), params_for(Mechanism::exponential, 0.1, 1.0));
    EXPECT_TRUE(s.index == 17 || s.index == 2999) << s.index;
  }
}

TEST_F(ReleaseApi, ReportDescribesTheRelease) {
  const std::vector<double> u = {1e6, 1e6 + 1, 1e6 - 3};
  Context context = Context::with_fixed_seed(4);
  const Selection s = select(context, std::span<const double>(u), params_for(Mechanism::permute_and_flip, 0.5, 2.0, true));
  EXPECT_EQ(s.report.mechanism, Mechanism::permute_and_flip);
  EXPECT_EQ(s.report.epsilon_spent, 0.5);
  EXPECT_EQ(s.report.sensitivity, 2.0);
  EXPECT_TRUE(s.report.monotone);
  EXPECT_DOUBLE_EQ(s.report.noise_scale, 4.0);  // Delta / eps for a monotone utility
  EXPECT_EQ(s.report.executed_on, kExecutedOn);
  EXPECT_EQ(s.report.candidates, 3u);
  // Slack of host/selection/floating_point_slack.cpp: c = 0.25; the scores are relative to the first
  // utility, so the largest score is c (max |u - 1e6| + 2 Delta) = c (3 + 4) (the reference comes
  // from the data, so it moves with a neighbour too), plus the shift's rounding; the race noise's
  // error 2^-38 and magnitude 93, two draws with a 2^-87 bad event a candidate.
  const double largest_score = 0.25 * (3.0 + 2 * 2.0);
  const double eta = 0x1p-38 + 0x1p-53 * (largest_score + 93.0) + 0x1p-53 * (1 + 0x1p-51) * largest_score;
  EXPECT_NEAR(s.report.slack.epsilon, 4 * eta + 0.5 * 0x1p-52, 1e-6 * s.report.slack.epsilon);
  EXPECT_NEAR(s.report.slack.delta, (1 + std::exp(0.5)) * 3 * 0x1p-86, 1e-6 * s.report.slack.delta);
  EXPECT_LT(s.report.slack.epsilon, 1e-9);
}

TEST_F(ReleaseApi, AReleaseNeverEvaluatesACandidateTwice) {
  const std::vector<double> u(100, 1.0);
  Context context = Context::with_fixed_seed(5);
  Release r = context.begin_release(params_for(Mechanism::exponential, 1.0, 1.0));
  const ShardResult first = r.evaluate(std::span<const double>(u.data(), 10), 0);
  EXPECT_THROW(r.evaluate(std::span<const double>(u.data(), 10), 5), UsageError);   // overlaps [0,10)
  EXPECT_THROW(r.evaluate(std::span<const double>(u.data(), 1), 9), UsageError);    // inside it
  const ShardResult second = r.evaluate(std::span<const double>(u.data(), 10), 10);  // adjacent: fine
  r.finish(merge(first, second));
  EXPECT_THROW(r.finish(first), UsageError);
  EXPECT_THROW(r.evaluate(std::span<const double>(u.data(), 10), 50), UsageError);
}

TEST_F(ReleaseApi, AutoBackendSaysWhatItPicked) {
  const std::vector<double> u = {0.0, 1.0};
  SelectionParams params = params_for(Mechanism::exponential, 1.0, 1.0);
  params.backend = Backend::Auto;
  Context context = Context::with_fixed_seed(6);
  const Selection s = select(context, std::span<const double>(u), params);
  EXPECT_EQ(s.report.executed_on, gpu_usable() ? ExecutedOn::gpu : ExecutedOn::cpu);
}

}  // namespace
}  // namespace dpselect::testing
