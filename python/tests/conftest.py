# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures of the Python tests: the dpselect command (for C++ = Python comparisons)."""

import os
import shutil

import pytest


@pytest.fixture(scope="session")
def cli():
    """The dpselect command of this build (DPSELECT_CLI, set by CTest), or skip."""
    path = os.environ.get("DPSELECT_CLI") or shutil.which("dpselect")
    if not path:
        pytest.skip("the dpselect command is not available (set DPSELECT_CLI)")
    return path
