// SPDX-License-Identifier: Apache-2.0
// String keys and users numbered by the rank of their value in byte order (sources and contract
// in <dpselect/partition_selection.hpp>): a hash table finds the distinct values in one pass, and
// only the distinct values are sorted. The rank, not the hash, is the number: it is a function of
// the data's distinct values alone, the same in one process and over MPI ranks (which compute it
// with a sample sort, host/mpi/distributed_string_keys.cpp), and it never merges two values.
#include <algorithm>
#include <functional>
#include <cstdint>
#include <limits>
#include <numeric>
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

  // The index of `value` among the distinct values so far, adding it when new.
  std::uint32_t index_of(std::string_view value) {
    const auto hash = static_cast<std::uint32_t>(std::hash<std::string_view>{}(value));
    for (std::size_t slot = hash & mask_;; slot = (slot + 1) & mask_) {
      Slot& s = slots_[slot];
      if (s.index == kEmpty) {
        if (ends_.size() == kEmpty) {
          throw InvalidArgument("dpselect: the values hold 2^32 - 1 or more distinct strings; number them in parts");
        }
        s = {hash, static_cast<std::uint32_t>(ends_.size())};
        arena_.append(value);
        ends_.push_back(arena_.size());
        if (2 * ends_.size() > slots_.size()) grow(2 * slots_.size());
        return static_cast<std::uint32_t>(ends_.size() - 1);
      }
      if (s.hash == hash && at(s.index) == value) return s.index;
    }
  }

  std::size_t size() const { return ends_.size(); }
  std::string_view at(std::uint32_t index) const {
    const std::size_t begin = index == 0 ? 0 : ends_[index - 1];
    return std::string_view(arena_).substr(begin, ends_[index] - begin);
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

}  // namespace

DictionaryNumbering dictionary_numbering(std::span<const std::string_view> values) {
  DictionaryNumbering numbering{std::vector<std::uint64_t>(values.size()), {}};
  // Each value's number in order of first occurrence, then renumbered by rank.
  DistinctValues distinct;
  for (std::size_t row = 0; row < values.size(); ++row) {
    const std::size_t known = distinct.size();
    numbering.codes[row] = distinct.index_of(values[row]);
    if (distinct.size() > known) numbering.first_rows.push_back(row);
  }
  std::vector<std::uint32_t> by_value(distinct.size());
  std::iota(by_value.begin(), by_value.end(), std::uint32_t{0});
  detail::sort_on_every_core(by_value.begin(), by_value.end(),
                             [&](std::uint32_t a, std::uint32_t b) { return distinct.at(a) < distinct.at(b); });
  std::vector<std::uint64_t> rank_of(distinct.size());
  std::vector<std::uint64_t> first_rows(distinct.size());
  for (std::size_t rank = 0; rank < by_value.size(); ++rank) {
    rank_of[by_value[rank]] = rank;
    first_rows[rank] = numbering.first_rows[by_value[rank]];
  }
  numbering.first_rows = std::move(first_rows);
  for (std::uint64_t& code : numbering.codes) code = rank_of[code];
  return numbering;
}

}  // namespace dpselect
