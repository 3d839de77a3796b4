// The GPU side of noise vectors (noise_vector.hpp): one grid-stride kernel that replaces each
// value by value + noise, computed by the same __host__ __device__ samplers as the CPU pass
// (continuous_noise.hpp), so the two give the same bits for the same (key, stream, coordinate).
#include <cuda_runtime.h>

#include <algorithm>

#include "engine/gpu_backend.hpp"
#include "dpselect/detail/fused_select_kernel.cuh"
#include "host_streaming.cuh"
#include "launch_helpers.cuh"

namespace dpselect::detail {
namespace {

constexpr int kBlockThreads = 256;
constexpr std::uint64_t kMaxBlocks = 8192;

// Blocks by position for one generator: the kernel is compiled per generator, so the loop holds
// only that generator's key and code (random_block(RandomKey) would carry both).
struct ChaChaFetch {
  ChaChaKey key;
  std::uint64_t stream;
  __device__ __forceinline__ RandomBlock at(std::uint64_t position) const {
    return chacha20_random_block(key, stream, position);
  }
};

struct PhiloxFetch {
  PhiloxKey key;
  std::uint64_t stream;
  __device__ __forceinline__ RandomBlock at(std::uint64_t position) const {
    return philox_block(key, stream, position);
  }
};

// Value i (of count, coordinate first_coordinate + i) gets its noise; a coordinate whose bits run
// out becomes NaN and sets *failed.
template <class Fetch>
__global__ void add_noise_kernel(double* values, std::uint64_t count, std::uint64_t first_coordinate, Fetch fetch,
                                 continuous::CoordinateNoise noise, unsigned int* failed) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * kBlockThreads;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * kBlockThreads + threadIdx.x; i < count; i += stride) {
    double out = 0.0;
    if (!continuous::noisy_value(fetch, noise, first_coordinate + i, values[i], out)) atomicOr(failed, 1u);
    values[i] = out;
  }
}

void enqueue_add_noise(double* values, std::uint64_t count, std::uint64_t first_coordinate, const RandomKey& key,
                       std::uint64_t stream, const continuous::CoordinateNoise& noise, unsigned int* failed,
                       cudaStream_t cuda_stream) {
  const unsigned int blocks = grid_stride_blocks(count, kBlockThreads, kMaxBlocks);
  if (key.generator == Generator::philox) {
    add_noise_kernel<<<blocks, kBlockThreads, 0, cuda_stream>>>(
        values, count, first_coordinate, PhiloxFetch{key.philox, stream}, noise, failed);
  } else {
    add_noise_kernel<<<blocks, kBlockThreads, 0, cuda_stream>>>(
        values, count, first_coordinate, ChaChaFetch{key.chacha, stream}, noise, failed);
  }
  DPSELECT_CUDA_TRY(cudaGetLastError());
}

}  // namespace

bool gpu_add_noise(double* values, std::uint64_t count, std::uint64_t first_coordinate, const RandomKey& key,
                   std::uint64_t stream, const continuous::CoordinateNoise& noise, cuda_stream_t cuda_stream) {
  if (count == 0) return true;
  DeviceScratch failed(sizeof(unsigned int), cuda_stream);
  DPSELECT_CUDA_TRY(cudaMemsetAsync(failed.as<unsigned int>(), 0, sizeof(unsigned int), cuda_stream));
  enqueue_add_noise(values, count, first_coordinate, key, stream, noise, failed.as<unsigned int>(), cuda_stream);
  return read_device_value(failed.as<unsigned int>(), cuda_stream) == 0;
}

// Chunks go up, get their noise and come back through the staging buffers (host_streaming.cuh):
// while chunk i is computed, chunk i + 1 is on its way up and chunk i - 1 on its way back. Each
// value's noise is that of its global coordinate, whatever the chunking.
bool gpu_add_noise_host(std::span<double> values, const RandomKey& key, std::uint64_t stream,
                        const continuous::CoordinateNoise& noise) {
  const std::uint64_t n = values.size();
  if (n == 0) return true;
  HostStreaming<double> streaming(n, 1, streaming_chunk_bytes(kDefaultStreamingChunkBytes),
                                  StreamingDirection::round_trip, "cudaMallocFromPoolAsync(noise chunk)");
  const cudaStream_t cuda_stream = streaming.compute_stream();
  DeviceScratch failed(sizeof(unsigned int), cuda_stream);
  DPSELECT_CUDA_TRY(cudaMemsetAsync(failed.as<unsigned int>(), 0, sizeof(unsigned int), cuda_stream));
  streaming.update_each(values.data(), [&](double* chunk, std::uint64_t offset, std::uint64_t count) {
    enqueue_add_noise(chunk, count, offset, key, stream, noise, failed.as<unsigned int>(), cuda_stream);
  });
  return read_device_value(failed.as<unsigned int>(), cuda_stream) == 0;
}

}  // namespace dpselect::detail
