// SPDX-License-Identifier: Apache-2.0
// The little-endian layout every ticket's bytes are written in (ReleaseTicket, TopKTicket,
// PartitionSelectionTicket): integers and doubles by their bits, a context's key as eight 32-bit
// words, and the keyed tag that closes the bytes (release_tags.hpp).
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "dpselect/detail/host_device.hpp"
#include "dpselect/random_key.hpp"
#include "engine/release_tags.hpp"

namespace dpselect::detail {

class ByteWriter {
 public:
  void bytes(const void* data, std::size_t size) {
    const auto* p = static_cast<const std::uint8_t*>(data);
    out_.insert(out_.end(), p, p + size);
  }
  void u8(std::uint8_t v) { out_.push_back(v); }
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void f64(double v) { u64(double_bits(v)); }
  // ChaCha20: its 8 words; Philox: lo, hi, then six zero words.
  void key(const RandomKey& key) {
    if (key.generator == Generator::philox) {
      u32(key.philox.lo);
      u32(key.philox.hi);
      for (int i = 2; i < 8; ++i) u32(0);
    } else {
      for (std::uint32_t word : key.chacha.word) u32(word);
    }
  }
  // The bytes written, closed by their tag under (key, stream) in `domain`.
  std::vector<std::uint8_t> tagged(const RandomKey& key, std::uint64_t stream, TagDomain domain) {
    const std::uint64_t tag = keyed_tag(key, stream, domain, out_);
    u64(tag);
    return std::move(out_);
  }
  std::vector<std::uint8_t> take() { return std::move(out_); }

 private:
  std::vector<std::uint8_t> out_;
};

// Reads what ByteWriter wrote; the caller checks the size first.
class ByteReader {
 public:
  explicit ByteReader(std::span<const std::uint8_t> in) : in_(in) {}
  std::uint8_t u8() { return in_[at_++]; }
  std::uint32_t u32() {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= std::uint32_t{in_[at_++]} << (8 * i);
    return v;
  }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= std::uint64_t{in_[at_++]} << (8 * i);
    return v;
  }
  double f64() { return double_from_bits(u64()); }
  // The key of a `generator` code (0 ChaCha20, 1 Philox), or false where a Philox key's unused
  // words are not zero (one encoding per key).
  bool key(std::uint8_t generator, RandomKey& out) {
    std::uint32_t words[8];
    for (std::uint32_t& word : words) word = u32();
    if (generator == static_cast<std::uint8_t>(Generator::philox)) {
      for (int i = 2; i < 8; ++i) {
        if (words[i] != 0) return false;
      }
      out = RandomKey(PhiloxKey{words[0], words[1]});
      return true;
    }
    ChaChaKey chacha;
    std::memcpy(chacha.word, words, sizeof words);
    out = RandomKey(chacha);
    return true;
  }
  std::size_t position() const { return at_; }

 private:
  std::span<const std::uint8_t> in_;
  std::size_t at_ = 0;
};

}  // namespace dpselect::detail
