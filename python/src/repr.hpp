// Python reprs of the library's value types, shared by the binding files: each shows the fields
// a person reads first, with Python's spelling of numbers and booleans.
#pragma once

#include <nanobind/nanobind.h>

#include <string>

#include "dpselect/context.hpp"
#include "dpselect/types.hpp"

namespace dpselect::python {

inline std::string repr_double(double value) {
  return nanobind::cast<std::string>(nanobind::repr(nanobind::float_(value)));
}
inline std::string repr_bool(bool value) { return value ? "True" : "False"; }

inline std::string repr(const FloatingPointSlack& s) {
  return "FloatingPointSlack(epsilon=" + repr_double(s.epsilon) + ", delta=" + repr_double(s.delta) +
         ", depends_on_data=" + repr_bool(s.depends_on_data) + ")";
}

inline std::string repr(const SelectionReport& r) {
  return "SelectionReport(mechanism=" + std::string(to_string(r.mechanism)) +
         ", epsilon_spent=" + repr_double(r.epsilon_spent) + ", sensitivity=" + repr_double(r.sensitivity) +
         ", monotone=" + repr_bool(r.monotone) + ", noise_scale=" + repr_double(r.noise_scale) +
         ", executed_on=" + std::string(to_string(r.executed_on)) + ", candidates=" + std::to_string(r.candidates) +
         ", slack=" + repr(r.slack) + ", stream=" + std::to_string(r.stream) +
         ", generator=" + std::string(to_string(r.generator)) + ")";
}

}  // namespace dpselect::python
