"""tierlab: a trace-driven simulator for memory and buffer management on heterogeneous memory
and storage.

Quick start::

    import tierlab
    df = tierlab.run("telegram_exec.csv.gz", policies=["lru", "clock"], sizes=["10%"])
    print(df[["policy", "size_pages", "hit_ratio", "io_time_ns"]])
"""

from tierlab import convert as convert
from tierlab._core import __version__ as __version__
from tierlab.api import Trace, admissions, devices, info, policies, run
from tierlab.errors import ConfigError, PolicyError, ResourceError, TierlabError, TierlabOSError, TraceFormatError
from tierlab.kernel import kernel_check
from tierlab.pypolicy import PythonPolicy


def reproduce(papers=None, *, quick: bool = False, outdir="tierlab-reproduce"):
    """Re-runs the papers' experiments (all, or the keys in ``papers``), writes
    ``outdir/report.html`` and returns the claims as a DataFrame: one row per claim with its
    grade ("within 25%", "direction only", "wrong direction", "qualitative: holds",
    "qualitative: fails", "calibrated"), the paper's and tierlab's figures, their ratio and the
    texts, and for a qualitative claim its word, the bound it was graded by and its figure nearest
    it; ``df.attrs["summary"]`` counts the grades. Same as ``tierlab reproduce``."""
    from tierlab import papers as _papers
    from tierlab.papers.harness import reproduce as _reproduce
    from tierlab.values import as_list, show

    if papers is not None:
        papers = as_list(papers, "papers")
        for key in papers:
            if not isinstance(key, str) or key not in _papers.PAPERS:
                raise ConfigError(f"unknown paper {show(key)}; known papers: {', '.join(_papers.PAPERS)}")
    return _reproduce(papers, quick=quick, outdir=outdir)


__all__ = [
    "ConfigError",
    "PolicyError",
    "PythonPolicy",
    "ResourceError",
    "TierlabError",
    "TierlabOSError",
    "Trace",
    "TraceFormatError",
    "devices",
    "info",
    "kernel_check",
    "policies",
    "admissions",
    "reproduce",
    "run",
]
