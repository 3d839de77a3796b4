// SPDX-License-Identifier: Apache-2.0
/// @file
/// Partition selection run by workers of a data engine (Spark, Dask, or any other way of sending
/// work elsewhere): the driver charges the selection once and hands out a ticket; workers bound
/// the pairs of whole users and decide whole keys with it; the driver gathers the released keys.
/// Every random bit follows the identity of a user or a key (select_partitions in
/// partition_selection.hpp), so however the engine groups the pairs, the keys are those that
/// select_partitions releases over the same pairs in one process, for the same key and stream.
///
/// The flow, for the count strategies (one round) and weighted_gaussian and dp_sips (rounds()
/// rounds; policy_gaussian takes its users one after another and is refused):
/// @code{.cpp}
/// dpselect::PartitionSelectionTicket ticket = dpselect::begin_partition_selection(context, params);
/// std::vector<std::uint8_t> bytes = ticket.to_bytes();                 // to each worker, privately
/// for (std::uint32_t round = 0; round < ticket.rounds(); ++round) {
///   // on each worker, over the pairs of whole users (every pair of each of its users),
///   // without the pairs of keys released by earlier rounds:
///   dpselect::BoundedContributions kept = ticket.bound(users, keys, round);
///   // the engine groups the kept pairs by key, with the number of pairs of each (key, held);
///   // on each worker, over whole keys:
///   dpselect::PartitionDecision decided = ticket.decide(keys, held, pairs, round);
///   // the driver gathers decided.keys (and sums decided.keys_considered of round 0)
/// }
/// dpselect::PartitionSelectionReport report = ticket.report(keys_considered);
/// @endcode
///
/// Trust. The ticket holds the context's SECRET key; the kept pairs and the counts that travel
/// between the steps are the private data. Send them only where the workers and the channels
/// between them are as trusted as the driver's own memory (release_ticket.hpp says the same of
/// selection tickets). Only the released keys (and the report, but for its keys_considered) may
/// be published.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "dpselect/context.hpp"
#include "dpselect/partition_selection.hpp"
#include "dpselect/random_key.hpp"

namespace dpselect {

/// The kept pairs of some users after contribution bounding: pair i's key and the number of keys
/// its user kept (a weighted strategy's pair weighs 1/sqrt(held[i])). In no particular order.
struct BoundedContributions {
  std::vector<std::uint64_t> keys;  ///< the key of each kept pair
  std::vector<std::uint64_t> held;  ///< the number of keys the pair's user kept, in [1, max_partitions]
};

/// The released keys among some whole keys (ascending), and how many distinct keys were decided.
struct PartitionDecision {
  std::vector<std::uint64_t> keys;  ///< the released keys, ascending
  /// The number of distinct keys decided. NOT PRIVATE: a count of the data's keys; summed over the
  /// workers of round 0 it is PartitionSelectionReport::keys_considered.
  std::uint64_t keys_considered = 0;
};

/// What a worker needs to run its share of one partition selection it does not hold: the
/// context's key, the selection's first stream and its parameters. Made by
/// begin_partition_selection; copyable, and serializable to bytes (to_bytes, from_bytes).
///
/// SECRET: it carries the key of the context the selection was begun from (see the file comment).
class PartitionSelectionTicket {
 public:
  /// The selection's parameters.
  const PartitionSelectionParams& params() const { return params_; }
  /// The strategy's rule (partition_keep_rule(params())).
  const PartitionKeepRule& rule() const { return rule_; }
  /// The first stream the selection drew (report().stream).
  std::uint64_t stream() const { return stream_; }
  /// The generator of the context's key.
  Generator generator() const { return key_.generator; }
  /// The rounds to run: params().rounds for dp_sips, else 1.
  std::uint32_t rounds() const;

