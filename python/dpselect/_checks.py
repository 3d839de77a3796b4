# SPDX-License-Identifier: Apache-2.0
"""The one place where the public functions' scalar parameters are type-checked.

Every public function of the package, and every constructor of a parameter class, refuses a
parameter of the wrong type with a TypeError that names the parameter and its value
(``epsilon must be a real number (got '1', of type str)``), before it builds, charges or draws
anything. The checks are derived from the functions' own annotations (``float``,
``int``, ``bool`` and ``| None``), so a new parameter is checked without a line written for it:

- ``float``: a real number (Python or NumPy; ``int`` included), not a bool;
- ``int``: an integer (Python or NumPy), not a bool nor a float holding an integer;
- ``bool``: True or False (``numpy.bool_``, and the integers 0 and 1, included).

A function that takes ``**keywords`` but declares the keywords it reads in its ``__signature__``
(the selection entry points, :mod:`dpselect._selection_params`) refuses any other name as Python
refuses one a written signature lacks (``select() got an unexpected keyword argument 'epsilonn'``).

An enum parameter takes a member of its enum (``dpselect.BidderNeighbours.CHANGE_ONE_BID``). Where
one also takes a string, :func:`enum_member` reads it by one rule: the member's name in any case,
``-`` or ``_`` between its words (``"change_one_bid"``, the spelling the documentation uses), or
the command's word for it (``"change-bid"``).

The functions compiled into ``dpselect._dpselect`` carry their signature in ``__nb_signature__``:
:func:`checked_core` reads the same annotations from it, so their callers get the same message
instead of nanobind's list of overloads. The compiled constructors and methods convert their
scalar arguments themselves, in the same words (python/src/scalar_arguments.hpp calls
:func:`check`). Values (out of range, NaN) are checked by the library, which names them as well.
"""

from __future__ import annotations

import enum
import functools
import inspect
import numbers
from collections.abc import Mapping
from typing import Any, Callable, TypeVar

import numpy as np

# What each annotation accepts and how a refusal describes it. The Python type itself is tried
# first: the test against the numbers ABCs costs more than the rest of a keyword's handling.
_KINDS = {
    "float": ("a real number", lambda v: type(v) is float or
              (isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)))),
    "int": ("an integer", lambda v: type(v) is int or
            (isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)))),
    "bool": ("True or False", lambda v: isinstance(v, (bool, np.bool_)) or
             (isinstance(v, numbers.Integral) and v in (0, 1))),
}


def _kind_of(annotation: Any) -> tuple[str, bool] | None:
    """(kind, None allowed) for an annotation made only of float, int or bool and None; else None."""
    if not isinstance(annotation, str):
        annotation = getattr(annotation, "__name__", None)
        if annotation is None:
            return None
    names = [part.strip() for part in annotation.split("|")]
    optional = "None" in names or "Optional" in annotation
    names = [name for name in names if name not in ("None", "")]
    if len(names) != 1 or names[0] not in _KINDS:
        return None
    return names[0], optional


def type_error(name: str, value: Any, kind: str) -> TypeError:
    """The refusal of ``value`` for parameter ``name`` of ``kind`` ('float', 'int' or 'bool')."""
    shown = repr(value)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return TypeError(f"{name} must be {_KINDS[kind][0]} (got {shown}, of type {type(value).__name__})")


def unexpected_keyword(function_name: str, name: str) -> TypeError:
    """The refusal of a keyword argument ``name`` that the function does not take, in Python's words."""
    return TypeError(f"{function_name}() got an unexpected keyword argument {name!r}")


_Member = TypeVar("_Member", bound=enum.Enum)


def enum_member(kind: type[_Member], value: Any, name: str, command_words: Mapping[str, _Member]) -> _Member:
    """``value`` as a member of the enum ``kind``: the member itself, or a string that spells it
    (see the module's docstring; ``command_words`` maps the command's words to the members).

    A ValueError names ``name``, the members and the value for anything else.
    """
    if isinstance(value, kind):
        return value
    if isinstance(value, str):
        word = value.lower().replace("-", "_")
        for member in kind:
            if word == member.name.lower():
                return member
        for command_word, member in command_words.items():
            if word == command_word.replace("-", "_"):
                return member
    names = [member.name for member in kind]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
    raise ValueError(f"{name} must be {listed} (got {value!r})")


def check(name: str, value: Any, kind: str, optional: bool = False) -> None:
    """Raises :func:`type_error` unless ``value`` is of ``kind`` (or None where ``optional``)."""
    if value is None and optional:
        return
    if not _KINDS[kind][1](value):
        raise type_error(name, value, kind)


class _Plan:
    """The scalar parameters of one signature: (position or None, name, kind, optional); and, for a
    function whose ``**keywords`` its signature writes out, the names it takes and its name."""

    __slots__ = ("by_position", "by_name", "names", "function_name")

    def __init__(self, parameters: list[tuple[int | None, str, str, bool]], names: frozenset[str] | None = None,
                 function_name: str = ""):
        self.by_position = [(position, name, kind, optional) for position, name, kind, optional in parameters
                            if position is not None]
        self.by_name = {name: (kind, optional) for _, name, kind, optional in parameters}
        self.names = names
        self.function_name = function_name

    def check(self, args: tuple, kwargs: dict) -> None:
        for position, name, kind, optional in self.by_position:
            if position < len(args):
                check(name, args[position], kind, optional)
        for name, value in kwargs.items():
            found = self.by_name.get(name)
            if found is not None:
                check(name, value, *found)
        if self.names is not None:  # after the types, as Python would refuse it: when the call binds
            for name in kwargs:
                if name not in self.names:
                    raise unexpected_keyword(self.function_name, name)


