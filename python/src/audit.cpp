// SPDX-License-Identifier: Apache-2.0
// The empirical privacy auditor (dpselect/audit.hpp) as the submodule dpselect._dpselect.audit:
// its statistics, the library's audit targets, targets whose mechanism is a Python callable, and
// run_audit with the GIL released. Python callables (a target's run, a progress hook) are called
// with the GIL re-acquired; an exception they raise ends the audit and reaches the caller as the
// same Python exception.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "repr.hpp"
#include "dpselect/audit.hpp"
#include "dpselect/errors.hpp"
#include "scalar_arguments.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace dpselect::python {
namespace {

using audit::AuditOptions;
using audit::AuditResult;
using audit::AuditTarget;
using audit::Bounds;
using audit::EventBound;
using audit::EventCounts;
using audit::Interval;

// The library's message for a bad value: "dpselect: <name> must be <requirement> (got <value>)",
// the value in the shortest form that reads back exactly, as the C++ library writes it.
[[noreturn]] void throw_invalid(const std::string& name, const std::string& requirement, double value) {
  char text[64];
  const auto written = std::to_chars(text, text + sizeof text, value);
  throw InvalidArgument("dpselect: " + name + " must be " + requirement + " (got " + std::string(text, written.ptr) +
                        ")");
}

std::string repr_string(const std::string& text) { return nb::cast<std::string>(nb::repr(nb::str(text.c_str()))); }

std::string type_name_of(nb::handle value) { return nb::cast<std::string>(nb::type_name(value.type())); }

// A Python callable kept by a C++ std::function. Each copy owns its own reference, so that the
// object holding it can report it to the garbage collector (a run function that refers to its
// own target is a cycle), and takes the GIL to change it: a std::function may be copied or
// destroyed where the GIL is released.
class PythonCallable {
 public:
  explicit PythonCallable(nb::object callable) : callable_(std::move(callable)) {}
  PythonCallable(const PythonCallable& other) {
    nb::gil_scoped_acquire gil;
    callable_ = other.callable_;
  }
  PythonCallable(PythonCallable&& other) noexcept = default;
  PythonCallable& operator=(const PythonCallable&) = delete;
  PythonCallable& operator=(PythonCallable&&) = delete;
  ~PythonCallable() {
    if (!callable_.is_valid()) return;  // moved from
    nb::gil_scoped_acquire gil;
    callable_.reset();
  }
  const nb::object& object() const { return callable_; }

