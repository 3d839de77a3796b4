# SPDX-License-Identifier: Apache-2.0
"""Helpers shared by the Python tests (imported by name: pytest puts this folder on sys.path)."""

import sys
import threading

import numpy as np

import dpselect


def ledger_context(seed=1, budget=None):
    """A fixed-seed context charging a fresh accountant (budget epsilon 1 unless given)."""
    context = dpselect.Context.fixed_seed(seed)
    accountant = dpselect.PrivacyAccountant(budget or dpselect.PrivacyBound(1.0))
    context.charge_to(accountant)
    return context, accountant


def assert_the_gil_is_released(release):
    """Runs release() on another thread and checks that this thread ran Python code meanwhile.

    The interpreter's switch interval is raised to 30 s for the duration, so a thread that held
    the GIL through the C++ call would keep it until the call ended: this thread could not count
    to 100,000 (about 5 ms) before release() finished. With the GIL released during the call it
    can. release() must take well over 5 ms.
    """
    started, finished = threading.Event(), threading.Event()

    def run():
        started.set()
        try:
            release()
        finally:
            finished.set()

    interval = sys.getswitchinterval()
    sys.setswitchinterval(30.0)
    try:
        worker = threading.Thread(target=run)
        worker.start()
        started.wait()
        for _ in range(100_000):
            pass
        ran_during_the_release = not finished.is_set()
        worker.join()
    finally:
        sys.setswitchinterval(interval)
    assert ran_during_the_release


def partition_pairs(n=30_000, seed=3):
    """(user, key) pairs in a pandas DataFrame for partition selection on an engine: about 4,000
    users and 300 keys of Zipf-like popularity, so that at epsilon 1 a strategy releases some keys
    but not all. Columns: ``user`` (int64), ``word`` (str), ``code`` (int64, negative ones too),
    ``name`` (str users) and ``raw`` (bytes keys)."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    users = rng.integers(0, 4000, n)
    words = np.array([f"w{i}" for i in range(300)], dtype=object)
    return pd.DataFrame({
        "user": users,
        "word": words[(rng.zipf(1.3, n) - 1) % 300],
        "code": (rng.zipf(1.3, n) % 300) - 50,
        "name": np.array([f"u{u}" for u in users], dtype=object),
        "raw": np.array([w.encode() + b"\xff" for w in words[(rng.zipf(1.3, n) - 1) % 300]], dtype=object),
    })


# The strategies an engine's workers run (all but the policy Gaussian).
PARALLEL_STRATEGIES = [dpselect.PartitionStrategy.TRUNCATED_GEOMETRIC, dpselect.PartitionStrategy.LAPLACE_THRESHOLD,
                       dpselect.PartitionStrategy.GAUSSIAN_THRESHOLD, dpselect.PartitionStrategy.WEIGHTED_GAUSSIAN,
                       dpselect.PartitionStrategy.DP_SIPS]


def expect_same_keys(engine, one_process):
    """An engine's partition selection released what one process released, with its report."""
    assert 0 < len(one_process.keys) < one_process.report.keys_considered  # a comparison that can fail
    assert type(engine.keys) is type(one_process.keys)
    assert list(engine.keys) == list(one_process.keys)
    assert engine.report.keys_considered == one_process.report.keys_considered
    assert (engine.report.stream, engine.report.streams) == (one_process.report.stream, one_process.report.streams)
