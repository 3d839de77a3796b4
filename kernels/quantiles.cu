// SPDX-License-Identifier: Apache-2.0
// The GPU side of quantile releases (quantiles_internal.hpp): device values to sorted grid
// slots (QuantileGrid::slot; "positions" below) that stay in device memory, the single-quantile
// interval and atom passes over them, and reading them back.
//
// Preparation. QuantileGrid::slot is non-decreasing in the value, so the slots of sorted values
// are the sorted slots. float32 values
// are therefore sorted as they are (CUB's radix sort over their 32 bits: the cost of sorting the
// array itself), and the sorted values are what the data keep: a pass computes a slot where it
// reads one (PositionsOfSortedFloats), with the function the host uses, so with the same bits.
// Storing the positions instead cost a pass writing 8 bytes a value and as much fresh device
// memory: at 2^30 values on an H200, 14.5 ms of mapping memory alone next to a 22.3-ms sort
// (bench/results/2026-11-26-nvidia-h200). Sorting the 42-bit slots instead of the floats would
// take 8-byte keys over six 8-bit passes, about three times the traffic. Doubles are mapped first
// and the slots sorted over bits [0, 42), fewer passes than the 64 bits of a double, and kept.
// Either way the first NaN is found, by index, before the sort.
//
// The interval pass (stage 1): a functor over the sorted positions in the fused selection pass,
// the intervals around the target rank first (score_lead_first), as the CPU pass does. Host
// positions (Backend::Gpu over host data) stream through the device in chunks.
//
// Permute-and-flip's pass (permute_and_flip_runs_kernel) scores every run, intervals and atoms in
// one launch, with the CPU pass's functions; its blocks' results merge as the fused pass's do.
//
// Memory for the lifetime of the data: 4 bytes a float32 value (the sorted values), 8 a double
// (the positions). On the way, floats take 8 bytes a value while sorting (the sorted copy and
// CUB's alternate buffer), doubles 16 (the positions and the sort's alternate buffer). Every buffer
// comes from the library's pool (device_memory.hpp).
#include <cuda_runtime.h>

#include <cub/block/block_reduce.cuh>
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "dpselect/detail/cuda_check.cuh"
#include "dpselect/detail/device_memory_pool.cuh"
#include "dpselect/detail/fused_select_kernel.cuh"
#include "dpselect/detail/kernel_launch.cuh"
#include "dpselect/errors.hpp"
#include "device/gpu.hpp"
#include "quantiles/gpu.hpp"
#include "common/host_streaming.cuh"
#include "common/launch_helpers.cuh"
#include "quantiles/quantiles_internal.hpp"

namespace dpselect::detail {
namespace {

using Policy = GridStridePolicy;
// The bits of a grid slot: below 2 (2^40 + 1) (QuantileRange::grid, QuantileGrid::slot).
constexpr int kPositionBits = 42;

// Makes `device` current for the guard's lifetime (the pass sizes its grid by the current device,
// and pool allocations follow the stream's device).
class CurrentDevice {
 public:
  explicit CurrentDevice(int device) : device_(device) {
    DPSELECT_CUDA_TRY(cudaGetDevice(&previous_));
    if (previous_ != device_) DPSELECT_CUDA_TRY(cudaSetDevice(device_));
  }
  CurrentDevice(const CurrentDevice&) = delete;
  CurrentDevice& operator=(const CurrentDevice&) = delete;
  ~CurrentDevice() {
    if (previous_ != device_) static_cast<void>(cudaSetDevice(previous_));
  }

