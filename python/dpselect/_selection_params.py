# SPDX-License-Identifier: Apache-2.0
"""The selection keywords: the seven fields of SelectionParams that every selection entry point
takes as keyword arguments (``dpselect.select`` and its siblings, ``dpselect.sharding``,
``dpselect.dask``, ``dpselect.spark``), written once here with their types, defaults and
documentation, and the rule that turns a call's ``params`` or keywords into one SelectionParams.

An entry point declares them as ``**keywords: Unpack[SelectionKeywords]``: type checkers and
editors read that as the seven named keyword parameters with their types (PEP 692), so a misspelt
or mistyped keyword is an error before the program runs. :func:`selection_keywords` then gives the
function, at run time, the signature with the seven written out (``inspect.signature``, ``help()``,
the type checks of :mod:`dpselect._checks`, which also refuse a name that is not among them) and
the seven's documentation in place of the ``{selection_keywords}`` line of its docstring.
"""

from __future__ import annotations

import inspect
import sys
import textwrap
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

from ._arrays import params_of
from ._checks import unexpected_keyword
from ._dpselect import Backend, Mechanism, SelectionParams

if sys.version_info >= (3, 11):
    from typing import Unpack as Unpack
elif TYPE_CHECKING:
    from typing_extensions import Unpack as Unpack
else:  # before 3.11 only type checkers read Unpack: the annotations stay strings (PEP 563)
    Unpack = None


class SelectionKeywordsWithoutEpsilon(TypedDict, total=False):
    """The selection keywords other than ``epsilon``, for an entry point that declares its own
    (``select_rows`` takes one epsilon per row)."""

    sensitivity: float | None
    mechanism: Mechanism
    monotone: bool
    utility_bound: float
    backend: Backend
    utility_reference: float | None


class SelectionKeywords(SelectionKeywordsWithoutEpsilon, total=False):
    """The keyword form of SelectionParams: its fields, each optional (``params`` may give them)."""

    epsilon: float | None


# The keywords in the order of the signatures, with the defaults of a SelectionParams built from
# epsilon and sensitivity alone (C++ SelectionParams), which must be given one way or the other.
DEFAULTS: dict[str, Any] = {
    "epsilon": None,
    "sensitivity": None,
    "mechanism": Mechanism.EXPONENTIAL,
    "monotone": False,
    "utility_bound": 0.0,
    "backend": Backend.AUTO,
    "utility_reference": None,
}
_REQUIRED = ("epsilon", "sensitivity")

# The documentation of ``params`` and of each keyword, as one selection (select) reads them.
_ENTRIES = {
    "params": """\
params : SelectionParams, optional
    All the privacy parameters at once; then leave the keywords below at their defaults.""",
    "epsilon": """\
epsilon : float
    The privacy loss of the release: finite and > 0. Required unless ``params`` is given.""",
    "sensitivity": """\
sensitivity : float
    Delta, the most any utility changes between neighbouring datasets: finite and > 0.
    Required unless ``params`` is given.""",
    "mechanism": """\
mechanism : Mechanism, default Mechanism.EXPONENTIAL
    EXPONENTIAL, PERMUTE_AND_FLIP or LAPLACE_NOISY_MAX.""",
    "monotone": """\
monotone : bool, default False
    True when between any two neighbours all utilities move the same way (counting
    queries): the noise halves. A false claim breaks the guarantee.""",
    "utility_bound": """\
utility_bound : float, default 0.0
    A public bound B >= ``|u - utility_reference|`` (>= ``|u|`` without a reference) for every
    candidate and dataset, >= 0; 0 means none. With a bound the floating-point slack is public
    and a utility beyond B is an error; without one the slack depends on the data.""",
    "backend": """\
backend : Backend, default Backend.AUTO
    AUTO (a usable GPU, else the CPU), CPU or GPU.""",
    "utility_reference": """\
utility_reference : float, optional
    A public value near the utilities the scores are computed from (finite); None: the first
    utility (0 with a ``utility_bound``). It does not change the distribution.""",
}

# Where the scores are computed from when no reference is given and the release does not take the
# first utility (top-k, rows, repeated releases): 0.
ZERO_REFERENCE = """\
utility_reference : float, optional
    A public value near the utilities the scores are computed from (finite); None: 0. Give a
    public reference for utilities with a large common offset. It does not change the
    distribution."""

