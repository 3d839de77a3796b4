// SPDX-License-Identifier: Apache-2.0
// The SIMT runtime itself: collectives and barriers with device semantics, a missing barrier seen
// as a different result, a lane that never arrives diagnosed instead of a hang, atomics, the
// intrinsics against values a device gives, and device memory kept apart from host memory.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "device_vector.hpp"
#include "simt/address_sanitizer.hpp"

#include <bit>
#include <cstdint>
#include <set>
#include <vector>

namespace {

using simt_test::DeviceVector;

__global__ void shuffle_kernel(unsigned int* next, double* sums, unsigned int* ballots) {
  const unsigned int lane = threadIdx.x % 32;
  next[threadIdx.x] = __shfl_sync(0xFFFFFFFFu, threadIdx.x, (lane + 1) % 32);
  double value = threadIdx.x;
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_xor_sync(0xFFFFFFFFu, value, offset);
  sums[threadIdx.x] = value;
  ballots[threadIdx.x] = __ballot_sync(0xFFFFFFFFu, lane % 3 == 0);
}

TEST(SimtRuntime, ShufflesAndBallotsGiveTheLanesValues) {
  DeviceVector<unsigned int> next(64), ballots(64);
  DeviceVector<double> sums(64);
  simt::launch_kernel(shuffle_kernel, 1, 64, 0, nullptr, next.data, sums.data, ballots.data);
  const std::vector<unsigned int> n = next.host(), b = ballots.host();
  const std::vector<double> s = sums.host();
  for (unsigned int t = 0; t < 64; ++t) {
    EXPECT_EQ(n[t], (t / 32) * 32 + (t % 32 + 1) % 32);
    EXPECT_EQ(s[t], t < 32 ? 496.0 : 1520.0);  // 0 + ... + 31, 32 + ... + 63
    EXPECT_EQ(b[t], 0x49249249u);              // lanes 0, 3, 6, ..., 30
  }
}

__global__ void half_warp_kernel(unsigned int* out) {
  const unsigned int lane = threadIdx.x % 32;
  if (lane < 16) {
    out[lane] = __shfl_sync(0x0000FFFFu, lane * 10, 15 - lane);
  }
}

TEST(SimtRuntime, OnlyTheLanesInTheMaskTakePart) {
  DeviceVector<unsigned int> out(16);
  simt::launch_kernel(half_warp_kernel, 1, 32, 0, nullptr, out.data);
  const std::vector<unsigned int> o = out.host();
  for (unsigned int lane = 0; lane < 16; ++lane) EXPECT_EQ(o[lane], (15 - lane) * 10);
}

// Each thread writes its slot and reads its neighbour's, with or without a barrier between.
template <bool Barrier>
__global__ void neighbour_kernel(unsigned int* out) {
  __shared__ unsigned int slots[128];
  slots[threadIdx.x] = threadIdx.x + 1000 * blockIdx.x;
  if constexpr (Barrier) __syncthreads();
  out[blockIdx.x * 128 + threadIdx.x] = slots[(threadIdx.x + 37) % 128];
}

TEST(SimtRuntime, AMissingBarrierShowsAsADifferentResult) {
  DeviceVector<unsigned int> out(4 * 128);
  std::vector<unsigned int> expected(4 * 128);
  for (unsigned int b = 0; b < 4; ++b) {
    for (unsigned int t = 0; t < 128; ++t) expected[b * 128 + t] = (t + 37) % 128 + 1000 * b;
  }
  for (int run = 0; run < 4; ++run) {
    simt::launch_kernel(neighbour_kernel<true>, 4, 128, 0, nullptr, out.data);
    EXPECT_EQ(out.host(), expected);
  }
  // Without the barrier a thread that runs before its neighbour reads a stale slot. The threads'
  // order is drawn afresh at every launch: over 4 launches of 512 threads, a wrong slot is certain.
  bool differed = false;
  for (int run = 0; run < 4; ++run) {
    simt::launch_kernel(neighbour_kernel<false>, 4, 128, 0, nullptr, out.data);
    differed = differed || out.host() != expected;
  }
  EXPECT_TRUE(differed);
}

__global__ void or_barrier_kernel(int* out) {
  const int any = __syncthreads_or(threadIdx.x == 77);
  const int none = __syncthreads_or(0);
  out[threadIdx.x] = any * 2 + none;
}

TEST(SimtRuntime, SyncthreadsOrIsTheOrOfTheBlock) {
  DeviceVector<int> out(256);
  simt::launch_kernel(or_barrier_kernel, 1, 256, 0, nullptr, out.data);
  for (const int v : out.host()) EXPECT_EQ(v, 2);
}

__global__ void atomics_kernel(unsigned int* counters, unsigned long long* wide, int* signed_min) {
  const unsigned long long thread = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(&counters[0], 1u);
  atomicMax(&counters[1], static_cast<unsigned int>(thread * 7 % 1001));
  atomicOr(&counters[2], 1u << (thread % 32));
  atomicMax(&wide[0], thread << 40);
  atomicMin(&signed_min[0], -static_cast<int>(thread));
  atomicAdd(&wide[1], thread);
}

TEST(SimtRuntime, AtomicsOfEveryWidthSeeEveryThread) {
  DeviceVector<unsigned int> counters(3);
  DeviceVector<unsigned long long> wide(2);
  DeviceVector<int> signed_min(1);
  simt::launch_kernel(atomics_kernel, 5, 96, 0, nullptr, counters.data, wide.data, signed_min.data);
  const std::vector<unsigned int> c = counters.host();
  const std::vector<unsigned long long> w = wide.host();
  unsigned int max7 = 0;
  for (unsigned int t = 0; t < 480; ++t) max7 = std::max(max7, t * 7 % 1001);
  EXPECT_EQ(c[0], 480u);
  EXPECT_EQ(c[1], max7);
  EXPECT_EQ(c[2], 0xFFFFFFFFu);
  EXPECT_EQ(w[0], 479ull << 40);
  EXPECT_EQ(w[1], 479ull * 480 / 2);
  EXPECT_EQ(signed_min.host()[0], -479);
}

__global__ void every_block_kernel(unsigned int* visits, unsigned int* dims) {
  if (threadIdx.x == 0) atomicAdd(&visits[blockIdx.x + gridDim.x * blockIdx.y], 1u);
  if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0) {
    dims[0] = gridDim.x;
    dims[1] = gridDim.y;
    dims[2] = blockDim.x;
  }
}