 private:
  int device_;
  int previous_ = 0;
};

// Says nothing of the number of values (private under add/remove neighbours).
constexpr const char* kQuantileOutOfMemory =
    "dpselect: the device has too little free memory to prepare quantile data (the sorted data take 4 bytes per "
    "float32 value and 8 per double and stay on the device; sorting needs up to 8 bytes per value more); free "
    "device memory, or prepare the data from host memory";

// The pool's buffers of quantile preparation, a full device reported in their own words.
struct QuantileBuffer : DeviceScratch {
  QuantileBuffer(std::size_t bytes, cudaStream_t stream) : DeviceScratch(bytes, stream, kQuantileOutOfMemory) {}
};

// The deleter of the positions a Storage owns: a stream-ordered free on the device they live on.
// Every pass over them has synchronized its stream before returning, so nothing reads them any
// more. Runs in destructors: errors (the runtime already unloading at exit) are dropped, and
// cleared so that no later launch check reports them.
struct FreeOnDevice {
  int device;
  void operator()(void* pointer) const noexcept {
    int previous = device;
    bool failed = cudaGetDevice(&previous) != cudaSuccess;
    const bool switch_device = !failed && previous != device;
    failed = failed || (switch_device && cudaSetDevice(device) != cudaSuccess) ||
             cudaFreeAsync(pointer, cudaStreamPerThread) != cudaSuccess;
    if (failed) static_cast<void>(cudaGetLastError());
    if (switch_device) static_cast<void>(cudaSetDevice(previous));
  }
};

// positions[i] = grid.slot(values[i]) (positions may be null: nothing written): the CPU's bits
// (QuantileGrid is written with the _rn operations of host_device.hpp). With `first_nan`, the
// smallest NaN index is recorded there as well (whose slot is never used: the caller refuses the
// data); with `on_points`, a 1 where any value sits on a grid point (an odd slot: a release then
// scores atoms; QuantileData::Storage::has_values_on_points).
template <class T>
__global__ void __launch_bounds__(Policy::kBlockThreads) grid_positions_kernel(const T* values, std::uint64_t count,
                                                                       QuantileGrid grid, std::uint64_t* positions,
                                                                       unsigned long long* first_nan,
                                                                       unsigned int* on_points) {
  std::uint64_t local_first = count;
  bool local_on_points = false;
  for (const std::uint64_t i : grid_stride_indices<Policy::kBlockThreads>(count)) {
    const double value = static_cast<double>(values[i]);
    if (isnan(value) && i < local_first) local_first = i;
    const std::uint64_t slot = grid.slot(value);
    local_on_points = local_on_points || slot_is_point(slot);
    if (positions != nullptr) positions[i] = slot;
  }
  if (first_nan != nullptr && local_first < count) atomicMin(first_nan, static_cast<unsigned long long>(local_first));
  if (on_points != nullptr && local_on_points) atomicOr(on_points, 1u);
}

// A device word for the first NaN's index: all ones ("none") until a kernel records one.
QuantileBuffer no_nan_yet(cudaStream_t stream) {
  QuantileBuffer first_nan(sizeof(unsigned long long), stream);
  DPSELECT_CUDA_TRY(cudaMemsetAsync(first_nan.as<void>(), 0xFF, sizeof(unsigned long long), stream));
  return first_nan;
}

// The first NaN of `values` as *first_nan (device memory) holds its index: count when there is
// none. Synchronizes `stream`.
struct FirstNan {
  std::uint64_t index;
  double value;
};
template <class T>
FirstNan first_nan_of(const T* values, std::uint64_t count, const unsigned long long* first_nan, cudaStream_t stream) {
  const std::uint64_t first = read_device_value(first_nan, stream);
  if (first >= count) return FirstNan{count, 0.0};
  return FirstNan{first, static_cast<double>(read_device_value(values + first, stream))};
}

// float32: a scan for NaN and for values on grid points (slots computed, not stored), then CUB
// sort of the values into a copy, which the data keep.
// *nan: the first NaN; nothing is sorted (an empty buffer) when there is one.
QuantileBuffer sorted_copy_of(const float* values, std::uint64_t count, const QuantileGrid& grid,
                              unsigned int* on_points, FirstNan* nan, cudaStream_t stream) {
  const QuantileBuffer first_nan = no_nan_yet(stream);
  launch_kernel<grid_positions_kernel<float>>(grid_blocks<Policy>(count), Policy::kBlockThreads, 0, stream, values,
                                              count, grid, nullptr, first_nan.as<unsigned long long>(), on_points);
  DPSELECT_CUDA_TRY(cudaGetLastError());
  *nan = first_nan_of(values, count, first_nan.as<unsigned long long>(), stream);
  if (nan->index < count) return QuantileBuffer(0, stream);

  QuantileBuffer sorted(count * sizeof(float), stream);
  std::size_t temp_bytes = 0;
  DPSELECT_CUDA_TRY(with_item_count(count, [&](auto items) {
    return cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, values, sorted.as<float>(), items, 0, 32, stream);
  }));
  QuantileBuffer temp(temp_bytes, stream);  // holds CUB's alternate copy of the keys
  DPSELECT_CUDA_TRY(with_item_count(count, [&](auto items) {
    return cub::DeviceRadixSort::SortKeys(temp.as<void>(), temp_bytes, values, sorted.as<float>(), items, 0, 32,
                                          stream);
  }));
  return sorted;
}

// double: slots (and the first NaN) in one pass, then CUB sort of the slots' 42 bits.
QuantileBuffer sorted_positions_of(const double* values, std::uint64_t count, const QuantileGrid& grid,
                                   unsigned int* on_points, FirstNan* nan, cudaStream_t stream) {
  const QuantileBuffer first_nan = no_nan_yet(stream);
  QuantileBuffer positions(count * sizeof(std::uint64_t), stream);
  launch_kernel<grid_positions_kernel<double>>(grid_blocks<Policy>(count), Policy::kBlockThreads, 0, stream, values,
                                               count, grid, positions.as<std::uint64_t>(),
                                               first_nan.as<unsigned long long>(), on_points);
  DPSELECT_CUDA_TRY(cudaGetLastError());
  *nan = first_nan_of(values, count, first_nan.as<unsigned long long>(), stream);
  if (nan->index < count) return QuantileBuffer(0, stream);

  QuantileBuffer alternate(count * sizeof(std::uint64_t), stream);
  cub::DoubleBuffer<std::uint64_t> keys(positions.as<std::uint64_t>(), alternate.as<std::uint64_t>());
  std::size_t temp_bytes = 0;
  DPSELECT_CUDA_TRY(with_item_count(count, [&](auto items) {
    return cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, keys, items, 0, kPositionBits, stream);
  }));
  {
    QuantileBuffer temp(temp_bytes, stream);
    DPSELECT_CUDA_TRY(with_item_count(count, [&](auto items) {
      return cub::DeviceRadixSort::SortKeys(temp.as<void>(), temp_bytes, keys, items, 0, kPositionBits, stream);
    }));
  }
  // CUB leaves the sorted keys in either buffer (keys.selector); the other is freed on return.
  return keys.Current() == positions.as<std::uint64_t>() ? std::move(positions) : std::move(alternate);
}

