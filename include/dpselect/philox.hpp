// SPDX-License-Identifier: Apache-2.0
/// @file
/// Counter-based Philox4x32-10 (Salmon et al., SC'11), bit-identical to cuRAND's
/// curandStatePhilox4_32_10_t.
///
/// Stream layout (the invariant every mechanism keeps): word w of stream s under key k is
/// word (w mod 4) of Philox(counter = (w/4 low 32, w/4 high 32, s low 32, s high 32), key = k),
/// which is exactly what `curand_init(seed, s, w, &st); curand(&st)` returns for
/// seed = k.lo | k.hi << 32. The noise of candidate i in a release is the block at counter
/// position i of the release's stream (words 4i..4i+3), so it depends only on (key, stream, i).
///
/// Philox is fast and statistically strong but it is not a cryptographically secure generator.
#pragma once

#include <cstdint>

#include "dpselect/detail/host_device.hpp"

namespace dpselect {

struct PhiloxKey {
  std::uint32_t lo = 0;
  std::uint32_t hi = 0;

  /// The key that curand_init(seed, ...) uses.
  DPSELECT_HD static constexpr PhiloxKey from_seed(std::uint64_t seed) {
    return PhiloxKey{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)};
  }
  friend constexpr bool operator==(const PhiloxKey&, const PhiloxKey&) = default;
};

/// Four 32-bit words: one Philox output block, in cuRAND's order (x, y, z, w).
struct RandomBlock {
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

/// The raw Philox4x32-10 bijection on one 128-bit counter.
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
DPSELECT_HD DPSELECT_FORCEINLINE RandomBlock philox_block(PhiloxKey key, std::uint64_t stream,
                                                        std::uint64_t position) {
  return philox4x32_10(static_cast<std::uint32_t>(position),
                       static_cast<std::uint32_t>(position >> 32),
                       static_cast<std::uint32_t>(stream), static_cast<std::uint32_t>(stream >> 32),
                       key);
}

/// Word `word_index` of stream `stream`: what curand() returns after
/// curand_init(seed, stream, word_index, &state). (Word indices address positions below 2^62;
/// philox_block itself takes any 64-bit position.)
DPSELECT_HD DPSELECT_FORCEINLINE std::uint32_t philox_word(PhiloxKey key, std::uint64_t stream,
                                                         std::uint64_t word_index) {
  return philox_block(key, stream, word_index / 4).word[word_index % 4];
}

}  // namespace dpselect
