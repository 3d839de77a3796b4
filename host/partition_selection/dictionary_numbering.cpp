// SPDX-License-Identifier: Apache-2.0
// String keys and users numbered by the rank of their value in byte order (sources and contract
// in <dpselect/partition_selection.hpp>): hash tables find the distinct values in one pass, each
// core's table the values of its own shard of the hashes, and only the distinct values are
// sorted. The rank, not the hash, is the number: it is a function of the data's distinct values
// alone, the same in one process and over MPI ranks (which compute it with a sample sort,
// host/mpi/distributed_string_keys.cpp), and it never merges two values.
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dpselect/errors.hpp"
#include "dpselect/partition_selection.hpp"
#include "partition_selection/partition_passes.hpp"

namespace dpselect {

namespace {

// The distinct values in order of first occurrence, copied into one arena (where the lookups that
// find them again read them from cache, not from wherever each first occurred), found by open
// addressing with linear probing over a power-of-two table of 8-byte (hash, index) slots at most
// half full, sized by the distinct values as they come. std::unordered_map, which allocates a
// node per value and follows a pointer per lookup, took about twice as long on 1.69 M words.
class DistinctValues {
 public:
  DistinctValues() { grow(1024); }

  // The index of `value` (whose std::hash is `hash`) among the distinct values so far, adding it
  // when new.
  std::uint32_t index_of(std::string_view value, std::uint64_t hash) {
    const auto low = static_cast<std::uint32_t>(hash);
    for (std::size_t slot = low & mask_;; slot = (slot + 1) & mask_) {
      Slot& s = slots_[slot];
      if (s.index == kEmpty) {
        if (ends_.size() == kEmpty) throw too_many();
        s = {low, static_cast<std::uint32_t>(ends_.size())};
        arena_.append(value);
        ends_.push_back(arena_.size());
        if (2 * ends_.size() > slots_.size()) grow(2 * slots_.size());
        return static_cast<std::uint32_t>(ends_.size() - 1);
      }
      if (s.hash == low && at(s.index) == value) return s.index;
    }
  }

  std::size_t size() const { return ends_.size(); }
  std::string_view at(std::uint32_t index) const {
    const std::size_t begin = index == 0 ? 0 : ends_[index - 1];
    return std::string_view(arena_).substr(begin, ends_[index] - begin);
  }

  static InvalidArgument too_many() {
    return InvalidArgument("dpselect: the values hold 2^32 - 1 or more distinct strings; number them in parts");
  }

 private:
  static constexpr std::uint32_t kEmpty = std::numeric_limits<std::uint32_t>::max();
  struct Slot {  // the hash's low half and the index
    std::uint32_t hash = 0;
    std::uint32_t index = kEmpty;
  };

  void grow(std::size_t capacity) {
    std::vector<Slot> old = std::exchange(slots_, std::vector<Slot>(capacity));
    mask_ = capacity - 1;
    for (const Slot& s : old) {
      if (s.index == kEmpty) continue;
      std::size_t slot = s.hash & mask_;
      while (slots_[slot].index != kEmpty) slot = (slot + 1) & mask_;
      slots_[slot] = s;
    }
  }