TEST(SimtRuntime, EveryBlockRunsOnce) {
  DeviceVector<unsigned int> visits(7 * 3), dims(3);
  for (int run = 0; run < 3; ++run) simt::launch_kernel(every_block_kernel, dim3(7, 3), 33, 0, nullptr, visits.data, dims.data);
  for (const unsigned int v : visits.host()) EXPECT_EQ(v, 3u);
  EXPECT_EQ(dims.host(), (std::vector<unsigned int>{7, 3, 33}));
}

__global__ void dynamic_shared_kernel(unsigned long long* out) {
  auto* shared = reinterpret_cast<unsigned long long*>(simt::dynamic_shared_bytes());
  shared[threadIdx.x] = threadIdx.x * 3ull;
  __syncthreads();
  out[threadIdx.x] = shared[blockDim.x - 1 - threadIdx.x];
}

TEST(SimtRuntime, DynamicSharedMemoryIsSizedByTheLaunch) {
  DeviceVector<unsigned long long> out(512);
  simt::launch_kernel(dynamic_shared_kernel, 1, 512, 512 * sizeof(unsigned long long), nullptr, out.data);
  const std::vector<unsigned long long> o = out.host();
  for (unsigned int t = 0; t < 512; ++t) EXPECT_EQ(o[t], (511 - t) * 3ull);
}

__global__ void intrinsics_kernel(unsigned long long* out) {
  if (threadIdx.x != 0) return;
  out[0] = static_cast<unsigned long long>(__ffs(0)) | static_cast<unsigned long long>(__ffs(8)) << 8 |
           static_cast<unsigned long long>(__ffs(static_cast<int>(0x80000000u))) << 16;
  out[1] = static_cast<unsigned long long>(__popc(0xF0F0u)) | static_cast<unsigned long long>(__clz(1)) << 8 |
           static_cast<unsigned long long>(__clz(0)) << 16 | static_cast<unsigned long long>(__clzll(1)) << 24;
  out[2] = __umulhi(0xFFFFFFFFu, 0xFFFFFFFFu);
  out[3] = __umul64hi(0xFFFFFFFFFFFFFFFFull, 3ull);
  out[4] = __float_as_uint(1.0f);
  out[5] = std::bit_cast<unsigned long long>(__uint_as_float(0x40490FDBu) == 3.14159274f ? 1.0 : 0.0);
  out[6] = static_cast<unsigned long long>(__double_as_longlong(-0.0));
  out[7] = std::bit_cast<unsigned long long>(__longlong_as_double(0x3FF0000000000000ll));
  out[8] = std::bit_cast<unsigned long long>(__dmul_rn(0.1, 3.0));
  out[9] = std::bit_cast<unsigned long long>(__fma_rn(0.1, 10.0, -1.0));
  out[10] = std::bit_cast<unsigned long long>(__dadd_rn(0.1, 0.2));
}

