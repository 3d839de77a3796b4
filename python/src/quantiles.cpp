// SPDX-License-Identifier: Apache-2.0
// Private quantiles over a public range: the range and its grid, the data prepared once
// (QuantileData, from host or CUDA device arrays handed over without a conversion), one quantile
// (select_quantile), several (select_quantiles), the rank-error calculators and the NOT PRIVATE
// diagnostics. The Python layer (dpselect/quantiles.py) checks the arrays first; here noconvert()
// makes sure nothing is copied behind the caller's back. The GIL is released while the data are
// sorted and during every release.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"
#include "repr.hpp"
#include "dpselect/quantiles.hpp"
#include "scalar_arguments.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace dpselect::python {
namespace {

using PositionsArray = nb::ndarray<nb::numpy, std::uint64_t, nb::ndim<1>>;

std::string repr_range(const QuantileRange& r) {
  return "QuantileRange(lower=" + repr_double(r.lower) + ", upper=" + repr_double(r.upper) +
         (r.resolution ? ", resolution=" + repr_double(*r.resolution) : std::string()) + ")";
}
std::string repr_grid(const QuantileGrid& g) {
  return "QuantileGrid(lower=" + repr_double(g.lower) + ", step=" + repr_double(g.step) +
         ", size=" + std::to_string(g.size) + (g.rounds_to_points ? ", rounds_to_points=True" : "") + ")";
}
std::string repr_params(const QuantileParams& p) {
  return "QuantileParams(range=" + repr_range(p.range) + ", epsilon=" + repr_double(p.epsilon) +
         ", neighbours=" + std::string(to_string(p.neighbours)) + ", max_points=" + std::to_string(p.max_points) +
         ", backend=" + std::string(to_string(p.backend)) + ", mechanism=" + std::string(to_string(p.mechanism)) +
         ")";
}
std::string repr_list(const std::vector<double>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + repr_double(values[i]);
  return out + "]";
}
std::string repr_list(const std::vector<std::uint64_t>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

void bind_enums(nb::module_& m) {
  nb::enum_<RecordNeighbours>(m, "RecordNeighbours",
                              "Which datasets are neighbours for a quantile release: REPLACE_ONE_RECORD keeps n "
                              "public, ADD_OR_REMOVE_RECORD does not.")
      .value("REPLACE_ONE_RECORD", RecordNeighbours::replace_one_record,
             "one record changes: the rank utility has sensitivity 1")
      .value("ADD_OR_REMOVE_RECORD", RecordNeighbours::add_or_remove_record,
             "one record more or less: sensitivity max(q, 1 - q)");
  nb::enum_<QuantilesMethod>(m, "QuantilesMethod", "How several quantiles are released together.")
      .value("JOINT_EXPONENTIAL", QuantilesMethod::joint_exponential,
             "one exponential mechanism over sorted tuples (Gillenwater, Joseph & Kulesza 2021): best for up to "
             "about 10 quantiles")
      .value("RECURSIVE_SPLITTING", QuantilesMethod::recursive_splitting,
             "the middle quantile first, then each side (Kaplan, Schnapp & Stemmer 2022): best for many quantiles")
      .value("INDEPENDENT_BASIC", QuantilesMethod::independent_basic,
             "one release per quantile, epsilon / m each (basic composition)")
      .value("INDEPENDENT_ZCDP", QuantilesMethod::independent_zcdp,
             "one release per quantile composed in zCDP: an (epsilon, delta) total, needs delta > 0");
}

void bind_range_and_data(nb::module_& m) {
  const auto release_gil = nb::call_guard<nb::gil_scoped_release>();
  nb::class_<QuantileGrid>(m, "QuantileGrid",
                           "The points lower + i * step, i in [0, size): every value a quantile release over a "
                           "range can output. Public: it depends on the range only.")
      .def_ro("lower", &QuantileGrid::lower)
      .def_ro("step", &QuantileGrid::step)
      .def_ro("size", &QuantileGrid::size)
      .def_ro("rounds_to_points", &QuantileGrid::rounds_to_points,
              "Whether values are rounded to their nearest point (a grid of a public resolution).")
      .def(
          "slot", [](const QuantileGrid& grid, Scalar<double> value) { return grid.slot(scalar(value, "value")); },
          "value"_a,
           "The value's slot: 2 k + 1 when the value (clipped; rounded to the nearest point when rounds_to_points) "
           "is point k, 2 p when it lies strictly between points p - 1 and p.")
      .def(
          "point",
          [](const QuantileGrid& grid, Scalar<std::uint64_t> i_argument) {
            const std::uint64_t i = scalar(i_argument, "i");
            if (i >= grid.size) throw nb::index_error(("grid index " + std::to_string(i) + " is not below the "
                                                       "grid's size " + std::to_string(grid.size)).c_str());
            return grid.point(i);
          },
          "i"_a, "The i-th point, fma(i, step, lower) rounded once (the same bits on the CPU and the GPU).")
      .def(
          "points_at_or_below",
          [](const QuantileGrid& grid, Scalar<double> value) { return grid.points_at_or_below(scalar(value, "value")); },
          "value"_a,
           "The number of grid points <= value clipped to the range, in [1, size] (value not NaN).")
      .def("__repr__", &repr_grid);

  nb::class_<QuantileRange>(m, "QuantileRange",
      R"(The public range [lower, upper] of a quantile release; values outside it are clipped to it.

Parameters
----------
lower : float
    Finite, ``|lower| <= 2^960``.
upper : float
    Finite, > lower, ``|upper| <= 2^960``.
resolution : float, optional
    The public step of the data and of the outputs, e.g. 1 for integers or 0.01 for cents: the
    releases are its multiples in the range, and a value held by many records (a tie) can be
    released itself. Finite and > 0, dividing ``upper - lower`` into at most 2^40 steps; values
    are rounded to the nearest multiple. None (the default): a grid of 2^40 + 1 points.

Notes
-----
Checked when built, and again when used (the fields can be changed): InvalidArgument names
``range lower``, ``range upper`` or ``range resolution`` with the value.)")
      .def(
          "__init__",
          [](QuantileRange* self, Scalar<double> lower, Scalar<double> upper,
             Scalar<std::optional<double>> resolution) {
            new (self) QuantileRange{scalar(lower, "lower"), scalar(upper, "upper"), scalar(resolution, "resolution")};
            self->validate();
          },
          "lower"_a, "upper"_a, nb::kw_only(), "resolution"_a = nb::none())
      .def_rw("lower", &QuantileRange::lower)
      .def_rw("upper", &QuantileRange::upper)
      .def_rw("resolution", &QuantileRange::resolution, "The public step, or None for a grid of 2^40 + 1 points.")
      .def("validate", &QuantileRange::validate,
           "Raises InvalidArgument naming the bad bound or resolution and its value.")
      .def("grid", &QuantileRange::grid,
           "The grid the releases output: 2^40 + 1 points, or the multiples of the resolution (validates the range "
           "first).")
      .def("__repr__", &repr_range);

  nb::class_<QuantileData>(m, "QuantileData",
                           "The data of quantile releases over one range, prepared once: each value clipped to the "
                           "range, replaced by its grid position and sorted (8 bytes per value, 4 for float32 "
                           "device arrays). Host arrays are "
                           "sorted on all cores, device arrays on the GPU, where they stay. Build it once and reuse "
                           "it for many releases. size, len() and sorted_positions() are computed from the data: "
                           "NOT PRIVATE.")
      .def(
          "__init__",
          [](QuantileData* self, HostVector<const double> values, const QuantileRange& range) {
            new (self) QuantileData(span_of(values), range);
          },
          "values"_a.noconvert(), "range"_a, release_gil)
      .def(
          "__init__",
          [](QuantileData* self, HostVector<const float> values, const QuantileRange& range) {
            new (self) QuantileData(span_of(values), range);
          },
          "values"_a.noconvert(), "range"_a, release_gil)
      .def(
          "__init__",
          [](QuantileData* self, DeviceVector<const double> values, const QuantileRange& range,
             std::uintptr_t stream) {
            new (self) QuantileData(QuantileData::from_device(device_span_of(values), range, stream_of(stream)));
          },
          "values"_a.noconvert(), "range"_a, "stream"_a, release_gil)
      .def(
          "__init__",
          [](QuantileData* self, DeviceVector<const float> values, const QuantileRange& range, std::uintptr_t stream) {
            new (self) QuantileData(QuantileData::from_device(device_span_of(values), range, stream_of(stream)));
          },
          "values"_a.noconvert(), "range"_a, "stream"_a, release_gil,
          "values: 1-D float32 or float64, in host memory or on a CUDA device (read on stream, a cudaStream_t as an "
          "int), taken without a conversion; range: the public QuantileRange. Raises InvalidArgument for a bad "
          "range, no values, more than 2^40, or a NaN (naming data[i]); BackendUnavailable for device values "
          "without a usable GPU.")
      .def_prop_ro("size", &QuantileData::size, "NOT PRIVATE: the number of values.")
      .def("__len__", &QuantileData::size)
      // A copy: writing to it must not change the prepared data's range.
      .def_prop_ro(
          "range", [](const QuantileData& data) { return data.range(); },
          "The public range the data were prepared for (a copy).")
      .def("grid", &QuantileData::grid, "The public grid of the range.")
      .def_prop_ro("on_device", &QuantileData::on_device, "Whether the positions are in device memory.")
      .def(
          "sorted_positions",
          [](const QuantileData& data) {
            auto positions = std::make_unique<std::vector<std::uint64_t>>();
            {
              nb::gil_scoped_release released;
              *positions = data.sorted_positions();
            }
            std::vector<std::uint64_t>* owned = positions.release();
            nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<std::uint64_t>*>(p); });
            return PositionsArray(owned->data(), {owned->size()}, owner);
          },
          "NOT PRIVATE: the sorted grid positions (QuantileGrid.points_at_or_below of each clipped value), as a "
          "new uint64 array (copied from the device for device data).")
      // The repr is printed and logged: the range and where the data live, not how many there are.
      .def("__repr__", [](const QuantileData& data) {
        return "QuantileData(range=" + repr_range(data.range()) + ", on_device=" + repr_bool(data.on_device()) + ")";
      });
}