  std::string arena_;
  std::vector<std::size_t> ends_;
  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
};

// The shard (of `shards`) that owns the value of hash `hash`: its high half scaled to [0, shards),
// independent of the low half that places it in the shard's table.
std::size_t shard_of(std::uint64_t hash, std::size_t shards) { return ((hash >> 32) * shards) >> 32; }

// A value's first 8 bytes, big-endian, zero-padded: ordering by it first orders by byte order
// wherever two values differ in their first 8 bytes (a shorter value that is a prefix of the other
// pads with 0, and sorts first unless the other has a 0 there, where the prefixes tie), so the
// sort of the distinct values reads their text only to break ties.
std::uint64_t prefix_of(std::string_view value) {
  std::uint64_t prefix = 0;
  for (std::size_t i = 0; i < 8; ++i) {
    prefix = (prefix << 8) | (i < value.size() ? static_cast<unsigned char>(value[i]) : 0u);
  }
  return prefix;
}

// Strings cost far more to compare than integers: their sort is worth the cores from fewer of them.
constexpr std::size_t kStringSortParallelMinimum = std::size_t{1} << 12;

}  // namespace

DictionaryNumbering dictionary_numbering(std::span<const std::string_view> values) {
  const std::size_t count = values.size();
  DictionaryNumbering numbering{std::vector<std::uint64_t>(count), {}};
  // Each thread owns the values of one shard of the hashes: it scans every row in order, numbers
  // its own values in order of first occurrence in its own table, and notes the row of each one's
  // first occurrence. A value lives in one shard, so the distinct values, their first rows and
  // the ranks below are the same for any thread count.
  const auto shards = static_cast<std::size_t>(detail::partition_threads(count));
  std::vector<std::uint64_t> hashes(count);
#pragma omp parallel for schedule(static) num_threads(static_cast<int>(shards)) if (shards > 1)
  for (std::size_t row = 0; row < count; ++row) hashes[row] = std::hash<std::string_view>{}(values[row]);
  std::vector<DistinctValues> distinct(shards);
  std::vector<std::vector<std::uint64_t>> first_rows(shards);
  std::exception_ptr failure;
#pragma omp parallel for schedule(static, 1) num_threads(static_cast<int>(shards)) if (shards > 1)
  for (std::size_t shard = 0; shard < shards; ++shard) {
    try {
      for (std::size_t row = 0; row < count; ++row) {
        if (shards > 1 && shard_of(hashes[row], shards) != shard) continue;
        const std::size_t known = distinct[shard].size();
        numbering.codes[row] = distinct[shard].index_of(values[row], hashes[row]);
        if (distinct[shard].size() > known) first_rows[shard].push_back(row);
      }
    } catch (...) {
#pragma omp critical(dictionary_numbering_failure)
      failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);

  // The distinct values of every shard sorted by value, (prefix, shard, index) each: the rank, not
  // the shard's index, is the number.
  struct Distinct {
    std::uint64_t prefix;
    std::uint32_t shard;
    std::uint32_t index;
  };
  std::size_t total = 0;
  for (const DistinctValues& own : distinct) total += own.size();
  if (total >= std::numeric_limits<std::uint32_t>::max()) throw DistinctValues::too_many();
  std::vector<Distinct> by_value;
  by_value.reserve(total);
  for (std::size_t shard = 0; shard < shards; ++shard) {
    for (std::uint32_t index = 0; index < distinct[shard].size(); ++index) {
      by_value.push_back({prefix_of(distinct[shard].at(index)), static_cast<std::uint32_t>(shard), index});
    }
  }
  detail::sort_on_every_core(by_value.begin(), by_value.end(), [&](const Distinct& a, const Distinct& b) {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    return distinct[a.shard].at(a.index) < distinct[b.shard].at(b.index);
  }, kStringSortParallelMinimum);
  std::vector<std::vector<std::uint64_t>> rank_of(shards);
  for (std::size_t shard = 0; shard < shards; ++shard) rank_of[shard].resize(distinct[shard].size());
  numbering.first_rows.resize(total);
  for (std::size_t rank = 0; rank < total; ++rank) {
    const Distinct& value = by_value[rank];
    rank_of[value.shard][value.index] = rank;
    numbering.first_rows[rank] = first_rows[value.shard][value.index];
  }
#pragma omp parallel for schedule(static) num_threads(static_cast<int>(shards)) if (shards > 1)
  for (std::size_t row = 0; row < count; ++row) {
    const std::size_t shard = shards > 1 ? shard_of(hashes[row], shards) : 0;
    numbering.codes[row] = rank_of[shard][numbering.codes[row]];
  }
  return numbering;
}

}  // namespace dpselect
