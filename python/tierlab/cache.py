"""Inputs that runs generate, cached across runs by content.

A generated workload (e.g. the BS-CLOCK paper's block traces) is made by a deterministic function
of its arguments; :func:`generated` keeps what it wrote under the user's cache directory
(``$TIERLAB_CACHE``, else ``$XDG_CACHE_HOME/tierlab``, else ``~/.cache/tierlab``), keyed by a hash
of the function's name, its arguments and the source of the module that defines it, and copies
it from there the next time the same workload is asked for. A change to the generator's code
changes the key, so a stale file is never used. Cost: one copy of the file per use; the cache
grows by each distinct workload (a few MB each for the papers').

The footprint of a trace file (its distinct pages, the pass that turns ``"5%"``-style sizes into
pages) is kept by :func:`footprint`, in memory for the process and as a small JSON file under the
same directory, keyed by a SHA-256 of the file's bytes, its format and options, the reference
limit and the native module that decodes it: a changed file, or a changed decoder, misses. Cost:
one hash of the file per look-up (about 1 GB/s, against a decoding pass for a miss); an entry
that cannot be read is ignored and rewritten. ``tierlab reproduce --clear-cache`` (or
:func:`clear`) removes both.
"""

from __future__ import annotations

import functools
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


def _footprint_dir() -> Path:
    return cache_dir() / "footprints"


@functools.cache
def _decoder_digest() -> str:
    """SHA-256 of the native module that decodes traces (a rebuilt decoder is another key)."""
    from tierlab import _core

    with open(_core.__file__, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


#: Footprints computed or read in this process, by key.
_footprints: dict[str, int] = {}


def _footprint_key(path: Path, format: str | None, options: dict, limit: int | None) -> str:
    with open(path, "rb") as f:
        content = hashlib.file_digest(f, "sha256").hexdigest()
    text = json.dumps([content, format, options, limit, _decoder_digest()], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def footprint(
    path: str | Path, format: str | None, options: dict, limit: int | None, compute: Callable[[], int]
) -> int:
    """The distinct pages of the trace file ``path`` (read as ``format`` with ``options``, its first
    ``limit`` references): ``compute()`` the first time, then from memory or the cache directory
    while the file's bytes stay the same. ``path`` that is not a regular file (a generator spec)
    is always computed. A cache that cannot be read or written only costs the saving."""
    path = Path(path)
    if not path.is_file():
        return compute()
    try:
        key = _footprint_key(path, format, options, limit)
    except OSError:
        return compute()
    if key in _footprints:
        return _footprints[key]
    entry = _footprint_dir() / f"{key}.json"
    try:
        n = json.loads(entry.read_text())["distinct_pages"]
        if type(n) is int and n >= 0:
            _footprints[key] = n
            return n
    except (OSError, ValueError, KeyError, TypeError):
        pass
    n = compute()
    _footprints[key] = n
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        # A whole entry or none: another process may be writing the same one.
        fd, tmp = tempfile.mkstemp(dir=entry.parent, suffix=".part")
        with os.fdopen(fd, "w") as f:
            json.dump({"trace": str(path.resolve()), "limit": limit, "distinct_pages": n}, f)
        os.replace(tmp, entry)
    except OSError:
        pass
    return n


def clear() -> int:
    """Removes every cached input and footprint; returns the bytes freed."""
    _footprints.clear()
    freed = 0
    for root in (_generated_dir(), _footprint_dir()):
        if root.exists():
            freed += sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
            shutil.rmtree(root)
    return freed
