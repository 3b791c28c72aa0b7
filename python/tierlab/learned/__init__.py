"""Learned replacement policies, written in Python on :class:`tierlab.PythonPolicy`, one per module.

:class:`Lrb` (:mod:`tierlab.learned.lrb`) is LRB, Learning Relaxed Belady (Song, Berger, Li & Lloyd,
NSDI 2020); :class:`GlCache` (:mod:`tierlab.learned.glcache`, ``"glcache"``) is GL-Cache, group-level
learning (Yang, Mao, Yue & Rashmi, FAST 2023); :class:`ThreeLCache` (:mod:`tierlab.learned.threelcache`,
``"3lcache"``) is 3L-Cache (Zhou et al., FAST 2025). The learned policies need LightGBM, an optional extra::

    pip install 'tierlab[learned]'

and run by name or as a class::

    tierlab.run(trace, policies=["lru", "lrb(memory_window=20000, training_samples=8192)"], sizes=["5%"])
    tierlab.run(trace, policies=[tierlab.learned.Lrb.with_params(memory_window=20000)], sizes=["5%"])

tierlab imports without LightGBM; only building a learned policy raises ``ImportError`` naming the
extra. All three run in page and object-size mode: ``lrb``'s and ``3lcache``'s size feature is then
the object's bytes (3L-Cache's ``reserved_space`` a share of the resident bytes), and ``glcache``
keeps segments of objects in a cache of bytes.
"""

from __future__ import annotations

from tierlab._core import ConfigError
from tierlab.learned.base import LearnedPolicy
from tierlab.learned.glcache import GlCache
from tierlab.learned.lrb import Lrb
from tierlab.learned.threelcache import ThreeLCache
from tierlab.pypolicy import PythonPolicy

__all__ = ["POLICIES", "POLICY_INFO", "GlCache", "LearnedPolicy", "Lrb", "ThreeLCache", "resolve"]

#: Learned policies by name, for ``tierlab.run(policies=["lrb(...)"])`` and ``tierlab policies``.
POLICIES: dict[str, type[PythonPolicy]] = {
    "lrb": Lrb,
    "glcache": GlCache,
    "3lcache": ThreeLCache,
    "threelcache": ThreeLCache,
}

#: Rows of ``tierlab.policies()`` for them.
POLICY_INFO = [
    {
        "name": "lrb",
        "aliases": [],
        "family": "learned (Python; needs the learned extra: LightGBM)",
        "summary": "LRB, Learning Relaxed Belady (Song et al., NSDI 2020): LightGBM predicts the time "
        "to next request of 64 sampled objects, the farthest is evicted; LRU until the first model",
        "defaults": "\n".join(f"{k} = {v}" for k, v in Lrb.defaults.items()),
        "object_sizes": Lrb.object_sizes,
    },
    {
        "name": "glcache",
        "aliases": [],
        "family": "learned (Python; needs the learned extra: LightGBM)",
        "summary": "GL-Cache, group-level learning (Yang et al., FAST 2023): objects written in segments "
        "of 100; LightGBM predicts each segment's utility, the lowest is merged with the next keeping "
        "the half of highest 1/(size x age) (most recently used, in page mode); merge-FIFO until the "
        "first model",
        "defaults": "\n".join(f"{k} = {v}" for k, v in GlCache.defaults.items()),
        "object_sizes": GlCache.object_sizes,
    },
    {
        "name": "3lcache",
        "aliases": ["threelcache"],
        "family": "learned (Python; needs the learned extra: LightGBM)",
        "summary": "3L-Cache (Zhou et al., FAST 2025): LightGBM predicts the time to next request of "
        "candidates sampled from both ends of the LRU queue, one prediction batch serves several "
        "evictions; LRU until the first model",
        "defaults": "\n".join(f"{k} = {v}" for k, v in ThreeLCache.defaults.items()),
        "object_sizes": ThreeLCache.object_sizes,
    },
]


def _value(text: str):
    t = text.strip()
    if t.lower() in ("true", "false"):
        return t.lower() == "true"
    for conv in (int, float):
        try:
            return conv(t)
        except ValueError:
            pass
    return t.strip("'\"")


def resolve(policy) -> type[PythonPolicy] | None:
    """The Python policy class a ``run`` policy entry names (``"lrb"``, ``"lrb(k=v, ...)"``,
    ``{"name": "lrb", ...}``), with its parameters; None for anything else."""
    if isinstance(policy, dict):
        name = policy.get("name")
        if name not in POLICIES:
            return None
        params = {k: v for k, v in policy.items() if k != "name"}
        if "params" in params and len(params) == 1 and isinstance(params["params"], dict):
            params = params["params"]
        return POLICIES[name].with_params(**params)
    if not isinstance(policy, str):
        return None
    text = policy.strip()
    name, _, rest = text.partition("(")
    name = name.strip()
    if name not in POLICIES:
        return None
    params = {}
    if rest:
        if not rest.endswith(")"):
            raise ConfigError(f"policy {policy!r}: expected NAME(key=value, ...)")
        for item in filter(None, (s.strip() for s in rest[:-1].split(","))):
            k, eq, v = item.partition("=")
            if not eq:
                raise ConfigError(f"policy {policy!r}: expected key=value, got {item!r}")
            params[k.strip()] = _value(v)
    return POLICIES[name].with_params(**params)
