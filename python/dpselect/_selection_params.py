# SPDX-License-Identifier: Apache-2.0
"""The SelectionParams of a call from its ``params`` or its keywords: the rule "params or keywords,
not both" (:func:`dpselect._arrays.params_of`), with the common cases first, without building
anything (a release from Python costs microseconds). Shared by every selection entry point
(dpselect, dpselect.sharding, dpselect.dask)."""

from __future__ import annotations

from ._arrays import params_of
from ._dpselect import Backend, Mechanism, SelectionParams

_REQUIRED = ("epsilon", "sensitivity")
_EXPONENTIAL = Mechanism.EXPONENTIAL
_AUTO = Backend.AUTO


def selection_params(function, params, epsilon, sensitivity, mechanism, monotone, utility_bound, backend,
                     utility_reference) -> SelectionParams:
    """``params``, or the SelectionParams of the keywords that ``function`` (whose keyword defaults
    are SelectionParams') received; TypeError for both, or for neither epsilon and sensitivity."""
    if params is None:
        if epsilon is not None and sensitivity is not None:
            return SelectionParams(epsilon, sensitivity, mechanism, monotone, utility_bound, backend, utility_reference)
    elif (type(params) is SelectionParams and epsilon is None and sensitivity is None and mechanism is _EXPONENTIAL
          and monotone is False and type(utility_bound) is float and utility_bound == 0.0 and backend is _AUTO
          and utility_reference is None):
        return params
    fields = {"epsilon": epsilon, "sensitivity": sensitivity, "mechanism": mechanism, "monotone": monotone,
              "utility_bound": utility_bound, "backend": backend, "utility_reference": utility_reference}
    return params_of(SelectionParams, params, fields, function.__kwdefaults__, _REQUIRED)
