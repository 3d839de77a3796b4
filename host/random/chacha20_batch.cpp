// SPDX-License-Identifier: Apache-2.0
#include "dpselect/detail/chacha20_batch.hpp"

namespace dpselect::detail {
namespace {

// Lane j of a batch: block blocks[j] of stream streams[j].
struct BatchLanes {
  std::uint64_t streams[kChaChaBatchBlocks];
  std::uint64_t blocks[kChaChaBatchBlocks];
};

BatchLanes consecutive_lanes(std::uint64_t stream, std::uint64_t first_block) {
  BatchLanes lanes;
  for (unsigned j = 0; j < kChaChaBatchBlocks; ++j) {
    lanes.streams[j] = stream;
    lanes.blocks[j] = first_block + j;
  }
  return lanes;
}

void scalar_blocks(const ChaChaKey& key, const BatchLanes& lanes, std::uint32_t (&out)[kChaChaBatchBlocks][16]) {
  for (unsigned j = 0; j < kChaChaBatchBlocks; ++j) chacha20_stream_block(key, lanes.streams[j], lanes.blocks[j], out[j]);
}

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__)) && defined(__SSE2__)
#define DPSELECT_CHACHA_SIMD 1

// GCC/Clang vector extensions: element i of a Lanes value is one state word of block i. The
// helpers take vectors by reference and are always inlined: a 32-byte vector passed by value
// outside an AVX function would draw GCC's ABI warning.
typedef std::uint32_t Lanes4 __attribute__((vector_size(16)));
typedef std::uint32_t Lanes8 __attribute__((vector_size(32)));

// x = s[d] ^ s[a] rotated left by n, stored in s[d] (RFC 8439 §2.1's "d ^= a; d <<<= n").
template <class Lanes>
__attribute__((always_inline)) inline void xor_rotate(Lanes& d, const Lanes& a, int n) {
  const Lanes x = d ^ a;
  d = (x << n) | (x >> (32 - n));
}

template <class Lanes>
__attribute__((always_inline)) inline void quarter_round(Lanes (&s)[16], int a, int b, int c, int d) {
  s[a] += s[b];
  xor_rotate(s[d], s[a], 16);
  s[c] += s[d];
  xor_rotate(s[b], s[c], 12);
  s[a] += s[b];
  xor_rotate(s[d], s[a], 8);
  s[c] += s[d];
  xor_rotate(s[b], s[c], 7);
}

// Lanes offset .. offset + kWidth - 1 of `lanes` into out[offset ..]: chacha20_block on each
// lane (the same steps, in the same order, on 32-bit words).
template <class Lanes, unsigned kWidth>
__attribute__((always_inline)) inline void lane_blocks(const ChaChaKey& key, const BatchLanes& lanes, unsigned offset,
                                                       std::uint32_t (&out)[kChaChaBatchBlocks][16]) {
  const std::uint32_t words[12] = {0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u,
                                   key.word[0], key.word[1], key.word[2], key.word[3],
                                   key.word[4], key.word[5], key.word[6], key.word[7]};
  Lanes input[16];
  for (int w = 0; w < 12; ++w) input[w] = Lanes{} + words[w];
  // State words 12 and 13 of each lane: its 64-bit block number; 14 and 15: its stream.
  for (int w = 12; w < 16; ++w) input[w] = Lanes{};
  for (unsigned lane = 0; lane < kWidth; ++lane) {
    const std::uint64_t block = lanes.blocks[offset + lane];
    const std::uint64_t stream = lanes.streams[offset + lane];
    input[12][lane] = static_cast<std::uint32_t>(block);
    input[13][lane] = static_cast<std::uint32_t>(block >> 32);
    input[14][lane] = static_cast<std::uint32_t>(stream);
    input[15][lane] = static_cast<std::uint32_t>(stream >> 32);
  }
  Lanes s[16];
  for (int w = 0; w < 16; ++w) s[w] = input[w];
  for (int double_round = 0; double_round < 10; ++double_round) {
    quarter_round(s, 0, 4, 8, 12);
    quarter_round(s, 1, 5, 9, 13);
    quarter_round(s, 2, 6, 10, 14);
    quarter_round(s, 3, 7, 11, 15);
    quarter_round(s, 0, 5, 10, 15);
    quarter_round(s, 1, 6, 11, 12);
    quarter_round(s, 2, 7, 8, 13);
    quarter_round(s, 3, 4, 9, 14);
  }
  for (int w = 0; w < 16; ++w) {
    const Lanes sum = s[w] + input[w];
    for (unsigned lane = 0; lane < kWidth; ++lane) out[offset + lane][w] = sum[lane];
  }
}

