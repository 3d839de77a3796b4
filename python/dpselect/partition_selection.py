# SPDX-License-Identifier: Apache-2.0
"""Private partition selection: which keys of an unknown domain may be released.

The keys (search queries, URLs, product ids) come from the users' own data. Each user keeps at
most ``max_partitions`` of its distinct keys (chosen at random with the release's stream), each
key's number of distinct users n is counted, and the key is released with probability
``keep_probability(params, n)``, a function the strategy fixes in advance:

* ``TRUNCATED_GEOMETRIC``: the optimal probability for (epsilon, delta) (Desfontaines, Voss,
  Gipson & Mandayam 2022, Thm 1), per key at epsilon / m and delta / m;
* ``LAPLACE_THRESHOLD``: a Laplace-noised count above a threshold (Korolova et al. 2009; Wilson
  et al. 2020);
* ``GAUSSIAN_THRESHOLD``: the same with Gaussian noise (Wilson et al. 2020).

The weighted strategies weigh keys instead of counting their users: a user keeping t keys adds
at most 1 to the L2 norm of the weights, and a key of weight w is released with probability
``weighted_keep_probability(round, w)`` (they run on the CPU):

* ``WEIGHTED_GAUSSIAN``: each of a user's t keys weighs 1/sqrt(t) (Gopi, Gulhane, Kulkarni, Shen,
  Shokouhi & Yekhanin 2020, "Differentially private set union");
* ``POLICY_GAUSSIAN``: the users one after another (in an order drawn from the stream) spend
  their budget on their keys still below a cutoff (Gopi et al. 2020, L2 descent);
* ``DP_SIPS``: the weighted Gaussian in ``rounds`` rounds of growing budget, each on the keys no
  earlier round released (Swanberg, Desfontaines & Haney 2023).

Example::

    import dpselect
    users = [1, 1, 2, 3, 3, 3]
    queries = ["cats", "dogs", "cats", "cats", "dogs", "owls"]
    kept = dpselect.select_partitions(dpselect.Context(), users, queries, epsilon=1.0, delta=1e-6)
    kept.keys   # the released queries (with so few users, most likely none)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _dpselect as _core
from ._arrays import params_of
from ._dpselect import (
    Backend,
    Context,
    PartitionKeepRule,
    PartitionSelectionParams,
    PartitionSelectionReport,
    PartitionStrategy,
    WeightedRound,
    is_weighted,
    keep_probability,
    partition_keep_rule,
    weighted_keep_probability,
)

__all__ = [
    "PartitionKeepRule", "PartitionSelection", "PartitionSelectionParams", "PartitionSelectionReport",
    "PartitionStrategy", "WeightedRound", "is_weighted", "keep_probability", "partition_keep_rule",
    "select_partitions", "weighted_keep_probability",
]


class PartitionSelection:
    """The released keys and the report of one partition selection.

    Parameters
    ----------
    keys : numpy.ndarray or list
        The released keys, ascending, in the type the keys were given in (a NumPy array of the
        input's integer dtype, or a list of the input's strings or bytes).
    report : PartitionSelectionReport
        What the selection did (``keys_considered`` is NOT PRIVATE).
    """

    def __init__(self, keys: Any, report: PartitionSelectionReport) -> None:
        self.keys = keys
        self.report = report

    def __repr__(self) -> str:
        return f"PartitionSelection(keys={self.keys!r})"


def _ids(values: Any, name: str, length: int | None = None) -> tuple[np.ndarray, Any]:
    """(uint64 ids in host memory, how to map ids back to the values) for integer or string ids.

    Integers are viewed as uint64 (two's complement for negative ids: a bijection, reversed on the
    way back); strings and bytes are numbered by their sorted distinct values.
    """
    # A pyarrow Array or ChunkedArray (whose null_count is a number, not a method as in other libraries).
    if hasattr(values, "is_null") and isinstance(getattr(values, "null_count", None), int):
        if values.null_count > 0:
            first = int(np.flatnonzero(np.asarray(values.is_null()))[0])
            raise ValueError(f"{name} must hold no null (got a null at row {first})")
        values = np.asarray(values)  # a dictionary-encoded column comes back decoded
    elif hasattr(values, "to_numpy"):  # pandas
        if values.isna().any():
            raise ValueError(f"{name} must hold no null (got a null at row {int(np.flatnonzero(values.isna())[0])})")
        values = values.to_numpy()
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D (got shape {array.shape})")
    if length is not None and len(array) != length:
        raise ValueError(f"{name} must hold one entry per user entry (got {len(array)} for {length} users)")
    if array.dtype.kind in "iu":
        ids = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("="))  # native order, C-contiguous
        return ids.view(np.uint64) if ids.itemsize == 8 else ids.astype(np.int64).view(np.uint64), array.dtype
    # NumPy string arrays hold strings by their dtype; an object array is checked value by value.
    if len(array) > 0 and (array.dtype.kind in "US" or (
            array.dtype.kind == "O" and all(isinstance(v, (str, bytes)) for v in array.tolist()))):
        distinct, codes = np.unique(array, return_inverse=True)
        return codes.astype(np.uint64), distinct
    if array.dtype.kind == "b":
        raise TypeError(f"{name} must be integer or string ids (got booleans)")
    if len(array) == 0:
        return np.empty(0, dtype=np.uint64), np.dtype(np.uint64)
    raise TypeError(f"{name} must be integer or string ids (got dtype {array.dtype}); floats are not ids: convert "
                    f"them first, e.g. {name}.astype('int64')")


def _keys_of(ids: list[int], back: Any) -> Any:
    released = np.asarray(ids, dtype=np.uint64)
    if isinstance(back, np.dtype):
        # Ascending in the input's own type (the library sorts the uint64 bits, which puts negative ids last).
        return np.sort(released.view(np.int64).astype(back)) if back.kind == "i" else released.astype(back)
    return [back[i] for i in released.tolist()]


def select_partitions(
    context: Context,
    users: Any,
    keys: Any,
    params: PartitionSelectionParams | None = None,
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    max_partitions: int = 1,
    strategy: PartitionStrategy = PartitionStrategy.TRUNCATED_GEOMETRIC,
    backend: Backend = Backend.AUTO,
    rounds: int = 3,
    round_budget_ratio: float = 0.3,
    policy_cutoff_sigmas: float = 3.0,
) -> PartitionSelection:
    """The keys that may be released, from (user, key) contributions.

    Parameters
    ----------
    context : Context
        The source of the selection's stream and its accountant.
    users : array_like, pandas.Series or pyarrow.Array
        The user of each contribution: integer ids or strings, no null. A pyarrow ``Array`` or
        ``ChunkedArray`` (a column of a table read with ``pyarrow.parquet.read_table``, dictionary
        encoded or not) is taken as its values.
    keys : array_like, pandas.Series or pyarrow.Array
        The key of each contribution (as long as ``users``): integer ids, strings or bytes, no
        null. Repeated (user, key) pairs count once.
    params : PartitionSelectionParams, optional
        All the parameters at once; then leave the keywords at their defaults.
    epsilon : float
        The privacy loss, finite and > 0. Required unless ``params`` is given.
    delta : float
        In (0, 1). Required unless ``params`` is given.
    max_partitions : int, default 1
        The most distinct keys one user contributes to; a user's other keys are dropped at random.
    strategy : PartitionStrategy, default PartitionStrategy.TRUNCATED_GEOMETRIC
        The keep rule.
    backend : Backend, default Backend.AUTO
        Where the pairs are sorted, bounded and decided (AUTO: the GPU when one is usable); every
        backend releases the same keys for the same seed. The weighted strategies run on the CPU.
    rounds : int, default 3
        ``DP_SIPS``: the number of rounds, in [1, 16].
    round_budget_ratio : float, default 0.3
        ``DP_SIPS``: each round's share of the budget over the next round's, in (0, 1].
    policy_cutoff_sigmas : float, default 3.0
        ``POLICY_GAUSSIAN``: the cutoff's height above the threshold, in noise standard deviations.

    Returns
    -------
    PartitionSelection
        ``keys``: the released keys, ascending, of the input's type; ``report``.

    Raises
    ------
    InvalidArgument
        A bad parameter (naming it and its value), or no contributions.
    ValueError
        ``users`` and ``keys`` of different lengths, not 1-D, or holding a null.
    TypeError
        Ids that are neither integers nor strings (floats, booleans), ``params`` together with
        keywords, or neither epsilon and delta nor ``params``.
    BudgetExceeded
        The context's accountant refuses the selection.
    BackendUnavailable
        ``Backend.GPU`` without a usable CUDA device.

    In every case nothing is charged or drawn.

    Notes
    -----
    (epsilon, delta + report.delta_float)-DP between datasets that add or remove one user with
    all of their contributions (Desfontaines et al. 2022; Korolova et al. 2009; Wilson et al.
    2020; Gopi et al. 2020; Swanberg et al. 2023), charged once as an approximate release at
    (epsilon, delta). The GIL is released during the selection.
    """
    fields = {"epsilon": epsilon, "delta": delta, "max_partitions": max_partitions, "strategy": strategy,
              "backend": backend, "rounds": rounds, "round_budget_ratio": round_budget_ratio,
              "policy_cutoff_sigmas": policy_cutoff_sigmas}
    params = params_of(PartitionSelectionParams, params, fields, select_partitions.__kwdefaults__,
                       ("epsilon", "delta"))
    params.validate()
    user_ids, _ = _ids(users, "users")
    key_ids, back = _ids(keys, "keys", len(user_ids))
    selection = _core.select_partitions_ids(context, user_ids, key_ids, params)
    return PartitionSelection(_keys_of(selection.keys, back), selection.report)
