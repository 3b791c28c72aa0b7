"""Policies written in Python (tierlab.PythonPolicy) run through the same replay loop and
accounting as the built-in ones: a 20-line LRU in Python equals the built-in ``lru`` on a real
trace, column for column, and a failing callback raises tierlab.PolicyError naming the policy."""

from __future__ import annotations

import pytest

import tierlab
from tests.conftest import trace_path
from tierlab.pypolicy import PyLru


def test_python_lru_equals_builtin_lru_on_a_real_trace():
    trace = trace_path("lirs/sprite.trace.gz")
    sizes = [10, 100, 500, 2000]
    df = tierlab.run(trace, policies=[PyLru, "lru"], sizes=sizes)
    # Rows come in the order asked: the Python policy's sizes first, then lru's.
    assert df["policy"].tolist() == ["pylru"] * 4 + ["lru"] * 4
    assert df["size_pages"].tolist() == sizes * 2
    py, builtin = df.iloc[:4].reset_index(drop=True), df.iloc[4:].reset_index(drop=True)
    assert py["misses"].tolist() == builtin["misses"].tolist()
    assert py["misses"].iloc[0] > py["misses"].iloc[-1] > 0
    # Every column of the accounting agrees, not only the misses.
    for col in ["hits", "evictions", "dirty_evictions", "file_pages_read", "io_time_ns", "resident_at_end"]:
        if col in df.columns:
            assert py[col].tolist() == builtin[col].tolist(), col


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_python_policies_on_replay_threads_equal_one_thread(threads):
    """Python policies' batches run inside the interpreter lock on whichever replay thread gets
    them, beside built-in instances on other threads: the counts do not depend on the threads."""

    class PyLru2(PyLru):
        name = "pylru2"

    trace = trace_path("lirs/sprite.trace.gz")
    sizes = [10, 100, 500, 2000]
    policies = [PyLru, "lru", "arc", PyLru2]
    df = tierlab.run(trace, policies=policies, sizes=sizes, threads=threads)
    assert df["policy"].tolist() == ["pylru"] * 4 + ["lru"] * 4 + ["arc"] * 4 + ["pylru2"] * 4
    assert df["misses"].iloc[:4].tolist() == df["misses"].iloc[4:8].tolist() == df["misses"].iloc[12:].tolist()
    one = tierlab.run(trace, policies=policies, sizes=sizes, threads=1)
    assert df["misses"].tolist() == one["misses"].tolist()


def test_python_policy_exception_names_the_policy(tmp_path):
    class Broken(PyLru):
        name = "broken"

        def evict(self, page):
            if page == 7:
                raise ZeroDivisionError("no room for 7")
            return super().evict(page)

    f = tmp_path / "t.trace"
    f.write_text("\n".join(str(p) for p in [1, 2, 3, 1, 7, 2]))
    with pytest.raises(tierlab.PolicyError, match=r"policy 'broken': evict\(page 7\)") as e:
        tierlab.run(f, policies=["lru", Broken], sizes=[3])
    assert isinstance(e.value.__cause__, ZeroDivisionError)
    assert isinstance(e.value, tierlab.TierlabError)


def test_python_policy_must_evict_a_resident_page(tmp_path):
    class Wrong(PyLru):
        name = None  # the class name

        def evict(self, page):
            return 999

    f = tmp_path / "t.trace"
    f.write_text("\n".join(str(p) for p in [1, 2, 3]))
    with pytest.raises(tierlab.PolicyError, match=r"policy 'Wrong': evict\(page 3\).*999, which is not resident"):
        tierlab.run(f, policies=[Wrong], sizes=[2])


def test_python_policy_without_evict_fails_cleanly(tmp_path):
    class NoEvict(tierlab.PythonPolicy):
        pass

    f = tmp_path / "t.trace"
    f.write_text("\n".join(str(p) for p in [1, 2, 3]))
    with pytest.raises(tierlab.PolicyError, match="NoEvict") as e:
        tierlab.run(f, policies=[NoEvict], sizes=[2])
    assert isinstance(e.value.__cause__, NotImplementedError)
