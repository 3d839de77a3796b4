// SPDX-License-Identifier: Apache-2.0
// Concurrency: 8 application threads share one PrivacyAccountant and several
// Contexts and call every entry point that charges, about 10^6 releases in all, until the budget
// runs out and a fraction of them is refused. Checked afterwards:
//   (a) the accountant's total and the tally of successful releases agree, never exceed the
//       budget, and the budget was reached (every refusal was one the budget had to make);
//   (b) every refused release drew no stream: each context's streams are exactly the contiguous
//       range between a probe release before the threads start and one after they end;
//   (c) no two releases of one context share a stream.
// DPSELECT_CONCURRENCY_RELEASES sets the number of releases (default 10^6; a smaller count for a
// quick run under ThreadSanitizer, which slows every memory access several times).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "dpselect/dpselect.hpp"

namespace dpselect::testing {
namespace {

constexpr int kThreads = 8;
constexpr std::uint64_t kDefaultReleases = 1'000'000;

std::uint64_t releases_from_environment() {
  const char* text = std::getenv("DPSELECT_CONCURRENCY_RELEASES");
  if (text == nullptr || *text == '\0') return kDefaultReleases;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (*end != '\0' || value < kThreads) {
    ADD_FAILURE() << "DPSELECT_CONCURRENCY_RELEASES must be an integer >= " << kThreads << ", got " << text;
    return kDefaultReleases;
  }
  return value;
}

// Every entry point that charges a context's accountant.
enum class Operation {
  select_float,
  select_double,
  release_api,  // begin_release, evaluate, finish
  top_k,
  rows,
  repeated,
  price_grid,
  price_list,
  price_range,
  quantile,
  quantiles_joint,
  quantiles_recursive,
  quantiles_basic,
  quantiles_zcdp,
  sparse_vector_streaming,
  sparse_vector_batch,
  noise_laplace,
  noise_gaussian,
  secure_laplace,
  secure_gaussian,
  linf_answers,  // draws three streams it does not report: on a context of its own
  count,
};
constexpr int kOperations = static_cast<int>(Operation::count);

constexpr std::uint64_t kTopK = 2;
constexpr std::uint64_t kRows = 3;
constexpr std::uint64_t kRepeated = 2;
constexpr std::uint64_t kLinfStreams = 3;  // linf_answers.hpp: "three streams are drawn"
constexpr double kDelta = 1e-9;            // of every approximate release
constexpr double kEpsilons[] = {0.05, 0.1, 0.15, 0.2};
constexpr double kLinfEpsilon = 0.1;
constexpr std::uint64_t kQuantiles = 3;  // Inputs::qs

// One planned release: what it does, on which context, at which epsilon.
struct Planned {
  Operation operation;
  int context;
  double epsilon;
};

// The (epsilon, delta) a release charges, as each entry point documents its charge.
struct Charge {
  long double epsilon = 0;
  long double delta = 0;
};

long double zcdp_quantiles_epsilon(double epsilon) {
  static const std::map<double, long double> charged = [] {
    std::map<double, long double> table;
    for (const double each : kEpsilons) {
      table[each] = kQuantiles * static_cast<long double>(per_release_epsilon(
                                     kQuantiles, each, kDelta, ReleaseKind::exponential_mechanism));
    }
    return table;
  }();
  return charged.at(epsilon);
}

Charge documented_charge(const Planned& planned) {
  const long double epsilon = planned.epsilon;
  switch (planned.operation) {
    case Operation::top_k: return {epsilon, 0};  // top_k.hpp: k picks at epsilon / k (exact for k = 2)
    case Operation::rows: return {kRows * epsilon, 0};        // rows.hpp: one release per row
    case Operation::repeated: return {kRepeated * epsilon, 0};  // rows.hpp: releases x epsilon
    case Operation::quantiles_zcdp:
      // quantiles.cpp charges the m mechanisms as m exponential-mechanism releases at the largest
      // epsilon the accountant's best theorem fits in (epsilon, delta) (per_release_epsilon), delta 0.
      return {zcdp_quantiles_epsilon(planned.epsilon), 0};
    case Operation::noise_gaussian:
    case Operation::secure_gaussian:
    case Operation::linf_answers: return {epsilon, kDelta};
    default: return {epsilon, 0};
  }
}

// The contexts: a few shared by every thread, one per thread, and one per thread for the
// l-inf answerer (whose streams are known only by their count).
constexpr int kSharedContexts = 3;
constexpr int kContexts = kSharedContexts + 2 * kThreads;
int own_context(int thread) { return kSharedContexts + thread; }
int linf_context(int thread) { return kSharedContexts + kThreads + thread; }

std::vector<Planned> plan_for_thread(int thread, std::uint64_t releases) {
  std::mt19937_64 random(0xC0FFEE + thread);
  std::vector<Planned> plan;
  plan.reserve(releases);
  for (std::uint64_t i = 0; i < releases; ++i) {
    const auto operation = static_cast<Operation>(random() % kOperations);
    int context = random() % 2 == 0 ? static_cast<int>(random() % kSharedContexts) : own_context(thread);
    double epsilon = kEpsilons[random() % std::size(kEpsilons)];
    if (operation == Operation::linf_answers) {
      context = linf_context(thread);
      epsilon = kLinfEpsilon;
    }
    plan.push_back({operation, context, epsilon});
  }
  return plan;
}

// What one thread saw.
struct ThreadLog {
  std::vector<std::vector<std::uint64_t>> streams = std::vector<std::vector<std::uint64_t>>(kContexts);
  std::vector<std::uint64_t> linf_successes = std::vector<std::uint64_t>(kContexts, 0);
  long double spent_epsilon = 0;
  long double spent_delta = 0;
  std::uint64_t successes = 0;
  std::vector<Charge> refused;
  std::vector<std::string> errors;
};

// Small public inputs: the test is about the shared objects, not the data.
struct Inputs {
  std::vector<float> utilities_float{1.0f, 4.0f, 2.0f, 3.0f, 0.5f};
  std::vector<double> utilities_double{3.0, 1.0, 4.0, 1.5, 2.5};
  std::vector<double> matrix{1, 2, 3, 4, 5, 6, 3, 1, 2, 0, 4, 1, 2, 2, 2};  // kRows x 5
  std::vector<double> bid_values{1.0, 2.5, 3.0, 4.0, 7.5};
  Bids bids{bid_values};
  std::vector<double> prices{1.0, 2.0, 3.0, 5.0};
  PriceGrid grid{.min = 1.0, .max = 8.0, .step = 1.0};
  PriceRange range{.min = 0.5, .max = 8.0};
  QuantileRange quantile_range{.lower = 0.0, .upper = 10.0};
  std::vector<double> quantile_values{1.0, 2.0, 2.5, 6.0, 9.0, 3.0};
  QuantileData quantile_data{quantile_values, quantile_range};
  std::vector<double> qs{0.25, 0.5, 0.75};
  std::vector<double> query_answers{0.0, 1.0, 9.0, 2.0, 8.0, 0.5};
  // Planning the l-inf answerer depends only on public parameters and takes milliseconds to
  // seconds (its calibration searches): made once, at one epsilon.
  LinfAnswerPlan linf_plan =
      plan_linf_answers({.epsilon = kLinfEpsilon, .delta = kDelta, .p = 2.0}, query_answers.size());
};

SelectionParams selection_params(double epsilon, std::uint64_t i) {
  SelectionParams params;
  params.mechanism = static_cast<Mechanism>(i % 3);  // each mechanism in turn
  params.epsilon = epsilon;
  params.sensitivity = 1.0;
  params.utility_bound = 16.0;
  params.backend = Backend::Cpu;
  return params;
}

PricingParams pricing_params(double epsilon) {
  PricingParams params;
  params.epsilon = epsilon;
  params.max_bidders = 8;
  params.backend = Backend::Cpu;
  return params;
}

QuantilesParams quantiles_params(const Inputs& inputs, double epsilon, QuantilesMethod method) {
  QuantilesParams params;
  params.base.range = inputs.quantile_range;
  params.base.epsilon = epsilon;
  params.base.max_points = 16;
  params.base.backend = Backend::Cpu;
  params.method = method;
  params.delta = method == QuantilesMethod::independent_zcdp ? kDelta : 0.0;
  return params;
}

SparseVectorParams sparse_vector_params(double epsilon) {
  SparseVectorParams params;
  params.epsilon = epsilon;
  params.sensitivity = 1.0;
  params.threshold = 5.0;
  params.max_positives = 1;
  return params;
}

// Runs one release; records its streams. Throws what the entry point throws.
void run_release(const Planned& planned, std::uint64_t i, Context& context, const Inputs& inputs,
                 std::vector<std::uint64_t>& streams, std::uint64_t& linf_successes) {
  const double epsilon = planned.epsilon;
  const SelectionParams params = selection_params(epsilon, i);
  switch (planned.operation) {
    case Operation::select_float:
      streams.push_back(select(context, std::span<const float>(inputs.utilities_float), params).report.stream);
      return;
    case Operation::select_double:
      streams.push_back(select(context, std::span<const double>(inputs.utilities_double), params).report.stream);
      return;
    case Operation::release_api: {
      Release release = context.begin_release(params);
      const std::uint64_t stream = release.stream();
      const ShardResult shard = release.evaluate(std::span<const double>(inputs.utilities_double));
      const Selection selection = release.finish(shard);
      if (selection.report.stream != stream) throw std::runtime_error("release_api: report.stream != stream()");
      streams.push_back(stream);
      return;
    }
    case Operation::top_k: {
      TopKParams top_k{.selection = params, .k = kTopK};
      top_k.selection.mechanism = Mechanism::exponential;
      streams.push_back(select_top_k(context, std::span<const float>(inputs.utilities_float), top_k).report.per_pick.stream);
      return;
    }
    case Operation::rows: {
      const HostMatrix<const double> matrix{inputs.matrix.data(), kRows, inputs.matrix.size() / kRows};
      for (const Selection& selection : select_rows(context, matrix, params).selections) {
        streams.push_back(selection.report.stream);
      }
      return;
    }
    case Operation::repeated:
      for (const Selection& selection :
           select_repeated(context, std::span<const double>(inputs.utilities_double), params, kRepeated).selections) {
        streams.push_back(selection.report.stream);
      }
      return;
    case Operation::price_grid:
      streams.push_back(select_price(context, inputs.bids, inputs.grid, pricing_params(epsilon)).report.stream);
      return;
    case Operation::price_list:
      streams.push_back(
          select_price(context, inputs.bids, std::span<const double>(inputs.prices), pricing_params(epsilon))
              .report.stream);
      return;
    case Operation::price_range:
      streams.push_back(select_price(context, inputs.bids, inputs.range, pricing_params(epsilon)).report.stream);
      return;
    case Operation::quantile: {
      const QuantilesParams quantile = quantiles_params(inputs, epsilon, QuantilesMethod::joint_exponential);
      streams.push_back(select_quantile(context, inputs.quantile_data, 0.5, quantile.base).report.stream);
      return;
    }
    case Operation::quantiles_joint:
    case Operation::quantiles_recursive:
    case Operation::quantiles_basic:
    case Operation::quantiles_zcdp: {
      const QuantilesMethod method =
          planned.operation == Operation::quantiles_joint       ? QuantilesMethod::joint_exponential
          : planned.operation == Operation::quantiles_recursive ? QuantilesMethod::recursive_splitting
          : planned.operation == Operation::quantiles_basic     ? QuantilesMethod::independent_basic
                                                                : QuantilesMethod::independent_zcdp;
      const QuantilesRelease release =
          select_quantiles(context, inputs.quantile_data, inputs.qs, quantiles_params(inputs, epsilon, method));
      streams.insert(streams.end(), release.streams.begin(), release.streams.end());
      return;
    }
    case Operation::sparse_vector_streaming: {
      SparseVector sparse_vector(context, sparse_vector_params(epsilon));
      for (const double value : inputs.query_answers) {
        if (sparse_vector.halted()) break;
        sparse_vector.answer(value);
      }
      streams.push_back(sparse_vector.report().stream);
      return;
    }
    case Operation::sparse_vector_batch:
      streams.push_back(sparse_vector_batch(context, std::span<const double>(inputs.query_answers),
                                            sparse_vector_params(epsilon))
                            .report.stream);
      return;
    case Operation::noise_laplace:
    case Operation::noise_gaussian: {
      std::vector<double> values = inputs.query_answers;
      NoiseVectorParams noise;
      const bool gaussian = planned.operation == Operation::noise_gaussian;
      noise.distribution = gaussian ? NoiseDistribution::gaussian : NoiseDistribution::laplace;
      noise.epsilon = epsilon;
      noise.delta = gaussian ? kDelta : 0.0;
      noise.backend = Backend::Cpu;
      streams.push_back(add_noise(context, std::span<double>(values), noise).stream);
      return;
    }
    case Operation::secure_laplace:
    case Operation::secure_gaussian: {
      std::vector<double> values = inputs.query_answers;
      SecureNoiseParams noise;
      const bool gaussian = planned.operation == Operation::secure_gaussian;
      noise.distribution = gaussian ? SecureDistribution::gaussian : SecureDistribution::laplace;
      noise.epsilon = epsilon;
      noise.delta = gaussian ? kDelta : 0.0;
      noise.sensitivity = 1.0;
      streams.push_back(add_secure_noise(context, std::span<double>(values), noise).stream);
      return;
    }
    case Operation::linf_answers: {
      std::vector<double> answers = inputs.query_answers;
      answer_counting_queries(context, std::span<double>(answers), inputs.linf_plan);
      ++linf_successes;
      return;
    }
    case Operation::count: break;
  }
  throw std::logic_error("unknown operation");
}

void run_thread(int thread, const std::vector<Planned>& plan, std::vector<std::unique_ptr<Context>>& contexts,
                const Inputs& inputs, ThreadLog& log) {
  for (std::uint64_t i = 0; i < plan.size(); ++i) {
    const Planned& planned = plan[i];
    const Charge charge = documented_charge(planned);
    try {
      run_release(planned, i, *contexts[planned.context], inputs, log.streams[planned.context],
                  log.linf_successes[planned.context]);
      log.spent_epsilon += charge.epsilon;
      log.spent_delta += charge.delta;
      ++log.successes;
    } catch (const BudgetExceeded&) {
      log.refused.push_back(charge);
    } catch (const std::exception& error) {
      if (log.errors.size() < 5) {
        log.errors.push_back("thread " + std::to_string(thread) + ", release " + std::to_string(i) +
                             " (operation " + std::to_string(static_cast<int>(planned.operation)) +
                             "): " + error.what());
      }
    }
  }
}

std::uint64_t probe_stream(Context& context) {
  SelectionParams params = selection_params(1.0, 0);
  return context.begin_release(params).stream();
}

TEST(Concurrency, SharedAccountantAndContextsNeverOverspendNorReuseStreams) {
  const std::uint64_t releases = releases_from_environment();
  std::vector<std::vector<Planned>> plans;
  Charge demand;
  for (int thread = 0; thread < kThreads; ++thread) {
    plans.push_back(plan_for_thread(thread, releases / kThreads + (thread < static_cast<int>(releases % kThreads))));
    for (const Planned& planned : plans.back()) {
      const Charge charge = documented_charge(planned);
      demand.epsilon += charge.epsilon;
      demand.delta += charge.delta;
    }
  }
  // A budget of 70% of what the plans ask for, in epsilon and in delta: a fraction is refused.
  // Basic composition only (ParameterChoice::adaptive, a valid privacy filter: Rogers, Roth,
  // Ullman & Vadhan 2016), so the accountant's total is the plain sum the test can tally.
  const PrivacyBound budget{.epsilon = static_cast<double>(0.7L * demand.epsilon),
                            .delta = static_cast<double>(0.7L * demand.delta)};
  auto accountant = std::make_shared<PrivacyAccountant>(budget, ParameterChoice::adaptive);

  std::vector<std::unique_ptr<Context>> contexts;
  for (int c = 0; c < kContexts; ++c) {
    const Generator generator = c % 2 == 0 ? Generator::chacha20 : Generator::philox;
    contexts.push_back(std::make_unique<Context>(Context::with_fixed_seed(1000 + c, generator)));
  }
  // A probe release on each context before it is charged: the first stream of the test's range.
  std::vector<std::uint64_t> first_stream(kContexts);
  for (int c = 0; c < kContexts; ++c) {
    first_stream[c] = probe_stream(*contexts[c]) + 1;
    contexts[c]->charge_to(accountant);
  }

  const Inputs inputs;
  std::vector<ThreadLog> logs(kThreads);
  {
    std::vector<std::thread> threads;
    for (int thread = 0; thread < kThreads; ++thread) {
      threads.emplace_back(run_thread, thread, std::cref(plans[thread]), std::ref(contexts), std::cref(inputs),
                           std::ref(logs[thread]));
    }
    for (std::thread& thread : threads) thread.join();
  }

  for (const ThreadLog& log : logs) {
    for (const std::string& error : log.errors) ADD_FAILURE() << error;
  }

  // (a) The tally of successful releases is what the accountant holds (a charge lost to a race,
  // or one not documented, breaks the equality), within the budget, and every refusal was due:
  // the budget had no room left for it at the end (room only shrinks). A refusal with room, or a
  // budget never reached (no refusal), fails.
  long double tally_epsilon = 0, tally_delta = 0;
  std::uint64_t successes = 0, refusals = 0;
  for (const ThreadLog& log : logs) {
    tally_epsilon += log.spent_epsilon;
    tally_delta += log.spent_delta;
    successes += log.successes;
    refusals += log.refused.size();
  }
  const AccountedBound spent = accountant->spent();
  EXPECT_EQ(spent.route, CompositionRoute::basic);
  // Relative 1e-12: the accountant's compensated sum and the long double tally differ by ulps.
  EXPECT_NEAR(spent.epsilon, static_cast<double>(tally_epsilon), 1e-12 * budget.epsilon);
  EXPECT_NEAR(spent.delta, static_cast<double>(tally_delta), 1e-12 * budget.delta);
  EXPECT_LE(spent.epsilon, budget.epsilon);
  EXPECT_LE(spent.delta, budget.delta);
  EXPECT_LE(tally_epsilon, static_cast<long double>(budget.epsilon) * (1 + 1e-12L));
  EXPECT_LE(tally_delta, static_cast<long double>(budget.delta) * (1 + 1e-12L));
  EXPECT_GT(refusals, 0u) << "the budget was never reached";
  EXPECT_GT(successes, refusals);  // 70% of the demand fits
  std::uint64_t undue_refusals = 0;
  for (const ThreadLog& log : logs) {
    for (const Charge& refused : log.refused) {
      const bool over_epsilon = spent.epsilon + refused.epsilon > budget.epsilon * (1 - 1e-12L);
      const bool over_delta = refused.delta > 0 && spent.delta + refused.delta > budget.delta * (1 - 1e-12L);
      if (!over_epsilon && !over_delta) ++undue_refusals;
    }
  }
  EXPECT_EQ(undue_refusals, 0u);

  // (b), (c) Per context: stream ids all distinct (two releases sharing a stream leave a
  // duplicate), and exactly first..first+count-1, closed by a probe after the threads (a refused
  // release that drew a stream leaves a gap, or moves the closing probe past the range).
  for (int c = 0; c < kContexts; ++c) {
    contexts[c]->charge_to(nullptr);
    const std::uint64_t after_last = probe_stream(*contexts[c]);
    std::vector<std::uint64_t> streams;
    std::uint64_t linf_successes = 0;
    for (const ThreadLog& log : logs) {
      streams.insert(streams.end(), log.streams[c].begin(), log.streams[c].end());
      linf_successes += log.linf_successes[c];
    }
    std::sort(streams.begin(), streams.end());
    const auto duplicate = std::adjacent_find(streams.begin(), streams.end());
    EXPECT_EQ(duplicate, streams.end()) << "context " << c << ": stream " << *duplicate << " used twice";
    if (linf_successes > 0) {
      // The l-inf answerer reports no stream ids, only that it draws three: count them.
      EXPECT_TRUE(streams.empty()) << "context " << c;
      EXPECT_EQ(after_last, first_stream[c] + kLinfStreams * linf_successes) << "context " << c;
      continue;
    }
    EXPECT_EQ(after_last, first_stream[c] + streams.size()) << "context " << c;
    std::uint64_t gaps = 0;
    for (std::uint64_t i = 0; i < streams.size(); ++i) gaps += streams[i] != first_stream[c] + i;
    EXPECT_EQ(gaps, 0u) << "context " << c << ": streams not contiguous from " << first_stream[c];
  }

  std::cout << "[ concurrency ] " << releases << " releases over " << kThreads << " threads: " << successes
            << " released, " << refusals << " refused with BudgetExceeded\n";
}

}  // namespace
}  // namespace dpselect::testing
