// SPDX-License-Identifier: Apache-2.0
// dpselect::mpi: partition selection over (user, key) pairs split among the ranks in any way
// (include/dpselect/mpi.hpp). The pairs go to the rank of their user's hash, which bounds its
// users; the kept keys to the rank of their key's hash, which counts and decides them; the
// released keys are gathered on every rank. The passes are one process's
// (partition_passes.hpp), whose bits follow the pairs and keys themselves, so the release is one
// process's whatever the split.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "random/partition_randomness.hpp"
#include "dpselect/detail/release_access.hpp"
#include "dpselect/mpi.hpp"
#include "dpselect/partition_selection.hpp"
#include "mpi/collective.hpp"
#include "mpi/exchange.hpp"
#include "partition_selection/partition_passes.hpp"
#include "partition_selection/partition_shares.hpp"

namespace dpselect::mpi {
namespace {

using dpselect::detail::Contribution;

// `values` grouped by the rank that owns each (partition_shares.hpp's counting sort), and how many
// go to each rank.
template <class T, class OwnerOf>
std::vector<T> grouped_by_owner(const std::vector<T>& values, int ranks, OwnerOf owner_of_value,
                                std::vector<std::uint64_t>& counts) {
  dpselect::detail::Bucketed<T> grouped =
      dpselect::detail::bucketed(values, static_cast<std::size_t>(ranks), owner_of_value);
  counts.resize(static_cast<std::size_t>(ranks));
  for (std::size_t r = 0; r < counts.size(); ++r) counts[r] = grouped.starts[r + 1] - grouped.starts[r];
  return std::move(grouped.values);
}

// The params every rank must pass, in a form that compares bit for bit.
struct PartitionParamsImage {
  double epsilon;
  double delta;
  std::uint64_t max_partitions;
  std::uint64_t strategy;
  std::uint64_t rounds;
  double round_budget_ratio;
  double policy_cutoff_sigmas;
  std::uint64_t pre_threshold;
};

// The rank that owns a user or a key: a hash (the SplitMix64 finalizer) modulo the ranks. Keys
// are offset first, so that a rank's keys are not its users' ids.
int owner_of(std::uint64_t id, int ranks) {
  return static_cast<int>(dpselect::detail::partition_user_mix(id) % static_cast<std::uint64_t>(ranks));
}
constexpr std::uint64_t kKeyHashOffset = 0x6a09e667f3bcc908ull;


// Every rank's released keys, on every rank, ascending.
std::vector<std::uint64_t> gathered_keys(DistributedContext& context, const std::vector<std::uint64_t>& released) {
  std::vector<std::uint64_t> keys = detail::gathered(context, released, MPI_UINT64_T);
  std::sort(keys.begin(), keys.end());
  return keys;
}

// `kept` (kept keys, or kept entries whose key is key_of(entry)) sent to the rank of their key's
// hash, as elements of `type`. A failure of this rank's passes so far (`failure`) or a count
// beyond MPI's int fails every rank alike before anything is sent. Collective.
template <class T, class KeyOf>
std::vector<T> sent_to_key_owners(DistributedContext& context, std::vector<T> kept, KeyOf key_of, MPI_Datatype type,
                                  std::exception_ptr failure) {
  const DistributedContext::State& s = detail::Access::state(context);
  std::vector<std::uint64_t> key_counts(static_cast<std::size_t>(s.size), 0);
  try {
    if (failure) std::rethrow_exception(failure);
    kept = grouped_by_owner(
        kept, s.size, [&](const T& entry) { return owner_of(key_of(entry) ^ kKeyHashOffset, s.size); }, key_counts);
    const std::string too_many = detail::count_error(key_counts, "kept keys", s.rank);
    if (!too_many.empty()) throw std::runtime_error(too_many);
  } catch (...) {
    failure = std::current_exception();
  }
  detail::agree_on_pass(context, failure);
  return detail::all_to_all(context, kept, key_counts, type, "kept keys");
}

// weighted_gaussian and dp_sips over the pairs this rank owns by user (`owned`): each round bounds
// them here, sends each kept key with its user's number of kept keys to the key's rank, which
// sums and decides it; the round's released keys are gathered on every rank, which drops their
// pairs before the next round. The same bits and sums as in one process.
PartitionSelection weighted_selection(DistributedContext& context, std::vector<Contribution>& owned,
                                      const PartitionSelectionParams& params, const PartitionKeepRule& rule,
                                      const dpselect::detail::ContextAccess::KeyedStream& first,
                                      MPI_Datatype pair_type) {
  const DistributedContext::State& s = detail::Access::state(context);
  PartitionSelection selection;
  std::uint64_t distinct = 0;
  std::exception_ptr failure;
  try {
    dpselect::detail::keep_distinct(owned);
  } catch (...) {
    failure = std::current_exception();
  }
  for (std::size_t r = 0; r < rule.rounds.size(); ++r) {
    const dpselect::detail::ContextAccess::KeyedStream drawn{
        first.key, first.stream + r * dpselect::detail::kWeightedRoundStreams};
    std::vector<dpselect::detail::WeightedKey> kept;
    try {
      if (failure) std::rethrow_exception(failure);
      kept = dpselect::detail::bounded_weighted_keys(owned, params.max_partitions, drawn);
    } catch (...) {
      failure = std::current_exception();
    }
    std::vector<dpselect::detail::WeightedKey> counted = sent_to_key_owners(
        context, std::move(kept), [](const dpselect::detail::WeightedKey& entry) { return entry.key; }, pair_type,
        failure);
    const dpselect::detail::ReleasedKeys released =
        dpselect::detail::weighted_round_keys(counted, rule.rounds[r], params.max_partitions, drawn);
    if (r == 0) distinct = released.distinct;
    const std::vector<std::uint64_t> round_keys = gathered_keys(context, released.keys);
    dpselect::detail::drop_released_pairs(owned, round_keys);
    dpselect::detail::add_released_round(selection.keys, round_keys);
  }
  MPI_Allreduce(MPI_IN_PLACE, &distinct, 1, MPI_UINT64_T, MPI_SUM, s.comm);
  selection.report = dpselect::detail::partition_selection_report(params, rule, first, distinct, ExecutedOn::cpu);
  return selection;
}

}  // namespace

PartitionSelection select_partitions(DistributedContext& context, std::span<const std::uint64_t> users,
                                     std::span<const std::uint64_t> keys, const PartitionSelectionParams& params) {
  DistributedContext::State& s = detail::Access::state(context);
  const PartitionParamsImage image{params.epsilon,        params.delta,
                                   params.max_partitions,  static_cast<std::uint64_t>(params.strategy),
                                   params.rounds,          params.round_budget_ratio,
                                   params.policy_cutoff_sigmas, params.pre_threshold};
  detail::Finding finding =
      detail::invalid_unless_empty(detail::differs_from_root(context, &image, sizeof image, "params"));
  PartitionKeepRule rule;
  if (finding.kind == detail::none) finding = detail::finding_of([&] { rule = partition_keep_rule(params); });
  if (finding.kind == detail::none && params.strategy == PartitionStrategy::policy_gaussian) {
    // Its users update the weights one after another, in one order over all of them.
    finding = detail::invalid_unless_empty(
        "dpselect: strategy must not be policy-gaussian under MPI (its users are taken one after another, in "
        "one process)");
  }
  if (finding.kind == detail::none && users.size() != keys.size()) {
    finding = detail::invalid_unless_empty("dpselect: keys must hold one key per user entry on rank " +
                                           std::to_string(s.rank) + " (got " + std::to_string(keys.size()) +
                                           " keys for " + std::to_string(users.size()) + " users)");
  }
  // The pairs grouped by their user's rank, and whether the counts fit MPI's int.
  std::vector<Contribution> mine;
  std::vector<std::uint64_t> pair_counts;
  if (finding.kind == detail::none) {
    mine = dpselect::detail::contributions_of(users, keys);
    dpselect::detail::keep_distinct(mine);  // fewer to send; the owner removes repeats across ranks
    mine = grouped_by_owner(mine, s.size, [&](const Contribution& pair) { return owner_of(pair.user, s.size); },
                            pair_counts);
    finding = detail::invalid_unless_empty(detail::count_error(pair_counts, "pairs", s.rank));
  }
  // Every rank's pairs as one range [0, total), so that the preamble checks that some rank holds one.
  std::uint64_t held = finding.kind == detail::none ? users.size() : 0;
  std::uint64_t first = 0;
  MPI_Exscan(&held, &first, 1, MPI_UINT64_T, MPI_SUM, s.comm);
  if (s.rank == 0) first = 0;
  detail::ShardRules rules;
  rules.unit = "(user, key) pairs";
  rules.from_zero = true;
  const IndexRange shard = finding.kind == detail::none ? IndexRange{first, first + held} : IndexRange{};
  const PrivacyCharge charge = dpselect::detail::partition_selection_charge(params);
  // Throws on every rank unless every rank's checks passed and rank 0's ledger took the charge.
  detail::agree_and_charge(context, nullptr, shard, std::move(finding), detail::ChargeRule{charge}, rules);
  const dpselect::detail::ContextAccess::KeyedStream drawn =
      dpselect::detail::ContextAccess::draw_streams(s.local, dpselect::detail::partition_selection_streams(params));

  MPI_Datatype pair_type = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(2, MPI_UINT64_T, &pair_type);
  MPI_Type_commit(&pair_type);
  std::vector<Contribution> owned = detail::all_to_all(context, mine, pair_counts, pair_type, "pairs");
  mine = {};
  if (is_weighted(params.strategy)) {
    PartitionSelection selection = weighted_selection(context, owned, params, rule, drawn, pair_type);
    MPI_Type_free(&pair_type);
    return selection;
  }
  MPI_Type_free(&pair_type);
  // This rank's passes; a failure on one rank (an allocation, say) is agreed on before the next
  // exchange, and the release stays charged, as in one process.
  std::vector<std::uint64_t> kept;
  std::exception_ptr failure;
  try {
    dpselect::detail::keep_distinct(owned);
    kept = dpselect::detail::bounded_keys(owned, params.max_partitions, drawn);
    owned = {};
  } catch (...) {
    failure = std::current_exception();
  }
  std::vector<std::uint64_t> counted =
      sent_to_key_owners(context, std::move(kept), [](std::uint64_t key) { return key; }, MPI_UINT64_T, failure);
  dpselect::detail::ReleasedKeys released = dpselect::detail::released_keys(counted, rule, params.strategy, drawn);

  PartitionSelection selection;
  selection.keys = gathered_keys(context, released.keys);
  std::uint64_t distinct = released.distinct;
  MPI_Allreduce(MPI_IN_PLACE, &distinct, 1, MPI_UINT64_T, MPI_SUM, s.comm);
  selection.report = dpselect::detail::partition_selection_report(params, rule, drawn, distinct, ExecutedOn::cpu);
  return selection;
}

}  // namespace dpselect::mpi
