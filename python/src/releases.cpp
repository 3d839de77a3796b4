// SPDX-License-Identifier: Apache-2.0
// Sharded releases: Release (begun on the driver), ReleaseTicket (what a worker evaluates its
// shard with; pickled as ReleaseTicket::to_bytes) and ShardResult (a shard's secret partial result,
// pickled field by field), with merge. The Python layer (dpselect/sharding.py) checks the arrays and
// wraps these in the documented classes. The GIL is released during every evaluation.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"
#include "dpselect/context.hpp"
#include "dpselect/release_ticket.hpp"
#include "dpselect/shard_result.hpp"
#include "dpselect/top_k.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace dpselect::python {
namespace {

// Every field of a ShardResult, in declaration order: its pickled state.
using ShardState = std::tuple<double, std::uint64_t, double, std::uint64_t, std::uint64_t, double, int,
                              std::uint64_t, std::uint64_t, bool>;

ShardState state_of(const ShardResult& r) {
  return {r.best_score, r.best_index, r.max_abs_shifted_utility, r.candidates, r.first_invalid_index,
          r.first_invalid_value, static_cast<int>(r.executed_on), r.release_tag, r.coverage, r.from_several_releases};
}

ShardResult shard_of(const ShardState& s) {
  const int executed_on = std::get<6>(s);
  if (executed_on < 0 || executed_on > 3) {
    throw nb::value_error(("ShardResult state must hold executed_on 0 to 3 (got " + std::to_string(executed_on) + ")")
                              .c_str());
  }
  ShardResult r;
  r.best_score = std::get<0>(s);
  r.best_index = std::get<1>(s);
  r.max_abs_shifted_utility = std::get<2>(s);
  r.candidates = std::get<3>(s);
  r.first_invalid_index = std::get<4>(s);
  r.first_invalid_value = std::get<5>(s);
  r.executed_on = static_cast<ExecutedOn>(executed_on);
  r.release_tag = std::get<7>(s);
  r.coverage = std::get<8>(s);
  r.from_several_releases = std::get<9>(s);
  return r;
}

// A top-k shard's pickled state: its k best as (score, index) pairs, its tally and k.
using TopKShardState = std::tuple<std::vector<std::tuple<double, std::uint64_t>>, ShardState, std::uint64_t>;

TopKShardState top_k_state_of(const TopKShardResult& r) {
  std::vector<std::tuple<double, std::uint64_t>> best;
  best.reserve(r.best.size());
  for (const RankedScore& c : r.best) best.emplace_back(c.score, c.index);
  return {std::move(best), state_of(r.tally), r.k};
}

TopKShardResult top_k_shard_of(const TopKShardState& s) {
  TopKShardResult r;
  for (const auto& [score, index] : std::get<0>(s)) r.best.push_back(RankedScore{score, index});
  r.tally = shard_of(std::get<1>(s));
  r.k = std::get<2>(s);
  return r;
}

// evaluate_host(utilities, first_index) for float and double utilities (a Release or a ticket).
template <class Shards>
void bind_host_evaluate(nb::class_<Shards>& c) {
  const auto release_gil = nb::call_guard<nb::gil_scoped_release>();
  const auto bind = [&]<class T>(T) {
    c.def(
        "evaluate_host",
        [](Shards& shards, HostVector<const T> utilities, std::uint64_t first_index) {
          return shards.evaluate(span_of(utilities), first_index);
        },
        "utilities"_a.noconvert(), "first_index"_a, release_gil);
  };
  bind(float{});
  bind(double{});
}

// bind_host_evaluate, and evaluate_device(utilities, first_index, stream).
template <class Shards>
void bind_evaluate(nb::class_<Shards>& c) {
  bind_host_evaluate(c);
  const auto release_gil = nb::call_guard<nb::gil_scoped_release>();
  const auto bind = [&]<class T>(T) {
    c.def(
        "evaluate_device",
        [](Shards& shards, DeviceVector<const T> utilities, std::uint64_t first_index, std::uintptr_t stream) {
          return shards.evaluate(device_span_of(utilities), first_index, stream_of(stream));
        },
        "utilities"_a.noconvert(), "first_index"_a, "stream"_a, release_gil);
  };
  bind(float{});
  bind(double{});
}

}  // namespace

