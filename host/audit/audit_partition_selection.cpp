// SPDX-License-Identifier: Apache-2.0
// The library's audits of partition selection (audit.hpp, dpselect/partition_selection.hpp): each
// strategy on two pairs of datasets that differ in one user with all of their pairs, each claimed
// at (epsilon, delta + delta_float) and judged on delta at the claimed epsilon.
//
// Every dataset holds a background pair (user 0, key 100) on both sides, so that neither is empty.
// - "lone keys": user 1 holds keys 1 and 2, which nobody else holds (max_partitions 2); D' lacks
//   user 1. Output key: how many of keys 1 and 2 were released (0, 1 or 2). On D' that is always
//   0; on D "1" has probability 2 p(1) (1 - p(1)), within delta by the per-key split of each
//   strategy (p(1) = delta / 2 for truncated_geometric, 1 - (1 - delta)^(1/2) for Laplace, 1 -
//   (1 - delta / 2)^(1/2) for Gaussian, whose threshold has half of delta), so delta_lower sits
//   just below the claim (half of it for Gaussian): a per-key delta not split over the user's keys
//   would show about twice that.
// - "added to a key": key 1 held by n users on D' and n + 1 on D (max_partitions 1), n where the
//   keep probability rises fastest: for truncated_geometric in its geometric part, where
//   p(n + 1) = e^eps p(n) + delta exactly (n = 2 at these parameters), for the thresholds just
//   below the threshold (n = 2, T = 3.3 for Laplace, 4.1 for Gaussian). Output key: whether key 1
//   was released.
// The weighted strategies on the same pairs: user 1's two lone keys weigh 1/sqrt(2) each (for
// policy_gaussian too: both gaps are the cutoff), each passing rho with probability p where the
// two together fail with probability delta / 2 (dp_sips: over its rounds, a key left alone
// weighing 1 in the rounds after the other's release); the added user moves a key's weight from 2
// to 3 (policy_gaussian: min(n, Gamma), the same here).
// epsilon = 1, delta = 0.05: large, so that the events are frequent enough to be bounded closely.
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dpselect/audit.hpp"
#include "dpselect/partition_selection.hpp"

namespace dpselect::audit {
namespace {

constexpr double kEpsilon = 1.0;
constexpr double kDelta = 0.05;
constexpr std::uint64_t kBackgroundUser = 0;
constexpr std::uint64_t kBackgroundKey = 100;

struct Contributions {
  std::vector<std::uint64_t> users;
  std::vector<std::uint64_t> keys;
};

// A target releasing over `d` or `d_prime` and keying each release by `key_of` its released keys.
template <class KeyOf>
AuditTarget partition_target(std::string mechanism, std::string neighbours, const PartitionSelectionParams& params,
                             Contributions d, Contributions d_prime, KeyOf key_of) {
  AuditTarget target;
  target.mechanism = std::move(mechanism);
  target.neighbours = std::move(neighbours);
  target.claimed_epsilon = params.epsilon;
  // The rounding of the count strategies' keep probabilities adds at most (1 + e^eps)
  // max_partitions 2^-53 (PartitionSelectionReport::delta_float); the weighted ones' coins are exact.
  target.claimed_delta =
      params.delta + (is_weighted(params.strategy)
                          ? 0.0
                          : (1.0 + std::exp(params.epsilon)) * std::ldexp(static_cast<double>(params.max_partitions), -53));
  target.run = [params, d = std::move(d), d_prime = std::move(d_prime), key_of](
                   bool on_d_prime, Context& context, std::uint64_t runs, OutputCounts& counts) {
    const Contributions& data = on_d_prime ? d_prime : d;
    for (std::uint64_t run = 0; run < runs; ++run) {
      ++counts[key_of(select_partitions(context, data.users, data.keys, params).keys)];
    }
  };
  return target;
}

AuditTarget lone_keys_target(PartitionStrategy strategy) {
  const PartitionSelectionParams params{kEpsilon, kDelta, 2, strategy};
  Contributions d_prime{{kBackgroundUser}, {kBackgroundKey}};
  Contributions d{{kBackgroundUser, 1, 1}, {kBackgroundKey, 1, 2}};
  return partition_target("partition selection (" + std::string(to_string(strategy)) + ", m = 2)",
                          "a user with two keys nobody else holds, added", params, std::move(d), std::move(d_prime),
                          [](const std::vector<std::uint64_t>& released) {
                            OutputKey lone = 0;
                            for (const std::uint64_t key : released) lone += key == 1 || key == 2;
                            return lone;
                          });
}

AuditTarget added_user_target(PartitionStrategy strategy, std::uint64_t users_before) {
  const PartitionSelectionParams params{kEpsilon, kDelta, 1, strategy};
  Contributions d_prime{{kBackgroundUser}, {kBackgroundKey}};
  for (std::uint64_t user = 1; user <= users_before; ++user) {
    d_prime.users.push_back(user);
    d_prime.keys.push_back(1);
  }
  Contributions d = d_prime;
  d.users.push_back(users_before + 1);
  d.keys.push_back(1);
  return partition_target("partition selection (" + std::string(to_string(strategy)) + ", m = 1)",
                          "a user added to a key of " + std::to_string(users_before) + " users", params, std::move(d),
                          std::move(d_prime), [](const std::vector<std::uint64_t>& released) {
                            OutputKey kept = 0;
                            for (const std::uint64_t key : released) kept |= key == 1;
                            return kept;
                          });
}

}  // namespace

std::vector<AuditTarget> partition_selection_audits() {
  std::vector<AuditTarget> targets;
  for (const PartitionStrategy strategy :
       {PartitionStrategy::truncated_geometric, PartitionStrategy::laplace_threshold,
        PartitionStrategy::gaussian_threshold, PartitionStrategy::weighted_gaussian,
        PartitionStrategy::policy_gaussian, PartitionStrategy::dp_sips}) {
    targets.push_back(lone_keys_target(strategy));
    targets.push_back(added_user_target(strategy, 2));
  }
  return targets;
}

}  // namespace dpselect::audit