// The values an sm_90 device gives (CUDA C++ Programming Guide, "Intrinsic Functions"; the
// double-precision results are IEEE 754 round-to-nearest, which the _rn intrinsics are).
TEST(SimtRuntime, IntrinsicsGiveTheDevicesValues) {
  DeviceVector<unsigned long long> out(11);
  simt::launch_kernel(intrinsics_kernel, 1, 32, 0, nullptr, out.data);
  const std::vector<unsigned long long> o = out.host();
  EXPECT_EQ(o[0], 0u | 4u << 8 | 32u << 16);
  EXPECT_EQ(o[1], 8u | 31u << 8 | 32u << 16 | 63ull << 24);
  EXPECT_EQ(o[2], 0xFFFFFFFEu);
  EXPECT_EQ(o[3], 2u);
  EXPECT_EQ(o[4], 0x3F800000u);
  EXPECT_EQ(o[5], std::bit_cast<unsigned long long>(1.0));
  EXPECT_EQ(o[6], 0x8000000000000000ull);
  EXPECT_EQ(o[7], std::bit_cast<unsigned long long>(1.0));
  EXPECT_EQ(o[8], 0x3FD3333333333334ull);   // 0.30000000000000004, the rounded product
  EXPECT_EQ(o[9], 0x3C90000000000000ull);   // 2^-54: fma's one rounding keeps 0.1 * 10's excess
  EXPECT_EQ(o[10], 0x3FD3333333333334ull);  // 0.1 + 0.2
}

__global__ void missing_lane_kernel(unsigned int* out) {
  if (threadIdx.x % 32 == 5) return;  // lane 5 ends without arriving
  out[threadIdx.x] = __shfl_sync(0xFFFFFFFFu, threadIdx.x, 0);
}

__global__ void split_warp_kernel(unsigned int* out) {
  if (threadIdx.x < 16) {
    out[threadIdx.x] = __shfl_sync(0xFFFFFFFFu, threadIdx.x, 0);
  } else {
    __syncthreads();
  }
}

__global__ void lane_outside_its_mask_kernel(unsigned int* out) {
  out[threadIdx.x] = __shfl_sync(0x1u, threadIdx.x, 0);
}

TEST(SimtRuntimeDeathTest, ALaneThatNeverArrivesIsNamedNotAHang) {
  DeviceVector<unsigned int> out(64);
  EXPECT_DEATH(simt::launch_kernel<missing_lane_kernel>(2, 64, 0, nullptr, out.data),
               "kernel .*missing_lane_kernel, block \\([01], 0, 0\\): __shfl_sync in lane [0-9]+ of warp [01] names lane 5 "
               "\\(mask 0xFFFFFFFF\\), which has ended without arriving");
  EXPECT_DEATH(simt::launch_kernel<split_warp_kernel>(1, 32, 0, nullptr, out.data),
               "split_warp_kernel.*no thread can go on");
  EXPECT_DEATH(simt::launch_kernel<lane_outside_its_mask_kernel>(1, 32, 0, nullptr, out.data),
               "__shfl_sync in lane [0-9]+ of warp 0 with a mask \\(0x00000001\\) that leaves the lane out");
}

TEST(SimtRuntime, DeviceMemoryIsKeptApartFromHostMemory) {
  std::vector<double> host(4, 1.0);
  double* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, 4 * sizeof(double)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(device, host.data(), 4 * sizeof(double), cudaMemcpyHostToDevice), cudaSuccess);
  // A host pointer where device memory is expected, and a copy past an allocation's end.
  EXPECT_EQ(cudaMemcpy(host.data(), host.data(), 8, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(device, host.data(), 5 * sizeof(double), cudaMemcpyHostToDevice), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(host.data(), device + 1, 3 * sizeof(double), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaPointerAttributes attributes{};
  EXPECT_EQ(cudaPointerGetAttributes(&attributes, device + 2), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeDevice);
  EXPECT_EQ(cudaPointerGetAttributes(&attributes, host.data()), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeUnregistered);
  EXPECT_EQ(cudaFree(device), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  std::size_t free_bytes = 0, total_bytes = 0;
  EXPECT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
  void* too_large = nullptr;
  EXPECT_EQ(cudaMalloc(&too_large, total_bytes + 1), cudaErrorMemoryAllocation);
  EXPECT_EQ(cudaGetLastError(), cudaErrorMemoryAllocation);
}

#if defined(SIMT_ADDRESS_SANITIZER)
__global__ void one_past_the_end_kernel(double* values, unsigned int count) {
  if (threadIdx.x == count - 1) values[threadIdx.x + 1] = 1.0;  // one past the end
}

// The simt-asan build: device code writing past its allocation (inside cudaMalloc's 256-byte
// rounding, where a device does not fault) is reported by AddressSanitizer with the kernel's line.
TEST(SimtRuntimeDeathTest, AnOutOfBoundsDeviceWriteIsReportedWithItsKernel) {
  DeviceVector<double> values(5);
  EXPECT_DEATH(simt::launch_kernel<one_past_the_end_kernel>(dim3(1), dim3(32), 0, nullptr, values.data, 5u),
               "AddressSanitizer(.|\n)*one_past_the_end_kernel[^\n]*simt_runtime_test.cpp");
}
#endif

}  // namespace
