// SPDX-License-Identifier: Apache-2.0
// ChaCha20 against RFC 8439's test vectors, and the (stream, position) layout of chacha20.hpp.
//
// The expected bytes are typed from RFC 8439 (§2.3.2, §2.4.2, Appendix A.1) and confirmed by
// an independent pure-Python implementation: tests/reference/chacha20_reference.py checks
// these same vectors and exits non-zero on a mismatch.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <iterator>
#include <set>
#include <vector>

#include "dpselect/chacha20.hpp"

namespace {

using Bytes64 = std::array<std::uint8_t, 64>;

dpselect::ChaChaKey key_from(const std::array<std::uint8_t, 32>& bytes) {
  std::uint8_t raw[32];
  for (int i = 0; i < 32; ++i) raw[i] = bytes[i];
  return dpselect::ChaChaKey::from_bytes(raw);
}

std::array<std::uint8_t, 32> key_bytes_0_to_1f() {
  std::array<std::uint8_t, 32> bytes{};
  for (int i = 0; i < 32; ++i) bytes[i] = static_cast<std::uint8_t>(i);
  return bytes;
}

// RFC 8439 §2.3: the nonce's 12 bytes become three little-endian words.
void nonce_from(const std::array<std::uint8_t, 12>& bytes, std::uint32_t (&nonce)[3]) {
  for (int i = 0; i < 3; ++i) {
    nonce[i] = static_cast<std::uint32_t>(bytes[4 * i]) |
               static_cast<std::uint32_t>(bytes[4 * i + 1]) << 8 |
               static_cast<std::uint32_t>(bytes[4 * i + 2]) << 16 |
               static_cast<std::uint32_t>(bytes[4 * i + 3]) << 24;
  }
}

// The key stream bytes of a block: each output word little-endian, in order.
Bytes64 serialize(const std::uint32_t (&out)[16]) {
  Bytes64 bytes{};
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 4; ++j) bytes[4 * i + j] = static_cast<std::uint8_t>(out[i] >> (8 * j));
  }
  return bytes;
}

Bytes64 block_bytes(const dpselect::ChaChaKey& key, std::uint32_t counter,
                    const std::array<std::uint8_t, 12>& nonce_bytes) {
  std::uint32_t nonce[3];
  nonce_from(nonce_bytes, nonce);
  std::uint32_t out[16];
  dpselect::chacha20_block(key, counter, nonce, out);
  return serialize(out);
}

// RFC 8439 §2.3.2: key 00 01 .. 1f, nonce 00 00 00 09 00 00 00 4a 00 00 00 00, counter 1.
constexpr Bytes64 kRfc232Serialized = {
    0x10, 0xf1, 0xe7, 0xe4, 0xd1, 0x3b, 0x59, 0x15, 0x50, 0x0f, 0xdd, 0x1f, 0xa3, 0x20, 0x71, 0xc4,
    0xc7, 0xd1, 0xf4, 0xc7, 0x33, 0xc0, 0x68, 0x03, 0x04, 0x22, 0xaa, 0x9a, 0xc3, 0xd4, 0x6c, 0x4e,
    0xd2, 0x82, 0x64, 0x46, 0x07, 0x9f, 0xaa, 0x09, 0x14, 0xc2, 0xd7, 0x05, 0xd9, 0x8b, 0x02, 0xa2,
    0xb5, 0x12, 0x9c, 0xd1, 0xde, 0x16, 0x4e, 0xb9, 0xcb, 0xd0, 0x83, 0xe8, 0xa2, 0x50, 0x3c, 0x4e};
constexpr std::array<std::uint8_t, 12> kRfc232Nonce = {0x00, 0x00, 0x00, 0x09, 0x00, 0x00,
                                                       0x00, 0x4a, 0x00, 0x00, 0x00, 0x00};

