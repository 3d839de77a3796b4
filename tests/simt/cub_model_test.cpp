// SPDX-License-Identifier: Apache-2.0
// The CUB pieces of the simt build give CUB's results: the radix sort's key order (stable, -0.0
// equal to +0.0, bit ranges, decomposers, the DoubleBuffer form), selection and run-length
// encoding with their counts in device memory, the two-phase temp-storage protocol, and the block
// and warp reductions' aggregates in thread 0 and lane 0.
#include <cub/block/block_reduce.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_select.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cuda/std/tuple>
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <thrust/iterator/counting_iterator.h>

#include "device_vector.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace {

using simt_test::DeviceVector;

// Both phases of a CUB device call: the size query, then the call with that much temp storage.
template <class Call>
void two_phase(const Call& call) {
  std::size_t temp_bytes = 0;
  ASSERT_EQ(call(nullptr, temp_bytes), cudaSuccess);
  DeviceVector<unsigned char> temp(temp_bytes);
  ASSERT_EQ(call(temp.data, temp_bytes), cudaSuccess);
}

std::uint64_t bits_of(double x) { return std::bit_cast<std::uint64_t>(x); }

TEST(CubModel, RadixSortOfDoublesIsStableWithNegativeZeroEqualToZero) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> keys = {3.5, -0.0, -2.0, 0.0, -inf, inf, -0.0, 1e-300, -1e-300, -2.0};
  DeviceVector<double> in(keys);
  DeviceVector<double> out(keys.size());
  two_phase([&](void* temp, std::size_t& bytes) {
    return cub::DeviceRadixSort::SortKeys(temp, bytes, in.data, out.data, static_cast<int>(keys.size()));
  });
  const std::vector<double> sorted = out.host();
  const std::vector<double> expected = {-inf, -2.0, -2.0, -1e-300, -0.0, 0.0, -0.0, 1e-300, 3.5, inf};
  ASSERT_EQ(sorted.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(bits_of(sorted[i]), bits_of(expected[i])) << i;
}

