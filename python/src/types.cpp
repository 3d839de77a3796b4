// SPDX-License-Identifier: Apache-2.0
// Enums, parameters, reports, the accountant and the context, with Python names and reprs.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "bindings.hpp"
#include "repr.hpp"
#include "dpselect/accounting.hpp"
#include "dpselect/context.hpp"
#include "dpselect/rows.hpp"
#include "dpselect/top_k.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace dpselect::python {
namespace {

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
  nb::class_<SelectionParams>(m, "SelectionParams", "The privacy parameters of one selection.")
      .def(
          "__init__",
          [](SelectionParams* self, double epsilon, double sensitivity, Mechanism mechanism, bool monotone,
             double utility_bound, Backend backend, std::optional<double> utility_reference) {
            new (self) SelectionParams{mechanism, epsilon, sensitivity, monotone, utility_bound, backend,
                                       utility_reference};
          },
          "epsilon"_a, "sensitivity"_a, "mechanism"_a = Mechanism::exponential, "monotone"_a = false,
          "utility_bound"_a = 0.0, "backend"_a = Backend::Auto, "utility_reference"_a = nb::none(),
          "epsilon: privacy loss of the release (finite, > 0); sensitivity: the utility's Delta; "
          "monotone: all utilities move one way between neighbours (halves the noise); "
          "utility_bound: a public bound on |utility| (0: none), or on |utility - utility_reference|; "
          "backend: AUTO, CPU or GPU; utility_reference: a public value near the utilities that "
          "scores are computed from (None: select takes the first utility; 0 with a utility_bound).")
      .def_rw("epsilon", &SelectionParams::epsilon)
      .def_rw("sensitivity", &SelectionParams::sensitivity)
      .def_rw("mechanism", &SelectionParams::mechanism)
      .def_rw("monotone", &SelectionParams::monotone)
      .def_rw("utility_bound", &SelectionParams::utility_bound)
      .def_rw("utility_reference", &SelectionParams::utility_reference)
      .def_rw("backend", &SelectionParams::backend)
      .def("__repr__", [](const SelectionParams& p) {
        return "SelectionParams(epsilon=" + repr_double(p.epsilon) + ", sensitivity=" + repr_double(p.sensitivity) +
               ", mechanism=" + std::string(to_string(p.mechanism)) + ", monotone=" + repr_bool(p.monotone) +
               ", utility_bound=" + repr_double(p.utility_bound) + ", backend=" + std::string(to_string(p.backend)) +
               (p.utility_reference ? ", utility_reference=" + repr_double(*p.utility_reference) : std::string()) +
               ")";
      });

  nb::class_<FloatingPointSlack>(m, "FloatingPointSlack",
                                 "The computed mechanism is (epsilon + slack.epsilon, slack.delta)-DP. "
                                 "depends_on_data: computed from the data, do not publish.")
      .def_ro("epsilon", &FloatingPointSlack::epsilon)
      .def_ro("delta", &FloatingPointSlack::delta)
      .def_ro("depends_on_data", &FloatingPointSlack::depends_on_data)
      .def("__repr__", [](const FloatingPointSlack& s) { return repr(s); });

  nb::class_<SelectionReport>(m, "SelectionReport", "What a release did (public unless slack.depends_on_data).")
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

  nb::class_<Selection>(m, "Selection", "One private release: the chosen index and its report.")
      .def_ro("index", &Selection::index)
      .def_ro("report", &Selection::report)
      .def("__repr__", [](const Selection& s) {
        return "Selection(index=" + std::to_string(s.index) + ", report=" + repr(s.report) + ")";
      });

  nb::class_<TopKReport>(m, "TopKReport", "A top-k release: the report of one pick, k, and the totals.")
      .def_ro("per_pick", &TopKReport::per_pick)
      .def_ro("k", &TopKReport::k)
      .def_ro("epsilon_total_basic", &TopKReport::epsilon_total_basic)
      .def_ro("rho", &TopKReport::rho)
      .def("__repr__", [](const TopKReport& r) {
        return "TopKReport(k=" + std::to_string(r.k) + ", epsilon_total_basic=" + repr_double(r.epsilon_total_basic) +
               ", rho=" + repr_double(r.rho) + ", per_pick=" + repr(r.per_pick) + ")";
      });
  nb::class_<TopKSelection>(m, "TopKSelection", "k indices, largest noisy score first, and the report.")
      .def_ro("indices", &TopKSelection::indices)
      .def_ro("report", &TopKSelection::report)
      .def("__repr__", [](const TopKSelection& s) {
        std::string indices;
        for (std::size_t i = 0; i < s.indices.size() && i < 10; ++i) indices += (i ? ", " : "") + std::to_string(s.indices[i]);
        if (s.indices.size() > 10) indices += ", ...";
        return "TopKSelection(indices=[" + indices + "], k=" + std::to_string(s.report.k) + ")";
      });
  nb::class_<RowsSelection>(m, "RowsSelection", "One Selection per row (or per repeated release).")
      .def_ro("selections", &RowsSelection::selections)
      .def("__len__", [](const RowsSelection& s) { return s.selections.size(); })
      .def("__repr__", [](const RowsSelection& s) {
        return "RowsSelection(" + std::to_string(s.selections.size()) + " selections)";
      });
}

void bind_accounting_and_context(nb::module_& m) {
  nb::class_<PrivacyBound>(m, "PrivacyBound", "An (epsilon, delta) guarantee or budget.")
      .def(nb::init<double, double>(), "epsilon"_a, "delta"_a = 0.0)
      .def_rw("epsilon", &PrivacyBound::epsilon)
      .def_rw("delta", &PrivacyBound::delta)
      .def("__repr__", [](const PrivacyBound& b) {
        return "PrivacyBound(epsilon=" + repr_double(b.epsilon) + ", delta=" + repr_double(b.delta) + ")";
      });
  nb::class_<AccountedBound>(m, "AccountedBound", "The best bound on what was charged, and its route.")
      .def_ro("epsilon", &AccountedBound::epsilon)
      .def_ro("delta", &AccountedBound::delta)
      .def_ro("route", &AccountedBound::route)
      .def("__repr__", [](const AccountedBound& b) {
        return "AccountedBound(epsilon=" + repr_double(b.epsilon) + ", delta=" + repr_double(b.delta) +
               ", route=" + std::string(to_string(b.route)) + ")";
      });
  nb::class_<PrivacyAccountant>(m, "PrivacyAccountant",
                                "A privacy budget and the releases charged to it (thread-safe). Give it to "
                                "Context.charge_to: every release is then charged before any noise is drawn, "
                                "and a release over budget raises BudgetExceeded and draws nothing.")
      .def(nb::init<PrivacyBound, ParameterChoice>(), "budget"_a, "choice"_a = ParameterChoice::fixed_in_advance)
      .def("charge", nb::overload_cast<ReleaseKind, double, double>(&PrivacyAccountant::charge), "kind"_a,
           "epsilon"_a, "delta"_a = 0.0, "Records one release; raises BudgetExceeded over budget (nothing recorded).")
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
                      "The source of every release's randomness. Context() is keyed with 256 bits from the "
                      "operating system's CSPRNG: use it for real data.")
      .def(nb::init<>())
      .def_static("from_os_entropy", &Context::from_os_entropy, "generator"_a = Generator::chacha20,
                  "A context keyed from the OS with a choice of generator (PHILOX: faster, not cryptographically "
                  "secure).")
      .def_static("fixed_seed", &Context::with_fixed_seed, "seed"_a, "generator"_a = Generator::chacha20,
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