template <class T>
PreparedQuantileData prepare(const T* values, std::uint64_t count, const QuantileRange& range, cudaStream_t stream) {
  auto storage = std::make_shared<QuantileData::Storage>();
  storage->range = range;
  storage->grid = range.grid();
  storage->count = count;
  DPSELECT_CUDA_TRY(cudaGetDevice(&storage->device_ordinal));
  const QuantileBuffer on_points(sizeof(unsigned int), stream);
  DPSELECT_CUDA_TRY(cudaMemsetAsync(on_points.as<void>(), 0, sizeof(unsigned int), stream));
  FirstNan nan{count, 0.0};
  QuantileBuffer sorted = [&] {
    if constexpr (std::is_same_v<T, float>) {
      return sorted_copy_of(values, count, storage->grid, on_points.as<unsigned int>(), &nan, stream);
    } else {
      return sorted_positions_of(values, count, storage->grid, on_points.as<unsigned int>(), &nan, stream);
    }
  }();
  if (nan.index < count) return PreparedQuantileData{nullptr, nan.index, nan.value};
  // Synchronizes the stream: the sort is complete as well.
  storage->has_values_on_points = read_device_value(on_points.as<unsigned int>(), stream) != 0;
  storage->device_data = std::shared_ptr<void>(sorted.release(), FreeOnDevice{storage->device_ordinal});
  storage->device_data_is_sorted_floats = std::is_same_v<T, float>;
  return PreparedQuantileData{std::move(storage), count, 0.0};
}

// The sorted positions as stored: host chunks, or the device data of doubles.
struct StoredPositions {
  const std::uint64_t* positions;
  __device__ std::uint64_t operator[](std::uint64_t i) const { return positions[i]; }
};

// The sorted slots of sorted float32 values, computed where they are read: the preparation's
// own QuantileGrid::slot, hence the bits the host stores for the same values.
struct PositionsOfSortedFloats {
  const float* values;
  QuantileGrid grid;
  __device__ std::uint64_t operator[](std::uint64_t i) const { return grid.slot(static_cast<double>(values[i])); }
};

