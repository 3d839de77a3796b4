// One-shot Gumbel top-k on the GPU (top_k.hpp): the k candidates with the best noisy scores, in
// one pass over the utilities and a one-block merge, with the scores of every other path (the
// same score_group), so the GPU returns the CPU's k indices in the CPU's order.
//
// Pass 1: each block keeps its own candidates in shared memory (kTopKCapacity slots). Its threads
// take 4 groups each (one ChaCha20 block) and score one group of 8 candidates each per round and append every score that is not below the
// block's threshold; when the next round might not fit, the block sorts the slots (bitonic, best
// first under the library's order: higher score, then smaller index), keeps k and raises the
// threshold to the k-th score. Since the threshold only rises at these points, most candidates are
// screened by their 16-bit bound alone, as in the single pick. Each block writes its k best.
// Pass 2: one block merges the blocks' lists (and, for host arrays streamed in chunks, the list of
// the chunks before) the same way.
#include <cuda_runtime.h>

#include <cub/block/block_reduce.cuh>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/gpu_backend.hpp"
#include "dpselect/detail/fused_select_kernel.cuh"
#include "host_streaming.cuh"
#include "launch_helpers.cuh"

namespace dpselect::detail {
namespace {

constexpr int kTopKThreads = 256;
constexpr unsigned int kTopKCapacity = 4096;
// Appends per round at most: every thread scores one group.
constexpr unsigned int kOffersPerRound = kTopKThreads * noise::kCandidatesPerGroup;
static_assert(kTopKCapacity >= kGpuTopKMax + kOffersPerRound, "a round must fit after keeping k");

struct BlockCandidates {
  double score[kTopKCapacity];
  std::uint64_t index[kTopKCapacity];
  unsigned int count;
  double threshold;  // a score strictly below it can never be among the k kept
};
constexpr std::size_t kSharedBytes = sizeof(BlockCandidates);

__device__ __forceinline__ bool ranks_before(double score_a, std::uint64_t index_a, double score_b,
                                             std::uint64_t index_b) {
  return score_a > score_b || (score_a == score_b && index_a < index_b);
}

// The Sink of score_group (shard_result.hpp) that appends to the block's slots.
struct BlockSink {
  BlockCandidates* slots;
  __device__ __forceinline__ double threshold() const { return slots->threshold; }
  __device__ __forceinline__ void offer(double score, std::uint64_t index) {
    if (score < slots->threshold) return;
    const unsigned int slot = atomicAdd(&slots->count, 1u);
    slots->score[slot] = score;
    slots->index[slot] = index;
  }
};

__device__ void reset(BlockCandidates& slots) {
  if (threadIdx.x == 0) {
    slots.count = 0;
    slots.threshold = -kInfinity;
  }
  __syncthreads();
}

// Sorts the slots best first, keeps `keep` and sets the threshold. Called by every thread of the
// block, after a barrier that ends all appends.
__device__ void sort_and_keep(BlockCandidates& slots, unsigned int keep) {
  const unsigned int count = slots.count;
  for (unsigned int i = count + threadIdx.x; i < kTopKCapacity; i += kTopKThreads) {
    slots.score[i] = -kInfinity;  // padding ranks after every real entry (index kNoIndex)
    slots.index[i] = kNoIndex;
  }
  __syncthreads();
  for (unsigned int size = 2; size <= kTopKCapacity; size <<= 1) {
    for (unsigned int stride = size / 2; stride > 0; stride >>= 1) {
      for (unsigned int pair = threadIdx.x; pair < kTopKCapacity / 2; pair += kTopKThreads) {
        const unsigned int low = 2 * pair - (pair & (stride - 1));
        const unsigned int high = low + stride;
        // Sub-sequences with (low & size) == 0 end best first, the others worst first, so that
        // every merge step sees a bitonic sequence; the last (size = capacity) is best first.
        const bool best_first = (low & size) == 0;
        const bool high_ranks_first =
            ranks_before(slots.score[high], slots.index[high], slots.score[low], slots.index[low]);
        const bool low_ranks_first =
            ranks_before(slots.score[low], slots.index[low], slots.score[high], slots.index[high]);
        if (best_first ? high_ranks_first : low_ranks_first) {
          const double score = slots.score[low];
          const std::uint64_t index = slots.index[low];
          slots.score[low] = slots.score[high];
          slots.index[low] = slots.index[high];
          slots.score[high] = score;
          slots.index[high] = index;
        }
      }
      __syncthreads();
    }
  }
  if (threadIdx.x == 0) {
    slots.count = count < keep ? count : keep;
    slots.threshold = count < keep ? -kInfinity : slots.score[keep - 1];
  }
  __syncthreads();
}

// Ends a round: every thread reads the count before any thread appends again, so all take the
// same branch; sorts when the next round might not fit.
__device__ void end_round(BlockCandidates& slots, unsigned int keep) {
  __syncthreads();
  const bool full = slots.count > kTopKCapacity - kOffersPerRound;
  __syncthreads();
  if (full) sort_and_keep(slots, keep);
}

// Writes the block's k best (padded with (-inf, kNoIndex)) to out[0, k), after sort_and_keep.
__device__ void write_kept(const BlockCandidates& slots, unsigned int k, RankedCandidate* out) {
  for (unsigned int i = threadIdx.x; i < k; i += kTopKThreads) {
    out[i] = i < slots.count ? RankedCandidate{slots.score[i], slots.index[i]} : RankedCandidate{-kInfinity, kNoIndex};
  }
}

template <class Source>
__global__ void __launch_bounds__(kTopKThreads)
    top_k_blocks_kernel(Source source, GroupRange groups, NoiseSpec spec, unsigned int k,
                        RankedCandidate* block_lists, ShardResult* block_tallies) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  BlockCandidates& slots = *reinterpret_cast<BlockCandidates*>(shared_bytes);
  reset(slots);
  ShardResult tally;
  tally.executed_on = ExecutedOn::gpu;
  BlockSink sink{&slots};
  const std::uint64_t first_group = groups.first_group();
  const std::uint64_t end_group = first_group + groups.group_count();
  const std::uint64_t quads = quad_count(groups);
  const std::uint64_t quad_step = static_cast<std::uint64_t>(gridDim.x) * kTopKThreads;
  // Each thread takes a quad of 4 groups (one ChaCha20 block, fused_select_kernel.cuh) and scores
  // one of its groups per round, so a round still appends at most kOffersPerRound. The loops are
  // uniform across the block (their bounds do not depend on the thread).
  for (std::uint64_t quad_base = static_cast<std::uint64_t>(blockIdx.x) * kTopKThreads; quad_base < quads;
       quad_base += quad_step) {
    const bool has_quad = quad_base + threadIdx.x < quads;
    const std::uint64_t quad = first_quad(groups) + quad_base + threadIdx.x;
    const QuadBlocks blocks(spec, quad);  // past the range (has_quad false) computed but never used
#pragma unroll
    for (unsigned int j = 0; j < kGroupsPerQuad; ++j) {
      const std::uint64_t group = quad * kGroupsPerQuad + j;
      if (has_quad && group >= first_group && group < end_group) {
        score_group(spec, group, blocks.group_block(spec, quad, j), groups.lane_begin(group), groups.lane_end(group),
                    source, tally, sink);
      }
      end_round(slots, k);
    }
  }
  sort_and_keep(slots, k);
  write_kept(slots, k, block_lists + static_cast<std::uint64_t>(blockIdx.x) * k);
  using BlockReduce = cub::BlockReduce<ShardResult, kTopKThreads>;
  __shared__ typename BlockReduce::TempStorage reduce_storage;
  const ShardResult block_tally = BlockReduce(reduce_storage).Reduce(tally, MergeShards{});
  if (threadIdx.x == 0) block_tallies[blockIdx.x] = block_tally;
}

// One block: the k best of lists[0, entries) into out[0, k), and the merge of tallies[0, tally_count)
// into *tally_out. out and tally_out may alias the inputs' last entries: they are written only
// after every input has been read.
__global__ void __launch_bounds__(kTopKThreads)
    merge_lists_kernel(const RankedCandidate* lists, std::uint64_t entries, const ShardResult* tallies,
                       unsigned int tally_count, unsigned int k, RankedCandidate* out, ShardResult* tally_out) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  BlockCandidates& slots = *reinterpret_cast<BlockCandidates*>(shared_bytes);
  reset(slots);
  BlockSink sink{&slots};
  constexpr unsigned int kPerThread = kOffersPerRound / kTopKThreads;
  for (std::uint64_t round_base = 0; round_base < entries; round_base += kOffersPerRound) {
    for (unsigned int j = 0; j < kPerThread; ++j) {
      const std::uint64_t i = round_base + j * kTopKThreads + threadIdx.x;
      if (i < entries) sink.offer(lists[i].score, lists[i].index);
    }
    end_round(slots, k);
  }
  ShardResult tally;
  for (unsigned int b = threadIdx.x; b < tally_count; b += kTopKThreads) tally = merge(tally, tallies[b]);
  using BlockReduce = cub::BlockReduce<ShardResult, kTopKThreads>;
  __shared__ typename BlockReduce::TempStorage reduce_storage;
  const ShardResult total = BlockReduce(reduce_storage).Reduce(tally, MergeShards{});
  sort_and_keep(slots, k);  // its barriers also order every read of the inputs before the writes
  write_kept(slots, k, out);
  if (threadIdx.x == 0) *tally_out = total;
}

