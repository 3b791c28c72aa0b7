"""Shared fixtures: where the public traces are (../shared/traces beside the repository)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("TIERLAB_SHARED", REPO.parent / "shared"))
TRACES = SHARED / "traces"


def trace_path(rel: str) -> Path:
    p = TRACES / rel
    if not p.exists():
        pytest.skip(f"{p} not available (set TIERLAB_SHARED)")
    return p


@pytest.fixture
def traces() -> Path:
    if not TRACES.exists():
        pytest.skip("shared traces not available")
    return TRACES


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """Generated workloads go to a cache of the test session's own, never the user's."""
    os.environ["TIERLAB_CACHE"] = str(tmp_path_factory.mktemp("tierlab-cache"))
