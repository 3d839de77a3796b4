// SPDX-License-Identifier: Apache-2.0
/// @file
/// Counter-mode ChaCha20 behind the same (key, stream, position) interface as Philox (philox.hpp): a
/// secure generator for the library's random bits (docs/design.md, "Randomness").
///
/// The block function is RFC 8439 §2.3 and matches its test vectors (tests/chacha20_test.cpp).
/// Unlike Philox4x32-10, ChaCha20 is a stream cipher whose block function is assumed to be a
/// pseudorandom function of (counter, nonce) under a secret 256-bit key: an observer who sees
/// any number of outputs cannot predict the others without the key. The price: one 20-round
/// block (64 bytes) yields 4 positions, against one 10-round Philox block per position, and
/// chacha20_random_block, which reads one position alone, computes the whole block (about
/// 11x Philox's time per position on a CPU core: cpu_noise/chacha20_block in the benchmarks).
///
/// Stream layout: position p of stream s is the 16-byte slice (words 4*(p mod 4) .. +3) of the
/// ChaCha20 block with block counter = low 32 bits of p/4 and nonce = (high 32 bits of p/4,
/// low 32 bits of s, high 32 bits of s). State words 12..15 are then (p/4 as 64 bits, s as 64
/// bits), which is Bernstein's original ChaCha20 layout with a 64-bit block counter and the
/// stream as the 64-bit nonce: position p is bytes 16p .. 16p+15 of that key stream.
///
/// No two (stream, position) pairs share key-stream bits. Write p = 4b + q with 0 <= q < 4.
/// The block input (counter, nonce[0], nonce[1], nonce[2]) = (b mod 2^32, b div 2^32,
/// s mod 2^32, s div 2^32) determines b (b < 2^62 < 2^64, so its two halves recover it) and s.
/// So if (s, p) != (s', p') then either s != s' or b != b', and the two blocks are the
/// function's values at distinct inputs; or s = s' and b = b', hence q != q', and the two
/// slices are disjoint words of the same block. This is the property the RFC's rule that a
/// nonce never repeats under one key exists to give: no block input is used twice.
///
/// Every Context draws from it by default (random_key.hpp); Philox only by explicit choice.
///
/// Every function here is `constexpr` or inline, callable from host and device code alike (plain
/// C++ header, no CUDA headers), and none throws.
#pragma once

#include <cstdint>

#include "dpselect/detail/host_device.hpp"
#include "dpselect/philox.hpp"  // RandomBlock

namespace dpselect {

/// A 256-bit ChaCha20 key: word i is key bytes 4i..4i+3 read little-endian, as RFC 8439 §2.3
/// loads the key into state words 4..11.
///
/// The key of every Context by default (through RandomKey, random_key.hpp). The default (all-zero)
/// key is predictable by anyone: Context::with_shared_key refuses it.
struct ChaChaKey {
  /// The eight key words (state words 4..11); all 0 by default.
  std::uint32_t word[8] = {};

  /// The key from its 32-byte serialization (RFC 8439 byte order). Real keys come from the
  /// OS CSPRNG (`detail::fill_from_os_entropy`) through this function.
  /// @param bytes The 32 key bytes; any values.
  /// @return The key whose word i is `bytes[4i .. 4i+3]` read little-endian.
  DPSELECT_HD static constexpr ChaChaKey from_bytes(const std::uint8_t (&bytes)[32]) {
    ChaChaKey key;
    for (int i = 0; i < 8; ++i) {
      key.word[i] = static_cast<std::uint32_t>(bytes[4 * i]) |
                    static_cast<std::uint32_t>(bytes[4 * i + 1]) << 8 |
                    static_cast<std::uint32_t>(bytes[4 * i + 2]) << 16 |
                    static_cast<std::uint32_t>(bytes[4 * i + 3]) << 24;
    }
    return key;
  }

