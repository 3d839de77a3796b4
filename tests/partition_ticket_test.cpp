// SPDX-License-Identifier: Apache-2.0
// PartitionSelectionTicket: workers that bound whole users and decide whole keys, in any grouping,
// release select_partitions' keys for the same seed (every strategy a ticket runs, dp_sips round by
// round); the ticket's bytes travel and refuse changes; bad requests fail before any charge.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "dpselect/accounting.hpp"
#include "dpselect/context.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/partition_selection.hpp"
#include "dpselect/partition_ticket.hpp"

namespace {

using dpselect::PartitionSelectionParams;
using dpselect::PartitionSelectionTicket;
using dpselect::PartitionStrategy;

struct TicketPairs {
  std::vector<std::uint64_t> users;
  std::vector<std::uint64_t> keys;
};

// Users over and under the bound, keys held by about 20 to 100 users (some released, some not),
// repeated pairs.
TicketPairs ticket_pairs() {
  TicketPairs pairs;
  std::mt19937_64 draw(5);
  for (std::uint64_t user = 0; user < 4000; ++user) {
    const std::uint64_t held = 1 + draw() % 7;
    for (std::uint64_t j = 0; j < held; ++j) {
      pairs.users.push_back(user * 0x9e3779b97f4a7c15ull);
      pairs.keys.push_back(draw() % 90 + (draw() % 3 == 0 ? 1000000 : 0));
    }
  }
  for (std::size_t i = 0; i < 300; ++i) {
    pairs.users.push_back(pairs.users[i * 5]);
    pairs.keys.push_back(pairs.keys[i * 5]);
  }
  return pairs;
}

// The selection as an engine runs it: `workers` groups of whole users (by a hash of the user),
// each bounded alone; the kept pairs counted per (key, held) and split into groups of whole keys
// (by another hash), each decided alone; dp_sips's rounds drop the released keys' pairs.
std::pair<std::vector<std::uint64_t>, std::uint64_t> run_on_workers(const PartitionSelectionTicket& ticket,
                                                                    TicketPairs pairs, int workers) {
  std::vector<std::uint64_t> released;
  std::uint64_t considered = 0;
  for (std::uint32_t round = 0; round < ticket.rounds(); ++round) {
    std::map<std::pair<std::uint64_t, std::uint64_t>, std::uint64_t> counted;  // (key, held) -> pairs
    for (int w = 0; w < workers; ++w) {
      TicketPairs mine;
      for (std::size_t i = 0; i < pairs.users.size(); ++i) {
        if (static_cast<int>((pairs.users[i] * 31 + 7) % workers) != w) continue;
        mine.users.push_back(pairs.users[i]);
        mine.keys.push_back(pairs.keys[i]);
      }
      const dpselect::BoundedContributions kept = ticket.bound(mine.users, mine.keys, round);
      for (std::size_t i = 0; i < kept.keys.size(); ++i) ++counted[{kept.keys[i], kept.held[i]}];
    }
    std::vector<std::uint64_t> round_keys;
    for (int w = 0; w < workers; ++w) {
      std::vector<std::uint64_t> keys, held, count;
      for (const auto& [entry, n] : counted) {
        if (static_cast<int>((entry.first * 13 + 3) % workers) != w) continue;
        keys.push_back(entry.first);
        held.push_back(entry.second);
        count.push_back(n);
      }
      const dpselect::PartitionDecision decided = ticket.decide(keys, held, count, round);
      if (round == 0) considered += decided.keys_considered;
      round_keys.insert(round_keys.end(), decided.keys.begin(), decided.keys.end());
    }
    TicketPairs rest;
    for (std::size_t i = 0; i < pairs.users.size(); ++i) {
      if (std::find(round_keys.begin(), round_keys.end(), pairs.keys[i]) != round_keys.end()) continue;
      rest.users.push_back(pairs.users[i]);
      rest.keys.push_back(pairs.keys[i]);
    }
    pairs = std::move(rest);
    released.insert(released.end(), round_keys.begin(), round_keys.end());
  }
  std::sort(released.begin(), released.end());
  return {released, considered};
}

PartitionSelectionParams ticket_params(PartitionStrategy strategy) {
  PartitionSelectionParams params;
  params.epsilon = 1.0;
  params.delta = 1e-5;
  params.max_partitions = 3;
  params.strategy = strategy;
  params.backend = dpselect::Backend::Cpu;
  return params;
}

TEST(PartitionSelectionTicket, WorkersReleaseOneProcessKeysForEveryStrategyItRuns) {
  const TicketPairs pairs = ticket_pairs();
  for (const PartitionStrategy strategy :
       {PartitionStrategy::truncated_geometric, PartitionStrategy::laplace_threshold,
        PartitionStrategy::gaussian_threshold, PartitionStrategy::weighted_gaussian, PartitionStrategy::dp_sips}) {
    for (const std::uint64_t pre_threshold : {std::uint64_t{1}, std::uint64_t{4}}) {
      PartitionSelectionParams params = ticket_params(strategy);
      if (dpselect::is_weighted(strategy) && pre_threshold > 1) continue;
      params.pre_threshold = pre_threshold;
      for (const int workers : {1, 3}) {
        auto one = dpselect::Context::with_fixed_seed(21);
        auto many = dpselect::Context::with_fixed_seed(21);
        const dpselect::PartitionSelection single = dpselect::select_partitions(one, pairs.users, pairs.keys, params);
        const PartitionSelectionTicket ticket = dpselect::begin_partition_selection(many, params);
        const auto [released, considered] = run_on_workers(ticket, pairs, workers);
        const auto name = std::string(dpselect::to_string(strategy)) + " pre " + std::to_string(pre_threshold) +
                          ", workers " + std::to_string(workers);
        ASSERT_FALSE(single.keys.empty()) << name;  // neither none nor every key: a comparison that can fail
        ASSERT_LT(single.keys.size(), single.report.keys_considered) << name;
        EXPECT_EQ(released, single.keys) << name;
        const dpselect::PartitionSelectionReport report = ticket.report(considered);
        EXPECT_EQ(report.keys_considered, single.report.keys_considered) << name;
        EXPECT_EQ(report.stream, single.report.stream) << name;
        EXPECT_EQ(report.streams, single.report.streams) << name;
        EXPECT_EQ(report.delta_float, single.report.delta_float) << name;
        // Both drew as many streams: the next ones are equal.
        EXPECT_EQ(dpselect::begin_partition_selection(one, params).stream(),
                  dpselect::begin_partition_selection(many, params).stream())
            << name;
      }
    }
  }
}

TEST(PartitionSelectionTicket, BytesTravelAndRefuseAnyChange) {
  for (const PartitionStrategy strategy : {PartitionStrategy::truncated_geometric, PartitionStrategy::dp_sips}) {
    auto context = dpselect::Context::with_fixed_seed(8);
    const PartitionSelectionTicket ticket = dpselect::begin_partition_selection(context, ticket_params(strategy));
    const std::vector<std::uint8_t> bytes = ticket.to_bytes();
    const PartitionSelectionTicket back = PartitionSelectionTicket::from_bytes(bytes);
    EXPECT_EQ(back.to_bytes(), bytes);
    EXPECT_EQ(back.stream(), ticket.stream());
    EXPECT_EQ(back.rounds(), ticket.rounds());
    const TicketPairs pairs = ticket_pairs();
    EXPECT_EQ(run_on_workers(back, pairs, 2), run_on_workers(ticket, pairs, 2));
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      std::vector<std::uint8_t> changed = bytes;
      changed[i] ^= 0x10;
      EXPECT_THROW(PartitionSelectionTicket::from_bytes(changed), dpselect::InvalidArgument) << "byte " << i;
    }
    std::vector<std::uint8_t> shorter(bytes.begin(), bytes.end() - 1);
    EXPECT_THROW(PartitionSelectionTicket::from_bytes(shorter), dpselect::InvalidArgument);
  }
}

