// SPDX-License-Identifier: Apache-2.0
// The keys of (user, query) pairs that may appear in a histogram, then a noisy count of each
// released key's users, the accountant charging both releases.
#include <dpselect/dpselect.hpp>
#include <dpselect/io.hpp>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <vector>

int main() {
  // 20,000 users, each with one query: query q held by about 20000 / (q + 1)^2 users.
  std::vector<std::uint64_t> users, queries;
  for (std::uint64_t user = 0; user < 20000; ++user) {
    std::uint64_t query = 0;
    while ((query + 1) * (query + 1) * (user % 997 + 1) < 997) ++query;  // a skewed shape
    users.push_back(user);
    queries.push_back(query);
  }
  // [doc:partition_then_count]
  auto accountant = std::make_shared<dpselect::PrivacyAccountant>(dpselect::PrivacyBound{2.0, 1e-6});
  dpselect::Context context;
  context.charge_to(accountant);
  // Which queries may be released: each user counts for one query (max_partitions 1).
  const dpselect::PartitionSelection kept = dpselect::select_partitions(
      context, users, queries, {.epsilon = 1.0, .delta = 1e-6, .max_partitions = 1});
  // The usual next step: the users of each released query, counted and noised (L1 sensitivity 1:
  // one user is in one query's count).
  std::map<std::uint64_t, double> users_of;
  for (const std::uint64_t query : queries) ++users_of[query];
  std::vector<double> counts;
  for (const std::uint64_t query : kept.keys) counts.push_back(users_of[query]);
  dpselect::add_noise(context, std::span<double>(counts), {.distribution = dpselect::NoiseDistribution::laplace,
                                                          .epsilon = 1.0, .sensitivity = 1.0});
  // accountant->spent(): both releases, (2, 1e-6) by basic composition
  // [/doc:partition_then_count]
  const dpselect::AccountedBound spent = accountant->spent();
  std::cout << kept.keys.size() << " queries released; spent epsilon " << spent.epsilon << ", delta " << spent.delta
            << '\n';
  return !kept.keys.empty() && accountant->release_count() == 2 ? 0 : 1;
}
