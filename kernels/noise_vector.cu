// SPDX-License-Identifier: Apache-2.0
// The GPU side of noise vectors (noise_vector.hpp): grid-stride kernels that replace each value by
// value + noise, computed by the same __host__ __device__ samplers as the CPU pass
// (continuous_noise.hpp), so the two give the same bits for the same (key, stream, coordinate).
// With Philox a thread takes one coordinate; with ChaCha20 the four coordinates that share blocks.
// A kernel per noise shape, each holding that shape's sampler once.
//
// Rejections run side by side (BlockRetries). Every thread first samples its coordinates from the
// rows every sample of the shape reads (rows_always_read: for ChaCha20, the rows its quad caches);
// a sample that needs more (a rejected polar or Marsaglia-Tsang attempt: about one normal in five)
// is queued in shared memory, and once the block's first pass is done, the block's threads take the
// queued coordinates one each: a normal tries one more polar attempt per round and is queued again
// if rejected (its attempts leave no state, so it resumes where its first try stopped), a
// generalized Gaussian is sampled in full from row 0. Sampled where it was rejected, a retry kept
// the rest of its warp waiting: one lane in five drawing, and nearly every warp drawing again for
// some lane, several times over. A sample is a function of its coordinate's blocks alone, so the
// bits are the same either way (bench/schedule_model/noise_retries.cpp counts the block
// computations a warp issues under each schedule).
#include <cuda_runtime.h>

#include <algorithm>

#include "noise/gpu.hpp"
#include "random/chacha20_coordinate_quads.hpp"
#include "dpselect/detail/fused_select_kernel.cuh"
#include "dpselect/detail/kernel_launch.cuh"
#include "common/host_streaming.cuh"
#include "common/launch_helpers.cuh"

namespace dpselect::detail {
namespace {

using Policy = GridStridePolicy;
// A grid of the quad kernel covers as many coordinates as one of the coordinate kernel (still
// several blocks per multiprocessor).
constexpr std::uint64_t kMaxQuadBlocks = Policy::kMaxBlocks / continuous::kCoordinatesPerQuad;

struct PhiloxFetch {
  PhiloxKey key;
  std::uint64_t stream;
  __device__ __forceinline__ RandomBlock at(std::uint64_t position) const {
    return philox_block(key, stream, position);
  }
};

// A retry's ChaCha20 blocks, one position at a time, out of line (uncached_coordinate_block).
struct UncachedChaChaFetch {
  ChaChaKey key;
  std::uint64_t stream;
  __device__ __forceinline__ RandomBlock at(std::uint64_t position) const {
    return continuous::uncached_coordinate_block(key, stream, position);
  }
};

// Where a sample the first try hands on resumes: after the first try's rows where they hold whole
// attempts that leave no state (the normal: the first try is its first attempt), else from row 0.
__host__ __device__ constexpr unsigned resume_row(continuous::NoiseShape shape) {
  return continuous::independent_attempt_rows(shape) != 0 &&
                 continuous::rows_always_read(shape) % continuous::independent_attempt_rows(shape) == 0
             ? continuous::rows_always_read(shape)
             : 0u;
}

// The values of one pass of a block whose samples need more rows than they have read, by index
// into the launch's values, each with the row its sample resumes from. Capacity: the values one
// pass of the block tries. Two queues where samples resume one attempt per round (the one drained
// and the one its re-queued values go to), else one.
template <continuous::NoiseShape Shape, unsigned Capacity>
class BlockRetries {
  static constexpr unsigned kAttemptRows = continuous::independent_attempt_rows(Shape);
  static constexpr unsigned kQueues = kAttemptRows != 0 ? 2 : 1;

 public:
  // Called by every thread of the block; ends with a barrier.
  __device__ __forceinline__ void reset() {
    if (threadIdx.x < kQueues) count_[threadIdx.x] = 0;
    __syncthreads();
  }
  // Queues value i of the pass's first try, whose sample resumes from row `row`.
  __device__ __forceinline__ void push(std::uint64_t i, unsigned row) { push_to(0, i, row); }

