// SPDX-License-Identifier: Apache-2.0
// The library's exceptions as Python exceptions, with the library's messages. InvalidArgument is
// a ValueError (a bad value); BudgetExceeded and UsageError are exceptions of their own, since a
// caller must not mistake a refused release for a bad argument.
#include <nanobind/nanobind.h>

#include "bindings.hpp"
#include "dpselect/errors.hpp"

namespace nb = nanobind;

namespace dpselect::python {

void bind_errors(nb::module_& m) {
  nb::exception<InvalidArgument>(m, "InvalidArgument", PyExc_ValueError);
  nb::exception<UsageError>(m, "UsageError", PyExc_Exception);
  nb::exception<BudgetExceeded>(m, "BudgetExceeded", PyExc_Exception);
  nb::exception<BackendUnavailable>(m, "BackendUnavailable", PyExc_RuntimeError);
  nb::exception<CudaError>(m, "CudaError", PyExc_RuntimeError);
  nb::exception<RandomnessExhausted>(m, "RandomnessExhausted", PyExc_RuntimeError);
}

}  // namespace dpselect::python