  /// A reproducible key for tests and experiments. Predictable from the seed: never use it
  /// for a release on real data. The seed is expanded by SplitMix64 (Steele, Lea & Flood,
  /// OOPSLA'14; Vigna's constants): its first four outputs from state `seed`, each as two
  /// words low then high. Unlike "seed then zeros", nearby seeds give keys that differ in all
  /// words, so tests do not run on a structured, mostly-zero key.
  /// @param seed Any 64-bit value (0 included).
  /// @return The expanded key, a pure function of `seed`.
  DPSELECT_HD static constexpr ChaChaKey from_seed(std::uint64_t seed) {
    ChaChaKey key;
    std::uint64_t state = seed;
    for (int i = 0; i < 4; ++i) {
      state += 0x9E3779B97F4A7C15ull;
      std::uint64_t z = state;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      z ^= z >> 31;
      key.word[2 * i] = static_cast<std::uint32_t>(z);
      key.word[2 * i + 1] = static_cast<std::uint32_t>(z >> 32);
    }
    return key;
  }

  /// Whether two keys are equal (all eight words; defaulted member-wise comparison).
  /// @return true when every word is equal.
  friend constexpr bool operator==(const ChaChaKey&, const ChaChaKey&) = default;
};

namespace detail {

DPSELECT_HD DPSELECT_FORCEINLINE std::uint32_t rotl32(std::uint32_t x, int n) {
  return (x << n) | (x >> (32 - n));
}

/// RFC 8439 §2.1 (applied to state words as in §2.2).
DPSELECT_HD DPSELECT_FORCEINLINE void chacha_quarter_round(std::uint32_t (&s)[16], int a, int b,
                                                           int c, int d) {
  s[a] += s[b];
  s[d] = rotl32(s[d] ^ s[a], 16);
  s[c] += s[d];
  s[b] = rotl32(s[b] ^ s[c], 12);
  s[a] += s[b];
  s[d] = rotl32(s[d] ^ s[a], 8);
  s[c] += s[d];
  s[b] = rotl32(s[b] ^ s[c], 7);
}

}  // namespace detail

/// The RFC 8439 §2.3 block function: `out[i]` is state word i after 20 rounds plus the input
/// state, so serializing `out[]` little-endian gives the 64 key-stream bytes of that block.
/// `nonce[i]` is nonce bytes 4i..4i+3 read little-endian (state word 13 + i).
/// @param key The 256-bit key (state words 4..11).
/// @param block_counter The 32-bit block counter (state word 12); any value.
/// @param nonce The 96-bit nonce as three words (state words 13..15); any values.
/// @param out Receives the 16 output words; every element is written.
DPSELECT_HD DPSELECT_FORCEINLINE void chacha20_block(const ChaChaKey& key,
                                                     std::uint32_t block_counter,
                                                     const std::uint32_t (&nonce)[3],
                                                     std::uint32_t (&out)[16]) {
  // "expand 32-byte k" as four little-endian words.
  const std::uint32_t input[16] = {0x61707865u,  0x3320646eu,  0x79622d32u,  0x6b206574u,
                                   key.word[0],  key.word[1],  key.word[2],  key.word[3],
                                   key.word[4],  key.word[5],  key.word[6],  key.word[7],
                                   block_counter, nonce[0],    nonce[1],     nonce[2]};
  for (int i = 0; i < 16; ++i) out[i] = input[i];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int double_round = 0; double_round < 10; ++double_round) {
    detail::chacha_quarter_round(out, 0, 4, 8, 12);  // columns
    detail::chacha_quarter_round(out, 1, 5, 9, 13);
    detail::chacha_quarter_round(out, 2, 6, 10, 14);
    detail::chacha_quarter_round(out, 3, 7, 11, 15);
    detail::chacha_quarter_round(out, 0, 5, 10, 15);  // diagonals
    detail::chacha_quarter_round(out, 1, 6, 11, 12);
    detail::chacha_quarter_round(out, 2, 7, 8, 13);
    detail::chacha_quarter_round(out, 3, 4, 9, 14);
  }
  for (int i = 0; i < 16; ++i) out[i] += input[i];
}

