// SPDX-License-Identifier: Apache-2.0
/// @file
/// Counter-based Philox4x32-10 (Salmon et al., SC'11), bit-identical to cuRAND's
/// `curandStatePhilox4_32_10_t`.
///
/// Stream layout (the invariant every mechanism keeps): word w of stream s under key k is
/// word (w mod 4) of Philox(counter = (w/4 low 32, w/4 high 32, s low 32, s high 32), key = k),
/// which is exactly what `curand_init(seed, s, w, &st); curand(&st)` returns for
/// `seed = k.lo | k.hi << 32`. The noise of candidate i in a release is the block at counter
/// position i of the release's stream (words 4i..4i+3), so it depends only on (key, stream, i).
///
/// Philox is fast and statistically strong but it is not a cryptographically secure generator.
/// Every function here is `constexpr` or inline, callable from host and device code alike (plain
/// C++ header, no CUDA headers), and none throws.
#pragma once

#include <cstdint>

#include "dpselect/detail/host_device.hpp"

namespace dpselect {

/// A 64-bit Philox4x32-10 key as two 32-bit halves: the key cuRAND's `curand_init(seed, ...)` uses
/// for `seed = lo | hi << 32`.
///
/// Used through RandomKey (random_key.hpp) when a context is asked for Philox. The default
/// (all-zero) key is predictable by anyone: Context::with_shared_key refuses it.
struct PhiloxKey {
  std::uint32_t lo = 0;  ///< Low 32 bits of the key (the first key word of each round); default 0.
  std::uint32_t hi = 0;  ///< High 32 bits of the key (the second key word of each round); default 0.

  /// The key that `curand_init(seed, ...)` uses.
  /// @param seed Any 64-bit value; anyone who knows it predicts every bit of the stream.
  /// @return `{low 32 bits of seed, high 32 bits of seed}`.
  DPSELECT_HD static constexpr PhiloxKey from_seed(std::uint64_t seed) {
    return PhiloxKey{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)};
  }
  /// Whether two keys are equal (both halves; defaulted member-wise comparison).
  /// @return true when `lo` and `hi` are equal.
  friend constexpr bool operator==(const PhiloxKey&, const PhiloxKey&) = default;
};

/// Four 32-bit words: one Philox output block, in cuRAND's order (x, y, z, w).
///
/// The unit of randomness of every generator: random_block (random_key.hpp) returns one per
/// (key, stream, position), for ChaCha20 a 16-byte quarter of a 64-byte block (chacha20.hpp).
struct RandomBlock {
  /// The four words; for Philox, `word[i]` is word 4 p + i of the stream for block position p
  /// (what `curand()` returns as that word). Uninitialized when default-constructed.
  std::uint32_t word[4];
};

namespace detail {

inline constexpr std::uint32_t kPhiloxM0 = 0xD2511F53u;
inline constexpr std::uint32_t kPhiloxM1 = 0xCD9E8D57u;
inline constexpr std::uint32_t kPhiloxW0 = 0x9E3779B9u;  ///< golden ratio
inline constexpr std::uint32_t kPhiloxW1 = 0xBB67AE85u;  ///< sqrt(3) - 1

DPSELECT_HD DPSELECT_FORCEINLINE void philox_round(std::uint32_t (&c)[4], std::uint32_t k0,
                                                   std::uint32_t k1) {
  const std::uint64_t p0 = static_cast<std::uint64_t>(kPhiloxM0) * c[0];
  const std::uint64_t p1 = static_cast<std::uint64_t>(kPhiloxM1) * c[2];
  const std::uint32_t hi0 = static_cast<std::uint32_t>(p0 >> 32);
  const std::uint32_t lo0 = static_cast<std::uint32_t>(p0);
  const std::uint32_t hi1 = static_cast<std::uint32_t>(p1 >> 32);
  const std::uint32_t lo1 = static_cast<std::uint32_t>(p1);
  const std::uint32_t c1 = c[1];
  const std::uint32_t c3 = c[3];
  c[0] = hi1 ^ c1 ^ k0;
  c[1] = lo1;
  c[2] = hi0 ^ c3 ^ k1;
  c[3] = lo0;
}

}  // namespace detail

/// The raw Philox4x32-10 bijection on one 128-bit counter: 10 rounds with the Weyl key schedule
/// of Salmon et al. (SC'11), as cuRAND computes it.
/// @param c0 Counter word 0 (least significant); any value.
/// @param c1 Counter word 1; any value.
/// @param c2 Counter word 2; any value.
/// @param c3 Counter word 3 (most significant); any value.
/// @param key The key; any value.
/// @return The output block; for a fixed key a bijection of the counter.
DPSELECT_HD DPSELECT_FORCEINLINE RandomBlock philox4x32_10(std::uint32_t c0, std::uint32_t c1,
                                                         std::uint32_t c2, std::uint32_t c3,
                                                         PhiloxKey key) {
  std::uint32_t c[4] = {c0, c1, c2, c3};
  std::uint32_t k0 = key.lo;
  std::uint32_t k1 = key.hi;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += detail::kPhiloxW0;
      k1 += detail::kPhiloxW1;
    }
    detail::philox_round(c, k0, k1);
  }
  return RandomBlock{{c[0], c[1], c[2], c[3]}};
}

/// Block number `position` (words 4*position .. 4*position+3) of stream `stream`.
/// @param key The stream's key.
/// @param stream Any 64-bit stream id (counter words 2 and 3).
/// @param position Any 64-bit block position (counter words 0 and 1).
/// @return `philox4x32_10(position low, position high, stream low, stream high, key)`.
DPSELECT_HD DPSELECT_FORCEINLINE RandomBlock philox_block(PhiloxKey key, std::uint64_t stream,
                                                        std::uint64_t position) {
  return philox4x32_10(static_cast<std::uint32_t>(position),
                       static_cast<std::uint32_t>(position >> 32),
                       static_cast<std::uint32_t>(stream), static_cast<std::uint32_t>(stream >> 32),
                       key);
}

/// Word `word_index` of stream `stream`: what `curand()` returns after
/// `curand_init(seed, stream, word_index, &state)`. (Word indices address positions below 2^62;
/// philox_block itself takes any 64-bit position.)
/// @param key The stream's key (`PhiloxKey::from_seed(seed)` for cuRAND's `seed`).
/// @param stream Any 64-bit stream id (cuRAND's subsequence).
/// @param word_index Any 64-bit word index (cuRAND's offset).
/// @return Word `word_index % 4` of block `word_index / 4`.
DPSELECT_HD DPSELECT_FORCEINLINE std::uint32_t philox_word(PhiloxKey key, std::uint64_t stream,
                                                         std::uint64_t word_index) {
  return philox_block(key, stream, word_index / 4).word[word_index % 4];
}

}  // namespace dpselect