  /// Contribution bounding of round `round` over the pairs of some whole users: (users[i],
  /// keys[i]) for every pair of each of these users (repeats count once) and, from round 1 on, no
  /// pair whose key an earlier round released. Exactly the pairs select_partitions keeps of these
  /// users.
  /// @param users The user of each pair (the ids select_partitions would see).
  /// @param keys The key of each pair, as many.
  /// @param round In [0, rounds()).
  /// @return The kept pairs' keys and their users' numbers of kept keys.
  /// @throws InvalidArgument for users and keys of different lengths or a round out of range.
  BoundedContributions bound(std::span<const std::uint64_t> users, std::span<const std::uint64_t> keys,
                             std::uint32_t round = 0) const;

  /// The keys released in round `round` among some whole keys, from the kept pairs of every user
  /// (bound's results, grouped by the engine): entry i says that pairs[i] kept pairs have key
  /// keys[i] and a user that kept held[i] keys. Entries may repeat a (key, held); every kept pair
  /// of each key given must be in the call. The count strategies count a key's users as the sum of
  /// its entries' pairs and ignore held (which may be empty); the weighted strategies sum the
  /// weights 1/sqrt(held) of the key's pairs by ascending held, as one process does.
  /// @param keys The key of each entry.
  /// @param held The number of keys the entry's users kept, as many as keys (or empty for a count
  ///        strategy); each in [1, max_partitions].
  /// @param pairs The entry's number of kept pairs, as many as keys; each >= 1.
  /// @param round In [0, rounds()).
  /// @return The released keys, ascending, and the number of distinct keys decided.
  /// @throws InvalidArgument for lengths that differ, a held or pairs value out of range (naming
  ///         the entry), a key's pairs summing beyond 2^64 - 1, or a round out of range.
  PartitionDecision decide(std::span<const std::uint64_t> keys, std::span<const std::uint64_t> held,
                           std::span<const std::uint64_t> pairs, std::uint32_t round = 0) const;

  /// The report of the selection (select_partitions' report, executed on the CPU).
  /// @param keys_considered The sum of the workers' PartitionDecision::keys_considered in round 0.
  PartitionSelectionReport report(std::uint64_t keys_considered) const;

  /// The ticket as bytes (a versioned, fixed layout, closed by a tag keyed by the release's
  /// secret): SECRET, it holds the key.
  std::vector<std::uint8_t> to_bytes() const;
  /// A ticket read back from to_bytes.
  /// @throws InvalidArgument for bytes that to_bytes did not write (a wrong size, mark or version,
  ///         a tag that does not match, or parameters that do not validate).
  static PartitionSelectionTicket from_bytes(std::span<const std::uint8_t> bytes);

 private:
  friend PartitionSelectionTicket begin_partition_selection(Context& context,
                                                            const PartitionSelectionParams& params);
  PartitionSelectionTicket() = default;
  void check_round(std::uint32_t round) const;

  PartitionSelectionParams params_;
  PartitionKeepRule rule_;
  RandomKey key_;
  std::uint64_t stream_ = 0;
};

/// Begins one partition selection for workers to run: validates the parameters, charges the
/// context's accountant one approximate release at (epsilon, delta), as select_partitions does,
/// and draws the selection's streams.
/// @param context The source of the selection's streams and its accountant.
/// @param params The selection's parameters; any strategy but policy_gaussian, backend Auto or Cpu
///        (the workers run on their CPUs).
/// @return The ticket.
/// @throws InvalidArgument before anything is charged or drawn: bad params (as
///         PartitionSelectionParams::validate), policy_gaussian (its users update the weights one
///         after another, in one process), or Backend::Gpu.
/// @throws BudgetExceeded when the accountant refuses the selection; nothing drawn.
/// @par Privacy
/// As select_partitions over the union of the workers' pairs, provided every step gets whole
/// users (bound) and whole keys (decide) and each kept pair reaches decide once: the engine is
/// trusted to group them so.
PartitionSelectionTicket begin_partition_selection(Context& context, const PartitionSelectionParams& params);

}  // namespace dpselect