template <class Source>
unsigned int top_k_grid(std::uint64_t count) {
  return filling_grid(resident_blocks(top_k_blocks_kernel<Source>, kTopKThreads, kSharedBytes),
                      (quads_spanning(count) + kTopKThreads - 1) / kTopKThreads);
}

template <class Source>
void allow_large_shared_memory() {
  DPSELECT_CUDA_TRY(cudaFuncSetAttribute(top_k_blocks_kernel<Source>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(kSharedBytes)));
  DPSELECT_CUDA_TRY(cudaFuncSetAttribute(merge_lists_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(kSharedBytes)));
}

// Device buffers of one top-k: the blocks' lists followed by the running list (k entries), and the
// blocks' tallies followed by the running tally.
class TopKBuffers {
 public:
  TopKBuffers(unsigned int grid, unsigned int k, cudaStream_t stream)
      : grid_(grid),
        k_(k),
        lists_((static_cast<std::size_t>(grid) + 1) * k * sizeof(RankedCandidate), stream),
        tallies_((static_cast<std::size_t>(grid) + 1) * sizeof(ShardResult), stream) {
    const std::vector<RankedCandidate> empty_list(k, RankedCandidate{-kInfinity, kNoIndex});
    ShardResult empty_tally;
    empty_tally.executed_on = ExecutedOn::gpu;
    DPSELECT_CUDA_TRY(cudaMemcpyAsync(running_list(), empty_list.data(), k * sizeof(RankedCandidate),
                                      cudaMemcpyHostToDevice, stream));
    DPSELECT_CUDA_TRY(
        cudaMemcpyAsync(running_tally(), &empty_tally, sizeof(ShardResult), cudaMemcpyHostToDevice, stream));
    DPSELECT_CUDA_TRY(cudaStreamSynchronize(stream));  // the host sources above go out of scope
  }
  RankedCandidate* block_lists() const { return lists_.as<RankedCandidate>(); }
  RankedCandidate* running_list() const { return block_lists() + static_cast<std::size_t>(grid_) * k_; }
  ShardResult* block_tallies() const { return tallies_.as<ShardResult>(); }
  ShardResult* running_tally() const { return block_tallies() + grid_; }

