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
#include "scalar_arguments.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace dpselect::python {
namespace {

void bind_charges(nb::module_& m) {
  nb::class_<PrivacyCharge>(m, "PrivacyCharge", R"(``count`` releases of one kind at (epsilon, delta), charged together.

Parameters
----------
kind : ReleaseKind
    What each release guarantees.
epsilon : float
    Finite and > 0.
delta : float, default 0.0
    0 for PURE and EXPONENTIAL_MECHANISM, in [0, 1) for APPROXIMATE.
count : int, default 1
    1 to 2^53 releases.

Notes
-----
Give a list of them to PrivacyAccountant.charge: all are recorded or none.)")
      .def(
          "__init__",
          [](PrivacyCharge* self, ReleaseKind kind, Scalar<double> epsilon, Scalar<double> delta,
             Scalar<std::uint64_t> count) {
            new (self) PrivacyCharge{kind, scalar(epsilon, "epsilon"), scalar(delta, "delta"), scalar(count, "count")};
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

  m.def("release_kind", &release_kind, "mechanism"_a, R"(What a selection with ``mechanism`` guarantees, for the accountant.

Parameters
----------
mechanism : Mechanism
    The selection mechanism.

Returns
-------
ReleaseKind
    EXPONENTIAL_MECHANISM for Mechanism.EXPONENTIAL (epsilon-DP and epsilon^2/8-zCDP), PURE for
    PERMUTE_AND_FLIP and LAPLACE_NOISY_MAX (epsilon-DP).

Notes
-----
The exponential mechanism is epsilon-bounded-range, hence epsilon^2/8-zCDP (Cesar & Rogers 2021);
a pure epsilon-DP release is epsilon^2/2-zCDP (Bun & Steinke 2016, Prop 1.4).)");
}

void bind_composition(nb::module_& m) {
  const auto release_gil = nb::call_guard<nb::gil_scoped_release>();
  m.def(
      "basic_composition", [](const std::vector<PrivacyBound>& releases) { return basic_composition(releases); },
      "releases"_a, R"(Basic composition: the sums of the epsilons and of the deltas of several releases.

Parameters
----------
releases : list of PrivacyBound
    At least one, each with epsilon finite and > 0 and delta in [0, 1).

Returns
-------
PrivacyBound
    (sum of epsilons, sum of deltas), compensated sums: the order of the releases does not matter
    beyond an ulp.

Raises
------
InvalidArgument
    An empty list, or the first bad entry, named ("releases[3].epsilon ...").

Notes
-----
Dwork & Roth 2014, Thm 3.16; holds for adaptively chosen releases too.)");
  m.def("advanced_composition", &advanced_composition, "k"_a, "per_release"_a, "delta_slack"_a,
        R"(Advanced composition of k releases, each (epsilon, delta)-DP.

Parameters
----------
k : int
    The number of releases, 1 <= k <= 2^53.
per_release : PrivacyBound
    The (epsilon, delta) of each release: epsilon finite and > 0, delta in [0, 1).
delta_slack : float
    The delta' the bound spends, in (0, 1).

Returns
-------
PrivacyBound
    (epsilon sqrt(2 k ln(1/delta_slack)) + k epsilon (e^epsilon - 1), k delta + delta_slack). The
    delta may reach 1 (a true but empty bound).

Raises
------
InvalidArgument
    A bad k, per_release or delta_slack, named with its value.

Notes
-----
Dwork, Rothblum & Vadhan 2010 (Dwork & Roth 2014, Thm 3.20).)");
  m.def("optimal_composition_delta", &optimal_composition_delta, "k"_a, "epsilon"_a, "epsilon_total"_a,
        release_gil, R"(The exact privacy profile of k epsilon-DP releases: the smallest delta at epsilon_total.

Parameters
----------
k : int
    The number of releases, 1 <= k <= 2^53.
epsilon : float
    The epsilon of each release, finite and > 0.
epsilon_total : float
    The total epsilon, finite and >= 0 (0: the total variation distance).

Returns
-------
float
    The smallest delta such that the k releases are together (epsilon_total, delta)-DP. Never
    below the exact value, above it by a relative 1e-12 at most for k <= 10^6; O(sqrt(k)) terms.

Raises
------
InvalidArgument
    A bad k, epsilon or epsilon_total, named with its value.

Notes
-----
Kairouz, Oh & Viswanath 2015, Thm 3.3 (attained by k-fold randomized response). Releases the GIL.)");
  m.def("optimal_composition_epsilon", &optimal_composition_epsilon, "k"_a, "epsilon"_a, "delta_total"_a,
        release_gil, R"(The inverse of optimal_composition_delta: the smallest epsilon_total at delta_total.

Parameters
----------
k : int
    The number of releases, 1 <= k <= 2^53.
epsilon : float
    The epsilon of each release, finite and > 0.
delta_total : float
    The total delta, in [0, 1); 0 gives k epsilon, rounded up.

Returns
-------
float
    The smallest epsilon_total whose delta is <= delta_total, never below the exact value and
    within a relative 2^-40 of it.

Raises
------
InvalidArgument
    A bad k, epsilon or delta_total, named with its value.

Notes
-----
Kairouz, Oh & Viswanath 2015, Thm 3.3. Releases the GIL.)");
}

void bind_zcdp(nb::module_& m) {
  m.def("zcdp_of_pure", &zcdp_of_pure, "epsilon"_a, R"(The zCDP rho of an epsilon-DP release: epsilon^2 / 2.

Parameters
----------
epsilon : float
    Finite and > 0.

Returns
-------
float
    rho = epsilon^2 / 2.

Raises
------
InvalidArgument
    A bad epsilon.

Notes
-----
Bun & Steinke 2016, Prop 1.4. zCDP composes by adding rho (Bun & Steinke 2016, Lemma 1.7).)");
  m.def("zcdp_of_exponential_mechanism", &zcdp_of_exponential_mechanism, "epsilon"_a,
        R"(The zCDP rho of the exponential mechanism at epsilon: epsilon^2 / 8.

Parameters
----------
epsilon : float
    Finite and > 0.

Returns
-------
float
    rho = epsilon^2 / 8.

Raises
------
InvalidArgument
    A bad epsilon.

Notes
-----
The exponential mechanism is epsilon-bounded-range (Cesar & Rogers 2021). zCDP composes by adding
rho (Bun & Steinke 2016, Lemma 1.7).)");
  m.def("delta_from_zcdp", &delta_from_zcdp, "rho"_a, "epsilon"_a,
        R"(The smallest delta such that rho-zCDP implies (epsilon, delta)-DP.

Parameters
----------
rho : float
    Finite and > 0.
epsilon : float
    Finite and >= 0.

Returns
-------
float
    inf over alpha > 1 of exp((alpha-1)(alpha rho - epsilon))/(alpha-1) (1-1/alpha)^alpha, never
    more than sqrt(1 - e^-rho); rounded up.

Raises
------
InvalidArgument
    A bad rho or epsilon.

Notes
-----
Canonne, Kamath & Steinke 2020, Cor 13.)");
  m.def("epsilon_from_zcdp_tight", &epsilon_from_zcdp_tight, "rho"_a, "delta"_a,
        R"(The smallest epsilon such that rho-zCDP implies (epsilon, delta)-DP.

Parameters
----------
rho : float
    Finite and > 0.
delta : float
    In (0, 1).

Returns
-------
float
    epsilon, rounded up; never larger than epsilon_from_zcdp.

Raises
------
InvalidArgument
    A bad rho or delta.

Notes
-----
Canonne, Kamath & Steinke 2020, Cor 13.)");
  m.def("epsilon_from_zcdp", &epsilon_from_zcdp, "rho"_a, "delta"_a,
        R"(The (epsilon, delta)-DP that rho-zCDP implies by the standard conversion.

Parameters
----------
rho : float
    Finite and > 0.
delta : float
    In (0, 1).

Returns
-------
float
    rho + 2 sqrt(rho ln(1/delta)).

Raises
------
InvalidArgument
    A bad rho or delta.

Notes
-----
Bun & Steinke 2016, Prop 1.3; epsilon_from_zcdp_tight is never larger.)");
}

void bind_budgets(nb::module_& m) {
  const auto release_gil = nb::call_guard<nb::gil_scoped_release>();
  m.def("compose_homogeneous", &compose_homogeneous, "k"_a, "epsilon"_a, "kind"_a, "delta_budget"_a, release_gil,
        R"(The bound a PrivacyAccountant reports after k releases of one kind, each at epsilon.

Parameters
----------
k : int
    The number of releases, 1 <= k <= 2^53.
epsilon : float
    The epsilon of each release, finite and > 0.
kind : ReleaseKind
    PURE or EXPONENTIAL_MECHANISM.
delta_budget : float
    The delta the bound may use, in [0, 1).

Returns
-------
AccountedBound
    The smallest epsilon over basic, advanced and optimal composition and zCDP converted at
    delta_budget, with its route; its delta is 0 for basic composition and delta_budget otherwise.

Raises
------
InvalidArgument
    A bad k, epsilon, kind or delta_budget.

Notes
-----
Dwork & Roth 2014, Thm 3.16 and 3.20; Kairouz, Oh & Viswanath 2015; Canonne, Kamath & Steinke 2020,
Cor 13.)");
  m.def("split_evenly", &split_evenly, "epsilon_total"_a, "k"_a,
        R"(An even share of a budget: epsilon_total / k, rounded down.

Parameters
----------
epsilon_total : float
    Finite and > 0.
k : int
    The number of shares, 1 <= k <= 2^53.

Returns
-------
float
    A share such that k copies sum, in any order, to at most epsilon_total.

Raises
------
InvalidArgument
    A bad epsilon_total or k.)");
  m.def(
      "split_by_weights",
      [](double epsilon_total, const std::vector<double>& weights) { return split_by_weights(epsilon_total, weights); },
      "epsilon_total"_a, "weights"_a, R"(Shares of a budget proportional to weights.

Parameters
----------
epsilon_total : float
    Finite and > 0.
weights : sequence of float
    At least one, each finite and > 0.

Returns
-------
list of float
    One share per weight, scaled so that they sum, in any order, to at most epsilon_total (within
    a relative 2^-50 below it).

Raises
------
InvalidArgument
    A bad epsilon_total or weight (named), or a share that would round to 0.)");
  m.def("per_release_epsilon", &per_release_epsilon, "k"_a, "target_epsilon"_a, "target_delta"_a, "kind"_a,
        release_gil, R"(The largest per-release epsilon such that k releases stay within a target.

Parameters
----------
k : int
    The number of releases, 1 <= k <= 2^53.
target_epsilon : float
    The total epsilon, finite and > 0.
target_delta : float
    The total delta, in [0, 1).
kind : ReleaseKind
    PURE or EXPONENTIAL_MECHANISM.

Returns
-------
float
    An epsilon within a relative 2^-40 of the largest such that charging it k times into a
    PrivacyAccountant with budget (target_epsilon, target_delta) succeeds (compose_homogeneous).

Raises
------
InvalidArgument
    A bad k, target or kind.)");
}

}  // namespace

void bind_accounting(nb::module_& m) {
  bind_charges(m);
  bind_composition(m);
  bind_zcdp(m);
  bind_budgets(m);
}

}  // namespace dpselect::python
