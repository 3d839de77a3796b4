// SPDX-License-Identifier: Apache-2.0
// Host arrays streamed through the device in many chunks (kernels/common/host_streaming.cuh) give the
// bits of the same data in device memory and on the CPU: selection, top-k, rows, repeated
// releases and noise vectors, with chunk and staging sizes shrunk by the test hook so that a
// small array makes many chunks, several staging pieces per chunk and a short last chunk. Also
// the streaming helper itself: every element arrives once at its offset, rows stay whole, a
// round trip comes back, and a pass that throws leaves nothing queued or sticky.
// Compiled by nvcc (as a .cu copy) in CUDA builds; in CPU-only builds the tests are registered
// and skip.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <thread>
#include <vector>

#include "dpselect/dpselect.hpp"

#include "support/device_code.hpp"

#if DPSELECT_TEST_DEVICE_CODE
#include <cuda_runtime.h>

#include "dpselect/detail/kernel_launch.cuh"
#include "device/gpu.hpp"
#include "common/host_streaming.cuh"
#endif

namespace {

#if !DPSELECT_TEST_DEVICE_CODE
TEST(HostStreamingGpu, SelectionInManyChunksEqualsDeviceAndCpu) { GTEST_SKIP() << "CPU-only build: no CUDA backend"; }
TEST(HostStreamingGpu, InvalidUtilityInALaterChunkKeepsItsGlobalIndex) {
  GTEST_SKIP() << "CPU-only build: no CUDA backend";
}
TEST(HostStreamingGpu, TopKInManyChunksEqualsDevice) { GTEST_SKIP() << "CPU-only build: no CUDA backend"; }
TEST(HostStreamingGpu, RowsInManyBlocksEqualDevice) { GTEST_SKIP() << "CPU-only build: no CUDA backend"; }
TEST(HostStreamingGpu, RepeatedReleasesOverALongRowEqualCpu) { GTEST_SKIP() << "CPU-only build: no CUDA backend"; }
TEST(HostStreamingGpu, NoiseVectorInManyChunksEqualsCpu) { GTEST_SKIP() << "CPU-only build: no CUDA backend"; }
TEST(HostStreamingGpu, ThreadsStreamingAtOnceGetTheirOwnAnswers) { GTEST_SKIP() << "CPU-only build: no CUDA backend"; }
TEST(HostStreamingGpu, EveryElementArrivesOnceAtItsOffset) { GTEST_SKIP() << "CPU-only build: no CUDA backend"; }
TEST(HostStreamingGpu, RoundTripReturnsEveryChunk) { GTEST_SKIP() << "CPU-only build: no CUDA backend"; }
TEST(HostStreamingGpu, APassThatThrowsLeavesNothingQueued) { GTEST_SKIP() << "CPU-only build: no CUDA backend"; }
#else

using dpselect::Backend;
using dpselect::Generator;
using dpselect::ShardResult;

// Chunks of 40000 bytes (10000 floats, 5000 doubles) through staging pieces of 12000 bytes: a
// chunk takes 3 full pieces and a partial one, and neither size divides the other.
constexpr std::uint64_t kTestChunkBytes = 40000;
constexpr std::uint64_t kTestPieceBytes = 12000;

// Sets the streaming sizes for one test and restores the defaults after it.
class StreamingBytes {
 public:
  StreamingBytes(std::uint64_t chunk_bytes, std::uint64_t piece_bytes) {
    dpselect::detail::set_host_streaming_bytes_for_testing(chunk_bytes, piece_bytes);
  }
  StreamingBytes(const StreamingBytes&) = delete;
  StreamingBytes& operator=(const StreamingBytes&) = delete;
  ~StreamingBytes() { dpselect::detail::set_host_streaming_bytes_for_testing(0, 0); }
};

// Utilities in [-4, 4) from an integer hash of the index: exact in float and double.
template <class T>
std::vector<T> hashed_utilities(std::uint64_t n) {
  std::vector<T> values(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    std::uint64_t z = (i + 0x9e3779b97f4a7c15ULL) * 0xbf58476d1ce4e5b9ULL;
    z ^= z >> 31;
    values[i] = static_cast<T>(static_cast<double>(z >> 40) * 0x1p-21 - 4.0);
  }
  return values;
}

// A copy of host values in device memory for one test.
template <class T>
class DeviceCopy {
 public:
  explicit DeviceCopy(const std::vector<T>& host) : size_(host.size()) {
    if (cudaMalloc(&data_, std::max<std::size_t>(1, size_) * sizeof(T)) != cudaSuccess ||
        cudaMemcpy(data_, host.data(), size_ * sizeof(T), cudaMemcpyHostToDevice) != cudaSuccess) {
      throw std::runtime_error("test: cannot copy values to the device");
    }
  }
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
  ~DeviceCopy() { cudaFree(data_); }
  dpselect::DeviceSpan<const T> span() const { return {data_, size_}; }
  T* data() const { return data_; }

