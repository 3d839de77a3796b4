# SPDX-License-Identifier: Apache-2.0
"""The same key gives the same index from Python as from C++ (the dpselect command, which runs
the C++ library with Context::with_fixed_seed for --seed)."""

import json
import subprocess

import numpy as np
import pytest

import dpselect

MECHANISMS = {
    "exponential": dpselect.Mechanism.EXPONENTIAL,
    "permute-and-flip": dpselect.Mechanism.PERMUTE_AND_FLIP,
    "laplace": dpselect.Mechanism.LAPLACE_NOISY_MAX,
}


def utilities(n, dtype=np.float64):
    # Public, data-free values with many near ties, so the noise decides.
    return ((np.arange(n, dtype=np.uint64) * 2654435761) % 97).astype(dtype) / 8


def run(cli, tmp_path, *args):
    out = subprocess.run([cli, *args], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


@pytest.mark.parametrize("name", sorted(MECHANISMS))
@pytest.mark.parametrize("dtype,suffix", [(np.float32, "f32"), (np.float64, "f64")])
def test_select_equals_the_command(cli, tmp_path, name, dtype, suffix):
    u = utilities(10007, dtype)
    path = tmp_path / f"u.{suffix}"
    u.tofile(path)
    report = run(cli, tmp_path, "select", "--utilities", str(path), "--epsilon", "0.75", "--sensitivity", "1",
                 "--mechanism", name, "--seed", "4242", "--repeat", "5", "--backend", "cpu", "--json")
    expected = [release["index"] for release in report["releases"]]
    context = dpselect.Context.fixed_seed(4242)
    got = [dpselect.select(context, u, epsilon=0.75, sensitivity=1.0, mechanism=MECHANISMS[name],
                           backend=dpselect.Backend.CPU).index for _ in range(5)]
    assert got == expected


def test_top_k_and_rows_equal_the_command(cli, tmp_path):
    u = utilities(5000)
    path = tmp_path / "u.f64"
    u.tofile(path)
    report = run(cli, tmp_path, "topk", "--utilities", str(path), "--k", "7", "--epsilon", "1.4",
                 "--sensitivity", "1", "--seed", "99", "--backend", "cpu", "--json")
    context = dpselect.Context.fixed_seed(99)
    # One meaning of epsilon: the k picks together, in the command and in Python.
    top = dpselect.select_top_k(context, u, 7, epsilon=1.4, sensitivity=1.0, backend=dpselect.Backend.CPU)
    assert list(top.indices) == report["releases"][0]["indices"]
    assert top.report.per_pick.epsilon_spent == report["epsilon_per_pick"]

    matrix = utilities(6 * 50).reshape(6, 50)
    path = tmp_path / "m.f64"
    matrix.tofile(path)
    report = run(cli, tmp_path, "rows", "--utilities", str(path), "--cols", "50", "--epsilon", "0.5",
                 "--sensitivity", "1", "--seed", "5", "--backend", "cpu", "--json")
    rows = dpselect.select_rows(dpselect.Context.fixed_seed(5), matrix, epsilon=0.5, sensitivity=1.0,
                                backend=dpselect.Backend.CPU)
    assert [s.index for s in rows.selections] == report["releases"][0]["indices"]
