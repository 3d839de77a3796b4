// SPDX-License-Identifier: Apache-2.0
// Composition theorems, zCDP conversions and budget splits (dpselect/accounting.hpp), and the
// charge of several releases at once. Each function is a few microseconds (the optimal profile:
// O(sqrt(k)) terms), cheap enough to call in a loop over k; the ones that may evaluate the
// optimal profile release the GIL.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "repr.hpp"
#include "dpselect/accounting.hpp"
#include "dpselect/top_k.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace dpselect::python {
namespace {

void bind_charges(nb::module_& m) {
  nb::class_<PrivacyCharge>(m, "PrivacyCharge",
                            "`count` releases of one kind at (epsilon, delta), charged together by PrivacyAccountant.charge(list).")
      .def(
          "__init__",
          [](PrivacyCharge* self, ReleaseKind kind, double epsilon, double delta, std::uint64_t count) {
            new (self) PrivacyCharge{kind, epsilon, delta, count};
          },
          "kind"_a, "epsilon"_a, "delta"_a = 0.0, "count"_a = 1,
          "kind: a ReleaseKind; epsilon: finite, > 0; delta: 0 for PURE and EXPONENTIAL_MECHANISM, in [0, 1) "
          "for APPROXIMATE; count: 1 to 2^53 releases.")
      .def_rw("kind", &PrivacyCharge::kind)
      .def_rw("epsilon", &PrivacyCharge::epsilon)
      .def_rw("delta", &PrivacyCharge::delta)
      .def_rw("count", &PrivacyCharge::count)
      .def("__repr__", [](const PrivacyCharge& c) {
        return "PrivacyCharge(kind=" + std::string(to_string(c.kind)) + ", epsilon=" + repr_double(c.epsilon) +
               ", delta=" + repr_double(c.delta) + ", count=" + std::to_string(c.count) + ")";
      });

  m.def("release_kind", &release_kind, "mechanism"_a,
        "What a selection with `mechanism` guarantees: EXPONENTIAL_MECHANISM for Mechanism.EXPONENTIAL, PURE for "
        "PERMUTE_AND_FLIP and LAPLACE_NOISY_MAX.");
}

void bind_composition(nb::module_& m) {
  const auto release_gil = nb::call_guard<nb::gil_scoped_release>();
  m.def(
      "basic_composition", [](const std::vector<PrivacyBound>& releases) { return basic_composition(releases); },
      "releases"_a,
      "Basic composition (Dwork & Roth 2014, Thm 3.16): PrivacyBound(sum of epsilons, sum of deltas) of a list "
      "of PrivacyBound, each with epsilon finite and > 0 and delta in [0, 1). Compensated sums: the order of "
      "the releases does not matter beyond an ulp. Raises InvalidArgument naming the first bad entry "
      "(\"releases[3].epsilon ...\") or an empty list.");
  m.def("advanced_composition", &advanced_composition, "k"_a, "per_release"_a, "delta_slack"_a,
        "Advanced composition of k releases, each (epsilon, delta)-DP (Dwork, Rothblum & Vadhan 2010; Dwork & "
        "Roth 2014, Thm 3.20): PrivacyBound(epsilon sqrt(2 k ln(1/delta_slack)) + k epsilon (e^epsilon - 1), "
        "k delta + delta_slack). 1 <= k <= 2^53; delta_slack in (0, 1). The delta may reach 1 (a true but "
        "empty bound).");
  m.def("optimal_composition_delta", &optimal_composition_delta, "k"_a, "epsilon"_a, "epsilon_total"_a,
        release_gil,
        "The exact privacy profile of k releases, each epsilon-DP (Kairouz, Oh & Viswanath 2015, Thm 3.3; "
        "attained by k-fold randomized response): the smallest delta such that they are together "
        "(epsilon_total, delta)-DP. Never below the exact value, above it by a relative 1e-12 at most for "
        "k <= 10^6; O(sqrt(k)) terms. epsilon_total finite and >= 0 (0: the total variation distance).");
  m.def("optimal_composition_epsilon", &optimal_composition_epsilon, "k"_a, "epsilon"_a, "delta_total"_a,
        release_gil,
        "The inverse of optimal_composition_delta: the smallest epsilon_total whose delta is <= delta_total "
        "(Kairouz, Oh & Viswanath 2015, Thm 3.3), never below the exact value and within a relative 2^-40 of "
        "it. delta_total in [0, 1); 0 gives k epsilon, rounded up.");
}

void bind_zcdp(nb::module_& m) {
  m.def("zcdp_of_pure", &zcdp_of_pure, "epsilon"_a,
        "rho of an epsilon-DP release: epsilon^2 / 2 (Bun & Steinke 2016, Prop 1.4).");
  m.def("zcdp_of_exponential_mechanism", &zcdp_of_exponential_mechanism, "epsilon"_a,
        "rho of the exponential mechanism at epsilon: epsilon^2 / 8 (it is epsilon-bounded-range; Cesar & "
        "Rogers 2021). zCDP composes by adding rho (Bun & Steinke 2016, Lemma 1.7).");
  m.def("delta_from_zcdp", &delta_from_zcdp, "rho"_a, "epsilon"_a,
        "The smallest delta such that rho-zCDP implies (epsilon, delta)-DP by Canonne, Kamath & Steinke 2020 "
        "(Cor 13): inf over alpha > 1 of exp((alpha-1)(alpha rho - epsilon))/(alpha-1) (1-1/alpha)^alpha, never "
        "more than sqrt(1 - e^-rho). Rounded up; rho finite and > 0, epsilon finite and >= 0.");
  m.def("epsilon_from_zcdp_tight", &epsilon_from_zcdp_tight, "rho"_a, "delta"_a,
        "The smallest epsilon such that rho-zCDP implies (epsilon, delta)-DP by Canonne, Kamath & Steinke 2020 "
        "(Cor 13); never larger than epsilon_from_zcdp. Rounded up; rho finite and > 0, delta in (0, 1).");
  m.def("epsilon_from_zcdp", &epsilon_from_zcdp, "rho"_a, "delta"_a,
        "(epsilon, delta)-DP implied by rho-zCDP: rho + 2 sqrt(rho ln(1/delta)) (Bun & Steinke 2016, Prop 1.3).");
}

void bind_budgets(nb::module_& m) {
  const auto release_gil = nb::call_guard<nb::gil_scoped_release>();
  m.def("compose_homogeneous", &compose_homogeneous, "k"_a, "epsilon"_a, "kind"_a, "delta_budget"_a, release_gil,
        "The bound a PrivacyAccountant reports after k releases of `kind` (PURE or EXPONENTIAL_MECHANISM), each "
        "at epsilon, with delta_budget the delta it may use: an AccountedBound with the smallest epsilon over "
        "basic, advanced and optimal composition and zCDP converted at delta_budget (Dwork & Roth 2014, Thm "
        "3.16 and 3.20; Kairouz, Oh & Viswanath 2015; Canonne, Kamath & Steinke 2020, Cor 13). Its delta is 0 "
        "for basic composition and delta_budget otherwise.");
  m.def("split_evenly", &split_evenly, "epsilon_total"_a, "k"_a,
        "epsilon_total / k, rounded down so that k copies sum (in any order) to at most epsilon_total. "
        "1 <= k <= 2^53.");
  m.def(
      "split_by_weights",
      [](double epsilon_total, const std::vector<double>& weights) { return split_by_weights(epsilon_total, weights); },
      "epsilon_total"_a, "weights"_a,
      "Shares of epsilon_total proportional to `weights` (a sequence of floats, each finite and > 0), scaled so "
      "that they sum, in any order, to at most epsilon_total (within a relative 2^-50 below it). Raises "
      "InvalidArgument when a weight's share would round to 0.");
  m.def("per_release_epsilon", &per_release_epsilon, "k"_a, "target_epsilon"_a, "target_delta"_a, "kind"_a,
        release_gil,
        "The largest per-release epsilon such that k releases of `kind` (PURE or EXPONENTIAL_MECHANISM) stay "
        "within (target_epsilon, target_delta) by compose_homogeneous: charging it k times into a "
        "PrivacyAccountant with that budget succeeds. Within a relative 2^-40 of the largest.");
}

}  // namespace

void bind_accounting(nb::module_& m) {
  bind_charges(m);
  bind_composition(m);
  bind_zcdp(m);
  bind_budgets(m);
}

}  // namespace dpselect::python