void bind_params_and_results(nb::module_& m) {
  nb::class_<QuantileParams>(m, "QuantileParams",
      R"(The privacy parameters of one quantile release (the C++ QuantileParams).

Parameters
----------
range : QuantileRange
    The public range.
epsilon : float
    The privacy loss of the release, finite and > 0.
neighbours : RecordNeighbours, default RecordNeighbours.REPLACE_ONE_RECORD
    REPLACE_ONE_RECORD (n public) or ADD_OR_REMOVE_RECORD.
max_points : int, default 0
    A public upper bound on the number of values (0: none), which makes the floating-point slack
    independent of the data under ADD_OR_REMOVE_RECORD.
backend : Backend, default Backend.AUTO
    AUTO (follows the data), CPU or GPU.
mechanism : Mechanism, default Mechanism.EXPONENTIAL
    EXPONENTIAL or PERMUTE_AND_FLIP (McKenna & Sheldon 2020; needs a range with a resolution).

Notes
-----
See dpselect.select_quantile (Smith 2011; Dwork & Roth 2014, Thm 3.10).)")
      .def(
          "__init__",
          [](QuantileParams* self, const QuantileRange& range, Scalar<double> epsilon, RecordNeighbours neighbours,
             Scalar<std::uint64_t> max_points, Backend backend, Mechanism mechanism) {
            new (self) QuantileParams{.range = range,
                                      .epsilon = scalar(epsilon, "epsilon"),
                                      .neighbours = neighbours,
                                      .max_points = scalar(max_points, "max_points"),
                                      .backend = backend,
                                      .mechanism = mechanism};
          },
          "range"_a, "epsilon"_a, "neighbours"_a = RecordNeighbours::replace_one_record, "max_points"_a = 0,
          "backend"_a = Backend::Auto, "mechanism"_a = Mechanism::exponential,
          "range: the public QuantileRange; epsilon: privacy loss of the release (finite, > 0); neighbours: "
          "REPLACE_ONE_RECORD (n public) or ADD_OR_REMOVE_RECORD; max_points: a public upper bound on the number of "
          "values (0: none), which makes the floating-point slack independent of the data under "
          "ADD_OR_REMOVE_RECORD (more values is an error); backend: AUTO (follows the data), CPU or GPU; "
          "mechanism: EXPONENTIAL or PERMUTE_AND_FLIP (a range with a resolution only).")
      .def_rw("range", &QuantileParams::range)
      .def_rw("epsilon", &QuantileParams::epsilon)
      .def_rw("neighbours", &QuantileParams::neighbours)
      .def_rw("max_points", &QuantileParams::max_points)
      .def_rw("backend", &QuantileParams::backend)
      .def_rw("mechanism", &QuantileParams::mechanism)
      .def("__repr__", &repr_params);

  nb::class_<QuantilesParams>(m, "QuantilesParams",
      R"(The privacy parameters of several quantiles released together (the C++ QuantilesParams).

Parameters
----------
range : QuantileRange
    The public range.
epsilon : float
    The privacy loss of all the quantiles together, finite and > 0.
method : QuantilesMethod, default QuantilesMethod.JOINT_EXPONENTIAL
    JOINT_EXPONENTIAL, RECURSIVE_SPLITTING, INDEPENDENT_BASIC or INDEPENDENT_ZCDP.
delta : float, default 0.0
    INDEPENDENT_ZCDP only: the total delta, in (0, 1).
neighbours : RecordNeighbours, default RecordNeighbours.REPLACE_ONE_RECORD
    As for QuantileParams.
max_points : int, default 0
    As for QuantileParams.
backend : Backend, default Backend.AUTO
    As for QuantileParams.
mechanism : Mechanism, default Mechanism.EXPONENTIAL
    As for QuantileParams; PERMUTE_AND_FLIP with RECURSIVE_SPLITTING or INDEPENDENT_BASIC only.

Attributes
----------
base : QuantileParams
    range, epsilon (the total), neighbours, max_points, backend, mechanism.
method : QuantilesMethod
    The method.
delta : float
    The total delta.

Notes
-----
See dpselect.select_quantiles (Gillenwater, Joseph & Kulesza 2021; Kaplan, Schnapp & Stemmer 2022).)")
      .def(
          "__init__",
          [](QuantilesParams* self, const QuantileRange& range, Scalar<double> epsilon, QuantilesMethod method,
             Scalar<double> delta, RecordNeighbours neighbours, Scalar<std::uint64_t> max_points, Backend backend,
             Mechanism mechanism) {
            new (self) QuantilesParams{.base = {.range = range,
                                                .epsilon = scalar(epsilon, "epsilon"),
                                                .neighbours = neighbours,
                                                .max_points = scalar(max_points, "max_points"),
                                                .backend = backend,
                                                .mechanism = mechanism},
                                       .method = method,
                                       .delta = scalar(delta, "delta")};
          },
          "range"_a, "epsilon"_a, "method"_a = QuantilesMethod::joint_exponential, "delta"_a = 0.0,
          "neighbours"_a = RecordNeighbours::replace_one_record, "max_points"_a = 0, "backend"_a = Backend::Auto,
          "mechanism"_a = Mechanism::exponential,
          "range, neighbours, max_points, backend, mechanism: as for QuantileParams; epsilon: the privacy loss of all "
          "the quantiles together; method: JOINT_EXPONENTIAL, RECURSIVE_SPLITTING, INDEPENDENT_BASIC or "
          "INDEPENDENT_ZCDP; delta: the total delta, in (0, 1), for INDEPENDENT_ZCDP only (0 for the others).")
      .def_rw("base", &QuantilesParams::base)
      .def_rw("method", &QuantilesParams::method)
      .def_rw("delta", &QuantilesParams::delta)
      .def("__repr__", [](const QuantilesParams& p) {
        return "QuantilesParams(method=" + std::string(to_string(p.method)) + ", delta=" + repr_double(p.delta) +
               ", base=" + repr_params(p.base) + ")";
      });

  nb::class_<QuantileRelease>(m, "QuantileRelease",
                              "One private quantile: a point of the range's grid, its index on the grid and the "
                              "report (public unless report.slack.depends_on_data).")
      .def_ro("value", &QuantileRelease::value)
      .def_ro("grid_index", &QuantileRelease::grid_index)
      .def_ro("report", &QuantileRelease::report)
      .def("__repr__", [](const QuantileRelease& r) {
        return "QuantileRelease(value=" + repr_double(r.value) + ", grid_index=" + std::to_string(r.grid_index) +
               ", report=" + repr(r.report) + ")";
      });

  nb::class_<QuantilesRelease>(m, "QuantilesRelease",
                               "Several private quantiles, one grid point per requested q (non-decreasing), and "
                               "what the release spent. slack is summed over the mechanisms run: when "
                               "slack.depends_on_data, do not publish it.")
      .def_ro("values", &QuantilesRelease::values)
      .def_ro("grid_indices", &QuantilesRelease::grid_indices)
      .def_ro("method", &QuantilesRelease::method)
      .def_ro("epsilon_spent", &QuantilesRelease::epsilon_spent)
      .def_ro("delta_spent", &QuantilesRelease::delta_spent)
      .def_ro("epsilon_per_mechanism", &QuantilesRelease::epsilon_per_mechanism)
      .def_ro("mechanisms", &QuantilesRelease::mechanisms)
      .def_ro("slack", &QuantilesRelease::slack)
      .def_ro("streams", &QuantilesRelease::streams)
      .def("__repr__", [](const QuantilesRelease& r) {
        return "QuantilesRelease(values=" + repr_list(r.values) + ", grid_indices=" + repr_list(r.grid_indices) +
               ", method=" + std::string(to_string(r.method)) + ", epsilon_spent=" + repr_double(r.epsilon_spent) +
               ", delta_spent=" + repr_double(r.delta_spent) +
               ", epsilon_per_mechanism=" + repr_double(r.epsilon_per_mechanism) +
               ", mechanisms=" + std::to_string(r.mechanisms) + ", slack=" + repr(r.slack) +
               ", streams=" + repr_list(r.streams) + ")";
      });

  nb::class_<QuantileDiagnostics>(m, "QuantileDiagnostics",
                                  "NOT PRIVATE: the exact quantile of the prepared data, for diagnostics and tests "
                                  "only. Never publish it with a private release.")
      .def_ro("best_grid_index", &QuantileDiagnostics::best_grid_index,
              "NOT PRIVATE: a grid point of smallest rank error.")
      .def_ro("best_rank_error", &QuantileDiagnostics::best_rank_error,
              "NOT PRIVATE: min over grid points t of ``dist(q n, [#{x_i < t}, #{x_i <= t}])``, the error the grid "
              "forces (ties counted).")
      .def("__repr__", [](const QuantileDiagnostics& d) {
        return "QuantileDiagnostics(NOT PRIVATE, best_grid_index=" + std::to_string(d.best_grid_index) +
               ", best_rank_error=" + repr_double(d.best_rank_error) + ")";
      });
}