  // Samples every queued value, one per thread, until none is left. For a shape whose rejected
  // attempts leave no state (the normal: independent_attempt_rows), each round tries one attempt
  // from the row the value resumes from and queues again the values it rejects, so the retries of a
  // pass stay side by side round after round; any other shape samples each value in full from row
  // 0. A value whose rows run out becomes NaN and sets *failed. Called by every thread of the
  // block after the pass's pushes; starts and ends with a barrier, and leaves the queues empty.
  template <class Fetch>
  __device__ __forceinline__ void sample_all(double* values, std::uint64_t first_coordinate, Fetch fetch,
                                             const continuous::CoordinateNoise& noise, unsigned int* failed) {
    unsigned from = 0;
    for (;;) {
      __syncthreads();  // every push into queue `from` is done, and its count reset of two rounds ago
      const unsigned queued = count_[from];
      if (queued == 0) break;
      for (unsigned j = threadIdx.x; j < queued; j += blockDim.x) {
        const std::uint64_t i = index_[from][j];
        const std::uint64_t coordinate = first_coordinate + i;
        double out = 0.0;
        if constexpr (kAttemptRows != 0) {
          const unsigned row = row_[from][j];
          const unsigned end = row + kAttemptRows;
          if (continuous::noisy_value_in_rows_of<Shape>(fetch, noise, coordinate, row, end, values[i], out)) {
            values[i] = out;
          } else if (end >= continuous::kBlocksPerCoordinate) {
            values[i] = detail::double_from_bits(0x7FF8000000000000ull);  // as noisy_value_of on running out
            atomicOr(failed, 1u);
          } else {
            push_to((from + 1) % kQueues, i, end);
          }
        } else {
          if (!continuous::noisy_value_of<Shape>(fetch, noise, coordinate, values[i], out)) atomicOr(failed, 1u);
          values[i] = out;
        }
      }
      __syncthreads();  // every read of queue `from` is done
      if (threadIdx.x == 0) count_[from] = 0;
      from = (from + 1) % kQueues;
    }
    __syncthreads();  // every thread has read the empty count before the next pass pushes again
  }

 private:
  __device__ __forceinline__ void push_to(unsigned queue, std::uint64_t i, unsigned row) {
    const unsigned slot = atomicAdd(&count_[queue], 1u);
    index_[queue][slot] = i;
    if constexpr (kAttemptRows != 0) row_[queue][slot] = static_cast<unsigned short>(row);
  }