// The stage-1 utility of interval r (the candidate index) from sorted positions in device memory,
// as QuantileIntervalUtilities::fill computes it over DataIntervals{positions, grid size}: the same
// operations, so the same bits. The positions held from index first_position on (all of them for
// device data; one chunk of the host's at a time); the interval at first_position starts at
// position_before, the position just before the chunk.
template <class Positions>
struct DeviceIntervalUtility {
  Positions positions;
  std::uint64_t first_position;
  std::uint64_t position_before;  // positions[first_position - 1]; unused when first_position is 0
  std::uint64_t count;            // n: intervals 0 .. n
  std::uint64_t grid_size;
  double target;
  double score_scale;

  __device__ double operator()(std::uint64_t interval) const {
    const std::uint64_t begin_slot = interval == 0                ? 0
                                     : interval == first_position ? position_before
                                                                  : positions[interval - 1 - first_position];
    const std::uint64_t begin = grid_position_of_slot(begin_slot);
    std::uint64_t end = grid_size;
    if (interval < count) {  // DataIntervals::length_without_atom: the last point is an atom when on a value
      const std::uint64_t end_slot = positions[interval - first_position];
      end = grid_position_of_slot(end_slot);
      if (slot_is_point(end_slot) && end > begin) --end;
    }
    return quantile_interval_utility(interval, end - begin, target, score_scale);
  }
};

// The utility of the atom at candidate kAtomCandidateOffset + r, as QuantileIntervalUtilities::
// fill_atoms computes it over DataIntervals: value r on a grid point and the first value there,
// scored by the run of values tied on it (an exponential search over the sorted slots).
template <class Positions>
struct DeviceAtomUtility {
  Positions positions;  // all n sorted slots (device data)
  std::uint64_t count;  // n
  double target;

  __device__ double operator()(std::uint64_t candidate) const {
    const std::uint64_t r = candidate - kAtomCandidateOffset;
    const std::uint64_t slot = positions[r];
    if (!slot_is_point(slot) || (r > 0 && positions[r - 1] == slot)) return -kInfinity;
    return quantile_atom_utility(r, tied_run_length(positions, r, count), target);
  }
};

// Host positions (Backend::Gpu over host data): streamed through the device in chunks
// (common/host_streaming.cuh), each pass scoring the intervals that end in its chunk, into one
// accumulator. The noise of interval r depends on r alone, so the chunking never changes the
// result, and data larger than the device still runs. known_score: fused_select_kernel's.
// Permute-and-flip's stage 1 (quantiles_internal.hpp): item k <= n is interval k (its points
// other than its atom), item n + 1 + r the atom of interval r; every run's score is
// permute_and_flip_run_score, offered as the CPU pass offers it, and each block's ShardResult goes
// to block_results (merged by the fused pass's merge_block_results_kernel).
template <class Positions>
__global__ void __launch_bounds__(Policy::kBlockThreads)
    permute_and_flip_runs_kernel(Positions positions, std::uint64_t count, std::uint64_t grid_size, double target,
                                 NoiseSpec spec, std::uint64_t runs, ShardResult* block_results) {
  ShardResult local;
  local.executed_on = ExecutedOn::gpu;
  for (const std::uint64_t k : grid_stride_indices<Policy::kBlockThreads>(runs)) {
    std::uint64_t index = k;
    std::uint64_t points = 0;
    double utility = -kInfinity;
    if (k <= count) {
      const std::uint64_t begin = k == 0 ? 0 : grid_position_of_slot(positions[k - 1]);
      std::uint64_t end = grid_size;
      if (k < count) {  // DataIntervals::length_without_atom
        const std::uint64_t end_slot = positions[k];
        end = grid_position_of_slot(end_slot);
        if (slot_is_point(end_slot) && end > begin) --end;
      }
      points = end - begin;
      utility = quantile_rank_utility(k, target);
    } else {
      const std::uint64_t r = k - count - 1;
      index = kAtomCandidateOffset + r;
      const std::uint64_t slot = positions[r];
      if (slot_is_point(slot) && (r == 0 || positions[r - 1] != slot)) {  // DataIntervals::ends_with_atom
        points = 1;
        utility = quantile_atom_utility(r, tied_run_length(positions, r, count), target);
      }
    }
    if (points == 0) {
      ++local.candidates;
    } else {
      offer_run(local, index, utility, permute_and_flip_run_score(spec, index, utility, points));
    }
  }
  using BlockReduce = cub::BlockReduce<ShardResult, Policy::kBlockThreads>;
  __shared__ typename BlockReduce::TempStorage temp_storage;
  const ShardResult block_result = BlockReduce(temp_storage).Reduce(local, MergeShards{});
  if (threadIdx.x == 0) block_results[blockIdx.x] = block_result;
}

