// SPDX-License-Identifier: Apache-2.0
// One-shot Gumbel top-k on the GPU (top_k.hpp): the k candidates with the best noisy scores, in
// one pass over the utilities and a one-block merge, with the scores of every other path
// (race_group_by_warp follows score_scanned_group's definition), so the GPU returns the CPU's k
// indices in the CPU's order.
//
// Pass 1: each block keeps its own candidates in shared memory (kTopKCapacity slots). Its warps
// take tiles of 32 groups of 32 candidates (device_groups.cuh: one ChaCha20 block of screens a
// tile), a lane's group each. The groups whose reach clears the threshold are raced one at a time
// by the whole warp, as in the single pick (race_group_by_warp, widest first; the lanes draw their
// groups' race blocks together beforehand, own_group_race), and every score
// not below the threshold is appended; the races of a round end with a block barrier, and when the
// next round might not fit or k entries have been appended since the last keep, the block keeps
// its k best (best first under the library's order: higher score, then smaller index) and raises
// its threshold to the k-th score. The kept entries stay sorted, so keeping sorts only the entries
// appended since (bitonic) and merges the two sorted lists.
// The threshold is also shared across the grid: a block that keeps k publishes its k-th score
// (an atomic max of a word in device memory), and every warp screens against the largest
// published. Exact: that block's final k all score at least as much, so the call's k best do too,
// and a score strictly below it is never among them. The merge publishes the running list's k-th
// score the same way, for the chunks of a host array that follow. Most groups are then screened
// by their 16-bit bound alone, as in the single pick. Each block writes its k best.
// Pass 2: one block merges the blocks' lists (and, for host arrays streamed in chunks, the list of
// the chunks before) the same way.
#include <cuda_runtime.h>

#include <cub/block/block_reduce.cuh>
#include <cuda/atomic>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "top_k/gpu.hpp"
#include "random/ranked_lists.hpp"
#include "dpselect/detail/fused_select_kernel.cuh"
#include "dpselect/detail/kernel_launch.cuh"
#include "dpselect/detail/noise_positions.hpp"
#include "dpselect/detail/screened_scoring.hpp"
#include "common/host_streaming.cuh"
#include "common/launch_helpers.cuh"

