// SPDX-License-Identifier: Apache-2.0
// The SIMT runtime's heart: a kernel launch runs every block of its grid, one after another in an
// order drawn from a seed, and each block's threads as cooperative fibers (Boost.Context) on the
// launching thread. A thread runs until it reaches a synchronisation point (a block barrier or a
// warp collective) or ends; then another, drawn by the same seed from those that can run: from a
// random warp each time, or (a policy each block draws) from the same warp for as long as one of
// its lanes can run. A warp collective completes as soon as its last lane arrives, so one warp
// may run ahead of the others up to the next block barrier, as on a device. Code that reads what another thread wrote without
// a barrier or collective between them sees a different result from one seed to the next. A
// barrier or collective that can
// never complete (a lane named in a mask that has ended, a warp split between a collective and a
// block barrier) is a diagnosed failure naming the kernel, block and lanes, never a hang.
//
// Test-tree only: never installed, never linked into the library users get.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>

namespace simt {

struct uint3_value {
  unsigned int x, y, z;
};

struct dim3_value {
  unsigned int x = 1, y = 1, z = 1;
};

// What one warp collective asks for.
enum class CollectiveKind : std::uint8_t { sync, shuffle, shuffle_xor, ballot, shuffle_bytes };

// The position of the running thread: set by the scheduler before it resumes a thread.
struct Position {
  uint3_value thread_index{0, 0, 0};
  uint3_value block_index{0, 0, 0};
  dim3_value block_dim{};
  dim3_value grid_dim{};
};
Position& position();

// Launches `block_body` (the kernel with its arguments bound) over `grid` x `block` threads, with
// `dynamic_shared_bytes` of dynamic shared memory per block. `kernel_name` names the kernel in
// diagnostics. Returns when every block has run.
void launch(const char* kernel_name, dim3_value grid, dim3_value block, std::size_t dynamic_shared_bytes,
            const std::function<void()>& block_body);

// Inside a kernel: the block barrier; returns the OR of `predicate` over the block's threads.
int block_barrier(int predicate, const char* what);
// Inside a kernel: a collective of the lanes named in `mask` (which must include the caller):
// returns the shuffled bits of `value` from lane `source` (shuffle), lane ^ `source`
// (shuffle_xor), or the ballot of `value != 0`.
std::uint64_t warp_collective(CollectiveKind kind, unsigned int mask, std::uint64_t value, unsigned int source,
                              const char* what);
// Inside a kernel: a shuffle of `bytes` bytes (any size) among the lanes in `mask`: `out` receives
// lane `source`'s `value`. `out` must not overlap any lane's `value`.
void warp_shuffle_bytes(unsigned int mask, const void* value, void* out, std::size_t bytes, unsigned int source,
                        const char* what);
// Inside a kernel: the block's dynamic shared memory (16-byte aligned; refilled with 0xCD before
// every block, so code that reads it before writing reads garbage, as on a device).
unsigned char* dynamic_shared_bytes();

// Reports a defect of the running device code or of a runtime call and aborts the process: the
// SIMT runtime's equivalent of a device fault, which a test cannot catch and carry on from.
[[noreturn]] void fail(const std::string& message);

// The seed of the schedules (block order, thread order): SIMT_SEED from the environment, else 1.
std::uint64_t schedule_seed();

template <class T>
std::uint64_t to_bits(const T& value) {
  static_assert(sizeof(T) <= sizeof(std::uint64_t), "a warp collective moves at most 8 bytes");
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  return bits;
}
template <class T>
T from_bits(std::uint64_t bits) {
  T value;
  std::memcpy(&value, &bits, sizeof(T));
  return value;
}

}  // namespace simt
