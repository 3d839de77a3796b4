// SPDX-License-Identifier: Apache-2.0
// Philox4x32-10 (Salmon et al. 2011) against Random123's known-answer vectors and the stream
// layout of docs/design.md, "Randomness".
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "dpselect/philox.hpp"

namespace {

struct KnownAnswer {
  std::uint32_t counter[4];
  std::uint32_t key[2];
  std::uint32_t output[4];
};

std::vector<KnownAnswer> read_known_answers() {
  std::ifstream file(DPSELECT_TEST_DATA_DIR "/philox4x32_10.txt");
  std::vector<KnownAnswer> rows;
  std::string line;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    KnownAnswer row;
    fields >> std::hex >> row.counter[0] >> row.counter[1] >> row.counter[2] >> row.counter[3] >>
        row.key[0] >> row.key[1] >> row.output[0] >> row.output[1] >> row.output[2] >> row.output[3];
    if (fields) rows.push_back(row);
  }
  return rows;
}

TEST(Philox, MatchesRandom123KnownAnswers) {
  const std::vector<KnownAnswer> rows = read_known_answers();
  ASSERT_EQ(rows.size(), 3u) << "test-vector file not found or malformed";
  for (const KnownAnswer& row : rows) {
    const dpselect::RandomBlock block =
        dpselect::philox4x32_10(row.counter[0], row.counter[1], row.counter[2], row.counter[3],
                                dpselect::PhiloxKey{row.key[0], row.key[1]});
    for (int w = 0; w < 4; ++w) EXPECT_EQ(block.word[w], row.output[w]) << "word " << w;
  }
}

TEST(Philox, StreamLayoutPutsPositionLowAndStreamHigh) {
  const dpselect::PhiloxKey key{0x243f6a88u, 0x85a308d3u};
  const std::uint64_t stream = 0x0123456789abcdefULL;
  const std::uint64_t position = 0x0edcba9876543210ULL;  // word index 4*position fits 64 bits
  const dpselect::RandomBlock expected =
      dpselect::philox4x32_10(0x76543210u, 0x0edcba98u, 0x89abcdefu, 0x01234567u, key);
  const dpselect::RandomBlock block = dpselect::philox_block(key, stream, position);
  for (int w = 0; w < 4; ++w) {
    EXPECT_EQ(block.word[w], expected.word[w]);
    EXPECT_EQ(dpselect::philox_word(key, stream, 4 * position + w), expected.word[w]);
  }
}

TEST(Philox, SeedMapsToKeyLikeCurandInit) {
  EXPECT_EQ(dpselect::PhiloxKey::from_seed(0x0123456789abcdefULL),
            (dpselect::PhiloxKey{0x89abcdefu, 0x01234567u}));
  // From the test-vector notes: cuRAND's host generator with seed 0 emits, as words 4..7, the
  // block at counter (0, 0, 1, 0), i.e. position 0 of stream 1.
  const dpselect::RandomBlock block = dpselect::philox_block(dpselect::PhiloxKey::from_seed(0), 1, 0);
  EXPECT_EQ(block.word[0], 0x844515e1u);
  EXPECT_EQ(block.word[1], 0xf08d6eaau);
  EXPECT_EQ(block.word[2], 0x0f19c053u);
  EXPECT_EQ(block.word[3], 0x83f875f0u);
}

}  // namespace
