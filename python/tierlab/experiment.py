"""Experiment files and their expansion into sweep cells.

An experiment is a TOML file (reference: ``experiments/REFERENCE.md``)::

    name = "flash-buffer"
    sizes = ["1%", "5%", "4MiB", 1000]        # pages, bytes with a unit, or footprint fractions

    [[trace]]
    path = "traces/app.tlt"                  # relative to the experiment file
    # format = "android"; options = { ... }; label = "app"

    [[system]]                                # optional; several [[system]] tables sweep systems
    tiers = ["dram"]
    file_store = "microsd-c10"

    [[policy]]
    name = "bs-clock"
    seq_dirtied_pages = [2, 16, 1024]        # a list sweeps the parameter

Every list in a ``[[policy]]`` table (other than ``name``) is swept; the cells are the cross
product of traces x systems x policy parameter combinations x sizes. A list-valued parameter that
must stay a list is written as a list of lists.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tierlab import _core
from tierlab.api import Trace, parse_policy, resolve_sizes

TOP_KEYS = {"name", "description", "trace", "system", "policy", "sizes", "limit", "devices", "paper"}
TRACE_KEYS = {"path", "format", "options", "label"}
SYSTEM_KEYS = {"tiers", "file_store", "swap", "write_miss_fetch", "label"}


@dataclass(frozen=True, eq=False)
class Cell:
    """One (trace, system, policy with parameters, size) point of a sweep."""

    trace: Trace
    trace_label: str
    trace_checksum: str
    system: dict
    system_label: str
    policy: str
    params: dict
    size: str
    size_pages: int
    limit: int | None
    devices: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """Hash of the cell's full configuration and its trace's checksum."""
        doc = {
            "trace": {"path": self.trace.path, "format": self.trace.format, "options": self.trace.options},
            "checksum": self.trace_checksum,
            "system": self.system,
            "policy": self.policy,
            "params": self.params,
            "size_pages": self.size_pages,
            "limit": self.limit,
            "devices": list(self.devices),
            "version": _core.__version__,
        }
        return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:24]

    def group(self) -> tuple:
        """Cells of one group share one pass over their trace."""
        return (
            self.trace.to_json(),
            self.trace_checksum,
            json.dumps(self.system, sort_keys=True),
            self.limit,
            self.devices,
        )


@dataclass
class Experiment:
    name: str
    description: str
    cells: list[Cell] = field(default_factory=list)
    source: Path | None = None


def _err(origin: str, msg: str) -> _core.ConfigError:
    return _core.ConfigError(f"{origin}: {msg}")


def _check_keys(table: dict, allowed: set[str], where: str, origin: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise _err(origin, f"{where}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}")


def file_checksum(path: Path) -> str:
    """sha256 of a trace file's bytes (generator specs hash their text)."""
    if not path.exists():
        return hashlib.sha256(str(path).encode()).hexdigest()[:24]
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:24]


def _expand_params(params: dict) -> list[dict]:
    keys = list(params)
    values = [v if isinstance(v, list) else [v] for v in (params[k] for k in keys)]
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*values)]


def load(path: str | Path) -> Experiment:
    path = Path(path)
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as e:
        raise _err(str(path), f"not a TOML text file (byte {e.start} is not UTF-8)") from None
    except tomllib.TOMLDecodeError as e:
        raise _err(str(path), f"not valid TOML: {e}") from None
    return from_dict(doc, origin=str(path), base=path.parent)


def from_dict(doc: dict[str, Any], origin: str = "<experiment>", base: Path | None = None) -> Experiment:
    """Builds the sweep's cells from an experiment document (see the module doc)."""
    base = base or Path.cwd()
    _check_keys(doc, TOP_KEYS, "top level", origin)
    traces = doc.get("trace", [])
    if isinstance(traces, dict):
        traces = [traces]
    if not traces:
        raise _err(origin, "at least one [[trace]] table is needed")
    systems = doc.get("system", [{}])
    if isinstance(systems, dict):
        systems = [systems]
    policies = doc.get("policy", [])
    if isinstance(policies, dict):
        policies = [policies]
    if not policies:
        raise _err(origin, "at least one [[policy]] table is needed")
    sizes = doc.get("sizes")
    if not isinstance(sizes, list) or not sizes:
        raise _err(origin, "sizes: a non-empty list of pages, byte sizes ('4MiB') or fractions ('10%') is needed")
    limit = doc.get("limit")
    if limit is not None and (not isinstance(limit, int) or limit <= 0):
        raise _err(origin, f"limit: a positive number of page references, got {limit!r}")
    devices = tuple(str((base / d).resolve()) for d in doc.get("devices", []))

    exp = Experiment(name=str(doc.get("name", Path(origin).stem)), description=str(doc.get("description", "")))
    for i, t in enumerate(traces):
        _check_keys(t, TRACE_KEYS, f"trace[{i}]", origin)
        if "path" not in t:
            raise _err(origin, f"trace[{i}]: 'path' is required")
        raw = str(t["path"])
        p = Path(raw)
        resolved = p if p.is_absolute() or ":" in raw and not (base / p).exists() else (base / p)
        trace = Trace(str(resolved), t.get("format"), dict(t.get("options", {})))
        label = str(t.get("label", Path(raw).name))
        checksum = file_checksum(Path(trace.path))
        try:
            size_pages = list(zip(map(str, sizes), resolve_sizes(trace, sizes, limit), strict=True))
        except _core.ConfigError as e:
            raise _err(origin, str(e)) from None
        for j, s in enumerate(systems):
            _check_keys(s, SYSTEM_KEYS, f"system[{j}]", origin)
            sys_spec = {k: v for k, v in s.items() if k != "label"}
            sys_label = str(s.get("label", "+".join(sys_spec.get("tiers", ["dram"]))))
            for k, pol in enumerate(policies):
                if "name" not in pol:
                    raise _err(origin, f"policy[{k}]: 'name' is required")
                params = {key: v for key, v in pol.items() if key != "name"}
                for combo in _expand_params(params):
                    spec = parse_policy({"name": pol["name"], **combo})
                    for size_text, pages in size_pages:
                        exp.cells.append(
                            Cell(
                                trace,
                                label,
                                checksum,
                                sys_spec,
                                sys_label,
                                spec["name"],
                                spec["params"],
                                size_text,
                                pages,
                                limit,
                                devices,
                            )
                        )
    return exp
