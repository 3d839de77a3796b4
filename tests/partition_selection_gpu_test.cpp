// SPDX-License-Identifier: Apache-2.0
// Partition selection on the GPU gives the CPU's keys (GPU machines only): pairs in host memory
// with Backend::Gpu against Backend::Cpu, and pairs in device memory against the same pairs in
// host memory, for every strategy, both generators, users over and under the bound, CUB's
// single-tile and multi-pass sorts, a key whose count lies beyond the GPU's table of keep cuts
// (decided on the host), and pairs cut into chunks smaller than the input (host and device memory,
// a user and a key each over a chunk on their own). Nothing here is statistical: every check is an
// equality. Compiled by nvcc (as a .cu copy) in CUDA builds; in CPU-only builds the tests are
// registered and skip.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "dpselect/context.hpp"
#include "dpselect/errors.hpp"
#include "dpselect/partition_selection.hpp"
#include "dpselect/select.hpp"
#include "partition_selection/partition_passes.hpp"

#include "support/device_code.hpp"

#if DPSELECT_TEST_DEVICE_CODE
#include <cuda_runtime.h>
#endif

namespace {

#if !DPSELECT_TEST_DEVICE_CODE
TEST(PartitionSelectionGpu, HostPairsGiveTheCpuKeys) { GTEST_SKIP() << "CPU-only build: no CUDA backend"; }
TEST(PartitionSelectionGpu, DevicePairsGiveTheHostKeys) { GTEST_SKIP() << "CPU-only build: no CUDA backend"; }
TEST(PartitionSelectionGpu, CountsBeyondTheCutTableAreDecidedAlike) { GTEST_SKIP() << "CPU-only build: no CUDA backend"; }
TEST(PartitionSelectionGpu, BadDeviceInputIsRefusedBeforeTheCharge) { GTEST_SKIP() << "CPU-only build: no CUDA backend"; }
TEST(PartitionSelectionGpu, ChunkedPairsGiveTheCpuKeys) { GTEST_SKIP() << "CPU-only build: no CUDA backend"; }
TEST(PartitionSelectionGpu, CountsBeyondTheCutTableAreDecidedAlikeInChunks) {
  GTEST_SKIP() << "CPU-only build: no CUDA backend";
}
#else

using dpselect::Backend;
using dpselect::PartitionSelection;
using dpselect::PartitionSelectionParams;
using dpselect::PartitionStrategy;

struct Pairs {
  std::vector<std::uint64_t> users;
  std::vector<std::uint64_t> keys;
};

// `users` users holding 1 to 6 keys each among `keys_range` keys (repeats included).
Pairs pairs_of(std::uint64_t users, std::uint64_t keys_range, std::uint64_t seed) {
  Pairs pairs;
  std::mt19937_64 draw(seed);
  for (std::uint64_t user = 0; user < users; ++user) {
    const std::uint64_t held = 1 + draw() % 6;
    for (std::uint64_t j = 0; j < held; ++j) {
      pairs.users.push_back(user * 0x9e3779b97f4a7c15ull);
      pairs.keys.push_back(draw() % keys_range);
    }
  }
  return pairs;
}

class DeviceCopy {
 public:
  explicit DeviceCopy(const std::vector<std::uint64_t>& host) : size_(host.size()) {
    if (cudaMalloc(&data_, size_ * sizeof(std::uint64_t)) != cudaSuccess ||
        cudaMemcpy(data_, host.data(), size_ * sizeof(std::uint64_t), cudaMemcpyHostToDevice) != cudaSuccess) {
      throw std::runtime_error("test: cannot copy the pairs to the device");
    }
  }
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
  ~DeviceCopy() { cudaFree(data_); }
  dpselect::DeviceSpan<const std::uint64_t> span() const { return {data_, size_}; }