/// The 64-byte block number `block` (positions 4*block .. 4*block+3) of stream `stream`: the
/// block function at counter = low 32 bits of `block`, nonce = (high 32 bits of `block`, low and
/// high 32 bits of `stream`) (layout at the top of the file).
/// @param key The 256-bit key.
/// @param stream Any 64-bit stream id.
/// @param block The block number; below 2^62 for the positions of a 64-bit position range
///        (any 64-bit value is computed).
/// @param out Receives the block's 16 words; position `4 * block + q` is `out[4q .. 4q+3]`.
DPSELECT_HD DPSELECT_FORCEINLINE void chacha20_stream_block(const ChaChaKey& key, std::uint64_t stream,
                                                            std::uint64_t block,
                                                            std::uint32_t (&out)[16]) {
  const std::uint32_t nonce[3] = {static_cast<std::uint32_t>(block >> 32),
                                  static_cast<std::uint32_t>(stream),
                                  static_cast<std::uint32_t>(stream >> 32)};
  chacha20_block(key, static_cast<std::uint32_t>(block), nonce, out);
}

/// Position 4 * block + Quarter from the words of block number `block`. The quarter is a
/// template argument so that device code indexes the words with constants: a block indexed at
/// run time lives in local memory (a stack frame and a round trip per word), not in registers.
/// @tparam Quarter Which 16-byte quarter, 0..3 (checked at compile time).
/// @param words The 16 words of the block, as chacha20_stream_block writes them.
/// @return `{words[4 Quarter], ..., words[4 Quarter + 3]}`.
template <unsigned Quarter>
DPSELECT_HD DPSELECT_FORCEINLINE RandomBlock chacha20_quarter(const std::uint32_t (&words)[16]) {
  static_assert(Quarter < 4, "a ChaCha20 block holds four positions");
  return RandomBlock{{words[4 * Quarter], words[4 * Quarter + 1], words[4 * Quarter + 2], words[4 * Quarter + 3]}};
}

/// The same with the quarter known only at run time: selected, not indexed, so that the words
/// stay in registers.
/// @param words The 16 words of the block, as chacha20_stream_block writes them.
/// @param quarter Which quarter; taken modulo 4 (so any value is accepted).
/// @return `{words[4 q], ..., words[4 q + 3]}` for `q = quarter % 4`.
DPSELECT_HD DPSELECT_FORCEINLINE RandomBlock chacha20_quarter(const std::uint32_t (&words)[16], unsigned quarter) {
  switch (quarter % 4) {
    case 0: return chacha20_quarter<0>(words);
    case 1: return chacha20_quarter<1>(words);
    case 2: return chacha20_quarter<2>(words);
    default: return chacha20_quarter<3>(words);
  }
}

/// Block number `position` of stream `stream` (layout and injectivity at the top of the file).
/// Computes a whole 64-byte block and keeps a quarter: a caller reading consecutive positions
/// saves 3/4 of the work with chacha20_stream_block (`detail::SequentialBlocks` in random_key.hpp),
/// and a caller that knows `position % 4` at compile time reads it with chacha20_quarter.
/// @param key The 256-bit key.
/// @param stream Any 64-bit stream id.
/// @param position Any 64-bit position (block `position / 4`, quarter `position % 4`).
/// @return The 128 bits of that position: bytes 16p .. 16p + 15 of the stream's key stream
///         (p = `position`), as four little-endian words.
DPSELECT_HD DPSELECT_FORCEINLINE RandomBlock chacha20_random_block(const ChaChaKey& key,
                                                                   std::uint64_t stream,
                                                                   std::uint64_t position) {
  std::uint32_t out[16];
  chacha20_stream_block(key, stream, position / 4, out);
  return chacha20_quarter(out, static_cast<unsigned>(position % 4));
}

}  // namespace dpselect
