// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the command's input readers (host/cli/input_files.hpp: read_values),
// built three times: DPSELECT_FUZZ_FORMAT 1 text, 2 raw float32/float64, 3 NumPy .npy. The
// first bytes choose how the file is read (the value kind, a public bound, what a 2-D array
// becomes, a slice, the format named or found by extension); the rest is the file.
//
// Invariants: read_values either returns an input of at least one value, every one inside the kind's
// domain and bound, with a consistent shape and slice, or throws CliError (or OutOfMemory) with
// a one-line printable message. Anything else (another exception, a crash, a sanitizer report)
// is a finding.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "cli_error.hpp"
#include "fuzz_support.hpp"
#include "input_files.hpp"

#ifndef DPSELECT_FUZZ_FORMAT
#error "DPSELECT_FUZZ_FORMAT: 1 text, 2 raw, 3 npy"
#endif

namespace {

using namespace dpselect::cli;
using dpselect::fuzz::check;

constexpr ValueKind kKinds[] = {bid_values, price_values, utility_values, query_answer_values,
                                quantile_data_values};

bool inside(double value, const ValueKind& kind) {
  if (kind.magnitude_bound > 0 && std::isfinite(value) && std::fabs(value) > kind.magnitude_bound) return false;
  switch (kind.domain) {
    case ValueDomain::finite_nonnegative: return std::isfinite(value) && value >= 0;
    case ValueDomain::finite: return std::isfinite(value);
    case ValueDomain::below_plus_infinity: return !std::isnan(value) && value != HUGE_VAL;
    case ValueDomain::not_nan: return !std::isnan(value);
  }
  return false;
}

template <class T>
void check_values(const std::vector<T>& values, const ValueKind& kind) {
  for (const T value : values) check(inside(static_cast<double>(value), kind), "a value outside its domain was accepted");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  FuzzedDataProvider data(bytes, size);
  ValueKind kind = kKinds[data.ConsumeIntegralInRange<std::size_t>(0, std::size(kKinds) - 1)];
  if (data.ConsumeBool()) {
    kind.magnitude_bound = data.ConsumeIntegralInRange<int>(1, 1000);
    kind.bound_option = "--bound";
  }
  InputOption option;
  option.name = "--values";
  option.two_dimensional = static_cast<TwoDimensional>(data.ConsumeIntegralInRange<int>(0, 2));
  if (data.ConsumeBool()) {
    InputSlice slice;
    slice.parts = data.ConsumeIntegralInRange<int>(1, 5);
    slice.part = data.ConsumeIntegralInRange<int>(0, slice.parts - 1);
    slice.row_width = data.ConsumeIntegralInRange<std::uint64_t>(0, 4);
    option.slice = slice;
  }
  const bool by_extension = data.ConsumeBool();
#if DPSELECT_FUZZ_FORMAT == 1
  const char* name = "values.txt";
  option.format = by_extension ? InputFormat::by_extension : InputFormat::text;
#elif DPSELECT_FUZZ_FORMAT == 2
  const bool f32 = data.ConsumeBool();
  const char* name = f32 ? "values.f32" : "values.f64";
  option.format = by_extension ? InputFormat::by_extension : (f32 ? InputFormat::f32 : InputFormat::f64);
#else
  const char* name = data.ConsumeBool() ? "values.npy" : "values";  // a .npy is found by its magic
  option.format = by_extension ? InputFormat::by_extension : InputFormat::npy;
#endif
  const std::string file = data.ConsumeRemainingBytesAsString();
  const std::filesystem::path path = dpselect::fuzz::scratch_directory() / name;
  dpselect::fuzz::write_file(path, file.data(), file.size());
  option.path = path.string();

  try {
    InputValues values = read_values(option, kind);
    // The whole input holds a value; a rank's slice of a short input may hold none.
    check(values.total >= 1, "an input without values was accepted");
    check(values.first + values.size() <= values.total, "the slice lies outside the input");
    if (!option.slice) check(values.first == 0 && values.total == values.size(), "a whole input read in part");
    std::visit([&](const auto& list) { check_values(list, kind); }, values.values);
    if (!values.shape.empty()) {
      std::uint64_t elements = 1;
      for (const std::uint64_t extent : values.shape) elements *= extent;
      check(elements == values.total, "the .npy shape does not match the values read");
      check(values.shape.size() == 1 || option.two_dimensional != TwoDimensional::refuse,
            "a 2-D array was read where it is refused");
    }
  } catch (const CliError& error) {
    check(dpselect::fuzz::printable_one_line(error.what()), "an error message that is not one printable line");
  } catch (const OutOfMemory& error) {
    check(dpselect::fuzz::printable_one_line(error.what()), "an error message that is not one printable line");
  }
  return 0;
}
