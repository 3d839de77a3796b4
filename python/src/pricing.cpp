// SPDX-License-Identifier: Apache-2.0
// Private posted-price pricing: Bids, price grids, lists and ranges, the exponential mechanism
// over them (select_price) and its diagnostics. The Python layer (dpselect/pricing.py) checks the
// arrays first; here noconvert() makes sure nothing is copied behind the caller's back. The GIL
// is released during every release and every pass over the bids or the prices.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "arrays.hpp"
#include "bindings.hpp"
#include "repr.hpp"
#include "dpselect/pricing.hpp"
#include "scalar_arguments.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace dpselect::python {
namespace {

using RevenueArray = nb::ndarray<nb::numpy, double, nb::ndim<1>>;
using SortedBidsView = nb::ndarray<nb::numpy, const double, nb::ndim<1>>;

std::string repr_params(const PricingParams& p) {
  return "PricingParams(epsilon=" + repr_double(p.epsilon) + ", neighbours=" + std::string(to_string(p.neighbours)) +
         ", max_bidders=" + std::to_string(p.max_bidders) + ", mechanism=" + std::string(to_string(p.mechanism)) +
         ", backend=" + std::string(to_string(p.backend)) + ", grid_sampler=" + std::string(to_string(p.grid_sampler)) +
         ")";
}
std::string repr_grid(const PriceGrid& g) {
  return "PriceGrid(min=" + repr_double(g.min) + ", max=" + repr_double(g.max) + ", step=" + repr_double(g.step) + ")";
}
std::string repr_range(const PriceRange& r) {
  return "PriceRange(min=" + repr_double(r.min) + ", max=" + repr_double(r.max) + ")";
}

void bind_enums(nb::module_& m) {
  nb::enum_<BidderNeighbours>(m, "BidderNeighbours",
                              "What one person's data is: a bidder (ADD_OR_REMOVE_BIDDER: revenue is monotone, "
                              "half the noise) or one bid (CHANGE_ONE_BID).")
      .value("ADD_OR_REMOVE_BIDDER", BidderNeighbours::add_or_remove_bidder, "exponential mechanism at eps/Delta")
      .value("CHANGE_ONE_BID", BidderNeighbours::change_one_bid, "exponential mechanism at eps/(2 Delta)");
  nb::enum_<GridSampler>(m, "GridSampler",
                         "How a grid of prices is sampled. Both samplers are the exact exponential mechanism over "
                         "the grid; they draw different random bits, so one key gives different prices.")
      .value("PER_PRICE_NOISE", GridSampler::per_price_noise,
             "noise per price: every mechanism, CPU or GPU, work proportional to the grid size")
      .value("BID_INTERVALS", GridSampler::bid_intervals,
             "the mass of each interval between bids in closed form: exponential mechanism, CPU, work "
             "proportional to the number of bids")
      .value("AUTOMATIC", GridSampler::automatic,
             "BID_INTERVALS where it is much cheaper and allowed, PER_PRICE_NOISE otherwise (resolve_grid_sampler)");
  m.attr("BID_INTERVALS_GRID_FACTOR") = kBidIntervalsGridFactor;
}

void bind_candidates(nb::module_& m) {
  const auto release_gil = nb::call_guard<nb::gil_scoped_release>();
  nb::class_<Bids>(m, "Bids",
                   "The bids of one auction, validated (finite, >= 0, at least one) and sorted once. Everything "
                   "it returns is computed from the bids: NOT PRIVATE, never publish it.")
      .def(
          "__init__", [](Bids* self, HostVector<const double> bids) { new (self) Bids(span_of(bids)); }, "bids"_a.noconvert(),
          release_gil, "bids: 1-D float64 in host memory, taken without a conversion and copied once, sorted "
          "(InvalidArgument names a bad bid).")
      .def_prop_ro("size", &Bids::size, "NOT PRIVATE: the number of bids.")
      .def("__len__", &Bids::size)
      .def_prop_ro(
          "sorted",
          [](const Bids& bids) {
            const std::span<const double> sorted = bids.sorted();
            return SortedBidsView(sorted.data(), {sorted.size()});
          },
          nb::rv_policy::reference_internal, "NOT PRIVATE: the bids in ascending order, a read-only view.")
      .def(
          "count_at_least", [](const Bids& bids, Scalar<double> price) { return bids.count_at_least(scalar(price, "price")); },
          "price"_a, "NOT PRIVATE: the number of bids >= price.")
      .def(
          "revenue", [](const Bids& bids, Scalar<double> price) { return bids.revenue(scalar(price, "price")); },
          "price"_a,
           "NOT PRIVATE: price * count_at_least(price), rounded once (the utility the mechanisms use).")
      .def(
          "revenues",
          [](const Bids& bids, HostVector<const double> prices) {
            const std::size_t count = prices.shape(0);
            auto buffer = std::make_unique<double[]>(count);
            double* revenues = buffer.get();
            nb::capsule owner(revenues, [](void* p) noexcept { delete[] static_cast<double*>(p); });
            buffer.release();
            {  // a plot asks for millions of prices; the array itself needs the GIL
              nb::gil_scoped_release released;
              for (std::size_t i = 0; i < count; ++i) revenues[i] = bids.revenue(prices.data()[i]);
            }
            return RevenueArray(revenues, {count}, owner);
          },
          "prices"_a.noconvert(),
          "NOT PRIVATE: revenue(p) for every p of a 1-D float64 array, as a new float64 array.");

  nb::class_<PriceGrid>(m, "PriceGrid",
      R"(The prices min + i * step, i = 0, 1, ..., up to max, computed on the fly (never materialized).

Parameters
----------
min : float
    The smallest price, finite and >= 0.
max : float
    The largest, > min.
step : float
    > 0 and >= max * 2^-50; at most 2^53 prices.

Notes
-----
Checked when built, and again when used (the fields can be changed): InvalidArgument names the bad
field and its value (also from validate()). size() and price(i) give the candidates.)")
      .def(
          "__init__",
          [](PriceGrid* self, Scalar<double> min, Scalar<double> max, Scalar<double> step) {
            new (self) PriceGrid{scalar(min, "min"), scalar(max, "max"), scalar(step, "step")};
            self->validate();  // refused when built, not at select_price: the message names the field
          },
          "min"_a, "max"_a, "step"_a)
      .def_rw("min", &PriceGrid::min)
      .def_rw("max", &PriceGrid::max)
      .def_rw("step", &PriceGrid::step)
      .def("validate", &PriceGrid::validate, "Raises InvalidArgument naming the bad field and its value.")
      .def(
          "size",
          [](const PriceGrid& grid) {
            // size() assumes a valid grid (a zero step would count forever).
            grid.validate();
            return grid.size();
          },
          "The number of prices (validates the grid first).")
      .def(
          "price", [](const PriceGrid& grid, Scalar<std::uint64_t> i) { return grid.price(scalar(i, "i")); }, "i"_a,
          "The i-th price, fma(i, step, min) rounded once.")
      .def("__repr__", &repr_grid);

  nb::class_<PriceRange>(m, "PriceRange",
      R"(Every price in [min, max], sampled on a public grid of 2^40 + 1 prices.

Parameters
----------
min : float
    Finite and >= 0.
max : float
    Finite, > min and <= 2^960.
    Both are checked when built, and again when used: InvalidArgument names the bad one.

Notes
-----
The exponential mechanism over grid(), in work proportional to the number of bids; the released
price is always a public grid point (Mironov 2012).)")
      .def(
          "__init__",
          [](PriceRange* self, Scalar<double> min, Scalar<double> max) {
            new (self) PriceRange{scalar(min, "min"), scalar(max, "max")};
            self->validate();
          },
          "min"_a, "max"_a)
      .def_rw("min", &PriceRange::min)
      .def_rw("max", &PriceRange::max)
      .def("validate", &PriceRange::validate, "Raises InvalidArgument naming the bad field and its value.")
      .def("grid", &PriceRange::grid, "The PriceGrid the range is sampled on (validates the range first).")
      .def("__repr__", &repr_range);
}

void bind_params_and_results(nb::module_& m) {
  nb::class_<PricingParams>(m, "PricingParams",
      R"(The privacy parameters of one private price (the C++ PricingParams).

Parameters
----------
epsilon : float
    The privacy loss of the release, finite and > 0.
neighbours : BidderNeighbours, default BidderNeighbours.ADD_OR_REMOVE_BIDDER
    What one person's data is.
max_bidders : int, default 0
    A public upper bound on the number of bidders (0: none), which makes the floating-point slack
    independent of the bids (more bids is an error).
mechanism : Mechanism, default Mechanism.EXPONENTIAL
    The mechanism.
backend : Backend, default Backend.AUTO
    AUTO, CPU or GPU.
grid_sampler : GridSampler, default GridSampler.PER_PRICE_NOISE
    How a PriceGrid is sampled (a PriceRange always by bid intervals).

Notes
-----
See dpselect.select_price (Dwork & Roth 2014, Thm 3.10).)")
      .def(
          "__init__",
          [](PricingParams* self, Scalar<double> epsilon, BidderNeighbours neighbours,
             Scalar<std::uint64_t> max_bidders, Mechanism mechanism, Backend backend, GridSampler grid_sampler) {
            new (self) PricingParams{.epsilon = scalar(epsilon, "epsilon"),
                                     .neighbours = neighbours,
                                     .max_bidders = scalar(max_bidders, "max_bidders"),
                                     .mechanism = mechanism,
                                     .backend = backend,
                                     .grid_sampler = grid_sampler};
          },
          "epsilon"_a, "neighbours"_a = BidderNeighbours::add_or_remove_bidder, "max_bidders"_a = 0,
          "mechanism"_a = Mechanism::exponential, "backend"_a = Backend::Auto,
          "grid_sampler"_a = GridSampler::per_price_noise,
          "epsilon: privacy loss of the release (finite, > 0); neighbours: what one person's data is; "
          "max_bidders: a public upper bound on the number of bidders (0: none), which makes the floating-point "
          "slack independent of the bids (more bids is an error); mechanism; backend: AUTO, CPU or GPU; "
          "grid_sampler: how a PriceGrid is sampled (a PriceRange always by bid intervals).")
      .def_rw("epsilon", &PricingParams::epsilon)
      .def_rw("neighbours", &PricingParams::neighbours)
      .def_rw("max_bidders", &PricingParams::max_bidders)
      .def_rw("mechanism", &PricingParams::mechanism)
      .def_rw("backend", &PricingParams::backend)
      .def_rw("grid_sampler", &PricingParams::grid_sampler)
      .def("__repr__", &repr_params);

  nb::class_<PriceSelection>(m, "PriceSelection",
                             "One private price: the price, its index among the candidates, the report, and the "
                             "sampler that ran. When sampler_depends_on_data, do not publish the sampler nor "
                             "report.executed_on (the choice compared the grid with the number of bids).")
      .def_ro("price", &PriceSelection::price)
      .def_ro("candidate", &PriceSelection::candidate)
      .def_ro("report", &PriceSelection::report)
      .def_ro("sampler", &PriceSelection::sampler)
      .def_ro("sampler_depends_on_data", &PriceSelection::sampler_depends_on_data)
      .def("__repr__", [](const PriceSelection& s) {
        const std::string sampler =
            s.sampler_depends_on_data ? "<withheld: chosen from the data>" : std::string(to_string(s.sampler));
        return "PriceSelection(price=" + repr_double(s.price) + ", candidate=" + std::to_string(s.candidate) +
               ", sampler=" + sampler + ", sampler_depends_on_data=" + repr_bool(s.sampler_depends_on_data) +
               ", report=" + repr(s.report, s.sampler_depends_on_data) + ")";
      });

  nb::class_<NonprivateOptimum>(m, "NonprivateOptimum",
                                "NOT PRIVATE: the best candidate price and its revenue, computed from the bids. "
                                "For diagnostics only: never publish it with a private release.")
      .def_ro("price", &NonprivateOptimum::price)
      .def_ro("revenue", &NonprivateOptimum::revenue)
      .def_ro("candidate", &NonprivateOptimum::candidate)
      .def("__repr__", [](const NonprivateOptimum& o) {
        return "NonprivateOptimum(price=" + repr_double(o.price) + ", revenue=" + repr_double(o.revenue) +
               ", candidate=" + std::to_string(o.candidate) + ")";
      });
}

void bind_functions(nb::module_& m) {
  const auto release_gil = nb::call_guard<nb::gil_scoped_release>();
  m.def(
      "select_price_list",
      [](Context& context, const Bids& bids, HostVector<const double> prices, const PricingParams& params) {
        return select_price(context, bids, span_of(prices), params);
      },
      "context"_a, "bids"_a, "prices"_a.noconvert(), "params"_a, release_gil);
  m.def(
      "select_price_grid",
      [](Context& context, const Bids& bids, const PriceGrid& grid, const PricingParams& params) {
        return select_price(context, bids, grid, params);
      },
      "context"_a, "bids"_a, "grid"_a, "params"_a, release_gil);
  m.def(
      "select_price_range",
      [](Context& context, const Bids& bids, const PriceRange& range, const PricingParams& params) {
        return select_price(context, bids, range, params);
      },
      "context"_a, "bids"_a, "range"_a, "params"_a, release_gil);
  m.def(
      "nonprivate_optimum_list",
      [](const Bids& bids, HostVector<const double> prices) { return nonprivate_optimum(bids, span_of(prices)); }, "bids"_a,
      "prices"_a.noconvert(), release_gil);
  m.def(
      "nonprivate_optimum_grid", [](const Bids& bids, const PriceGrid& grid) { return nonprivate_optimum(bids, grid); },
      "bids"_a, "grid"_a, release_gil);
  m.def(
      "nonprivate_optimum_range",
      [](const Bids& bids, const PriceRange& range) { return nonprivate_optimum(bids, range); }, "bids"_a, "range"_a,
      release_gil);

  m.def("resolve_grid_sampler", &resolve_grid_sampler, "params"_a, "grid_size"_a, "bid_count"_a,
        R"(The sampler select_price runs over a grid of prices for a number of bids.

Parameters
----------
params : PricingParams
    The parameters of the release.
grid_size : int
    The number of prices of the grid.
bid_count : int
    The number of bids (NOT PRIVATE between add/remove-bidder neighbours).

Returns
-------
GridSampler
    The one asked for, or for AUTOMATIC: BID_INTERVALS when the mechanism is exponential, the
    backend is not GPU and grid_size > BID_INTERVALS_GRID_FACTOR * (bidders + 1), with bidders =
    params.max_bidders when set and bid_count otherwise; PER_PRICE_NOISE in every other case.

Notes
-----
Both samplers are the exact exponential mechanism over the grid's prices (Dwork & Roth 2014, Thm
3.10); they draw different random bits.)");
  m.def("public_grid_sampler", &public_grid_sampler, "params"_a, "grid_size"_a,
        R"(The sampler select_price runs when public information alone decides it, else None.

Parameters
----------
params : PricingParams
    The parameters of the release.
grid_size : int
    The number of prices of the grid.

Returns
-------
GridSampler or None
    The sampler resolve_grid_sampler picks when it follows from the parameters and the grid size, or
    None when AUTOMATIC must compare the grid with the number of bids, which is private between
    add/remove-bidder neighbours. Set max_bidders to make the choice public.)");
  m.def("revenue_shortfall_bound", &revenue_shortfall_bound, "params"_a, "largest_price"_a, "candidates"_a, "t"_a,
        R"(How far below the best revenue the private price may earn, with high probability.

Parameters
----------
params : PricingParams
    The parameters of the release (epsilon, neighbours).
largest_price : float
    The largest candidate price: the sensitivity Delta, finite and > 0.
candidates : int
    The number of candidate prices, >= 1.
t : float
    The confidence exponent, >= 0.

Returns
-------
float
    shortfall: with probability >= 1 - e^-t the chosen price earns at least OPT - shortfall,
    shortfall = (2 Delta/eps)(ln candidates + t), or (Delta/eps)(ln candidates + t) between
    add/remove-bidder neighbours.

Raises
------
InvalidArgument
    A bad parameter, named with its value.

Notes
-----
Dwork & Roth 2014, Thm 3.11. A function of public values only.)");
}

}  // namespace

void bind_pricing(nb::module_& m) {
  bind_enums(m);
  bind_candidates(m);
  bind_params_and_results(m);
  bind_functions(m);
}

}  // namespace dpselect::python