 private:
  T* data_ = nullptr;
  std::size_t size_;
};

dpselect::SelectionParams selection_params(dpselect::Mechanism mechanism, Backend backend) {
  dpselect::SelectionParams params;
  params.mechanism = mechanism;
  params.epsilon = 0.8;
  params.sensitivity = 1.0;
  params.backend = backend;
  return params;
}

void expect_same_bits(const ShardResult& actual, const ShardResult& expected, const char* what) {
  EXPECT_EQ(actual.best_index, expected.best_index) << what;
  EXPECT_EQ(std::bit_cast<std::uint64_t>(actual.best_score), std::bit_cast<std::uint64_t>(expected.best_score)) << what;
  EXPECT_EQ(std::bit_cast<std::uint64_t>(actual.max_abs_shifted_utility),
            std::bit_cast<std::uint64_t>(expected.max_abs_shifted_utility))
      << what;
  EXPECT_EQ(actual.candidates, expected.candidates) << what;
  EXPECT_EQ(actual.first_invalid_index, expected.first_invalid_index) << what;
}

// One shard over utilities[0, n) at global indices [first_index, first_index + n): through host
// memory on `backend`, or from device memory.
template <class T>
ShardResult shard_from_host(const std::vector<T>& utilities, std::uint64_t first_index, dpselect::Mechanism mechanism,
                            Generator generator, Backend backend) {
  dpselect::Context context = dpselect::Context::with_fixed_seed(91, generator);
  dpselect::Release release = context.begin_release(selection_params(mechanism, backend));
  return release.evaluate(std::span<const T>(utilities), first_index);
}
template <class T>
ShardResult shard_from_device(const DeviceCopy<T>& utilities, std::uint64_t first_index, dpselect::Mechanism mechanism,
                              Generator generator) {
  dpselect::Context context = dpselect::Context::with_fixed_seed(91, generator);
  dpselect::Release release = context.begin_release(selection_params(mechanism, Backend::Gpu));
  return release.evaluate(utilities.span(), first_index, nullptr);
}

template <class T>
void expect_selection_in_chunks_matches(std::uint64_t n) {
  const std::vector<T> utilities = hashed_utilities<T>(n);
  const DeviceCopy<T> on_device(utilities);
  constexpr std::uint64_t kFirstIndex = 7777;
  for (const Generator generator : {Generator::chacha20, Generator::philox}) {
    for (const dpselect::Mechanism mechanism : {dpselect::Mechanism::exponential, dpselect::Mechanism::permute_and_flip}) {
      const ShardResult reference = shard_from_device(on_device, kFirstIndex, mechanism, generator);
      const ShardResult streamed = shard_from_host(utilities, kFirstIndex, mechanism, generator, Backend::Gpu);
      const ShardResult on_cpu = shard_from_host(utilities, kFirstIndex, mechanism, generator, Backend::Cpu);
      SCOPED_TRACE(::testing::Message() << n << " x " << sizeof(T) << "-byte, " << dpselect::to_string(generator)
                                        << ", " << dpselect::to_string(mechanism));
      expect_same_bits(streamed, reference, "host chunks against device memory");
      expect_same_bits(streamed, on_cpu, "host chunks against the CPU");
      EXPECT_EQ(streamed.candidates, n);
    }
  }
}

TEST(HostStreamingGpu, SelectionInManyChunksEqualsDeviceAndCpu) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  const StreamingBytes sizes(kTestChunkBytes, kTestPieceBytes);
  // One element; a chunk less one, exactly one (no pipeline), one and one more element (a
  // pipeline with a one-element tail); many chunks with a short last one.
  for (const std::uint64_t n : {1u, 9999u, 10000u, 10001u, 100003u}) expect_selection_in_chunks_matches<float>(n);
  for (const std::uint64_t n : {4999u, 5000u, 5001u, 100003u}) expect_selection_in_chunks_matches<double>(n);
}

