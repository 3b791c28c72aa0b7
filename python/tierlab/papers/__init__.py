"""Paper reproductions run by ``tierlab reproduce``.

Each paper has a module here with a function ``reproduce(quick: bool, outdir: Path) -> PaperResult``
that runs the paper's experiment on traces the project ships (generated or captured by
tierlab's own tools, never fetched), writes its figures into ``outdir`` and states each of the
paper's claims beside tierlab's figure.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

#: paper key -> (module, title)
PAPERS: dict[str, tuple[str, str]] = {}


@dataclass
class Claim:
    """One claim of a paper and whether tierlab's measurement goes the same way."""

    claim: str
    paper_value: str
    tierlab_value: str
    holds: bool


@dataclass
class PaperResult:
    key: str
    title: str
    claims: list[Claim] = field(default_factory=list)
    #: name -> data behind a figure or table of the paper
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    #: name -> PNG written into outdir
    figures: dict[str, Path] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def register(key: str, module: str, title: str) -> None:
    PAPERS[key] = (module, title)


def load(key: str):
    if key not in PAPERS:
        raise KeyError(f"unknown paper '{key}'; known: {', '.join(sorted(PAPERS))}")
    return importlib.import_module(PAPERS[key][0])


register("android-lmk", "tierlab.papers.android_lmk", "Swap vs the low-memory killer on Android (Galaxy S2)")
register("emram-swap", "tierlab.papers.emram_swap", "eMRAM swap: four-area CLOCK vs CLOCK (Bahn, JIIBC 2024)")
register("nomad-ssp", "tierlab.papers.nomad_ssp", "Selective Shadow Paging on NOMAD (tiered memory, CXL)")
register(
    "hybrid-dram-pcm",
    "tierlab.papers.hybrid_dram_pcm",
    "App-state-aware buffer cache on hybrid DRAM+PCM memory (Oh et al., KIISE 2015)",
)
register("bs-clock", "tierlab.papers.bs_clock", "BS-CLOCK: bulk-write Spatial Clock (Lee, Lee & Park 2016)")
