// SPDX-License-Identifier: Apache-2.0
// scalar(): Python numbers and flags to C++, refused by name (scalar_arguments.hpp).
#include "scalar_arguments.hpp"

#include <limits>
#include <string>

namespace nb = nanobind;

namespace dpselect::python {
namespace {

// dpselect._checks.check(name, value, kind): raises the package's TypeError unless `value` is of
// `kind` ("float", "int" or "bool"). Reached only for values that are not plain floats, ints and
// bools (NumPy scalars, and every wrong type).
void check_kind(nb::handle value, const char* name, const char* kind) {
  static nb::object check = nb::module_::import_("dpselect._checks").attr("check");
  check(name, value, kind);
}

double real(nb::handle value, const char* name) {
  PyObject* object = value.ptr();
  if (PyFloat_CheckExact(object)) return PyFloat_AS_DOUBLE(object);
  if (!(PyLong_CheckExact(object))) check_kind(value, name, "float");
  const double converted = PyFloat_AsDouble(object);  // an int beyond the doubles: OverflowError
  if (converted == -1.0 && PyErr_Occurred()) throw nb::python_error();
  return converted;
}

template <class T>
T integer(nb::handle value, const char* name) {
  PyObject* object = value.ptr();
  if (!PyLong_CheckExact(object)) check_kind(value, name, "int");
  const nb::object index = nb::steal(PyNumber_Index(object));
  if (!index.is_valid()) throw nb::python_error();
  int overflow = 0;
  const long long as_signed = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (as_signed == -1 && PyErr_Occurred()) throw nb::python_error();
  bool fits = false;
  T result{};
  if (overflow == 0) {
    if constexpr (std::is_signed_v<T>) {
      fits = as_signed >= static_cast<long long>(std::numeric_limits<T>::min()) &&
             as_signed <= static_cast<long long>(std::numeric_limits<T>::max());
    } else {
      fits = as_signed >= 0 && static_cast<unsigned long long>(as_signed) <= std::numeric_limits<T>::max();
    }
    result = static_cast<T>(as_signed);
  } else if (overflow > 0 && std::is_unsigned_v<T>) {
    const unsigned long long as_unsigned = PyLong_AsUnsignedLongLong(index.ptr());
    if (PyErr_Occurred()) {
      PyErr_Clear();
    } else {
      fits = as_unsigned <= std::numeric_limits<T>::max();
      result = static_cast<T>(as_unsigned);
    }
  }
  if (!fits) {
    const std::string low = std::is_signed_v<T> ? std::to_string(std::numeric_limits<T>::min()) : "0";
    throw nb::value_error((std::string(name) + " must be an integer in [" + low + ", " +
                           std::to_string(std::numeric_limits<T>::max()) + "] (got " +
                           nb::repr(value).c_str() + ")")
                              .c_str());
  }
  return result;
}

bool flag(nb::handle value, const char* name) {
  PyObject* object = value.ptr();
  if (object == Py_True) return true;
  if (object == Py_False) return false;
  check_kind(value, name, "bool");  // numpy.bool_, 0 and 1 pass
  const int truth = PyObject_IsTrue(object);
  if (truth < 0) throw nb::python_error();
  return truth == 1;
}

}  // namespace

template <>
double scalar(const Scalar<double>& argument, const char* name) {
  return real(argument.object, name);
}
template <>
std::optional<double> scalar(const Scalar<std::optional<double>>& argument, const char* name) {
  if (argument.object.is_none()) return std::nullopt;
  return real(argument.object, name);
}
template <>
bool scalar(const Scalar<bool>& argument, const char* name) {
  return flag(argument.object, name);
}
template <>
std::uint64_t scalar(const Scalar<std::uint64_t>& argument, const char* name) {
  return integer<std::uint64_t>(argument.object, name);
}
template <>
std::uint32_t scalar(const Scalar<std::uint32_t>& argument, const char* name) {
  return integer<std::uint32_t>(argument.object, name);
}
template <>
std::int64_t scalar(const Scalar<std::int64_t>& argument, const char* name) {
  return integer<std::int64_t>(argument.object, name);
}

}  // namespace dpselect::python