# The entries that differ for a top-k release (dpselect.select_top_k and its sharded forms).
TOP_K = {
    "epsilon": """\
epsilon : float
    The privacy loss of the release, the k picks together (finite, > 0): each pick spends
    epsilon / k (rounded down so that the k picks never exceed epsilon), reported as
    ``report.per_pick.epsilon_spent``. The same meaning as the ``dpselect topk`` command's
    ``--epsilon`` and the C++ ``TopKParams::selection.epsilon``. Required unless ``params``
    is given.""",
    "mechanism": """\
mechanism : Mechanism, default Mechanism.EXPONENTIAL
    Must be EXPONENTIAL: only the exponential mechanism's Gumbel noise gives peeling's
    distribution in one pass.""",
    "utility_reference": ZERO_REFERENCE,
}

# The backend of a top-k whose shards are evaluated one by one (dpselect.sharding, Dask, Spark).
SHARDS_ON_THE_CPU = """\
backend : Backend, default Backend.AUTO
    AUTO or CPU: the shards run on the CPU (GPU is an InvalidArgument)."""

_PLACEHOLDER = "{selection_keywords}"


def _parameter(name: str) -> inspect.Parameter:
    annotation = SelectionKeywords.__annotations__[name]
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=DEFAULTS[name],
                             annotation=getattr(annotation, "__forward_arg__", annotation))


_PARAMETERS = {name: _parameter(name) for name in DEFAULTS}


def _written_out(function: Callable) -> inspect.Signature:
    """``function``'s signature with its ``**keywords`` replaced by the selection keywords, in
    their order, before its other keyword-only parameters; a keyword it declares itself stays its own."""
    signature = inspect.signature(function)
    declared = list(signature.parameters.values())
    if not declared or declared[-1].kind is not inspect.Parameter.VAR_KEYWORD:
        raise TypeError(f"{function.__qualname__} must end with **keywords: Unpack[SelectionKeywords]")
    positional = [p for p in declared if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    own = {p.name: p for p in declared if p.kind is inspect.Parameter.KEYWORD_ONLY}
    keywords = [own.pop(name, _PARAMETERS[name]) for name in DEFAULTS]
    return signature.replace(parameters=positional + keywords + list(own.values()))


def _documented(function: Callable, entries: Mapping[str, str]) -> str:
    """``function``'s docstring with its ``{selection_keywords}`` line replaced by the entries of
    ``params`` and of the seven keywords, indented as that line."""
    doc = function.__doc__ or ""
    for line in doc.splitlines():
        if line.strip() == _PLACEHOLDER:
            indent = line[:len(line) - len(line.lstrip())]
            block = "\n".join(entries[name] for name in ("params", *DEFAULTS))
            return doc.replace(line, textwrap.indent(block, indent), 1)
    raise TypeError(f"{function.__qualname__}'s docstring must hold a line {_PLACEHOLDER}")


_Function = TypeVar("_Function", bound=Callable[..., Any])


def selection_keywords(**entries: str) -> Callable[[_Function], _Function]:
    """Gives a selection entry point its written-out signature and the keywords' documentation.

    Parameters
    ----------
    **entries : str
        The documentation entries (``name : type`` and the indented text) that differ for this
        function, by keyword (``epsilon``, ``backend``, ...; :data:`TOP_K` for a top-k release).

    Returns
    -------
    Callable
        A decorator that sets the function's ``__signature__`` and ``__doc__`` and returns it
        (no wrapper: a call costs nothing more).
    """
    unknown = set(entries) - set(_ENTRIES)
    if unknown:
        raise TypeError(f"no selection keyword {sorted(unknown)}")
    documented = {**_ENTRIES, **entries}

    def decorate(function: _Function) -> _Function:
        setattr(function, "__signature__", _written_out(function))
        if function.__doc__ is not None:  # python -OO drops the docstrings
            function.__doc__ = _documented(function, documented)
        return function

    return decorate


def selection_params(function: Callable, params: Any, keywords: Mapping[str, Any]) -> SelectionParams:
    """``params``, or the SelectionParams of the selection keywords that ``function`` received.

    TypeError for both (a keyword that differs from its default: :func:`dpselect._arrays.params_of`),
    for neither epsilon and sensitivity, or for a keyword that is none of the seven. The common cases
    come first and build nothing more (a release from Python costs microseconds).
    """
    if params is None:
        if keywords.get("epsilon") is not None and keywords.get("sensitivity") is not None:
            # A name that is none of the seven: refused here by SelectionParams, and before the
            # call by the entry point's checks (dpselect._checks), in Python's words.
            return SelectionParams(**keywords)
    elif not keywords and type(params) is SelectionParams:
        return params
    for name in keywords:
        if name not in DEFAULTS:
            raise unexpected_keyword(function.__qualname__, name)
    return params_of(SelectionParams, params, {**DEFAULTS, **keywords}, DEFAULTS, _REQUIRED)
