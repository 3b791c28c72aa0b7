"""The main job in its quick form: every paper's experiment runs, the report is written, and the
claims table names every paper (issue 9: `tierlab reproduce --quick` runs in CI)."""

from __future__ import annotations

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
