"""Bad input never crashes and never loses the location: each error names the file and the line or
byte offset, and what was expected."""

from __future__ import annotations

import gzip

import pytest

import tierlab
from tierlab.cli import main


def _write(path, data: bytes):
    path.write_bytes(data)
    return path


def test_truncated_gzip_names_file_and_line(tmp_path):
    raw = gzip.compress(b"".join(f"{i}\n".encode() for i in range(200_000)))
    f = _write(tmp_path / "cut.trace.gz", raw[: len(raw) // 2])
    with pytest.raises(tierlab.TraceFormatError) as e:
        tierlab.run(f, policies=["lru"], sizes=[10])
    msg = str(e.value)
    assert "cut.trace.gz:line " in msg and "truncated" in msg.lower()


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("bad.trace", b"1\n2\nx7\n3\n", r"bad\.trace:line 3: expected a block number, found 'x7'"),
        ("t.lis", b"1 1 0 1\n5 0 0 2\n", r"t\.lis:line 2: expected the block count"),
        ("t.lis", b"1 -4 0 1\n", r"t\.lis:line 1: expected the block count .*'-4'"),
    ],
    ids=["bad_number_names_line_and_field", "arc_zero_count_is_rejected", "arc_negative_count_is_rejected"],
)
def test_bad_line_names_file_line_and_field(tmp_path, name, data, message):
    f = _write(tmp_path / name, data)
    with pytest.raises(tierlab.TraceFormatError, match=message):
        tierlab.run(f, policies=["lru"], sizes=[10])


def test_wrong_format_name_lists_formats(tmp_path):
    f = _write(tmp_path / "a.trace", b"1\n")
    with pytest.raises(tierlab.ConfigError, match=r"unknown trace format 'nosuch'; expected one of: .*lirs"):
        tierlab.run(f, format="nosuch", policies=["lru"], sizes=[10])


def test_unknown_policy_and_parameter(tmp_path):
    f = _write(tmp_path / "a.trace", b"1\n")
    with pytest.raises(tierlab.ConfigError, match="unknown policy 'nosuch'; known policies: .*lru"):
        tierlab.run(f, policies=["nosuch"], sizes=[10])
    with pytest.raises(tierlab.ConfigError, match=r"parameters of policy 'clock': unknown field `bitz`"):
        tierlab.run(f, policies=["clock(bitz=2)"], sizes=[10])
    with pytest.raises(tierlab.ConfigError, match="bits must be in 1..=7"):
        tierlab.run(f, policies=[{"name": "clock", "bits": 9}], sizes=[10])


def test_bad_sizes(tmp_path):
    f = _write(tmp_path / "a.trace", b"1\n2\n")
    for bad in ["-3%", "12parsecs", "abc", 1.5]:
        with pytest.raises(tierlab.ConfigError, match="size"):
            tierlab.run(f, policies=["lru"], sizes=[bad])


def test_missing_file_is_an_os_error(tmp_path):
    with pytest.raises(OSError, match="nope.trace"):
        tierlab.run(tmp_path / "nope.trace", policies=["lru"], sizes=[10])


def test_cli_prints_one_error_line_and_exits_1_for_bad_data(tmp_path, capsys):
    f = _write(tmp_path / "bad.trace", b"1\n\xff\xfe\n")
    assert main(["run", str(f), "-p", "lru", "-s", "4", "-q"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad.trace:line 2" in err[0]