TEST(PartitionSelectionTicket, RefusesWhatWorkersCannotRunBeforeAnyCharge) {
  auto accountant = std::make_shared<dpselect::PrivacyAccountant>(dpselect::PrivacyBound{1e308, 0.5});
  auto context = dpselect::Context::with_fixed_seed(3);
  context.charge_to(accountant);
  PartitionSelectionParams policy = ticket_params(PartitionStrategy::policy_gaussian);
  EXPECT_THROW(dpselect::begin_partition_selection(context, policy), dpselect::InvalidArgument);
  PartitionSelectionParams gpu = ticket_params(PartitionStrategy::truncated_geometric);
  gpu.backend = dpselect::Backend::Gpu;
  EXPECT_THROW(dpselect::begin_partition_selection(context, gpu), dpselect::InvalidArgument);
  PartitionSelectionParams bad = ticket_params(PartitionStrategy::truncated_geometric);
  bad.delta = 0.0;
  EXPECT_THROW(dpselect::begin_partition_selection(context, bad), dpselect::InvalidArgument);
  EXPECT_EQ(accountant->release_count(), 0u);
  auto fresh = dpselect::Context::with_fixed_seed(3);
  const PartitionSelectionParams good = ticket_params(PartitionStrategy::truncated_geometric);
  EXPECT_EQ(dpselect::begin_partition_selection(context, good).stream(),
            dpselect::begin_partition_selection(fresh, good).stream());  // nothing was drawn
}

TEST(PartitionSelectionTicket, RefusesBadStepsNamingTheEntry) {
  auto context = dpselect::Context::with_fixed_seed(4);
  const PartitionSelectionTicket counts =
      dpselect::begin_partition_selection(context, ticket_params(PartitionStrategy::truncated_geometric));
  const PartitionSelectionTicket weights =
      dpselect::begin_partition_selection(context, ticket_params(PartitionStrategy::weighted_gaussian));
  const std::vector<std::uint64_t> two = {1, 2}, one = {1}, none = {};
  EXPECT_THROW(counts.bound(two, one), dpselect::InvalidArgument);
  EXPECT_THROW(counts.bound(two, two, 1), dpselect::InvalidArgument);  // one round only
  EXPECT_NO_THROW(counts.decide(two, none, two));                      // held may be empty for counts
  EXPECT_THROW(weights.decide(two, none, two), dpselect::InvalidArgument);
  EXPECT_THROW(counts.decide(two, two, one), dpselect::InvalidArgument);
  try {
    weights.decide(two, std::vector<std::uint64_t>{1, 4}, two);  // held beyond max_partitions = 3
    ADD_FAILURE() << "held 4 was taken";
  } catch (const dpselect::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("held[1]"), std::string::npos) << e.what();
  }
  try {
    counts.decide(two, none, std::vector<std::uint64_t>{3, 0});
    ADD_FAILURE() << "pairs 0 was taken";
  } catch (const dpselect::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("pairs[1]"), std::string::npos) << e.what();
  }
  const std::uint64_t most = ~std::uint64_t{0};
  EXPECT_THROW(counts.decide(two, none, std::vector<std::uint64_t>{most, 1}), dpselect::InvalidArgument);
}

}  // namespace