void bind_functions(nb::module_& m) {
  const auto release_gil = nb::call_guard<nb::gil_scoped_release>();
  m.def("select_quantile", &select_quantile, "context"_a, "data"_a, "q"_a, "params"_a, release_gil,
        "One private q-quantile (q in [0, 1]): the exponential mechanism with utility "
        "``-dist(q n, [#{x_i < t}, #{x_i <= t}])`` (Smith 2011, ties counted) over the range's grid. Charges "
        "params.epsilon after every check.");
  m.def(
      "select_quantiles",
      [](Context& context, const QuantileData& data, const std::vector<double>& qs, const QuantilesParams& params) {
        return select_quantiles(context, data, qs, params);
      },
      "context"_a, "data"_a, "qs"_a, "params"_a, release_gil,
      "Several private quantiles (qs non-empty, each in [0, 1], strictly increasing) by params.method. Charges the "
      "whole release once, after every check.");
  m.def(
      "quantile_rank_error_bound", &quantile_rank_error_bound, "params"_a, "q"_a, "beta"_a,
        R"(A bound on the rank error of one private quantile, from public values alone.

Parameters
----------
params : QuantileParams
    The parameters of the release.
q : float
    The level, in [0, 1].
beta : float
    The failure probability, in (0, 1).

Returns
-------
float
    alpha such that with probability >= 1 - beta the released quantile's rank error (ties counted,
    ``dist(q n, [#{x_i < o}, #{x_i <= o}])``) is <= alpha + e, e the error the grid forces on any
    output. alpha does not depend on the data.

Raises
------
InvalidArgument
    A bad parameter, level or beta, named with its value.

Notes
-----
Dwork & Roth 2014, Thm 3.11, for the exponential mechanism with utility
``-dist(q n, [#{x_i < t}, #{x_i <= t}])`` (Smith 2011, ties counted).)");
  m.def(
      "quantiles_rank_error_bound",
      [](const QuantilesParams& params, const std::vector<double>& qs, double beta) {
        return quantiles_rank_error_bound(params, qs, beta);
      },
      "params"_a, "qs"_a, "beta"_a,
      "alpha such that with probability >= 1 - beta every released quantile o_j has rank error <= alpha + e_j "
      "(Dwork & Roth 2014, Thm 3.11, applied to each method's mechanisms; JointExp adds up to 2 (e_1 + ... + "
      "e_m)).");
  m.def("nonprivate_quantile_diagnostics", &nonprivate_quantile_diagnostics, "data"_a, "q"_a, release_gil,
        "NOT PRIVATE: a grid point of the exact q-quantile and its rank error. For diagnostics and tests only.");
  m.def("nonprivate_rank_error", &nonprivate_rank_error, "data"_a, "grid_index"_a, "q"_a, release_gil,
        "NOT PRIVATE: the rank error of t = grid.point(grid_index), ``dist(q n, [#{x_i < t}, #{x_i <= t}])`` (ties "
        "counted), for the prepared data. For diagnostics and tests only.");
}

}  // namespace

void bind_quantiles(nb::module_& m) {
  bind_enums(m);
  bind_range_and_data(m);
  bind_params_and_results(m);
  bind_functions(m);
}

}  // namespace dpselect::python
