// SPDX-License-Identifier: Apache-2.0
// Partition selection: the strategies, their keep probabilities and rules, and select_partitions
// over uint64 (user, key) arrays in host memory (dpselect/partition_selection.py converts ids and
// pandas columns first; noconvert() here: nothing is copied behind the caller's back). The GIL is
// released during the selection.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <span>
#include <string>

#include "arrays.hpp"
#include "bindings.hpp"
#include "repr.hpp"
#include "dpselect/context.hpp"
#include "dpselect/partition_selection.hpp"
#include "dpselect/partition_ticket.hpp"
#include "scalar_arguments.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace dpselect::python {
namespace {

std::string repr_params(const PartitionSelectionParams& p) {
  return "PartitionSelectionParams(epsilon=" + repr_double(p.epsilon) + ", delta=" + repr_double(p.delta) +
         ", max_partitions=" + std::to_string(p.max_partitions) + ", strategy=" + repr_enum(p.strategy) +
         ", backend=" + repr_enum(p.backend) + ", rounds=" + std::to_string(p.rounds) +
         ", round_budget_ratio=" + repr_double(p.round_budget_ratio) +
         ", policy_cutoff_sigmas=" + repr_double(p.policy_cutoff_sigmas) +
         ", pre_threshold=" + std::to_string(p.pre_threshold) + ")";
}

std::string repr_round(const WeightedRound& r) {
  return "WeightedRound(budget_share=" + repr_double(r.budget_share) + ", noise_scale=" + repr_double(r.noise_scale) +
         ", threshold=" + repr_double(r.threshold) + ", key_delta=" + repr_double(r.key_delta) + ")";
}

std::string repr_rule(const PartitionKeepRule& r) {
  std::string rounds = "[";
  for (const WeightedRound& round : r.rounds) rounds += (rounds.size() > 1 ? ", " : "") + repr_round(round);
  return "PartitionKeepRule(key_epsilon=" + repr_double(r.key_epsilon) + ", key_delta=" + repr_double(r.key_delta) +
         ", noise_scale=" + repr_double(r.noise_scale) + ", threshold=" + repr_double(r.threshold) +
         ", geometric_until=" + repr_double(r.geometric_until) + ", always_kept=" + std::to_string(r.always_kept) +
         ", pre_threshold=" + std::to_string(r.pre_threshold) + ", rounds=" + rounds + "], policy_cutoff=" + repr_double(r.policy_cutoff) + ")";
}

// keys_considered is computed from the data: readable as an attribute (documented NOT PRIVATE),
// never printed.
std::string repr_report(const PartitionSelectionReport& r) {
  return "PartitionSelectionReport(params=" + repr_params(r.params) + ", rule=" + repr_rule(r.rule) +
         ", delta_float=" + repr_double(r.delta_float) + ", stream=" + std::to_string(r.stream) +
         ", streams=" + std::to_string(r.streams) + ", generator=" + std::string(to_string(r.generator)) +
         ", executed_on=" + std::string(to_string(r.executed_on)) + ")";
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
             "a Gaussian-noised user count above a threshold (Wilson et al. 2020)")
      .value("WEIGHTED_GAUSSIAN", PartitionStrategy::weighted_gaussian,
             "a Gaussian-noised weight above a threshold, a user's t keys weighing 1/sqrt(t) each (Gopi et al. "
             "2020, Weighted Gaussian)")
      .value("POLICY_GAUSSIAN", PartitionStrategy::policy_gaussian,
             "weights that spend each user's L2 budget on its keys still below a cutoff (Gopi et al. 2020, Policy "
             "Gaussian with L2 descent)")
      .value("DP_SIPS", PartitionStrategy::dp_sips,
             "the weighted Gaussian in rounds of growing budget, released keys removed between rounds (Swanberg, "
             "Desfontaines & Haney 2023)");
  m.def("is_weighted", &is_weighted, "strategy"_a,
        R"(Whether the strategy weighs keys rather than counting their users.

Parameters
----------
strategy : PartitionStrategy
    Any strategy.

Returns
-------
bool
    True for WEIGHTED_GAUSSIAN, POLICY_GAUSSIAN and DP_SIPS.)");

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
    backend releases the same keys. The weighted strategies run on the CPU (AUTO or CPU).
rounds : int, default 3
    DP_SIPS: the number of rounds, in [1, 16].
round_budget_ratio : float, default 0.3
    DP_SIPS: each round's share of the budget over the next round's, in (0, 1].
policy_cutoff_sigmas : float, default 3.0
    POLICY_GAUSSIAN: the cutoff's height above the threshold, in noise standard deviations.
pre_threshold : int, default 1
    A public minimum: a key fewer users hold is never released, and one of n >= pre_threshold
    users is kept as one of n - pre_threshold + 1 would be, which leaves the guarantee as it is.
    >= 1 (1: none); the count strategies only.)")
      .def(
          "__init__",
          [](PartitionSelectionParams* self, Scalar<double> epsilon, Scalar<double> delta,
             Scalar<std::uint64_t> max_partitions, PartitionStrategy strategy, Backend backend,
             Scalar<std::uint32_t> rounds, Scalar<double> round_budget_ratio, Scalar<double> policy_cutoff_sigmas,
             Scalar<std::uint64_t> pre_threshold) {
            new (self) PartitionSelectionParams{scalar(epsilon, "epsilon"),
                                                scalar(delta, "delta"),
                                                scalar(max_partitions, "max_partitions"),
                                                strategy,
                                                backend,
                                                scalar(rounds, "rounds"),
                                                scalar(round_budget_ratio, "round_budget_ratio"),
                                                scalar(policy_cutoff_sigmas, "policy_cutoff_sigmas"),
                                                scalar(pre_threshold, "pre_threshold")};
            self->validate();  // refused when built, naming the field; checked again when used
          },
          nb::kw_only(), "epsilon"_a, "delta"_a, "max_partitions"_a = 1,
          "strategy"_a = PartitionStrategy::truncated_geometric, "backend"_a = Backend::Auto, "rounds"_a = 3u,
          "round_budget_ratio"_a = 0.3, "policy_cutoff_sigmas"_a = 3.0, "pre_threshold"_a = 1)
      .def_rw("epsilon", &PartitionSelectionParams::epsilon)
      .def_rw("delta", &PartitionSelectionParams::delta)
      .def_rw("max_partitions", &PartitionSelectionParams::max_partitions)
      .def_rw("strategy", &PartitionSelectionParams::strategy)
      .def_rw("backend", &PartitionSelectionParams::backend)
      .def_rw("rounds", &PartitionSelectionParams::rounds)
      .def_rw("round_budget_ratio", &PartitionSelectionParams::round_budget_ratio)
      .def_rw("policy_cutoff_sigmas", &PartitionSelectionParams::policy_cutoff_sigmas)
      .def_rw("pre_threshold", &PartitionSelectionParams::pre_threshold)
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
      .def_ro("always_kept", &PartitionKeepRule::always_kept)
      .def_ro("pre_threshold", &PartitionKeepRule::pre_threshold,
              "The public minimum count; geometric_until, always_kept and the threshold count the users beyond "
              "pre_threshold - 1.")
      .def_ro("rounds", &PartitionKeepRule::rounds, "The weighted strategies' rounds (none for the count strategies).")
      .def_ro("policy_cutoff", &PartitionKeepRule::policy_cutoff, "POLICY_GAUSSIAN: the cutoff Gamma; 0 otherwise.")
      .def("__repr__", &repr_rule);

  nb::class_<WeightedRound>(m, "WeightedRound",
                            "One round of a weighted strategy: a key of weight w is released with probability "
                            "P(w + N(0, noise_scale^2) > threshold).")
      .def_ro("budget_share", &WeightedRound::budget_share, "The round's share of the budget.")
      .def_ro("noise_scale", &WeightedRound::noise_scale, "The Gaussian noise's sigma.")
      .def_ro("threshold", &WeightedRound::threshold, "rho.")
      .def_ro("key_delta", &WeightedRound::key_delta,
              "The most probability with which any of one user's keys that nobody else holds passes.")
      .def("__repr__", &repr_round);

  nb::class_<PartitionSelectionReport>(m, "PartitionSelectionReport", "What a partition selection did.")
      .def_ro("params", &PartitionSelectionReport::params)
      .def_ro("rule", &PartitionSelectionReport::rule)
      .def_ro("delta_float", &PartitionSelectionReport::delta_float,
              "The delta the rounding of the keep probabilities may add (about max_partitions * 2^-53 for the "
              "count strategies; 0 for the weighted ones, whose coins are exact).")
      .def_ro("stream", &PartitionSelectionReport::stream, "The first stream drawn.")
      .def_ro("streams", &PartitionSelectionReport::streams,
              "The consecutive streams drawn from ``stream`` on (1; 9 a round for the weighted strategies).")
      .def_ro("generator", &PartitionSelectionReport::generator)
      .def_ro("executed_on", &PartitionSelectionReport::executed_on,
              "Where the pairs were sorted, bounded and decided.")
      .def_ro("keys_considered", &PartitionSelectionReport::keys_considered,
              "NOT PRIVATE: the number of distinct keys after contribution bounding (left out of the repr).")
      .def("__repr__", &repr_report);

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

