"""The one parser for the values a person types: sizes, counts and quoted values in messages.

The CLI (argparse ``type=``), experiment files (``sizes``, ``limit``) and the Python API
(``run(sizes=..., limit=..., threads=...)``) all go through these functions, so a value gets the
same answer, or the same one-line :class:`~tierlab.errors.ConfigError`, wherever it is typed.

Sizes: a whole number of pages (``1000``, ``"1000"``, ``"1000p"``), bytes with a unit
(``"4MiB"``, ``"512KB"``; at least one page), or a share of the trace's footprint (``"10%"``, or
a float in (0, 1]). Zero, negatives, NaN, infinities, booleans and non-whole page counts are
refused with a line naming the value and the accepted forms. Counts (threads, limit, points,
workers) are whole numbers of at least their minimum. Cost: nothing beyond the footprint pass a
share needs (the caller's ``footprint`` callable).
"""

from __future__ import annotations

import math
import numbers
import re
import unicodedata
from collections.abc import Callable

from tierlab.errors import ConfigError

#: The largest size a run accepts: 2^60 pages (bytes in object-size mode), as the core does.
MAX_SIZE = 1 << 60

#: Byte units of a size (``k``/``m``/``g`` are binary, as ``ls -h`` prints them).
UNITS = {
    "b": 1,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "tb": 1000**4,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "tib": 1024**4,
    "k": 1024,
    "m": 1024**2,
    "g": 1024**3,
    "t": 1024**4,
}

_NUMBER = re.compile(r"([0-9][0-9_,]*(?:\.[0-9]*)?|\.[0-9]+)(?:e([+-]?[0-9]+))?([a-z]*)")


def show(value, limit: int = 60) -> str:
    """``value`` as a message quotes it: ``repr`` for strings (control bytes escaped, so a
    terminal escape sequence or a bell in a value reaches the terminal as text), cut to ``limit``
    characters with a count of the rest."""
    text = repr(value) if isinstance(value, (str, bytes)) else str(value)
    text = "".join(repr(c)[1:-1] if unicodedata.category(c) == "Cc" else c for c in text)
    if len(text) > limit:
        return f"{text[:limit]}... ({len(text) - limit} more characters)"
    return text


def _accepted(unit: str) -> str:
    if unit == "pages":
        return "use a whole number of pages (1000), bytes with a unit (2MiB) or a share of the footprint (10%)"
    return "use a whole number of bytes (1000000), bytes with a unit (64MiB) or a share of the footprint (10%)"