 private:
  std::uint64_t* data_ = nullptr;
  std::size_t size_ = 0;
};

void expect_same(const PartitionSelection& gpu, const PartitionSelection& cpu) {
  EXPECT_EQ(gpu.keys, cpu.keys);
  EXPECT_EQ(gpu.report.keys_considered, cpu.report.keys_considered);
  EXPECT_EQ(gpu.report.stream, cpu.report.stream);
}

// Sets the pairs of partition selection's GPU chunks for the life of the object.
class PartitionChunkPairs {
 public:
  explicit PartitionChunkPairs(std::uint64_t pairs) { dpselect::detail::set_partition_chunk_pairs_for_testing(pairs); }
  PartitionChunkPairs(const PartitionChunkPairs&) = delete;
  PartitionChunkPairs& operator=(const PartitionChunkPairs&) = delete;
  ~PartitionChunkPairs() { dpselect::detail::set_partition_chunk_pairs_for_testing(0); }
};

TEST(PartitionSelectionGpu, HostPairsGiveTheCpuKeys) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  for (const std::uint64_t users : {std::uint64_t{3}, std::uint64_t{2000}, std::uint64_t{400000}}) {
    const Pairs pairs = pairs_of(users, users / 2 + 5, users);
    for (const auto generator : {dpselect::Generator::chacha20, dpselect::Generator::philox}) {
      for (const auto strategy : {PartitionStrategy::truncated_geometric, PartitionStrategy::laplace_threshold,
                                  PartitionStrategy::gaussian_threshold}) {
        for (const std::uint64_t max_partitions : {1, 4}) {
          PartitionSelectionParams params{1.0, 1e-2, max_partitions, strategy, Backend::Cpu};
          auto cpu_context = dpselect::Context::with_fixed_seed(9, generator);
          const PartitionSelection cpu = dpselect::select_partitions(cpu_context, pairs.users, pairs.keys, params);
          params.backend = Backend::Gpu;
          auto gpu_context = dpselect::Context::with_fixed_seed(9, generator);
          expect_same(dpselect::select_partitions(gpu_context, pairs.users, pairs.keys, params), cpu);
        }
      }
    }
  }
}

TEST(PartitionSelectionGpu, DevicePairsGiveTheHostKeys) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  const Pairs pairs = pairs_of(300000, 40000, 3);
  const DeviceCopy users(pairs.users), keys(pairs.keys);
  const PartitionSelectionParams params{0.5, 1e-4, 2, PartitionStrategy::laplace_threshold, Backend::Cpu};
  auto cpu_context = dpselect::Context::with_fixed_seed(4);
  const PartitionSelection cpu = dpselect::select_partitions(cpu_context, pairs.users, pairs.keys, params);
  ASSERT_GT(cpu.keys.size(), 10u) << "a test that can fail: many keys released";
  PartitionSelectionParams on_device = params;
  on_device.backend = Backend::Auto;
  auto gpu_context = dpselect::Context::with_fixed_seed(4);
  expect_same(dpselect::select_partitions(gpu_context, users.span(), keys.span(), on_device), cpu);
}

// Key 7 held by 2^22 + 5 users: at epsilon 1e-6 (Laplace: b = 10^6) p(n) < 1 far beyond the
// GPU's table of 2^22 counts, so the key is decided on the host.
Pairs key_beyond_the_cut_table() {
  Pairs pairs;
  for (std::uint64_t user = 0; user < (std::uint64_t{1} << 22) + 5; ++user) {
    pairs.users.push_back(user);
    pairs.keys.push_back(7);
  }
  return pairs;
}

// Laplace thresholding at epsilon 1e-6 on the GPU gives the CPU's keys, for seeds 0 .. seeds - 1.
void expect_the_cpu_keys_at_tiny_epsilon(const Pairs& pairs, std::uint64_t seeds) {
  const PartitionSelectionParams params{1e-6, 0.4, 1, PartitionStrategy::laplace_threshold, Backend::Cpu};
  for (std::uint64_t seed = 0; seed < seeds; ++seed) {
    auto cpu_context = dpselect::Context::with_fixed_seed(seed);
    const PartitionSelection cpu = dpselect::select_partitions(cpu_context, pairs.users, pairs.keys, params);
    PartitionSelectionParams gpu_params = params;
    gpu_params.backend = Backend::Gpu;
    auto gpu_context = dpselect::Context::with_fixed_seed(seed);
    expect_same(dpselect::select_partitions(gpu_context, pairs.users, pairs.keys, gpu_params), cpu);
  }
}

TEST(PartitionSelectionGpu, CountsBeyondTheCutTableAreDecidedAlike) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  // Key 7 decided on the host; other keys have a few users each.
  Pairs pairs = key_beyond_the_cut_table();
  for (std::uint64_t user = 0; user < 1000; ++user) {
    pairs.users.push_back(user + (std::uint64_t{1} << 40));
    pairs.keys.push_back(100 + user % 50);
  }
  expect_the_cpu_keys_at_tiny_epsilon(pairs, 4);
}

