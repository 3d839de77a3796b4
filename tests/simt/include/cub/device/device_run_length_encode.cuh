// SPDX-License-Identifier: Apache-2.0
// cub::DeviceRunLengthEncode::Encode for the simt build: each run of equal items (operator==) as
// its first item and its length, and the number of runs, written to device memory. Run at once on
// the host (streams are eager).
#pragma once

#include <cstdint>

#include "simt/collectives.hpp"

namespace cub {

struct DeviceRunLengthEncode {
  template <class In, class UniqueOut, class LengthsOut, class NumRuns, class NumItems>
  static cudaError_t Encode(void* temp, std::size_t& temp_bytes, In in, UniqueOut unique_out, LengthsOut lengths_out,
                            NumRuns num_runs, NumItems count, cudaStream_t = nullptr) {
    const char* const kName = "cub::DeviceRunLengthEncode::Encode";
    const auto n = static_cast<std::uint64_t>(count);
    if (::simt::cub_model::temp_storage_query(temp, temp_bytes, 256, kName)) return cudaSuccess;
    ::simt::cub_model::require_items(in, n, kName);
    ::simt::cub_model::require_items(num_runs, 1, kName);
    std::uint64_t runs = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      if (i == 0 || !(in[i] == in[i - 1])) {
        ::simt::cub_model::require_items(unique_out + runs, 1, kName);
        ::simt::cub_model::require_items(lengths_out + runs, 1, kName);
        unique_out[runs] = in[i];
        lengths_out[runs] = 0;
        ++runs;
      }
      ++lengths_out[runs - 1];
    }
    *num_runs = static_cast<std::remove_reference_t<decltype(*num_runs)>>(runs);
    return cudaSuccess;
  }
};

}  // namespace cub
