# SPDX-License-Identifier: Apache-2.0
"""The type stubs (nanobind's stubgen) and the package's annotations agree, and a type checker
reads the API the way a user's IDE does: mypy over the package and over a program that uses it."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import dpselect

pytest.importorskip("mypy")

PACKAGE_ROOT = Path(dpselect.__file__).resolve().parent.parent


def mypy(tmp_path, *arguments):
    # A package in a build tree is found through MYPYPATH; an installed one (pip install ./python)
    # through the interpreter's site-packages, which mypy refuses to see in MYPYPATH (and run from
    # elsewhere: other modules there would shadow the library's).
    installed = PACKAGE_ROOT.name in ("site-packages", "dist-packages")
    environment = dict(os.environ) if installed else dict(os.environ, MYPYPATH=str(PACKAGE_ROOT))
    command = [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"), "--no-error-summary",
               "--hide-error-context", *arguments]
    return subprocess.run(command, capture_output=True, text=True, cwd=tmp_path if installed else PACKAGE_ROOT,
                          env=environment)


def test_the_stubs_exist_beside_the_extension():
    stubs = Path(dpselect.__file__).parent / "_dpselect"
    assert (stubs / "__init__.pyi").is_file() and (stubs / "audit.pyi").is_file()
    text = (stubs / "__init__.pyi").read_text()
    assert "class SelectionParams" in text and "def charge_to(" in text
    assert "NOT PRIVATE" in text  # the docstrings travel with the stubs


def test_the_package_type_checks(tmp_path):
    result = mypy(tmp_path, "-p", "dpselect")
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_user_program_type_checks_and_a_wrong_one_does_not(tmp_path):
    good = tmp_path / "good.py"
    good.write_text(textwrap.dedent("""
        import numpy as np
        import dpselect
        import dpselect.audit

        context = dpselect.Context.fixed_seed(1)
        pick: dpselect.Selection = dpselect.select(context, np.zeros(3), epsilon=1.0, sensitivity=1.0)
        index: int = pick.index
        scale: float = pick.report.noise_scale
        interval: dpselect.audit.Interval = dpselect.audit.clopper_pearson(1, 10, 0.05)
        lower: float = interval.lower
        rho: float = dpselect.zcdp_of_pure(1.0)
        named = dpselect.select(context, [3, 1, 2], epsilon=1.0, sensitivity=1.0, labels=["a", "b", "c"])
        label: object = named.label
        keys = np.array([10, 20, 30])
        by_array = dpselect.select(context, [3, 1, 2], epsilon=1.0, sensitivity=1.0, labels=keys)
        top = dpselect.select_top_k(context, [3, 1, 2], 2, epsilon=1.0, sensitivity=1.0, labels=keys)
        rows_by_array = dpselect.select_rows(context, [[1, 2, 3]], epsilon=1.0, sensitivity=1.0,
                                             labels=np.array(["a", "b", "c"]))
        repeated = dpselect.select_repeated(context, [3, 1, 2], 2, epsilon=1.0, sensitivity=1.0,
                                            labels=("a", "b", "c"))
        rows = dpselect.select_rows(context, [[1, 2], [3, 4]], epsilon=1.0, sensitivity=1.0,
                                    mechanism=dpselect.Mechanism.PERMUTE_AND_FLIP)
        indices: np.typing.NDArray[np.int64] = rows.indices
        price: float = dpselect.select_price(context, [1, 2, 3], [1.0, 2.0], epsilon=1.0,
                                             max_bidders=10).price
    """))
    result = mypy(tmp_path, str(good))
    assert result.returncode == 0, result.stdout + result.stderr
    bad = tmp_path / "bad.py"
    bad.write_text(textwrap.dedent("""
        import dpselect
        context = dpselect.Context.fixed_seed(1)
        name: str = context.generator
        epsilon: str = dpselect.PrivacyBound(1.0).epsilon
        dpselect.select(context, [1.0], epsilon=1.0, sensitivity=1.0, monotonic=True)
        dpselect.select_top_k(context, [1.0], 1, epsilon="1", sensitivity=1.0)
    """))
    result = mypy(tmp_path, str(bad))
    assert result.returncode == 1
    assert 'bad.py:4: error: Incompatible types in assignment (expression has type "Generator"' in result.stdout
    assert 'bad.py:5: error: Incompatible types in assignment (expression has type "float"' in result.stdout
    # The keyword parameters are written out, so a misspelt or mistyped one is an error before running.
    assert 'bad.py:6: error: Unexpected keyword argument "monotonic" for "select"' in result.stdout
    assert 'bad.py:7: error: Argument "epsilon" to "select_top_k" has incompatible type "str"' in result.stdout
