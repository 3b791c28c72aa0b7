"""The result store: a directory of Parquet parts, one row per cell keyed by the cell's hash.

Each finished group of cells is written to a temporary file and renamed into place, so a part is
either whole or absent: a sweep killed at any point loses only unfinished groups, and a rerun
computes exactly the cells whose keys are missing. Reading drops any duplicate key (keeping the
first), so even two sweeps racing on one store never yield a row twice.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pandas as pd


class Store:
    def __init__(self, root: str | Path):
        self.root = Path(root)

    def parts(self) -> list[Path]:
        return sorted(self.root.glob("part-*.parquet")) if self.root.exists() else []

    def keys(self) -> set[str]:
        keys: set[str] = set()
        for p in self.parts():
            keys.update(pd.read_parquet(p, columns=["cell_key"])["cell_key"])
        return keys

    def write(self, rows: pd.DataFrame) -> Path:
        """Atomically adds a part holding ``rows`` (which must have a ``cell_key`` column)."""
        self.root.mkdir(parents=True, exist_ok=True)
        name = f"part-{pd.Timestamp.now(tz='UTC').strftime('%Y%m%dT%H%M%S%f')}-{uuid.uuid4().hex[:8]}.parquet"
        tmp = self.root / f".{name}.tmp"
        rows.to_parquet(tmp, index=False)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        final = self.root / name
        os.replace(tmp, final)
        return final

    def load(self) -> pd.DataFrame:
        parts = self.parts()
        if not parts:
            return pd.DataFrame()
        df = pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)
        return df.drop_duplicates("cell_key", keep="first").reset_index(drop=True)