 private:
  unsigned int grid_;
  unsigned int k_;
  DeviceScratch lists_;
  DeviceScratch tallies_;
};

// Pass 1 over candidates [begin, begin + count) and pass 2 folding it into the running list.
template <class Source>
void enqueue_top_k(const Source& source, std::uint64_t begin, std::uint64_t count, const NoiseSpec& spec,
                   unsigned int k, unsigned int grid, const TopKBuffers& buffers, cudaStream_t stream) {
  top_k_blocks_kernel<Source><<<grid, kTopKThreads, kSharedBytes, stream>>>(
      source, GroupRange{begin, begin + count}, spec, k, buffers.block_lists(), buffers.block_tallies());
  DPSELECT_CUDA_TRY(cudaGetLastError());
  // The running list and tally sit right after the blocks', so one merge reads all of them.
  merge_lists_kernel<<<1, kTopKThreads, kSharedBytes, stream>>>(
      buffers.block_lists(), (static_cast<std::uint64_t>(grid) + 1) * k, buffers.block_tallies(), grid + 1, k,
      buffers.running_list(), buffers.running_tally());
  DPSELECT_CUDA_TRY(cudaGetLastError());
}

TopKShard read_back(const TopKBuffers& buffers, unsigned int k, cudaStream_t stream) {
  TopKShard shard;
  shard.top.resize(k);
  DPSELECT_CUDA_TRY(cudaMemcpyAsync(shard.top.data(), buffers.running_list(), k * sizeof(RankedCandidate),
                                    cudaMemcpyDeviceToHost, stream));
  DPSELECT_CUDA_TRY(
      cudaMemcpyAsync(&shard.tally, buffers.running_tally(), sizeof(ShardResult), cudaMemcpyDeviceToHost, stream));
  DPSELECT_CUDA_TRY(cudaStreamSynchronize(stream));
  return shard;
}

