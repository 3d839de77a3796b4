// SPDX-License-Identifier: Apache-2.0
// The exact discrete samplers of Canonne, Kamath & Steinke 2020 (CKS, Algorithms 1-3) as
// __host__ __device__ code: integer arithmetic only, so the output distribution is exactly the
// stated one given uniform bits, on the CPU and on the GPU alike (unsigned __int128, including its
// division, is supported by nvcc in device code since CUDA 11.5; checked with nvcc 13.0, sm_90).
//
// No exceptions: a sampler that runs out of its random-bit budget (probability < 2^-300000 per
// sample, discrete_noise.hpp) sets SamplerBits::exhausted and returns 0 / false; the caller
// checks the flag (the host wrappers in discrete_noise.cpp throw RandomnessExhausted, the secure
// noise kernels report it). The public host functions in discrete_noise.hpp are thin wrappers
// over these and return the same values from the same words.
//
// Parameters are not validated here (the wrappers and the secure-noise planner do it): every
// integer parameter must lie in [1, 2^32] (n in [0, 2^32] for bernoulli_exp); the overflow bounds
// in the comments rest on that.
#pragma once

#include <cstdint>

#include "dpselect/detail/host_device.hpp"
#include "dpselect/random_key.hpp"

namespace dpselect::detail::discrete_core {

using u128 = unsigned __int128;

// Loop counters beyond this mean ~2^27 words drawn: far past an item's 2^22 words, so the budget
// is exhausted (discrete_noise.hpp, "Running out of positions").
inline constexpr std::uint64_t kLoopLimit = std::uint64_t{1} << 27;

// The bit source of the samplers: words of blocks next_position, next_position + 1, ... of
// (key, stream); at most blocks_left more blocks. Once exhausted, every word is 0 and the
// samplers return at their next check.
struct SamplerBits {
  RandomKey key{};
  std::uint64_t stream = 0;
  std::uint64_t next_position = 0;
  std::uint64_t blocks_left = 0;
  RandomBlock block{};
  unsigned words_left = 0;
  bool exhausted = false;

