// TODO(issue 18): bindings of this area.
#include <nanobind/nanobind.h>

#include "bindings.hpp"

namespace nb = nanobind;

namespace dpselect::python {

void bind_accounting(nb::module_& m) { (void)m; }

}  // namespace dpselect::python
