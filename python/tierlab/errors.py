"""tierlab's exception classes. The native core raises these same classes (it imports them
from here), so ``except tierlab.ConfigError`` catches a bad value whether Python or Rust found
it. Each is also the standard exception it refines: a bad value or malformed trace is a
``ValueError``, a file that cannot be read an ``OSError``. Messages are one line naming the value
(escaped and clipped, see :func:`tierlab.values.show`) and what is accepted."""

from __future__ import annotations


class TierlabError(Exception):
    """Base class of tierlab's errors."""


class ConfigError(TierlabError, ValueError):
    """Bad configuration: names the key or value and the accepted forms."""


class TraceFormatError(TierlabError, ValueError):
    """Malformed trace input (names file and line/offset)."""


class TierlabOSError(TierlabError, OSError):
    """A file tierlab could not open, read or write (names the file)."""


class PolicyError(TierlabError):
    """A policy written in Python failed: names the policy and the callback; the Python exception
    it raised is the cause (``__cause__``)."""


class ResourceError(TierlabError, MemoryError):
    """A run would need more memory than the machine has: says how much, and how to shorten it."""
