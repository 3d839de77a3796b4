// SPDX-License-Identifier: Apache-2.0
// Enums, parameters, reports, the accountant and the context, with Python names and reprs.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "repr.hpp"
#include "dpselect/accounting.hpp"
#include "dpselect/context.hpp"
#include "dpselect/rows.hpp"
#include "dpselect/top_k.hpp"
#include "scalar_arguments.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace dpselect::python {
namespace {

// The labels of a release live in the result's instance dictionary (the classes are
// nb::dynamic_attr()): the Python layer (dpselect/__init__.py) sets them after the release.
nb::object attached(nb::handle self, const char* name) { return nb::getattr(self, name, nb::none()); }

std::string label_repr(nb::handle self, const char* name, const char* shown) {
  nb::object value = attached(self, name);
  if (value.is_none()) return {};
  return std::string(", ") + shown + "=" + nb::cast<std::string>(nb::repr(value));
}

// The labels of a top-k or rows result as a list cut, like the indices, after kShown entries (a
// NumPy array's entries shown as Python values, as tolist() gives them).
constexpr std::size_t kShown = 10;

std::string labels_repr(nb::handle self) {
  nb::object value = attached(self, "_labels");
  if (value.is_none()) return {};
  const std::size_t n = nb::len(value);
  nb::object head = value[nb::slice(std::min(n, kShown))];
  if (nb::hasattr(head, "tolist")) head = head.attr("tolist")();
  std::string labels;
  for (nb::handle label : head) labels += (labels.empty() ? "" : ", ") + nb::cast<std::string>(nb::repr(label));
  if (n > kShown) labels += ", ...";
  return ", labels=[" + labels + "]";
}

// A per-result array made on first use and kept in the instance dictionary, so that r.indices[i]
// in a loop does not rebuild it.
template <class Make>
nb::object cached(nb::handle self, const char* name, Make&& make) {
  nb::object value = attached(self, name);
  if (value.is_none()) {
    value = make();
    nb::setattr(self, name, value);
  }
  return value;
}

// A new read-only 1-D NumPy array of n values value_at(i), owned by the array.
template <class T, class ValueAt>
nb::object read_only_array(std::size_t n, ValueAt&& value_at) {
  T* data = new T[n == 0 ? 1 : n];
  for (std::size_t i = 0; i < n; ++i) data[i] = value_at(i);
  nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<T*>(p); });
  return nb::cast(nb::ndarray<nb::numpy, const T, nb::ndim<1>>(data, {n}, owner));
}

void bind_enums(nb::module_& m) {
  nb::enum_<Mechanism>(m, "Mechanism", "Which private selection runs (see the C++ types.hpp).")
      .value("EXPONENTIAL", Mechanism::exponential, "exponential mechanism (Gumbel-max)")
      .value("PERMUTE_AND_FLIP", Mechanism::permute_and_flip, "report-noisy-max with exponential noise")
      .value("LAPLACE_NOISY_MAX", Mechanism::laplace_noisy_max, "report-noisy-max with Laplace noise");
  nb::enum_<Backend>(m, "Backend", "Where to compute: AUTO uses a usable GPU, else the CPU.")
      .value("AUTO", Backend::Auto)
      .value("CPU", Backend::Cpu)
      .value("GPU", Backend::Gpu);
  nb::enum_<ExecutedOn>(m, "ExecutedOn", "What ran a release.")
      .value("NONE", ExecutedOn::none)
      .value("CPU", ExecutedOn::cpu)
      .value("GPU", ExecutedOn::gpu)
      .value("CPU_AND_GPU", ExecutedOn::cpu_and_gpu);
  nb::enum_<Generator>(m, "Generator", "CHACHA20 (cryptographically secure, the default) or PHILOX (faster).")
      .value("CHACHA20", Generator::chacha20)
      .value("PHILOX", Generator::philox);
  nb::enum_<ReleaseKind>(m, "ReleaseKind", "What one release guarantees, for the accountant.")
      .value("PURE", ReleaseKind::pure)
      .value("EXPONENTIAL_MECHANISM", ReleaseKind::exponential_mechanism)
      .value("APPROXIMATE", ReleaseKind::approximate);
  nb::enum_<CompositionRoute>(m, "CompositionRoute", "The composition theorem behind a bound.")
      .value("BASIC", CompositionRoute::basic)
      .value("ADVANCED", CompositionRoute::advanced)
      .value("OPTIMAL_HOMOGENEOUS", CompositionRoute::optimal_homogeneous)
      .value("ZCDP", CompositionRoute::zcdp);
  nb::enum_<ParameterChoice>(m, "ParameterChoice", "Whether release parameters were fixed in advance.")
      .value("FIXED_IN_ADVANCE", ParameterChoice::fixed_in_advance)
      .value("ADAPTIVE", ParameterChoice::adaptive);
}

