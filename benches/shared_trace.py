"""The command line the real-trace benches share: ``--trace`` (a file below ``TIERLAB_SHARED``,
default ../shared next to the repository) and ``--sizes``."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("TIERLAB_SHARED", REPO.parent / "shared"))


def trace_parser(doc: str | None, trace: str, sizes: list[str]) -> argparse.ArgumentParser:
    """A parser described by ``doc`` with ``--trace`` (default ``trace`` below SHARED) and ``--sizes``."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trace", default=str(SHARED / trace))
    ap.add_argument("--sizes", nargs="+", default=sizes)
    return ap
