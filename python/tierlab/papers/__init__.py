"""Paper reproductions run by ``tierlab reproduce``.

Each paper has a module here with a function ``reproduce(quick: bool, outdir: Path) -> PaperResult``
that runs the paper's experiment on traces the project ships (generated or captured by
tierlab's own tools, never fetched), writes its figures into ``outdir`` and states each of the
paper's claims beside tierlab's figure.
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

#: paper key -> (module, title)
PAPERS: dict[str, tuple[str, str]] = {}


#: The grades of a claim, in the order the summary line counts them.
WITHIN = "within 25%"
DIRECTION = "direction only"
WRONG = "wrong direction"
QUAL_HOLDS = "qualitative: holds"
QUAL_FAILS = "qualitative: fails"
CALIBRATED = "calibrated"
GRADES = (WITHIN, DIRECTION, WRONG, QUAL_HOLDS, QUAL_FAILS, CALIBRATED)
#: Largest |ratio - 1| graded "within 25%".
TOLERANCE = 0.25


@dataclass
class Claim:
    """One claim of a paper beside tierlab's measurement, graded.

    A *numeric* claim gives ``paper`` and ``tierlab`` as numbers in the same unit (``unit`` is only
    for display). Both are effects measured from ``neutral``, the figure that means "no effect":
    0 for a change or a reduction in percent, 1 for a multiple ("2.68x slower"), 100 for a percentage
    of a baseline ("115% of NOMAD's"), 50 for the share of cases where one policy beats another
    ("in every case" is 100%; half the cases is a coin flip). The ratio is
    ``(tierlab - neutral) / (paper - neutral)``, so for a reduction of 13.7% against the paper's
    15% it is 0.91 (the figures themselves are compared, not what remains).
    The grade is "within 25%" when the effects point the same way and ``|ratio - 1| <= 0.25``,
    "direction only" when they point the same way, else "wrong direction" (an effect of exactly
    none, or a figure tierlab could not measure, is the wrong direction).

    A *qualitative* claim (``paper`` is None: the paper gives no figure, or states a bound such as
    "less than 1%") keeps the verdict ``holds`` and grades "qualitative: holds" or "qualitative: fails".

    ``calibrated`` marks a claim whose tierlab figure comes from a preset or parameter fitted to the
    paper's own measurement of it: it is graded "calibrated" and never counts as evidence; its
    ``holds`` still says whether the fit reproduces the direction.

    ``holds`` (kept for compatibility) is, for a numeric claim, whether the direction holds.
    """

    claim: str
    paper_value: str
    tierlab_value: str
    holds: bool | None = None
    paper: float | None = None
    tierlab: float | None = None
    neutral: float = 0.0
    unit: str = ""
    calibrated: bool = False
    #: why the claim is calibrated (shown in the report)
    calibrated_by: str = ""

    def __post_init__(self) -> None:
        if self.paper is None:
            if self.holds is None:
                raise ValueError(f"qualitative claim needs holds: {self.claim!r}")
            self.holds = bool(self.holds)
            self.tierlab = None if self.tierlab is None else float(self.tierlab)
            return
        self.paper = float(self.paper)
        if self.paper == self.neutral:
            raise ValueError(f"the paper's figure equals the no-effect figure, nothing to compare: {self.claim!r}")
        self.tierlab = float("nan") if self.tierlab is None else float(self.tierlab)
        self.holds = self.direction_holds

    @property
    def numeric(self) -> bool:
        return self.paper is not None

    @property
    def ratio(self) -> float:
        """tierlab's effect over the paper's (NaN for a qualitative claim)."""
        if not self.numeric:
            return math.nan
        return (self.tierlab - self.neutral) / (self.paper - self.neutral)

    @property
    def direction_holds(self) -> bool:
        r = self.ratio
        return bool(r > 0) if not math.isnan(r) else False

    @property
    def grade(self) -> str:
        if self.calibrated:
            return CALIBRATED
        if not self.numeric:
            return QUAL_HOLDS if self.holds else QUAL_FAILS
        if not self.direction_holds:
            return WRONG
        return WITHIN if abs(self.ratio - 1.0) <= TOLERANCE else DIRECTION

    @property
    def evidence(self) -> bool:
        """Whether the claim counts as evidence for or against the reproduction."""
        return not self.calibrated


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
