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

import numpy as np
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


@dataclass(frozen=True)
class Word:
    """A word a paper's qualitative claim rests on, fixed as a number (docs/magnitude.md, "Words as
    numbers"); every paper's claims are graded by the same table, :data:`WORDS`.

    A claim measures one or more pairs ``(value, reference)``. For ``kind == "change"`` the figure
    bounded is the change from the reference in percent, ``100 * (value - reference) / |reference|``
    ("90% of NOMAD's" is -10%); for ``kind == "value"`` it is the value itself (a rank correlation,
    a count). The word holds when every pair's figure lies within ``lo``..``hi`` (``None``: no bound
    on that side; ``*_open``: the bound itself is outside)."""

    name: str
    kind: str
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False
    #: the bound as shown beside the claim
    bound: str = ""

    def figure(self, value: float, reference: float | None) -> float:
        """The figure the word bounds for one measured pair."""
        value = float(value)
        if self.kind == "value":
            return value
        if reference is None:
            raise ValueError(f"the word {self.name!r} bounds a change from a reference; none given")
        reference = float(reference)
        if math.isnan(value) or math.isnan(reference):
            return math.nan
        if reference == 0.0:
            return 0.0 if value == 0.0 else math.copysign(math.inf, value)
        return 100.0 * (value - reference) / abs(reference)

    def slack(self, figure: float) -> float:
        """How far inside the bound ``figure`` lies (negative outside, NaN for NaN)."""
        if math.isnan(figure):
            return math.nan
        room = [math.inf]
        if self.lo is not None:
            room.append(figure - self.lo)
        if self.hi is not None:
            room.append(self.hi - figure)
        return min(room)

    def holds(self, figure: float) -> bool:
        if math.isnan(figure):
            return False
        if self.lo is not None and (figure <= self.lo if self.lo_open else figure < self.lo):
            return False
        return not (self.hi is not None and (figure >= self.hi if self.hi_open else figure > self.hi))


#: Two figures whose difference is under this share of the reference are indistinguishable: the
#: margin "never lower" / "at least" / "no more than" allow and "lower" / "higher" must exceed.
INDISTINGUISHABLE_PCT = 1.0
#: "much fewer" / "greatly reduces": at least half fewer (a factor of 2).
GREATLY_PCT = 50.0
#: "same level": within this share of the reference either way.
SAME_LEVEL_PCT = 5.0
#: "hardly changes" / "hardly any loss".
HARDLY_PCT = 1.0
#: "minor": an effect of at most this share of the reference.
MINOR_PCT = 10.0
#: "correlates": a rank correlation at least this large (Cohen's "large" effect).
STRONG_RANK = 0.5

#: The words of the papers' qualitative claims (docs/magnitude.md gives each bound's reasons).
WORDS: dict[str, Word] = {
    w.name: w
    for w in (
        Word(
            "much fewer",
            "change",
            hi=-GREATLY_PCT,
            bound=f"at most {100 - GREATLY_PCT:.0f}% of the reference (at least 2x fewer)",
        ),
        Word(
            "same level",
            "change",
            lo=-SAME_LEVEL_PCT,
            hi=SAME_LEVEL_PCT,
            bound=f"within {SAME_LEVEL_PCT:.0f}% of the reference",
        ),
        Word(
            "hardly changes",
            "change",
            lo=-HARDLY_PCT,
            hi=HARDLY_PCT,
            bound=f"within {HARDLY_PCT:.0f}% of the reference",
        ),
        Word(
            "never lower",
            "change",
            lo=-INDISTINGUISHABLE_PCT,
            bound=f"at every point at least {100 - INDISTINGUISHABLE_PCT:.0f}% of the reference",
        ),
        Word(
            "at least",
            "change",
            lo=-INDISTINGUISHABLE_PCT,
            bound=f"at least {100 - INDISTINGUISHABLE_PCT:.0f}% of the reference",
        ),
        Word(
            "no more than",
            "change",
            hi=INDISTINGUISHABLE_PCT,
            bound=f"at most {100 + INDISTINGUISHABLE_PCT:.0f}% of the reference",
        ),
        Word(
            "lower",
            "change",
            hi=-INDISTINGUISHABLE_PCT,
            hi_open=True,
            bound=f"below {100 - INDISTINGUISHABLE_PCT:.0f}% of the reference",
        ),
        Word(
            "higher",
            "change",
            lo=INDISTINGUISHABLE_PCT,
            lo_open=True,
            bound=f"above {100 + INDISTINGUISHABLE_PCT:.0f}% of the reference",
        ),
        Word("below the stated bound", "change", hi=0.0, hi_open=True, bound="below the paper's stated bound"),
        Word(
            "minor",
            "change",
            lo=-MINOR_PCT,
            hi=MINOR_PCT,
            bound=f"an effect of at most {MINOR_PCT:.0f}% of the reference",
        ),
        Word("correlates", "value", lo=STRONG_RANK, bound=f"Spearman rank correlation at least {STRONG_RANK}"),
        Word("happens", "value", lo=0.0, lo_open=True, bound="more than zero"),
    )
}


