// SPDX-License-Identifier: Apache-2.0
// The numbers and flags that constructors take from Python, converted where the parameter's name
// is known: a value of the wrong type is a TypeError naming the parameter and the value, in the
// package's one wording (dpselect/_checks.py, which checks the Python functions the same way),
// never nanobind's list of overloads. The signature still reads `epsilon: float`.
//
//   [](PriceGrid* self, Scalar<double> min, ...) { new (self) PriceGrid{scalar(min, "min"), ...}; }
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <optional>
#include <type_traits>

namespace dpselect::python {

// An argument held as the Python object it is until scalar() converts it.
template <class T>
struct Scalar {
  nanobind::handle object;
};

// The argument as a T (double, std::optional<double>, bool or an integer type); TypeError naming
// `name` for a value of another type (a str, a bool where a number is expected, a float where an
// integer is), ValueError for an integer outside T.
template <class T>
T scalar(const Scalar<T>& argument, const char* name);

}  // namespace dpselect::python

namespace nanobind::detail {

// The type a signature shows for a Scalar<T> argument.
template <class T>
constexpr auto scalar_argument_name() {
  if constexpr (std::is_same_v<T, bool>) {
    return const_name("bool");
  } else if constexpr (std::is_same_v<T, std::optional<double>>) {
    return const_name("float");  // nanobind adds " | None" for the default None
  } else if constexpr (std::is_floating_point_v<T>) {
    return const_name("float");
  } else {
    return const_name("int");
  }
}

template <class T>
struct type_caster<dpselect::python::Scalar<T>> {
  NB_TYPE_CASTER(dpselect::python::Scalar<T>, scalar_argument_name<T>())

  // Every object is taken: the conversion, and its refusal by name, happen in scalar().
  bool from_python(handle src, uint8_t, cleanup_list*) noexcept {
    value.object = src;
    return true;
  }
  static handle from_cpp(const dpselect::python::Scalar<T>& scalar, rv_policy, cleanup_list*) noexcept {
    return scalar.object.inc_ref();
  }
};

}  // namespace nanobind::detail
