"""tierlab: a trace-driven simulator for memory and buffer management on heterogeneous memory
and storage.

Quick start::

    import tierlab
    df = tierlab.run("telegram_exec.csv.gz", policies=["lru", "clock"], sizes=["10%"])
    print(df[["policy", "size_pages", "hit_ratio", "io_time_ns"]])
"""

from tierlab import convert as convert
from tierlab._core import ConfigError, TierlabError, TraceFormatError
from tierlab._core import __version__ as __version__
from tierlab.api import Trace, devices, info, policies, run
from tierlab.kernel import kernel_check

__all__ = [
    "ConfigError",
    "TierlabError",
    "Trace",
    "TraceFormatError",
    "devices",
    "info",
    "kernel_check",
    "policies",
    "run",
]
