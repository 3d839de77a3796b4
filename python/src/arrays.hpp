// SPDX-License-Identifier: Apache-2.0
// The arrays the bindings take from Python: host or CUDA device memory, C-contiguous, of the one
// dtype the C++ call reads, and never converted or copied (every array argument is marked
// .noconvert(); the Python layer, dpselect/_arrays.py, has already said how to fix a wrong one).
// T is const for arrays that are read and non-const for arrays written in place.
#pragma once

#include <nanobind/ndarray.h>

#include <nanobind/nanobind.h>

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "dpselect/context.hpp"

namespace dpselect::python {

template <class T>
using HostVector = nanobind::ndarray<T, nanobind::ndim<1>, nanobind::c_contig, nanobind::device::cpu>;
template <class T>
using DeviceVector = nanobind::ndarray<T, nanobind::ndim<1>, nanobind::c_contig, nanobind::device::cuda>;
template <class T>
using HostRows = nanobind::ndarray<T, nanobind::ndim<2>, nanobind::c_contig, nanobind::device::cpu>;
template <class T>
using DeviceRows = nanobind::ndarray<T, nanobind::ndim<2>, nanobind::c_contig, nanobind::device::cuda>;

template <class T>
std::span<T> span_of(const HostVector<T>& a) {
  return {a.data(), a.shape(0)};
}
template <class T>
DeviceSpan<T> device_span_of(const DeviceVector<T>& a) {
  return {a.data(), a.shape(0)};
}
// A cudaStream_t passed from Python as an integer (0: the default stream).
inline cuda_stream_t stream_of(std::uintptr_t stream) { return reinterpret_cast<cuda_stream_t>(stream); }


// A NumPy uint64 array that owns `values` (no copy).
using OwnedIds = nanobind::ndarray<nanobind::numpy, std::uint64_t, nanobind::ndim<1>>;
inline OwnedIds owned_array(std::vector<std::uint64_t>&& values) {
  auto* owned = new std::vector<std::uint64_t>(std::move(values));
  nanobind::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<std::uint64_t>*>(p); });
  return OwnedIds(owned->data(), {owned->size()}, owner);
}

// A ticket's bytes as Python bytes, and back.
inline nanobind::bytes bytes_of(const std::vector<std::uint8_t>& bytes) {
  return nanobind::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}
inline std::span<const std::uint8_t> span_of_bytes(const nanobind::bytes& bytes) {
  return {reinterpret_cast<const std::uint8_t*>(bytes.c_str()), bytes.size()};
}

}  // namespace dpselect::python