  std::uint64_t index_[kQueues][Capacity];
  unsigned short row_[kQueues][kAttemptRows != 0 ? Capacity : 1];  // unused where samples restart
  unsigned int count_[kQueues];
};

// Value i (of count, coordinate first_coordinate + i) gets its noise; a coordinate whose bits run
// out becomes NaN and sets *failed. For Philox: a 16-byte block per position, nothing to share. One
// kernel per noise shape: a run-time switch would put all three samplers in every kernel. The
// grid-stride loop is uniform across the block (its bound does not depend on the thread), so every
// thread reaches each pass's barriers.
template <continuous::NoiseShape Shape, class Fetch>
__global__ void add_noise_kernel(double* values, std::uint64_t count, std::uint64_t first_coordinate, Fetch fetch,
                                 continuous::CoordinateNoise noise, unsigned int* failed) {
  constexpr bool kRetries = continuous::samples_may_read_more(Shape);
  constexpr unsigned kFirstTryRows = continuous::rows_always_read(Shape);
  constexpr unsigned kResumeRow = resume_row(Shape);
  __shared__ BlockRetries<Shape, Policy::kBlockThreads> retries;
  if constexpr (kRetries) retries.reset();
  const std::uint64_t stride = std::uint64_t{gridDim.x} * Policy::kBlockThreads;
  for (std::uint64_t base = std::uint64_t{blockIdx.x} * Policy::kBlockThreads; base < count; base += stride) {
    const std::uint64_t i = base + threadIdx.x;
    if (i < count) {
      double out = 0.0;
      if constexpr (kRetries) {
        if (continuous::noisy_value_in_rows_of<Shape>(fetch, noise, first_coordinate + i, 0, kFirstTryRows,
                                                      values[i], out)) {
          values[i] = out;
        } else {
          retries.push(i, kResumeRow);
        }
      } else {
        if (!continuous::noisy_value_of<Shape>(fetch, noise, first_coordinate + i, values[i], out)) {
          atomicOr(failed, 1u);
        }
        values[i] = out;
      }
    }
    if constexpr (kRetries) retries.sample_all(values, first_coordinate, fetch, noise, failed);
  }
}

// The quads that overlap coordinates [first_coordinate, first_coordinate + count), count >= 1.
__host__ __device__ __forceinline__ std::uint64_t quads_overlapping(std::uint64_t first_coordinate,
                                                                    std::uint64_t count) {
  return (first_coordinate + count - 1) / continuous::kCoordinatesPerQuad -
         first_coordinate / continuous::kCoordinatesPerQuad + 1;
}

// ChaCha20: a thread takes the four coordinates of a quad (chacha20_coordinate_quads.hpp), whose
// blocks are the quarters of one 64-byte block per row: one block computed per row for four
// coordinates, where a thread per coordinate would compute it four times and keep a quarter. The
// quad caches the rows every sample of the shape reads; the four coordinates then run one copy of
// the shape's sampler in turn (a loop kept rolled, the lane a run-time value) from the cached rows
// alone, and queue the samples that need more, with the same per-coordinate semantics as
// add_noise_kernel.
template <continuous::NoiseShape Shape>
__global__ void add_noise_quads_kernel(double* values, std::uint64_t count, std::uint64_t first_coordinate,
                                       ChaChaKey key, std::uint64_t stream, continuous::CoordinateNoise noise,
                                       unsigned int* failed) {
  constexpr bool kRetries = continuous::samples_may_read_more(Shape);
  constexpr unsigned kCachedRows = continuous::rows_always_read(Shape);
  constexpr unsigned kResumeRow = resume_row(Shape);
  __shared__ BlockRetries<Shape, Policy::kBlockThreads * continuous::kCoordinatesPerQuad> retries;
  if constexpr (kRetries) retries.reset();
  const std::uint64_t first_quad = first_coordinate / continuous::kCoordinatesPerQuad;
  const std::uint64_t quads = quads_overlapping(first_coordinate, count);
  const std::uint64_t stride = std::uint64_t{gridDim.x} * Policy::kBlockThreads;
  for (std::uint64_t base = std::uint64_t{blockIdx.x} * Policy::kBlockThreads; base < quads; base += stride) {
    if (base + threadIdx.x < quads) {
      const std::uint64_t quad = first_quad + base + threadIdx.x;
      const continuous::ChaChaCoordinateQuad<kCachedRows> blocks(key, stream, quad);
#pragma unroll 1
      for (unsigned lane = 0; lane < continuous::kCoordinatesPerQuad; ++lane) {
        const std::uint64_t coordinate = quad * continuous::kCoordinatesPerQuad + lane;
        if (coordinate < first_coordinate || coordinate - first_coordinate >= count) continue;
        const std::uint64_t i = coordinate - first_coordinate;
        const continuous::ChaChaQuadCoordinate<kCachedRows> fetch{blocks, lane};
        double out = 0.0;
        if constexpr (kRetries) {
          if (continuous::noisy_value_in_rows_of<Shape>(fetch, noise, coordinate, 0, kCachedRows, values[i], out)) {
            values[i] = out;
          } else {
            retries.push(i, kResumeRow);
          }
        } else {
          if (!continuous::noisy_value_of<Shape>(fetch, noise, coordinate, values[i], out)) atomicOr(failed, 1u);
          values[i] = out;
        }
      }
    }
    if constexpr (kRetries) {
      retries.sample_all(values, first_coordinate, UncachedChaChaFetch{key, stream}, noise, failed);
    }
  }
}

template <continuous::NoiseShape Shape>
void enqueue_shape(double* values, std::uint64_t count, std::uint64_t first_coordinate, const RandomKey& key,
                   std::uint64_t stream, const continuous::CoordinateNoise& noise, unsigned int* failed,
                   cudaStream_t cuda_stream) {
  if (key.generator == Generator::philox) {
    launch_kernel<add_noise_kernel<Shape, PhiloxFetch>>(grid_blocks<Policy>(count),
                                                        Policy::kBlockThreads, 0, cuda_stream, values, count,
                                                        first_coordinate, PhiloxFetch{key.philox, stream}, noise,
                                                        failed);
  } else {
    const unsigned int blocks =
        grid_stride_blocks(quads_overlapping(first_coordinate, count), Policy::kBlockThreads, kMaxQuadBlocks);
    launch_kernel<add_noise_quads_kernel<Shape>>(blocks, Policy::kBlockThreads, 0, cuda_stream, values, count,
                                                 first_coordinate, key.chacha, stream, noise, failed);
  }
}

// count >= 1 (the callers return early on none).
void enqueue_add_noise(double* values, std::uint64_t count, std::uint64_t first_coordinate, const RandomKey& key,
                       std::uint64_t stream, const continuous::CoordinateNoise& noise, unsigned int* failed,
                       cudaStream_t cuda_stream) {
  switch (noise.shape) {
    case continuous::NoiseShape::laplace:
      enqueue_shape<continuous::NoiseShape::laplace>(values, count, first_coordinate, key, stream, noise, failed,
                                                     cuda_stream);
      break;
    case continuous::NoiseShape::normal:
      enqueue_shape<continuous::NoiseShape::normal>(values, count, first_coordinate, key, stream, noise, failed,
                                                    cuda_stream);
      break;
    case continuous::NoiseShape::generalized_gaussian:
      enqueue_shape<continuous::NoiseShape::generalized_gaussian>(values, count, first_coordinate, key, stream, noise,
                                                                  failed, cuda_stream);
      break;
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

// Chunks go up, get their noise and come back through the staging buffers (common/host_streaming.cuh):
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
