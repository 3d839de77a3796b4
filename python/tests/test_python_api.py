# SPDX-License-Identifier: Apache-2.0
"""The Python API an editor can complete: explicit keyword parameters with the C++ defaults, the
one conversion of lists and integer arrays (and its refusal of integers beyond 2**53), rows as
NumPy arrays, labels, the version, and NumPy-style docstrings on every public name."""

import importlib.metadata
import inspect
import re
from pathlib import Path

import numpy as np
import pytest

import dpselect
import dpselect.audit
from support import ledger_context

E = dpselect.Mechanism.EXPONENTIAL
SELECTION_FIELDS = ["epsilon", "sensitivity", "mechanism", "monotone", "utility_bound", "backend", "utility_reference"]


def expect_nothing_charged_or_drawn(context, accountant):
    assert accountant.release_count == 0
    pick = dpselect.select(context, np.array([1.0, 2.0]), epsilon=0.1, sensitivity=1.0)
    assert pick.report.stream == 0  # the refused call drew no stream


# ---- 1. Signatures ----------------------------------------------------------------------------

def keyword_only(function):
    return {name: p for name, p in inspect.signature(function).parameters.items() if p.kind is p.KEYWORD_ONLY}


@pytest.mark.parametrize("function", [dpselect.select, dpselect.select_top_k, dpselect.select_rows,
                                      dpselect.select_repeated])
def test_selection_signatures_name_every_parameter_with_the_cpp_defaults(function):
    keywords = keyword_only(function)
    assert list(keywords)[:len(SELECTION_FIELDS)] == SELECTION_FIELDS
    assert "labels" in keywords
    assert not any(p.kind is p.VAR_KEYWORD for p in inspect.signature(function).parameters.values())
    # The defaults are those of a SelectionParams built with only the two required fields.
    reference = dpselect.SelectionParams(epsilon=1.0, sensitivity=1.0)
    for name in SELECTION_FIELDS[2:]:
        assert keywords[name].default == getattr(reference, name), name
    assert keywords["epsilon"].default is None and keywords["sensitivity"].default is None
    # The data argument and everything before it are positional; the fields are keyword-only.
    positional = [n for n, p in inspect.signature(function).parameters.items() if p.kind is p.POSITIONAL_OR_KEYWORD]
    assert positional[:2] == ["context", "utilities"] and positional[-1] == "params"


PARAMS_OF = [
    (dpselect.select_price, lambda: dpselect.PricingParams(1.0), {"epsilon"}),
    (dpselect.select_quantile, lambda: dpselect.QuantileParams(dpselect.QuantileRange(0, 1), 1.0),
     {"range", "epsilon"}),
    (dpselect.sparse_vector_batch, lambda: dpselect.SparseVectorParams(1.0, 1.0, 0.0),
     {"epsilon", "sensitivity", "threshold"}),
    (dpselect.SparseVector.__init__, lambda: dpselect.SparseVectorParams(1.0, 1.0, 0.0),
     {"epsilon", "sensitivity", "threshold"}),
    (dpselect.add_noise, lambda: dpselect.NoiseVectorParams(1.0), {"epsilon"}),
    (dpselect.noise_vector_scale, lambda: dpselect.NoiseVectorParams(1.0), {"epsilon"}),
    (dpselect.add_secure_noise, lambda: dpselect.SecureNoiseParams(1.0, 1.0), {"epsilon", "sensitivity"}),
    (dpselect.secure_noise_plan, lambda: dpselect.SecureNoiseParams(1.0, 1.0), {"epsilon", "sensitivity"}),
    (dpselect.plan_linf_answers, lambda: dpselect.LinfAnswerParams(1.0, 1e-6), {"epsilon", "delta"}),
    (dpselect.answer_counting_queries, lambda: dpselect.LinfAnswerParams(1.0, 1e-6), {"epsilon", "delta"}),
    (dpselect.audit.run, lambda: dpselect.audit.AuditOptions(), set()),
]


@pytest.mark.parametrize("function,make_params,required", PARAMS_OF, ids=lambda x: getattr(x, "__qualname__", ""))
def test_other_signatures_have_the_params_fields_with_their_defaults(function, make_params, required):
    reference = make_params()
    keywords = keyword_only(function)
    fields = {name for name in dir(reference) if not name.startswith("_") and not callable(getattr(reference, name))}
    assert fields <= set(keywords), fields - set(keywords)
    for name in fields:
        if name in required:
            assert keywords[name].default is None, name
        else:
            assert keywords[name].default == getattr(reference, name), name


def test_quantiles_signature_has_the_flattened_fields():
    keywords = keyword_only(dpselect.select_quantiles)
    reference = dpselect.QuantilesParams(dpselect.QuantileRange(0, 1), 1.0)
    assert keywords["method"].default == reference.method
    assert keywords["delta"].default == reference.delta
    for name in ("neighbours", "max_points", "backend"):
        assert keywords[name].default == getattr(reference.base, name)


