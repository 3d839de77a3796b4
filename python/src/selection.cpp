// SPDX-License-Identifier: Apache-2.0
// select, select_top_k, select_rows and select_repeated over arrays that nanobind hands over
// without copying: host arrays (NumPy, or any DLPack producer in host memory) and device arrays
// (DLPack from CuPy, PyTorch, JAX). The Python layer (dpselect/_arrays.py) checks dtype and layout
// first, with messages that say how to fix them; here noconvert() makes sure nothing is copied
// behind the caller's back. The GIL is released during every release.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <span>

#include "arrays.hpp"
#include "bindings.hpp"
#include "dpselect/rows.hpp"
#include "dpselect/select.hpp"
#include "dpselect/top_k.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace dpselect::python {
namespace {

template <class T>
void bind_for(nb::module_& m) {
  const auto release_gil = nb::call_guard<nb::gil_scoped_release>();
  m.def(
      "select_host",
      [](Context& context, HostVector<const T> utilities, const SelectionParams& params) {
        return select(context, span_of(utilities), params);
      },
      "context"_a, "utilities"_a.noconvert(), "params"_a, release_gil);
  m.def(
      "select_device",
      [](Context& context, DeviceVector<const T> utilities, const SelectionParams& params, std::uintptr_t stream) {
        return select(context, device_span_of(utilities), params, stream_of(stream));
      },
      "context"_a, "utilities"_a.noconvert(), "params"_a, "stream"_a, release_gil);
  m.def(
      "top_k_host",
      [](Context& context, HostVector<const T> utilities, std::uint64_t k, const SelectionParams& params) {
        return select_top_k(context, span_of(utilities), TopKParams{params, k});
      },
      "context"_a, "utilities"_a.noconvert(), "k"_a, "params"_a, release_gil);
  m.def(
      "top_k_device",
      [](Context& context, DeviceVector<const T> utilities, std::uint64_t k, const SelectionParams& params,
         std::uintptr_t stream) {
        return select_top_k(context, device_span_of(utilities), TopKParams{params, k}, stream_of(stream));
      },
      "context"_a, "utilities"_a.noconvert(), "k"_a, "params"_a, "stream"_a, release_gil);
  m.def(
      "rows_host",
      [](Context& context, HostRows<const T> utilities, const SelectionParams& params) {
        return select_rows(context, HostMatrix<const T>{utilities.data(), utilities.shape(0), utilities.shape(1)},
                           params);
      },
      "context"_a, "utilities"_a.noconvert(), "params"_a, release_gil);
  m.def(
      "rows_host_per_row",
      [](Context& context, HostRows<const T> utilities, const SelectionParams& params,
         HostVector<const double> row_epsilons) {
        return select_rows(context, HostMatrix<const T>{utilities.data(), utilities.shape(0), utilities.shape(1)},
                           params, span_of(row_epsilons));
      },
      "context"_a, "utilities"_a.noconvert(), "params"_a, "row_epsilons"_a.noconvert(), release_gil);
  m.def(
      "rows_device",
      [](Context& context, DeviceRows<const T> utilities, const SelectionParams& params, std::uintptr_t stream) {
        return select_rows(context, DeviceMatrix<const T>{utilities.data(), utilities.shape(0), utilities.shape(1)},
                           params, stream_of(stream));
      },
      "context"_a, "utilities"_a.noconvert(), "params"_a, "stream"_a, release_gil);
  m.def(
      "rows_device_per_row",
      [](Context& context, DeviceRows<const T> utilities, const SelectionParams& params,
         HostVector<const double> row_epsilons, std::uintptr_t stream) {
        return select_rows(context, DeviceMatrix<const T>{utilities.data(), utilities.shape(0), utilities.shape(1)},
                           params, span_of(row_epsilons), stream_of(stream));
      },
      "context"_a, "utilities"_a.noconvert(), "params"_a, "row_epsilons"_a.noconvert(), "stream"_a, release_gil);
  m.def(
      "repeated_host",
      [](Context& context, HostVector<const T> utilities, const SelectionParams& params, std::uint64_t releases) {
        return select_repeated(context, span_of(utilities), params, releases);
      },
      "context"_a, "utilities"_a.noconvert(), "params"_a, "releases"_a, release_gil);
  // For tests of zero-copy: the address of the data this module's host caster sees.
  m.def(
      "host_data_address",
      [](HostVector<const T> values) { return reinterpret_cast<std::uintptr_t>(values.data()); },
      "values"_a.noconvert());
}

}  // namespace

void bind_selection(nb::module_& m) {
  bind_for<float>(m);
  bind_for<double>(m);
}

}  // namespace dpselect::python
