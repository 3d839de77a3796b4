// SPDX-License-Identifier: Apache-2.0
// Audits of the noise mechanisms (audit.hpp, host/audit/audit_noise.cpp): add_noise and add_secure_noise.
// Confidence 1 - 1e-6: an honest mechanism fails an audit with probability <= 1e-6 (run_audit's
// bounds hold jointly at that level); the seeds are fixed, so the outcome is reproducible.
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "dpselect/audit.hpp"

namespace dpselect::audit {
namespace {

TEST(NoiseAudit, EveryHonestTargetPasses) {
  const std::vector<AuditTarget> targets = noise_audits();
  ASSERT_EQ(targets.size(), 5u);
  AuditOptions options;
  options.selection_runs = 20'000;
  options.runs = 100'000;
  options.confidence = 1 - 1e-6;
  for (const AuditTarget& target : targets) {
    const AuditResult result = run_audit(target, options);
    std::printf("[audit] %-45s | %-28s | claim (%.3g, %.3g) | eps_lower %.4f delta_lower %.3g | %s\n",
                result.mechanism.c_str(), result.neighbours.c_str(), result.claimed_epsilon, result.claimed_delta,
                result.bounds.epsilon_lower, result.bounds.delta_lower, result.passed ? "passed" : "FAILED");
    EXPECT_TRUE(result.passed) << result.mechanism;
    EXPECT_GE(result.events_tested, 1u);
  }
}

}  // namespace
}  // namespace dpselect::audit
