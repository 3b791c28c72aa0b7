"""The main job in its quick form: every paper's experiment runs, the report is written, and the
claims table names every paper (issue 9: `tierlab reproduce --quick` runs in CI)."""

from __future__ import annotations

import re

from tierlab import papers
from tierlab.cli import main


def test_reproduce_quick_runs_every_paper(tmp_path, capsys):
    out = tmp_path / "repro"
    assert main(["reproduce", "--quick", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert set(papers.PAPERS) == {"bs-clock", "hybrid-dram-pcm", "emram-swap", "nomad-ssp", "android-lmk"}
    for key in papers.PAPERS:
        assert key in text
        assert (out / key).is_dir() and any((out / key).glob("*.png")), key
    html = (out / "report.html").read_text()
    assert html.count("data:image/png;base64,") >= 10
    assert "experiment failed" not in html
    # Every claim graded; the summary line counts the kinds of evidence apart (numeric, qualitative,
    # calibrated, then the claims beyond the paper) and the counts add up.
    m = re.search(
        r"(\d+) claims: numeric (\d+) within 25%, (\d+) direction only, (\d+) wrong direction; "
        r"qualitative (\d+) holds, (\d+) fails; (\d+) calibrated \(not evidence\)"
        r"(?:; (\d+) beyond the paper \(([^)]*)\))?",
        text,
    )
    assert m, text[-2000:]
    total, *kinds = (int(g) for g in m.groups()[:7])
    beyond = int(m.group(8) or 0)
    if beyond:
        assert sum(int(n) for n in re.findall(r"(\d+) ", m.group(9))) == beyond
    assert sum(kinds) + beyond == total >= 30
    assert kinds[-1] >= 4  # the Fig. 2 presets (bs-clock) and the launch model (android-lmk)
    assert m.group(0) in html
    for col in ("paper figure", "tierlab figure", "ratio", "grade"):
        assert col in text and col in html
    # Issue 16 scope 3: claims not within 25% have sensitivity sweeps, listed with a verdict.
    assert "sensitivity of the claims not within 25%" in text and "sensitivity of the claims not within 25%" in html
    for verdict in re.findall(r"^    .*?: (.*)$", text.split("sensitivity of the claims not within 25%")[1], re.M):
        assert verdict.startswith(("within 25%", "ratio", "not within 25%", "the paper's")), verdict


def test_every_claim_off_by_more_than_25_percent_has_a_sensitivity(tmp_path):
    from tierlab.papers import harness

    done = harness.run_papers(["emram-swap", "nomad-ssp"], True, tmp_path)
    claims = harness.claims_frame(done)
    off = claims[claims["grade"].isin([papers.DIRECTION, papers.WRONG])]
    assert len(off) >= 3
    assert (off["sensitivity"] != "").all(), off[off["sensitivity"] == ""]["claim"].tolist()
    for _, res, _ in done:
        for i in range(len(res.sensitivities)):
            assert (tmp_path / res.key / f"sensitivity_{i + 1}.png").exists()