def public_python_functions():
    """Every function and class of dpselect.__all__ (and dpselect.audit) written in Python."""
    for module in (dpselect, dpselect.audit):
        for name in module.__all__:
            value = getattr(module, name)
            defined_in = getattr(value, "__module__", "") or ""
            if defined_in.startswith("dpselect") and not defined_in.startswith("dpselect._dpselect"):
                yield f"{module.__name__}.{name}", value


def test_every_python_function_is_fully_annotated():
    checked = 0
    for name, value in public_python_functions():
        function = value.__init__ if inspect.isclass(value) else value
        if not inspect.isfunction(function):
            continue
        signature = inspect.signature(function)
        for parameter in signature.parameters.values():
            if parameter.name == "self":
                continue
            assert parameter.annotation is not inspect.Parameter.empty, f"{name}: {parameter.name}"
            assert parameter.kind is not parameter.VAR_KEYWORD, f"{name} takes **{parameter.name}"
        assert signature.return_annotation is not inspect.Signature.empty, name
        checked += 1
    assert checked >= 20


def documented_parameters(doc: str) -> set[str]:
    section = re.search(r"Parameters\n    -+\n(.*?)(\n\n    [A-Z][a-z]+\n    -+\n|\Z)", doc, re.S)
    assert section, "no Parameters section"
    names = set()
    for line in section.group(1).splitlines():
        match = re.match(r"^    ([a-z_][a-z_0-9, ]*?)(?: :.*)?$", line)
        if match:
            names.update(part.strip() for part in match.group(1).split(","))
    return names


def test_every_python_function_has_a_numpy_style_docstring_naming_each_parameter():
    for name, value in public_python_functions():
        doc = inspect.getdoc(value) if inspect.isclass(value) else value.__doc__
        assert doc, name
        doc = value.__doc__
        summary = doc.strip().splitlines()[0]
        assert summary.endswith("."), f"{name}: the one-line summary {summary!r}"
        function = value.__init__ if inspect.isclass(value) else value
        parameters = [p for p in inspect.signature(function).parameters if p != "self"]
        if parameters:
            documented = documented_parameters(doc)
            missing = set(parameters) - documented
            assert not missing, f"{name} does not document {sorted(missing)}"
        if not inspect.isclass(value) and not name.endswith("library_targets"):
            assert "\n    Returns\n    -------\n" in doc, name
            assert "\n    Raises\n    ------\n" in doc, name
        if name.split(".")[-1].startswith(("select", "add_", "answer_", "sparse_vector_batch")):
            assert "\n    Notes\n    -----\n" in doc and re.search(r"\b(19|20)\d\d\b", doc), \
                f"{name}: the privacy guarantee and its source"


def test_every_public_name_has_a_docstring_and_every_function_numpy_sections():
    for module in (dpselect, dpselect.audit):
        for name in module.__all__:
            value = getattr(module, name)
            if isinstance(value, (int, float, str)):
                continue
            doc = inspect.getdoc(value)
            assert doc and doc.strip(), f"{module.__name__}.{name} has no docstring"
            if callable(value) and not inspect.isclass(value):
                # nanobind puts the signature first; the summary follows it.
                body = doc.split("\n\n", 1)[1] if doc.startswith(name + "(") else doc
                assert "\nReturns\n-------\n" in body or "\n    Returns\n    -------\n" in value.__doc__, \
                    f"{module.__name__}.{name}: no Returns section"
                if inspect.isfunction(value):
                    takes_parameters = bool(inspect.signature(value).parameters)
                else:
                    takes_parameters = not doc.startswith(name + "()")
                if takes_parameters:
                    assert "Parameters\n" in doc, f"{module.__name__}.{name}: no Parameters section"


def test_every_class_of_the_package_prints_readably():
    # A repr is what people print and log: every public class, and every class the core returns,
    # has one of its own (never "<... object at 0x...>").
    import enum
    classes = [getattr(module, name) for module in (dpselect, dpselect.audit) for name in module.__all__]

    def core_classes(module):
        for name in dir(module):
            value = getattr(module, name)
            if inspect.ismodule(value) and value.__name__.startswith(module.__name__):
                yield from core_classes(value)
            elif inspect.isclass(value):
                yield value
    classes += list(core_classes(dpselect._dpselect))
    plain = sorted({c.__qualname__ for c in classes if inspect.isclass(c) and not issubclass(c, (enum.Enum, BaseException))
                    and not any("__repr__" in k.__dict__ for k in c.__mro__ if k is not object)})
    # The core classes that users only meet through the package's own, which print: the releases
    # and tickets (dpselect.sharding), the selection of keys and the bids.
    wrapped = {"Release", "ReleaseTicket", "TopKRelease", "TopKTicket", "PartitionSelection", "Bids"}
    assert set(plain) <= wrapped, f"no repr: {sorted(set(plain) - wrapped)}"
    assert repr(dpselect.Bids([3.0, 1.0])) == (
        "Bids(<withheld: the bids and their number are private; len() is NOT PRIVATE>)")


def test_the_result_classes_document_their_attributes():
    for kind in (dpselect.Selection, dpselect.TopKSelection, dpselect.RowsSelection):
        assert "Attributes\n----------" in kind.__doc__
    assert "label" in dpselect.Selection.__doc__
    assert "int64" in dpselect.RowsSelection.indices.__doc__


