"""Shared fixtures: where the public traces are (../shared/traces beside the repository), and the
synthetic page workloads the learned-policy tests write as text traces."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("TIERLAB_SHARED", REPO.parent / "shared"))
TRACES = SHARED / "traces"


def trace_path(rel: str) -> Path:
    p = TRACES / rel
    if not p.exists():
        pytest.skip(f"{p} not available (set TIERLAB_SHARED)")
    return p


def write_pages(path, pages) -> str:
    """Writes ``pages`` as a text trace of one page number a line; returns its path."""
    path.write_text("\n".join(map(str, np.asarray(pages).tolist())) + "\n")
    return str(path)


def calls(*lines: str) -> list[tuple]:
    """The callbacks a Python policy is expected to log on a hand-worked trace, one
    ``"callback page seq size"`` string a call: ``calls("miss 1 0 4", "hit 1 2 4")`` is
    ``[("miss", 1, 0, 4), ("hit", 1, 2, 4)]`` (fewer numbers give shorter tuples)."""
    return [(name, *map(int, rest)) for name, *rest in (line.split() for line in lines)]


def scan_zipf_pages(n=60_000, loop=4_000, hot=1_000, alpha=1.0, p_scan=0.5, seed=7) -> np.ndarray:
    """A looping scan over ``loop`` pages interleaved with Zipf(``alpha``) draws over ``hot`` others."""
    rng = np.random.default_rng(seed)
    w = np.arange(1, hot + 1, dtype=np.float64) ** -alpha
    hot_draws = rng.choice(hot, size=n, p=w / w.sum()) + loop
    is_scan = rng.random(n) < p_scan
    scan = (np.cumsum(is_scan) - 1) % loop
    return np.where(is_scan, scan, hot_draws).astype(np.uint64)


@pytest.fixture
def traces() -> Path:
    if not TRACES.exists():
        pytest.skip("shared traces not available")
    return TRACES


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """Generated workloads go to a cache of the test session's own, never the user's."""
    os.environ["TIERLAB_CACHE"] = str(tmp_path_factory.mktemp("tierlab-cache"))