void bind_params_and_reports(nb::module_& m) {
  nb::class_<SelectionParams>(m, "SelectionParams",
      R"(The privacy parameters of one selection (the C++ SelectionParams).

Parameters
----------
epsilon : float
    The privacy loss of the release, finite and > 0.
sensitivity : float
    Delta, the most any utility changes between neighbouring datasets, finite and > 0.
mechanism : Mechanism, default Mechanism.EXPONENTIAL
    EXPONENTIAL, PERMUTE_AND_FLIP or LAPLACE_NOISY_MAX.
monotone : bool, default False
    All utilities move the same way between neighbours (counting queries): the noise halves. A false
    claim breaks the guarantee.
utility_bound : float, default 0.0
    A public bound on ``|utility|`` (on ``|utility - utility_reference|`` with a reference), >= 0; 0: none.
    It makes the floating-point slack public.
backend : Backend, default Backend.AUTO
    AUTO, CPU or GPU.
utility_reference : float or None, default None
    A public value near the utilities that scores are computed from (None: select takes the first
    utility; 0 with a utility_bound).

Notes
-----
The fields are read-write attributes of the same names. Each mechanism's guarantee and its source:
see dpselect.select (Dwork & Roth 2014, Thm 3.10; McKenna & Sheldon 2020; Dwork & Roth 2014, Claim
3.9).)")
      .def(
          "__init__",
          [](SelectionParams* self, Scalar<double> epsilon, Scalar<double> sensitivity, Mechanism mechanism,
             Scalar<bool> monotone, Scalar<double> utility_bound, Backend backend,
             Scalar<std::optional<double>> utility_reference) {
            new (self) SelectionParams{mechanism,
                                       scalar(epsilon, "epsilon"),
                                       scalar(sensitivity, "sensitivity"),
                                       scalar(monotone, "monotone"),
                                       scalar(utility_bound, "utility_bound"),
                                       backend,
                                       scalar(utility_reference, "utility_reference")};
            self->validate();  // refused when built, naming the field; checked again by every release
          },
          "epsilon"_a, "sensitivity"_a, "mechanism"_a = Mechanism::exponential, "monotone"_a = false,
          "utility_bound"_a = 0.0, "backend"_a = Backend::Auto, "utility_reference"_a = nb::none(),
          "epsilon: privacy loss of the release (finite, > 0); sensitivity: the utility's Delta; "
          "monotone: all utilities move one way between neighbours (halves the noise); "
          "utility_bound: a public bound on ``|utility|`` (0: none), or on ``|utility - utility_reference|``; "
          "backend: AUTO, CPU or GPU; utility_reference: a public value near the utilities that "
          "scores are computed from (None: select takes the first utility; 0 with a utility_bound).")
      .def_rw("epsilon", &SelectionParams::epsilon)
      .def_rw("sensitivity", &SelectionParams::sensitivity)
      .def_rw("mechanism", &SelectionParams::mechanism)
      .def_rw("monotone", &SelectionParams::monotone)
      .def_rw("utility_bound", &SelectionParams::utility_bound)
      .def_rw("utility_reference", &SelectionParams::utility_reference)
      .def_rw("backend", &SelectionParams::backend)
      .def("validate", &SelectionParams::validate,
           "Checks the fields as every release does, before anything is charged or drawn; raises "
           "InvalidArgument naming the field and its value.")
      .def("__repr__", [](const SelectionParams& p) {
        return "SelectionParams(epsilon=" + repr_double(p.epsilon) + ", sensitivity=" + repr_double(p.sensitivity) +
               ", mechanism=" + std::string(to_string(p.mechanism)) + ", monotone=" + repr_bool(p.monotone) +
               ", utility_bound=" + repr_double(p.utility_bound) + ", backend=" + std::string(to_string(p.backend)) +
               (p.utility_reference ? ", utility_reference=" + repr_double(*p.utility_reference) : std::string()) +
               ")";
      });

  nb::class_<FloatingPointSlack>(m, "FloatingPointSlack",
      R"(What double arithmetic adds to a release's guarantee.

Attributes
----------
epsilon : float
    The computed mechanism is (epsilon + slack.epsilon, slack.delta)-DP.
delta : float
    See epsilon.
depends_on_data : bool
    Computed from the data (no public bound was given): do not publish it.)")
      .def_ro("epsilon", &FloatingPointSlack::epsilon)
      .def_ro("delta", &FloatingPointSlack::delta)
      .def_ro("depends_on_data", &FloatingPointSlack::depends_on_data)
      .def("__repr__", [](const FloatingPointSlack& s) { return repr(s); });

  nb::class_<SelectionReport>(m, "SelectionReport",
      R"(What a release did: public unless slack.depends_on_data.

Attributes
----------
mechanism : Mechanism
    The mechanism that ran.
epsilon_spent : float
    The epsilon charged.
sensitivity : float
    Delta.
monotone : bool
    Whether the monotone scale was used.
noise_scale : float
    The scale of the noise added to each utility.
executed_on : ExecutedOn
    What ran the release.
cpu_fallback_reason : str
    Why backend AUTO ran on the CPU although a GPU is present (empty otherwise).
candidates : int
    The number of candidates.
slack : FloatingPointSlack
    The floating-point slack of the release.
stream : int
    The stream the release drew from its context.
generator : Generator
    The context's generator.)")
      .def_ro("mechanism", &SelectionReport::mechanism)
      .def_ro("epsilon_spent", &SelectionReport::epsilon_spent)
      .def_ro("sensitivity", &SelectionReport::sensitivity)
      .def_ro("monotone", &SelectionReport::monotone)
      .def_ro("noise_scale", &SelectionReport::noise_scale)
      .def_ro("executed_on", &SelectionReport::executed_on)
      .def_prop_ro("cpu_fallback_reason",
                   [](const SelectionReport& r) { return std::string(r.cpu_fallback_reason); },
                   "Why backend AUTO ran on the CPU although a GPU is present (empty otherwise).")
      .def_ro("candidates", &SelectionReport::candidates)
      .def_ro("slack", &SelectionReport::slack)
      .def_ro("stream", &SelectionReport::stream)
      .def_ro("generator", &SelectionReport::generator)
      .def("__repr__", [](const SelectionReport& r) { return repr(r); });

  nb::class_<Selection>(m, "Selection", nb::dynamic_attr(), R"(One private release: the chosen index, its label and the report.

Attributes
----------
index : int
    The chosen candidate, an index into the utilities (0-based).
label : object or None
    ``labels[index]`` when the release was given ``labels=``, None otherwise (public).
report : SelectionReport
    What the release did: public unless ``report.slack.depends_on_data``.)")
      .def_ro("index", &Selection::index, "The chosen candidate's index (0-based).")
      .def_prop_ro(
          "label", [](nb::handle self) { return attached(self, "_label"); },
          nb::sig("def label(self, /) -> object | None"),
          "The chosen candidate's label, ``labels[index]``, when the release was given ``labels=``; None "
          "otherwise. The labels are public (the candidate universe).")
      .def_ro("report", &Selection::report, "The release's SelectionReport.")
      .def("__repr__", [](nb::handle self) {
        const Selection& s = nb::cast<const Selection&>(self);
        return "Selection(index=" + std::to_string(s.index) + label_repr(self, "_label", "label") +
               ", report=" + repr(s.report) + ")";
      });

  nb::class_<TopKReport>(m, "TopKReport", R"(A top-k release: the report of one pick, k, and the totals.

Attributes
----------
per_pick : SelectionReport
    The report of one pick (epsilon_spent is the per-pick epsilon; the slack covers one pick).
k : int
    The number of picks.
epsilon_total_basic : float
    k * epsilon, the basic composition of the picks (Dwork & Roth 2014, Thm 3.16).
rho : float
    The zCDP of the k picks together, k epsilon^2 / 8 (Cesar & Rogers 2021).)")
      .def_ro("per_pick", &TopKReport::per_pick)
      .def_ro("k", &TopKReport::k)
      .def_ro("epsilon_total_basic", &TopKReport::epsilon_total_basic)
      .def_ro("rho", &TopKReport::rho)
      .def("__repr__", [](const TopKReport& r) {
        return "TopKReport(k=" + std::to_string(r.k) + ", epsilon_total_basic=" + repr_double(r.epsilon_total_basic) +
               ", rho=" + repr_double(r.rho) + ", per_pick=" + repr(r.per_pick) + ")";
      });
  nb::class_<TopKSelection>(m, "TopKSelection", nb::dynamic_attr(), R"(A top-k release: k indices, largest noisy score first, their labels and the report.

Attributes
----------
indices : list of int
    The k chosen candidates, in release order (largest noisy score first).
labels : list or numpy.ndarray or None
    ``labels[i]`` for each chosen i when the release was given ``labels=`` (a NumPy array when the
    labels were one), None otherwise.
report : TopKReport
    The report of the k picks together.)")
      .def_ro("indices", &TopKSelection::indices, "The k chosen indices, largest noisy score first.")
      .def_prop_ro(
          "labels", [](nb::handle self) { return attached(self, "_labels"); },
          nb::sig("def labels(self, /) -> list[object] | numpy.typing.NDArray[typing.Any] | None"),
          "The chosen candidates' labels in release order when the release was given labels= (a NumPy array "
          "when the labels were one, a list otherwise), None otherwise.")
      .def_ro("report", &TopKSelection::report, "The TopKReport.")
      .def("__repr__", [](nb::handle self) {
        const TopKSelection& s = nb::cast<const TopKSelection&>(self);
        std::string indices;
        for (std::size_t i = 0; i < s.indices.size() && i < kShown; ++i) {
          indices += (i ? ", " : "") + std::to_string(s.indices[i]);
        }
        if (s.indices.size() > kShown) indices += ", ...";
        return "TopKSelection(indices=[" + indices + "], k=" + std::to_string(s.report.k) +
               labels_repr(self) + ")";
      });
  nb::class_<RowsSelection>(m, "RowsSelection", nb::dynamic_attr(), R"(One release per row of a matrix (select_rows) or per repetition (select_repeated).

Attributes
----------
indices : numpy.ndarray
    The chosen index of each release, a read-only int64 array of ``len(self)`` entries.
labels : list or numpy.ndarray or None
    The chosen label of each release when it was given ``labels=`` (a NumPy array when the labels
    were one, a list otherwise), None otherwise.
streams : numpy.ndarray
    The stream of each release, a read-only uint64 array.
reports : list of SelectionReport
    The report of each release.
selections : list of Selection
    One Selection per release (index and report), as earlier versions returned them.)")
      .def_prop_ro(
          "indices",
          [](nb::handle self) {
            return cached(self, "_indices", [&] {
              const RowsSelection& s = nb::cast<const RowsSelection&>(self);
              return read_only_array<std::int64_t>(s.selections.size(), [&](std::size_t i) {
                return static_cast<std::int64_t>(s.selections[i].index);
              });
            });
          },
          nb::sig("def indices(self, /) -> numpy.typing.NDArray[numpy.int64]"),
          "The chosen index of each release: a read-only int64 array (made once, then the same object).")
      .def_prop_ro(
          "streams",
          [](nb::handle self) {
            return cached(self, "_streams", [&] {
              const RowsSelection& s = nb::cast<const RowsSelection&>(self);
              return read_only_array<std::uint64_t>(s.selections.size(), [&](std::size_t i) {
                return static_cast<std::uint64_t>(s.selections[i].report.stream);
              });
            });
          },
          nb::sig("def streams(self, /) -> numpy.typing.NDArray[numpy.uint64]"),
          "The stream of each release: a read-only uint64 array.")
      .def_prop_ro(
          "labels", [](nb::handle self) { return attached(self, "_labels"); },
          nb::sig("def labels(self, /) -> list[object] | numpy.typing.NDArray[typing.Any] | None"),
          "The chosen label of each release when it was given labels= (a NumPy array when the labels were one, "
          "a list otherwise), None otherwise.")
      .def_prop_ro(
          "reports",
          [](const RowsSelection& s) {
            std::vector<SelectionReport> reports;
            reports.reserve(s.selections.size());
            for (const Selection& selection : s.selections) reports.push_back(selection.report);
            return reports;
          },
          "The SelectionReport of each release (a new list).")
      .def_ro("selections", &RowsSelection::selections, "One Selection per release (a new list).")
      .def("__len__", [](const RowsSelection& s) { return s.selections.size(); })
      .def("__repr__", [](nb::handle self) {
        const RowsSelection& s = nb::cast<const RowsSelection&>(self);
        std::string indices;
        for (std::size_t i = 0; i < s.selections.size() && i < kShown; ++i) {
          indices += (i ? ", " : "") + std::to_string(s.selections[i].index);
        }
        if (s.selections.size() > kShown) indices += ", ...";
        return "RowsSelection(" + std::to_string(s.selections.size()) + " selections, indices=[" + indices + "]" +
               labels_repr(self) + ")";
      });
}

void bind_accounting_and_context(nb::module_& m) {
  nb::class_<PrivacyBound>(m, "PrivacyBound",
      R"(An (epsilon, delta) guarantee or budget.

Parameters
----------
epsilon : float
    The epsilon, finite.
delta : float, default 0.0
    In [0, 1).)")
      .def(
          "__init__",
          [](PrivacyBound* self, Scalar<double> epsilon, Scalar<double> delta) {
            new (self) PrivacyBound{scalar(epsilon, "epsilon"), scalar(delta, "delta")};
          },
          "epsilon"_a, "delta"_a = 0.0)
      .def_rw("epsilon", &PrivacyBound::epsilon)
      .def_rw("delta", &PrivacyBound::delta)
      .def("__repr__", [](const PrivacyBound& b) {
        return "PrivacyBound(epsilon=" + repr_double(b.epsilon) + ", delta=" + repr_double(b.delta) + ")";
      });
  nb::class_<AccountedBound>(m, "AccountedBound",
      R"(The best bound on what was charged, and the composition theorem behind it.

Attributes
----------
epsilon : float
    The total epsilon.
delta : float
    The total delta.
route : CompositionRoute
    BASIC, ADVANCED, OPTIMAL_HOMOGENEOUS or ZCDP.)")
      .def_ro("epsilon", &AccountedBound::epsilon)
      .def_ro("delta", &AccountedBound::delta)
      .def_ro("route", &AccountedBound::route)
      .def("__repr__", [](const AccountedBound& b) {
        return "AccountedBound(epsilon=" + repr_double(b.epsilon) + ", delta=" + repr_double(b.delta) +
               ", route=" + std::string(to_string(b.route)) + ")";
      });
  nb::class_<PrivacyAccountant>(m, "PrivacyAccountant",
      R"(A privacy budget and the releases charged to it (thread-safe).

Parameters
----------
budget : PrivacyBound
    The total (epsilon, delta) the releases may spend.
choice : ParameterChoice, default ParameterChoice.FIXED_IN_ADVANCE
    Whether the releases' parameters are fixed in advance (then advanced, optimal and zCDP
    composition may be used) or ADAPTIVE (basic composition only).

Notes
-----
Give it to Context.charge_to: every release is then charged before any noise is drawn, and a release
over budget raises BudgetExceeded and draws nothing. spent() is the best of basic composition (Dwork
& Roth 2014, Thm 3.16), advanced composition (Thm 3.20), the optimal homogeneous profile (Kairouz,
Oh & Viswanath 2015) and zCDP (Bun & Steinke 2016; Canonne, Kamath & Steinke 2020).)")
      .def(nb::init<PrivacyBound, ParameterChoice>(), "budget"_a, "choice"_a = ParameterChoice::fixed_in_advance)
      .def(
          "charge",
          [](PrivacyAccountant& accountant, ReleaseKind kind, Scalar<double> epsilon, Scalar<double> delta) {
            accountant.charge(kind, scalar(epsilon, "epsilon"), scalar(delta, "delta"));
          },
          "kind"_a, "epsilon"_a, "delta"_a = 0.0, "Records one release; raises BudgetExceeded over budget (nothing recorded).")
      .def(
          "charge",
          [](PrivacyAccountant& accountant, const std::vector<PrivacyCharge>& charges) { accountant.charge(charges); },
          "charges"_a, nb::call_guard<nb::gil_scoped_release>(),
          "Records every release in `charges` (a list of PrivacyCharge) or none of them: the budget check covers "
          "them together (a top-k release of k picks, one release per row of a matrix). Raises InvalidArgument "
          "naming the first bad entry (\"charges[2].epsilon ...\") or BudgetExceeded; nothing is recorded then. "
          "An empty list records nothing.")
      .def("spent", &PrivacyAccountant::spent, "The best bound on everything charged so far.")
      .def_prop_ro("budget", &PrivacyAccountant::budget)
      .def_prop_ro("release_count", &PrivacyAccountant::release_count)
      .def("__repr__", [](const PrivacyAccountant& a) {
        const AccountedBound spent = a.spent();
        return "PrivacyAccountant(budget=(" + repr_double(a.budget().epsilon) + ", " + repr_double(a.budget().delta) +
               "), releases=" + std::to_string(a.release_count()) + ", spent=(" + repr_double(spent.epsilon) + ", " +
               repr_double(spent.delta) + "))";
      });

  nb::class_<Context>(m, "Context",
      R"(The source of every release's randomness, and its accountant.

Notes
-----
Context() is keyed with 256 bits from the operating system's CSPRNG (ChaCha20, RFC 8439): use it for
real data. Context.fixed_seed(seed) is reproducible and NOT PRIVATE. Every release draws a fresh
stream, so no two releases share noise. Context.charge_to(accountant) charges every later release.)")
      .def(nb::init<>())
      .def_static("from_os_entropy", &Context::from_os_entropy, "generator"_a = Generator::chacha20,
                  "A context keyed from the OS with a choice of generator (PHILOX: faster, not cryptographically "
                  "secure).")
      .def_static(
          "fixed_seed",
          [](Scalar<std::uint64_t> seed, Generator generator) {
            return Context::with_fixed_seed(scalar(seed, "seed"), generator);
          },
          "seed"_a, "generator"_a = Generator::chacha20,
                  "NOT PRIVATE: a reproducible context for tests and experiments. Anyone who knows the seed "
                  "predicts every noise value; never use it for a real release. Its releases equal those of "
                  "C++ Context::with_fixed_seed(seed) and of `dpselect --seed`.")
      .def_prop_ro("generator", &Context::generator)
      .def("charge_to", &Context::charge_to, "accountant"_a.none(),
           "Charge every later release of this context to `accountant` (None: none).")
      .def_prop_ro("accountant", &Context::accountant)
      .def("__repr__", [](const Context& c) { return "Context(generator=" + std::string(to_string(c.generator())) + ")"; });
}

}  // namespace

void bind_types(nb::module_& m) {
  bind_enums(m);
  bind_params_and_reports(m);
  bind_accounting_and_context(m);
}

}  // namespace dpselect::python
