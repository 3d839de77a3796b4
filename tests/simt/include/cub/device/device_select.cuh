// SPDX-License-Identifier: Apache-2.0
// cub::DeviceSelect::Flagged and ::Unique for the simt build: the selected items in input order
// and their number written to device memory. Run at once on the host (streams are eager).
#pragma once

#include <cstdint>

#include "simt/collectives.hpp"

namespace cub {

struct DeviceSelect {
  template <class In, class Flags, class Out, class NumSelected, class NumItems>
  static cudaError_t Flagged(void* temp, std::size_t& temp_bytes, In in, Flags flags, Out out,
                             NumSelected num_selected, NumItems count, cudaStream_t = nullptr) {
    const char* const kName = "cub::DeviceSelect::Flagged";
    const auto n = static_cast<std::uint64_t>(count);
    if (::simt::cub_model::temp_storage_query(temp, temp_bytes, 256, kName)) return cudaSuccess;
    ::simt::cub_model::require_items(in, n, kName);
    ::simt::cub_model::require_items(flags, n, kName);
    ::simt::cub_model::require_items(num_selected, 1, kName);
    std::uint64_t selected = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      if (flags[i]) {
        ::simt::cub_model::require_items(out + selected, 1, kName);
        out[selected++] = in[i];
      }
    }
    *num_selected = static_cast<std::remove_reference_t<decltype(*num_selected)>>(selected);
    return cudaSuccess;
  }

  // The first of each run of equal items (operator==).
  template <class In, class Out, class NumSelected, class NumItems>
  static cudaError_t Unique(void* temp, std::size_t& temp_bytes, In in, Out out, NumSelected num_selected,
                            NumItems count, cudaStream_t = nullptr) {
    const char* const kName = "cub::DeviceSelect::Unique";
    const auto n = static_cast<std::uint64_t>(count);
    if (::simt::cub_model::temp_storage_query(temp, temp_bytes, 256, kName)) return cudaSuccess;
    ::simt::cub_model::require_items(in, n, kName);
    ::simt::cub_model::require_items(num_selected, 1, kName);
    std::uint64_t selected = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      if (i == 0 || !(in[i] == in[i - 1])) {
        ::simt::cub_model::require_items(out + selected, 1, kName);
        out[selected++] = in[i];
      }
    }
    *num_selected = static_cast<std::remove_reference_t<decltype(*num_selected)>>(selected);
    return cudaSuccess;
  }
};

}  // namespace cub