TEST(HostStreamingGpu, InvalidUtilityInALaterChunkKeepsItsGlobalIndex) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  const StreamingBytes sizes(kTestChunkBytes, kTestPieceBytes);
  std::vector<float> utilities = hashed_utilities<float>(100003);
  utilities[61234] = std::numeric_limits<float>::quiet_NaN();  // chunk 6
  utilities[90001] = std::numeric_limits<float>::infinity();   // chunk 9
  const ShardResult streamed =
      shard_from_host(utilities, 500, dpselect::Mechanism::exponential, Generator::chacha20, Backend::Gpu);
  EXPECT_EQ(streamed.first_invalid_index, 500u + 61234u);
  const DeviceCopy<float> on_device(utilities);
  expect_same_bits(streamed, shard_from_device(on_device, 500, dpselect::Mechanism::exponential, Generator::chacha20),
                   "host chunks against device memory");
}

template <class T>
void expect_top_k_in_chunks_matches(std::uint64_t n, std::uint64_t k) {
  const std::vector<T> utilities = hashed_utilities<T>(n);
  const DeviceCopy<T> on_device(utilities);
  dpselect::TopKParams params;
  params.selection = selection_params(dpselect::Mechanism::exponential, Backend::Gpu);
  params.k = k;
  dpselect::Context streamed_context = dpselect::Context::with_fixed_seed(17);
  const dpselect::TopKSelection streamed = dpselect::select_top_k(streamed_context, std::span<const T>(utilities), params);
  dpselect::Context device_context = dpselect::Context::with_fixed_seed(17);
  const dpselect::TopKSelection reference = dpselect::select_top_k(device_context, on_device.span(), params, nullptr);
  EXPECT_EQ(streamed.indices, reference.indices) << n << " x " << sizeof(T) << " bytes, k " << k;
  EXPECT_EQ(streamed.report.per_pick.executed_on, dpselect::ExecutedOn::gpu);
}

TEST(HostStreamingGpu, TopKInManyChunksEqualsDevice) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  const StreamingBytes sizes(kTestChunkBytes, kTestPieceBytes);
  for (const std::uint64_t k : {1u, 100u, 1024u}) {
    expect_top_k_in_chunks_matches<float>(100003, k);
    expect_top_k_in_chunks_matches<double>(100003, k);
  }
  expect_top_k_in_chunks_matches<float>(10001, 50);
}

template <class T>
void expect_rows_in_blocks_match(std::uint64_t rows, std::uint64_t cols) {
  const std::vector<T> utilities = hashed_utilities<T>(rows * cols);
  const DeviceCopy<T> on_device(utilities);
  const dpselect::SelectionParams params = selection_params(dpselect::Mechanism::exponential, Backend::Gpu);
  dpselect::Context streamed_context = dpselect::Context::with_fixed_seed(33);
  const dpselect::RowsSelection streamed =
      dpselect::select_rows(streamed_context, dpselect::HostMatrix<const T>{utilities.data(), rows, cols}, params);
  dpselect::Context device_context = dpselect::Context::with_fixed_seed(33);
  const dpselect::RowsSelection reference = dpselect::select_rows(
      device_context, dpselect::DeviceMatrix<const T>{on_device.data(), rows, cols}, params, nullptr);
  ASSERT_EQ(streamed.selections.size(), rows);
  int mismatches = 0;
  for (std::uint64_t r = 0; r < rows; ++r) {
    mismatches += streamed.selections[r].index != reference.selections[r].index;
    mismatches += streamed.selections[r].report.stream != reference.selections[r].report.stream;
  }
  EXPECT_EQ(mismatches, 0) << rows << " x " << cols << " of " << sizeof(T) << "-byte values";
}

TEST(HostStreamingGpu, RowsInManyBlocksEqualDevice) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  const StreamingBytes sizes(kTestChunkBytes, kTestPieceBytes);
  expect_rows_in_blocks_match<float>(700, 300);   // blocks of 33 rows, the last of 7
  expect_rows_in_blocks_match<double>(530, 301);  // blocks of 16 rows, the last of 2
  expect_rows_in_blocks_match<float>(600, 9000);  // one row per block, longer than a chunk
  expect_rows_in_blocks_match<float>(3, 5);       // one block
}

