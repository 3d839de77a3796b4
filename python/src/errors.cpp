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
  const auto document = [](nb::handle exception, const char* doc) { nb::setattr(exception, "__doc__", nb::str(doc)); };
  document(nb::exception<InvalidArgument>(m, "InvalidArgument", PyExc_ValueError),
           "A bad parameter or value (a ValueError); the message names it and its value. Raised before anything "
           "is charged or drawn, except for a bad utility found during a release's pass (then charged, as in C++).");
  document(nb::exception<UsageError>(m, "UsageError", PyExc_Exception),
           "An object used out of order, e.g. a SparseVector answered after it halted or was spent.");
  document(nb::exception<BudgetExceeded>(m, "BudgetExceeded", PyExc_Exception),
           "The context's PrivacyAccountant refused a release: nothing was charged or drawn. Not a ValueError, so "
           "that a refused release is not mistaken for a bad argument.");
  document(nb::exception<BackendUnavailable>(m, "BackendUnavailable", PyExc_RuntimeError),
           "Backend.GPU (or device memory) without a usable GPU in this build or on this machine.");
  document(nb::exception<CudaError>(m, "CudaError", PyExc_RuntimeError),
           "A CUDA call failed; the message carries the CUDA error text and the call site.");
  document(nb::exception<RandomnessExhausted>(m, "RandomnessExhausted", PyExc_RuntimeError),
           "A counter-based sampler needed more random blocks than its position range (an event of negligible "
           "probability, not a misuse); nothing is released when it is raised.");
}

}  // namespace dpselect::python
