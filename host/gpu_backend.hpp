// The GPU path as the host sees it. Implemented in kernels/ when built with CUDA, and by
// host/gpu_unavailable.cpp (every call throws BackendUnavailable) otherwise.
#pragma once

#include <span>

#include "dpselect/context.hpp"
#include "dpselect/pricing.hpp"
#include "dpselect/shard_result.hpp"

namespace dpselect::detail {

// Validates device-memory utilities for `backend` (InvalidArgument, BackendUnavailable) without
// drawing a stream.
void validate_device_utilities(const void* data, std::uint64_t size, std::uint64_t first_index,
                               Backend backend);

bool cuda_backend_compiled();
// A CUDA device exists and its runtime initialises. Cached after the first call.
bool cuda_device_usable();

// Utilities already in device memory, range.size() of them starting at `utilities`.
ShardResult gpu_evaluate_device(const NoiseSpec& spec, const float* utilities, IndexRange range,
                                cuda_stream_t stream);
ShardResult gpu_evaluate_device(const NoiseSpec& spec, const double* utilities, IndexRange range,
                                cuda_stream_t stream);
// Utilities in host memory, streamed to the device in chunks that fit its free memory.
ShardResult gpu_evaluate_host(const NoiseSpec& spec, const float* utilities, IndexRange range);
ShardResult gpu_evaluate_host(const NoiseSpec& spec, const double* utilities, IndexRange range);
// Revenue of grid prices 0..count-1 against the sorted bids, computed in the fused pass.
ShardResult gpu_evaluate_price_grid(const NoiseSpec& spec, std::span<const double> sorted_bids,
                                    const PriceGrid& grid, std::uint64_t count);

// Sorts `values` (finite doubles) ascending on the device: CUB's radix sort. Throws CudaError.
void gpu_sort(std::span<double> values);

}  // namespace dpselect::detail
