"""How far a paper's reproduction has got, for ``tierlab reproduce``'s progress lines.

A paper calls :func:`expect` with the number of steps it will take (e.g. one per replay) and
:func:`step` after each; the harness installs a reporter (:func:`install`) that receives the
paper's key and the share done, in the process that runs the paper. Without a reporter both do
nothing, so a paper run on its own (``module.reproduce(...)``) pays nothing.
"""

from __future__ import annotations

from collections.abc import Callable

_reporter: Callable[[str, float], None] | None = None
_key = ""
_total = 0.0
_done = 0.0


def install(reporter: Callable[[str, float], None] | None, key: str = "") -> None:
    """Sends the shares of paper ``key`` to ``reporter`` from now on (None: to nobody)."""
    global _reporter, _key, _total, _done
    _reporter, _key, _total, _done = reporter, key, 0.0, 0.0


def expect(steps: float) -> None:
    """The paper will take ``steps`` more steps (added to those announced before)."""
    global _total
    _total += steps


def step(n: float = 1.0) -> None:
    """``n`` steps are done."""
    global _done
    _done += n
    if _reporter is not None and _total > 0:
        _reporter(_key, min(_done / _total, 1.0))
