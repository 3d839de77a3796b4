// SPDX-License-Identifier: Apache-2.0
// PartitionSelectionTicket (<dpselect/partition_ticket.hpp>): one process's passes
// (partition_passes.hpp) run step by step by a data engine's workers, and the ticket's bytes.
#include "dpselect/partition_ticket.hpp"

#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "dpselect/detail/release_access.hpp"
#include "dpselect/errors.hpp"
#include "engine/byte_layout.hpp"
#include "engine/release_tags.hpp"
#include "partition_selection/partition_passes.hpp"

namespace dpselect {
namespace {

// The layout of to_bytes, version 1 (every integer and double little-endian):
//   magic "dpsP" | u32 version | u8 generator | u8 strategy | u8 backend | u8 zero | 32 key bytes
//   (ReleaseTicket's) | u64 stream | f64 epsilon | f64 delta | u64 max_partitions | u64 rounds |
//   f64 round_budget_ratio | f64 policy_cutoff_sigmas | u64 pre_threshold | u64 the tag of every
//   byte before it (TagDomain::partition_ticket_bytes)
constexpr char kMagic[4] = {'d', 'p', 's', 'P'};
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kSerializedSize = 4 + 4 + 4 + 32 + 8 * 9;

[[noreturn]] void refuse_bytes(const std::string& what) {
  throw InvalidArgument("dpselect: bytes must be a PartitionSelectionTicket written by "
                        "PartitionSelectionTicket::to_bytes (" + what + ")");
}

// Refuses a ticket's parameters that a worker cannot run (before any charge).
void check_ticket_params(const PartitionSelectionParams& params) {
  if (params.strategy == PartitionStrategy::policy_gaussian) {
    throw InvalidArgument(
        "dpselect: strategy must not be policy-gaussian for workers (its users update the weights one after "
        "another, in one process): run select_partitions, or choose dp-sips or weighted-gaussian");
  }
  if (params.backend == Backend::Gpu) {
    throw InvalidArgument("dpselect: backend must be Auto or Cpu for a partition selection run by workers (got Gpu)");
  }
}

detail::ContextAccess::KeyedStream round_stream(const RandomKey& key, std::uint64_t first, std::uint32_t round) {
  return {key, first + std::uint64_t{round} * detail::kWeightedRoundStreams};
}

}  // namespace

std::uint32_t PartitionSelectionTicket::rounds() const {
  return params_.strategy == PartitionStrategy::dp_sips ? params_.rounds : 1;
}

void PartitionSelectionTicket::check_round(std::uint32_t round) const {
  if (round >= rounds()) {
    throw InvalidArgument("dpselect: round must be in [0, " + std::to_string(rounds()) + ") for " +
                          std::string(to_string(params_.strategy)) + " (got " + std::to_string(round) + ")");
  }
}

BoundedContributions PartitionSelectionTicket::bound(std::span<const std::uint64_t> users,
                                                     std::span<const std::uint64_t> keys, std::uint32_t round) const {
  check_round(round);
  if (users.size() != keys.size()) {
    throw InvalidArgument("dpselect: keys must hold one key per user entry (got " + std::to_string(keys.size()) +
                          " keys for " + std::to_string(users.size()) + " users)");
  }
  std::vector<detail::Contribution> pairs = detail::contributions_of(users, keys);
  detail::keep_distinct(pairs);
  const std::vector<detail::WeightedKey> kept =
      detail::bounded_weighted_keys(pairs, params_.max_partitions, round_stream(key_, stream_, round));
  BoundedContributions bounded;
  bounded.keys.resize(kept.size());
  bounded.held.resize(kept.size());
  for (std::size_t i = 0; i < kept.size(); ++i) {
    bounded.keys[i] = kept[i].key;
    bounded.held[i] = kept[i].held;
  }
  return bounded;
}

PartitionDecision PartitionSelectionTicket::decide(std::span<const std::uint64_t> keys,
                                                   std::span<const std::uint64_t> held,
                                                   std::span<const std::uint64_t> pairs, std::uint32_t round) const {
  check_round(round);
  const bool weighted = is_weighted(params_.strategy);
  if (pairs.size() != keys.size() || (held.size() != keys.size() && (weighted || !held.empty()))) {
    throw InvalidArgument("dpselect: held and pairs must hold one entry per key (got " + std::to_string(keys.size()) +
                          " keys, " + std::to_string(held.size()) + " held and " + std::to_string(pairs.size()) +
                          " pairs" + (weighted ? "" : "; held may be empty for a count strategy") + ")");
  }
  std::vector<detail::KeptEntry> entries(keys.size());
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::uint64_t h = held.empty() ? 1 : held[i];
    if (h == 0 || h > params_.max_partitions) {
      throw InvalidArgument("dpselect: held[" + std::to_string(i) + "] must be in [1, max_partitions = " +
                            std::to_string(params_.max_partitions) + "] (got " + std::to_string(h) + ")");
    }
    if (pairs[i] == 0) throw InvalidArgument("dpselect: pairs[" + std::to_string(i) + "] must be >= 1 (got 0)");
    if (pairs[i] > std::numeric_limits<std::uint64_t>::max() - total) {
      throw InvalidArgument("dpselect: pairs must sum to less than 2^64 (they overflow at entry " + std::to_string(i) +
                            ")");
    }
    total += pairs[i];
    entries[i] = {keys[i], h, pairs[i]};
  }
  const detail::ContextAccess::KeyedStream drawn = round_stream(key_, stream_, round);
  detail::ReleasedKeys released =
      weighted ? detail::weighted_entry_keys(entries, rule_.rounds[round], params_.max_partitions, drawn)
               : detail::counted_released_keys(entries, rule_, params_.strategy, drawn);
  return {std::move(released.keys), released.distinct};
}