def test_params_or_keywords_not_both_and_the_required_fields_are_named():
    context, accountant = ledger_context()
    with pytest.raises(TypeError, match=r"not both \(got params and \['monotone'\]\)"):
        dpselect.select(context, np.ones(3), dpselect.SelectionParams(1.0, 1.0), monotone=True)
    with pytest.raises(TypeError, match=r"sensitivity must be given .* dpselect.SelectionParams"):
        dpselect.select(context, np.ones(3), epsilon=1.0)
    with pytest.raises(TypeError, match=r"epsilon, sensitivity must be given"):
        dpselect.select_top_k(context, np.ones(3), 1)
    with pytest.raises(TypeError, match=r"threshold must be given"):
        dpselect.sparse_vector_batch(context, np.ones(3), epsilon=1.0, sensitivity=1.0)
    with pytest.raises(TypeError, match=r"range must be given"):
        dpselect.select_quantile(context, np.ones(3), 0.5, epsilon=1.0)
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'epsilonn'"):
        dpselect.select(context, np.ones(3), epsilonn=1.0, sensitivity=1.0)  # type: ignore[call-arg]
    expect_nothing_charged_or_drawn(context, accountant)


def test_a_keyword_equal_to_its_default_may_come_with_params_and_a_different_one_may_not():
    context, accountant = ledger_context(budget=dpselect.PrivacyBound(100.0, 0.5))
    params = dpselect.SelectionParams(1.0, 1.0)
    u = np.array([1.0, 2.0, 3.0])
    # Equal by value: the int 0 is utility_bound's default 0.0, 0 is monotone's False.
    dpselect.select(context, u, params, utility_bound=0)
    dpselect.select(context, u, params, monotone=0, mechanism=dpselect.Mechanism.EXPONENTIAL)
    dpselect.select_top_k(context, u, 1, params, utility_bound=np.float64(0.0))
    dpselect.sparse_vector_batch(context, [1.0], dpselect.SparseVectorParams(1.0, 1.0, 0.0), delta=0,
                                 value_bound=0)
    plan = dpselect.plan_linf_answers(3, epsilon=1.0, delta=1e-6, p=1.0)  # p given: the automatic choice is slow
    defaults = dpselect.answer_counting_queries.__kwdefaults__
    dpselect.answer_counting_queries(context, np.zeros(3), plan, max_repairs=np.uint32(defaults["max_repairs"]),
                                     repair_with_sparse_vector=int(defaults["repair_with_sparse_vector"]))
    accepted = accountant.release_count
    assert accepted >= 5
    for call, given in [
        (lambda: dpselect.select(context, u, params, utility_bound=1), "utility_bound"),
        (lambda: dpselect.select(context, u, params, monotone=1), "monotone"),
        (lambda: dpselect.select(context, u, params, mechanism=dpselect.Mechanism.LAPLACE_NOISY_MAX), "mechanism"),
        (lambda: dpselect.select_price(context, [1.0], [1.0], dpselect.PricingParams(1.0), max_bidders=1),
         "max_bidders"),
        (lambda: dpselect.answer_counting_queries(context, np.zeros(3), plan, beta=0.5), "beta"),
    ]:
        with pytest.raises(TypeError, match=rf"not both \(got (params|a plan) and \['{given}'\]\)"):
            call()
    assert accountant.release_count == accepted  # the refusals charged nothing


def test_keywords_and_params_give_the_same_release():
    u = np.random.default_rng(4).normal(size=1000)
    for mechanism in dpselect.Mechanism:
        params = dpselect.SelectionParams(0.7, 2.0, mechanism, True, 0.0, dpselect.Backend.CPU, None)
        by_params = dpselect.select(dpselect.Context.fixed_seed(8), u, params)
        by_keywords = dpselect.select(dpselect.Context.fixed_seed(8), u, epsilon=0.7, sensitivity=2.0,
                                      mechanism=mechanism, monotone=True, backend=dpselect.Backend.CPU)
        assert by_params.index == by_keywords.index
        assert by_params.report.noise_scale == by_keywords.report.noise_scale
    top = dpselect.select_top_k(dpselect.Context.fixed_seed(8), u, 5, dpselect.SelectionParams(0.5, 1.0))
    assert top.indices == dpselect.select_top_k(dpselect.Context.fixed_seed(8), u, 5, epsilon=0.5,
                                                sensitivity=1.0).indices


def test_top_k_epsilon_is_what_the_k_picks_spend_together():
    # One meaning of epsilon for top-k in every front end: the release's total, epsilon / k a pick.
    u = np.arange(100.0)
    context, accountant = ledger_context()
    top = dpselect.select_top_k(context, u, 10, epsilon=1.0, sensitivity=1.0)
    assert accountant.release_count == 10
    assert accountant.spent().epsilon == 1.0
    assert top.report.per_pick.epsilon_spent == 0.1
    assert top.report.epsilon_total_basic == 1.0
    context, accountant = ledger_context()
    release = dpselect.begin_top_k_release(context, 10, len(u), epsilon=1.0, sensitivity=1.0)
    assert release.params.epsilon == 1.0
    assert accountant.release_count == 10 and accountant.spent().epsilon == 1.0
    finished = release.finish(release.ticket().evaluate(u))
    assert finished.report.per_pick.epsilon_spent == 0.1

