// SPDX-License-Identifier: Apache-2.0
#include "engine/release_tags.hpp"

#include <vector>

#include "dpselect/chacha20.hpp"
#include "dpselect/detail/noise_positions.hpp"
#include "dpselect/detail/host_device.hpp"

namespace dpselect::detail {
namespace {

// 16 bytes as the block function's input: its counter and its three nonce words, little-endian.
ChaChaKey next_cascade_key(const ChaChaKey& key, const std::uint8_t (&chunk)[16]) {
  std::uint32_t words[4];
  for (int w = 0; w < 4; ++w) {
    words[w] = std::uint32_t{chunk[4 * w]} | std::uint32_t{chunk[4 * w + 1]} << 8 |
               std::uint32_t{chunk[4 * w + 2]} << 16 | std::uint32_t{chunk[4 * w + 3]} << 24;
  }
  const std::uint32_t nonce[3] = {words[1], words[2], words[3]};
  std::uint32_t out[16];
  chacha20_block(key, words[0], nonce, out);
  ChaChaKey next;
  for (int w = 0; w < 8; ++w) next.word[w] = out[w];
  return next;
}

}  // namespace

std::uint64_t keyed_tag(const RandomKey& key, std::uint64_t stream, TagDomain domain,
                        std::span<const std::uint8_t> message) {
  const RandomBlock low = random_block(key, stream, kReleaseTagPosition);
  const RandomBlock high = random_block(key, stream, kReleaseTagPosition + 1);
  ChaChaKey cascade;
  for (int w = 0; w < 4; ++w) {
    cascade.word[w] = low.word[w];
    cascade.word[4 + w] = high.word[w];
  }
  // The first chunk: the domain and the message's length; then the message, zero-padded to whole
  // chunks (the length tells a padded message from one that ends in zeros).
  std::uint8_t chunk[16] = {static_cast<std::uint8_t>(domain)};
  const std::uint64_t length = message.size();
  for (int i = 0; i < 8; ++i) chunk[8 + i] = static_cast<std::uint8_t>(length >> (8 * i));
  cascade = next_cascade_key(cascade, chunk);
  for (std::size_t at = 0; at < message.size(); at += 16) {
    for (std::size_t i = 0; i < 16; ++i) chunk[i] = at + i < message.size() ? message[at + i] : 0;
    cascade = next_cascade_key(cascade, chunk);
  }
  return std::uint64_t{cascade.word[0]} | std::uint64_t{cascade.word[1]} << 32;
}

std::uint64_t release_tag(const RandomKey& key, std::uint64_t stream, const SelectionParams& params,
                          double utility_reference) {
  std::vector<std::uint8_t> message;
  const auto put = [&](std::uint64_t value) {
    for (int i = 0; i < 8; ++i) message.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
  };
  put(static_cast<std::uint64_t>(params.mechanism));
  put(params.monotone ? 1 : 0);
  put(double_bits(params.epsilon));
  put(double_bits(params.sensitivity));
  put(double_bits(params.utility_bound));
  put(params.utility_reference.has_value() ? 1 : 0);
  put(double_bits(params.utility_reference.value_or(0.0)));
  put(double_bits(utility_reference));
  return keyed_tag(key, stream, TagDomain::release_parameters, message);
}

}  // namespace dpselect::detail