namespace dpselect::detail {
namespace {

constexpr int kTopKThreads = 256;
constexpr unsigned int kTopKCapacity = 4096;
// Races a warp runs per round. A race offers at most one score per lane (a lane's candidate is
// either excluded or valid), so a round appends at most kRacesPerRound offers per thread.
constexpr unsigned int kRacesPerRound = 8;
constexpr unsigned int kOffersPerRound = kTopKThreads * kRacesPerRound;
static_assert(kTopKCapacity >= kGpuTopKMax + kOffersPerRound, "a round must fit after keeping k");

struct BlockCandidates {
  double score[kTopKCapacity];
  std::uint64_t index[kTopKCapacity];
  unsigned int count;
  unsigned int sorted;  // slots [0, sorted) are sorted best first (the entries kept last time)
  double threshold;     // a score strictly below it can never be among the k kept
};
constexpr std::size_t kSharedBytes = sizeof(BlockCandidates);

// The merge hands each thread this many consecutive ranks of the kept k.
constexpr unsigned int kKeptPerThread = (kGpuTopKMax + kTopKThreads - 1) / kTopKThreads;

// The sink of race_group_by_warp and of the merge: appends every offer from `threshold` up to the
// block's slots. `threshold`: at least the block's, at most the call's k-th best score.
struct BlockSink {
  BlockCandidates* slots;
  double threshold;
  __device__ __forceinline__ void offer(double score, std::uint64_t index) {
    if (score < threshold) return;
    const unsigned int slot = atomicAdd(&slots->count, 1u);
    slots->score[slot] = score;
    slots->index[slot] = index;
  }
};

__device__ void reset(BlockCandidates& slots) {
  if (threadIdx.x == 0) {
    slots.count = 0;
    slots.sorted = 0;
    slots.threshold = -kInfinity;
  }
  __syncthreads();
}

// Sorts slots [first, count) best first, in place (ranked_lists.hpp's network on the next power of
// two, the positions past `count` left out). Called by every thread of the block after a barrier
// that ends all appends; ends with one. A warp takes 32 consecutive pairs of every stage, so the
// stages that stay within 64 positions need only the warp's own barrier.
__device__ void sort_appended(BlockCandidates& slots, unsigned int first, unsigned int count) {
  const unsigned int n = count - first;
  if (n < 2) return;  // nothing written, so the caller's barrier still orders every read
  const unsigned int padded = next_power_of_two(n);
  double* const score = slots.score + first;
  std::uint64_t* const index = slots.index + first;
  for (unsigned int size = 2; size <= padded; size <<= 1) {
    for (unsigned int stride = size / 2; stride > 0; stride >>= 1) {
      for (unsigned int pair = threadIdx.x; pair < padded / 2; pair += kTopKThreads) {
        const BitonicPair at = bitonic_pair(pair, size, stride);
        if (at.high < n && ranks_before(score[at.high], index[at.high], score[at.low], index[at.low])) {
          const double low_score = score[at.low];
          const std::uint64_t low_index = index[at.low];
          score[at.low] = score[at.high];
          index[at.low] = index[at.high];
          score[at.high] = low_score;
          index[at.high] = low_index;
        }
      }
      const unsigned int next_size = stride > 1 ? size : 2 * size;
      if (next_size <= kWarpLocalSize && next_size <= padded) {
        __syncwarp();
      } else {
        __syncthreads();
      }
    }
  }
}

// Keeps the `keep` (1 <= keep <= kGpuTopKMax) best of the slots, best first, and sets the
// threshold: sorts the entries appended since the last call and merges them with the sorted ones
// (ranked_lists.hpp), the same k entries in the same order as sorting all the slots. Called by
// every thread of the block, after a barrier that ends all appends.
__device__ __forceinline__ void sort_and_keep(BlockCandidates& slots, unsigned int keep) {
  const unsigned int count = slots.count;
  const unsigned int sorted = slots.sorted;
  sort_appended(slots, sorted, count);
  const RankedList kept{slots.score, slots.index, sorted};
  const RankedList appended{slots.score + sorted, slots.index + sorted, count - sorted};
  const unsigned int out = count < keep ? count : keep;
  // Each thread merges its ranks into registers (constant indices: unrolled) and writes them back
  // once every thread has read its inputs.
  const unsigned int first_rank = threadIdx.x * kKeptPerThread;
  double score[kKeptPerThread];
  std::uint64_t index[kKeptPerThread];
  unsigned int i = 0;
  unsigned int j = 0;
  if (first_rank < out) {
    i = merge_path_split(kept, appended, first_rank);
    j = first_rank - i;
  }
#pragma unroll
  for (unsigned int r = 0; r < kKeptPerThread; ++r) {
    if (first_rank + r < out) {
      const bool from_kept = merge_takes_a(kept, i, appended, j);
      score[r] = from_kept ? kept.score[i] : appended.score[j];
      index[r] = from_kept ? kept.index[i] : appended.index[j];
      i += from_kept ? 1 : 0;
      j += from_kept ? 0 : 1;
    }
  }
  __syncthreads();
#pragma unroll
  for (unsigned int r = 0; r < kKeptPerThread; ++r) {
    if (first_rank + r < out) {
      slots.score[first_rank + r] = score[r];
      slots.index[first_rank + r] = index[r];
      if (first_rank + r == keep - 1) slots.threshold = score[r];  // only when count >= keep
    }
  }
  if (threadIdx.x == 0) {
    slots.count = out;
    slots.sorted = out;
    if (count < keep) slots.threshold = -kInfinity;
  }
  __syncthreads();
}

// The grid-wide lower bound on the call's k-th best score (GridScoreWord, kNoPublishedScore before
// any block keeps k): raised by every block that keeps k, read by every warp once per round. Shared
// by every launch of one top-k (the chunks of a host array all fold into one running list).
// Publishes `kth`, the k-th score a block keeps (or -inf before it keeps k), and returns the bound
// after it.
__device__ __forceinline__ double publish_kth(unsigned long long* grid_bound, double kth) {
  GridScoreWord bound(grid_bound);
  return kth == -kInfinity ? bound.load() : bound.raise(kth);
}

// sort_and_keep, then the block's k-th score raises the grid's bound, and the block's threshold
// rises to the bound. A call, for top_k_blocks_kernel: it holds its tiles' ChaCha20 words and its
// tally across the call, and inlined, the merge's registers pushed those into local memory
// (ptxas: 104 bytes of spills). As a call, neither side's registers constrain the other's. Called
// by every thread of the block after a barrier that ends all appends; ends with one.
__device__ __noinline__ void keep_and_share_bound(BlockCandidates& slots, unsigned int keep,
                                                  unsigned long long* grid_bound) {
  sort_and_keep(slots, keep);
  if (threadIdx.x == 0) {
    const double bound = publish_kth(grid_bound, slots.threshold);
    if (bound > slots.threshold) slots.threshold = bound;
  }
  __syncthreads();
}

// Ends a round: every thread reads the count before any thread appends again, so all take the
// same branch. True when the next round might not fit: the caller then keeps k.
__device__ __forceinline__ bool end_round(BlockCandidates& slots) {
  __syncthreads();
  const bool full = slots.count > kTopKCapacity - kOffersPerRound;
  __syncthreads();
  return full;
}

// Writes the block's k best (padded with (-inf, kNoIndex)) to out[0, k), after sort_and_keep.
__device__ void write_kept(const BlockCandidates& slots, unsigned int k, RankedCandidate* out) {
  for (unsigned int i = threadIdx.x; i < k; i += kTopKThreads) {
    out[i] = i < slots.count ? RankedCandidate{slots.score[i], slots.index[i]} : RankedCandidate{-kInfinity, kNoIndex};
  }
}

// Races this warp's groups of one tile that can still rank, kRacesPerRound per round and widest
// first, against the larger of the block's threshold and the grid's bound; between rounds the
// block keeps k when the next round might not fit or k entries have been appended since the last
// keep (so the threshold follows the k-th best), and every warp drops the groups the raised
// threshold screens out. `pending`: the lanes whose group has something to score; `reach`: this
// lane's group_reach. Called by every thread of the block: the rounds end with block barriers, and
// the block goes on while any warp has groups left.
template <Generator G, class Source>
__device__ __forceinline__ void race_tile_groups(BlockCandidates& slots, unsigned int k,
                                                 unsigned long long* grid_bound, const NoiseSpec& spec,
                                                 const Source& source, std::uint64_t group, std::uint32_t screen,
                                                 const GroupScan& scan, double reach, unsigned int pending,
                                                 unsigned int lane) {
  // The race blocks of the groups that pass the first round's test, drawn together (pending only
  // shrinks, so no later round needs another).
  GroupRace own_race{0.0, 0u};
  bool drawn = false;
  for (;;) {
    const double bound = GridScoreWord(grid_bound).read(lane);
    const double threshold = bound > slots.threshold ? bound : slots.threshold;
    pending &= __ballot_sync(kAllLanes, !(reach < threshold));
    const bool races = pending != 0;
    if (races && !drawn) {
      own_race = own_group_race<GeneratorBlocks<G>>(spec, group, screen,
                                                    ((pending >> lane) & 1u) != 0 && scan.valid != 0);
      drawn = true;
    }
    BlockSink sink{&slots, threshold};
#pragma unroll 1
    for (unsigned int race = 0; race < kRacesPerRound && pending != 0; ++race) {
      const unsigned int next = widest_pending_lane(pending, reach, lane);
      race_group_by_warp<GeneratorBlocks<G>, FollowerScreen::by_threshold_only>(
          spec, __shfl_sync(kAllLanes, group, next), race_of_lane(own_race, next),
          __shfl_sync(kAllLanes, scan.valid, next), __shfl_sync(kAllLanes, scan.excluded, next), threshold, source,
          sink, lane);
      pending &= ~(1u << next);
    }
    // No warp raced (the common case): nothing was appended, and no warp has a group left.
    if (__syncthreads_or(races) == 0) return;
    // Every append of the round is done; the second barrier orders every read of the count before
    // the next round's appends, so all threads take the same branches.
    const bool keep = slots.count > kTopKCapacity - kOffersPerRound || slots.count - slots.sorted >= k;
    const bool more = __syncthreads_or(pending != 0) != 0;
    if (keep) keep_and_share_bound(slots, k, grid_bound);
    if (!more) return;
  }
}

// Two blocks fit in a multiprocessor's shared memory (64 KiB of slots and 36 KiB of load tiles
// each), which allows 128 registers a thread: no spills with either generator.
template <class Source, Generator G>
__global__ void __launch_bounds__(kTopKThreads, 2)
    top_k_blocks_kernel(Source source, GroupRange groups, NoiseSpec spec, unsigned int k,
                        unsigned long long* grid_bound, RankedCandidate* block_lists, ShardResult* block_tallies) {
  BlockCandidates& slots = *reinterpret_cast<BlockCandidates*>(dynamic_shared_bytes());
  __shared__ WarpTile tiles[kTopKThreads / kWarpLanes];
  WarpTile& warp_tile = tiles[threadIdx.x / kWarpLanes];
  const unsigned int lane = threadIdx.x % kWarpLanes;
  reset(slots);
  __shared__ ScreenBoundTable bounds;
  bounds.fill(spec.mechanism);
  ShardResult tally;
  tally.executed_on = ExecutedOn::gpu;
  constexpr unsigned int kWarps = kTopKThreads / kWarpLanes;
  const std::uint64_t end = end_tile(groups);
  const std::uint64_t block_first = first_tile(groups) + static_cast<std::uint64_t>(blockIdx.x) * kWarps;
  const std::uint64_t tile_step = static_cast<std::uint64_t>(gridDim.x) * kWarps;
  const std::uint64_t warp_first = block_first + threadIdx.x / kWarpLanes;
  const bool vector_aligned = groups_are_vector_aligned(source);
  TileScreens<G> screens;
  // The block takes kWarps consecutive tiles at a time, a warp's tile staged as in the single pick
  // (warp_tiles.cuh). The loops are uniform across the block (their bounds do not depend on the
  // thread), so every thread reaches each of race_tile_groups' barriers.
  std::uint64_t step = 0;
  for (std::uint64_t base = block_first; base < end; base += tile_step, ++step) {
    const std::uint64_t tile = warp_first + step * tile_step;  // past the end for some warps: no lanes
    const std::uint32_t screen = screens.next(spec, warp_first, tile_step, step, lane);
    GroupScan scan;
    if (tile < end) scan = scan_tile_group(spec, groups, source, tile, vector_aligned, warp_tile, lane, tally);
    const std::uint64_t group = tile * kTileGroups + lane;
    // A lane with nothing to score (past the end, or only invalid utilities) never races.
    const unsigned int pending = __ballot_sync(kAllLanes, (scan.valid | scan.excluded) != 0);
    race_tile_groups<G>(slots, k, grid_bound, spec, source, group, screen, scan,
                        group_reach(spec, scan, bounds.of_filled(screen)), pending, lane);
  }
  keep_and_share_bound(slots, k, grid_bound);
  write_kept(slots, k, block_lists + static_cast<std::uint64_t>(blockIdx.x) * k);
  using BlockReduce = cub::BlockReduce<ShardResult, kTopKThreads>;
  __shared__ typename BlockReduce::TempStorage reduce_storage;
  const ShardResult block_tally = BlockReduce(reduce_storage).Reduce(tally, MergeShards{});
  if (threadIdx.x == 0) block_tallies[blockIdx.x] = block_tally;
}

// One block: the k best of lists[0, entries) into out[0, k), and the merge of tallies[0, tally_count)
// into *tally_out; the k-th score, once there are k, raises the grid's bound (publish_kth) for the
// launches that follow. out and tally_out may alias the inputs' last entries: they are written only
// after every input has been read.
__global__ void __launch_bounds__(kTopKThreads)
    merge_lists_kernel(const RankedCandidate* lists, std::uint64_t entries, const ShardResult* tallies,
                       unsigned int tally_count, unsigned int k, RankedCandidate* out, ShardResult* tally_out,
                       unsigned long long* grid_bound) {
  BlockCandidates& slots = *reinterpret_cast<BlockCandidates*>(dynamic_shared_bytes());
  reset(slots);
  constexpr unsigned int kPerThread = kOffersPerRound / kTopKThreads;
  for (std::uint64_t round_base = 0; round_base < entries; round_base += kOffersPerRound) {
    BlockSink sink{&slots, slots.threshold};  // read after the last round's barriers
    for (unsigned int j = 0; j < kPerThread; ++j) {
      const std::uint64_t i = round_base + j * kTopKThreads + threadIdx.x;
      if (i < entries) sink.offer(lists[i].score, lists[i].index);
    }
    if (end_round(slots)) sort_and_keep(slots, k);
  }
  ShardResult tally;
  for (unsigned int b = threadIdx.x; b < tally_count; b += kTopKThreads) tally = merge(tally, tallies[b]);
  using BlockReduce = cub::BlockReduce<ShardResult, kTopKThreads>;
  __shared__ typename BlockReduce::TempStorage reduce_storage;
  const ShardResult total = BlockReduce(reduce_storage).Reduce(tally, MergeShards{});
  sort_and_keep(slots, k);  // its barriers also order every read of the inputs before the writes
  write_kept(slots, k, out);
  if (threadIdx.x == 0) {
    *tally_out = total;
    publish_kth(grid_bound, slots.threshold);  // the running list's k-th, once it holds k
  }
}

template <class Source>
unsigned int top_k_grid(std::uint64_t count, Generator generator) {
  std::uint64_t resident = 0;
  with_generator(generator, [&](auto g) {
    resident = resident_blocks(top_k_blocks_kernel<Source, g()>, kTopKThreads, kSharedBytes);
  });
  constexpr std::uint64_t warps = kTopKThreads / kWarpLanes;
  return filling_grid(resident, (tiles_spanning(count) + warps - 1) / warps);
}

template <class Source>
void allow_large_shared_memory(Generator generator) {
  with_generator(generator, [&](auto g) {
    DPSELECT_CUDA_TRY(cudaFuncSetAttribute(top_k_blocks_kernel<Source, g()>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(kSharedBytes)));
  });
  DPSELECT_CUDA_TRY(cudaFuncSetAttribute(merge_lists_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(kSharedBytes)));
}

// Device buffers of one top-k: the blocks' lists followed by the running list (k entries), the
// blocks' tallies followed by the running tally, and the grid's k-th score bound (publish_kth).
class TopKBuffers {
 public:
  TopKBuffers(unsigned int grid, unsigned int k, cudaStream_t stream)
      : grid_(grid),
        k_(k),
        lists_((static_cast<std::size_t>(grid) + 1) * k * sizeof(RankedCandidate), stream),
        tallies_((static_cast<std::size_t>(grid) + 1) * sizeof(ShardResult), stream),
        grid_bound_(sizeof(unsigned long long), stream) {
    const std::vector<RankedCandidate> empty_list(k, RankedCandidate{-kInfinity, kNoIndex});
    ShardResult empty_tally;
    empty_tally.executed_on = ExecutedOn::gpu;
    DPSELECT_CUDA_TRY(cudaMemcpyAsync(running_list(), empty_list.data(), k * sizeof(RankedCandidate),
                                      cudaMemcpyHostToDevice, stream));
    DPSELECT_CUDA_TRY(
        cudaMemcpyAsync(running_tally(), &empty_tally, sizeof(ShardResult), cudaMemcpyHostToDevice, stream));
    const unsigned long long no_bound = kNoPublishedScore;
    DPSELECT_CUDA_TRY(
        cudaMemcpyAsync(grid_bound(), &no_bound, sizeof(no_bound), cudaMemcpyHostToDevice, stream));
    DPSELECT_CUDA_TRY(cudaStreamSynchronize(stream));  // the host sources above go out of scope
  }
  RankedCandidate* block_lists() const { return lists_.as<RankedCandidate>(); }
  RankedCandidate* running_list() const { return block_lists() + static_cast<std::size_t>(grid_) * k_; }
  ShardResult* block_tallies() const { return tallies_.as<ShardResult>(); }
  ShardResult* running_tally() const { return block_tallies() + grid_; }
  unsigned long long* grid_bound() const { return grid_bound_.as<unsigned long long>(); }

