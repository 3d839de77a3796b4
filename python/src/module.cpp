// SPDX-License-Identifier: Apache-2.0
// dpselect._dpselect: the C++ library for Python. The package dpselect (python/dpselect/) wraps
// it: input checks with messages that say how to fix the array, then these functions.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <string>

#include "bindings.hpp"
#include "dpselect/select.hpp"
#include "dpselect/version.hpp"

NB_MODULE(_dpselect, m) {
  m.doc() = "dpselect: differentially private selection over very large candidate ranges (C++ core)";
  dpselect::python::bind_errors(m);
  dpselect::python::bind_types(m);
  dpselect::python::bind_selection(m);
  dpselect::python::bind_releases(m);
  dpselect::python::bind_pricing(m);
  dpselect::python::bind_quantiles(m);
  dpselect::python::bind_sparse_vector(m);
  dpselect::python::bind_noise(m);
  dpselect::python::bind_accounting(m);
  dpselect::python::bind_audit(m);
  dpselect::python::bind_partition_selection(m);
  dpselect::python::bind_string_ids(m);
  m.def("library_version", [] { return std::string(DPSELECT_VERSION); },
        R"(The C++ library's version (DPSELECT_VERSION of <dpselect/version.hpp>).

Returns
-------
str
    x.y.z, the project(dpselect VERSION x.y.z) of the top CMakeLists.txt: dpselect.__version__.)");
  m.def("gpu_usable", &dpselect::gpu_usable,
        R"(Whether a CUDA device is usable by this build now.

Returns
-------
bool
    True when the library has the CUDA backend and a device is usable.

Notes
-----
Backend.AUTO runs on the GPU exactly when this is True.)");
  m.def("built_with_cuda", &dpselect::built_with_cuda,
        R"(Whether this build has the CUDA backend.

Returns
-------
bool
    True when the extension was built with nvcc.)");
  m.def("gpu_unusable_reason", [] { return std::string(dpselect::gpu_unusable_reason()); },
        R"(Why Backend.AUTO runs on the CPU although an NVIDIA GPU is present.

Returns
-------
str
    This build has no CUDA backend, no kernel for the GPU's architecture, an old driver, ... and how
    to fix it; empty when a GPU is usable or none is present.

Notes
-----
Releases with backend AUTO warn with this text once per process (RuntimeWarning);
report.cpu_fallback_reason holds it too.)");
}
