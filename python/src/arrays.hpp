// SPDX-License-Identifier: Apache-2.0
// The arrays the bindings take from Python: host or CUDA device memory, C-contiguous, of the one
// dtype the C++ call reads, and never converted or copied (every array argument is marked
// .noconvert(); the Python layer, dpselect/_arrays.py, has already said how to fix a wrong one).
// T is const for arrays that are read and non-const for arrays written in place.
#pragma once

#include <nanobind/ndarray.h>

#include <cstdint>
#include <span>

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

}  // namespace dpselect::python