PartitionSelectionReport PartitionSelectionTicket::report(std::uint64_t keys_considered) const {
  return detail::partition_selection_report(params_, rule_, {key_, stream_}, keys_considered, ExecutedOn::cpu);
}

std::vector<std::uint8_t> PartitionSelectionTicket::to_bytes() const {
  detail::ByteWriter w;
  w.bytes(kMagic, sizeof kMagic);
  w.u32(kVersion);
  w.u8(static_cast<std::uint8_t>(key_.generator));
  w.u8(static_cast<std::uint8_t>(params_.strategy));
  w.u8(static_cast<std::uint8_t>(params_.backend));
  w.u8(0);
  w.key(key_);
  w.u64(stream_);
  w.f64(params_.epsilon);
  w.f64(params_.delta);
  w.u64(params_.max_partitions);
  w.u64(params_.rounds);
  w.f64(params_.round_budget_ratio);
  w.f64(params_.policy_cutoff_sigmas);
  w.u64(params_.pre_threshold);
  return w.tagged(key_, stream_, detail::TagDomain::partition_ticket_bytes);
}

PartitionSelectionTicket PartitionSelectionTicket::from_bytes(std::span<const std::uint8_t> bytes) {
  if (bytes.size() != kSerializedSize) {
    refuse_bytes("of " + std::to_string(kSerializedSize) + " bytes; got " + std::to_string(bytes.size()));
  }
  if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) refuse_bytes("they do not begin with its mark");
  detail::ByteReader r(bytes.subspan(sizeof kMagic));
  const std::uint32_t version = r.u32();
  if (version != kVersion) {
    refuse_bytes("of version " + std::to_string(kVersion) + "; got version " + std::to_string(version));
  }
  const std::uint8_t generator = r.u8();
  const std::uint8_t strategy = r.u8();
  const std::uint8_t backend = r.u8();
  const std::uint8_t zero = r.u8();
  if (generator > static_cast<std::uint8_t>(Generator::philox)) {
    refuse_bytes("a generator code of 0 or 1; got " + std::to_string(generator));
  }
  if (strategy > static_cast<std::uint8_t>(PartitionStrategy::dp_sips)) {
    refuse_bytes("a strategy code of 0 to 5; got " + std::to_string(strategy));
  }
  if (backend > static_cast<std::uint8_t>(Backend::Gpu)) {
    refuse_bytes("a backend code of 0 to 2; got " + std::to_string(backend));
  }
  if (zero != 0) refuse_bytes("a zero byte after the backend; got " + std::to_string(zero));
  PartitionSelectionTicket ticket;
  if (!r.key(generator, ticket.key_)) refuse_bytes("zeros after a Philox key's two words");
  ticket.stream_ = r.u64();
  PartitionSelectionParams& params = ticket.params_;
  params.strategy = static_cast<PartitionStrategy>(strategy);
  params.backend = static_cast<Backend>(backend);
  params.epsilon = r.f64();
  params.delta = r.f64();
  params.max_partitions = r.u64();
  const std::uint64_t rounds = r.u64();
  params.round_budget_ratio = r.f64();
  params.policy_cutoff_sigmas = r.f64();
  params.pre_threshold = r.u64();
  // Every byte is covered by the tag: a changed field is refused before its value is looked at.
  if (r.u64() != detail::keyed_tag(ticket.key_, ticket.stream_, detail::TagDomain::partition_ticket_bytes,
                                   bytes.first(kSerializedSize - 8))) {
    refuse_bytes("their tag does not match their contents: corrupted or changed");
  }
  if (rounds > kMaxPartitionRounds) refuse_bytes("rounds of at most 16; got " + std::to_string(rounds));
  params.rounds = static_cast<std::uint32_t>(rounds);
  try {
    check_ticket_params(params);
    ticket.rule_ = partition_keep_rule(params);
  } catch (const InvalidArgument& e) {
    refuse_bytes(std::string("their parameters: ") + e.what());
  }
  return ticket;
}

PartitionSelectionTicket begin_partition_selection(Context& context, const PartitionSelectionParams& params) {
  PartitionSelectionTicket ticket;
  ticket.rule_ = partition_keep_rule(params);  // validates
  check_ticket_params(params);
  ticket.params_ = params;
  // The release: approximate at (epsilon, delta), charged before the streams are drawn, as
  // select_partitions charges it.
  const PrivacyCharge charge = detail::partition_selection_charge(params);
  detail::ContextAccess::charge(context, std::span(&charge, 1));
  const detail::ContextAccess::KeyedStream drawn =
      detail::ContextAccess::draw_streams(context, detail::partition_selection_streams(params));
  ticket.key_ = drawn.key;
  ticket.stream_ = drawn.stream;
  return ticket;
}

}  // namespace dpselect
