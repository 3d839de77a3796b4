// The pieces of the extension module dpselect._dpselect (nanobind), one function per concern.
#pragma once

#include <nanobind/nanobind.h>

namespace dpselect::python {

void bind_errors(nanobind::module_& m);     // exceptions: errors.cpp
void bind_types(nanobind::module_& m);      // enums, params, reports, Context, accountant: types.cpp
void bind_selection(nanobind::module_& m);  // select, top-k, rows, repeated: selection.cpp

}  // namespace dpselect::python