def parse_size(
    size,
    *,
    page_size: int | None,
    footprint: Callable[[], int],
    unit: str = "pages",
    what: str = "size",
) -> int:
    """Turns ``size`` into ``unit`` (pages when ``page_size`` is given, else bytes).

    A whole number is already in ``unit``; a byte unit (``"4MiB"``) is converted and rounded down
    to whole pages (at least one); a share (``"10%"`` or a float in (0, 1]) is of ``footprint()``
    and rounds to the nearest unit (at least 1). Anything else raises :class:`ConfigError`.
    """
    if isinstance(size, bool) or size is None:
        raise ConfigError(f"{what} {show(size)} is not a size: {_accepted(unit)}")
    if isinstance(size, numbers.Integral):
        return _whole(int(size), size, unit, what)
    if isinstance(size, numbers.Real):
        x = float(size)
        if not math.isfinite(x) or x <= 0:
            raise ConfigError(f"{what} {show(size)} is not a size: {_accepted(unit)}")
        if x <= 1:
            return max(1, round(x * footprint()))
        if x.is_integer():
            return _whole(int(x), size, unit, what)
        raise ConfigError(
            f"{what} {show(size)} is not a whole number of {unit} nor a share in (0, 1]: {_accepted(unit)}"
        )
    if not isinstance(size, str):
        raise ConfigError(f"{what} {show(size)} is not a size (a {type(size).__name__}): {_accepted(unit)}")
    text = size.strip().lower().replace(" ", "")
    if text.endswith("%"):
        try:
            pct = float(text[:-1])
        except ValueError:
            raise ConfigError(f"{what} {show(size)} is not a percentage: {_accepted(unit)}") from None
        if not (math.isfinite(pct) and 0 < pct <= 100):
            raise ConfigError(f"{what} {show(size)}: a share of the footprint must be in (0%, 100%]")
        return max(1, round(pct / 100 * footprint()))
    m = _NUMBER.fullmatch(text)
    if not m:
        raise ConfigError(f"{what} {show(size)} is not a size: {_accepted(unit)}")
    digits, exp, suffix = m.group(1).replace("_", "").replace(",", ""), m.group(2), m.group(3)
    plain = ("", "p", "page", "pages") if page_size else ("",)
    if suffix not in plain and suffix not in UNITS:
        also = " or p (pages)" if page_size else ""
        raise ConfigError(f"{what} {show(size)}: unknown unit {show(suffix)}; use one of {', '.join(UNITS)}{also}")
    try:
        num = float(digits) * (10 ** int(exp) if exp else 1)
    except (ValueError, OverflowError):
        raise ConfigError(f"{what} {show(size)} is not a size: {_accepted(unit)}") from None
    if suffix in plain:
        if not num.is_integer() or num <= 0:
            if 0 < num < 1 and page_size:
                hint = f"use {num * 100:g}% for a share of the footprint, or bytes with a unit such as 2MiB"
                raise ConfigError(f"{what} {show(size)} is not a whole number of pages: {hint}")
            if not num.is_integer():
                raise ConfigError(f"{what} {show(size)} is not a whole number of {unit}: {_accepted(unit)}")
            raise ConfigError(f"{what} {show(size)} must be at least 1 {unit[:-1]}: {_accepted(unit)}")
        return _whole(int(digits) if not exp and "." not in digits else int(num), size, unit, what)
    nbytes = num * UNITS[suffix]
    if nbytes > MAX_SIZE * (page_size or 1):
        raise ConfigError(f"{what} {show(size)} is larger than the largest size tierlab models, 2^60 {unit}")
    n = int(nbytes // (page_size or 1))
    if n < 1:
        what_unit = f"one page ({page_size} B)" if page_size else "one byte"
        raise ConfigError(f"{what} {show(size)} is less than {what_unit}: {_accepted(unit)}")
    return n


def _whole(n: int, given, unit: str, what: str) -> int:
    if n <= 0:
        raise ConfigError(f"{what} {show(given)} must be at least 1 {unit[:-1]}: {_accepted(unit)}")
    if n > MAX_SIZE:
        raise ConfigError(f"{what} {show(given)} is larger than the largest size tierlab models, 2^60 {unit}")
    return n


def parse_count(value, what: str, *, minimum: int = 1, maximum: int | None = None) -> int:
    """A whole number of at least ``minimum`` (and at most ``maximum``): an int, a whole float,
    or text such as ``"1000"``, ``"1_000"``, ``"1e6"``. Raises :class:`ConfigError` naming
    ``what`` and the value otherwise."""
    bound = f"a whole number >= {minimum}" + (f" and <= {maximum:,}" if maximum is not None else "")
    n = None
    if isinstance(value, bool) or value is None:
        n = None
    elif isinstance(value, numbers.Integral):
        n = int(value)
    elif isinstance(value, numbers.Real):
        x = float(value)
        n = int(x) if math.isfinite(x) and x.is_integer() else None
    elif isinstance(value, str):
        text = value.strip().replace("_", "").replace(",", "")
        if re.fullmatch(r"[+]?[0-9]+", text):
            n = int(text)
        elif re.fullmatch(r"[+]?[0-9]+(\.[0-9]*)?e[+]?[0-9]{1,3}", text.lower()):
            x = float(text)
            n = int(x) if math.isfinite(x) and x.is_integer() else None
    if n is None or n < minimum or (maximum is not None and n > maximum):
        raise ConfigError(f"{what} {show(value)} is not {bound}")
    return n


def optional_count(value, what: str, *, minimum: int = 1, maximum: int | None = None) -> int | None:
    """:func:`parse_count`, with ``None`` passed through (an option left at its default)."""
    return None if value is None else parse_count(value, what, minimum=minimum, maximum=maximum)


def as_list(value, what: str) -> list:
    """``value`` as a list: a single string (or dict, or class) is one item, not its characters;
    any other iterable becomes a list; an empty one is refused."""
    if isinstance(value, (str, bytes, dict, type)) or not hasattr(value, "__iter__"):
        items = [value]
    else:
        items = list(value)
    if not items:
        raise ConfigError(f"{what}: empty; give at least one")
    return items


def count_arg(what: str, *, minimum: int = 1, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse ``type=`` for a count (its error is one line naming the option)."""

    import argparse

    def parse(text: str) -> int:
        try:
            return parse_count(text, what, minimum=minimum, maximum=maximum)
        except ConfigError as e:
            raise argparse.ArgumentTypeError(str(e).removeprefix(f"{what} ")) from None

    parse.__name__ = what
    return parse


def positive_arg(what: str, *, maximum: float | None = None) -> Callable[[str], float]:
    """An argparse ``type=`` for a positive finite number (a scale, a rate, seconds), at most
    ``maximum`` when given; its error is one line naming the option."""

    import argparse

    def parse(text: str) -> float:
        try:
            x = float(text)
        except ValueError:
            x = math.nan
        if not (math.isfinite(x) and x > 0 and (maximum is None or x <= maximum)):
            bound = "a number > 0" + (f" and <= {maximum:g}" if maximum is not None else "")
            raise argparse.ArgumentTypeError(f"{show(text)} is not {bound}")
        return x

    parse.__name__ = what
    return parse