# ---- 2. Lists, tuples and integer arrays: one conversion ---------------------------------------

INTEGERS = [3, 9, 1, 7, 7, 0, 12, 5]


@pytest.mark.parametrize("as_input", [
    list, tuple,
    lambda v: np.array(v, dtype=np.int64), lambda v: np.array(v, dtype=np.int32), lambda v: np.array(v, dtype=np.uint8),
    lambda v: np.array(v, dtype=np.float16), lambda v: np.array(v, dtype=object), lambda v: [float(x) for x in v],
    lambda v: np.repeat(np.array(v, dtype=np.int64), 2)[::2],  # a strided view: converted in C order
], ids=["list", "tuple", "int64", "int32", "uint8", "float16", "object", "float-list", "int64-strided"])
def test_lists_tuples_and_integer_arrays_give_the_float64_result(as_input):
    reference = np.array(INTEGERS, dtype=np.float64)
    values = as_input(INTEGERS)
    for seed in range(5):
        fields = {"epsilon": 1.5, "sensitivity": 1.0}
        assert (dpselect.select(dpselect.Context.fixed_seed(seed), values, **fields).index
                == dpselect.select(dpselect.Context.fixed_seed(seed), reference, **fields).index)
        assert (dpselect.select_top_k(dpselect.Context.fixed_seed(seed), values, 3, **fields).indices
                == dpselect.select_top_k(dpselect.Context.fixed_seed(seed), reference, 3, **fields).indices)
        np.testing.assert_array_equal(
            dpselect.select_repeated(dpselect.Context.fixed_seed(seed), values, 20, **fields).indices,
            dpselect.select_repeated(dpselect.Context.fixed_seed(seed), reference, 20, **fields).indices)


def test_bools_and_nested_lists_are_converted_too():
    rows = [[0, 5, 1], [7, 0, 0], [True, False, False]]
    reference = np.array(rows, dtype=np.float64)
    for seed in range(5):
        a = dpselect.select_rows(dpselect.Context.fixed_seed(seed), rows, epsilon=2.0, sensitivity=1.0)
        b = dpselect.select_rows(dpselect.Context.fixed_seed(seed), reference, epsilon=2.0, sensitivity=1.0)
        np.testing.assert_array_equal(a.indices, b.indices)
        c = dpselect.select_rows(dpselect.Context.fixed_seed(seed), np.array(rows, dtype=np.int64).T.T,
                                 epsilon=2.0, sensitivity=1.0)
        np.testing.assert_array_equal(c.indices, b.indices)
    # A transposed integer matrix is converted in C order (the conversion copies anyway).
    matrix = np.arange(12, dtype=np.int64).reshape(3, 4).T
    assert not matrix.flags.c_contiguous
    np.testing.assert_array_equal(
        dpselect.select_rows(dpselect.Context.fixed_seed(1), matrix, epsilon=1.0, sensitivity=1.0).indices,
        dpselect.select_rows(dpselect.Context.fixed_seed(1), np.ascontiguousarray(matrix, dtype=np.float64),
                             epsilon=1.0, sensitivity=1.0).indices)


def test_float_arrays_are_still_read_without_a_copy():
    for dtype in (np.float32, np.float64):
        values = np.arange(10, dtype=dtype)
        where, array = dpselect._arrays.as_host_or_device(values, "utilities")
        assert where == "host" and array is values
    where, array = dpselect._arrays.as_host_or_device(np.arange(10), "utilities")
    assert array.dtype == np.float64 and array.flags.c_contiguous
    with pytest.raises(ValueError, match="C-contiguous"):  # a float view is never copied behind the caller's back
        dpselect.select(dpselect.Context.fixed_seed(1), np.ones(10)[::2], epsilon=1.0, sensitivity=1.0)


def test_the_core_receives_a_list_as_float64_and_a_float_array_as_it_is(monkeypatch):
    received = []
    host_select = dpselect._dpselect.select_host

    def recording(context, array, params):
        received.append(array)
        return host_select(context, array, params)

    monkeypatch.setattr(dpselect._dpselect, "select_host", recording)
    for values in ([3, 1, 2], (3, 1, 2), [True, False, True], np.array([3, 1, 2], dtype=np.int32)):
        dpselect.select(dpselect.Context.fixed_seed(1), values, epsilon=1.0, sensitivity=1.0)
        array = received[-1]
        assert isinstance(array, np.ndarray) and array.dtype == np.float64 and array.flags.c_contiguous
        np.testing.assert_array_equal(array, np.asarray(values, dtype=np.float64))
    single = np.array([3.0, 1.0, 2.0], dtype=np.float32)
    dpselect.select(dpselect.Context.fixed_seed(1), single, epsilon=1.0, sensitivity=1.0)
    assert received[-1] is single


