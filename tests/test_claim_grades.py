"""Issue 16: claims are graded on magnitude, each grade can fail, the summary counts add up, and a
calibrated claim is never evidence."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from tierlab import papers
from tierlab.papers import Claim, PaperResult, harness


def numeric(paper: float, tierlab: float, **kw) -> Claim:
    return Claim("c", f"{paper}", f"{tierlab}", paper=paper, tierlab=tierlab, **kw)


def test_grade_drops_as_the_paper_figure_moves_away():
    # tierlab measures a 17.6% reduction (BS-CLOCK web); feed it three paper figures.
    assert numeric(17.0, 17.6).grade == papers.WITHIN
    assert numeric(43.4, 17.6).grade == papers.DIRECTION  # the paper's real figure: ratio 0.41
    assert numeric(-10.0, 17.6).grade == papers.WRONG  # a paper that saw an increase
    assert numeric(43.4, 17.6).ratio == pytest.approx(17.6 / 43.4)


def test_within_25_percent_boundary_both_sides():
    assert numeric(100.0, 125.0).grade == papers.WITHIN
    assert numeric(100.0, 75.0).grade == papers.WITHIN
    assert numeric(100.0, 125.1).grade == papers.DIRECTION
    assert numeric(100.0, 74.9).grade == papers.DIRECTION
    # Negative figures (a change in %): -58% vs -23.4% is the right way, not within 25%.
    assert numeric(-58.0, -23.4).grade == papers.DIRECTION
    assert numeric(-58.0, -50.0).grade == papers.WITHIN
    assert numeric(-58.0, 5.0).grade == papers.WRONG


def test_effect_is_measured_from_the_no_effect_figure():
    # "about 115% of NOMAD's" vs 105.9%: +15% vs +5.9%, not 1.059 / 1.15.
    c = numeric(115.0, 105.9, neutral=100.0)
    assert c.ratio == pytest.approx(5.9 / 15.0)
    assert c.grade == papers.DIRECTION
    assert numeric(115.0, 113.0, neutral=100.0).grade == papers.WITHIN
    assert numeric(115.0, 96.0, neutral=100.0).grade == papers.WRONG
    # A multiple: 8x slower vs 1.04x slower.
    assert numeric(8.0, 1.04, neutral=1.0).grade == papers.DIRECTION
    assert numeric(8.0, 0.9, neutral=1.0).grade == papers.WRONG


def test_no_effect_or_unmeasured_is_the_wrong_direction():
    assert numeric(39.8, 0.0).grade == papers.WRONG
    assert numeric(39.8, math.nan).grade == papers.WRONG
    assert not numeric(39.8, math.nan).holds


def test_holds_is_the_direction_for_numeric_claims():
    assert numeric(43.4, 17.6).holds
    assert not numeric(43.4, -1.0).holds
    # A verdict passed for a numeric claim is replaced by the direction.
    assert not Claim("c", "", "", True, paper=10.0, tierlab=-1.0).holds


def qual(word: str, measured) -> Claim:
    return Claim("c", word, "", word=word, measured=measured)


def test_qualitative_claims_are_graded_by_their_word():
    assert qual("much fewer", (3.0, 10.0)).grade == papers.QUAL_HOLDS
    assert qual("much fewer", (9.0, 10.0)).grade == papers.QUAL_FAILS
    with pytest.raises(ValueError, match="needs its word"):
        Claim("c", "much fewer", "6 vs 5", True)  # a verdict alone is no longer a grade
    with pytest.raises(ValueError, match="measured"):
        Claim("c", "much fewer", "6 vs 5", word="much fewer")
    with pytest.raises(KeyError, match="unknown claim word 'lots fewer'"):
        qual("lots fewer", (1.0, 2.0))
    with pytest.raises(ValueError, match="not a word"):
        Claim("c", "", "", paper=10.0, tierlab=5.0, word="lower")
    with pytest.raises(ValueError):
        numeric(0.0, 1.0)  # a paper figure of no effect has no direction


#: For every word: (pairs just inside its bound, pairs just outside), as (tierlab, reference).
JUST = {
    "much fewer": ((499.0, 1000.0), (501.0, 1000.0)),
    "same level": ((1049.0, 1000.0), (1051.0, 1000.0)),
    "hardly changes": ((991.0, 1000.0), (989.0, 1000.0)),
    "never lower": ([(1000.0, 1000.0), (991.0, 1000.0)], [(1000.0, 1000.0), (989.0, 1000.0)]),
    "at least": ((991.0, 1000.0), (989.0, 1000.0)),
    "no more than": ((1009.0, 1000.0), (1011.0, 1000.0)),
    "lower": ((989.0, 1000.0), (991.0, 1000.0)),
    "higher": ((1011.0, 1000.0), (1009.0, 1000.0)),
    "below the stated bound": ((0.99, 1.0), (1.01, 1.0)),
    "minor": ((1.099, 1.0), (1.101, 1.0)),
    "correlates": (0.51, 0.49),
    "happens": (1.0, 0.0),
}


def test_every_word_has_a_just_inside_and_just_outside_case():
    assert set(JUST) == set(papers.WORDS)


@pytest.mark.parametrize("word", sorted(JUST))
def test_the_grade_drops_when_a_figure_crosses_its_words_bound(word):
    inside, outside = JUST[word]
    assert qual(word, inside).grade == papers.QUAL_HOLDS
    assert qual(word, outside).grade == papers.QUAL_FAILS


def test_the_bound_itself():
    # Closed bounds include the bound, open ones ("lower", "higher", "below") exclude it.
    assert qual("much fewer", (500.0, 1000.0)).holds
    assert qual("same level", (1050.0, 1000.0)).holds and qual("same level", (950.0, 1000.0)).holds
    assert not qual("lower", (990.0, 1000.0)).holds
    assert not qual("below the stated bound", (1.0, 1.0)).holds
    assert qual("correlates", 0.5).holds and not qual("happens", 0.0).holds
    # "same level" is two-sided: far above fails as far below does.
    assert not qual("same level", (1100.0, 1000.0)).holds and not qual("same level", (900.0, 1000.0)).holds


def test_every_pair_must_hold_and_the_worst_is_reported():
    c = qual("much fewer", [(300.0, 1000.0), (900.0, 1000.0), (100.0, 1000.0)])
    assert not c.holds
    assert c.figures == pytest.approx([-70.0, -10.0, -90.0])
    assert c.bounded == pytest.approx(-10.0)  # nearest the bound (here beyond it)
    assert c.bound == "much fewer: at most 50% of the reference (at least 2x fewer)"
    # A figure that could not be measured never holds.
    assert not qual("at least", (math.nan, 1.0)).holds
    assert math.isnan(qual("at least", [(1.0, 1.0), (math.nan, 1.0)]).bounded)
    assert not qual("correlates", math.nan).holds
    # A reference of zero: any increase is infinite, no change is none.
    assert qual("no more than", (0.0, 0.0)).holds and not qual("no more than", (1.0, 0.0)).holds
    # A change from a negative reference keeps its sign: -5% -> -2% is higher.
    assert qual("higher", (-2.0, -5.0)).holds


def test_direction_and_no_difference_words_never_both_hold():
    for tierlab in (985.0, 990.0, 995.0, 1000.0, 1005.0, 1010.0, 1015.0):
        m = (tierlab, 1000.0)
        assert not (qual("lower", m).holds and qual("at least", m).holds), tierlab
        assert not (qual("higher", m).holds and qual("no more than", m).holds), tierlab


def test_calibrated_claim_is_no_evidence_whatever_its_figure():
    good = numeric(35.0, 35.0, calibrated=True, calibrated_by="preset fitted to Fig. 2")
    bad = numeric(35.0, -3.0, calibrated=True)
    for c in (good, bad):
        assert c.grade == papers.CALIBRATED
        assert not c.evidence
    # The fit is still checked for its direction.
    assert good.holds and not bad.holds


def _done(claims: list[Claim], failed: bool = False):
    res = PaperResult("bs-clock", "t", claims=claims)
    done = [("bs-clock", res, "0 s")]
    if failed:
        done.append(("nomad-ssp", None, "Traceback"))
    return done


def test_summary_counts_add_up_and_calibrated_is_apart():
    claims = [
        numeric(17.0, 17.6),
        numeric(43.4, 17.6),
        numeric(87.2, 31.5),
        numeric(-10.0, 17.6),
        qual("much fewer", (1.0, 10.0)),
        qual("much fewer", (9.0, 10.0)),
        numeric(35.0, 35.0, calibrated=True),
        numeric(77.5, 77.5, calibrated=True),
        Claim("b", "", "", word="lower", measured=(1.0, 2.0), beyond=True),
    ]
    df = harness.claims_frame(_done(claims))
    counts = harness.grade_counts(df)
    assert sum(counts.values()) + 1 == len(claims) == len(df)
    assert counts == {
        papers.WITHIN: 1,
        papers.DIRECTION: 2,
        papers.WRONG: 1,
        papers.QUAL_HOLDS: 1,
        papers.QUAL_FAILS: 1,
        papers.CALIBRATED: 2,
    }
    line = harness.summary_line(df)
    assert line == (
        "9 claims: numeric 1 within 25%, 2 direction only, 1 wrong direction; qualitative 1 holds, "
        "1 fails; 2 calibrated (not evidence); 1 beyond the paper (1 qualitative: holds)"
    )
    # Calibrated claims are counted apart from the evidence grades, beyond-the-paper ones apart too.
    evidence = df[~df["calibrated"] & ~df["beyond the paper"]]
    assert len(evidence) == 6 and not (evidence["grade"] == papers.CALIBRATED).any()
    assert harness.grade_counts(df, beyond=True)[papers.QUAL_HOLDS] == 1


def test_claims_frame_columns_and_failed_paper():
    df = harness.claims_frame(_done([numeric(43.4, 17.6), qual("same level", [(96.0, 100.0)])], failed=True))
    assert list(df.columns) == harness.COLUMNS
    first = df.iloc[0]
    assert first["paper figure"] == 43.4 and first["tierlab figure"] == 17.6
    assert first["ratio"] == pytest.approx(17.6 / 43.4)
    assert first["grade"] == papers.DIRECTION
    assert math.isnan(df.iloc[1]["paper figure"]) and df.iloc[1]["grade"] == papers.QUAL_HOLDS
    # A qualitative claim carries its word, the bound it was graded by and its figure nearest it.
    assert df.iloc[1]["word"] == "same level" and df.iloc[1]["bound"] == "same level: within 5% of the reference"
    assert df.iloc[1]["bounded figure"] == pytest.approx(-4.0)
    assert first["bound"] == "|ratio - 1| <= 0.25" and first["word"] == ""
    assert df.iloc[2]["grade"] == "failed"
    assert harness.summary_line(df).endswith("; 1 paper(s) failed")
    shown = harness.display_frame(df)
    assert list(shown.iloc[0][["paper figure", "tierlab figure", "ratio"]]) == ["43.4", "17.6", "0.41"]
    assert shown.iloc[1]["tierlab figure"] == "-4.0%" and shown.iloc[1]["bound"].startswith("same level:")


def test_report_shows_grades_and_summary(tmp_path):
    claims = [numeric(43.4, 17.6, unit="%"), numeric(35.0, 35.0, unit="%", calibrated=True, calibrated_by="fit")]
    out = harness.write_report(_done(claims), tmp_path / "report.html", quick=True)
    text = out.read_text()
    df = harness.claims_frame(_done(claims))
    assert harness.summary_line(df) in text
    for s in ("direction only", "calibrated", "43.4%", "17.6%", "0.41", "ratio", "grade", "bound"):
        assert s in text, s
    csv = pd.read_csv(tmp_path / "claims.csv")
    assert list(csv.columns) == harness.COLUMNS and list(csv["bound"]) == ["|ratio - 1| <= 0.25"] * 2


def test_reproduce_api_returns_the_graded_frame(tmp_path):
    import tierlab

    df = tierlab.reproduce("bs-clock", quick=True, outdir=tmp_path)
    assert isinstance(df, pd.DataFrame) and len(df) > 0
    assert set(df["grade"]) <= set(papers.GRADES)
    assert df.attrs["summary"] == harness.summary_line(df)
    # The Fig. 2 claims come from presets fitted to Fig. 2: calibrated, not evidence.
    fig2 = df[df["claim"].str.startswith("Fig. 2")]
    assert len(fig2) == 2 and (fig2["grade"] == papers.CALIBRATED).all()
    num = df[df["paper figure"].notna() & ~df["calibrated"]]
    assert (num["ratio"] == (num["tierlab figure"] - 0) / num["paper figure"]).all()
    assert (tmp_path / "report.html").exists()


def sens(points: list[tuple[float, float]], **kw) -> papers.Sensitivity:
    df = pd.DataFrame(points, columns=["x", "figure"])
    kw.setdefault("paper_figure", 40.0)
    return papers.Sensitivity(claim="c", parameter="p", points=df, **kw)


def test_sensitivity_verdict_at_the_papers_stated_point():
    s = sens([(0.0, 10.0), (1.0, 30.0), (2.0, 50.0)], paper_x=1.5, stated=True)
    assert s.figure_at(1.5) == pytest.approx(40.0)
    assert s.verdict.startswith("within 25% at the paper's stated setup")
    # The same curve, the paper's point where tierlab is far off: the verdict names where it reaches.
    s = sens([(0.0, 10.0), (1.0, 30.0), (2.0, 50.0)], paper_x=0.0, stated=True)
    assert "ratio 0.25 at the paper's stated point 0" in s.verdict
    assert "within 25% of the paper's figure only at 1-2" in s.verdict


def test_sensitivity_verdict_when_nothing_reaches_the_paper():
    s = sens([(1.0, 5.0), (2.0, 8.0), (4.0, 12.0)])
    assert s.verdict == "not within 25% anywhere over 1-4; closest: ratio 0.30 at 4"
    # Outside the swept range the figure is unknown, never extrapolated.
    s = sens([(1.0, 5.0), (2.0, 8.0)], paper_x=9.0, stated=True)
    assert math.isnan(s.figure_at(9.0))
    assert s.verdict.startswith("the paper's stated point 9 lies outside the swept range")


def test_sensitivity_measures_effects_from_the_neutral_figure():
    # "115% of NOMAD's": 110% is an effect of 10 against 15, ratio 0.67, not 110/115.
    s = sens([(0.5, 110.0), (1.0, 112.0)], paper_figure=115.0, neutral=100.0, paper_x=0.5, stated=False)
    assert s.ratio(110.0) == pytest.approx(10 / 15)
    assert not s.within(110.0) and s.within(112.0)
    assert "within 25% of the paper's figure only at 1-1" in s.verdict


def test_sensitivity_main_series_and_bad_input():
    df = pd.DataFrame({"x": [1.0, 2.0, 1.0, 2.0], "figure": [10.0, 20.0, 40.0, 41.0], "series": list("aabb")})
    s = papers.Sensitivity(claim="c", parameter="p", points=df, paper_figure=40.0, main_series="a", paper_x=2.0)
    assert s.figure_at(2.0) == 20.0  # the main series only
    assert "(b)" in s.verdict
    with pytest.raises(ValueError, match="lack column"):
        papers.Sensitivity(claim="c", parameter="p", points=pd.DataFrame({"x": [1.0]}), paper_figure=1.0)
    with pytest.raises(ValueError, match="no-effect"):
        sens([(1.0, 1.0)], paper_figure=0.0)


def test_sensitivity_for_an_unknown_claim_is_refused():
    res = PaperResult("k", "t", claims=[numeric(40.0, 10.0)])
    res.sensitivities.append(
        papers.Sensitivity(
            claim="not a claim", parameter="p", points=pd.DataFrame({"x": [1.0], "figure": [1.0]}), paper_figure=2.0
        )
    )
    with pytest.raises(ValueError, match="unknown claim"):
        harness.check_sensitivities(res)


def test_device_variant_replaces_one_figure_of_a_preset(tmp_path):
    import tierlab

    f = papers.device_variant("microsd-samsung-c10", tmp_path / "d.toml", "test", **{"write.random_setup_ns": 1e6})
    base = tierlab.devices().set_index("name").loc["microsd-samsung-c10"]
    got = tierlab.devices([f]).set_index("name").loc["microsd-samsung-c10"]
    assert got["write.random_setup_ns"] == 1e6 and got["source"] == "test"
    for col in ("write.per_page_ns", "write.seq_setup_ns", "read.random_setup_ns", "erase_block_pages"):
        assert got[col] == base[col], col
    with pytest.raises(KeyError, match="unknown"):
        papers.device_variant("microsd-samsung-c10", tmp_path / "e.toml", "t", **{"write.nope": 1.0})