TEST(ChaCha20, Rfc8439Section232BlockFunctionTestVector) {
  const dpselect::ChaChaKey key = key_from(key_bytes_0_to_1f());
  EXPECT_EQ(block_bytes(key, 1, kRfc232Nonce), kRfc232Serialized);

  // The same vector as the words the RFC prints for the state after the final addition.
  std::uint32_t nonce[3];
  nonce_from(kRfc232Nonce, nonce);
  EXPECT_EQ(nonce[0], 0x09000000u);
  EXPECT_EQ(nonce[1], 0x4a000000u);
  EXPECT_EQ(nonce[2], 0x00000000u);
  std::uint32_t out[16];
  dpselect::chacha20_block(key, 1, nonce, out);
  constexpr std::uint32_t kWords[16] = {0xe4e7f110u, 0x15593bd1u, 0x1fdd0f50u, 0xc47120a3u,
                                        0xc7f4d1c7u, 0x0368c033u, 0x9aaa2204u, 0x4e6cd4c3u,
                                        0x466482d2u, 0x09aa9f07u, 0x05d7c214u, 0xa2028bd9u,
                                        0xd19c12b5u, 0xb94e16deu, 0xe883d0cbu, 0x4e3c50a2u};
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out[i], kWords[i]) << "word " << i;
}

struct BlockVector {
  const char* name;
  std::array<std::uint8_t, 32> key;
  std::uint32_t counter;
  std::array<std::uint8_t, 12> nonce;
  Bytes64 expected;
};

// RFC 8439 Appendix A.1, test vectors #1 to #4 (serialized key stream blocks).
constexpr Bytes64 kA1Vector1 = {
    0x76, 0xb8, 0xe0, 0xad, 0xa0, 0xf1, 0x3d, 0x90, 0x40, 0x5d, 0x6a, 0xe5, 0x53, 0x86, 0xbd, 0x28,
    0xbd, 0xd2, 0x19, 0xb8, 0xa0, 0x8d, 0xed, 0x1a, 0xa8, 0x36, 0xef, 0xcc, 0x8b, 0x77, 0x0d, 0xc7,
    0xda, 0x41, 0x59, 0x7c, 0x51, 0x57, 0x48, 0x8d, 0x77, 0x24, 0xe0, 0x3f, 0xb8, 0xd8, 0x4a, 0x37,
    0x6a, 0x43, 0xb8, 0xf4, 0x15, 0x18, 0xa1, 0x1c, 0xc3, 0x87, 0xb6, 0x69, 0xb2, 0xee, 0x65, 0x86};
constexpr Bytes64 kA1Vector2 = {
    0x9f, 0x07, 0xe7, 0xbe, 0x55, 0x51, 0x38, 0x7a, 0x98, 0xba, 0x97, 0x7c, 0x73, 0x2d, 0x08, 0x0d,
    0xcb, 0x0f, 0x29, 0xa0, 0x48, 0xe3, 0x65, 0x69, 0x12, 0xc6, 0x53, 0x3e, 0x32, 0xee, 0x7a, 0xed,
    0x29, 0xb7, 0x21, 0x76, 0x9c, 0xe6, 0x4e, 0x43, 0xd5, 0x71, 0x33, 0xb0, 0x74, 0xd8, 0x39, 0xd5,
    0x31, 0xed, 0x1f, 0x28, 0x51, 0x0a, 0xfb, 0x45, 0xac, 0xe1, 0x0a, 0x1f, 0x4b, 0x79, 0x4d, 0x6f};
constexpr Bytes64 kA1Vector3 = {
    0x3a, 0xeb, 0x52, 0x24, 0xec, 0xf8, 0x49, 0x92, 0x9b, 0x9d, 0x82, 0x8d, 0xb1, 0xce, 0xd4, 0xdd,
    0x83, 0x20, 0x25, 0xe8, 0x01, 0x8b, 0x81, 0x60, 0xb8, 0x22, 0x84, 0xf3, 0xc9, 0x49, 0xaa, 0x5a,
    0x8e, 0xca, 0x00, 0xbb, 0xb4, 0xa7, 0x3b, 0xda, 0xd1, 0x92, 0xb5, 0xc4, 0x2f, 0x73, 0xf2, 0xfd,
    0x4e, 0x27, 0x36, 0x44, 0xc8, 0xb3, 0x61, 0x25, 0xa6, 0x4a, 0xdd, 0xeb, 0x00, 0x6c, 0x13, 0xa0};
constexpr Bytes64 kA1Vector4 = {
    0x72, 0xd5, 0x4d, 0xfb, 0xf1, 0x2e, 0xc4, 0x4b, 0x36, 0x26, 0x92, 0xdf, 0x94, 0x13, 0x7f, 0x32,
    0x8f, 0xea, 0x8d, 0xa7, 0x39, 0x90, 0x26, 0x5e, 0xc1, 0xbb, 0xbe, 0xa1, 0xae, 0x9a, 0xf0, 0xca,
    0x13, 0xb2, 0x5a, 0xa2, 0x6c, 0xb4, 0xa6, 0x48, 0xcb, 0x9b, 0x9d, 0x1b, 0xe6, 0x5b, 0x2c, 0x09,
    0x24, 0xa6, 0x6c, 0x54, 0xd5, 0x45, 0xec, 0x1b, 0x73, 0x74, 0xf4, 0x87, 0x2e, 0x99, 0xf0, 0x96};

