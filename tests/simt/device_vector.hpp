// SPDX-License-Identifier: Apache-2.0
// The SIMT runtime's tests: an array in the runtime's device memory, filled from the host (or with
// zeros) and read back.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

namespace simt_test {

template <class T>
struct DeviceVector {
  T* data = nullptr;
  std::size_t size = 0;
  explicit DeviceVector(const std::vector<T>& host) : size(host.size()) {
    EXPECT_EQ(cudaMalloc(&data, (size == 0 ? 1 : size) * sizeof(T)), cudaSuccess);
    if (size != 0) EXPECT_EQ(cudaMemcpy(data, host.data(), size * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  explicit DeviceVector(std::size_t n) : DeviceVector(std::vector<T>(n)) {}
  DeviceVector(const DeviceVector&) = delete;
  DeviceVector& operator=(const DeviceVector&) = delete;
  ~DeviceVector() { cudaFree(data); }
  std::vector<T> host() const {
    std::vector<T> out(size);
    if (size != 0) EXPECT_EQ(cudaMemcpy(out.data(), data, size * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }
};

}  // namespace simt_test