void bind_releases(nb::module_& m) {
  nb::class_<ShardResult>(m, "ShardResult",
                          R"(The partial result of one shard of a release: SECRET.

It holds the shard's best noisy score and the largest ``|utility - reference|`` of its utilities, which
the release's guarantee does not cover. Combine shards with dpselect.merge and pass the total to
the release's finish(); never publish it. It pickles (to travel between a worker and the driver, over
a channel as trusted as the driver's memory).)")
      .def_ro("candidates", &ShardResult::candidates, "The number of candidates evaluated (public: the shards' sizes).")
      .def_ro("executed_on", &ShardResult::executed_on, "Which backends evaluated it.")
      .def("__getstate__", &state_of)
      .def("__setstate__", [](ShardResult& r, const ShardState& s) { new (&r) ShardResult(shard_of(s)); })
      .def("__repr__", [](const ShardResult& r) {
        return "ShardResult(candidates=" + std::to_string(r.candidates) + ", SECRET)";
      });
  m.def(
      "merge", [](const ShardResult& a, const ShardResult& b) { return dpselect::merge(a, b); }, "a"_a, "b"_a,
        "The result of the union of two disjoint shards of one release (associative, commutative).");

  nb::class_<ReleaseTicket> ticket(m, "ReleaseTicket", "The C++ ReleaseTicket; dpselect.ReleaseTicket wraps it.");
  ticket.def_prop_ro("stream", &ReleaseTicket::stream)
      .def_prop_ro("params", &ReleaseTicket::params)
      .def_prop_ro("range", [](const ReleaseTicket& t) { return std::make_tuple(t.range().begin, t.range().end); })
      .def_prop_ro("utility_reference", &ReleaseTicket::utility_reference)
      .def_prop_ro("generator", &ReleaseTicket::generator)
      .def("to_bytes", [](const ReleaseTicket& t) { return bytes_of(t.to_bytes()); })
      .def_static("from_bytes", [](nb::bytes bytes) { return ReleaseTicket::from_bytes(span_of_bytes(bytes)); });
  bind_evaluate(ticket);

  nb::class_<Release> release(m, "Release", "The C++ Release; dpselect.Release wraps it.");
  release.def_prop_ro("stream", &Release::stream)
      .def_prop_ro("params", &Release::params)
      .def(
          "ticket",
          [](Release& r, std::uint64_t begin, std::uint64_t end, std::optional<double> first_utility) {
            return r.ticket(IndexRange{begin, end}, first_utility);
          },
          "begin"_a, "end"_a, "first_utility"_a.none())
      .def("finish", &Release::finish, "merged"_a);
  bind_evaluate(release);
  nb::class_<TopKShardResult>(m, "TopKShardResult",
                              R"(The partial result of one shard of a top-k release: SECRET.

Its k best noisy scores and the tally of its candidates. Combine with dpselect.merge and pass the
total to the release's finish(); never publish it. It pickles.)")
      .def_ro("k", &TopKShardResult::k, "The release's k.")
      .def_prop_ro("candidates", [](const TopKShardResult& r) { return r.tally.candidates; },
                   "The number of candidates evaluated.")
      .def("__getstate__", &top_k_state_of)
      .def("__setstate__", [](TopKShardResult& r, const TopKShardState& s) { new (&r) TopKShardResult(top_k_shard_of(s)); })
      .def("__repr__", [](const TopKShardResult& r) {
        return "TopKShardResult(candidates=" + std::to_string(r.tally.candidates) + ", k=" + std::to_string(r.k) +
               ", SECRET)";
      });
  m.def(
      "merge", [](const TopKShardResult& a, const TopKShardResult& b) { return dpselect::merge(a, b); }, "a"_a, "b"_a,
      "The result of the union of two disjoint shards of one top-k release.");

  nb::class_<TopKTicket> top_k_ticket(m, "TopKTicket", "The C++ TopKTicket; dpselect.TopKTicket wraps it.");
  top_k_ticket.def_prop_ro("k", &TopKTicket::k)
      .def_prop_ro("stream", [](const TopKTicket& t) { return t.release_ticket().stream(); })
      .def_prop_ro("range", [](const TopKTicket& t) {
        return std::make_tuple(t.release_ticket().range().begin, t.release_ticket().range().end);
      })
      .def("to_bytes", [](const TopKTicket& t) { return bytes_of(t.to_bytes()); })
      .def_static("from_bytes", [](nb::bytes bytes) { return TopKTicket::from_bytes(span_of_bytes(bytes)); });
  bind_host_evaluate(top_k_ticket);  // a sharded top-k runs its shards on the CPU

  nb::class_<TopKRelease>(m, "TopKRelease", "The C++ TopKRelease; dpselect.TopKRelease wraps it.")
      .def_prop_ro("stream", &TopKRelease::stream)
      .def_prop_ro("k", [](const TopKRelease& r) { return r.params().k; })
      .def_prop_ro("params", [](const TopKRelease& r) { return r.params().selection; })
      .def_prop_ro("range", [](const TopKRelease& r) { return std::make_tuple(r.range().begin, r.range().end); })
      .def("ticket", &TopKRelease::ticket)
      .def("finish", &TopKRelease::finish, "merged"_a);
  m.def(
      "begin_top_k_release",
      [](Context& context, const SelectionParams& params, std::uint64_t k, std::uint64_t begin, std::uint64_t end) {
        return begin_top_k_release(context, TopKParams{params, k}, IndexRange{begin, end});
      },
      "context"_a, "params"_a, "k"_a, "begin"_a, "end"_a);

  m.def(
      "begin_release", [](Context& context, const SelectionParams& params) { return context.begin_release(params); },
      "context"_a, "params"_a);
}

}  // namespace dpselect::python