ShardResult score_host_positions(const DeviceIntervalUtility<StoredPositions>& utility,
                                 const std::uint64_t* host_positions,
                                 const NoiseSpec& spec, IndexRange range, double known_score) {
  const std::uint64_t n = utility.count;
  // Positions [first, last): the ends of the intervals in `range` below n, or (for interval n
  // alone) the last position, its begin.
  const std::uint64_t first = std::min(range.begin, n - 1);
  const std::uint64_t last = std::max(std::min(range.end, n), first + 1);
  HostStreaming<std::uint64_t> streaming(last - first, 1, streaming_chunk_bytes(kDefaultStreamingChunkBytes),
                                         StreamingDirection::to_device,
                                         "cudaMallocFromPoolAsync(quantile positions chunk)");
  const cudaStream_t stream = streaming.compute_stream();
  using Source = FunctorSource<DeviceIntervalUtility<StoredPositions>>;
  // A chunk's pass covers one interval more than its positions when it ends at n.
  const unsigned int grid = fused_select_grid<Source>(streaming.chunk_elements() + 1, spec.key.generator);
  const FusedSelectScratch scratch(grid, stream);
  streaming.upload_each(host_positions + first, [&](const std::uint64_t* chunk, std::uint64_t offset,
                                                    std::uint64_t elements) {
    const std::uint64_t chunk_first = first + offset;
    const std::uint64_t chunk_end = chunk_first + elements;
    const std::uint64_t begin = std::max(chunk_first, range.begin);
    const std::uint64_t end = chunk_end == n && range.end == n + 1 ? n + 1 : std::min(chunk_end, range.end);
    if (begin >= end) return;
    DeviceIntervalUtility<StoredPositions> chunk_utility = utility;
    chunk_utility.positions = StoredPositions{chunk};
    chunk_utility.first_position = chunk_first;
    chunk_utility.position_before = chunk_first == 0 ? 0 : host_positions[chunk_first - 1];
    enqueue_fused_select(Source{chunk_utility}, begin, end - begin, spec, scratch, stream, known_score);
  });
  return scratch.result(stream);
}

// The intervals scored first: within 2^12 of the target rank, as on the CPU (single_quantile.cpp).
constexpr std::uint64_t kLeadHalfWidth = std::uint64_t{1} << 12;

// score(part, known_score) over `range` (intervals of n values), the intervals around the target
// rank first. Utilities rise towards the target, so in one pass every thread would find a new
// best in each group it meets below the target and score it in full; with the lead's best score
// as the starting threshold (fused_select_kernel's known_score) those groups are skipped whole.
// The merge of the parts is the one-pass result.
template <class Score>
ShardResult score_lead_first(const Score& score, double target, std::uint64_t n, IndexRange range) {
  const auto rank = static_cast<std::uint64_t>(std::clamp(target, 0.0, static_cast<double>(n)));
  const IndexRange lead{std::max(range.begin, rank > kLeadHalfWidth ? rank - kLeadHalfWidth : 0),
                        std::min(range.end, rank + kLeadHalfWidth + 1)};
  if (lead.begin >= lead.end || lead.size() == range.size()) return score(range, -kInfinity);
  ShardResult result = score(lead, -kInfinity);
  const double known_score = result.best_score;
  if (range.begin < lead.begin) result = merge(result, score(IndexRange{range.begin, lead.begin}, known_score));
  if (lead.end < range.end) result = merge(result, score(IndexRange{lead.end, range.end}, known_score));
  return result;
}

}  // namespace

PreparedQuantileData gpu_prepare_quantile_data(const double* values, std::uint64_t count, const QuantileRange& range,
                                               cuda_stream_t stream) {
  return prepare(values, count, range, stream);
}