void sse2_blocks(const ChaChaKey& key, const BatchLanes& lanes, std::uint32_t (&out)[kChaChaBatchBlocks][16]) {
  for (unsigned offset = 0; offset < kChaChaBatchBlocks; offset += 4) lane_blocks<Lanes4, 4>(key, lanes, offset, out);
}

__attribute__((target("avx2"))) void avx2_blocks(const ChaChaKey& key, const BatchLanes& lanes,
                                                 std::uint32_t (&out)[kChaChaBatchBlocks][16]) {
  static_assert(kChaChaBatchBlocks == 8);
  lane_blocks<Lanes8, 8>(key, lanes, 0, out);
}

bool cpu_has_avx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}
#else
#define DPSELECT_CHACHA_SIMD 0
#endif

bool blocks_with(ChaChaBatchCode code, const ChaChaKey& key, const BatchLanes& lanes,
                 std::uint32_t (&out)[kChaChaBatchBlocks][16]) {
  switch (code) {
    case ChaChaBatchCode::scalar:
      scalar_blocks(key, lanes, out);
      return true;
#if DPSELECT_CHACHA_SIMD
    case ChaChaBatchCode::sse2:
      sse2_blocks(key, lanes, out);
      return true;
    case ChaChaBatchCode::avx2:
      if (!cpu_has_avx2()) return false;
      avx2_blocks(key, lanes, out);
      return true;
#endif
    default:
      return false;
  }
}

void fastest_blocks(const ChaChaKey& key, const BatchLanes& lanes, std::uint32_t (&out)[kChaChaBatchBlocks][16]) {
#if DPSELECT_CHACHA_SIMD
  if (cpu_has_avx2()) {
    avx2_blocks(key, lanes, out);
  } else {
    sse2_blocks(key, lanes, out);
  }
#else
  scalar_blocks(key, lanes, out);
#endif
}

BatchLanes lanes_of(const std::uint64_t (&streams)[kChaChaBatchBlocks], const std::uint64_t (&blocks)[kChaChaBatchBlocks]) {
  BatchLanes lanes;
  for (unsigned j = 0; j < kChaChaBatchBlocks; ++j) {
    lanes.streams[j] = streams[j];
    lanes.blocks[j] = blocks[j];
  }
  return lanes;
}

}  // namespace

void chacha20_stream_blocks(const ChaChaKey& key, std::uint64_t stream, std::uint64_t first_block,
                            std::uint32_t (&out)[kChaChaBatchBlocks][16]) {
  fastest_blocks(key, consecutive_lanes(stream, first_block), out);
}

bool chacha20_stream_blocks_with(ChaChaBatchCode code, const ChaChaKey& key, std::uint64_t stream,
                                 std::uint64_t first_block, std::uint32_t (&out)[kChaChaBatchBlocks][16]) {
  return blocks_with(code, key, consecutive_lanes(stream, first_block), out);
}

void chacha20_blocks_of_streams(const ChaChaKey& key, const std::uint64_t (&streams)[kChaChaBatchBlocks],
                                const std::uint64_t (&blocks)[kChaChaBatchBlocks],
                                std::uint32_t (&out)[kChaChaBatchBlocks][16]) {
  fastest_blocks(key, lanes_of(streams, blocks), out);
}

bool chacha20_blocks_of_streams_with(ChaChaBatchCode code, const ChaChaKey& key,
                                     const std::uint64_t (&streams)[kChaChaBatchBlocks],
                                     const std::uint64_t (&blocks)[kChaChaBatchBlocks],
                                     std::uint32_t (&out)[kChaChaBatchBlocks][16]) {
  return blocks_with(code, key, lanes_of(streams, blocks), out);
}

}  // namespace dpselect::detail
