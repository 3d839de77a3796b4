// SPDX-License-Identifier: Apache-2.0
// ChaCha20 on the GPU gives the CPU's bits for the same (key, stream, position) (GPU machines
// only). Compiled by nvcc (as a .cu copy) in CUDA builds, so the device path of chacha20.hpp is
// compiled in every CUDA build; in CPU-only builds the test is registered and reports itself
// skipped.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "dpselect/chacha20.hpp"
#include "dpselect/select.hpp"

#include "support/device_code.hpp"

#if DPSELECT_TEST_DEVICE_CODE
#include <cuda_runtime.h>

#include "dpselect/detail/kernel_launch.cuh"
#endif

namespace {

#if !DPSELECT_TEST_DEVICE_CODE
TEST(ChaCha20Gpu, DeviceBlocksEqualHostBlocks) { GTEST_SKIP() << "CPU-only build: no CUDA backend"; }
#else

// Positions around the boundaries of the mapping (a block's 4 slices, the 32-bit block counter).
__global__ void chacha_blocks_kernel(dpselect::ChaChaKey key, const std::uint64_t* streams,
                                     const std::uint64_t* positions, unsigned count, dpselect::RandomBlock* out) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) out[i] = dpselect::chacha20_random_block(key, streams[i], positions[i]);
}

TEST(ChaCha20Gpu, DeviceBlocksEqualHostBlocks) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  const dpselect::ChaChaKey key = dpselect::ChaChaKey::from_seed(2026);
  std::vector<std::uint64_t> streams;
  std::vector<std::uint64_t> positions;
  for (const std::uint64_t stream : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{1} << 32, ~std::uint64_t{0}}) {
    for (std::uint64_t p = 0; p < 64; ++p) {
      for (const std::uint64_t base : {std::uint64_t{0}, (std::uint64_t{1} << 34) - 32, ~std::uint64_t{0} - 63}) {
        streams.push_back(stream);
        positions.push_back(base + p);
      }
    }
  }
  const unsigned count = static_cast<unsigned>(positions.size());
  std::uint64_t* device_streams = nullptr;
  std::uint64_t* device_positions = nullptr;
  dpselect::RandomBlock* device_out = nullptr;
  ASSERT_EQ(cudaMalloc(&device_streams, count * sizeof(std::uint64_t)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&device_positions, count * sizeof(std::uint64_t)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&device_out, count * sizeof(dpselect::RandomBlock)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(device_streams, streams.data(), count * sizeof(std::uint64_t), cudaMemcpyHostToDevice),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpy(device_positions, positions.data(), count * sizeof(std::uint64_t), cudaMemcpyHostToDevice),
            cudaSuccess);
  dpselect::detail::launch_kernel<chacha_blocks_kernel>((count + 127) / 128, 128, 0, nullptr, key, device_streams,
                                                        device_positions, count, device_out);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  std::vector<dpselect::RandomBlock> from_device(count);
  ASSERT_EQ(cudaMemcpy(from_device.data(), device_out, count * sizeof(dpselect::RandomBlock), cudaMemcpyDeviceToHost),
            cudaSuccess);
  cudaFree(device_streams);
  cudaFree(device_positions);
  cudaFree(device_out);
  int mismatches = 0;
  for (unsigned i = 0; i < count; ++i) {
    const dpselect::RandomBlock expected = dpselect::chacha20_random_block(key, streams[i], positions[i]);
    for (int w = 0; w < 4; ++w) mismatches += expected.word[w] != from_device[i].word[w];
  }
  EXPECT_EQ(mismatches, 0) << "of " << 4 * count << " words";
}

#endif

}  // namespace
