"""What every learned policy shares: the optional LightGBM import, its training parameters, and
parameters given by name."""

from __future__ import annotations

from tierlab._core import ConfigError
from tierlab.pypolicy import PythonPolicy

EXTRA_HINT = "pip install 'tierlab[learned]'"


def lightgbm():
    """The ``lightgbm`` module, or ``ImportError`` naming the extra that installs it."""
    try:
        import lightgbm
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(f"the learned policies need LightGBM, an optional extra: {EXTRA_HINT}") from e
    return lightgbm


#: LightGBM's tree settings in LRB's code, which 3L-Cache's code keeps: their shared defaults.
GBDT_DEFAULTS = {
    "num_leaves": 32,
    "learning_rate": 0.1,
    "feature_fraction": 0.8,
    "bagging_fraction": 0.8,
    "bagging_freq": 5,
}


def gbdt_params(p: dict) -> dict:
    """The ``GBDT_DEFAULTS`` settings as ``p`` gives them, typed for LightGBM."""
    return {
        "num_leaves": int(p["num_leaves"]),
        "learning_rate": float(p["learning_rate"]),
        "feature_fraction": float(p["feature_fraction"]),
        "bagging_fraction": float(p["bagging_fraction"]),
        "bagging_freq": int(p["bagging_freq"]),
    }


def lgb_params(seed: int, **model) -> dict:
    """LightGBM parameters for an L2 regression with ``model``'s settings, on one thread and
    deterministic for ``seed``."""
    return {
        "objective": "regression",
        **model,
        "num_threads": 1,
        "deterministic": True,
        "force_row_wise": True,
        "seed": seed,
        "verbosity": -1,
    }


class LearnedPolicy(PythonPolicy):
    """A Python policy with named parameters: ``defaults`` (class attribute) lists them with their
    defaults; ``with_params`` makes a subclass carrying given values, which ``tierlab.run`` builds
    once per size; ``policy_params`` and ``policy_label`` report them in results."""

    #: Parameter names and defaults; each policy sets its own.
    defaults: dict = {}
    #: Parameters given by ``with_params`` (class-level, so that tierlab can build one per size).
    params: dict = {}

    def __init__(self, capacity: int):
        super().__init__(capacity)
        self._lgb = lightgbm()

    @classmethod
    def with_params(cls, **params) -> type[LearnedPolicy]:
        """A subclass of ``cls`` with these parameters (checked now), for ``tierlab.run``."""
        cls._check_known(params)
        return type(cls.__name__, (cls,), {"params": {**cls.params, **params}})

    @classmethod
    def _check_known(cls, params: dict) -> None:
        unknown = sorted(set(params) - set(cls.defaults))
        if unknown:
            raise ConfigError(f"{cls.name}: unknown parameter(s) {unknown}; known: {sorted(cls.defaults)}")

    def resolved_params(self, given: dict) -> dict:
        """The defaults, overridden by ``with_params`` and then by ``given`` (checked)."""
        p = {**self.defaults, **self.params, **given}
        self._check_known(p)
        return p

    @classmethod
    def policy_params(cls) -> dict:
        return {**cls.defaults, **cls.params}

    @classmethod
    def policy_label(cls) -> str:
        given = {k: v for k, v in sorted(cls.params.items()) if cls.defaults.get(k) != v}
        return cls.policy_name() + (f"({','.join(f'{k}={v}' for k, v in given.items())})" if given else "")
