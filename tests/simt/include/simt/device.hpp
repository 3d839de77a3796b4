// SPDX-License-Identifier: Apache-2.0
// The device side of CUDA C++ for the host compiler: the qualifiers, the built-in variables,
// shared memory, barriers, warp collectives, atomics and the intrinsics the kernels call, with
// device semantics (simt/scheduler.hpp runs the threads). Included through the simt build's
// <cuda_runtime.h>; test-tree only.
#pragma once

#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "simt/scheduler.hpp"

// ---- Qualifiers ------------------------------------------------------------------------------------
#define __global__
#define __device__
#define __host__
// Not __attribute__((noinline)): glibc spells __attribute__((__noinline__)) itself. Inlining
// changes nothing the simt build checks.
#define __noinline__
#define __launch_bounds__(...)
#define __restrict__ __restrict
// Each block's shared variables: blocks of a launch run one after another on the launching
// thread, so a variable of static storage per thread is the block's.
#define __shared__ static thread_local

// The toolkit's types (uint3, dim3, cudaError_t, ...) and runtime declarations, after the
// qualifiers above, which its host_defines.h then leaves as they are (it defines __forceinline__
// and __align__ for the host compiler itself).
#include <cuda_runtime_api.h>

// ---- Built-in variables ------------------------------------------------------------------------------

#define threadIdx (::simt::position().thread_index)
#define blockIdx (::simt::position().block_index)
#define blockDim (::simt::position().block_dim)
#define gridDim (::simt::position().grid_dim)
inline constexpr int warpSize = 32;

// ---- Barriers and warp collectives ------------------------------------------------------------------
inline void __syncthreads() { static_cast<void>(::simt::block_barrier(0, "__syncthreads")); }
inline int __syncthreads_or(int predicate) { return ::simt::block_barrier(predicate, "__syncthreads_or"); }
inline void __syncwarp(unsigned int mask = 0xFFFFFFFFu) {
  static_cast<void>(::simt::warp_collective(::simt::CollectiveKind::sync, mask, 0, 0, "__syncwarp"));
}
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_block() { std::atomic_thread_fence(std::memory_order_seq_cst); }

template <class T>
T __shfl_sync(unsigned int mask, T value, int source_lane, int width = 32) {
  if (width != 32) ::simt::fail("__shfl_sync with a width other than 32 is not modelled");
  return ::simt::from_bits<T>(::simt::warp_collective(::simt::CollectiveKind::shuffle, mask, ::simt::to_bits(value),
                                                      static_cast<unsigned int>(source_lane) % 32u, "__shfl_sync"));
}
template <class T>
T __shfl_xor_sync(unsigned int mask, T value, int lane_mask, int width = 32) {
  if (width != 32) ::simt::fail("__shfl_xor_sync with a width other than 32 is not modelled");
  return ::simt::from_bits<T>(::simt::warp_collective(::simt::CollectiveKind::shuffle_xor, mask,
                                                      ::simt::to_bits(value), static_cast<unsigned int>(lane_mask),
                                                      "__shfl_xor_sync"));
}
inline unsigned int __ballot_sync(unsigned int mask, int predicate) {
  return static_cast<unsigned int>(
      ::simt::warp_collective(::simt::CollectiveKind::ballot, mask, predicate != 0 ? 1 : 0, 0, "__ballot_sync"));
}
inline int __any_sync(unsigned int mask, int predicate) { return __ballot_sync(mask, predicate) != 0; }
inline int __all_sync(unsigned int mask, int predicate) { return __ballot_sync(mask, predicate) == mask; }

// ---- Atomics (device scope; the runtime runs one thread at a time per launch) -----------------------
#define SIMT_ATOMIC(name, operation)                                                                     \
  template <class T>                                                                                     \
  T name(T* address, T value) {                                                                          \
    static_assert(std::is_integral_v<T> || std::is_floating_point_v<T>);                                 \
    std::atomic_ref<T> word(*address);                                                                   \
    T old = word.load();                                                                                 \
    while (!word.compare_exchange_weak(old, operation)) {                                                \
    }                                                                                                    \
    return old;                                                                                          \
  }
