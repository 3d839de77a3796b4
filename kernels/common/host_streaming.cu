// SPDX-License-Identifier: Apache-2.0
// The chunk and staging-piece sizes of host_streaming.cuh, and the test hook that shrinks them.
#include "host_streaming.cuh"

#include <atomic>

#include "device/gpu.hpp"

namespace dpselect::detail {
namespace {
// 0: each path's default.
std::atomic<std::uint64_t> chunk_bytes_for_testing{0};
std::atomic<std::uint64_t> piece_bytes_for_testing{0};
}  // namespace

void set_host_streaming_bytes_for_testing(std::uint64_t chunk_bytes, std::uint64_t piece_bytes) {
  chunk_bytes_for_testing.store(chunk_bytes, std::memory_order_relaxed);
  piece_bytes_for_testing.store(piece_bytes, std::memory_order_relaxed);
}

std::uint64_t streaming_chunk_bytes(std::uint64_t path_default) {
  const std::uint64_t for_testing = chunk_bytes_for_testing.load(std::memory_order_relaxed);
  return for_testing != 0 ? for_testing : path_default;
}

std::uint64_t streaming_piece_bytes() {
  const std::uint64_t for_testing = piece_bytes_for_testing.load(std::memory_order_relaxed);
  return for_testing != 0 ? std::min<std::uint64_t>(for_testing, kStagingBufferBytes) : kStagingBufferBytes;
}

}  // namespace dpselect::detail
