"""Replacement policies written in Python.

Subclass :class:`PythonPolicy`, implement ``evict`` (and usually ``on_hit`` and ``on_miss``), and
pass the class to :func:`tierlab.run` next to built-in policy names::

    import tierlab

    class MyLru(tierlab.PythonPolicy):
        ...  # on_hit, on_miss and evict, as in tierlab.pypolicy.PyLru below

    df = tierlab.run("sprite.trace.gz", policies=["lru", MyLru], sizes=["1%", "10%"])

:class:`PyLru` below is a complete example: LRU in 20 lines, which gives the same misses as
the built-in ``lru`` (tests/test_python_policy.py checks it; benches/python_policy.py times it).

tierlab builds one object per size (``MyLru(capacity)``, the capacity in pages) and replays the
trace through it in the same replay loop as the built-in policies, with the same accounting, so
its rows have every column. tierlab keeps track of which pages are resident, their dirty bits
and kinds; the object only makes decisions:

- ``on_hit(page)``: ``page`` was referenced and is resident;
- ``evict(page)``: memory is full and ``page`` missed: return the resident page to evict (it must
  be resident, else the run stops with :class:`tierlab.PolicyError`); forget it yourself;
- ``on_miss(page)``: ``page`` missed and is now resident (after the eviction, if there was one).

With the class attribute ``request_info = True`` every callback gets the reference's position,
time and size as well: ``on_hit(page, seq, time, size)``, ``evict(page, seq, time, size)`` and
``on_miss(page, seq, time, size)``; ``seq`` is the reference's position in the trace (0-based,
page references, the same for ``evict`` and ``on_miss`` of one miss), ``time`` its request's
time as the trace gives it, ``size`` 1 in page mode (in object-size mode the object's bytes).
Policies that count time in requests or use sizes (:class:`tierlab.learned.Lrb`) need them;
without the attribute (the default) the callbacks take the page alone.

Object-size mode (``tierlab.run(..., object_sizes=True)``) runs the same class with the same
callbacks, as libCacheSim's caches run with sizes: ``capacity`` is in bytes, ``page`` is the object's
id and ``size`` (with ``request_info``) the request's size in bytes. tierlab keeps the resident
objects and the bytes they use. On a miss of an object that does not fit it calls ``evict``
repeatedly (same arguments), evicting each answer, until the object fits, then ``on_miss``; an
object larger than the whole cache is not admitted and counted (``too_large``) without any
callback; a hit leaves the object at the size it was admitted with, as the built-in object-size
policies do, even when the request gives another size (``on_hit`` gets the request's size). So an
eviction-order policy such as :class:`PyLru` works unchanged in both modes and gives the built-in
``lru``'s object and byte misses. A class that only works in page mode sets ``object_sizes = False``
and ``run`` refuses it in object-size mode.

Pages are the trace's page numbers (ints). An exception raised in a callback stops the run and
is raised as :class:`tierlab.PolicyError`, whose message names the policy, the callback and the
page, with the original exception as ``__cause__``. The policy's name in the results is the
class attribute ``name`` (default: the class name); its ``label`` and ``params`` columns come from
the classmethods ``policy_label()`` and ``policy_params()`` (default: the name and ``{}``).

Speed: every callback takes the GIL and calls Python, so a policy in Python replays about 30
times slower than the built-in ``lru`` (a few million references a second, in either mode;
docs/policies.md has the measurements, benches/python_policy.py makes them).
"""

from __future__ import annotations

import collections


class PythonPolicy:
    """Base class of replacement policies written in Python (see the module doc)."""

    #: Name of the policy in results and errors (default: the class name).
    name: str | None = None
    #: True: the callbacks take ``(page, seq, time, size)`` instead of ``(page)`` (module doc).
    request_info: bool = False
    #: Whether the class also runs in object-size mode (module doc); False: page mode only.
    object_sizes: bool = True

    def __init__(self, capacity: int):
        #: Memory size in pages (in bytes in object-size mode).
        self.capacity = capacity

    def on_hit(self, page: int) -> None:
        """``page`` was referenced and is resident."""

    def on_miss(self, page: int) -> None:
        """``page`` missed and is now resident."""

    def evict(self, page: int) -> int:
        """Memory is full and ``page`` missed: return the resident page to evict."""
        raise NotImplementedError(f"{type(self).__name__} must implement evict(page)")

    @classmethod
    def policy_name(cls) -> str:
        return cls.name or cls.__name__

    @classmethod
    def policy_params(cls) -> dict:
        """Parameters for the ``params`` column of the results (default: none)."""
        return {}

    @classmethod
    def policy_label(cls) -> str:
        """The ``label`` column of the results (default: the name)."""
        return cls.policy_name()


def is_python_policy(policy: object) -> bool:
    """Whether ``policy`` (an entry of ``run``'s ``policies``) is a :class:`PythonPolicy` class."""
    return isinstance(policy, type) and issubclass(policy, PythonPolicy)


class PyLru(PythonPolicy):
    """LRU in Python: an OrderedDict from least to most recently used (the module doc's example)."""

    name = "pylru"

    def __init__(self, capacity):
        super().__init__(capacity)
        self.order = collections.OrderedDict()

    def on_hit(self, page):
        self.order.move_to_end(page)

    def on_miss(self, page):
        self.order[page] = None

    def evict(self, page):
        victim, _ = self.order.popitem(last=False)
        return victim
