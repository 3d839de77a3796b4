// SPDX-License-Identifier: Apache-2.0
// The GPU memory the library keeps between calls: a larger release threshold for a process that
// has the GPU to itself, and what the library holds idle handed back at the end. Runs on any
// build: without a usable GPU the releases run on the CPU and the threshold is only recorded.
#include <dpselect/dpselect.hpp>

#include <cstdint>
#include <iostream>
#include <vector>

int main() {
  dpselect::Context context;
  dpselect::SelectionParams params;
  params.epsilon = 1.0;
  params.sensitivity = 1.0;
  std::vector<float> utility(1 << 20);
  for (std::size_t i = 0; i < utility.size(); ++i) utility[i] = static_cast<float>(i % 1000) * 0.01f;
  // [doc:gpu_memory]
  dpselect::set_device_memory_release_threshold(std::uint64_t{4} << 30);   // keep up to 4 GiB per device
  for (int release = 0; release < 10; ++release) {
    dpselect::select(context, std::span<const float>(utility), params);    // reuse the same device memory
  }
  dpselect::trim_device_memory();            // hand back what the library holds idle (pool and staging)
  // [/doc:gpu_memory]
  std::cout << "release threshold " << dpselect::device_memory_release_threshold() << " bytes";
  if (dpselect::gpu_usable()) {
    std::cout << ", device 0 holds " << dpselect::device_memory_usage(0).reserved_bytes << " bytes after the trim";
  }
  std::cout << '\n';
  return dpselect::device_memory_release_threshold() == (std::uint64_t{4} << 30) ? 0 : 1;
}