  DPSELECT_HD DPSELECT_FORCEINLINE std::uint32_t next32() {
    if (words_left == 0) {
      if (blocks_left == 0 || exhausted) {
        exhausted = true;
        return 0;
      }
      block = random_block(key, stream, next_position++);
      --blocks_left;
      words_left = 4;
    }
    const unsigned taken = 4 - words_left--;
    // Selected rather than indexed (block.word[taken]), which keeps `block` in registers on a GPU.
    return taken == 0 ? block.word[0] : taken == 1 ? block.word[1] : taken == 2 ? block.word[2] : block.word[3];
  }
};

// The item range of CounterBits::for_item: positions [first + item * 2^20, first + (item+1) * 2^20).
DPSELECT_HD DPSELECT_FORCEINLINE SamplerBits bits_for_item(const RandomKey& key, std::uint64_t stream,
                                                           std::uint64_t first_position, std::uint64_t item) {
  SamplerBits bits;
  bits.key = key;
  bits.stream = stream;
  bits.next_position = first_position + (item << 20);
  bits.blocks_left = std::uint64_t{1} << 20;
  return bits;
}

DPSELECT_HD DPSELECT_FORCEINLINE int bit_width64(std::uint64_t value) {
  if (value == 0) return 0;
#if defined(__CUDA_ARCH__)
  return 64 - __clzll(static_cast<long long>(value));
#else
  return 64 - __builtin_clzll(value);
#endif
}

DPSELECT_HD DPSELECT_FORCEINLINE int bit_width128(u128 value) {
  const auto high = static_cast<std::uint64_t>(value >> 64);
  return high != 0 ? 64 + bit_width64(high) : bit_width64(static_cast<std::uint64_t>(value));
}

// Uniform on [0, m), m >= 1: draw bit_width(m - 1) bits, retry if >= m (acceptance > 1/2).
DPSELECT_HD inline u128 uniform_below128(SamplerBits& bits, u128 m) {
  if (m <= 1) return 0;
  const int width = bit_width128(m - 1);
  const int words = (width + 31) / 32;
  const u128 mask = width == 128 ? ~u128{0} : (u128{1} << width) - 1;
  for (;;) {
    u128 x = 0;
    for (int w = 0; w < words; ++w) x = (x << 32) | bits.next32();
    x &= mask;
    if (x < m || bits.exhausted) return bits.exhausted ? 0 : x;
  }
}

// CKS Algorithm 1, gamma = n/d in [0, 1], d < 2^100: K <- 1; while Bernoulli(gamma / K),
// K <- K + 1; the result is "K is odd", which has probability exp(-gamma).
DPSELECT_HD inline bool bernoulli_exp_unit(SamplerBits& bits, u128 n, u128 d) {
  std::uint64_t k = 1;
  for (;;) {
    // d * k < 2^100 * 2^27: no overflow. P[K >= k] = gamma^(k-1) / (k-1)!.
    if (k >= kLoopLimit) bits.exhausted = true;
    if (bits.exhausted) return false;
    if (uniform_below128(bits, d * k) >= n) break;
    ++k;
  }
  return (k & 1) != 0;
}

// CKS Algorithm 1 for gamma = whole + rem/d > 1: Bernoulli(exp(-1)) `whole` times, stopping at the
// first failure, then Bernoulli(exp(-rem/d)). A caller that cannot represent a huge `whole`
// passes the maximum: every pass draws a word, so the budget runs out long before it matters.
DPSELECT_HD inline bool bernoulli_exp_split(SamplerBits& bits, u128 whole, u128 rem, u128 d) {
  for (u128 i = 0; i < whole; ++i) {
    if (!bernoulli_exp_unit(bits, 1, 1)) return false;
  }
  return bernoulli_exp_unit(bits, rem, d);
}

// CKS Algorithm 2: discrete Laplace with scale t/s (P[x] proportional to exp(-|x| s / t)).
DPSELECT_HD inline std::int64_t discrete_laplace(SamplerBits& bits, std::uint64_t s, std::uint64_t t) {
  for (;;) {
    if (bits.exhausted) return 0;
    const auto u = static_cast<std::uint64_t>(uniform_below128(bits, t));
    if (!bernoulli_exp_split(bits, 0, u, t)) continue;  // accepted with probability >= e^-1
    std::uint64_t v = 0;
    while (bernoulli_exp_unit(bits, 1, 1)) {
      if (++v >= kLoopLimit) bits.exhausted = true;
    }
    if (bits.exhausted) return 0;
    // X = U + t V < 2^32 + 2^32 * 2^27: fits in 64 bits, and so does Y = floor(X / s).
    const std::uint64_t x = u + t * v;
    const std::uint64_t y = x / s;
    const bool negative = (bits.next32() & 1u) != 0;
    if (negative && y == 0) continue;  // keeps 0 from being counted twice
    return negative ? -static_cast<std::int64_t>(y) : static_cast<std::int64_t>(y);
  }
}

// floor(sqrt(n)) by bisection on integers.
DPSELECT_HD inline std::uint64_t isqrt(std::uint64_t n) {
  std::uint64_t lo = 0;
  std::uint64_t hi = std::uint64_t{1} << 32;  // hi^2 > n always
  while (hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (static_cast<u128>(mid) * mid <= n) lo = mid; else hi = mid;
  }
  return lo;
}

// CKS Algorithm 3: N_Z(0, sigma^2), sigma^2 = sigma2_num / sigma2_den.
DPSELECT_HD inline std::int64_t discrete_gaussian(SamplerBits& bits, std::uint64_t sigma2_num,
                                                  std::uint64_t sigma2_den) {
  const u128 a = sigma2_num;
  const u128 b = sigma2_den;
  // CKS Algorithm 3: t = floor(sigma) + 1; floor(sqrt(a/b)) = floor(sqrt(floor(a/b))).
  const u128 t = isqrt(sigma2_num / sigma2_den) + 1;  // <= 2^16 + 1
  // gamma = (|Y| - sigma^2/t)^2 / (2 sigma^2) = (|Y| b t - a)^2 / (2 a b t^2); denominator < 2^99.
  const u128 den = 2 * a * b * t * t;
  for (;;) {
    if (bits.exhausted) return 0;
    const std::int64_t y = discrete_laplace(bits, 1, static_cast<std::uint64_t>(t));
    const u128 abs_y = y < 0 ? static_cast<u128>(-static_cast<u128>(y)) : static_cast<u128>(y);
    u128 whole = ~u128{0};
    u128 rem = 0;
    // |Y| < 2^60 keeps |Y| b t < 2^109; for a larger |Y| or x >= 2^64, gamma >= 2^31 (saturated).
    if (abs_y < (u128{1} << 60)) {
      const u128 ybt = abs_y * b * t;
      const u128 x = ybt >= a ? ybt - a : a - ybt;
      if (x < (u128{1} << 64)) {
        const u128 numerator = x * x;
        whole = numerator / den;
        rem = numerator % den;
      }
    }
    if (bernoulli_exp_split(bits, whole, rem, den)) return bits.exhausted ? 0 : y;
  }
}

}  // namespace dpselect::detail::discrete_core