def _declared_names(function: Callable, signature: inspect.Signature) -> frozenset[str] | None:
    """The names a function's declared signature takes by keyword, when its code takes any keyword
    (``**keywords``) and the signature does not: else None (Python refuses the others itself)."""
    code = getattr(function, "__code__", None)
    if code is None or not code.co_flags & inspect.CO_VARKEYWORDS:
        return None
    parameters = signature.parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return frozenset(p.name for p in parameters if p.kind is not inspect.Parameter.POSITIONAL_ONLY)


def _plan_of_function(function: Callable) -> _Plan | None:
    signature = inspect.signature(function)
    parameters = []
    for position, parameter in enumerate(signature.parameters.values()):
        found = _kind_of(parameter.annotation) if parameter.annotation is not inspect.Parameter.empty else None
        if found is None:
            continue
        positional = parameter.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        parameters.append((position if positional else None, parameter.name, *found))
    names = _declared_names(function, signature)
    if not parameters and names is None:
        return None
    return _Plan(parameters, names, function.__qualname__)


def checked(function: Callable) -> Callable:
    """``function`` with its scalar parameters, and the names of a written-out ``**keywords``,
    checked first (see the module's docstring)."""
    plan = _plan_of_function(function)
    if plan is None:
        return function

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        plan.check(args, kwargs)
        return function(*args, **kwargs)

    setattr(wrapper, "__kwdefaults__", function.__kwdefaults__)  # read by the "params or keywords" rule
    setattr(wrapper, "_scalar_parameters", tuple(plan.by_name))
    return wrapper


# ---- The compiled classes and functions ------------------------------------------------------------

def _parameters_of_signature(signature: str) -> list[str]:
    """The parameters of a nanobind signature ("def f(self, a: float, b: list[int] = \\0) -> None"),
    split at the commas outside brackets."""
    opening = signature.find("(")
    parameters: list[str] = []
    current: list[str] = []
    depth = 0
    for character in signature[opening + 1:]:
        if character in "([{":
            depth += 1
        elif character in ")]}":
            if depth == 0:
                break
            depth -= 1
        if character == "," and depth == 0:
            parameters.append("".join(current).strip())
            current = []
        else:
            current.append(character)
    last = "".join(current).strip()
    return parameters + ([last] if last else [])


def _plans_of_core(callable_: Any) -> list[tuple[_Plan, tuple[str, ...]]]:
    """One plan per nanobind overload of ``callable_`` (its ``__nb_signature__``), with the names of
    its parameters other than ``self``."""
    plans = []
    for entry in getattr(callable_, "__nb_signature__", ()):
        parameters = [p for p in _parameters_of_signature(entry[0]) if p != "self"]
        scalar: list[tuple[int | None, str, str, bool]] = []
        for position, parameter in enumerate(parameters):
            name, _, annotation = parameter.partition(":")
            found = _kind_of(annotation.split("=")[0].strip()) if annotation else None
            if found is not None and name.strip().isidentifier():
                scalar.append((position, name.strip(), *found))
        names = tuple(p.partition(":")[0].partition("=")[0].strip().lstrip("*") for p in parameters)
        plans.append((_Plan(scalar), names))
    return plans


def _explain(plans: list[tuple[_Plan, tuple[str, ...]]], args: tuple, kwargs: dict) -> TypeError | None:
    """The named refusal of the first overload whose scalar parameters the arguments break."""
    for plan, _ in plans:
        try:
            plan.check(args, kwargs)
        except TypeError as error:
            return error
    return None


def _checked_call(callable_: Any, plans: list[tuple[_Plan, tuple[str, ...]]], name: str) -> Callable:
    """``callable_`` (compiled) with its scalar arguments checked first: against its one overload,
    or against the one overload whose parameters the call's fit (``charge(kind, epsilon)`` beside
    ``charge(charges)``); otherwise the error of a call no overload took is explained. The first
    ``skip`` positional arguments (``self``) are not among the plans' positions."""

    def applicable(args: tuple, kwargs: dict) -> list[_Plan]:
        return [plan for plan, names in plans if len(args) <= len(names) and all(key in names for key in kwargs)]

    def call(*args, **kwargs):
        fitting = applicable(args, kwargs) if len(plans) > 1 else [plans[0][0]]
        if len(fitting) == 1:
            fitting[0].check(args, kwargs)
            return callable_(*args, **kwargs)
        try:
            return callable_(*args, **kwargs)
        except TypeError as error:
            if "incompatible function arguments" not in str(error):
                raise
            named = _explain(plans, args, kwargs)
            if named is None:
                raise
            raise named from None

    call.__name__ = name
    call.__qualname__ = name
    call.__doc__ = getattr(callable_, "__doc__", None)
    setattr(call, "_scalar_parameters", tuple(dict.fromkeys(key for plan, _ in plans for key in plan.by_name)))
    return call


def checked_core(function: Any) -> Callable:
    """A compiled function whose scalar arguments are checked as a Python function's are."""
    plans = _plans_of_core(function)
    if not any(plan.by_name for plan, _ in plans):
        return function
    call = _checked_call(function, plans, function.__name__)
    call.__module__ = getattr(function, "__module__", "dpselect._dpselect")
    return call


def check_module(namespace: dict, names: list[str]) -> None:
    """Checks the scalar parameters of every function named in ``names`` (a module's ``__all__``):
    Python functions of the module through :func:`checked`, compiled functions through
    :func:`checked_core`. Only the module's own names are replaced: the compiled module stays as
    it is (its stubs are generated from it)."""
    for name in names:
        value = namespace.get(name)
        if inspect.isfunction(value):
            if value.__module__ == namespace["__name__"]:
                namespace[name] = checked(value)
        elif hasattr(value, "__nb_signature__"):
            namespace[name] = checked_core(value)
