"""Traces tierlab ships inside the package (captured with ``tierlab capture``; the commands that
made them are in the repository's traces/README.md)."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parent


def captured() -> Path:
    """Directory of the captured memory traces (``*.tlp.zst``)."""
    return DATA / "captured"