TEST(ChaCha20, Rfc8439AppendixA1BlockFunctionVectors) {
  std::array<std::uint8_t, 32> key_ends_01{};
  key_ends_01[31] = 0x01;
  std::array<std::uint8_t, 32> key_00_ff{};
  key_00_ff[1] = 0xff;
  const std::vector<BlockVector> vectors = {
      {"A.1 #1", {}, 0, {}, kA1Vector1},
      {"A.1 #2", {}, 1, {}, kA1Vector2},
      {"A.1 #3", key_ends_01, 1, {}, kA1Vector3},
      {"A.1 #4", key_00_ff, 2, {}, kA1Vector4},
  };
  for (const BlockVector& v : vectors) {
    EXPECT_EQ(block_bytes(key_from(v.key), v.counter, v.nonce), v.expected) << v.name;
  }
}

// RFC 8439 §2.4.2: the first 64 bytes of the ciphertext.
constexpr Bytes64 kRfc242Ciphertext = {
    0x6e, 0x2e, 0x35, 0x9a, 0x25, 0x68, 0xf9, 0x80, 0x41, 0xba, 0x07, 0x28, 0xdd, 0x0d, 0x69, 0x81,
    0xe9, 0x7e, 0x7a, 0xec, 0x1d, 0x43, 0x60, 0xc2, 0x0a, 0x27, 0xaf, 0xcc, 0xfd, 0x9f, 0xae, 0x0b,
    0xf9, 0x1b, 0x65, 0xc5, 0x52, 0x47, 0x33, 0xab, 0x8f, 0x59, 0x3d, 0xab, 0xcd, 0x62, 0xb3, 0x57,
    0x16, 0x39, 0xd6, 0x24, 0xe6, 0x51, 0x52, 0xab, 0x8f, 0x53, 0x0c, 0x35, 0x9f, 0x08, 0x61, 0xd8};

// RFC 8439 §2.4.2: the first 64 bytes of the "sunscreen" plaintext, encrypted with key
// 00 01 .. 1f, nonce 00 00 00 00 00 00 00 4a 00 00 00 00 and initial counter 1, give the first
// 64 bytes of the RFC's ciphertext: plaintext XOR block(counter 1).
TEST(ChaCha20, Rfc8439Section242EncryptionFirstBlock) {
  constexpr char kPlaintext[] =
      "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future,"
      " sunscreen would be it.";
  static_assert(sizeof(kPlaintext) - 1 == 114);
  const Bytes64 keystream = block_bytes(key_from(key_bytes_0_to_1f()), 1,
                                        {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x4a, 0x00, 0x00,
                                         0x00, 0x00});
  Bytes64 ciphertext{};
  for (int i = 0; i < 64; ++i) {
    ciphertext[i] =
        static_cast<std::uint8_t>(static_cast<std::uint8_t>(kPlaintext[i]) ^ keystream[i]);
  }
  EXPECT_EQ(ciphertext, kRfc242Ciphertext);
}

TEST(ChaChaKey, FromBytesReadsLittleEndianWords) {
  const dpselect::ChaChaKey key = key_from(key_bytes_0_to_1f());
  EXPECT_EQ(key.word[0], 0x03020100u);
  EXPECT_EQ(key.word[7], 0x1f1e1d1cu);
}

// SplitMix64 from state 0 emits e220a8397b1dcdaf, 6e789e6aa1b965f4, 06c45d188009454f,
// f88bb8a8724c81ec (Vigna's splitmix64.c; recomputed with Python).
TEST(ChaChaKey, FromSeedExpandsWithSplitMix64) {
  constexpr dpselect::ChaChaKey key = dpselect::ChaChaKey::from_seed(0);
  constexpr dpselect::ChaChaKey expected{{0x7b1dcdafu, 0xe220a839u, 0xa1b965f4u, 0x6e789e6au,
                                          0x8009454fu, 0x06c45d18u, 0x724c81ecu, 0xf88bb8a8u}};
  static_assert(key == expected);
  EXPECT_EQ(key, expected);
  EXPECT_NE(dpselect::ChaChaKey::from_seed(1), expected);
}

