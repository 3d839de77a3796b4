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
  dpselect::python::bind_pricing(m);
  dpselect::python::bind_quantiles(m);
  dpselect::python::bind_sparse_vector(m);
  dpselect::python::bind_noise(m);
  dpselect::python::bind_accounting(m);
  dpselect::python::bind_audit(m);
  m.def("library_version", [] { return std::string(DPSELECT_VERSION); },
        "The C++ library's version (DPSELECT_VERSION of <dpselect/version.hpp>); dpselect.__version__.");
  m.def("gpu_usable", &dpselect::gpu_usable, "Whether a CUDA device is usable by this build.");
  m.def("built_with_cuda", &dpselect::built_with_cuda, "Whether this build has the CUDA backend.");
  m.def("gpu_unusable_reason", [] { return std::string(dpselect::gpu_unusable_reason()); },
        "Why backend AUTO runs on the CPU although an NVIDIA GPU is present (this build has no CUDA "
        "backend, no kernel for the GPU's architecture, an old driver, ...) and how to fix it; empty "
        "when a GPU is usable or none is present. Releases with backend AUTO warn with this text once "
        "(RuntimeWarning).");
}