For a weighted strategy, whose release depends on what else the users hold: for users that
hold no other key.

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
  m.def("weighted_keep_probability", &weighted_keep_probability, "round"_a, "weight"_a,
        R"(The probability that a key of weight ``weight`` is released in a weighted round.

Parameters
----------
round : WeightedRound
    A round of ``partition_keep_rule(params).rounds``.
weight : float
    The key's weight (the sum over its users of their spending on it).

Returns
-------
float
    P(weight + N(0, sigma^2) > rho), 0 for a weight <= 0.)");
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
  nb::class_<PartitionSelectionTicket>(
      m, "PartitionSelectionTicket",
      "The C++ PartitionSelectionTicket; dpselect's Spark and Dask partition selections carry it: SECRET.")
      .def_prop_ro("params", &PartitionSelectionTicket::params)
      .def_prop_ro("stream", &PartitionSelectionTicket::stream)
      .def_prop_ro("rounds", &PartitionSelectionTicket::rounds)
      .def(
          "bound",
          [](const PartitionSelectionTicket& t, const HostVector<const std::uint64_t>& users,
             const HostVector<const std::uint64_t>& keys, std::uint32_t round) {
            BoundedContributions kept;
            {
              nb::gil_scoped_release released;
              kept = t.bound(span_of(users), span_of(keys), round);
            }
            return nb::make_tuple(owned_array(std::move(kept.keys)), owned_array(std::move(kept.held)));
          },
          "users"_a.noconvert(), "keys"_a.noconvert(), "round"_a,
          "(kept keys, their users' numbers of kept keys): contribution bounding over the pairs of whole users.")
      .def(
          "decide",
          [](const PartitionSelectionTicket& t, const HostVector<const std::uint64_t>& keys,
             const HostVector<const std::uint64_t>& held, const HostVector<const std::uint64_t>& pairs,
             std::uint32_t round) {
            PartitionDecision decided;
            {
              nb::gil_scoped_release released;
              decided = t.decide(span_of(keys), span_of(held), span_of(pairs), round);
            }
            return nb::make_tuple(owned_array(std::move(decided.keys)), decided.keys_considered);
          },
          "keys"_a.noconvert(), "held"_a.noconvert(), "pairs"_a.noconvert(), "round"_a,
          "(released keys ascending, keys considered (NOT PRIVATE)) among whole keys' (key, held, pairs) entries.")
      .def("report", &PartitionSelectionTicket::report, "keys_considered"_a)
      .def("to_bytes", [](const PartitionSelectionTicket& t) { return bytes_of(t.to_bytes()); })
      .def_static("from_bytes",
                  [](nb::bytes bytes) { return PartitionSelectionTicket::from_bytes(span_of_bytes(bytes)); })
      .def("__getstate__", [](const PartitionSelectionTicket& t) { return bytes_of(t.to_bytes()); })
      .def("__setstate__",
           [](PartitionSelectionTicket& t, nb::bytes bytes) {
             new (&t) PartitionSelectionTicket(PartitionSelectionTicket::from_bytes(span_of_bytes(bytes)));
           })
      .def("__repr__", [](const PartitionSelectionTicket& t) {
        return "PartitionSelectionTicket(stream=" + std::to_string(t.stream()) + ", rounds=" +
               std::to_string(t.rounds()) + ", SECRET)";
      });
  m.def("begin_partition_selection", &begin_partition_selection, "context"_a, "params"_a,
        R"(Validates and charges one partition selection, and draws its streams, for workers to run.

Parameters
----------
context : Context
    The source of the streams and the accountant.
params : PartitionSelectionParams
    Any strategy but POLICY_GAUSSIAN; backend AUTO or CPU.

Returns
-------
PartitionSelectionTicket
    SECRET: it holds the context's key.

Raises
------
InvalidArgument
    Bad parameters, POLICY_GAUSSIAN or Backend.GPU, before any charge.
BudgetExceeded
    The accountant refuses the selection; nothing drawn.)");
}

}  // namespace dpselect::python