TEST(HostStreamingGpu, RepeatedReleasesOverALongRowEqualCpu) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  const StreamingBytes sizes(kTestChunkBytes, kTestPieceBytes);
  // One row of 20000 floats (80000 bytes, two chunks' worth) goes up once, in seven pieces.
  const std::vector<float> utilities = hashed_utilities<float>(20000);
  dpselect::SelectionParams params = selection_params(dpselect::Mechanism::exponential, Backend::Gpu);
  dpselect::Context gpu_context = dpselect::Context::with_fixed_seed(44);
  const dpselect::RowsSelection on_gpu = dpselect::select_repeated(gpu_context, std::span<const float>(utilities), params, 600);
  params.backend = Backend::Cpu;
  dpselect::Context cpu_context = dpselect::Context::with_fixed_seed(44);
  const dpselect::RowsSelection on_cpu = dpselect::select_repeated(cpu_context, std::span<const float>(utilities), params, 600);
  ASSERT_EQ(on_gpu.selections.size(), on_cpu.selections.size());
  int mismatches = 0;
  for (std::size_t r = 0; r < on_gpu.selections.size(); ++r) {
    mismatches += on_gpu.selections[r].index != on_cpu.selections[r].index;
  }
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(on_gpu.selections.front().report.executed_on, dpselect::ExecutedOn::gpu);
}

TEST(HostStreamingGpu, NoiseVectorInManyChunksEqualsCpu) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  const StreamingBytes sizes(kTestChunkBytes, kTestPieceBytes);
  // A round trip's chunk is one piece: 1500 doubles, so 30011 values make 21 chunks.
  const std::vector<double> original = hashed_utilities<double>(30011);
  for (const Generator generator : {Generator::chacha20, Generator::philox}) {
    for (const dpselect::NoiseDistribution distribution :
         {dpselect::NoiseDistribution::laplace, dpselect::NoiseDistribution::gaussian}) {
      // Laplace noise is pure ε-DP and refuses a δ (validation); the Gaussian needs one.
      const double delta = distribution == dpselect::NoiseDistribution::gaussian ? 1e-6 : 0.0;
      dpselect::NoiseVectorParams params{.distribution = distribution, .epsilon = 0.9, .delta = delta};
      std::vector<double> on_cpu = original;
      params.backend = Backend::Cpu;
      dpselect::Context cpu_context = dpselect::Context::with_fixed_seed(55, generator);
      static_cast<void>(dpselect::add_noise(cpu_context, std::span<double>(on_cpu), params));
      std::vector<double> through_gpu = original;
      params.backend = Backend::Gpu;
      dpselect::Context gpu_context = dpselect::Context::with_fixed_seed(55, generator);
      const dpselect::NoiseVectorReport report = dpselect::add_noise(gpu_context, std::span<double>(through_gpu), params);
      EXPECT_EQ(report.executed_on, dpselect::ExecutedOn::gpu);
      int mismatches = 0;
      for (std::size_t i = 0; i < original.size(); ++i) {
        mismatches += std::bit_cast<std::uint64_t>(on_cpu[i]) != std::bit_cast<std::uint64_t>(through_gpu[i]);
      }
      EXPECT_EQ(mismatches, 0) << dpselect::to_string(distribution) << " " << dpselect::to_string(generator);
    }
  }
}