def test_pricing_quantiles_and_sparse_vector_convert_the_same_way():
    bids_list = [1, 5, 2, 4, 4, 9]
    for seed in range(4):
        a = dpselect.select_price(dpselect.Context.fixed_seed(seed), bids_list, [1, 2, 3, 4, 5], epsilon=1.0)
        b = dpselect.select_price(dpselect.Context.fixed_seed(seed), np.array(bids_list, dtype=np.float64),
                                  np.arange(1.0, 6.0), epsilon=1.0)
        assert (a.price, a.candidate) == (b.price, b.candidate)
    bids = dpselect.Bids(np.array(bids_list, dtype=np.float32))  # float32 converted for the float64 reader
    np.testing.assert_array_equal(bids.sorted, np.sort(np.array(bids_list, dtype=np.float64)))
    np.testing.assert_array_equal(bids.revenues([1, 4, 10]), bids.revenues(np.array([1.0, 4.0, 10.0])))

    data = [3, 9, 4, 7, 1, 10, 2]
    for seed in range(4):
        a = dpselect.select_quantile(dpselect.Context.fixed_seed(seed), data, 0.5, range=(0, 10), epsilon=1.0)
        b = dpselect.select_quantile(dpselect.Context.fixed_seed(seed), np.array(data, dtype=np.float64), 0.5,
                                     range=(0.0, 10.0), epsilon=1.0)
        assert a.value == b.value
    assert len(dpselect.QuantileData(np.array(data), (0, 10))) == len(data)

    values = list(range(0, 200, 7))
    for seed in range(4):
        fields = {"epsilon": 1.0, "sensitivity": 1.0, "threshold": 100.0, "max_positives": 2}
        a = dpselect.sparse_vector_batch(dpselect.Context.fixed_seed(seed), values, **fields)
        b = dpselect.sparse_vector_batch(dpselect.Context.fixed_seed(seed), np.array(values, dtype=np.float64),
                                         **fields)
        c = dpselect.sparse_vector_batch(dpselect.Context.fixed_seed(seed), np.array(values, dtype=np.float32),
                                         **fields)
        assert [x.index for x in a.above] == [x.index for x in b.above] == [x.index for x in c.above]
        assert a.report.queries == b.report.queries


BEYOND = 2**53 + 1


@pytest.mark.parametrize("values,position", [
    ([1, BEYOND, 3], r"utilities\[1\] is the integer 9007199254740993"),
    ((0.5, 2.0, -BEYOND), r"utilities\[2\] is the integer -9007199254740993"),
    ([0.5, 2**60], r"utilities\[1\] is the integer 1152921504606846976"),
    (np.array([0, 7, 2**62], dtype=np.int64), r"utilities\[2\] is the integer 4611686018427387904"),
    (np.array([2**64 - 1, 1], dtype=np.uint64), r"utilities\[0\] is the integer 18446744073709551615"),
    (np.array([1, 10**30], dtype=object), r"utilities\[1\] is the integer 10{30}"),
    ([1, 10**400], r"utilities\[1\] is the integer 10{400}"),
    ([1, np.int64(-(2**62))], r"utilities\[1\] is the integer -4611686018427387904"),
])
def test_integers_beyond_2_to_the_53_are_refused_naming_the_parameter_and_value(values, position):
    context, accountant = ledger_context()
    with pytest.raises(ValueError, match=position + r", whose magnitude exceeds 2\*\*53"):
        dpselect.select(context, values, epsilon=0.5, sensitivity=1.0)
    expect_nothing_charged_or_drawn(context, accountant)


