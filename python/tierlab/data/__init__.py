"""Data tierlab ships inside the package: traces captured with ``tierlab capture`` (the commands
that made them are in the repository's traces/README.md) and the scenarios its paper
reproductions run (``experiments/android_lmk.toml`` in the repository links to the one here)."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parent


def captured() -> Path:
    """Directory of the captured memory traces (``*.tlp.zst``)."""
    return DATA / "captured"


def _shipped(folder: str, name: str, what: str) -> Path:
    """Path of ``DATA/folder/name.toml``; a missing one is an error listing the known names."""
    p = DATA / folder / f"{name}.toml"
    if not p.exists():
        known = sorted(q.stem for q in (DATA / folder).glob("*.toml"))
        raise FileNotFoundError(f"no shipped {what} {name!r}; known: {', '.join(known)}")
    return p


def scenario(name: str) -> Path:
    """Path of a shipped scenario TOML, e.g. ``scenario("android_lmk")``."""
    return _shipped("scenarios", name, "scenario")


def devices(name: str) -> Path:
    """Path of a shipped device file (``[[device]]`` tables), e.g. ``devices("compressed")``."""
    return _shipped("devices", name, "device file")