TEST(HostStreamingGpu, ThreadsStreamingAtOnceGetTheirOwnAnswers) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  const StreamingBytes sizes(kTestChunkBytes, kTestPieceBytes);
  constexpr int kThreads = 6;
  constexpr int kCallsPerThread = 4;
  const std::vector<float> utilities = hashed_utilities<float>(100003);
  const DeviceCopy<float> on_device(utilities);
  std::vector<ShardResult> expected(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    dpselect::Context context = dpselect::Context::with_fixed_seed(1000 + t);
    dpselect::Release release = context.begin_release(selection_params(dpselect::Mechanism::exponential, Backend::Gpu));
    expected[t] = release.evaluate(on_device.span(), 0, nullptr);
  }
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int call = 0; call < kCallsPerThread; ++call) {
        dpselect::Context context = dpselect::Context::with_fixed_seed(1000 + t);
        dpselect::Release release =
            context.begin_release(selection_params(dpselect::Mechanism::exponential, Backend::Gpu));
        const ShardResult result = release.evaluate(std::span<const float>(utilities), 0);
        mismatches[t] += result.best_index != expected[t].best_index ||
                         std::bit_cast<std::uint64_t>(result.best_score) !=
                             std::bit_cast<std::uint64_t>(expected[t].best_score);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

// The helper itself, with a pass that copies each chunk back: every element arrives once, at the
// offset the pass is told, and chunks hold whole granules.
TEST(HostStreamingGpu, EveryElementArrivesOnceAtItsOffset) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  const StreamingBytes sizes(kTestChunkBytes, kTestPieceBytes);
  for (const std::uint64_t granule : {1u, 301u}) {
    const std::uint64_t count = granule == 1 ? 100003 : 301 * 217;
    const std::vector<float> source = hashed_utilities<float>(count);
    std::vector<float> arrived(count, std::numeric_limits<float>::quiet_NaN());
    std::uint64_t next_offset = 0;
    std::uint64_t chunks = 0;
    dpselect::detail::HostStreaming<float> streaming(count, granule, kTestChunkBytes,
                                                     dpselect::detail::StreamingDirection::to_device, "test chunk");
    const cudaStream_t stream = streaming.compute_stream();
    streaming.upload_each(source.data(), [&](const float* chunk, std::uint64_t offset, std::uint64_t elements) {
      EXPECT_EQ(offset, next_offset);
      EXPECT_LE(elements, streaming.chunk_elements());
      EXPECT_EQ(offset % granule, 0u);
      EXPECT_EQ(elements % granule, 0u);
      ASSERT_EQ(cudaMemcpyAsync(arrived.data() + offset, chunk, elements * sizeof(float), cudaMemcpyDeviceToHost, stream),
                cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      next_offset = offset + elements;
      ++chunks;
    });
    EXPECT_EQ(next_offset, count);
    EXPECT_GT(chunks, 5u) << "granule " << granule;
    int mismatches = 0;
    for (std::uint64_t i = 0; i < count; ++i) {
      mismatches += std::bit_cast<std::uint32_t>(arrived[i]) != std::bit_cast<std::uint32_t>(source[i]);
    }
    EXPECT_EQ(mismatches, 0) << "granule " << granule;
  }
}

// value[i] := 2 value[i] + (offset + i): a pass that needs the chunk's global offset.
__global__ void double_and_add_index(double* values, std::uint64_t count, std::uint64_t offset) {
  const std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < count) values[i] = 2.0 * values[i] + static_cast<double>(offset + i);
}

TEST(HostStreamingGpu, RoundTripReturnsEveryChunk) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  const StreamingBytes sizes(kTestChunkBytes, kTestPieceBytes);
  for (const std::uint64_t count : {1u, 1500u, 1501u, 3000u, 30011u}) {
    std::vector<double> values = hashed_utilities<double>(count);
    const std::vector<double> original = values;
    dpselect::detail::HostStreaming<double> streaming(count, 1, kTestChunkBytes,
                                                      dpselect::detail::StreamingDirection::round_trip, "test chunk");
    EXPECT_LE(streaming.chunk_elements(), kTestPieceBytes / sizeof(double));
    const cudaStream_t stream = streaming.compute_stream();
    streaming.update_each(values.data(), [&](double* chunk, std::uint64_t offset, std::uint64_t elements) {
      dpselect::detail::launch_kernel<double_and_add_index>(static_cast<unsigned int>((elements + 255) / 256), 256, 0,
                                                            stream, chunk, elements, offset);
      ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    });
    int mismatches = 0;
    for (std::uint64_t i = 0; i < count; ++i) mismatches += values[i] != 2.0 * original[i] + static_cast<double>(i);
    EXPECT_EQ(mismatches, 0) << count << " values";
  }
}

TEST(HostStreamingGpu, APassThatThrowsLeavesNothingQueued) {
  if (!dpselect::gpu_usable()) GTEST_SKIP() << "no usable CUDA device";
  const StreamingBytes sizes(kTestChunkBytes, kTestPieceBytes);
  const std::vector<float> source = hashed_utilities<float>(100003);
  int passes = 0;
  EXPECT_THROW(
      {
        dpselect::detail::HostStreaming<float> streaming(source.size(), 1, kTestChunkBytes,
                                                         dpselect::detail::StreamingDirection::to_device, "test chunk");
        streaming.upload_each(source.data(), [&](const float*, std::uint64_t, std::uint64_t) {
          if (++passes == 3) throw std::runtime_error("pass failed");
        });
      },
      std::runtime_error);
  EXPECT_EQ(passes, 3);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  // The staging buffers went back to the cache and the device still works.
  expect_selection_in_chunks_matches<float>(100003);
}

#endif

}  // namespace
