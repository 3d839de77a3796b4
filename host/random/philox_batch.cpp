// SPDX-License-Identifier: Apache-2.0
#include "dpselect/detail/philox_batch.hpp"

#if defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define DPSELECT_PHILOX_SIMD 1
#else
#define DPSELECT_PHILOX_SIMD 0
#endif

namespace dpselect::detail {
namespace {

void scalar_blocks(PhiloxKey key, std::uint64_t stream, std::uint64_t first_position,
                   RandomBlock (&out)[kPhiloxBatchBlocks]) {
  for (unsigned j = 0; j < kPhiloxBatchBlocks; ++j) out[j] = philox_block(key, stream, first_position + j);
}

#if DPSELECT_PHILOX_SIMD
// Each 64-bit lane holds one 32-bit counter word of one block in its low half (the high half is
// zero on entry to every round), so the widening multiply _mm_mul_epu32 gives philox_round's
// exact 64-bit products. Four vectors of two lanes per counter word: 8 blocks.
void sse2_blocks(PhiloxKey key, std::uint64_t stream, std::uint64_t first_position,
                 RandomBlock (&out)[kPhiloxBatchBlocks]) {
  constexpr int kVectors = kPhiloxBatchBlocks / 2;
  const __m128i low_half = _mm_set1_epi64x(0xFFFFFFFF);
  const __m128i m0 = _mm_set1_epi64x(kPhiloxM0);
  const __m128i m1 = _mm_set1_epi64x(kPhiloxM1);
  __m128i c[4][kVectors];
  for (int v = 0; v < kVectors; ++v) {
    const std::uint64_t p0 = first_position + 2 * v;
    const std::uint64_t p1 = p0 + 1;
    c[0][v] = _mm_set_epi64x(static_cast<std::uint32_t>(p1), static_cast<std::uint32_t>(p0));
    c[1][v] = _mm_set_epi64x(p1 >> 32, p0 >> 32);
    c[2][v] = _mm_set1_epi64x(static_cast<std::uint32_t>(stream));
    c[3][v] = _mm_set1_epi64x(stream >> 32);
  }
  std::uint32_t k0 = key.lo;
  std::uint32_t k1 = key.hi;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kPhiloxW0;
      k1 += kPhiloxW1;
    }
    const __m128i key0 = _mm_set1_epi64x(k0);
    const __m128i key1 = _mm_set1_epi64x(k1);
    for (int v = 0; v < kVectors; ++v) {  // philox_round on each lane
      const __m128i p0 = _mm_mul_epu32(m0, c[0][v]);
      const __m128i p1 = _mm_mul_epu32(m1, c[2][v]);
      c[0][v] = _mm_xor_si128(_mm_xor_si128(_mm_srli_epi64(p1, 32), c[1][v]), key0);
      c[1][v] = _mm_and_si128(p1, low_half);
      c[2][v] = _mm_xor_si128(_mm_xor_si128(_mm_srli_epi64(p0, 32), c[3][v]), key1);
      c[3][v] = _mm_and_si128(p0, low_half);
    }
  }
  for (int v = 0; v < kVectors; ++v) {
    alignas(16) std::uint64_t words[4][2];
    for (int w = 0; w < 4; ++w) _mm_store_si128(reinterpret_cast<__m128i*>(words[w]), c[w][v]);
    for (int lane = 0; lane < 2; ++lane) {
      for (int w = 0; w < 4; ++w) out[2 * v + lane].word[w] = static_cast<std::uint32_t>(words[w][lane]);
    }
  }
}

// The same with four lanes per vector.
__attribute__((target("avx2"))) void avx2_blocks(PhiloxKey key, std::uint64_t stream, std::uint64_t first_position,
                                                 RandomBlock (&out)[kPhiloxBatchBlocks]) {
  constexpr int kVectors = kPhiloxBatchBlocks / 4;
  const __m256i low_half = _mm256_set1_epi64x(0xFFFFFFFF);
  const __m256i m0 = _mm256_set1_epi64x(kPhiloxM0);
  const __m256i m1 = _mm256_set1_epi64x(kPhiloxM1);
  __m256i c[4][kVectors];
  for (int v = 0; v < kVectors; ++v) {
    const std::uint64_t p = first_position + 4 * v;
    c[0][v] = _mm256_set_epi64x(static_cast<std::uint32_t>(p + 3), static_cast<std::uint32_t>(p + 2),
                                static_cast<std::uint32_t>(p + 1), static_cast<std::uint32_t>(p));
    c[1][v] = _mm256_set_epi64x((p + 3) >> 32, (p + 2) >> 32, (p + 1) >> 32, p >> 32);
    c[2][v] = _mm256_set1_epi64x(static_cast<std::uint32_t>(stream));
    c[3][v] = _mm256_set1_epi64x(stream >> 32);
  }
  std::uint32_t k0 = key.lo;
  std::uint32_t k1 = key.hi;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kPhiloxW0;
      k1 += kPhiloxW1;
    }
    const __m256i key0 = _mm256_set1_epi64x(k0);
    const __m256i key1 = _mm256_set1_epi64x(k1);
    for (int v = 0; v < kVectors; ++v) {
      const __m256i p0 = _mm256_mul_epu32(m0, c[0][v]);
      const __m256i p1 = _mm256_mul_epu32(m1, c[2][v]);
      c[0][v] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p1, 32), c[1][v]), key0);
      c[1][v] = _mm256_and_si256(p1, low_half);
      c[2][v] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p0, 32), c[3][v]), key1);
      c[3][v] = _mm256_and_si256(p0, low_half);
    }
  }
  for (int v = 0; v < kVectors; ++v) {
    alignas(32) std::uint64_t words[4][4];
    for (int w = 0; w < 4; ++w) _mm256_store_si256(reinterpret_cast<__m256i*>(words[w]), c[w][v]);
    for (int lane = 0; lane < 4; ++lane) {
      for (int w = 0; w < 4; ++w) out[4 * v + lane].word[w] = static_cast<std::uint32_t>(words[w][lane]);
    }
  }
}

bool cpu_has_avx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}
#endif

}  // namespace

void philox_blocks(PhiloxKey key, std::uint64_t stream, std::uint64_t first_position,
                   RandomBlock (&out)[kPhiloxBatchBlocks]) {
#if DPSELECT_PHILOX_SIMD
  if (cpu_has_avx2()) {
    avx2_blocks(key, stream, first_position, out);
  } else {
    sse2_blocks(key, stream, first_position, out);
  }
#else
  scalar_blocks(key, stream, first_position, out);
#endif
}

bool philox_blocks_with(PhiloxBatchCode code, PhiloxKey key, std::uint64_t stream, std::uint64_t first_position,
                        RandomBlock (&out)[kPhiloxBatchBlocks]) {
  switch (code) {
    case PhiloxBatchCode::scalar:
      scalar_blocks(key, stream, first_position, out);
      return true;
#if DPSELECT_PHILOX_SIMD
    case PhiloxBatchCode::sse2:
      sse2_blocks(key, stream, first_position, out);
      return true;
    case PhiloxBatchCode::avx2:
      if (!cpu_has_avx2()) return false;
      avx2_blocks(key, stream, first_position, out);
      return true;
#endif
    default:
      return false;
  }
}

}  // namespace dpselect::detail
