// SPDX-License-Identifier: Apache-2.0
// Noise vectors, secure (floating-point-safe) noise, the generalized Gaussian calibration and
// the l-infinity answerer. Every noisy release writes into the caller's float64 array in place:
// nanobind hands over the array's own memory (noconvert(), a writable double array), so a
// read-only or non-float64 array is refused rather than copied (the Python layer,
// dpselect/noise.py, says how to fix it first). The GIL is released during every release and
// every calibration that can take long (up to a second each).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"
#include "repr.hpp"
#include "dpselect/discrete_noise.hpp"
#include "dpselect/generalized_gaussian.hpp"
#include "dpselect/linf_answers.hpp"
#include "dpselect/noise_vector.hpp"
#include "dpselect/secure_noise.hpp"
#include "scalar_arguments.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace dpselect::python {
namespace {

std::string repr(const NoiseVectorParams& p) {
  return "NoiseVectorParams(epsilon=" + repr_double(p.epsilon) + ", distribution=" +
         std::string(to_string(p.distribution)) + ", delta=" + repr_double(p.delta) +
         ", sensitivity=" + repr_double(p.sensitivity) + ", p=" + repr_double(p.p) +
         ", backend=" + std::string(to_string(p.backend)) + ")";
}

std::string repr(const NoiseVectorReport& r) {
  return "NoiseVectorReport(distribution=" + std::string(to_string(r.distribution)) +
         ", epsilon=" + repr_double(r.epsilon) + ", delta=" + repr_double(r.delta) +
         ", sensitivity=" + repr_double(r.sensitivity) + ", p=" + repr_double(r.p) +
         ", scale=" + repr_double(r.scale) + ", coordinates=" + std::to_string(r.coordinates) +
         ", stream=" + std::to_string(r.stream) + ", generator=" + std::string(to_string(r.generator)) +
         ", executed_on=" + std::string(to_string(r.executed_on)) + ")";
}

std::string repr(const SecureNoiseParams& p) {
  return "SecureNoiseParams(epsilon=" + repr_double(p.epsilon) + ", sensitivity=" + repr_double(p.sensitivity) +
         ", distribution=" + std::string(to_string(p.distribution)) + ", delta=" + repr_double(p.delta) +
         ", inputs_on_grid=" + repr_bool(p.inputs_on_grid) + ")";
}

std::string repr(const SecureNoisePlan& p) {
  return "SecureNoisePlan(granularity=" + repr_double(p.granularity) +
         ", integer_sensitivity=" + repr_double(p.integer_sensitivity) +
         ", integer_scale_num=" + std::to_string(p.integer_scale_num) +
         ", integer_scale_den=" + std::to_string(p.integer_scale_den) +
         ", effective_scale=" + repr_double(p.effective_scale) + ", rho=" + repr_double(p.rho) + ")";
}

std::string repr(const SecureNoiseReport& r) {
  return "SecureNoiseReport(distribution=" + std::string(to_string(r.distribution)) + ", plan=" + repr(r.plan) +
         ", coordinates=" + std::to_string(r.coordinates) + ", stream=" + std::to_string(r.stream) +
         ", generator=" + std::string(to_string(r.generator)) + ")";
}

std::string repr(const LinfAnswerParams& p) {
  return "LinfAnswerParams(epsilon=" + repr_double(p.epsilon) + ", delta=" + repr_double(p.delta) +
         ", beta=" + repr_double(p.beta) + ", p=" + repr_double(p.p) +
         ", max_repairs=" + std::to_string(p.max_repairs) +
         ", repair_with_sparse_vector=" + repr_bool(p.repair_with_sparse_vector) + ")";
}

std::string repr(const LinfAnswerPlan& p) {
  return "LinfAnswerPlan(queries=" + std::to_string(p.queries) + ", p=" + repr_double(p.p) +
         ", sigma=" + repr_double(p.sigma) + ", epsilon_noise=" + repr_double(p.epsilon_noise) +
         ", delta_noise=" + repr_double(p.delta_noise) +
         ", repair_with_sparse_vector=" + repr_bool(p.repair_with_sparse_vector) +
         ", check=" + python::repr(p.check) +
         ", repair_std=" + repr_double(p.repair_std) + ", epsilon_repair=" + repr_double(p.epsilon_repair) +
         ", delta_repair=" + repr_double(p.delta_repair) + ", beta=" + repr_double(p.beta) +
         ", bound=" + repr_double(p.bound) + ")";
}

void bind_noise_vectors(nb::module_& m) {
  const auto release_gil = nb::call_guard<nb::gil_scoped_release>();
  nb::enum_<NoiseDistribution>(m, "NoiseDistribution", "The noise of a noise vector (add_noise).")
      .value("LAPLACE", NoiseDistribution::laplace, "epsilon-DP for L1 sensitivity")
      .value("GAUSSIAN", NoiseDistribution::gaussian, "(epsilon, delta)-DP for L2 sensitivity")
      .value("GENERALIZED_GAUSSIAN", NoiseDistribution::generalized_gaussian,
             "(epsilon, delta)-DP for L-infinity sensitivity, density proportional to ``exp(-(|z|/sigma)^p)``");

  nb::class_<NoiseVectorParams>(m, "NoiseVectorParams",
      R"(The privacy parameters of one noise vector (add_noise).

Parameters
----------
epsilon : float
    The privacy loss, finite and > 0.
distribution : NoiseDistribution, default NoiseDistribution.LAPLACE
    LAPLACE, GAUSSIAN or GENERALIZED_GAUSSIAN.
delta : float, default 0.0
    0 for LAPLACE, in (0, 1) otherwise.
sensitivity : float, default 1.0
    Of the whole vector: L1 (LAPLACE), L2 (GAUSSIAN) or L-infinity (GENERALIZED_GAUSSIAN).
p : float, default 2.0
    The GENERALIZED_GAUSSIAN exponent, in [1, 32].
backend : Backend, default Backend.AUTO
    AUTO or CPU run on the CPU cores for host memory, GPU copies to the device.

Notes
-----
Dwork & Roth 2014, Thm 3.6; Balle & Wang 2018; Ganesh & Zhao 2021.)")
      .def(
          "__init__",
          [](NoiseVectorParams* self, Scalar<double> epsilon, NoiseDistribution distribution, Scalar<double> delta,
             Scalar<double> sensitivity, Scalar<double> p, Backend backend) {
            new (self) NoiseVectorParams{distribution,         scalar(epsilon, "epsilon"),
                                         scalar(delta, "delta"), scalar(sensitivity, "sensitivity"),
                                         scalar(p, "p"),         backend};
          },
          "epsilon"_a, "distribution"_a = NoiseDistribution::laplace, "delta"_a = 0.0, "sensitivity"_a = 1.0,
          "p"_a = 2.0, "backend"_a = Backend::Auto,
          "epsilon: privacy loss (finite, > 0); distribution: LAPLACE, GAUSSIAN or GENERALIZED_GAUSSIAN; "
          "delta: 0 for LAPLACE, in (0, 1) otherwise; sensitivity: of the whole vector, L1 (LAPLACE), "
          "L2 (GAUSSIAN) or L-infinity (GENERALIZED_GAUSSIAN); p: the GENERALIZED_GAUSSIAN exponent, "
          "in [1, 32]; backend: AUTO or CPU run on the CPU cores for host memory, GPU copies to the device.")
      .def_rw("epsilon", &NoiseVectorParams::epsilon)
      .def_rw("distribution", &NoiseVectorParams::distribution)
      .def_rw("delta", &NoiseVectorParams::delta)
      .def_rw("sensitivity", &NoiseVectorParams::sensitivity)
      .def_rw("p", &NoiseVectorParams::p)
      .def_rw("backend", &NoiseVectorParams::backend)
      .def("__repr__", [](const NoiseVectorParams& p) { return repr(p); });

  nb::class_<NoiseVectorReport>(m, "NoiseVectorReport",
                                "What add_noise did: the distribution, its scale (LAPLACE: b; GAUSSIAN: the "
                                "standard deviation; GENERALIZED_GAUSSIAN: sigma), the coordinates, and the "
                                "stream drawn from the context. Public: it holds no data.")
      .def_ro("distribution", &NoiseVectorReport::distribution)
      .def_ro("epsilon", &NoiseVectorReport::epsilon)
      .def_ro("delta", &NoiseVectorReport::delta)
      .def_ro("sensitivity", &NoiseVectorReport::sensitivity)
      .def_ro("p", &NoiseVectorReport::p, "1 for LAPLACE, 2 for GAUSSIAN, params.p for GENERALIZED_GAUSSIAN")
      .def_ro("scale", &NoiseVectorReport::scale)
      .def_ro("coordinates", &NoiseVectorReport::coordinates)
      .def_ro("stream", &NoiseVectorReport::stream)
      .def_ro("generator", &NoiseVectorReport::generator)
      .def_ro("executed_on", &NoiseVectorReport::executed_on)
      .def("__repr__", [](const NoiseVectorReport& r) { return repr(r); });

  m.def("noise_vector_scale", &noise_vector_scale, "params"_a, "coordinates"_a, release_gil);
  m.def(
      "add_noise_host",
      [](Context& context, HostVector<double> values, const NoiseVectorParams& params) {
        return add_noise(context, span_of(values), params);
      },
      "context"_a, "values"_a.noconvert(), "params"_a, release_gil);
  m.def(
      "add_noise_device",
      [](Context& context, DeviceVector<double> values, const NoiseVectorParams& params, std::uintptr_t stream) {
        return add_noise(context, device_span_of(values), params, stream_of(stream));
      },
      "context"_a, "values"_a.noconvert(), "params"_a, "stream"_a, release_gil);
}

void bind_secure_noise(nb::module_& m) {
  const auto release_gil = nb::call_guard<nb::gil_scoped_release>();
  nb::enum_<SecureDistribution>(m, "SecureDistribution", "The noise of add_secure_noise.")
      .value("LAPLACE", SecureDistribution::laplace, "discrete Laplace on the grid: epsilon-DP for L1 sensitivity")
      .value("GAUSSIAN", SecureDistribution::gaussian,
             "discrete Gaussian on the grid: (epsilon, delta)-DP for L2 sensitivity");

  nb::class_<SecureNoiseParams>(m, "SecureNoiseParams",
      R"(The privacy parameters of one secure noise release (add_secure_noise).

Parameters
----------
epsilon : float
    The privacy loss, finite and > 0.
sensitivity : float
    L1 (LAPLACE) or L2 (GAUSSIAN) sensitivity of the whole vector, finite and > 0.
distribution : SecureDistribution, default SecureDistribution.LAPLACE
    LAPLACE or GAUSSIAN.
delta : float, default 0.0
    0 for LAPLACE, in (0, 1) for GAUSSIAN.
inputs_on_grid : bool, default False
    Every value is already a multiple of the plan's granularity; a value off the grid is then
    refused.

Notes
-----
Canonne, Kamath & Steinke 2020; Mironov 2012.)")
      .def(
          "__init__",
          [](SecureNoiseParams* self, Scalar<double> epsilon, Scalar<double> sensitivity,
             SecureDistribution distribution, Scalar<double> delta, Scalar<bool> inputs_on_grid) {
            new (self) SecureNoiseParams{distribution, scalar(epsilon, "epsilon"), scalar(delta, "delta"),
                                         scalar(sensitivity, "sensitivity"), scalar(inputs_on_grid, "inputs_on_grid")};
          },
          "epsilon"_a, "sensitivity"_a, "distribution"_a = SecureDistribution::laplace, "delta"_a = 0.0,
          "inputs_on_grid"_a = false,
          "epsilon: privacy loss (finite, > 0); sensitivity: L1 (LAPLACE) or L2 (GAUSSIAN) sensitivity of "
          "the whole vector (finite, > 0); delta: 0 for LAPLACE, in (0, 1) for GAUSSIAN; inputs_on_grid: "
          "every value is already a multiple of the plan's granularity (e.g. integer counts when it is <= 1), "
          "which saves the rounding penalty; a value off the grid is then refused.")
      .def_rw("epsilon", &SecureNoiseParams::epsilon)
      .def_rw("sensitivity", &SecureNoiseParams::sensitivity)
      .def_rw("distribution", &SecureNoiseParams::distribution)
      .def_rw("delta", &SecureNoiseParams::delta)
      .def_rw("inputs_on_grid", &SecureNoiseParams::inputs_on_grid)
      .def("__repr__", [](const SecureNoiseParams& p) { return repr(p); });

  nb::class_<SecureNoisePlan>(m, "SecureNoisePlan",
                              "What add_secure_noise does for a number of values: every output is a "
                              "multiple of granularity (a power of two); the integer noise has scale "
                              "integer_scale_num / integer_scale_den (LAPLACE: t; GAUSSIAN: sigma_z^2) in units "
                              "of granularity, effective_scale in real units; rho is the GAUSSIAN release's "
                              "zCDP (0 for LAPLACE). Public: computed from the parameters alone.")
      .def_ro("granularity", &SecureNoisePlan::granularity)
      .def_ro("integer_sensitivity", &SecureNoisePlan::integer_sensitivity)
      .def_ro("integer_scale_num", &SecureNoisePlan::integer_scale_num)
      .def_ro("integer_scale_den", &SecureNoisePlan::integer_scale_den)
      .def_ro("effective_scale", &SecureNoisePlan::effective_scale)
      .def_ro("rho", &SecureNoisePlan::rho)
      .def("__repr__", [](const SecureNoisePlan& p) { return repr(p); });

  nb::class_<SecureNoiseReport>(m, "SecureNoiseReport",
                                "What add_secure_noise did: its plan, the coordinates and the stream drawn.")
      .def_ro("distribution", &SecureNoiseReport::distribution)
      .def_ro("plan", &SecureNoiseReport::plan)
      .def_ro("coordinates", &SecureNoiseReport::coordinates)
      .def_ro("stream", &SecureNoiseReport::stream)
      .def_ro("generator", &SecureNoiseReport::generator)
      .def("__repr__", [](const SecureNoiseReport& r) { return repr(r); });

  m.def("secure_noise_plan", &secure_noise_plan, "params"_a, "coordinates"_a);
  m.def(
      "add_secure_noise_host",
      [](Context& context, HostVector<double> values, const SecureNoiseParams& params) {
        return add_secure_noise(context, span_of(values), params);
      },
      "context"_a, "values"_a.noconvert(), "params"_a, release_gil);
  m.def(
      "add_secure_noise_device",
      [](Context& context, DeviceVector<double> values, const SecureNoiseParams& params, std::uintptr_t stream) {
        return add_secure_noise(context, device_span_of(values), params, stream_of(stream));
      },
      "context"_a, "values"_a.noconvert(), "params"_a, "stream"_a, release_gil);
}

void bind_calibration(nb::module_& m) {
  const auto release_gil = nb::call_guard<nb::gil_scoped_release>();
  m.def("generalized_gaussian_sigma", &generalized_gaussian_sigma, "epsilon"_a, "delta"_a, "p"_a, "k"_a,
        release_gil,
        R"(The smallest sigma for which GG(p, sigma) noise on k coordinates is (epsilon, delta)-DP.

Parameters
----------
epsilon : float
    Finite and > 0.
delta : float
    In (0, 1).
p : float
    The exponent, in [1, 32].
k : int
    The coordinates, 1 <= k <= 2^32.

Returns
-------
float
    sigma (relative tolerance 1e-5, from the safe side) for L-infinity sensitivity 1.

Raises
------
InvalidArgument
    A bad parameter, named with its value.

Notes
-----
Ganesh & Zhao 2021. GG(p, sigma) has density proportional to ``exp(-(|z|/sigma)^p)``: GG(2, sigma) =
N(0, sigma^2 / 2), GG(1, sigma) = Laplace(sigma). Costs ~0.1-1 s the first time; the last 64 results
are cached. Releases the GIL.)");
  m.def("generalized_gaussian_delta", &generalized_gaussian_delta, "sigma"_a, "p"_a, "k"_a, "epsilon"_a,
        release_gil,
        R"(An upper bound on the delta of GG(p, sigma) noise on k coordinates at epsilon.

Parameters
----------
sigma : float
    The scale, > 0.
p : float
    The exponent, in [1, 32].
k : int
    The coordinates, >= 1.
epsilon : float
    Finite and > 0.

Returns
-------
float
    delta such that the noise is (epsilon, delta)-DP for L-infinity sensitivity 1.

Raises
------
InvalidArgument
    A bad parameter.

Notes
-----
The privacy-loss distribution of the worst shift, discretized pessimistically (Doroshenko, Ghazi,
Kamath, Kumar & Manurangsi 2022) and composed k times; the mechanism of Ganesh & Zhao 2021.)");
  m.def("generalized_gaussian_expected_linf", &generalized_gaussian_expected_linf, "sigma"_a, "p"_a, "k"_a,
        release_gil,
        R"(The expected L-infinity norm of k independent GG(p, sigma) coordinates.

Parameters
----------
sigma : float
    The scale, > 0.
p : float
    The exponent, in [1, 32].
k : int
    The coordinates, >= 1.

Returns
-------
float
    E max_i ``|x_i|`` (relative accuracy ~1e-9).

Raises
------
InvalidArgument
    A bad parameter.)");
  m.def("generalized_gaussian_abs_cdf", &generalized_gaussian_abs_cdf, "t"_a, "sigma"_a, "p"_a,
        R"(``P[|x| <= t]`` for one GG(p, sigma) coordinate.

Parameters
----------
t : float
    The bound, >= 0.
sigma : float
    The scale, > 0.
p : float
    The exponent, in [1, 32].

Returns
-------
float
    The regularized lower incomplete gamma P(1/p, (t/sigma)^p).

Raises
------
InvalidArgument
    A bad parameter.)");
  m.def("generalized_gaussian_recommended_p", &generalized_gaussian_recommended_p, "k"_a,
        "composed_with_sparse_vector"_a = false,
        R"(The rule-of-thumb generalized Gaussian exponent for k counting queries.

Parameters
----------
k : int
    The number of queries, >= 1.
composed_with_sparse_vector : bool, default False
    Whether the sparse vector repairs large noise.

Returns
-------
float
    max(2, ln ln k) alone, max(1, ln ln ln k) composed with the sparse vector technique.

Notes
-----
Ganesh & Zhao 2021.)");

  nb::class_<GeneralizedGaussianChoice>(m, "GeneralizedGaussianChoice",
                                        "The exponent p of a grid with the smallest expected L-infinity error, "
                                        "its calibrated sigma and that error.")
      .def_ro("p", &GeneralizedGaussianChoice::p)
      .def_ro("sigma", &GeneralizedGaussianChoice::sigma)
      .def_ro("expected_linf", &GeneralizedGaussianChoice::expected_linf)
      .def("__repr__", [](const GeneralizedGaussianChoice& c) {
        return "GeneralizedGaussianChoice(p=" + repr_double(c.p) + ", sigma=" + repr_double(c.sigma) +
               ", expected_linf=" + repr_double(c.expected_linf) + ")";
      });
  m.def(
      "generalized_gaussian_best_p",
      [](double epsilon, double delta, std::uint64_t k, const std::vector<double>& p_grid) {
        return generalized_gaussian_best_p(epsilon, delta, k, p_grid);
      },
      "epsilon"_a, "delta"_a, "k"_a, "p_grid"_a = std::vector<double>{}, release_gil,
        R"(The exponent of a grid with the smallest expected L-infinity error.

Parameters
----------
epsilon : float
    Finite and > 0.
delta : float
    In (0, 1).
k : int
    The coordinates, >= 1.
p_grid : list of float, optional
    The exponents tried, each in [1, 32]; empty: 1, 1.25, ..., 4.

Returns
-------
GeneralizedGaussianChoice
    p, its calibrated sigma and the expected L-infinity error.

Raises
------
InvalidArgument
    A bad parameter or grid point.

Notes
-----
Each grid point costs one calibration (~0.1-1 s) (Ganesh & Zhao 2021). Releases the GIL.)");

  m.def("analytic_gaussian_sigma", &discrete::analytic_gaussian_sigma, "epsilon"_a, "delta"_a, "l2_sensitivity"_a,
        R"(The analytic Gaussian mechanism's smallest sigma for (epsilon, delta).

Parameters
----------
epsilon : float
    Finite and > 0 (any value: the analytic calibration has no epsilon < 1 limit).
delta : float
    In (0, 1).
l2_sensitivity : float
    Finite and > 0.

Returns
-------
float
    The smallest sigma with gaussian_delta(sigma, l2_sensitivity, epsilon) <= delta, to the last
    bit, from the safe side.

Raises
------
InvalidArgument
    A bad parameter.

Notes
-----
Balle & Wang 2018, Algorithm 1.)");
  m.def("gaussian_delta", &discrete::gaussian_delta, "sigma"_a, "l2_sensitivity"_a, "epsilon"_a,
        R"(The delta of the Gaussian mechanism N(0, sigma^2) at epsilon.

Parameters
----------
sigma : float
    The standard deviation, > 0.
l2_sensitivity : float
    Finite and > 0.
epsilon : float
    Finite and >= 0.

Returns
-------
float
    An upper bound of delta that includes the rounding error.

Raises
------
InvalidArgument
    A bad parameter.

Notes
-----
Balle & Wang 2018, Theorem 8.)");
  m.def("discrete_gaussian_delta", &discrete::discrete_gaussian_delta, "sigma"_a, "sensitivity"_a, "epsilon"_a,
        release_gil,
        R"(The delta of the discrete Gaussian N_Z(0, sigma^2) on an integer query at epsilon.

Parameters
----------
sigma : float
    In (0, 1e6].
sensitivity : int
    An integer >= 1.
epsilon : float
    Finite and > 0.

Returns
-------
float
    The smallest delta for which the mechanism is (epsilon, delta)-DP, rounded up.

Raises
------
InvalidArgument
    A bad parameter.

Notes
-----
Canonne, Kamath & Steinke 2020, Theorem 7. Releases the GIL.)");
}

void bind_linf_answers(nb::module_& m) {
  const auto release_gil = nb::call_guard<nb::gil_scoped_release>();
  nb::class_<LinfAnswerParams>(m, "LinfAnswerParams",
      R"(The privacy and accuracy goals of answer_counting_queries.

Parameters
----------
epsilon : float
    The total privacy loss, finite and > 0.
delta : float
    The total delta, in (0, 1).
beta : float, default 0.05
    The failure probability of the plan's error bound, in (0, 1).
p : float, default 0.0
    The generalized Gaussian exponent in [1, 32] (0: the planner chooses).
max_repairs : int, default 0
    The most coordinates the sparse vector may flag (0: the planner chooses).
repair_with_sparse_vector : bool, default True
    False uses the generalized Gaussian alone.

Notes
-----
Ganesh & Zhao 2021.)")
      .def(
          "__init__",
          [](LinfAnswerParams* self, Scalar<double> epsilon, Scalar<double> delta, Scalar<double> beta,
             Scalar<double> p, Scalar<std::uint64_t> max_repairs, Scalar<bool> repair_with_sparse_vector) {
            new (self) LinfAnswerParams{scalar(epsilon, "epsilon"),         scalar(delta, "delta"),
                                        scalar(beta, "beta"),               scalar(p, "p"),
                                        scalar(max_repairs, "max_repairs"),
                                        scalar(repair_with_sparse_vector, "repair_with_sparse_vector")};
          },
          "epsilon"_a, "delta"_a, "beta"_a = 0.05, "p"_a = 0.0, "max_repairs"_a = 0,
          "repair_with_sparse_vector"_a = true,
          "epsilon, delta: the total privacy loss (epsilon > 0, delta in (0, 1)); beta: the failure "
          "probability of the plan's error bound, in (0, 1); p: the generalized Gaussian exponent in "
          "[1, 32] (0: the planner chooses); max_repairs: the most coordinates the sparse vector may flag "
          "(0: the planner chooses); repair_with_sparse_vector: False uses the generalized Gaussian alone.")
      .def_rw("epsilon", &LinfAnswerParams::epsilon)
      .def_rw("delta", &LinfAnswerParams::delta)
      .def_rw("beta", &LinfAnswerParams::beta)
      .def_rw("p", &LinfAnswerParams::p)
      .def_rw("max_repairs", &LinfAnswerParams::max_repairs)
      .def_rw("repair_with_sparse_vector", &LinfAnswerParams::repair_with_sparse_vector)
      .def("__repr__", [](const LinfAnswerParams& p) { return repr(p); });

  nb::class_<LinfAnswerPlan>(m, "LinfAnswerPlan",
                             "How answer_counting_queries answers `queries` counting queries: generalized "
                             "Gaussian noise GG(p, sigma) at (epsilon_noise, delta_noise), the sparse vector "
                             "`check` (a SparseVectorParams) that flags large noise, and Gaussian repairs of "
                             "standard deviation repair_std at (epsilon_repair, delta_repair). With probability "
                             ">= 1 - beta the L-infinity error is at most bound. A function of the parameters "
                             "alone (public). Its fields may be edited (e.g. check.threshold): "
                             "answer_counting_queries checks again everything the privacy rests on; "
                             "copy.copy(plan) edits a copy.")
      .def_rw("queries", &LinfAnswerPlan::queries)
      .def_rw("p", &LinfAnswerPlan::p)
      .def_rw("sigma", &LinfAnswerPlan::sigma)
      .def_rw("epsilon_noise", &LinfAnswerPlan::epsilon_noise)
      .def_rw("delta_noise", &LinfAnswerPlan::delta_noise)
      .def_rw("repair_with_sparse_vector", &LinfAnswerPlan::repair_with_sparse_vector)
      .def_rw("check", &LinfAnswerPlan::check)
      .def_rw("repair_std", &LinfAnswerPlan::repair_std)
      .def_rw("epsilon_repair", &LinfAnswerPlan::epsilon_repair)
      .def_rw("delta_repair", &LinfAnswerPlan::delta_repair)
      .def_rw("beta", &LinfAnswerPlan::beta)
      .def_rw("bound", &LinfAnswerPlan::bound)
      .def("__copy__", [](const LinfAnswerPlan& p) { return p; })
      .def("__deepcopy__", [](const LinfAnswerPlan& p, nb::handle) { return p; }, "memo"_a)
      .def("__repr__", [](const LinfAnswerPlan& p) { return repr(p); });

  nb::class_<LinfAnswerReport>(m, "LinfAnswerReport",
                               "What answer_counting_queries did: its plan, how many coordinates the sparse "
                               "vector flagged and answered again (public: the flagged set is the sparse "
                               "vector's output), and whether it halted after max_positives flags before the "
                               "last query (probability <= beta / 3 by the plan).")
      .def_ro("plan", &LinfAnswerReport::plan)
      .def_ro("repaired", &LinfAnswerReport::repaired)
      .def_ro("halted", &LinfAnswerReport::halted)
      .def_ro("generator", &LinfAnswerReport::generator)
      .def("__repr__", [](const LinfAnswerReport& r) {
        return "LinfAnswerReport(repaired=" + std::to_string(r.repaired) + ", halted=" + repr_bool(r.halted) +
               ", generator=" + std::string(to_string(r.generator)) + ", plan=" + repr(r.plan) + ")";
      });

  m.def("plan_linf_answers", &plan_linf_answers, "params"_a, "queries"_a, release_gil);
  m.def(
      "answer_counting_queries_host",
      [](Context& context, HostVector<double> answers, const LinfAnswerParams& params) {
        return answer_counting_queries(context, span_of(answers), params);
      },
      "context"_a, "answers"_a.noconvert(), "params"_a, release_gil);
  m.def(
      "answer_counting_queries_host",
      [](Context& context, HostVector<double> answers, const LinfAnswerPlan& plan) {
        return answer_counting_queries(context, span_of(answers), plan);
      },
      "context"_a, "answers"_a.noconvert(), "plan"_a, release_gil);
}

}  // namespace

void bind_noise(nb::module_& m) {
  bind_noise_vectors(m);
  bind_secure_noise(m);
  bind_calibration(m);
  bind_linf_answers(m);
}

}  // namespace dpselect::python