PreparedQuantileData gpu_prepare_quantile_data(const float* values, std::uint64_t count, const QuantileRange& range,
                                               cuda_stream_t stream) {
  return prepare(values, count, range, stream);
}

ShardResult gpu_score_quantile_intervals(const SingleQuantilePlan& plan, const NoiseSpec& spec,
                                         const QuantileData::Storage& data, IndexRange range) {
  if (range.begin >= range.end || range.end > data.count + 1) {
    throw std::logic_error("dpselect: quantile intervals outside [0, n]");
  }
  if (!data.on_device()) {
    const DeviceIntervalUtility<StoredPositions> utility{
        {nullptr}, 0, 0, data.count, data.grid.size, plan.target, plan.score_scale};
    const std::uint64_t* host_positions = data.sorted_host_positions().data();
    return score_lead_first(
        [&](IndexRange part, double known_score) {
          return score_host_positions(utility, host_positions, spec, part, known_score);
        },
        plan.target, data.count, range);
  }
  const CurrentDevice device(data.device_ordinal);
  const OwnedStream stream;
  const auto score_on_device = [&](auto positions) {
    using Utility = DeviceIntervalUtility<decltype(positions)>;
    const Utility utility{positions, 0, 0, data.count, data.grid.size, plan.target, plan.score_scale};
    return score_lead_first(
        [&](IndexRange part, double known_score) {
          return run_fused_select(FunctorSource<Utility>{utility}, part.begin, part.size(), spec, stream.get(),
                                  known_score);
        },
        plan.target, data.count, range);
  };
  if (data.device_data_is_sorted_floats) {
    return score_on_device(PositionsOfSortedFloats{static_cast<const float*>(data.device_data.get()), data.grid});
  }
  return score_on_device(StoredPositions{static_cast<const std::uint64_t*>(data.device_data.get())});
}

ShardResult gpu_score_quantile_atoms(const SingleQuantilePlan& plan, const NoiseSpec& spec,
                                     const QuantileData::Storage& data, IndexRange atoms, double known_score) {
  if (!data.on_device() || atoms.begin != kAtomCandidateOffset || atoms.end > kAtomCandidateOffset + data.count) {
    throw std::logic_error("dpselect: quantile atoms outside kAtomCandidateOffset + [0, n) of device data");
  }
  const CurrentDevice device(data.device_ordinal);
  const OwnedStream stream;
  // The intervals' best score screens the atoms: only those near the target can reach it.
  const auto score_on_device = [&](auto positions) {
    using Utility = DeviceAtomUtility<decltype(positions)>;
    return run_fused_select(FunctorSource<Utility>{Utility{positions, data.count, plan.target}}, atoms.begin,
                            atoms.size(), spec, stream.get(), known_score);
  };
  if (data.device_data_is_sorted_floats) {
    return score_on_device(PositionsOfSortedFloats{static_cast<const float*>(data.device_data.get()), data.grid});
  }
  return score_on_device(StoredPositions{static_cast<const std::uint64_t*>(data.device_data.get())});
}

ShardResult gpu_permute_and_flip_quantile_runs(const SingleQuantilePlan& plan, const NoiseSpec& spec,
                                               const QuantileData::Storage& data, bool has_atoms) {
  const std::uint64_t n = data.count;
  const std::uint64_t runs = n + 1 + (has_atoms ? n : 0);
  const auto score_on = [&](auto positions, cudaStream_t stream) {
    const unsigned int grid = grid_blocks<Policy>(runs);
    const FusedSelectScratch scratch(grid, stream);
    launch_kernel<permute_and_flip_runs_kernel<decltype(positions)>>(grid, Policy::kBlockThreads, 0, stream,
                                                                      positions, n, data.grid.size, plan.target, spec,
                                                                      runs, scratch.block_results());
    DPSELECT_CUDA_TRY(cudaGetLastError());
    launch_kernel<merge_block_results_kernel<Policy::kBlockThreads>>(1, Policy::kBlockThreads, 0, stream,
                                                                      scratch.block_results(), grid,
                                                                      scratch.accumulator());
    DPSELECT_CUDA_TRY(cudaGetLastError());
    return scratch.result(stream);
  };
  if (!data.on_device()) {  // Backend::Gpu over host data: the sorted slots copied for the pass
    const std::span<const std::uint64_t> sorted = data.sorted_host_positions();
    const OwnedStream stream;
    const QuantileBuffer copy(n * sizeof(std::uint64_t), stream.get());
    DPSELECT_CUDA_TRY(cudaMemcpyAsync(copy.as<std::uint64_t>(), sorted.data(), n * sizeof(std::uint64_t),
                                      cudaMemcpyHostToDevice, stream.get()));
    return score_on(StoredPositions{copy.as<std::uint64_t>()}, stream.get());
  }
  const CurrentDevice device(data.device_ordinal);
  const OwnedStream stream;
  if (data.device_data_is_sorted_floats) {
    return score_on(PositionsOfSortedFloats{static_cast<const float*>(data.device_data.get()), data.grid},
                    stream.get());
  }
  return score_on(StoredPositions{static_cast<const std::uint64_t*>(data.device_data.get())}, stream.get());
}

