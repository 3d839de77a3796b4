# SPDX-License-Identifier: Apache-2.0
"""One release over shards evaluated elsewhere: in other processes, on other machines, by a data engine.

The driver begins the release (validated and charged once, there), hands out a picklable
:class:`ReleaseTicket`, workers evaluate their slices of the candidates into picklable
:class:`ShardResult` objects, the driver merges them (:func:`merge`, in any order and grouping) and
finishes the release, which checks that the shards tile the ticket's range exactly once. For the
same key and stream the pick is bit for bit what :func:`dpselect.select` returns over the whole
array in one process. The C++ objects are the same (``Release::ticket``, ``ReleaseTicket``,
``ShardResult``, ``merge``; ``<dpselect/release_ticket.hpp>``).

Example::

    import numpy as np, dpselect
    context = dpselect.Context()
    scores = np.random.default_rng(1).random(1_000_000)
    release = dpselect.begin_release(context, epsilon=1.0, sensitivity=1.0)
    ticket = release.ticket(len(scores), first_utility=scores[0])   # pickle it to the workers
    shards = [ticket.evaluate(scores[i:i + 250_000], i) for i in range(0, len(scores), 250_000)]
    pick = release.finish(dpselect.merge(*shards))

Trust. A ticket holds the context's SECRET key: whoever reads it can compute every noise value of
every release of that context. Send tickets, and the ShardResults that come back (secret as well),
only where the workers and the channel to them are as trusted as the driver's own memory (one
cluster under one operator, an encrypted transport). Only the Selection that
:meth:`Release.finish` returns may be published.
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Iterable
from typing import Any, TypeVar, overload

from ._checks import check_module as _check_module
from . import _dpselect as _core
from ._arrays import ArrayLike
from ._arrays import as_host_or_device as _as_host_or_device
from ._backend import warn_if_gpu_unusable as _warn_if_gpu_unusable
from ._selection_params import SHARDS_ON_THE_CPU as _SHARDS_ON_THE_CPU
from ._selection_params import TOP_K as _TOP_K
from ._selection_params import SelectionKeywords, Unpack
from ._selection_params import selection_keywords as _selection_keywords
from ._selection_params import selection_params as _selection_params
from ._dpselect import (
    Context,
    Generator,
    Selection,
    SelectionParams,
    ShardResult,
    TopKSelection,
    TopKShardResult,
)

__all__ = ["Release", "ReleaseTicket", "ShardResult", "TopKRelease", "TopKShardResult", "TopKTicket", "begin_release",
           "begin_top_k_release", "merge"]


def _index(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int (got {type(value).__name__})")
    value = int(value)
    if value < 0 or value > 2**63:
        raise ValueError(f"{name} must be in [0, 2**63] (got {value})")
    return value


def _evaluate(core, utilities, first_index, stream) -> ShardResult:
    first_index = _index(first_index, "first_index")
    where, array = _as_host_or_device(utilities, "utilities")
    if where == "host":
        return core.evaluate_host(array, first_index)
    return core.evaluate_device(array, first_index, _index(stream, "stream"))


def _candidate_range(candidates) -> tuple[int, int]:
    if isinstance(candidates, range):
        if candidates.step != 1:
            raise ValueError(f"candidates must be a range with step 1 (got {candidates!r})")
        return _index(candidates.start, "candidates.start"), _index(candidates.stop, "candidates.stop")
    if isinstance(candidates, tuple):
        if len(candidates) != 2:
            raise ValueError(f"candidates must be (begin, end) (got a tuple of {len(candidates)})")
        return _index(candidates[0], "candidates[0]"), _index(candidates[1], "candidates[1]")
    return 0, _index(candidates, "candidates")


_Ticket = TypeVar("_Ticket", bound="_SecretTicket")


class _SecretTicket:
    """What both tickets share: the C++ ticket (``_core``, of the class ``_CORE``), its range and
    stream, its bytes and its pickling through them."""

    __slots__ = ("_core",)
    _CORE: Any

    def __init__(self, core: Any) -> None:
        self._core = core

    @property
    def range(self) -> tuple[int, int]:
        """The candidates ``(begin, end)`` the shards must tile, each exactly once."""
        return self._core.range

    @property
    def stream(self) -> int:
        """The release's stream id."""
        return self._core.stream

    def to_bytes(self) -> bytes:
        """The ticket as bytes (a versioned, fixed layout): SECRET, it holds the key."""
        return self._core.to_bytes()

    @classmethod
    def from_bytes(cls: type[_Ticket], data: bytes) -> _Ticket:
        """A ticket read back from :meth:`to_bytes`; corrupted or foreign bytes are an InvalidArgument."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"data must be bytes (got {type(data).__name__})")
        return cls(cls._CORE.from_bytes(bytes(data)))

    def __reduce__(self):
        return (type(self).from_bytes, (self.to_bytes(),))


class _DriverRelease:
    """What both releases share: the C++ release (``_core``), its stream, and that it stays where it began."""

    __slots__ = ("_core",)

    def __init__(self, core: Any) -> None:
        self._core = core

    @property
    def stream(self) -> int:
        """The stream id the release drew (also the report's ``stream``)."""
        return self._core.stream

    def __reduce__(self):
        raise TypeError(f"a dpselect.{type(self).__name__} stays in the process that began it; send its ticket to "
                        "the workers instead")


class ReleaseTicket(_SecretTicket):
    """What a worker evaluates its shard of a release with: SECRET (it holds the context's key).

    Made by :meth:`Release.ticket`; pickles (as :meth:`to_bytes`), so it travels to Dask or Spark
    workers, processes of a pool, or over any channel as trusted as the driver's memory.

    Parameters
    ----------
    core : dpselect._dpselect.ReleaseTicket
        The C++ ticket; made by :meth:`Release.ticket` or :meth:`from_bytes`, not by hand.
    """

    __slots__ = ()
    _CORE = _core.ReleaseTicket

    def evaluate(self, utilities: ArrayLike, first_index: int = 0, *, stream: int = 0) -> ShardResult:
        """This shard's partial result: candidates ``[first_index, first_index + len(utilities))``.

        Parameters
        ----------
        utilities : array_like
            The utilities of the shard's candidates, 1-D, as for :func:`dpselect.select`
            (float32/float64 arrays and DLPack producers in host or CUDA memory without a copy;
            anything else converted once with ``numpy.asarray(utilities, dtype=numpy.float64)``).
        first_index : int, default 0
            The global index of ``utilities[0]``; the shard must lie in :attr:`ReleaseTicket.range`.
        stream : int, default 0
            For device arrays: the CUDA stream the work is ordered on (the call synchronizes it).

        Returns
        -------
        ShardResult
            SECRET: pass it only to :func:`merge` and, merged with the other shards, to the
            release's :meth:`Release.finish`.

        Raises
        ------
        InvalidArgument
            No utilities, or a shard outside :attr:`ReleaseTicket.range` (naming ``first_index``
            and the size).
        UsageError
            The ticket's release was finished or destroyed in this process (a ticket unpickled
            elsewhere cannot know: the finished release refuses what it evaluates).
        ValueError, TypeError, BackendUnavailable
            As for :func:`dpselect.select`.

        Notes
        -----
        Releases nothing and charges nothing. A NaN, +inf or out-of-bound utility is recorded in
        the result and refused by :meth:`Release.finish`, naming its global index.
        """
        _warn_if_gpu_unusable(self._core.params.backend)
        return _evaluate(self._core, utilities, first_index, stream)

    @property
    def params(self) -> SelectionParams:
        """The release's parameters."""
        return self._core.params

    @property
    def utility_reference(self) -> float:
        """The reference every shard's scores are computed from."""
        return self._core.utility_reference

    @property
    def generator(self) -> Generator:
        """The generator of the release's key."""
        return self._core.generator

    def __repr__(self) -> str:
        begin, end = self.range
        return f"ReleaseTicket(stream={self.stream}, range=({begin}, {end}), SECRET)"


class Release(_DriverRelease):
    """One release begun on the driver (:func:`begin_release`): evaluated by itself or through its ticket.

    It stays in the process that began it (it does not pickle): send :meth:`ticket` to the workers.

    Parameters
    ----------
    core : dpselect._dpselect.Release
        The C++ release; made by :func:`begin_release`, not by hand.
    """

    __slots__ = ()

    @property
    def params(self) -> SelectionParams:
        """The parameters the release was begun with."""
        return self._core.params

    def ticket(self, candidates: int | tuple[int, int] | range, first_utility: float | None = None) -> ReleaseTicket:
        """The ticket that workers evaluate this release's shards with.

        Parameters
        ----------
        candidates : int, tuple or Python range
            The candidates the shards must tile, each exactly once: ``n`` for ``[0, n)``, a pair, or
            a ``range`` with step 1; not empty, end at most 2**63.
        first_utility : float, optional
            The utility of the range's first candidate. Used only when the release has neither a
            ``utility_reference`` nor a ``utility_bound``: the scores are then computed from it, as
            :func:`dpselect.select` over the whole array computes them, so the pick equals
            ``select``'s for the same stream. Without it the reference is 0.

        Returns
        -------
        ReleaseTicket
            SECRET (it holds the key). Asking again returns an equal ticket.

        Raises
        ------
        InvalidArgument
            An empty or reversed range, or one beyond 2**63.
        UsageError
            After :meth:`finish`, after the release evaluated a shard itself, or when asked again
            with another range or first utility.
        """
        begin, end = _candidate_range(candidates)
        if first_utility is not None:
            if isinstance(first_utility, bool) or not isinstance(first_utility, numbers.Real):
                raise TypeError(f"first_utility must be a number or None (got {type(first_utility).__name__})")
            first_utility = float(first_utility)
        return ReleaseTicket(self._core.ticket(begin, end, first_utility))

    def evaluate(self, utilities: ArrayLike, first_index: int = 0, *, stream: int = 0) -> ShardResult:
        """A shard evaluated by the release itself, in this process (C++ ``Release::evaluate``).

        As :meth:`ReleaseTicket.evaluate`, except that the release remembers each range it
        evaluated and refuses one that overlaps another (UsageError); not after :meth:`ticket`.
        """
        _warn_if_gpu_unusable(self._core.params.backend)
        return _evaluate(self._core, utilities, first_index, stream)

    def finish(self, merged: ShardResult) -> Selection:
        """The released index and its report, from the merge of every shard.

        Parameters
        ----------
        merged : ShardResult
            The :func:`merge` of every shard's result, each exactly once.

        Returns
        -------
        Selection
            The pick (the largest noisy score; ties to the smallest index) and its report: for the
            same key and stream, what :func:`dpselect.select` returns over the whole array.

        Raises
        ------
        InvalidArgument
            A NaN, +inf or out-of-bound utility in some shard (naming its global index), every
            candidate excluded, or a floating-point slack that would reach epsilon.
        UsageError
            A second finish, a result of another release (another context or stream), or a merge
            that misses a shard of the ticket's range or holds one twice.

        Notes
        -----
        Nothing is released when it raises, and the release is spent either way. The release was
        charged by :func:`begin_release`; finish charges nothing (sources as for
        :func:`dpselect.select`).
        """
        if not isinstance(merged, ShardResult):
            raise TypeError(f"merged must be a dpselect.ShardResult (got {type(merged).__name__})")
        return self._core.finish(merged)

    def __repr__(self) -> str:
        return f"Release(stream={self.stream}, mechanism={self.params.mechanism.name})"


class TopKTicket(_SecretTicket):
    """What a worker evaluates its shard of a top-k release with: SECRET (it holds the context's key).

    Made by :meth:`TopKRelease.ticket`; pickles (as :meth:`to_bytes`).

    Parameters
    ----------
    core : dpselect._dpselect.TopKTicket
        The C++ ticket; made by :meth:`TopKRelease.ticket` or :meth:`from_bytes`, not by hand.
    """

    __slots__ = ()
    _CORE = _core.TopKTicket

    def evaluate(self, utilities: ArrayLike, first_index: int = 0) -> TopKShardResult:
        """This shard's k best and its tally, on the CPU (all cores).

        Parameters
        ----------
        utilities : array_like
            The utilities of the shard's candidates, 1-D, in host memory (as for
            :func:`dpselect.select`; converted once unless float32/float64).
        first_index : int, default 0
            The global index of ``utilities[0]``; the shard must lie in :attr:`TopKTicket.range`.

        Returns
        -------
        TopKShardResult
            SECRET: pass it only to :func:`merge` and :meth:`TopKRelease.finish`.

        Raises
        ------
        InvalidArgument, UsageError, ValueError, TypeError
            As :meth:`ReleaseTicket.evaluate`; device memory is a ValueError (the shards of a
            sharded top-k run on the CPU).
        """
        first_index = _index(first_index, "first_index")
        where, array = _as_host_or_device(utilities, "utilities")
        if where != "host":
            raise ValueError("utilities must be in host memory for a sharded top-k (its shards run on the CPU); "
                             "copy them to the host")
        return self._core.evaluate_host(array, first_index)

    @property
    def k(self) -> int:
        """How many candidates the release keeps."""
        return self._core.k

    @property
    def params(self) -> SelectionParams:
        """The parameters the release was begun with (``epsilon``: the k picks together)."""
        return self._core.params

    def __repr__(self) -> str:
        begin, end = self.range
        return f"TopKTicket(stream={self.stream}, k={self.k}, range=({begin}, {end}), SECRET)"


class TopKRelease(_DriverRelease):
    """One top-k release begun on the driver (:func:`begin_top_k_release`), evaluated through its ticket.

    It stays in the process that began it (it does not pickle): send :meth:`ticket` to the workers.

    Parameters
    ----------
    core : dpselect._dpselect.TopKRelease
        The C++ release; made by :func:`begin_top_k_release`, not by hand.
    """

    __slots__ = ()

    @property
    def k(self) -> int:
        """How many candidates the release keeps."""
        return self._core.k

    @property
    def params(self) -> SelectionParams:
        """The parameters the release was begun with (``epsilon``: the k picks together)."""
        return self._core.params

    def ticket(self) -> TopKTicket:
        """The ticket that workers evaluate this release's shards with (SECRET: it holds the key)."""
        return TopKTicket(self._core.ticket())

    def finish(self, merged: TopKShardResult) -> TopKSelection:
        """The k indices and the report, from the merge of every shard.

        Parameters
        ----------
        merged : TopKShardResult
            The :func:`merge` of every shard's result, each exactly once.

        Returns
        -------
        TopKSelection
            For the same key and stream, what :func:`dpselect.select_top_k` returns over the whole
            array.

        Raises
        ------
        InvalidArgument
            A NaN, +inf or out-of-bound utility, a slack that would reach epsilon, or fewer than k
            candidates that are not excluded.
        UsageError
            As :meth:`Release.finish`, or a merge that keeps another k.
        """
        if not isinstance(merged, TopKShardResult):
            raise TypeError(f"merged must be a dpselect.TopKShardResult (got {type(merged).__name__})")
        return self._core.finish(merged)

    def __repr__(self) -> str:
        return f"TopKRelease(stream={self.stream}, k={self.k})"


_BACKEND_WHERE_EVALUATED = """\
backend : Backend, default Backend.AUTO
    AUTO (a usable GPU, else the CPU), CPU or GPU, resolved where each shard is evaluated."""

_FIRST_UTILITY_OF_THE_TICKET = """\
utility_reference : float, optional
    A public value near the utilities the scores are computed from (finite); None: the
    ``first_utility`` given to :meth:`Release.ticket` when there is no ``utility_bound``, else 0.
    It does not change the distribution."""


@_selection_keywords(**_TOP_K, backend=_SHARDS_ON_THE_CPU)
def begin_top_k_release(
    context: Context,
    k: int,
    candidates: int | tuple[int, int] | range,
    params: SelectionParams | None = None,
    **keywords: Unpack[SelectionKeywords],
) -> TopKRelease:
    """Begins one top-k release whose shards are evaluated later, here or elsewhere.

    Parameters
    ----------
    context : Context
        The source of the release's stream and its accountant.
    k : int
        How many candidates to release: 1 <= k <= the number of candidates.
    candidates : int, tuple or Python range
        The candidates the shards must tile, as for :meth:`Release.ticket`.
    {selection_keywords}

    Returns
    -------
    TopKRelease
        Holding a fresh stream: hand out its :meth:`TopKRelease.ticket`, then finish it.

    Raises
    ------
    InvalidArgument
        A bad parameter, a mechanism other than EXPONENTIAL, backend GPU, or k outside
        [1, number of candidates]: nothing charged or drawn.
    TypeError
        Neither epsilon and sensitivity nor params, or a context that is not one.
    BudgetExceeded
        The accountant refuses the k picks: nothing charged or drawn.

    Notes
    -----
    Charges k exponential-mechanism picks at epsilon / k (epsilon in all) now, before the stream is
    drawn, as :func:`dpselect.select_top_k` (Durfee & Rogers 2019; Dwork & Roth 2014, Thm 3.16).
    """
    params = _selection_params(begin_top_k_release, params, keywords)
    if not isinstance(context, Context):
        raise TypeError(f"context must be a dpselect.Context (got {type(context).__name__})")
    begin, end = _candidate_range(candidates)
    return TopKRelease(_core.begin_top_k_release(context, params, _index(k, "k"), begin, end))


@_selection_keywords(backend=_BACKEND_WHERE_EVALUATED, utility_reference=_FIRST_UTILITY_OF_THE_TICKET)
def begin_release(
    context: Context,
    params: SelectionParams | None = None,
    **keywords: Unpack[SelectionKeywords],
) -> Release:
    """Begins one release whose shards are evaluated later, here or elsewhere.

    Parameters
    ----------
    context : Context
        The source of the release's stream and its accountant.
    {selection_keywords}

    Returns
    -------
    Release
        Holding a fresh stream: evaluate it (:meth:`Release.evaluate`) or hand out its
        :meth:`Release.ticket`, then :meth:`Release.finish`.

    Raises
    ------
    InvalidArgument, TypeError
        A bad parameter: nothing charged or drawn.
    BudgetExceeded
        The context's accountant refuses the release: nothing charged or drawn.

    Notes
    -----
    Charges the context's accountant one release at ``epsilon`` now, before the stream is drawn,
    whether or not the release is finished (C++ ``Context::begin_release``). The guarantee is
    :func:`dpselect.select`'s (Dwork & Roth 2014, Thm 3.10; McKenna & Sheldon 2020; Dwork & Roth
    2014, Claim 3.9).
    """
    params = _selection_params(begin_release, params, keywords)
    if not isinstance(context, Context):
        raise TypeError(f"context must be a dpselect.Context (got {type(context).__name__})")
    return Release(_core.begin_release(context, params))


@overload
def merge(*shards: ShardResult) -> ShardResult: ...
@overload
def merge(*shards: TopKShardResult) -> TopKShardResult: ...
@overload
def merge(shards: Iterable[ShardResult], /) -> ShardResult: ...
@overload
def merge(shards: Iterable[TopKShardResult], /) -> TopKShardResult: ...


def merge(*shards: Any) -> Any:
    """The result of the union of disjoint shards of one release (associative and commutative).

    Parameters
    ----------
    shards : ShardResult or TopKShardResult
        One or more shard results of one kind, as positional arguments (or one iterable of them).

    Returns
    -------
    ShardResult or TopKShardResult
        Their merge, checked by the release's finish (not here).

    Raises
    ------
    ValueError
        No shard.
    TypeError
        Something that is not a shard result, or results of both kinds, named by position.
    """
    kinds = (ShardResult, TopKShardResult)
    if len(shards) == 1 and not isinstance(shards[0], kinds):
        shards = tuple(shards[0])
    if not shards:
        raise ValueError("merge needs at least one ShardResult (got none)")
    kind = type(shards[0]) if isinstance(shards[0], kinds) else ShardResult
    for i, shard in enumerate(shards):
        if not isinstance(shard, kind):
            raise TypeError(f"shards[{i}] must be a dpselect.{kind.__name__} (got {type(shard).__name__})")
    return functools.reduce(_core.merge, shards)


# Every public callable refuses a scalar parameter of the wrong type by name (dpselect._checks).
_check_module(globals(), __all__)
