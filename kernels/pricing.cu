// SPDX-License-Identifier: Apache-2.0
// GPU pricing over a grid: the revenue of each grid price is computed inside the fused
// selection pass (binary search over the sorted bids in device memory), never materialized.
#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>

#include "pricing/gpu.hpp"
#include "dpselect/detail/fused_select_kernel.cuh"

namespace dpselect::detail {
namespace {

struct DeviceGridRevenue {
  const double* sorted_bids;
  std::uint64_t bid_count;
  PriceGrid grid;

  // Same value as the CPU's merge walk: price * #{bids >= price}, one rounding.
  __device__ double operator()(std::uint64_t index) const {
    const double price = grid.price(index);
    std::uint64_t below = 0;
    std::uint64_t above = bid_count;
    while (below < above) {  // first bid >= price
      const std::uint64_t middle = below + (above - below) / 2;
      if (sorted_bids[middle] < price) below = middle + 1; else above = middle;
    }
    return mul_rn(price, u64_to_double_rn(bid_count - below));
  }
};

}  // namespace

ShardResult gpu_evaluate_price_grid(const NoiseSpec& spec, std::span<const double> sorted_bids,
                                    const PriceGrid& grid, IndexRange range) {
  const OwnedStream owned_stream;
  const cudaStream_t stream = owned_stream.get();
  DeviceScratch bids(sorted_bids.size_bytes(), stream);
  DPSELECT_CUDA_TRY(cudaMemcpyAsync(bids.as<double>(), sorted_bids.data(), sorted_bids.size_bytes(),
                                    cudaMemcpyHostToDevice, stream));
  const DeviceGridRevenue revenue{bids.as<double>(), sorted_bids.size(), grid};
  return run_fused_select(FunctorSource<DeviceGridRevenue>{revenue}, range.begin, range.size(), spec, stream);
}

void gpu_sort(std::span<double> values) {
  const OwnedStream owned_stream;
  const cudaStream_t stream = owned_stream.get();
  const int count = static_cast<int>(values.size());  // CUB's radix sort takes an int count
  DeviceScratch keys_in(values.size_bytes(), stream);
  DeviceScratch keys_out(values.size_bytes(), stream);
  std::size_t temp_bytes = 0;
  DPSELECT_CUDA_TRY(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, keys_in.as<double>(), keys_out.as<double>(),
                                                   count, 0, 64, stream));
  DeviceScratch temp(temp_bytes, stream);
  DPSELECT_CUDA_TRY(cudaMemcpyAsync(keys_in.as<double>(), values.data(), values.size_bytes(), cudaMemcpyHostToDevice,
                                    stream));
  DPSELECT_CUDA_TRY(cub::DeviceRadixSort::SortKeys(temp.as<void>(), temp_bytes, keys_in.as<double>(),
                                                   keys_out.as<double>(), count, 0, 64, stream));
  DPSELECT_CUDA_TRY(cudaMemcpyAsync(values.data(), keys_out.as<double>(), values.size_bytes(), cudaMemcpyDeviceToHost,
                                    stream));
  DPSELECT_CUDA_TRY(cudaStreamSynchronize(stream));
}

}  // namespace dpselect::detail
