// SPDX-License-Identifier: Apache-2.0
// Partition selection: the strategies, their keep probabilities and rules, and select_partitions
// over uint64 (user, key) arrays in host memory (dpselect/partition_selection.py converts ids and
// pandas columns first; noconvert() here: nothing is copied behind the caller's back). The GIL is
// released during the selection.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <span>
#include <string>

#include "arrays.hpp"
#include "bindings.hpp"
#include "repr.hpp"
#include "dpselect/context.hpp"
#include "dpselect/partition_selection.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace dpselect::python {
namespace {

std::string repr_params(const PartitionSelectionParams& p) {
  return "PartitionSelectionParams(epsilon=" + repr_double(p.epsilon) + ", delta=" + repr_double(p.delta) +
         ", max_partitions=" + std::to_string(p.max_partitions) + ", strategy=" + repr_enum(p.strategy) +
         ", backend=" + repr_enum(p.backend) + ")";
}

std::span<const std::uint64_t> span_of(const HostVector<const std::uint64_t>& ids) {
  return {ids.data(), ids.shape(0)};
}

}  // namespace

void bind_partition_selection(nb::module_& m) {
  nb::enum_<PartitionStrategy>(m, "PartitionStrategy", "How a key's number of users decides whether it is released.")
      .value("TRUNCATED_GEOMETRIC", PartitionStrategy::truncated_geometric,
             "the optimal keep probability for (epsilon, delta) (Desfontaines, Voss, Gipson & Mandayam 2022)")
      .value("LAPLACE_THRESHOLD", PartitionStrategy::laplace_threshold,
             "a Laplace-noised user count above a threshold (Korolova et al. 2009; Wilson et al. 2020)")
      .value("GAUSSIAN_THRESHOLD", PartitionStrategy::gaussian_threshold,
             "a Gaussian-noised user count above a threshold (Wilson et al. 2020)");

  nb::class_<PartitionSelectionParams>(m, "PartitionSelectionParams", R"(The parameters of one partition selection.

Parameters
----------
epsilon : float
    The privacy loss of the whole selection, finite and > 0.
delta : float
    Its delta, in (0, 1): every strategy needs delta > 0.
max_partitions : int, default 1
    The most distinct keys one user contributes to (the rest are dropped at random), >= 1.
strategy : PartitionStrategy, default PartitionStrategy.TRUNCATED_GEOMETRIC
    The keep rule.
backend : Backend, default Backend.AUTO
    Where the pairs are sorted, bounded and decided (AUTO: the GPU when one is usable); every
    backend releases the same keys.)")
      .def(
          "__init__",
          [](PartitionSelectionParams* self, double epsilon, double delta, std::uint64_t max_partitions,
             PartitionStrategy strategy, Backend backend) {
            new (self) PartitionSelectionParams{epsilon, delta, max_partitions, strategy, backend};
          },
          nb::kw_only(), "epsilon"_a, "delta"_a, "max_partitions"_a = 1,
          "strategy"_a = PartitionStrategy::truncated_geometric, "backend"_a = Backend::Auto)
      .def_rw("epsilon", &PartitionSelectionParams::epsilon)
      .def_rw("delta", &PartitionSelectionParams::delta)
      .def_rw("max_partitions", &PartitionSelectionParams::max_partitions)
      .def_rw("strategy", &PartitionSelectionParams::strategy)
      .def_rw("backend", &PartitionSelectionParams::backend)
      .def("validate", &PartitionSelectionParams::validate,
           "Raises InvalidArgument naming the first bad field and its value.")
      .def("__repr__", &repr_params);

  nb::class_<PartitionKeepRule>(m, "PartitionKeepRule",
                                "What a strategy computes from its parameters alone (public): the per-key budget, the "
                                "noise scale and threshold of the thresholding strategies, and the number of users from "
                                "which a key is kept for certain (truncated geometric; 0 otherwise).")
      .def_ro("key_epsilon", &PartitionKeepRule::key_epsilon)
      .def_ro("key_delta", &PartitionKeepRule::key_delta)
      .def_ro("noise_scale", &PartitionKeepRule::noise_scale)
      .def_ro("threshold", &PartitionKeepRule::threshold)
      .def_ro("geometric_until", &PartitionKeepRule::geometric_until)
      .def_ro("always_kept", &PartitionKeepRule::always_kept);

  nb::class_<PartitionSelectionReport>(m, "PartitionSelectionReport", "What a partition selection did.")
      .def_ro("params", &PartitionSelectionReport::params)
      .def_ro("rule", &PartitionSelectionReport::rule)
      .def_ro("delta_float", &PartitionSelectionReport::delta_float,
              "The delta the rounding of the keep probabilities may add: max_partitions * 2^-53.")
      .def_ro("stream", &PartitionSelectionReport::stream)
      .def_ro("generator", &PartitionSelectionReport::generator)
      .def_ro("executed_on", &PartitionSelectionReport::executed_on,
              "Where the pairs were sorted, bounded and decided.")
      .def_ro("keys_considered", &PartitionSelectionReport::keys_considered,
              "NOT PRIVATE: the number of distinct keys after contribution bounding.");

  nb::class_<PartitionSelection>(m, "PartitionSelection", "The released keys (ascending) and the report.")
      .def_ro("keys", &PartitionSelection::keys, "The released keys, ascending (ids of the data's keys).")
      .def_ro("report", &PartitionSelection::report);

  m.def("partition_keep_rule", &partition_keep_rule, "params"_a,
        R"(The strategy's rule for these parameters: public, a function of the parameters alone.

Parameters
----------
params : PartitionSelectionParams
    The selection's parameters.

Returns
-------
PartitionKeepRule
    The per-key epsilon and delta, the noise scale and threshold of the thresholding strategies,
    and the number of users from which the truncated geometric keeps a key for certain.

Raises
------
InvalidArgument
    A bad parameter, naming it and its value.)");
  m.def(
      "keep_probability",
      [](const PartitionSelectionParams& params, std::uint64_t users) { return keep_probability(params, users); },
      "params"_a, "users"_a, R"(The probability that a key held by ``users`` distinct users is released.

Parameters
----------
params : PartitionSelectionParams
    The selection's parameters.
users : int
    The key's number of distinct users, after contribution bounding.

Returns
-------
float
    p(users) in [0, 1]: 0 for 0 users, non-decreasing.

Raises
------
InvalidArgument
    A bad parameter, naming it and its value.)");
  m.def(
      "select_partitions_ids",
      [](Context& context, const HostVector<const std::uint64_t>& users, const HostVector<const std::uint64_t>& keys,
         const PartitionSelectionParams& params) {
        return select_partitions(context, span_of(users), span_of(keys), params);
      },
      "context"_a, "users"_a.noconvert(), "keys"_a.noconvert(), "params"_a, nb::call_guard<nb::gil_scoped_release>(),
      R"(select_partitions over uint64 ids in host memory (dpselect.select_partitions converts first).

Parameters
----------
context : Context
    The source of the stream and the accountant.
users : numpy.ndarray
    uint64 user ids, C-contiguous.
keys : numpy.ndarray
    uint64 key ids, as long as users.
params : PartitionSelectionParams
    The selection's parameters.

Returns
-------
PartitionSelection
    The released key ids (ascending) and the report.

Raises
------
InvalidArgument
    Bad parameters, arrays of different lengths or no contributions, before any charge.
BackendUnavailable
    Backend.GPU without a usable CUDA device, before any charge.)");
}

}  // namespace dpselect::python
