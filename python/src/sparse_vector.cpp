// SPDX-License-Identifier: Apache-2.0
// The sparse vector technique: the streaming SparseVector, the batch over host or device arrays,
// and the accuracy calculators. The Python layer (dpselect/sparse_vector.py) checks the arrays
// first; here noconvert() makes sure nothing is copied behind the caller's back.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "arrays.hpp"
#include "bindings.hpp"
#include "repr.hpp"
#include "dpselect/sparse_vector.hpp"
#include "scalar_arguments.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace dpselect::python {
namespace {

std::string repr_optional(const std::optional<double>& value) { return value ? repr_double(*value) : "None"; }

std::string repr_scales(const SparseVectorScales& s) {
  return "SparseVectorScales(threshold_noise=" + repr_double(s.threshold_noise) +
         ", query_noise=" + repr_double(s.query_noise) + ", answer_noise=" + repr_double(s.answer_noise) +
         ", answer_granularity=" + repr_double(s.answer_granularity) +
         ", answer_noise_secure=" + repr_double(s.answer_noise_secure) +
         ", epsilon_comparisons=" + repr_double(s.epsilon_comparisons) +
         ", epsilon_answers=" + repr_double(s.epsilon_answers) +
         ", threshold_redrawn=" + repr_bool(s.threshold_redrawn) + ")";
}

std::string repr_report(const SparseVectorReport& r) {
  return "SparseVectorReport(queries=" + std::to_string(r.queries) + ", positives=" + std::to_string(r.positives) +
         ", halted=" + repr_bool(r.halted) + ", stream=" + std::to_string(r.stream) +
         ", generator=" + std::string(to_string(r.generator)) + ", scales=" + repr_scales(r.scales) +
         ", slack=" + repr(r.slack) + ")";
}

std::string repr_above(const SparseVectorAbove& a) {
  return "SparseVectorAbove(index=" + std::to_string(a.index) + ", value=" + repr_optional(a.value) + ")";
}

void bind_params_and_reports(nb::module_& m) {
  nb::enum_<SparseVectorAlgorithm>(m, "SparseVectorAlgorithm", "Which sparse vector technique runs.")
      .value("DWORK_ROTH", SparseVectorAlgorithm::dwork_roth,
             "Sparse and NumericSparse (Dwork & Roth 2014, Alg. 2, Thm 3.25 and 3.27): a fresh threshold after "
             "every \"above\"; delta = 0 or > 0")
      .value("LYU_SU_LI", SparseVectorAlgorithm::lyu_su_li,
             "Lyu, Su & Li 2017, Alg. 1 and 7: one threshold, an optimized split of epsilon, the monotone "
             "refinement; delta must be 0");

  nb::class_<SparseVectorParams>(m, "SparseVectorParams",
      R"(The parameters of one sparse vector run (the C++ SparseVectorParams).

Parameters
----------
epsilon : float
    The privacy loss of the whole run, finite and > 0.
sensitivity : float
    Delta of every query, finite and > 0.
threshold : float
    The public threshold T.
delta : float, default 0.0
    0 (pure DP) or in (0, 1) (DWORK_ROTH only).
max_positives : int, default 1
    c, halt after this many "above" answers.
numeric : bool, default False
    NumericSparse: every "above" also releases a noisy value.
value_bound : float, default 0.0
    A public bound on ``|query value|`` (0: none).
algorithm : SparseVectorAlgorithm, default SparseVectorAlgorithm.DWORK_ROTH
    DWORK_ROTH or LYU_SU_LI.
monotone : bool, default False
    LYU_SU_LI only: all query values move the same way.

Notes
-----
Dwork & Roth 2014, Alg 1 and 2, Thm 3.23, 3.25, 3.27; Lyu, Su & Li 2017.)")
      .def(
          "__init__",
          [](SparseVectorParams* self, Scalar<double> epsilon, Scalar<double> sensitivity, Scalar<double> threshold,
             Scalar<double> delta, Scalar<std::uint64_t> max_positives, Scalar<bool> numeric,
             Scalar<double> value_bound, SparseVectorAlgorithm algorithm, Scalar<bool> monotone) {
            new (self) SparseVectorParams{.epsilon = scalar(epsilon, "epsilon"),
                                          .delta = scalar(delta, "delta"),
                                          .sensitivity = scalar(sensitivity, "sensitivity"),
                                          .threshold = scalar(threshold, "threshold"),
                                          .max_positives = scalar(max_positives, "max_positives"),
                                          .numeric = scalar(numeric, "numeric"),
                                          .value_bound = scalar(value_bound, "value_bound"),
                                          .algorithm = algorithm,
                                          .monotone = scalar(monotone, "monotone")};
          },
          "epsilon"_a, "sensitivity"_a, "threshold"_a, "delta"_a = 0.0, "max_positives"_a = 1, "numeric"_a = false,
          "value_bound"_a = 0.0, "algorithm"_a = SparseVectorAlgorithm::dwork_roth, "monotone"_a = false,
          "epsilon: privacy loss of the whole run (finite, > 0), however many queries are below; sensitivity: "
          "the Delta of every query; threshold: the public T; delta: 0 (pure DP) or in (0, 1) for the "
          "advanced-composition scales (DWORK_ROTH only); max_positives: c, halt after this many \"above\" answers; "
          "numeric: NumericSparse, every \"above\" also releases a noisy value; value_bound: a public bound on "
          "``|query value|`` (0: none) that makes the floating-point slack data-independent; algorithm; monotone: "
          "LYU_SU_LI only, all query values move the same way between neighbours (a false claim breaks the "
          "guarantee).")
      .def_rw("epsilon", &SparseVectorParams::epsilon)
      .def_rw("sensitivity", &SparseVectorParams::sensitivity)
      .def_rw("threshold", &SparseVectorParams::threshold)
      .def_rw("delta", &SparseVectorParams::delta)
      .def_rw("max_positives", &SparseVectorParams::max_positives)
      .def_rw("numeric", &SparseVectorParams::numeric)
      .def_rw("value_bound", &SparseVectorParams::value_bound)
      .def_rw("algorithm", &SparseVectorParams::algorithm)
      .def_rw("monotone", &SparseVectorParams::monotone)
      .def("__repr__", [](const SparseVectorParams& p) { return repr(p); });

  nb::class_<SparseVectorScales>(
      m, "SparseVectorScales",
      "The Laplace scales of the three kinds of noise and the split of epsilon behind them. DWORK_ROTH: "
      "threshold_noise = sigma = 2 c Delta/eps (delta = 0) or sqrt(32 c ln(1/delta)) Delta/eps, query_noise = "
      "2 sigma (Dwork & Roth 2014, Thm 3.25); NumericSparse splits eps between the comparisons and the answers, "
      "8/9 and 1/9 for delta = 0, sqrt(512)/(sqrt(512)+1) and 1/(sqrt(512)+1) for delta > 0 (epsilon_comparisons, "
      "epsilon_answers; Thm 3.27). LYU_SU_LI: threshold Delta/eps1, queries 2c Delta/eps2 (c Delta/eps2 monotone) with "
      "eps1 : eps2 = 1 : (2c)^(2/3) (1 : c^(2/3) monotone) (Lyu, Su & Li 2017, Sec. 4.2). answer_noise_secure is "
      "answer_noise raised for the secure Laplace grid answer_granularity.")
      .def_ro("threshold_noise", &SparseVectorScales::threshold_noise)
      .def_ro("query_noise", &SparseVectorScales::query_noise)
      .def_ro("answer_noise", &SparseVectorScales::answer_noise)
      .def_ro("answer_granularity", &SparseVectorScales::answer_granularity)
      .def_ro("answer_noise_secure", &SparseVectorScales::answer_noise_secure)
      .def_ro("epsilon_comparisons", &SparseVectorScales::epsilon_comparisons)
      .def_ro("epsilon_answers", &SparseVectorScales::epsilon_answers)
      .def_ro("threshold_redrawn", &SparseVectorScales::threshold_redrawn)
      .def("__repr__", &repr_scales);

  nb::class_<SparseVectorAnswer>(m, "SparseVectorAnswer",
                                 "One answer: above, and for a NumericSparse \"above\" a noisy value (else None).")
      .def_ro("above", &SparseVectorAnswer::above)
      .def_ro("value", &SparseVectorAnswer::value)
      .def("__repr__", [](const SparseVectorAnswer& a) {
        return "SparseVectorAnswer(above=" + repr_bool(a.above) + ", value=" + repr_optional(a.value) + ")";
      });

  nb::class_<SparseVectorReport>(m, "SparseVectorReport",
                                 "A run so far: its scales, queries answered, \"above\" answers, whether it halted, "
                                 "its stream, and its floating-point slack (public unless slack.depends_on_data).")
      .def_ro("scales", &SparseVectorReport::scales)
      .def_ro("queries", &SparseVectorReport::queries)
      .def_ro("positives", &SparseVectorReport::positives)
      .def_ro("halted", &SparseVectorReport::halted)
      .def_ro("stream", &SparseVectorReport::stream)
      .def_ro("generator", &SparseVectorReport::generator)
      .def_ro("slack", &SparseVectorReport::slack)
      .def("__repr__", &repr_report);

  nb::class_<SparseVectorAbove>(m, "SparseVectorAbove",
                                "An \"above\" answer of a batch: the query's index and, for NumericSparse, its "
                                "noisy value (else None).")
      .def_ro("index", &SparseVectorAbove::index)
      .def_ro("value", &SparseVectorAbove::value)
      .def("__repr__", &repr_above);

  nb::class_<SparseVectorBatch>(m, "SparseVectorBatch",
                                "The \"above\" answers of a batch in order; every other query before "
                                "report.queries was answered \"below\", and the queries from report.queries on "
                                "were not answered (the run halted).")
      .def_ro("above", &SparseVectorBatch::above)
      .def_ro("report", &SparseVectorBatch::report)
      .def("__repr__", [](const SparseVectorBatch& b) {
        std::string above;
        for (std::size_t i = 0; i < b.above.size() && i < 10; ++i) above += (i ? ", " : "") + repr_above(b.above[i]);
        if (b.above.size() > 10) above += ", ...";
        return "SparseVectorBatch(above=[" + above + "], report=" + repr_report(b.report) + ")";
      });
}

void bind_streaming_and_batch(nb::module_& m) {
  const auto release_gil = nb::call_guard<nb::gil_scoped_release>();
  nb::class_<SparseVector>(m, "SparseVector",
                           "The streaming, adaptive sparse vector: one query value at a time. Not copyable (a copy "
                           "would answer with the same noise, and comparing copies reveals the query values).")
      .def(nb::init<Context&, const SparseVectorParams&>(), "context"_a, "params"_a, release_gil,
           "Validates params, charges the context's accountant once (epsilon, or (epsilon, delta)), then draws a "
           "fresh stream.")
      // The GIL stays held: it orders the answers of one object, which the C++ class needs (it is not
      // thread-safe), and an answer takes about a microsecond.
      .def("answer", &SparseVector::answer, "value"_a,
           "The answer to the next query, whose true value on the data is value. A value that is not finite "
           "or beyond value_bound raises InvalidArgument and spends the object; UsageError once it halted or is "
           "spent.")
      .def_prop_ro("halted", &SparseVector::halted, "Whether the c-th \"above\" answer was given.")
      .def_prop_ro("spent", &SparseVector::spent, "Whether answer() can no longer be called (halted or a bad value).")
      .def("report", &SparseVector::report, "The run so far: scales, queries, positives, stream, slack.")
      .def("__reduce__",
           [](const SparseVector&) -> nb::object {
             throw nb::type_error("a SparseVector cannot be copied or pickled: a copy would answer with the same "
                                  "noise; start a new one from the context");
           },
           nb::sig("def __reduce__(self) -> tuple[object, ...]"))
      .def("__repr__", [](const SparseVector& svt) {
        const SparseVectorReport r = svt.report();
        return "SparseVector(queries=" + std::to_string(r.queries) + ", positives=" + std::to_string(r.positives) +
               ", halted=" + repr_bool(r.halted) + ", spent=" + repr_bool(svt.spent()) +
               ", stream=" + std::to_string(r.stream) + ")";
      });

  m.def(
      "sparse_vector_batch_host",
      [](Context& context, HostVector<const double> values, const SparseVectorParams& params) {
        return sparse_vector_batch(context, span_of(values), params);
      },
      "context"_a, "values"_a.noconvert(), "params"_a, release_gil);
  m.def(
      "sparse_vector_batch_device",
      [](Context& context, DeviceVector<const double> values, const SparseVectorParams& params, std::uintptr_t stream) {
        return sparse_vector_batch(context, device_span_of(values), params,
                                   stream_of(stream));
      },
      "context"_a, "values"_a.noconvert(), "params"_a, "stream"_a, release_gil);
}

void bind_calculators(nb::module_& m) {
  m.def("sparse_vector_scales", &sparse_vector_scales, "params"_a,
        R"(The noise scales of a sparse vector run, after checking its parameters.

Parameters
----------
params : SparseVectorParams
    The parameters of the run.

Returns
-------
SparseVectorScales
    The Laplace scales of the threshold, query and answer noise and the split of epsilon behind
    them.

Raises
------
InvalidArgument
    A bad parameter, naming the field and its value.

Notes
-----
Dwork & Roth 2014, Thm 3.23, 3.25, 3.27 (DWORK_ROTH); Lyu, Su & Li 2017, Alg 1 and 7 (LYU_SU_LI).)");
  m.def("sparse_vector_alpha", &sparse_vector_alpha, "params"_a, "queries"_a, "beta"_a,
        R"(The accuracy alpha of a sparse vector run that holds with probability 1 - beta.

Parameters
----------
params : SparseVectorParams
    The parameters of the run.
queries : int
    k, the number of queries answered, >= 1.
beta : float
    The failure probability, in (0, 1).

Returns
-------
float
    alpha: every query above T + alpha is answered "above", none below T - alpha, and NumericSparse
    values are within alpha.

Raises
------
InvalidArgument
    A bad parameter, queries or beta.

Notes
-----
AboveThreshold: 8 Delta (ln k + ln(2/beta))/eps (Dwork & Roth 2014, Thm 3.24); Sparse: 8 c Delta (ln
k + ln(2c/beta))/eps, or Delta (ln k + ln(2c/beta)) sqrt(512 c ln(1/delta))/eps (Thm 3.26);
NumericSparse: 9 c Delta (ln k + ln(4c/beta))/eps, or Delta (ln k + ln(4c/beta)) sqrt(c ln(2/delta))
(sqrt(512) + 1)/eps (Thm 3.28); LYU_SU_LI: the union bound of the Thm 3.24 proof over its noises,
solved for alpha on the safe side.)");
  m.def("sparse_vector_beta", &sparse_vector_beta, "params"_a, "queries"_a, "alpha"_a,
        R"(The inverse of sparse_vector_alpha: the failure probability for an accuracy.

Parameters
----------
params : SparseVectorParams
    The parameters of the run.
queries : int
    k, the number of queries answered, >= 1.
alpha : float
    The accuracy, > 0.

Returns
-------
float
    beta, at most 1.

Raises
------
InvalidArgument
    A bad parameter, queries or alpha.

Notes
-----
The bounds of sparse_vector_alpha (Dwork & Roth 2014, Thm 3.24, 3.26, 3.28).)");
  m.def("exponential_mechanism_alpha", &exponential_mechanism_alpha, "params"_a, "candidates"_a,
        "optimal_candidates"_a, "beta"_a,
        R"(The utility loss alpha of the exponential mechanism that holds with probability 1 - beta.

Parameters
----------
params : SelectionParams
    The release's parameters (epsilon, sensitivity, monotone).
candidates : int
    The number of candidates, >= 1.
optimal_candidates : int
    How many candidates reach OPT, in [1, candidates].
beta : float
    The failure probability, in (0, 1).

Returns
-------
float
    alpha = (2 Delta/eps)(ln(candidates/optimal_candidates) + ln(1/beta)), Delta/eps when monotone:
    with probability >= 1 - beta the output has utility >= OPT - alpha.

Raises
------
InvalidArgument
    A bad parameter or count.

Notes
-----
Dwork & Roth 2014, Thm 3.11.)");
  m.def("exponential_mechanism_beta", &exponential_mechanism_beta, "params"_a, "candidates"_a,
        "optimal_candidates"_a, "alpha"_a,
        R"(The inverse of exponential_mechanism_alpha: beta for a given alpha.

Parameters
----------
params : SelectionParams
    The release's parameters.
candidates : int
    The number of candidates, >= 1.
optimal_candidates : int
    How many candidates reach OPT, in [1, candidates].
alpha : float
    The utility loss, >= 0.

Returns
-------
float
    beta, at most 1.

Raises
------
InvalidArgument
    A bad parameter or count.

Notes
-----
Dwork & Roth 2014, Thm 3.11.)");
}

}  // namespace

void bind_sparse_vector(nb::module_& m) {
  bind_params_and_reports(m);
  bind_streaming_and_batch(m);
  bind_calculators(m);
}

}  // namespace dpselect::python