 private:
  unsigned int grid_;
  unsigned int k_;
  DeviceScratch lists_;
  DeviceScratch tallies_;
  DeviceScratch grid_bound_;
};

// Pass 1 over candidates [begin, begin + count) and pass 2 folding it into the running list.
template <class Source>
void enqueue_top_k(const Source& source, std::uint64_t begin, std::uint64_t count, const NoiseSpec& spec,
                   unsigned int k, unsigned int grid, const TopKBuffers& buffers, cudaStream_t stream) {
  with_generator(spec.key.generator, [&](auto g) {
    launch_kernel<top_k_blocks_kernel<Source, g()>>(grid, kTopKThreads, kSharedBytes, stream, source,
                                                    GroupRange{begin, begin + count}, spec, k, buffers.grid_bound(),
                                                    buffers.block_lists(), buffers.block_tallies());
  });
  DPSELECT_CUDA_TRY(cudaGetLastError());
  // The running list and tally sit right after the blocks', so one merge reads all of them.
  launch_kernel<merge_lists_kernel>(1, kTopKThreads, kSharedBytes, stream, buffers.block_lists(),
                                    (static_cast<std::uint64_t>(grid) + 1) * k, buffers.block_tallies(), grid + 1, k,
                                    buffers.running_list(), buffers.running_tally(), buffers.grid_bound());
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
  allow_large_shared_memory<Source>(spec.key.generator);
  const unsigned int grid = top_k_grid<Source>(n, spec.key.generator);
  const TopKBuffers buffers(grid, k, stream);
  enqueue_top_k(Source{utilities, 0}, 0, n, spec, k, grid, buffers, stream);
  return read_back(buffers, k, stream);
}

// Host arrays: chunks streamed through the device (common/host_streaming.cuh), each folded into the
// running list while the next one is on its way.
template <class T>
TopKShard top_k_host(const NoiseSpec& spec, const T* utilities, std::uint64_t n, unsigned int k) {
  using Source = ArraySource<T>;
  HostStreaming<T> streaming(n, 1, streaming_chunk_bytes(kDefaultStreamingChunkBytes), StreamingDirection::to_device,
                             "cudaMallocFromPoolAsync(top-k chunk)");
  const cudaStream_t stream = streaming.compute_stream();
  allow_large_shared_memory<Source>(spec.key.generator);
  const unsigned int grid = top_k_grid<Source>(streaming.chunk_elements(), spec.key.generator);
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
