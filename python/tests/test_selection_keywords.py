# SPDX-License-Identifier: Apache-2.0
"""Every selection entry point (one process, sharded, Dask, Spark) takes the same seven keywords,
written out in its signature with the same types and defaults, documented in the same words; a
name that is none of them is refused in Python's words before anything is read, charged or drawn;
and a type checker reads the keywords of each entry point."""

import importlib.util
import inspect
import textwrap

import numpy as np
import pytest

import dpselect
from support import ledger_context

KEYWORDS = ["epsilon", "sensitivity", "mechanism", "monotone", "utility_bound", "backend", "utility_reference"]


def entry_points():
    """(name, function, the positional arguments before ``params``) of every entry point whose
    module imports here (dpselect.dask needs dask, dpselect.spark pyspark and pyarrow)."""
    found = [("select", dpselect.select, 2), ("select_top_k", dpselect.select_top_k, 3),
             ("select_rows", dpselect.select_rows, 2), ("select_repeated", dpselect.select_repeated, 3),
             ("begin_release", dpselect.begin_release, 1),
             ("begin_top_k_release", dpselect.begin_top_k_release, 3)]
    if importlib.util.find_spec("dask") is not None:
        engine = importlib.import_module("dpselect.dask")
        found += [("dask.select", engine.select, 2), ("dask.select_top_k", engine.select_top_k, 3)]
    if importlib.util.find_spec("pyspark") is not None and importlib.util.find_spec("pyarrow") is not None:
        engine = importlib.import_module("dpselect.spark")
        found += [("spark.select", engine.select, 3), ("spark.select_top_k", engine.select_top_k, 4)]
    return found


ENTRY_POINTS = entry_points()
IDS = [name for name, _, _ in ENTRY_POINTS]


@pytest.mark.parametrize("name,function,positional", ENTRY_POINTS, ids=IDS)
def test_the_keywords_are_written_out_with_selects_types_and_defaults(name, function, positional):
    reference = inspect.signature(dpselect.select).parameters
    parameters = list(inspect.signature(function).parameters.values())
    assert [p.kind for p in parameters[:positional + 1]] == [inspect.Parameter.POSITIONAL_OR_KEYWORD] * (
        positional + 1)
    assert parameters[positional].name == "params" and parameters[positional].default is None
    keywords = parameters[positional + 1:positional + 1 + len(KEYWORDS)]
    assert [p.name for p in keywords] == KEYWORDS
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters[positional + 1:])
    for parameter in keywords:
        assert parameter.default is reference[parameter.name].default, parameter.name
        if not (name == "select_rows" and parameter.name == "epsilon"):  # one epsilon per row, or one for all
            assert parameter.annotation == reference[parameter.name].annotation, parameter.name
    assert inspect.signature(dpselect.select_rows).parameters["epsilon"].annotation == "float | ArrayLike | None"


@pytest.mark.parametrize("name,function,positional", ENTRY_POINTS, ids=IDS)
def test_the_keywords_are_documented_in_the_same_words(name, function, positional):
    doc = function.__doc__
    assert "{selection_keywords}" not in doc
    for shared in (dpselect.select, function):
        assert "    monotone : bool, default False\n" in shared.__doc__
    for keyword in ("sensitivity", "monotone", "utility_bound"):
        assert entry(doc, keyword) == entry(dpselect.select.__doc__, keyword), keyword
    top_k = "top_k" in name
    for keyword in ("mechanism", "epsilon"):
        if keyword == "epsilon" and name in ("select_rows", "select_repeated"):
            continue
        assert entry(doc, keyword) == entry((dpselect.select_top_k if top_k else dpselect.select).__doc__, keyword)
    assert ("the k picks together" in entry(doc, "epsilon")) == top_k
    assert ("None: 0." in entry(doc, "utility_reference")) == (top_k or name in ("select_rows", "select_repeated"))


def entry(doc: str, keyword: str) -> str:
    """The documentation entry of ``keyword`` in a NumPy-style docstring: its line and the lines
    indented below it."""
    lines = doc.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"    {keyword} : "))
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("        "))
    return "\n".join(lines[start:end])


@pytest.mark.parametrize("name,function,positional", ENTRY_POINTS, ids=IDS)
def test_a_keyword_that_is_none_of_them_is_refused_in_pythons_words(name, function, positional):
    context, accountant = ledger_context()
    arguments = [context] + [1] * (positional - 1)  # refused before any argument is read
    short_name = name.split(".")[-1]
    with pytest.raises(TypeError, match=rf"^{short_name}\(\) got an unexpected keyword argument 'epsilonn'$"):
        function(*arguments, epsilonn=1.0, sensitivity=1.0)
    with pytest.raises(TypeError, match=rf"^{short_name}\(\) got an unexpected keyword argument 'params_'$"):
        function(*arguments, dpselect.SelectionParams(1.0, 1.0), params_=None)
    assert accountant.release_count == 0
    assert dpselect.select(context, [1.0, 2.0], epsilon=0.1, sensitivity=1.0).report.stream == 0


def test_the_keywords_and_params_give_the_same_release():
    u = np.array([3.0, 1.0, 4.0, 1.0, 5.0])
    fields = dict(epsilon=0.5, sensitivity=2.0, mechanism=dpselect.Mechanism.PERMUTE_AND_FLIP, monotone=True,
                  utility_bound=10.0, backend=dpselect.Backend.CPU, utility_reference=1.0)
    by_keywords = dpselect.select(dpselect.Context.fixed_seed(3), u, **fields)
    by_params = dpselect.select(dpselect.Context.fixed_seed(3), u, dpselect.SelectionParams(**fields))
    assert by_keywords.index == by_params.index
    assert repr(by_keywords.report) == repr(by_params.report)
    rows = dpselect.select_rows(dpselect.Context.fixed_seed(3), [u, u[::-1]], epsilon=[0.5, 0.25],
                                **{k: v for k, v in fields.items() if k != "epsilon"})
    assert [r.epsilon_spent for r in rows.reports] == [0.5, 0.25]


def test_a_type_checker_reads_the_keywords_of_every_entry_point(tmp_path):
    pytest.importorskip("mypy")
    from test_typing import mypy
    program = tmp_path / "keywords.py"
    program.write_text(textwrap.dedent("""
        import dpselect
        import dpselect.dask
        context = dpselect.Context.fixed_seed(1)
        dpselect.begin_release(context, epsilon=1.0, sensitivity=1.0, monotone=True)
        dpselect.begin_top_k_release(context, 2, 10, epsilon=1.0, sensitivity=1.0, backend=dpselect.Backend.CPU)
        dpselect.select_rows(context, [[1.0, 2.0]], epsilon=[0.5], sensitivity=1.0, utility_reference=0.0)
        dpselect.begin_release(context, epsilon=1.0, sensitivity=1.0, monotonic=True)
        dpselect.dask.select(context, None, epsilon=1.0, sensitivity=1.0, mechanism="exponential")
        dpselect.select_repeated(context, [1.0], 2, epsilon=1.0, sensitivity=1.0, utility_bound=None)
    """))
    result = mypy(tmp_path, str(program))
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 3, result.stdout + result.stderr
    assert 'keywords.py:8: error: Unexpected keyword argument "monotonic" for "begin_release"' in errors[0]
    assert 'keywords.py:9: error: Argument "mechanism" to "select" has incompatible type "str"' in errors[1]
    assert 'keywords.py:10: error: Argument "utility_bound" to "select_repeated" has incompatible type "None"' in \
        errors[2]