 private:
  nb::object callable_;
};

PythonCallable callable_argument(nb::object value, const char* name) {
  if (!PyCallable_Check(value.ptr())) {
    throw nb::type_error(("dpselect: " + std::string(name) + " must be callable (got " + type_name_of(value) + ")").c_str());
  }
  return PythonCallable(std::move(value));
}

// AuditOptions::progress from a Python callable progress(done, total).
struct PythonProgress {
  PythonCallable callable;
  void operator()(std::uint64_t done, std::uint64_t total) const {
    nb::gil_scoped_acquire gil;
    callable.object()(done, total);
  }
};

using KeyArray = nb::ndarray<const std::int64_t, nb::ndim<1>, nb::device::cpu>;

// Adds what a Python target's run returned for `runs` releases to `counts`: a 1-D int64 array of
// one key per release, or a dict key -> count whose counts add up to runs.
void add_python_outputs(nb::handle outputs, std::uint64_t runs, audit::OutputCounts& counts) {
  if (nb::isinstance<nb::dict>(outputs)) {
    audit::OutputCounts added;
    std::uint64_t total = 0;
    for (const auto& [key_object, count_object] : nb::borrow<nb::dict>(outputs)) {
      std::int64_t key = 0;
      std::uint64_t count = 0;
      if (!nb::try_cast(key_object, key)) {
        throw nb::type_error(("dpselect: the audit target's run returned a dict key that is not a 64-bit integer (got " +
                              nb::cast<std::string>(nb::repr(key_object)) + ")")
                                 .c_str());
      }
      if (!nb::try_cast(count_object, count)) {
        throw nb::value_error(("dpselect: the audit target's run returned a count that is not an integer >= 0 "
                               "(got " + nb::cast<std::string>(nb::repr(count_object)) + " for key " +
                               std::to_string(key) + ")")
                                  .c_str());
      }
      if (count > runs - total) {
        throw nb::value_error(("dpselect: the audit target's run must return counts that add up to runs = " +
                               std::to_string(runs) + " (got more)")
                                  .c_str());
      }
      added[key] += count;
      total += count;
    }
    if (total != runs) {
      throw nb::value_error(("dpselect: the audit target's run must return counts that add up to runs = " +
                             std::to_string(runs) + " (got " + std::to_string(total) + ")")
                                .c_str());
    }
    for (const auto& [key, count] : added) counts[key] += count;
    return;
  }
  KeyArray keys;
  if (!nb::try_cast(outputs, keys, false)) {
    std::string got = type_name_of(outputs);
    if (nb::hasattr(outputs, "dtype") && nb::hasattr(outputs, "shape")) {
      const nb::object dtype = outputs.attr("dtype");
      const nb::object shape = outputs.attr("shape");
      got += " of dtype " + nb::cast<std::string>(nb::str(dtype)) + " and shape " + nb::cast<std::string>(nb::str(shape));
    }
    throw nb::type_error(("dpselect: the audit target's run must return a 1-D NumPy int64 array of output keys or a "
                          "dict key -> count (got " + got + "); return numpy.asarray(keys, dtype=numpy.int64).ravel()")
                             .c_str());
  }
  if (keys.shape(0) != runs) {
    throw nb::value_error(("dpselect: the audit target's run must return one key per release, runs = " +
                           std::to_string(runs) + " (got " + std::to_string(keys.shape(0)) + ")")
                              .c_str());
  }
  const auto view = keys.view();
  for (std::size_t i = 0; i < keys.shape(0); ++i) ++counts[view(i)];
}

// AuditTarget::run from a Python callable run(on_d_prime, context, runs).
struct PythonTargetRun {
  PythonCallable callable;
  void operator()(bool on_d_prime, Context& context, std::uint64_t runs, audit::OutputCounts& counts) const {
    nb::gil_scoped_acquire gil;
    // The context lives on run_audit's stack: once the call returns, the Python wrapper is marked
    // not ready, so a run that kept it gets nanobind's error instead of a dangling pointer.
    const nb::object python_context = nb::cast(&context, nb::rv_policy::reference);
    struct Expire {
      const nb::object& wrapper;
      ~Expire() { nb::inst_set_state(wrapper, false, false); }
    } expire{python_context};
    const nb::object outputs = callable.object()(on_d_prime, python_context, runs);
    add_python_outputs(outputs, runs, counts);
  }
};

// Garbage-collector support of the types that hold Python callables (the callable's globals
// often hold the AuditTarget or AuditOptions itself): tp_traverse reports the callable,
// tp_clear drops it. `Callable` is the functor type a Python callable is stored as, `member`
// the std::function that stores it.
template <class Object, class Callable, auto member>
int traverse_callable(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(reinterpret_cast<PyObject*>(Py_TYPE(self)));
  if (!nb::inst_ready(self)) return 0;
  if (const Callable* stored = (nb::inst_ptr<Object>(self)->*member).template target<Callable>()) {
    Py_VISIT(stored->callable.object().ptr());
  }
  return 0;
}

template <class Object, auto member>
int clear_callable(PyObject* self) {
  if (nb::inst_ready(self)) nb::inst_ptr<Object>(self)->*member = nullptr;
  return 0;
}

PyType_Slot audit_target_slots[] = {
    {Py_tp_traverse, reinterpret_cast<void*>(traverse_callable<AuditTarget, PythonTargetRun, &AuditTarget::run>)},
    {Py_tp_clear, reinterpret_cast<void*>(clear_callable<AuditTarget, &AuditTarget::run>)},
    {0, nullptr}};

PyType_Slot audit_options_slots[] = {
    {Py_tp_traverse, reinterpret_cast<void*>(traverse_callable<AuditOptions, PythonProgress, &AuditOptions::progress>)},
    {Py_tp_clear, reinterpret_cast<void*>(clear_callable<AuditOptions, &AuditOptions::progress>)},
    {0, nullptr}};

std::string repr(const EventBound& b) {
  return "EventBound(event=" + std::to_string(b.event) + ", d_over_d_prime=" + repr_bool(b.d_over_d_prime) +
         ", p_d=" + repr_double(b.p_d) + ", p_d_prime=" + repr_double(b.p_d_prime) +
         ", epsilon_lower=" + repr_double(b.epsilon_lower) + ", delta_lower=" + repr_double(b.delta_lower) + ")";
}

std::string repr(const Bounds& b) {
  return "Bounds(epsilon_lower=" + repr_double(b.epsilon_lower) + ", delta_lower=" + repr_double(b.delta_lower) +
         ", worst_epsilon=" + repr(b.worst_epsilon) + ", worst_delta=" + repr(b.worst_delta) + ")";
}

void bind_statistics(nb::module_& m) {
  nb::class_<Interval>(m, "Interval", "Bounds on a probability: lower <= p <= upper.")
      .def_ro("lower", &Interval::lower)
      .def_ro("upper", &Interval::upper)
      .def("__repr__", [](const Interval& i) {
        return "Interval(lower=" + repr_double(i.lower) + ", upper=" + repr_double(i.upper) + ")";
      });

  nb::class_<EventCounts>(m, "EventCounts", "How often the output `event` came out of the releases on D and on D'.")
      .def(
          "__init__",
          [](EventCounts* self, Scalar<audit::OutputKey> event, Scalar<std::uint64_t> on_d,
             Scalar<std::uint64_t> on_d_prime) {
            new (self) EventCounts{scalar(event, "event"), scalar(on_d, "on_d"), scalar(on_d_prime, "on_d_prime")};
          },
          "event"_a, "on_d"_a, "on_d_prime"_a)
      .def_rw("event", &EventCounts::event)
      .def_rw("on_d", &EventCounts::on_d)
      .def_rw("on_d_prime", &EventCounts::on_d_prime)
      .def("__repr__", [](const EventCounts& e) {
        return "EventCounts(event=" + std::to_string(e.event) + ", on_d=" + std::to_string(e.on_d) +
               ", on_d_prime=" + std::to_string(e.on_d_prime) + ")";
      });

  nb::class_<EventBound>(m, "EventBound",
                         "The bounds from one event in one direction: d_over_d_prime True bounds "
                         "P[M(D) in E] / P[M(D') in E], False the reverse. p_d and p_d_prime are the estimated "
                         "probabilities (counts / runs).")
      .def_ro("event", &EventBound::event)
      .def_ro("d_over_d_prime", &EventBound::d_over_d_prime)
      .def_ro("p_d", &EventBound::p_d)
      .def_ro("p_d_prime", &EventBound::p_d_prime)
      .def_ro("epsilon_lower", &EventBound::epsilon_lower)
      .def_ro("delta_lower", &EventBound::delta_lower)
      .def("__repr__", [](const EventBound& b) { return repr(b); });

  nb::class_<Bounds>(m, "Bounds",
                     "Lower bounds on the privacy loss, the maxima over events and directions, and the event "
                     "bounds that gave them.")
      .def_ro("epsilon_lower", &Bounds::epsilon_lower)
      .def_ro("delta_lower", &Bounds::delta_lower)
      .def_ro("worst_epsilon", &Bounds::worst_epsilon)
      .def_ro("worst_delta", &Bounds::worst_delta)
      .def("__repr__", [](const Bounds& b) { return repr(b); });

  m.def("clopper_pearson", &audit::clopper_pearson, "successes"_a, "trials"_a, "alpha"_a,
        R"(Exact bounds on a binomial probability p from successes out of trials.

Parameters
----------
successes : int
    In [0, trials].
trials : int
    >= 1.
alpha : float
    The one-sided error, in (0, 1/2].

Returns
-------
Interval
    lower, the largest p with P[Bin(trials, p) >= successes] <= alpha, and upper, the smallest p
    with P[Bin(trials, p) <= successes] <= alpha, each rounded outward (together a 1 - 2 alpha
    interval).

Raises
------
InvalidArgument
    trials 0, successes > trials or alpha outside (0, 1/2].

Notes
-----
Clopper & Pearson 1934.)");
  m.def(
      "regularized_incomplete_beta",
      [](double x, double a, double b) {
        if (!(x >= 0.0 && x <= 1.0)) throw_invalid("x", "in [0, 1]", x);
        if (!(std::isfinite(a) && a > 0.0)) throw_invalid("a", "finite and > 0", a);
        if (!(std::isfinite(b) && b > 0.0)) throw_invalid("b", "finite and > 0", b);
        return static_cast<double>(audit::regularized_incomplete_beta(x, a, b));
      },
      "x"_a, "a"_a, "b"_a,
        R"(The regularized incomplete beta function I_x(a, b).

Parameters
----------
x : float
    In [0, 1].
a : float
    Finite and > 0.
b : float
    Finite and > 0.

Returns
-------
float
    I_x(a, b), computed in long double; relative accuracy about 1e-15.

Raises
------
InvalidArgument
    x, a or b out of range, named with its value.

Notes
-----
Continued fraction, Numerical Recipes 3rd ed., section 6.4.)");
  m.def("privacy_loss_bounds", &audit::privacy_loss_bounds, "events"_a, "runs"_a, "confidence"_a,
        "claimed_epsilon"_a,
        R"(Lower bounds on epsilon and delta from event counts on neighbouring inputs.

Parameters
----------
events : list of EventCounts
    The counts of each event on D and on D'.
runs : int
    The releases on each input, >= 1.
confidence : float
    The joint confidence, in (0, 1).
claimed_epsilon : float
    The claim the delta bound is computed at, finite and >= 0.

Returns
-------
Bounds
    epsilon_lower = max ln(lower(p_D) / upper(p_D')) and delta_lower = max lower(p_D) -
    e^claimed_epsilon upper(p_D') over events and both directions.

Raises
------
InvalidArgument
    runs 0, a count above runs, confidence outside (0, 1) or a bad claimed_epsilon.

Notes
-----
Clopper-Pearson bounds, Bonferroni-corrected so that all hold together with probability >=
confidence; the events are chosen on a separate run (StatDP, Ding et al. 2018; DP-Sniper, Bichsel et
al. 2021).)");
}

void bind_options_and_targets(nb::module_& m) {
  const AuditOptions defaults;
  // The callables' types for help() and the stubs (the arguments are taken as objects, so that a
  // wrong one gets a message of its own). Built once: nb::sig keeps the pointer.
  static const std::string progress_type = "collections.abc.Callable[[int, int], object]";
  static const std::string options_signature =
      "def __init__(self, selection_runs: int = " + std::to_string(defaults.selection_runs) +
      ", runs: int = " + std::to_string(defaults.runs) + ", confidence: float = " + repr_double(defaults.confidence) +
      ", max_events: int = " + std::to_string(defaults.max_events) + ", seed: int = " +
      std::to_string(defaults.seed) + ", progress: " + progress_type + " | None = None) -> None";
  static const std::string progress_getter = "def progress(self, /) -> " + progress_type + " | None";
  static const std::string progress_setter = "def progress(self, progress: " + progress_type + " | None, /) -> None";
  nb::class_<AuditOptions>(m, "AuditOptions", nb::type_slots(audit_options_slots),
                           "How an audit runs: selection_runs releases per input to choose the events, runs per "
                           "input to bound them, the joint confidence of the bounds, at most max_events events, "
                           "and the seed every context of the audit derives from (audits are reproducible). "
                           "progress: None or a callable progress(done, total), called with the releases made so "
                           "far and the total 2 (selection_runs + runs): first with done = 0, after every chunk, "
                           "last with done = total; an exception it raises ends the audit.")
      .def(
          "__init__",
          [](AuditOptions* self, Scalar<std::uint64_t> selection_runs, Scalar<std::uint64_t> runs,
             Scalar<double> confidence, Scalar<std::uint64_t> max_events, Scalar<std::uint64_t> seed,
             nb::object progress) {
            new (self) AuditOptions{scalar(selection_runs, "selection_runs"), scalar(runs, "runs"),
                                    scalar(confidence, "confidence"), scalar(max_events, "max_events"),
                                    scalar(seed, "seed"), {}};
            if (!progress.is_none()) self->progress = PythonProgress{callable_argument(std::move(progress), "progress")};
          },
          "selection_runs"_a = defaults.selection_runs, "runs"_a = defaults.runs, "confidence"_a = defaults.confidence,
          "max_events"_a = defaults.max_events, "seed"_a = defaults.seed, "progress"_a.none() = nb::none(),
          nb::sig(options_signature.c_str()))
      .def_rw("selection_runs", &AuditOptions::selection_runs)
      .def_rw("runs", &AuditOptions::runs)
      .def_rw("confidence", &AuditOptions::confidence)
      .def_rw("max_events", &AuditOptions::max_events)
      .def_rw("seed", &AuditOptions::seed)
      .def_prop_rw(
          "progress",
          [](const AuditOptions& o) -> nb::object {
            const PythonProgress* hook = o.progress.target<PythonProgress>();
            return hook ? hook->callable.object() : nb::none();
          },
          [](AuditOptions& o, nb::object progress) {
            if (progress.is_none()) {
              o.progress = nullptr;
            } else {
              o.progress = PythonProgress{callable_argument(std::move(progress), "progress")};
            }
          },
          nb::for_getter(nb::sig(progress_getter.c_str())), nb::for_setter(nb::sig(progress_setter.c_str())),
          nb::for_setter(nb::arg("progress").none()))
      .def("__repr__", [](const AuditOptions& o) {
        const PythonProgress* hook = o.progress.target<PythonProgress>();
        return "AuditOptions(selection_runs=" + std::to_string(o.selection_runs) + ", runs=" + std::to_string(o.runs) +
               ", confidence=" + repr_double(o.confidence) + ", max_events=" + std::to_string(o.max_events) +
               ", seed=" + std::to_string(o.seed) +
               ", progress=" + (hook ? nb::cast<std::string>(nb::repr(hook->callable.object())) : "None") + ")";
      });

  nb::class_<AuditTarget>(m, "AuditTarget", nb::type_slots(audit_target_slots),
                          "One mechanism on one pair of neighbouring inputs D and D', and the privacy it claims.")
      .def(
          "__init__",
          [](AuditTarget* self, std::string mechanism, std::string neighbours, Scalar<double> claimed_epsilon_argument,
             Scalar<double> claimed_delta_argument, nb::object run) {
            const double claimed_epsilon = scalar(claimed_epsilon_argument, "claimed_epsilon");
            const double claimed_delta = scalar(claimed_delta_argument, "claimed_delta");
            if (!(std::isfinite(claimed_epsilon) && claimed_epsilon >= 0.0)) {
              throw_invalid("claimed_epsilon", "finite and >= 0", claimed_epsilon);
            }
            if (!(claimed_delta >= 0.0 && claimed_delta < 1.0)) throw_invalid("claimed_delta", "in [0, 1)", claimed_delta);
            new (self) AuditTarget{std::move(mechanism), std::move(neighbours), claimed_epsilon, claimed_delta,
                                   PythonTargetRun{callable_argument(std::move(run), "run")}};
          },
          "mechanism"_a, "neighbours"_a, "claimed_epsilon"_a, "claimed_delta"_a, "run"_a,
          nb::sig("def __init__(self, mechanism: str, neighbours: str, claimed_epsilon: float, claimed_delta: float, "
                  "run: collections.abc.Callable[[bool, dpselect._dpselect.Context, int], object]) -> None"),
          "A target whose mechanism is Python code. run(on_d_prime, context, runs) makes `runs` releases on D "
          "(on_d_prime False) or on D' (True), drawing all its randomness from `context` (a dpselect.Context, "
          "valid during the call only), and returns their outputs reduced to integers: a 1-D NumPy int64 array "
          "of `runs` keys, or a dict key -> count whose counts add up to runs. It is called in chunks of at most "
          "RELEASES_PER_CALL releases, and the counts must not depend on that split. claimed_epsilon finite and "
          ">= 0; claimed_delta in [0, 1) (0: a pure claim, checked on epsilon; else checked on delta at "
          "claimed_epsilon).")
      .def_ro("mechanism", &AuditTarget::mechanism)
      .def_ro("neighbours", &AuditTarget::neighbours)
      .def_ro("claimed_epsilon", &AuditTarget::claimed_epsilon)
      .def_ro("claimed_delta", &AuditTarget::claimed_delta)
      .def("__repr__", [](const AuditTarget& t) {
        return "AuditTarget(mechanism=" + repr_string(t.mechanism) + ", neighbours=" + repr_string(t.neighbours) +
               ", claimed_epsilon=" + repr_double(t.claimed_epsilon) +
               ", claimed_delta=" + repr_double(t.claimed_delta) + ")";
      });
  m.attr("RELEASES_PER_CALL") = audit::kAuditChunk;
}

void bind_runs(nb::module_& m) {
  nb::class_<AuditResult>(m, "AuditResult",
                          "The outcome of one audit: the claim, the lower bounds (bounds), and passed: "
                          "bounds.epsilon_lower <= claimed_epsilon for a pure claim, bounds.delta_lower <= "
                          "claimed_delta for an approximate one (relative tolerance 1e-9). Passing is evidence, "
                          "not proof; failing proves, at the stated confidence, that the mechanism breaks its claim.")
      .def_ro("mechanism", &AuditResult::mechanism)
      .def_ro("neighbours", &AuditResult::neighbours)
      .def_ro("claimed_epsilon", &AuditResult::claimed_epsilon)
      .def_ro("claimed_delta", &AuditResult::claimed_delta)
      .def_ro("bounds", &AuditResult::bounds)
      .def_ro("runs", &AuditResult::runs)
      .def_ro("confidence", &AuditResult::confidence)
      .def_ro("events_tested", &AuditResult::events_tested)
      .def_ro("passed", &AuditResult::passed)
      .def("__repr__", [](const AuditResult& r) {
        return "AuditResult(mechanism=" + repr_string(r.mechanism) + ", neighbours=" + repr_string(r.neighbours) +
               ", claimed_epsilon=" + repr_double(r.claimed_epsilon) + ", claimed_delta=" +
               repr_double(r.claimed_delta) + ", epsilon_lower=" + repr_double(r.bounds.epsilon_lower) +
               ", delta_lower=" + repr_double(r.bounds.delta_lower) + ", runs=" + std::to_string(r.runs) +
               ", confidence=" + repr_double(r.confidence) + ", events_tested=" + std::to_string(r.events_tested) +
               ", passed=" + repr_bool(r.passed) + ")";
      });

  m.def(
      "run_audit",
      [](const AuditTarget& target, const AuditOptions& options) {
        // A copy, so that another thread changing options.progress meanwhile changes nothing here.
        const AuditOptions fixed = options;
        nb::gil_scoped_release released;
        return audit::run_audit(target, fixed);
      },
      "target"_a, "options"_a,
        "Audits `target`: a selection run (options.selection_runs releases per input, seeds 2 seed and 2 seed + 1) "
        "chooses up to options.max_events output events, a test run (options.runs per input, seeds 2 seed + 2 "
        "and 2 seed + 3) bounds them (privacy_loss_bounds). The GIL is released except inside Python callables.");
  m.def("selection_audits", &audit::selection_audits,
        R"(The library's audits of the selection mechanisms.

Returns
-------
list of AuditTarget
    Exponential mechanism, permute-and-flip, noisy max, top-k, pricing, rows.)");
  m.def("sparse_vector_audits", &audit::sparse_vector_audits,
        R"(The library's audits of the sparse vector technique.

Returns
-------
list of AuditTarget
    AboveThreshold, Sparse and NumericSparse (both algorithms).)");
  m.def("noise_audits", &audit::noise_audits,
        R"(The library's audits of the noise mechanisms.

Returns
-------
list of AuditTarget
    The Laplace, Gaussian and generalized Gaussian vectors and secure noise.)");
  m.def("quantile_audits", &audit::quantile_audits,
        R"(The library's audits of the quantile mechanisms.

Returns
-------
list of AuditTarget
    The single quantile (both neighbour relations), JointExp, recursive splitting, independent
    releases under basic composition.)");
  m.def("partition_selection_audits", &audit::partition_selection_audits,
        R"(The library's audits of partition selection.

Returns
-------
list of AuditTarget
    Each strategy on a user with two keys nobody else holds and on a user added to a key of a few
    users, claimed at (epsilon, delta) and judged on delta.)");
  m.def("all_audits", &audit::all_audits,
        R"(Every audit of the library.

Returns
-------
list of AuditTarget
    selection_audits(), sparse_vector_audits(), noise_audits(), quantile_audits() and
    partition_selection_audits(), in order.)");
}

}  // namespace

void bind_audit(nb::module_& m) {
  nb::module_ audit = m.def_submodule(
      "audit", "The empirical privacy auditor: lower bounds on a mechanism's privacy loss from releases on "
               "neighbouring inputs (StatDP, Ding et al. 2018; DP-Sniper, Bichsel et al. 2021).");
  bind_statistics(audit);
  bind_options_and_targets(audit);
  bind_runs(audit);
}

}  // namespace dpselect::python
