// SPDX-License-Identifier: Apache-2.0
// Partition selection's contribution bounding recomputed from its documented layout
// (random/partition_randomness.hpp) with random_block alone, for the tests that
// check every released key against it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "dpselect/random_key.hpp"
#include "random/partition_randomness.hpp"

namespace dpselect::testing {

// The keys user `user` keeps of its distinct keys `ascending` (ascending), in the order the passes
// keep them: all of them, ascending, within the bound; else the first max_partitions of a partial
// Fisher-Yates shuffle, step i swapping key i with key i + j, j uniform below c - i drawn from the
// first 64 bits of block mix(u) + i 2^20 + attempt by Lemire's rejection.
inline std::vector<std::uint64_t> reference_kept_keys(const RandomKey& key, std::uint64_t stream, std::uint64_t user,
                                                      std::vector<std::uint64_t> ascending,
                                                      std::uint64_t max_partitions) {
  const std::uint64_t c = ascending.size();
  if (c <= max_partitions) return ascending;
  for (std::uint64_t step = 0; step < max_partitions; ++step) {
    for (std::uint64_t attempt = 0;; ++attempt) {
      const RandomBlock block = random_block(key, stream, detail::partition_user_mix(user) + (step << 20) + attempt);
      const unsigned __int128 product = static_cast<unsigned __int128>(detail::bounding_word(block)) * (c - step);
      const auto low = static_cast<std::uint64_t>(product);
      if (low >= c - step || low >= (0 - (c - step)) % (c - step)) {
        std::swap(ascending[step], ascending[step + static_cast<std::uint64_t>(product >> 64)]);
        break;
      }
    }
  }
  ascending.resize(max_partitions);
  return ascending;
}

}  // namespace dpselect::testing
