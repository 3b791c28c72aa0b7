"""Inputs that runs generate, cached across runs by content.

A generated workload (e.g. the BS-CLOCK paper's block traces) is made by a deterministic function
of its arguments; :func:`generated` keeps what it wrote under the user's cache directory
(``$TIERLAB_CACHE``, else ``$XDG_CACHE_HOME/tierlab``, else ``~/.cache/tierlab``), keyed by a hash
of the function's name, its arguments and the source of the module that defines it, and copies
it from there the next time the same workload is asked for. A change to the generator's code
changes the key, so a stale file is never used. ``tierlab reproduce --clear-cache`` (or
:func:`clear`) removes the cache. Cost: one copy of the file per use; the cache grows by each
distinct workload (a few MB each for the papers').
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path


def cache_dir() -> Path:
    """Where generated inputs are kept."""
    if os.environ.get("TIERLAB_CACHE"):
        return Path(os.environ["TIERLAB_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "tierlab"


def _generated_dir() -> Path:
    return cache_dir() / "generated"


def _key(make: Callable, args: tuple, kwargs: dict) -> str:
    module = sys.modules[make.__module__]
    source = Path(inspect.getsourcefile(module) or "").read_bytes()
    # The arguments as the call binds them (defaults filled in), so that spelling a default out
    # or leaving it to the signature finds the same entry.
    bound = inspect.signature(make).bind(None, *args, **kwargs)
    bound.apply_defaults()
    given = list(bound.arguments.items())[1:]
    text = json.dumps([make.__module__, make.__qualname__, given], default=str)
    return hashlib.sha256(source + text.encode()).hexdigest()[:32]


def generated(make: Callable[..., Path], path: str | Path, *args, **kwargs) -> Path:
    """``make(path, *args, **kwargs)`` (a deterministic generator that writes ``path`` and returns
    it), or a copy of what an earlier call with the same arguments and the same generator code
    wrote. A cache that cannot be written (read-only home) only costs the saving."""
    path = Path(path)
    suffix = "".join(path.suffixes)
    cached = _generated_dir() / f"{_key(make, args, kwargs)}{suffix}"
    if cached.is_file():
        shutil.copyfile(cached, path)
        return path
    out = make(path, *args, **kwargs)
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        # A whole file or none: another process may be filling the same entry.
        fd, tmp = tempfile.mkstemp(dir=cached.parent, suffix=".part")
        os.close(fd)
        shutil.copyfile(out, tmp)
        os.replace(tmp, cached)
    except OSError:
        pass
    return out


def clear() -> int:
    """Removes every cached input; returns the bytes freed."""
    root = _generated_dir()
    if not root.exists():
        return 0
    freed = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    shutil.rmtree(root)
    return freed
