// SPDX-License-Identifier: Apache-2.0
// Index arithmetic of the GPU top-k's block-wide sort and merge (kernels/top_k.cu), as plain
// __host__ __device__ functions so that the CPU tests check the very network and merge the kernel
// runs (tests/ranked_lists_test.cpp).
//
// The order is the library's: a higher score first, then a smaller index. The scores are never NaN
// (finite noisy scores, or -inf for excluded candidates and padding), so on distinct (score, index)
// pairs it is a strict total order, and any correct sort or merge gives the same sequence; equal
// pairs occur only as identical copies of the padding (-inf, kNoIndex).
#pragma once

#include <cstdint>

#include "dpselect/detail/host_device.hpp"

namespace dpselect::detail {

DPSELECT_HD DPSELECT_FORCEINLINE bool ranks_before(double score_a, std::uint64_t index_a, double score_b,
                                                   std::uint64_t index_b) {
  return score_a > score_b || (score_a == score_b && index_a < index_b);
}

// One compare-exchange of a bitonic sorting network on `padded` (a power of two) elements in the
// form where every compare-exchange puts the better element at the lower position: merging two
// sorted runs of size / 2 starts by comparing mirrored positions (stride size / 2), then
// half-cleans (strides size / 4 .. 1). Stages run for size = 2, 4, .., padded and, within a size,
// stride = size / 2, .., 1; each stage has padded / 2 pairs, numbered 0 .. padded / 2 - 1.
// Because no compare-exchange ever moves the worse element down, elements that rank after all
// others and start at the end stay there: n < padded elements are sorted by the network on
// `padded` with every pair whose high position is >= n skipped (those positions hold no element).
struct BitonicPair {
  unsigned int low;
  unsigned int high;
};

DPSELECT_HD DPSELECT_FORCEINLINE BitonicPair bitonic_pair(unsigned int pair, unsigned int size, unsigned int stride) {
  const unsigned int low = 2 * pair - (pair & (stride - 1));  // first half of its 2-stride run
  return BitonicPair{low, stride == size / 2 ? low ^ (size - 1) : low + stride};
}

// Pairs 32c .. 32c+31 of a stage with size <= kWarpLocalSize touch positions 64c .. 64c+63 only:
// a warp that takes 32 consecutive pairs of every such stage needs no other warp's elements.
inline constexpr unsigned int kWarpLocalSize = 64;

DPSELECT_HD DPSELECT_FORCEINLINE unsigned int next_power_of_two(unsigned int n) {
  unsigned int padded = 1;
  while (padded < n) padded <<= 1;
  return padded;
}

// A sorted list in structure-of-arrays form.
struct RankedList {
  const double* score;
  const std::uint64_t* index;
  unsigned int count;
};

// The stable merge of sorted lists a and b takes a's entry on equal pairs. Whether its next entry
// is a[i] (rather than b[j]), given i < a.count or j < b.count.
DPSELECT_HD DPSELECT_FORCEINLINE bool merge_takes_a(const RankedList& a, unsigned int i, const RankedList& b,
                                                    unsigned int j) {
  return i < a.count && (j >= b.count || !ranks_before(b.score[j], b.index[j], a.score[i], a.index[i]));
}

// How many of the first `rank` entries of that merge come from a (rank <= a.count + b.count): the
// merge path's crossing of diagonal `rank`, by binary search. The first i with
// b[rank - i - 1] ranking before a[i] (so a[i] comes later); monotone in i because a gets worse
// and b[rank - i - 1] better as i grows.
DPSELECT_HD DPSELECT_FORCEINLINE unsigned int merge_path_split(const RankedList& a, const RankedList& b,
                                                               unsigned int rank) {
  unsigned int low = rank > b.count ? rank - b.count : 0;
  unsigned int high = rank < a.count ? rank : a.count;
  while (low < high) {
    const unsigned int middle = low + (high - low) / 2;
    const unsigned int j = rank - middle - 1;  // middle < high <= rank, middle >= rank - b.count
    if (ranks_before(b.score[j], b.index[j], a.score[middle], a.index[middle])) {
      high = middle;
    } else {
      low = middle + 1;
    }
  }
  return low;
}

}  // namespace dpselect::detail
