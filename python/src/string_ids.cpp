// SPDX-License-Identifier: Apache-2.0
// String ids (the keys and users of partition selection) numbered in C++ by
// dictionary_numbering, read where they already are: Python str or bytes objects of a list (a
// str's cached UTF-8 form, no copy for ASCII text), the fixed-width items of a NumPy U or S array,
// and the offsets and data buffers of Arrow string or binary chunks (no copy at all). No Python
// code runs per value, and no fixed-width copy of a column is made. dpselect/partition_selection.py
// decides which reader a column takes and turns released codes back into its own values by
// `first_rows`.
#include <Python.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"
#include "dpselect/partition_selection.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace dpselect::python {
namespace {

// (codes, first_rows, -1), the numbering of `texts`, computed without the GIL.
nb::tuple numbered(const std::vector<std::string_view>& texts) {
  DictionaryNumbering numbering;
  {
    nb::gil_scoped_release released;
    numbering = dictionary_numbering(texts);
  }
  return nb::make_tuple(owned_array(std::move(numbering.codes)), owned_array(std::move(numbering.first_rows)), -1);
}

// The items of a list or tuple of str (or bytes, when `bytes` is true): (codes, first_rows, -1),
// or (None, None, row) for the first row that is not of that kind (None included); the caller
// words the refusal. A str is read as its UTF-8 form; one with lone surrogates, which has none, as
// its "surrogatepass" encoding, which sorts in code point order too.
nb::tuple number_objects(nb::handle sequence, bool bytes) {
  PyObject* const fast = PySequence_Fast(sequence.ptr(), "dpselect: ids must be a list or a tuple");
  if (fast == nullptr) throw nb::python_error();
  const nb::object fast_owner = nb::steal(fast);
  const Py_ssize_t count = PySequence_Fast_GET_SIZE(fast);
  PyObject** const items = PySequence_Fast_ITEMS(fast);
  std::vector<std::string_view> texts(static_cast<std::size_t>(count));
  std::vector<nb::object> encoded;  // the surrogatepass encodings, alive until the numbering is done
  for (Py_ssize_t row = 0; row < count; ++row) {
    PyObject* const item = items[row];
    if (bytes) {
      if (!PyBytes_Check(item)) return nb::make_tuple(nb::none(), nb::none(), row);
      texts[row] = {PyBytes_AS_STRING(item), static_cast<std::size_t>(PyBytes_GET_SIZE(item))};
      continue;
    }
    if (!PyUnicode_Check(item)) return nb::make_tuple(nb::none(), nb::none(), row);
    Py_ssize_t size = 0;
    const char* text = PyUnicode_AsUTF8AndSize(item, &size);
    if (text == nullptr) {
      PyErr_Clear();
      nb::object pass = nb::steal(PyUnicode_AsEncodedString(item, "utf-8", "surrogatepass"));
      if (!pass.is_valid()) throw nb::python_error();
      text = PyBytes_AS_STRING(pass.ptr());
      size = PyBytes_GET_SIZE(pass.ptr());
      encoded.push_back(std::move(pass));
    }
    texts[row] = {text, static_cast<std::size_t>(size)};
  }
  return numbered(texts);
}

// A NumPy S array's items (`width` bytes each), or a U array's (`width` UCS-4 code points each,
// encoded to UTF-8 here), each without its trailing NULs, as NumPy reads them.
nb::tuple number_fixed_width(const HostVector<const std::uint8_t>& buffer, std::size_t width, bool ucs4) {
  const std::size_t item_bytes = ucs4 ? 4 * width : width;
  const std::size_t count = item_bytes == 0 ? 0 : buffer.shape(0) / item_bytes;
  std::vector<std::string_view> texts(count);
  std::string utf8;  // the U items' UTF-8 forms, one after another
  std::vector<std::size_t> ends(ucs4 ? count : 0);
  for (std::size_t row = 0; row < count; ++row) {
    const std::uint8_t* const item = buffer.data() + row * item_bytes;
    if (!ucs4) {
      std::size_t length = width;
      while (length > 0 && item[length - 1] == 0) --length;
      texts[row] = {reinterpret_cast<const char*>(item), length};
      continue;
    }
    std::size_t length = width;
    const auto code_point = [&](std::size_t i) {
      std::uint32_t c = 0;
      std::memcpy(&c, item + 4 * i, 4);
      return c;
    };
    while (length > 0 && code_point(length - 1) == 0) --length;
    for (std::size_t i = 0; i < length; ++i) {
      const std::uint32_t c = code_point(i);
      if (c < 0x80) {
        utf8.push_back(static_cast<char>(c));
      } else if (c < 0x800) {
        utf8.push_back(static_cast<char>(0xC0 | (c >> 6)));
        utf8.push_back(static_cast<char>(0x80 | (c & 0x3F)));
      } else if (c < 0x10000) {
        utf8.push_back(static_cast<char>(0xE0 | (c >> 12)));
        utf8.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
        utf8.push_back(static_cast<char>(0x80 | (c & 0x3F)));
      } else {
        utf8.push_back(static_cast<char>(0xF0 | (c >> 18)));
        utf8.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
        utf8.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
        utf8.push_back(static_cast<char>(0x80 | (c & 0x3F)));
      }
    }
    ends[row] = utf8.size();
  }
  if (ucs4) {  // the views only now: `utf8` no longer moves
    for (std::size_t row = 0, begin = 0; row < count; begin = ends[row], ++row) {
      texts[row] = std::string_view(utf8).substr(begin, ends[row] - begin);
    }
  }
  return numbered(texts);
}

// Arrow string or binary chunks: per chunk its value offsets (int32 or int64, length + 1 of
// them, already sliced to the chunk's own rows) and its data buffer.
template <class Offset>
void add_arrow_chunk(std::vector<std::string_view>& texts, const HostVector<const Offset>& offsets,
                     const HostVector<const std::uint8_t>& data) {
  const std::size_t rows = offsets.shape(0) == 0 ? 0 : offsets.shape(0) - 1;
  const char* const bytes = reinterpret_cast<const char*>(data.data());
  for (std::size_t row = 0; row < rows; ++row) {
    const auto begin = static_cast<std::size_t>(offsets.data()[row]);
    const auto end = static_cast<std::size_t>(offsets.data()[row + 1]);
    if (end < begin || end > data.shape(0)) {
      throw nb::value_error("dpselect: an Arrow chunk's offsets lie outside its data buffer");
    }
    texts.emplace_back(bytes + begin, end - begin);
  }
}

nb::tuple number_arrow_chunks(const nb::list& chunks) {
  std::vector<std::string_view> texts;
  for (nb::handle chunk : chunks) {
    const nb::tuple pair = nb::cast<nb::tuple>(chunk);
    const auto data = nb::cast<HostVector<const std::uint8_t>>(pair[1], false);
    HostVector<const std::int64_t> wide;
    if (nb::try_cast(pair[0], wide, false)) {
      add_arrow_chunk(texts, wide, data);
    } else {
      add_arrow_chunk(texts, nb::cast<HostVector<const std::int32_t>>(pair[0], false), data);
    }
  }
  return numbered(texts);
}

}  // namespace

void bind_string_ids(nb::module_& m) {
  m.def("number_string_objects", &number_objects, "values"_a, "bytes"_a,
        "(codes, first_rows, -1): a list or tuple of str (bytes when ``bytes``) numbered by the rank of each value "
        "in code point (byte) order, first_rows[c] the first row of code c; (None, None, row) for the first row of "
        "another kind.");
  m.def("number_fixed_width", &number_fixed_width, "buffer"_a.noconvert(), "width"_a, "ucs4"_a,
        "(codes, first_rows, -1) for a NumPy S (ucs4 False) or U array's items, given as its uint8 buffer.");
  m.def("number_arrow_chunks", &number_arrow_chunks, "chunks"_a,
        "(codes, first_rows, -1) for Arrow string or binary chunks, each (offsets, data) as NumPy views of its "
        "buffers.");
}

}  // namespace dpselect::python