def test_integers_up_to_2_to_the_53_are_exact_and_the_other_entry_points_refuse_beyond():
    limit = 2**53
    converted = dpselect._arrays.to_float64([limit, -limit, 0, 2.0**60], "utilities")
    assert converted.tolist() == [float(limit), -float(limit), 0.0, 2.0**60]  # floats of any size are floats
    converted = dpselect._arrays.to_float64(np.array([limit, -limit], dtype=np.int64), "utilities")
    assert converted.dtype == np.float64 and converted.tolist() == [float(limit), -float(limit)]
    context, accountant = ledger_context()
    cases = [
        (lambda: dpselect.select_rows(context, [[1, 2], [3, BEYOND]], epsilon=1.0, sensitivity=1.0),
         r"utilities\[1, 1\] is the integer 9007199254740993"),
        (lambda: dpselect.select_top_k(context, [BEYOND, 1], 1, epsilon=1.0, sensitivity=1.0), r"utilities\[0\]"),
        (lambda: dpselect.select_repeated(context, [BEYOND, 1], 3, epsilon=1.0, sensitivity=1.0), r"utilities\[0\]"),
        (lambda: dpselect.select_price(context, [1, BEYOND], [1.0, 2.0], epsilon=1.0), r"bids\[1\]"),
        (lambda: dpselect.select_price(context, [1.0, 2.0], [1, BEYOND], epsilon=1.0), r"prices\[1\]"),
        (lambda: dpselect.select_quantile(context, [BEYOND], 0.5, range=(0, 1), epsilon=1.0), r"values\[0\]"),
        (lambda: dpselect.sparse_vector_batch(context, np.array([0, -BEYOND]), epsilon=1.0, sensitivity=1.0,
                                              threshold=0.0), r"values\[1\]"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message):
            call()
    expect_nothing_charged_or_drawn(context, accountant)


def test_what_is_not_numbers_is_still_refused_with_the_parameter_named():
    context, accountant = ledger_context()
    fields = {"epsilon": 1.0, "sensitivity": 1.0}
    cases = [
        (["a", "b"], TypeError, r"utilities must be numbers.*\(got list\)"),
        ("123", TypeError, r"utilities must be numbers.*\(got str\)"),
        ({"a": 1.0}, TypeError, r"utilities must be numbers.*\(got dict\)"),
        (None, TypeError, r"utilities must be numbers.*\(got NoneType\)"),
        (np.array([1 + 2j, 3]), TypeError, r"utilities must hold real numbers \(got dtype complex128\)"),
        (np.array(["1", "2"]), TypeError, r"utilities must hold real numbers"),
        ([[1.0, 2.0], [3.0]], ValueError, r"utilities must be a rectangular array of numbers"),
        ([[1.0, 2.0], [3.0, 4.0]], ValueError, r"utilities must be 1-D \(got shape \(2, 2\)\)"),
        (5.0, ValueError, r"utilities must be 1-D \(got shape \(\)\)"),
    ]
    for values, error, message in cases:
        with pytest.raises(error, match=message):
            dpselect.select(context, values, **fields)
    with pytest.raises(ValueError, match=r"utilities must be 2-D \(got shape \(3,\)\)"):
        dpselect.select_rows(context, [1, 2, 3], **fields)
    with pytest.raises(dpselect.InvalidArgument, match="utilities"):
        dpselect.select(context, [], **fields)
    expect_nothing_charged_or_drawn(context, accountant)


class _DeviceOnly:
    """Like Numba's DeviceNDArray: __cuda_array_interface__ and an __array__ that copies to the host,
    no DLPack."""

    def __init__(self, values):
        self._host = np.asarray(values, dtype=np.float64)
        self.copies = 0
        self.shape, self.dtype = self._host.shape, self._host.dtype
        self.__cuda_array_interface__ = {"shape": self.shape, "typestr": "<f8", "data": (0, False), "version": 3}

    def __len__(self):
        return len(self._host)

    def __getitem__(self, i):
        return self._host[i]

    def __array__(self, dtype=None, copy=None):
        self.copies += 1
        return self._host.astype(dtype) if dtype is not None else self._host.copy()


def test_a_device_array_without_dlpack_is_refused_not_copied_to_the_host():
    context, accountant = ledger_context()
    fields = {"epsilon": 1.0, "sensitivity": 1.0}
    device = _DeviceOnly([1.0, 2.0, 3.0])
    message = r"utilities is a device array without DLPack .*never copied to the host.*DLPack"
    for call in (lambda: dpselect.select(context, device, **fields),
                 lambda: dpselect.select_top_k(context, device, 1, **fields),
                 lambda: dpselect.select_repeated(context, device, 2, **fields)):
        with pytest.raises(TypeError, match=message):
            call()
    with pytest.raises(TypeError, match=r"values is a device array without DLPack"):
        dpselect.sparse_vector_batch(context, device, epsilon=1.0, sensitivity=1.0, threshold=0.0)
    with pytest.raises(TypeError, match=r"values is a device array without DLPack"):
        dpselect.QuantileData(device, (0.0, 4.0))
    with pytest.raises(TypeError, match=r"bids is a device array without DLPack"):
        dpselect.Bids(device)
    with pytest.raises(TypeError, match=r"labels is a device array without DLPack"):
        dpselect.select(context, [1.0, 2.0, 3.0], labels=device, **fields)
    assert device.copies == 0
    expect_nothing_charged_or_drawn(context, accountant)


def test_the_in_place_noise_functions_convert_nothing():
    context, accountant = ledger_context()
    for values in ([1.0, 2.0], np.arange(3), np.ones(3, dtype=np.float32)):
        with pytest.raises(TypeError, match="in place|__dlpack__"):
            dpselect.add_noise(context, values, epsilon=1.0)
    expect_nothing_charged_or_drawn(context, accountant)


# ---- 3. Rows as NumPy arrays ------------------------------------------------------------------

def test_rows_return_int64_arrays_and_keep_the_reports():
    matrix = np.random.default_rng(2).normal(size=(37, 11))
    rows = dpselect.select_rows(dpselect.Context.fixed_seed(3), matrix, epsilon=1.0, sensitivity=1.0)
    assert isinstance(rows.indices, np.ndarray)
    assert rows.indices.dtype == np.int64 and rows.indices.shape == (37,)
    assert rows.indices.tolist() == [s.index for s in rows.selections]
    assert rows.indices is rows.indices  # made once
    assert not rows.indices.flags.writeable
    assert rows.streams.dtype == np.uint64 and rows.streams.tolist() == list(range(37))
    assert len(rows.reports) == len(rows) == 37
    assert [r.stream for r in rows.reports] == rows.streams.tolist()
    assert all(r.candidates == 11 and r.epsilon_spent == 1.0 for r in rows.reports)
    # Row r equals a select over row r as the context's r-th release.
    context = dpselect.Context.fixed_seed(3)
    assert [dpselect.select(context, row, epsilon=1.0, sensitivity=1.0).index for row in matrix] == \
        rows.indices.tolist()
    repeated = dpselect.select_repeated(dpselect.Context.fixed_seed(3), matrix[0], 50, epsilon=1.0, sensitivity=1.0)
    assert repeated.indices.dtype == np.int64 and repeated.indices.shape == (50,)
    assert repeated.indices[0] == rows.indices[0]
    assert "indices=[" in repr(rows)


# ---- 4. Labels ------------------------------------------------------------------------------

NAMES = ["apple", "banana", "cherry", "damson", "elder"]
SCORES = np.array([1.0, 9.0, 3.0, 8.5, 0.0])


def test_labels_give_the_candidate_itself():
    for seed in range(6):
        pick = dpselect.select(dpselect.Context.fixed_seed(seed), SCORES, epsilon=1.0, sensitivity=1.0, labels=NAMES)
        assert pick.label == NAMES[pick.index]
        assert f"label='{pick.label}'" in repr(pick)
        as_array = dpselect.select(dpselect.Context.fixed_seed(seed), SCORES, epsilon=1.0, sensitivity=1.0,
                                   labels=np.array(NAMES))
        assert as_array.index == pick.index and as_array.label == pick.label
    assert dpselect.select(dpselect.Context.fixed_seed(0), SCORES, epsilon=1.0, sensitivity=1.0).label is None

    top = dpselect.select_top_k(dpselect.Context.fixed_seed(1), SCORES, 3, epsilon=1.0, sensitivity=1.0,
                                labels=tuple(NAMES))
    assert top.labels == [NAMES[i] for i in top.indices] and isinstance(top.labels, list)
    keys = np.array([10, 20, 30, 40, 50], dtype=np.int64)
    top = dpselect.select_top_k(dpselect.Context.fixed_seed(1), SCORES, 3, epsilon=1.0, sensitivity=1.0, labels=keys)
    np.testing.assert_array_equal(top.labels, keys[top.indices])
    assert dpselect.select_top_k(dpselect.Context.fixed_seed(1), SCORES, 3, epsilon=1.0, sensitivity=1.0).labels is None

    matrix = np.random.default_rng(9).normal(size=(20, 5)) * 4
    rows = dpselect.select_rows(dpselect.Context.fixed_seed(2), matrix, epsilon=1.0, sensitivity=1.0,
                                labels=np.array(NAMES))
    assert isinstance(rows.labels, np.ndarray)
    assert rows.labels.tolist() == [NAMES[i] for i in rows.indices]
    repeated = dpselect.select_repeated(dpselect.Context.fixed_seed(2), SCORES, 30, epsilon=1.0, sensitivity=1.0,
                                        labels=NAMES)
    assert repeated.labels == [NAMES[i] for i in repeated.indices]


def test_a_wrong_number_of_labels_is_refused_before_anything_is_charged():
    context, accountant = ledger_context()
    fields = {"epsilon": 0.5, "sensitivity": 1.0}
    with pytest.raises(ValueError, match=r"labels has 4 entries but there are 5 candidates"):
        dpselect.select(context, SCORES, labels=NAMES[:4], **fields)
    with pytest.raises(ValueError, match=r"labels has 6 entries but there are 5 candidates"):
        dpselect.select_top_k(context, SCORES, 2, labels=NAMES + ["fig"], **fields)
    with pytest.raises(ValueError, match=r"labels has 5 entries but there are 3 columns"):
        dpselect.select_rows(context, np.ones((4, 3)), labels=NAMES, **fields)
    with pytest.raises(ValueError, match=r"labels has 0 entries but there are 5 candidates"):
        dpselect.select_repeated(context, SCORES, 10, labels=[], **fields)
    with pytest.raises(TypeError, match=r"labels must be a sequence .*\(got str\)"):
        dpselect.select(context, SCORES, labels="abcde", **fields)
    with pytest.raises(TypeError, match=r"labels must be a sequence .*\(got int\)"):
        dpselect.select(context, SCORES, labels=5, **fields)
    expect_nothing_charged_or_drawn(context, accountant)


def test_labels_must_be_a_sequence_or_a_1d_array_and_a_mapping_is_refused_before_the_charge():
    context, accountant = ledger_context()
    fields = {"epsilon": 0.5, "sensitivity": 1.0}
    by_key = {"a": 1, "b": 2, "c": 3}  # labels[index] would be a KeyError after the charge
    with pytest.raises(TypeError, match=r"labels must be a sequence .*\(got dict\): a mapping"):
        dpselect.select(context, [1.0, 2.0, 3.0], labels=by_key, **fields)
    with pytest.raises(TypeError, match=r"labels must be a sequence .*\(got dict\)"):
        dpselect.select_top_k(context, [1.0, 2.0, 3.0], 2, labels=by_key, **fields)
    with pytest.raises(TypeError, match=r"labels must be a sequence .*\(got dict\)"):
        dpselect.select_rows(context, np.ones((2, 3)), labels=by_key, **fields)
    with pytest.raises(TypeError, match=r"labels must be a sequence .*\(got dict\)"):
        dpselect.select_repeated(context, [1.0, 2.0, 3.0], 4, labels=by_key, **fields)
    with pytest.raises(TypeError, match=r"labels must be a sequence .*\(got set\)"):
        dpselect.select(context, [1.0, 2.0, 3.0], labels={"a", "b", "c"}, **fields)
    with pytest.raises(ValueError, match=r"labels must be 1-D \(got shape \(3, 1\)\)"):
        dpselect.select(context, [1.0, 2.0, 3.0], labels=np.array([["a"], ["b"], ["c"]]), **fields)
    expect_nothing_charged_or_drawn(context, accountant)


class _ByKey:
    """A pandas-Series-like label container: ``[]`` by key (here keys 10, 20, ...), ``__array__`` by
    position."""

    def __init__(self, values):
        self._values = list(values)

    def __len__(self):
        return len(self._values)

    def __getitem__(self, key):
        return self._values[key // 10 - 1]  # a KeyError-like failure for a position

    def __array__(self, dtype=None, copy=None):
        return np.array(self._values, dtype=dtype)


def test_labels_are_looked_up_by_position_for_lists_arrays_and_array_like_objects():
    scores = [0.0, 0.0, 50.0]  # at epsilon 1 candidate 2 wins with probability 1 - 2e-11
    for labels in (["x", "y", "z"], ("x", "y", "z"), np.array(["x", "y", "z"]), _ByKey(["x", "y", "z"])):
        pick = dpselect.select(dpselect.Context.fixed_seed(3), scores, epsilon=1.0, sensitivity=1.0, labels=labels)
        assert pick.index == 2 and pick.label == "z"
        rows = dpselect.select_repeated(dpselect.Context.fixed_seed(3), scores, 3, epsilon=1.0, sensitivity=1.0,
                                        labels=labels)
        assert list(rows.labels) == ["z", "z", "z"]
    assert isinstance(dpselect.select_repeated(dpselect.Context.fixed_seed(3), scores, 2, epsilon=1.0,
                                               sensitivity=1.0, labels=_ByKey("xyz")).labels, np.ndarray)


def test_a_pandas_series_of_labels_is_looked_up_by_position():
    pandas = pytest.importorskip("pandas")
    scores = [0.0, 0.0, 50.0]
    series = pandas.Series(["x", "y", "z"], index=[30, 20, 10])  # series[2] would be a KeyError
    assert dpselect.select(dpselect.Context.fixed_seed(3), scores, epsilon=1.0, sensitivity=1.0,
                           labels=series).label == "z"


def test_the_repr_of_many_labels_is_cut_like_the_indices():
    names = [f"candidate-{i}" for i in range(40)]
    top = dpselect.select_top_k(dpselect.Context.fixed_seed(1), np.arange(40.0), 12, epsilon=1.0, sensitivity=1.0,
                                labels=names)
    shown = [f"'{names[i]}'" for i in top.indices[:10]]
    assert repr(top).endswith(", labels=[" + ", ".join(shown) + ", ...])")
    rows = dpselect.select_repeated(dpselect.Context.fixed_seed(1), np.arange(40.0), 30, epsilon=1.0,
                                    sensitivity=1.0, labels=np.array(names))
    shown = [f"'{names[i]}'" for i in rows.indices[:10]]
    assert repr(rows).endswith(", labels=[" + ", ".join(shown) + ", ...])")
    assert sum(name in repr(rows) for name in names) <= 10
    few = dpselect.select_top_k(dpselect.Context.fixed_seed(1), np.arange(3.0), 2, epsilon=1.0, sensitivity=1.0,
                                labels=["a", "b", "c"])
    assert repr(few).endswith(", labels=[" + ", ".join(repr(x) for x in few.labels) + "])")


# ---- 5. The version ---------------------------------------------------------------------------

def cmake_version() -> str:
    text = (Path(__file__).resolve().parents[2] / "CMakeLists.txt").read_text()
    match = re.search(r"project\(\s*dpselect\s+VERSION\s+([0-9]+\.[0-9]+\.[0-9]+)", text)
    assert match, "project(dpselect VERSION x.y.z) not found in CMakeLists.txt"
    return match.group(1)


def test_the_version_is_the_projects():
    assert re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", dpselect.__version__)
    assert dpselect.__version__ == cmake_version()


def test_the_installed_metadata_has_the_same_version():
    try:
        distribution = importlib.metadata.distribution("dpselect")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("dpselect is not installed (a build tree): no package metadata")
    imported = Path(dpselect.__file__).resolve().parent
    if Path(distribution.locate_file("dpselect")).resolve() != imported:
        pytest.skip("the dpselect imported here is not the installed one")
    assert distribution.version == dpselect.__version__ == cmake_version()
