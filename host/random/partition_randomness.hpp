// SPDX-License-Identifier: Apache-2.0
// Where partition selection's random bits come from in a release's stream: by the identity of a
// pair or a key, never by its place in a sorted order, so that every backend (the CPU's shares,
// a GPU, the ranks of an MPI job holding any split of the pairs) draws the same bits for the same
// data, key and stream. Internal to the partition selection backends.
//
//   contribution bounding: a user u holding c > max_partitions distinct keys keeps m =
//       max_partitions of them, chosen by a partial Fisher-Yates shuffle of its keys in ascending
//       order (Knuth, TAOCP vol. 2, Algorithm P, stopped after m steps: every m-subset equally
//       likely). Step i (0 <= i < m) swaps key i with key i + j, j uniform in [0, c - i), drawn
//       exactly from the first 64 bits (words 0 and 1) of the block at position
//       mix(u) + i 2^20 + t by Lemire's multiply-and-reject (Lemire 2019, "Fast random integer
//       generation in an interval"), t = 0 for the first attempt and t + 1 after a rejection
//       (probability below c 2^-64 each). mix is a bijection of 64-bit integers (the SplitMix64
//       finalizer, Steele, Lea & Flood 2014); for one user the positions of its draws are
//       distinct (i < 2^44, t < 2^20), so its draws are independent;
//   the coin of key k: the last 64 bits (words 2 and 3) of the block at position k, whose top 53
//       bits u keep the key when u < floor(p 2^53).
//   the weighted strategies: policy_gaussian orders its users by the first 64 bits of block
//       user_order_position(u); a coin's ties (its 53 bits equal to those of p 2^53) are broken
//       by block k of the round's next streams, all four words of each (weighted_passes.cpp).
// The bounding's draws and the coins never share bits (words 0-1 against 2-3, whatever the
// positions), so the coins are independent of the bounding, which the privacy argument needs
// (Desfontaines et al. 2022, Sec. 3: given the bounded pairs, each key's release is an independent
// coin of probability p(n)). Draws of different users may share a block: the argument holds for
// any joint law of the bounding, since it holds for every fixed outcome of it and the coins' law
// is the same on neighbouring datasets. A partition selection's stream is never tagged (a release's
// tags read positions 2^62 and 2^62 + 1 of selection streams only).
#pragma once

#include <cmath>
#include <cstdint>

#include "dpselect/detail/host_device.hpp"
#include "dpselect/philox.hpp"

namespace dpselect::detail {

// The SplitMix64 finalizer (Steele, Lea & Flood 2014): a bijection of the 64-bit integers.
DPSELECT_HD DPSELECT_FORCEINLINE std::uint64_t partition_user_mix(std::uint64_t user) {
  user = (user ^ (user >> 30)) * 0xbf58476d1ce4e5b9ull;
  user = (user ^ (user >> 27)) * 0x94d049bb133111ebull;
  return user ^ (user >> 31);
}

// The attempts of one draw: Lemire's rejection fails with probability below c 2^-64 per attempt,
// so 2^20 attempts are never all used (the loops stop there regardless).
inline constexpr std::uint64_t kBoundingAttempts = std::uint64_t{1} << 20;

DPSELECT_HD DPSELECT_FORCEINLINE std::uint64_t bounding_draw_position(std::uint64_t user, std::uint64_t draw,
                                                                      std::uint64_t attempt) {
  return partition_user_mix(user) + (draw << 20) + attempt;
}

// policy_gaussian's order of the users: by the first 64 bits of the block just before user u's
// first bounding draw, a position no draw of u's own uses.
DPSELECT_HD DPSELECT_FORCEINLINE std::uint64_t user_order_position(std::uint64_t user) {
  return partition_user_mix(user) - (std::uint64_t{1} << 20);
}

DPSELECT_HD DPSELECT_FORCEINLINE std::uint64_t bounding_word(const RandomBlock& block) {
  return std::uint64_t{block.word[0]} | (std::uint64_t{block.word[1]} << 32);
}

// Lemire's multiply-and-reject: j = floor(word * range / 2^64) unless the low half of the
// product falls below 2^64 mod range (then the attempt is rejected: returns false), which makes j
// exactly uniform on [0, range) for range >= 1.
DPSELECT_HD DPSELECT_FORCEINLINE bool uniform_below(std::uint64_t word, std::uint64_t range, std::uint64_t& j) {
  const unsigned __int128 product = static_cast<unsigned __int128>(word) * range;
  const auto low = static_cast<std::uint64_t>(product);
  if (low < range && low < (0 - range) % range) return false;
  j = static_cast<std::uint64_t>(product >> 64);
  return true;
}

DPSELECT_HD DPSELECT_FORCEINLINE std::uint64_t key_coin_position(std::uint64_t key) { return key; }

// The coin's 53 bits, uniform on [0, 2^53).
DPSELECT_HD DPSELECT_FORCEINLINE std::uint64_t key_coin(const RandomBlock& block) {
  return (std::uint64_t{block.word[2]} | (std::uint64_t{block.word[3]} << 32)) >> 11;
}

// floor(p 2^53) for p in [0, 1]: the coin is below it with probability at most p, and at most
// 2^-53 less.
DPSELECT_HD DPSELECT_FORCEINLINE std::uint64_t keep_cut(double p) {
  return static_cast<std::uint64_t>(std::ldexp(p, 53));
}

}  // namespace dpselect::detail
