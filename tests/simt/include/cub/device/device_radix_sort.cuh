// SPDX-License-Identifier: Apache-2.0
// cub::DeviceRadixSort::SortKeys for the simt build, with CUB's order: stable; unsigned keys as
// they are, signed keys with the sign bit flipped, floating-point keys with -0.0 taken as +0.0 and
// then the sign bit flipped (positive) or every bit (negative); only the bits [begin_bit,
// end_bit) of that word compared; a decomposer's words compared most significant first. The
// DoubleBuffer form leaves the sorted keys in the other buffer and flips the selector, so code
// that reads Current() is checked to do so. Run at once on the host (streams are eager).
#pragma once

#include <cuda/std/tuple>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "simt/collectives.hpp"

namespace cub {

template <class T>
struct DoubleBuffer {
  T* d_buffers[2] = {nullptr, nullptr};
  int selector = 0;

  DoubleBuffer() = default;
  DoubleBuffer(T* current, T* alternate) : d_buffers{current, alternate} {}
  T* Current() const { return d_buffers[selector]; }
  T* Alternate() const { return d_buffers[selector ^ 1]; }
};

namespace simt_detail {

// The key as the unsigned word CUB's radix passes order.
template <class Key>
auto radix_word(Key key) {
  if constexpr (std::is_floating_point_v<Key>) {
    using Word = std::conditional_t<sizeof(Key) == 4, std::uint32_t, std::uint64_t>;
    Word bits = std::bit_cast<Word>(key);
    constexpr Word kSign = Word{1} << (8 * sizeof(Word) - 1);
    if (bits == kSign) bits = 0;  // -0.0 sorts as +0.0
    return (bits & kSign) != 0 ? static_cast<Word>(~bits) : static_cast<Word>(bits ^ kSign);
  } else if constexpr (std::is_signed_v<Key>) {
    using Word = std::make_unsigned_t<Key>;
    return static_cast<Word>(static_cast<Word>(key) ^ (Word{1} << (8 * sizeof(Word) - 1)));
  } else {
    static_assert(std::is_unsigned_v<Key>, "radix keys are arithmetic or go through a decomposer");
    return key;
  }
}

template <class Word>
Word bit_range(Word word, int begin_bit, int end_bit) {
  const int width = end_bit - begin_bit;
  if (width >= static_cast<int>(8 * sizeof(Word))) return word;
  return static_cast<Word>((word >> begin_bit) & ((Word{1} << width) - 1));
}

inline void require_bits(int begin_bit, int end_bit, int key_bits) {
  if (begin_bit < 0 || end_bit > key_bits || begin_bit >= end_bit) {
    ::simt::fail("cub::DeviceRadixSort::SortKeys: bit range [" + std::to_string(begin_bit) + ", " +
                 std::to_string(end_bit) + ") outside a key of " + std::to_string(key_bits) + " bits");
  }
}

template <class Key, class Less>
void sorted_copy(const Key* in, Key* out, std::uint64_t count, Less less) {
  std::vector<Key> keys(in, in + count);
  std::stable_sort(keys.begin(), keys.end(), less);
  std::copy(keys.begin(), keys.end(), out);
}

template <class Key>
auto by_bits(int begin_bit, int end_bit) {
  return [=](const Key& a, const Key& b) {
    return bit_range(radix_word(a), begin_bit, end_bit) < bit_range(radix_word(b), begin_bit, end_bit);
  };
}

template <class Key, class Decomposer>
auto by_decomposer(Decomposer decomposer) {
  return [=](const Key& a, const Key& b) {
    Key copy_a = a;
    Key copy_b = b;
    const auto words = [](auto&... fields) { return std::make_tuple(radix_word(fields)...); };
    return ::cuda::std::apply(words, decomposer(copy_a)) < ::cuda::std::apply(words, decomposer(copy_b));
  };
}

}  // namespace simt_detail

struct DeviceRadixSort {
  template <class Key, class NumItems>
  static cudaError_t SortKeys(void* temp, std::size_t& temp_bytes, const Key* in, Key* out, NumItems count,
                              int begin_bit = 0, int end_bit = static_cast<int>(8 * sizeof(Key)),
                              cudaStream_t = nullptr) {
    const char* const kName = "cub::DeviceRadixSort::SortKeys";
    simt_detail::require_bits(begin_bit, end_bit, static_cast<int>(8 * sizeof(Key)));
    const auto n = static_cast<std::uint64_t>(count);
    if (::simt::cub_model::temp_storage_query(temp, temp_bytes, n * sizeof(Key) + 256, kName)) return cudaSuccess;
    ::simt::cub_model::require_items(in, n, kName);
    ::simt::cub_model::require_items(out, n, kName);
    simt_detail::sorted_copy(in, out, n, simt_detail::by_bits<Key>(begin_bit, end_bit));
    return cudaSuccess;
  }

  template <class Key, class NumItems>
  static cudaError_t SortKeys(void* temp, std::size_t& temp_bytes, DoubleBuffer<Key>& keys, NumItems count,
                              int begin_bit = 0, int end_bit = static_cast<int>(8 * sizeof(Key)),
                              cudaStream_t = nullptr) {
    const char* const kName = "cub::DeviceRadixSort::SortKeys (DoubleBuffer)";
    simt_detail::require_bits(begin_bit, end_bit, static_cast<int>(8 * sizeof(Key)));
    const auto n = static_cast<std::uint64_t>(count);
    if (::simt::cub_model::temp_storage_query(temp, temp_bytes, 256, kName)) return cudaSuccess;
    ::simt::cub_model::require_items(keys.Current(), n, kName);
    ::simt::cub_model::require_items(keys.Alternate(), n, kName);
    simt_detail::sorted_copy(keys.Current(), keys.Alternate(), n, simt_detail::by_bits<Key>(begin_bit, end_bit));
    keys.selector ^= 1;
    return cudaSuccess;
  }

  template <class Key, class NumItems, class Decomposer,
            std::enable_if_t<!std::is_integral_v<Decomposer>, int> = 0>
  static cudaError_t SortKeys(void* temp, std::size_t& temp_bytes, const Key* in, Key* out, NumItems count,
                              Decomposer decomposer, cudaStream_t = nullptr) {
    const char* const kName = "cub::DeviceRadixSort::SortKeys (decomposer)";
    const auto n = static_cast<std::uint64_t>(count);
    if (::simt::cub_model::temp_storage_query(temp, temp_bytes, n * sizeof(Key) + 256, kName)) return cudaSuccess;
    ::simt::cub_model::require_items(in, n, kName);
    ::simt::cub_model::require_items(out, n, kName);
    simt_detail::sorted_copy(in, out, n, simt_detail::by_decomposer<Key>(decomposer));
    return cudaSuccess;
  }
};

}  // namespace cub
