// SPDX-License-Identifier: Apache-2.0
// AuditOptions::progress: counts from 0 to the total, never decreasing, on the calling thread,
// and an audit's result does not depend on whether a hook is set.
#include <gtest/gtest.h>

#include <thread>
#include <utility>
#include <vector>

#include "dpselect/audit.hpp"

namespace dpselect::audit {
namespace {

// A target whose output is always 0: no privacy loss, and no randomness needed.
AuditTarget constant_target(std::vector<std::uint64_t>& chunk_sizes) {
  AuditTarget target;
  target.mechanism = "constant";
  target.neighbours = "any";
  target.claimed_epsilon = 1.0;
  target.run = [&chunk_sizes](bool, Context&, std::uint64_t runs, OutputCounts& counts) {
    chunk_sizes.push_back(runs);
    counts[0] += runs;
  };
  return target;
}

TEST(AuditProgress, CountsRiseFromZeroToTheTotalOnTheCallingThread) {
  std::vector<std::uint64_t> chunk_sizes;
  AuditOptions options;
  options.selection_runs = 1000;
  options.runs = 2 * kAuditChunk + 5;  // three chunks per input
  std::vector<std::pair<std::uint64_t, std::uint64_t>> calls;
  const std::thread::id caller = std::this_thread::get_id();
  options.progress = [&](std::uint64_t done, std::uint64_t total) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    calls.emplace_back(done, total);
  };
  const AuditResult result = run_audit(constant_target(chunk_sizes), options);
  EXPECT_TRUE(result.passed);

  const std::uint64_t total = 2 * (options.selection_runs + options.runs);
  ASSERT_GE(calls.size(), 2u);
  EXPECT_EQ(calls.front().first, 0u);
  EXPECT_EQ(calls.back().first, total);
  for (std::size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].second, total);
    if (i > 0) EXPECT_GE(calls[i].first, calls[i - 1].first);
  }
  // One call per chunk (2 selection inputs of one chunk, 2 test inputs of three) and the first.
  EXPECT_EQ(calls.size(), 1u + 2u + 2u * 3u);
  for (const std::uint64_t size : chunk_sizes) EXPECT_LE(size, kAuditChunk);
}

TEST(AuditProgress, ResultDoesNotDependOnTheHook) {
  AuditTarget target = selection_audits().front();
  AuditOptions options;
  options.selection_runs = 2000;
  options.runs = kAuditChunk + 5;
  const AuditResult without_hook = run_audit(target, options);
  std::uint64_t last_done = 0;
  options.progress = [&](std::uint64_t done, std::uint64_t) { last_done = done; };
  const AuditResult with_hook = run_audit(target, options);
  EXPECT_EQ(last_done, 2 * (options.selection_runs + options.runs));
  EXPECT_EQ(with_hook.bounds.epsilon_lower, without_hook.bounds.epsilon_lower);
  EXPECT_EQ(with_hook.bounds.worst_epsilon.p_d, without_hook.bounds.worst_epsilon.p_d);
  EXPECT_EQ(with_hook.events_tested, without_hook.events_tested);
}

}  // namespace
}  // namespace dpselect::audit