constexpr std::uint64_t kMax = ~std::uint64_t{0};
constexpr std::uint64_t kPositions[] = {0, 1, 3, 4, 5, (1ull << 34) - 1, 1ull << 34,
                                        (1ull << 34) + 3, kMax - 4, kMax - 3, kMax};
constexpr std::uint64_t kStreams[] = {0, 1, (1ull << 32) - 1, 1ull << 32, kMax - 1, kMax};

// Position p of stream s is words 4*(p%4) .. of the block at counter = low(p/4), nonce =
// (high(p/4), low(s), high(s)): written out independently of chacha20_random_block.
TEST(ChaCha20, RandomBlockIsAQuarterOfTheCounterNonceBlock) {
  const dpselect::ChaChaKey keys[] = {dpselect::ChaChaKey::from_seed(0x0123456789abcdefull),
                                      key_from(key_bytes_0_to_1f())};
  for (const dpselect::ChaChaKey& key : keys) {
    for (const std::uint64_t s : kStreams) {
      for (const std::uint64_t p : kPositions) {
        const std::uint64_t b = p >> 2;
        const std::uint32_t nonce[3] = {static_cast<std::uint32_t>(b >> 32),
                                        static_cast<std::uint32_t>(s & 0xffffffffu),
                                        static_cast<std::uint32_t>(s >> 32)};
        std::uint32_t out[16];
        dpselect::chacha20_block(key, static_cast<std::uint32_t>(b & 0xffffffffu), nonce, out);
        const dpselect::RandomBlock block = dpselect::chacha20_random_block(key, s, p);
        const int q = static_cast<int>(p & 3);
        for (int w = 0; w < 4; ++w) {
          EXPECT_EQ(block.word[w], out[4 * q + w]) << "s=" << s << " p=" << p << " w=" << w;
        }
      }
    }
  }
}

// The layout against the RFC itself: §2.3.2's nonce words (0x09000000, 0x4a000000, 0) and
// counter 1 are block b = 0x09000000'00000001 of stream 0x4a000000, i.e. positions 4b .. 4b+3.
TEST(ChaCha20, RandomBlockLayoutReproducesRfc8439Section232) {
  const dpselect::ChaChaKey key = key_from(key_bytes_0_to_1f());
  const std::uint64_t b = 0x0900000000000001ull;
  for (int q = 0; q < 4; ++q) {
    const dpselect::RandomBlock block =
        dpselect::chacha20_random_block(key, 0x4a000000u, 4 * b + static_cast<std::uint64_t>(q));
    for (int w = 0; w < 4; ++w) {
      const int byte = 16 * q + 4 * w;
      const std::uint32_t expected = static_cast<std::uint32_t>(kRfc232Serialized[byte]) |
                                     static_cast<std::uint32_t>(kRfc232Serialized[byte + 1]) << 8 |
                                     static_cast<std::uint32_t>(kRfc232Serialized[byte + 2]) << 16 |
                                     static_cast<std::uint32_t>(kRfc232Serialized[byte + 3]) << 24;
      EXPECT_EQ(block.word[w], expected) << "q=" << q << " w=" << w;
    }
  }
}

// Distinct (s, p) read distinct key-stream bits (proof in chacha20.hpp), so their 128-bit
// blocks are independent pseudorandom values; equal blocks among these 66 pairs would have
// probability below 66^2 / 2^129, so any collision here is a layout bug (e.g. a dropped
// high half of the stream or of p/4).
TEST(ChaCha20, DistinctStreamPositionPairsGiveDistinctBlocks) {
  const dpselect::ChaChaKey key = dpselect::ChaChaKey::from_seed(42);
  std::set<std::array<std::uint32_t, 4>> seen;
  for (const std::uint64_t s : kStreams) {
    for (const std::uint64_t p : kPositions) {
      const dpselect::RandomBlock block = dpselect::chacha20_random_block(key, s, p);
      const bool inserted =
          seen.insert({block.word[0], block.word[1], block.word[2], block.word[3]}).second;
      EXPECT_TRUE(inserted) << "s=" << s << " p=" << p;
    }
  }
  EXPECT_EQ(seen.size(), std::size(kStreams) * std::size(kPositions));
}

}  // namespace
