// SPDX-License-Identifier: Apache-2.0
// The release threshold of the library's device memory pools (dpselect/device_memory.hpp): set
// by host/engine/device_memory.cpp, read by the pools when they are created
// (kernels/device_memory.cu).
#pragma once

#include <cstdint>
#include <mutex>

namespace dpselect::detail {

// Held while the threshold is set (and applied to the pools that exist) and while a pool is
// created: a pool created while another thread sets the threshold then ends with the new one.
std::mutex& device_memory_mutex();

// The threshold last set; read it with device_memory_mutex() held.
std::uint64_t release_threshold_setting();

}  // namespace dpselect::detail