TEST(CubModel, RadixSortComparesOnlyTheBitRangeAndKeepsTheInputOrderOfTies) {
  const std::vector<std::uint64_t> keys = {0x1'0003, 0x2'0001, 0x0'0003, 0x3'0002, 0x0'0001};
  DeviceVector<std::uint64_t> in(keys);
  DeviceVector<std::uint64_t> out(keys.size());
  two_phase([&](void* temp, std::size_t& bytes) {
    return cub::DeviceRadixSort::SortKeys(temp, bytes, in.data, out.data, keys.size(), 0, 16);
  });
  EXPECT_EQ(out.host(), (std::vector<std::uint64_t>{0x2'0001, 0x0'0001, 0x3'0002, 0x1'0003, 0x0'0003}));
}

TEST(CubModel, DoubleBufferSortLeavesItsResultInTheCurrentBuffer) {
  const std::vector<std::uint64_t> keys = {5, 1, 4, 1, 3};
  DeviceVector<std::uint64_t> a(keys);
  DeviceVector<std::uint64_t> b(keys.size());
  cub::DoubleBuffer<std::uint64_t> buffers(a.data, b.data);
  two_phase([&](void* temp, std::size_t& bytes) {
    return cub::DeviceRadixSort::SortKeys(temp, bytes, buffers, keys.size(), 0, 64);
  });
  ASSERT_EQ(buffers.Current(), b.data);  // the query left the selector alone; the sort moved it
  EXPECT_EQ(b.host(), (std::vector<std::uint64_t>{1, 1, 3, 4, 5}));
}

struct Pair {
  std::uint64_t first;
  std::uint64_t second;
  friend bool operator==(const Pair& a, const Pair& b) { return a.first == b.first && a.second == b.second; }
};
struct PairDecomposer {
  cuda::std::tuple<std::uint64_t&, std::uint64_t&> operator()(Pair& pair) const { return {pair.first, pair.second}; }
};

TEST(CubModel, DecomposerWordsCompareMostSignificantFirst) {
  const std::vector<Pair> pairs = {{2, 1}, {1, 9}, {2, 0}, {1, 9}, {0, 5}};
  DeviceVector<Pair> in(pairs);
  DeviceVector<Pair> out(pairs.size());
  two_phase([&](void* temp, std::size_t& bytes) {
    return cub::DeviceRadixSort::SortKeys(temp, bytes, in.data, out.data, pairs.size(), PairDecomposer{});
  });
  EXPECT_EQ(out.host(), (std::vector<Pair>{{0, 5}, {1, 9}, {1, 9}, {2, 0}, {2, 1}}));
}

TEST(CubModel, SelectAndRunLengthEncodeWriteTheirCountsToDeviceMemory) {
  const std::vector<unsigned char> flags = {1, 0, 0, 1, 1, 0};
  DeviceVector<unsigned char> device_flags(flags);
  DeviceVector<std::uint64_t> selected(flags.size());
  DeviceVector<std::uint64_t> count(1);
  two_phase([&](void* temp, std::size_t& bytes) {
    return cub::DeviceSelect::Flagged(temp, bytes, thrust::counting_iterator<std::uint64_t>(10), device_flags.data,
                                      selected.data, count.data, flags.size());
  });
  EXPECT_EQ(count.host()[0], 3u);
  std::vector<std::uint64_t> first = selected.host();
  first.resize(3);
  EXPECT_EQ(first, (std::vector<std::uint64_t>{10, 13, 14}));

  const std::vector<std::uint64_t> runs = {7, 7, 7, 2, 2, 9, 7};
  DeviceVector<std::uint64_t> in(runs);
  DeviceVector<std::uint64_t> unique(runs.size());
  DeviceVector<std::uint64_t> lengths(runs.size());
  two_phase([&](void* temp, std::size_t& bytes) {
    return cub::DeviceRunLengthEncode::Encode(temp, bytes, in.data, unique.data, lengths.data, count.data,
                                              runs.size());
  });
  ASSERT_EQ(count.host()[0], 4u);
  std::vector<std::uint64_t> run_values = unique.host();
  std::vector<std::uint64_t> run_lengths = lengths.host();
  run_values.resize(4);
  run_lengths.resize(4);
  EXPECT_EQ(run_values, (std::vector<std::uint64_t>{7, 2, 9, 7}));
  EXPECT_EQ(run_lengths, (std::vector<std::uint64_t>{3, 2, 1, 1}));
  two_phase([&](void* temp, std::size_t& bytes) {
    return cub::DeviceSelect::Unique(temp, bytes, in.data, unique.data, count.data, runs.size());
  });
  EXPECT_EQ(count.host()[0], 4u);
}

TEST(CubModelDeathTest, HostBuffersAndShortTempStorageAreDeviceFaults) {
  std::vector<std::uint64_t> host_keys = {3, 1, 2};
  DeviceVector<std::uint64_t> out(host_keys.size());
  EXPECT_DEATH(two_phase([&](void* temp, std::size_t& bytes) {
                 return cub::DeviceRadixSort::SortKeys(temp, bytes, host_keys.data(), out.data, host_keys.size());
               }),
               "not inside one device allocation");
  DeviceVector<std::uint64_t> in(host_keys);
  EXPECT_DEATH(
      {
        std::size_t bytes = 0;
        cub::DeviceRadixSort::SortKeys(nullptr, bytes, in.data, out.data, host_keys.size());
        DeviceVector<unsigned char> temp(bytes / 2);
        bytes /= 2;
        cub::DeviceRadixSort::SortKeys(temp.data, bytes, in.data, out.data, host_keys.size());
      },
      "temp storage of");
}

constexpr int kReduceThreads = 128;

__global__ void block_and_warp_sums_kernel(const int* values, int* block_sums, int* warp_sums) {
  using BlockReduce = cub::BlockReduce<int, kReduceThreads>;
  using WarpReduce = cub::WarpReduce<int>;
  __shared__ typename BlockReduce::TempStorage block_storage;
  __shared__ typename WarpReduce::TempStorage warp_storage[kReduceThreads / 32];
  const int value = values[blockIdx.x * kReduceThreads + threadIdx.x];
  const int block_sum = BlockReduce(block_storage).Sum(value);
  if (threadIdx.x == 0) block_sums[blockIdx.x] = block_sum;
  const int warp_sum = WarpReduce(warp_storage[threadIdx.x / 32]).Sum(value);
  if (threadIdx.x % 32 == 0) warp_sums[blockIdx.x * (kReduceThreads / 32) + threadIdx.x / 32] = warp_sum;
}

TEST(CubModel, BlockAndWarpReductionsGiveTheirAggregatesToThreadZeroAndLaneZero) {
  constexpr int kBlocks = 3;
  std::vector<int> values(kBlocks * kReduceThreads);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int>(i * i % 97) - 40;
  DeviceVector<int> device_values(values);
  DeviceVector<int> block_sums(kBlocks);
  DeviceVector<int> warp_sums(kBlocks * kReduceThreads / 32);
  simt::launch_kernel<block_and_warp_sums_kernel>(dim3(kBlocks), dim3(kReduceThreads), 0, nullptr, device_values.data,
                                                  block_sums.data, warp_sums.data);
  for (int b = 0; b < kBlocks; ++b) {
    int block_sum = 0;
    for (int t = 0; t < kReduceThreads; ++t) block_sum += values[b * kReduceThreads + t];
    EXPECT_EQ(block_sums.host()[b], block_sum) << "block " << b;
    for (int w = 0; w < kReduceThreads / 32; ++w) {
      int warp_sum = 0;
      for (int lane = 0; lane < 32; ++lane) warp_sum += values[b * kReduceThreads + w * 32 + lane];
      EXPECT_EQ(warp_sums.host()[b * (kReduceThreads / 32) + w], warp_sum) << "block " << b << " warp " << w;
    }
  }
}

__global__ void reduce_in_a_block_of_another_size_kernel(int* out) {
  using BlockReduce = cub::BlockReduce<int, kReduceThreads>;
  __shared__ typename BlockReduce::TempStorage storage;
  const int sum = BlockReduce(storage).Sum(1);
  if (threadIdx.x == 0) *out = sum;
}

TEST(CubModelDeathTest, ABlockReduceRunByABlockOfAnotherSizeIsAFault) {
  DeviceVector<int> out(1);
  EXPECT_DEATH(simt::launch_kernel<reduce_in_a_block_of_another_size_kernel>(dim3(1), dim3(2 * kReduceThreads), 0,
                                                                              nullptr, out.data),
               "declared for 128 threads, run by a block of 256");
}

}  // namespace