template <class T>
TopKShard top_k_device(const NoiseSpec& spec, const T* utilities, std::uint64_t n, unsigned int k,
                       cudaStream_t stream) {
  using Source = ArraySource<T>;
  allow_large_shared_memory<Source>();
  const unsigned int grid = top_k_grid<Source>(n);
  const TopKBuffers buffers(grid, k, stream);
  enqueue_top_k(Source{utilities, 0}, 0, n, spec, k, grid, buffers, stream);
  return read_back(buffers, k, stream);
}

// Host arrays: chunks streamed through the device (host_streaming.cuh), each folded into the
// running list while the next one is on its way.
template <class T>
TopKShard top_k_host(const NoiseSpec& spec, const T* utilities, std::uint64_t n, unsigned int k) {
  using Source = ArraySource<T>;
  HostStreaming<T> streaming(n, 1, streaming_chunk_bytes(kDefaultStreamingChunkBytes), StreamingDirection::to_device,
                             "cudaMallocFromPoolAsync(top-k chunk)");
  const cudaStream_t stream = streaming.compute_stream();
  allow_large_shared_memory<Source>();
  const unsigned int grid = top_k_grid<Source>(streaming.chunk_elements());
  const TopKBuffers buffers(grid, k, stream);
  streaming.upload_each(utilities, [&](const T* chunk, std::uint64_t offset, std::uint64_t count) {
    enqueue_top_k(Source{chunk, offset}, offset, count, spec, k, grid, buffers, stream);
  });
  return read_back(buffers, k, stream);
}

}  // namespace

TopKShard gpu_top_k_device(const NoiseSpec& spec, const float* utilities, std::uint64_t n, std::uint64_t k,
                           cuda_stream_t stream) {
  return top_k_device(spec, utilities, n, static_cast<unsigned int>(k), stream);
}
TopKShard gpu_top_k_device(const NoiseSpec& spec, const double* utilities, std::uint64_t n, std::uint64_t k,
                           cuda_stream_t stream) {
  return top_k_device(spec, utilities, n, static_cast<unsigned int>(k), stream);
}
TopKShard gpu_top_k_host(const NoiseSpec& spec, const float* utilities, std::uint64_t n, std::uint64_t k) {
  return top_k_host(spec, utilities, n, static_cast<unsigned int>(k));
}
TopKShard gpu_top_k_host(const NoiseSpec& spec, const double* utilities, std::uint64_t n, std::uint64_t k) {
  return top_k_host(spec, utilities, n, static_cast<unsigned int>(k));
}

}  // namespace dpselect::detail