SIMT_ATOMIC(atomicAdd, static_cast<T>(old + value))
SIMT_ATOMIC(atomicSub, static_cast<T>(old - value))
SIMT_ATOMIC(atomicMin, value < old ? value : old)
SIMT_ATOMIC(atomicMax, value > old ? value : old)
SIMT_ATOMIC(atomicOr, static_cast<T>(old | value))
SIMT_ATOMIC(atomicAnd, static_cast<T>(old & value))
SIMT_ATOMIC(atomicXor, static_cast<T>(old ^ value))
SIMT_ATOMIC(atomicExch, value)
#undef SIMT_ATOMIC
template <class T>
T atomicCAS(T* address, T compare, T value) {
  std::atomic_ref<T> word(*address);
  word.compare_exchange_strong(compare, value);
  return compare;
}

// ---- Intrinsics ----------------------------------------------------------------------------------------
inline int __ffs(int value) { return value == 0 ? 0 : std::countr_zero(static_cast<unsigned int>(value)) + 1; }
inline int __ffsll(long long value) {
  return value == 0 ? 0 : std::countr_zero(static_cast<unsigned long long>(value)) + 1;
}
inline int __popc(unsigned int value) { return std::popcount(value); }
inline int __popcll(unsigned long long value) { return std::popcount(value); }
inline int __clz(int value) { return std::countl_zero(static_cast<unsigned int>(value)); }
inline int __clzll(long long value) { return std::countl_zero(static_cast<unsigned long long>(value)); }
inline unsigned int __brev(unsigned int value) {
  unsigned int reversed = 0;
  for (int bit = 0; bit < 32; ++bit) reversed |= ((value >> bit) & 1u) << (31 - bit);
  return reversed;
}
inline unsigned int __umulhi(unsigned int a, unsigned int b) {
  return static_cast<unsigned int>((static_cast<unsigned long long>(a) * b) >> 32);
}
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return static_cast<unsigned long long>((static_cast<unsigned __int128>(a) * b) >> 64);
}
inline float __uint_as_float(unsigned int bits) { return std::bit_cast<float>(bits); }
inline unsigned int __float_as_uint(float value) { return std::bit_cast<unsigned int>(value); }
inline float __int_as_float(int bits) { return std::bit_cast<float>(bits); }
inline int __float_as_int(float value) { return std::bit_cast<int>(value); }
inline double __longlong_as_double(long long bits) { return std::bit_cast<double>(bits); }
inline long long __double_as_longlong(double value) { return std::bit_cast<long long>(value); }
inline double __hiloint2double(int high, int low) {
  return std::bit_cast<double>((static_cast<unsigned long long>(static_cast<unsigned int>(high)) << 32) |
                               static_cast<unsigned int>(low));
}
inline int __double2hiint(double value) {
  return static_cast<int>(static_cast<unsigned int>(std::bit_cast<unsigned long long>(value) >> 32));
}
inline int __double2loint(double value) {
  return static_cast<int>(static_cast<unsigned int>(std::bit_cast<unsigned long long>(value)));
}
// Round-to-nearest conversion (the host's default rounding mode).
inline double __ll2double_rn(long long value) { return static_cast<double>(value); }
inline double __ull2double_rn(unsigned long long value) { return static_cast<double>(value); }
// The device's math functions in the global namespace, as device code calls them.
template <class T>
  requires std::is_floating_point_v<T>
bool isnan(T value) {
  return std::isnan(value);
}
template <class T>
T __ldcs(const T* address) {
  return *address;
}
template <class T>
T __ldg(const T* address) {
  return *address;
}

// Round-to-nearest arithmetic, never contracted: the values the device's _rn intrinsics give.
// volatile keeps the compiler from fusing a product into a following add.
inline double __dmul_rn(double a, double b) {
  volatile double product = a * b;
  return product;
}
inline double __dadd_rn(double a, double b) {
  volatile double sum = a + b;
  return sum;
}
inline double __dsub_rn(double a, double b) {
  volatile double difference = a - b;
  return difference;
}
inline double __fma_rn(double a, double b, double c) { return std::fma(a, b, c); }
inline double __ddiv_rn(double a, double b) {
  volatile double quotient = a / b;
  return quotient;
}
inline double __dsqrt_rn(double a) { return std::sqrt(a); }
inline float __fmul_rn(float a, float b) {
  volatile float product = a * b;
  return product;
}
inline float __fadd_rn(float a, float b) {
  volatile float sum = a + b;
  return sum;
}
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