def word(name: str) -> Word:
    """The entry of :data:`WORDS` (KeyError naming the known words)."""
    if name not in WORDS:
        raise KeyError(f"unknown claim word {name!r}; known: {', '.join(WORDS)}")
    return WORDS[name]


def effect_ratio(figure: float, paper: float, neutral: float) -> float:
    """tierlab's effect over the paper's, both measured from ``neutral`` (the no-effect figure)."""
    return (figure - neutral) / (paper - neutral)


def within_tolerance(ratio: float) -> bool:
    """Same direction as the paper and ``|ratio - 1| <= TOLERANCE`` (False for NaN)."""
    return bool(ratio > 0 and abs(ratio - 1.0) <= TOLERANCE)


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
    "less than 1%") names its ``word`` (a key of :data:`WORDS`) and gives what tierlab ``measured``
    as pairs ``(value, reference)`` (or one pair, or one value for a word that bounds a value); it
    holds when the word's bound holds for every pair, and grades "qualitative: holds" or
    "qualitative: fails". :attr:`bounded` is the pair's figure nearest the bound (the worst).

    ``beyond`` marks a claim about something the paper did not run (tierlab's own finding): the
    summary counts it apart from the paper's claims.

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
    #: the word of a qualitative claim (a key of WORDS) and what tierlab measured for it
    word: str = ""
    measured: list | tuple | float | None = None
    #: a claim about a configuration the paper did not run
    beyond: bool = False

    def __post_init__(self) -> None:
        if self.paper is None:
            if not self.word:
                raise ValueError(f"qualitative claim needs its word (one of {', '.join(WORDS)}): {self.claim!r}")
            w = word(self.word)
            m = self.measured
            if m is None:
                raise ValueError(f"qualitative claim needs what tierlab measured: {self.claim!r}")
            if isinstance(m, tuple):
                m = [m]
            elif not isinstance(m, list):
                m = [(m, None)]
            pairs = [p if isinstance(p, tuple) else (p, None) for p in m]
            if not pairs:
                raise ValueError(f"qualitative claim measured nothing: {self.claim!r}")
            self.measured = pairs
            self.holds = all(w.holds(f) for f in self.figures)
            self.tierlab = None if self.tierlab is None else float(self.tierlab)
            return
        if self.word:
            raise ValueError(f"a numeric claim is graded on its figure, not a word: {self.claim!r}")
        self.paper = float(self.paper)
        if self.paper == self.neutral:
            raise ValueError(f"the paper's figure equals the no-effect figure, nothing to compare: {self.claim!r}")
        self.tierlab = float("nan") if self.tierlab is None else float(self.tierlab)
        self.holds = self.direction_holds

    @property
    def numeric(self) -> bool:
        return self.paper is not None

    @property
    def figures(self) -> list[float]:
        """A qualitative claim's figures as its word bounds them, one per measured pair."""
        if self.numeric:
            return []
        w = word(self.word)
        return [w.figure(v, r) for v, r in self.measured]

    @property
    def bounded(self) -> float:
        """The figure nearest the word's bound (NaN if any is NaN, or for a numeric claim)."""
        figs = self.figures
        if not figs or any(math.isnan(f) for f in figs):
            return math.nan
        w = word(self.word)
        return min(figs, key=w.slack)

    @property
    def bound(self) -> str:
        """The bound the claim was graded by, as shown in the tables."""
        if self.numeric:
            return f"|ratio - 1| <= {TOLERANCE:g}"
        return f"{self.word}: {word(self.word).bound}"

    @property
    def ratio(self) -> float:
        """tierlab's effect over the paper's (NaN for a qualitative claim)."""
        if not self.numeric:
            return math.nan
        return effect_ratio(self.tierlab, self.paper, self.neutral)

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
        return WITHIN if within_tolerance(self.ratio) else DIRECTION

    @property
    def evidence(self) -> bool:
        """Whether the claim counts as evidence for or against the reproduction."""
        return not self.calibrated


@dataclass
class Sensitivity:
    """How a claim's tierlab figure moves with one workload or device property (issue 16, scope 3).

    ``points`` has columns ``x`` (the property) and ``figure`` (tierlab's figure for the claim, in
    the claim's unit, measured exactly as the claim measures it), and optionally ``series`` (a
    second property held at a few values; :attr:`main_series` is the one at tierlab's default).
    ``paper_x`` is the paper's operating point on the x axis and ``stated`` whether the paper states
    it (``paper_x`` None: the paper says nothing about this property). ``ours_x`` is where
    tierlab's reproduction runs. The sweep's range is chosen from what is plausible for the
    property (``why``), never to reach the paper's figure.

    :attr:`verdict` says either "within 25% at the paper's stated setup" or which condition
    separates tierlab from the paper: where on the axis (if anywhere) the figure comes within 25%
    of the paper's, or that no point of the swept range does."""

    claim: str
    parameter: str
    points: pd.DataFrame
    paper_figure: float
    neutral: float = 0.0
    paper_x: float | None = None
    stated: bool = False
    ours_x: float | None = None
    main_series: str | None = None
    why: str = ""
    log_x: bool = False

    def __post_init__(self) -> None:
        missing = {"x", "figure"} - set(self.points.columns)
        if missing:
            raise ValueError(f"sensitivity of {self.claim!r}: points lack column(s) {sorted(missing)}")
        if self.paper_figure == self.neutral:
            raise ValueError(f"sensitivity of {self.claim!r}: the paper's figure equals the no-effect figure")

    def ratio(self, figure: float) -> float:
        return effect_ratio(figure, self.paper_figure, self.neutral)

    def within(self, figure: float) -> bool:
        return within_tolerance(self.ratio(figure))

    def main(self) -> pd.DataFrame:
        """The points of the main series (all points when there is no series), sorted by x."""
        pts = self.points
        if "series" in pts.columns and self.main_series is not None:
            pts = pts[pts["series"] == self.main_series]
        return pts.sort_values("x")

    def figure_at(self, x: float) -> float:
        """tierlab's figure at ``x`` on the main series (linear interpolation; NaN outside the range)."""
        m = self.main().dropna(subset=["figure"])
        if m.empty or x < m["x"].min() or x > m["x"].max():
            return math.nan
        return float(np.interp(x, m["x"].to_numpy(float), m["figure"].to_numpy(float)))

    @property
    def verdict(self) -> str:
        def fx(v: float) -> str:
            return f"{v:.3g}"

        pts = self.points.dropna(subset=["figure"])
        lo, hi = fx(pts["x"].min()), fx(pts["x"].max())
        where_paper = "stated" if self.stated else "assumed"
        at_paper = ""
        if self.paper_x is not None:
            f = self.figure_at(self.paper_x)
            if math.isnan(f):
                at_paper = f"the paper's {where_paper} point {fx(self.paper_x)} lies outside the swept range; "
            elif self.within(f):
                setup = "the paper's stated setup" if self.stated else "the assumed paper setup"
                return f"within 25% at {setup} ({fx(self.paper_x)}; ratio {self.ratio(f):.2f})"
            else:
                at_paper = f"ratio {self.ratio(f):.2f} at the paper's {where_paper} point {fx(self.paper_x)}; "
        ok = pts[[self.within(v) for v in pts["figure"]]]
        if not ok.empty:
            where = f"{fx(ok['x'].min())}-{fx(ok['x'].max())}"
            if "series" in ok.columns:
                where += " (" + ", ".join(str(s) for s in dict.fromkeys(ok["series"])) + ")"
            return at_paper + f"within 25% of the paper's figure only at {where} (swept {lo}-{hi})"
        ratios = [self.ratio(v) for v in pts["figure"]]
        best = int(np.argmin([abs(r - 1.0) for r in ratios])) if ratios else -1
        closest = "" if best < 0 else f"; closest: ratio {ratios[best]:.2f} at {fx(pts['x'].iloc[best])}"
        return at_paper + f"not within 25% anywhere over {lo}-{hi}{closest}"


def device_variant(preset: str, path: str | Path, source: str, **fields: float) -> Path:
    """Writes a device TOML file (docs/devices.md) defining a device named ``preset`` that
    replaces the preset, with ``fields`` (keys as :func:`tierlab.devices` names its columns, e.g.
    ``write.random_setup_ns``) changed: the sensitivity sweeps' way to vary one device figure."""
    import tomli_w

    from tierlab import api

    table = api.devices()
    rows = table[table["name"] == preset]
    if rows.empty:
        raise KeyError(f"unknown device preset {preset!r}")
    row = rows.iloc[0].to_dict()
    unknown = set(fields) - set(row)
    if unknown:
        raise KeyError(f"device fields {sorted(unknown)} unknown; known: {sorted(row)}")
    row.update(fields, source=source)
    device: dict = {}
    for key, value in row.items():
        if isinstance(value, float) and math.isnan(value):
            continue  # an optional field the preset leaves out
        if not isinstance(value, str):
            value = int(value) if key == "erase_block_pages" else float(value)
        head, _, rest = key.partition(".")
        if rest:
            device.setdefault(head, {})[rest] = value
        else:
            device[key] = value
    path = Path(path)
    path.write_text(tomli_w.dumps({"device": [device]}))
    return path


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
    #: how the figures of claims not within 25% move with the property that drives them
    sensitivities: list[Sensitivity] = field(default_factory=list)


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
