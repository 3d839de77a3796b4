// SPDX-License-Identifier: Apache-2.0
// Python reprs of the library's value types, shared by the binding files: each shows the fields
// a person reads first, with Python's spelling of numbers and booleans.
#pragma once

#include <nanobind/nanobind.h>

#include <string>

#include "dpselect/context.hpp"
#include "dpselect/sparse_vector.hpp"
#include "dpselect/types.hpp"

namespace dpselect::python {

inline std::string repr_double(double value) {
  return nanobind::cast<std::string>(nanobind::repr(nanobind::float_(value)));
}
inline std::string repr_bool(bool value) { return value ? "True" : "False"; }
// A value of an enumeration bound with nb::enum_, as Python spells it ("Backend.AUTO").
template <class Enum>
std::string repr_enum(Enum value) {
  return nanobind::cast<std::string>(nanobind::str(nanobind::cast(value)));
}

// A repr is what people print and log, so it shows no value computed from the data: a slack that
// depends on the data (it reveals the largest |utility|, the best revenue, the largest query
// value) is withheld, as the command withholds it. The attributes stay readable, documented as
// not to be published.
inline std::string repr(const FloatingPointSlack& s) {
  if (s.depends_on_data) return "FloatingPointSlack(<withheld: computed from the data; give a public bound>)";
  return "FloatingPointSlack(epsilon=" + repr_double(s.epsilon) + ", delta=" + repr_double(s.delta) +
         ", depends_on_data=False)";
}

// executed_on is withheld where the backend was chosen by comparing public sizes with private ones
// (a pricing grid against the number of bids: PriceSelection::sampler_depends_on_data).
inline std::string repr(const SelectionReport& r, bool backend_depends_on_data = false) {
  const std::string executed_on =
      backend_depends_on_data ? "<withheld: chosen from the data>" : std::string(to_string(r.executed_on));
  return "SelectionReport(mechanism=" + std::string(to_string(r.mechanism)) +
         ", epsilon_spent=" + repr_double(r.epsilon_spent) + ", sensitivity=" + repr_double(r.sensitivity) +
         ", monotone=" + repr_bool(r.monotone) + ", noise_scale=" + repr_double(r.noise_scale) +
         ", executed_on=" + executed_on + ", candidates=" + std::to_string(r.candidates) +
         ", slack=" + repr(r.slack) + ", stream=" + std::to_string(r.stream) +
         ", generator=" + std::string(to_string(r.generator)) + ")";
}

// Here rather than with the sparse vector's bindings: the l-infinity answerer's plan shows it too.
inline std::string repr(const SparseVectorParams& p) {
  return "SparseVectorParams(epsilon=" + repr_double(p.epsilon) + ", sensitivity=" + repr_double(p.sensitivity) +
         ", threshold=" + repr_double(p.threshold) + ", delta=" + repr_double(p.delta) +
         ", max_positives=" + std::to_string(p.max_positives) + ", numeric=" + repr_bool(p.numeric) +
         ", value_bound=" + repr_double(p.value_bound) + ", algorithm=" + std::string(to_string(p.algorithm)) +
         ", monotone=" + repr_bool(p.monotone) + ")";
}

}  // namespace dpselect::python