std::vector<std::uint64_t> gpu_read_quantile_positions(const QuantileData::Storage& data, std::uint64_t first,
                                                       std::uint64_t count) {
  if (first > data.count || count > data.count - first) {
    throw std::logic_error("dpselect: quantile positions outside [0, n)");
  }
  if (!data.on_device()) {
    const std::span<const std::uint64_t> positions = data.sorted_host_positions().subspan(first, count);
    return std::vector<std::uint64_t>(positions.begin(), positions.end());
  }
  std::vector<std::uint64_t> positions(count);
  if (count == 0) return positions;
  const CurrentDevice device(data.device_ordinal);
  const OwnedStream stream;
  if (!data.device_data_is_sorted_floats) {
    DPSELECT_CUDA_TRY(cudaMemcpyAsync(positions.data(), static_cast<const std::uint64_t*>(data.device_data.get()) + first,
                                      count * sizeof(std::uint64_t), cudaMemcpyDeviceToHost, stream.get()));
    DPSELECT_CUDA_TRY(cudaStreamSynchronize(stream.get()));
    return positions;
  }
  const float* sorted = static_cast<const float*>(data.device_data.get()) + first;
  // A few slots (a single-quantile release reads its interval's one or two ends): the floats
  // copied out and mapped here by the same QuantileGrid::slot, whose result is exact on either
  // side (fma_rn, no contraction), so the same bits without a device buffer or a launch.
  constexpr std::uint64_t kMapOnHostBelow = std::uint64_t{1} << 16;
  if (count < kMapOnHostBelow) {
    std::vector<float> values(count);
    DPSELECT_CUDA_TRY(cudaMemcpyAsync(values.data(), sorted, count * sizeof(float), cudaMemcpyDeviceToHost,
                                      stream.get()));
    DPSELECT_CUDA_TRY(cudaStreamSynchronize(stream.get()));
    std::transform(values.begin(), values.end(), positions.begin(),
                   [&](float value) { return data.grid.slot(static_cast<double>(value)); });
    return positions;
  }
  // Many: computed on the device (the preparation's kernel) in chunks of 128 MiB, each copied
  // out, so that reading all of them never needs 8 bytes a value on the device.
  constexpr std::uint64_t kChunkPositions = std::uint64_t{1} << 24;
  const QuantileBuffer chunk(std::min(count, kChunkPositions) * sizeof(std::uint64_t), stream.get());
  for (std::uint64_t done = 0; done < count; done += kChunkPositions) {
    const std::uint64_t elements = std::min(kChunkPositions, count - done);
    launch_kernel<grid_positions_kernel<float>>(grid_blocks<Policy>(elements), Policy::kBlockThreads, 0, stream.get(),
                                                sorted + done, elements, data.grid, chunk.as<std::uint64_t>(), nullptr,
                                                nullptr);
    DPSELECT_CUDA_TRY(cudaGetLastError());
    DPSELECT_CUDA_TRY(cudaMemcpyAsync(positions.data() + done, chunk.as<std::uint64_t>(),
                                      elements * sizeof(std::uint64_t), cudaMemcpyDeviceToHost, stream.get()));
  }
  DPSELECT_CUDA_TRY(cudaStreamSynchronize(stream.get()));
  return positions;
}

}  // namespace dpselect::detail