TEST(PartitionSelectionGpu, CountsBeyondTheCutTableAreDecidedAlikeInChunks) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  // As above, with 2 x 10^6 pairs of their own keys besides: chunks of 5 x 10^6 pairs, so the
  // pairs and the kept keys each go in two or more chunks, and the bucket of key 7 (2^22 + 5
  // users) fits one, where the device defers it to the host.
  Pairs pairs = key_beyond_the_cut_table();
  for (std::uint64_t j = 0; j < 2000000; ++j) {
    pairs.users.push_back(j + (std::uint64_t{1} << 40));
    pairs.keys.push_back(1000 + j);
  }
  const PartitionChunkPairs chunks(5000000);
  expect_the_cpu_keys_at_tiny_epsilon(pairs, 2);
}

TEST(PartitionSelectionGpu, BadDeviceInputIsRefusedBeforeTheCharge) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  const Pairs pairs = pairs_of(100, 50, 1);
  const DeviceCopy users(pairs.users), keys(pairs.keys);
  auto context = dpselect::Context::with_fixed_seed(1);
  PartitionSelectionParams cpu_backend{1.0, 1e-6, 1, PartitionStrategy::truncated_geometric, Backend::Cpu};
  EXPECT_THROW((void)dpselect::select_partitions(context, users.span(), keys.span(), cpu_backend),
               dpselect::InvalidArgument);
  PartitionSelectionParams good = cpu_backend;
  good.backend = Backend::Gpu;
  int device = 0, pageable = 0;
  const bool reads_pageable = cudaGetDevice(&device) == cudaSuccess &&
                              cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, device) == cudaSuccess &&
                              pageable != 0;
  if (!reads_pageable) {  // a host pointer passed as device memory, refused before any kernel
    const dpselect::DeviceSpan<const std::uint64_t> host_memory{pairs.users.data(), pairs.users.size()};
    EXPECT_THROW((void)dpselect::select_partitions(context, host_memory, keys.span(), good), dpselect::InvalidArgument);
  }
  const dpselect::DeviceSpan<const std::uint64_t> shorter{keys.span().data, keys.span().size - 1};
  EXPECT_THROW((void)dpselect::select_partitions(context, users.span(), shorter, good), dpselect::InvalidArgument);
  const PartitionSelection first = dpselect::select_partitions(context, users.span(), keys.span(), good);
  EXPECT_EQ(first.report.stream, 0u) << "no stream drawn by the refused calls";
}

TEST(PartitionSelectionGpu, ChunkedPairsGiveTheCpuKeys) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  Pairs pairs = pairs_of(200000, 30000, 8);
  // A user holding 50000 keys and a key held by 60000 more users: each over the smaller chunks
  // alone, so those go to the CPU passes.
  for (std::uint64_t j = 0; j < 50000; ++j) {
    pairs.users.push_back(1);
    pairs.keys.push_back(j * 3);
  }
  for (std::uint64_t j = 0; j < 60000; ++j) {
    pairs.users.push_back((std::uint64_t{1} << 50) + j);
    pairs.keys.push_back(12345);
  }
  const DeviceCopy users(pairs.users), keys(pairs.keys);
  for (const auto strategy : {PartitionStrategy::truncated_geometric, PartitionStrategy::gaussian_threshold}) {
    PartitionSelectionParams params{1.0, 1e-4, 3, strategy, Backend::Cpu};
    auto cpu_context = dpselect::Context::with_fixed_seed(21);
    const PartitionSelection cpu = dpselect::select_partitions(cpu_context, pairs.users, pairs.keys, params);
    ASSERT_GT(cpu.keys.size(), 100u) << "a test that can fail: many keys released";
    params.backend = Backend::Gpu;
    // Many chunks, the heavy user's and key's buckets over them; a few chunks; and one chunk.
    for (const std::uint64_t chunk_pairs : {std::uint64_t{20000}, std::uint64_t{400000}, std::uint64_t{0}}) {
      const PartitionChunkPairs chunks(chunk_pairs);
      auto host_context = dpselect::Context::with_fixed_seed(21);
      expect_same(dpselect::select_partitions(host_context, pairs.users, pairs.keys, params), cpu);
      auto device_context = dpselect::Context::with_fixed_seed(21);
      expect_same(dpselect::select_partitions(device_context, users.span(), keys.span(), params), cpu);
    }
  }
}

#endif

}  // namespace
