// SPDX-License-Identifier: Apache-2.0
// dpselect::mpi: partition selection over string keys split among the ranks in any way
// (include/dpselect/mpi.hpp). One process numbers string keys by their rank in byte order among
// the distinct keys (dictionary_codes); here the ranks compute the same numbers together, by a
// sample sort of the distinct keys: every rank's samples gathered on every rank give the same
// splitters, each distinct key goes to the rank of its range, which numbers its range's keys
// after those of the lower ranks and answers each sender with its keys' numbers. The integer
// selection then runs over the numbers, and the released numbers' strings are gathered from the
// ranks that hold them.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <exception>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "dpselect/errors.hpp"
#include "dpselect/mpi.hpp"
#include "dpselect/partition_selection.hpp"
#include "mpi/collective.hpp"
#include "mpi/exchange.hpp"

namespace dpselect::mpi {
namespace {

// Samples each rank contributes to the splitters: enough for even ranges at any rank count the
// library meets, few enough to gather on every rank.
constexpr std::size_t kSamplesPerRank = 64;

// Strings as one buffer of bytes and their lengths, the form in which they travel.
struct PackedStrings {
  std::vector<std::uint64_t> lengths;
  std::vector<char> bytes;

  void add(std::string_view value) {
    lengths.push_back(value.size());
    bytes.insert(bytes.end(), value.begin(), value.end());
  }
  std::vector<std::string_view> views() const {
    std::vector<std::string_view> out;
    out.reserve(lengths.size());
    std::size_t at = 0;
    for (const std::uint64_t length : lengths) {
      out.emplace_back(bytes.data() + at, length);
      at += length;
    }
    return out;
  }
};

// Every rank's strings on every rank, in rank order. Collective.
PackedStrings gathered_strings(DistributedContext& context, const PackedStrings& mine) {
  PackedStrings all;
  all.lengths = detail::gathered(context, mine.lengths, MPI_UINT64_T);
  std::uint64_t bytes = mine.bytes.size();
  MPI_Allreduce(MPI_IN_PLACE, &bytes, 1, MPI_UINT64_T, MPI_SUM, detail::Access::state(context).comm);
  detail::agree_on_pass(context, bytes <= INT_MAX ? nullptr
                                                  : std::make_exception_ptr(std::runtime_error(
                                                        "dpselect: more than 2^31 - 1 bytes of keys to gather")));
  all.bytes = detail::gathered(context, mine.bytes, MPI_CHAR);
  return all;
}

// The numbers of this rank's distinct keys (`distinct`, ascending) in byte order among every
// rank's distinct keys, and the strings of the range this rank numbered (ascending, from
// `first_code`).
struct Dictionary {
  std::vector<std::uint64_t> codes;          // codes[i]: the number of distinct[i]
  std::vector<std::string> range;            // this rank's range of keys, ascending
  std::uint64_t first_code = 0;              // the number of range[0]
};

Dictionary distributed_dictionary(DistributedContext& context, const std::vector<std::string_view>& distinct) {
  const DistributedContext::State& s = detail::Access::state(context);
  // Splitters: evenly spaced samples of every rank's distinct keys, the same on every rank.
  PackedStrings samples;
  const std::size_t take = std::min(kSamplesPerRank, distinct.size());
  for (std::size_t j = 0; j < take; ++j) samples.add(distinct[(2 * j + 1) * distinct.size() / (2 * take)]);
  const PackedStrings all_samples = gathered_strings(context, samples);
  std::vector<std::string_view> sorted_samples = all_samples.views();
  std::sort(sorted_samples.begin(), sorted_samples.end());
  std::vector<std::string_view> splitters;  // size - 1 of them (fewer with fewer samples)
  for (int r = 1; r < s.size && !sorted_samples.empty(); ++r) {
    splitters.push_back(sorted_samples[static_cast<std::size_t>(r) * sorted_samples.size() / s.size]);
  }
  // Range r holds the keys with r splitters at or below them: contiguous in byte order.
  const auto range_of = [&](std::string_view key) {
    return static_cast<int>(std::upper_bound(splitters.begin(), splitters.end(), key) - splitters.begin());
  };

  // Each distinct key to its range's rank (distinct is ascending, so grouped by range already).
  std::vector<std::uint64_t> key_counts(static_cast<std::size_t>(s.size), 0), byte_counts(key_counts);
  PackedStrings outgoing;
  for (const std::string_view key : distinct) {
    const int r = range_of(key);
    ++key_counts[r];
    byte_counts[r] += key.size();
    outgoing.add(key);
  }
  std::string too_many = detail::count_error(key_counts, "distinct keys", s.rank);
  if (too_many.empty()) too_many = detail::count_error(byte_counts, "bytes of keys", s.rank);
  detail::agree_on_pass(context, too_many.empty() ? nullptr : std::make_exception_ptr(std::runtime_error(too_many)));
  PackedStrings incoming;
  incoming.lengths = detail::all_to_all(context, outgoing.lengths, key_counts, MPI_UINT64_T, "distinct keys");
  incoming.bytes = detail::all_to_all(context, outgoing.bytes, byte_counts, MPI_CHAR, "bytes of keys");
  outgoing = {};

  // This rank's range numbered after the lower ranks' ranges.
  const std::vector<std::string_view> received = incoming.views();
  std::vector<std::string_view> range(received);
  std::sort(range.begin(), range.end());
  range.erase(std::unique(range.begin(), range.end()), range.end());
  std::uint64_t in_range = range.size(), first_code = 0;
  MPI_Exscan(&in_range, &first_code, 1, MPI_UINT64_T, MPI_SUM, s.comm);
  if (s.rank == 0) first_code = 0;

  // Each sender's keys' numbers, back in the order it sent them.
  std::vector<std::uint64_t> answers(received.size()), answer_counts(static_cast<std::size_t>(s.size), 0);
  std::vector<int> from(static_cast<std::size_t>(s.size), 0);
  MPI_Alltoall(std::vector<int>(key_counts.begin(), key_counts.end()).data(), 1, MPI_INT, from.data(), 1, MPI_INT,
               s.comm);
  for (int r = 0; r < s.size; ++r) answer_counts[r] = static_cast<std::uint64_t>(from[r]);
  for (std::size_t i = 0; i < received.size(); ++i) {
    answers[i] = first_code + static_cast<std::uint64_t>(std::lower_bound(range.begin(), range.end(), received[i]) -
                                                         range.begin());
  }
  Dictionary dictionary;
  dictionary.codes = detail::all_to_all(context, answers, answer_counts, MPI_UINT64_T, "key numbers");
  dictionary.range.assign(range.begin(), range.end());
  dictionary.first_code = first_code;
  return dictionary;
}

}  // namespace

StringPartitionSelection select_partitions(DistributedContext& context, std::span<const std::uint64_t> users,
                                           std::span<const std::string_view> keys,
                                           const PartitionSelectionParams& params) {
  const DistributedContext::State& s = detail::Access::state(context);
  // The checks that need no other rank, before the keys are numbered (the integer selection
  // checks the rest, before its charge).
  std::exception_ptr failure;
  try {
    (void)partition_keep_rule(params);
    if (users.size() != keys.size()) {
      throw InvalidArgument("dpselect: keys must hold one key per user entry on rank " + std::to_string(s.rank) +
                            " (got " + std::to_string(keys.size()) + " keys for " + std::to_string(users.size()) +
                            " users)");
    }
  } catch (...) {
    failure = std::current_exception();
  }
  detail::agree_on_pass(context, failure);

  std::vector<std::string_view> distinct(keys.begin(), keys.end());
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  const Dictionary dictionary = distributed_dictionary(context, distinct);
  std::vector<std::uint64_t> codes(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    codes[i] = dictionary.codes[std::lower_bound(distinct.begin(), distinct.end(), keys[i]) - distinct.begin()];
  }
  const PartitionSelection coded = select_partitions(context, users, codes, params);

  // The released numbers' strings, from the ranks whose range holds them, in rank order: ascending.
  PackedStrings mine;
  for (const std::uint64_t code : coded.keys) {
    if (code >= dictionary.first_code && code - dictionary.first_code < dictionary.range.size()) {
      mine.add(dictionary.range[code - dictionary.first_code]);
    }
  }
  const PackedStrings released = gathered_strings(context, mine);
  StringPartitionSelection selection;
  for (const std::string_view key : released.views()) selection.keys.emplace_back(key);
  selection.report = coded.report;
  return selection;
}

}  // namespace dpselect::mpi
