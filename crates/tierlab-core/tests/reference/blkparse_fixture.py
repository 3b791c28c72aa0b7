"""Writes a tiny binary blktrace file (struct blk_io_trace records, little-endian, with
process-name notify records) for the blkparse fixture of tests/readers.rs
(blkparse_real_tool_output). Regenerate the fixture text with

    python3 crates/tierlab-core/tests/reference/blkparse_fixture.py /tmp/sda.blktrace.0
    blkparse -i /tmp/sda        # blktrace 1.2.0

The events: two queued 4 KiB sync writes that the scheduler back-merges and dispatches as one
8 KiB write, an 8 KiB read queued by "my app" and dispatched from a context without a name, a
discard, and the completions.
"""

import struct
import sys

MAGIC = 0x65617400 | 0x07  # BLK_IO_TRACE_MAGIC | version 7
# Trace categories (BLK_TC_*) and actions (__BLK_TA_*) of include/uapi/linux/blktrace_api.h.
TC = {
    "READ": 1 << 0,
    "WRITE": 1 << 1,
    "SYNC": 1 << 3,
    "QUEUE": 1 << 4,
    "ISSUE": 1 << 6,
    "COMPLETE": 1 << 7,
    "FS": 1 << 8,
    "NOTIFY": 1 << 10,
    "DISCARD": 1 << 13,
}
TA = {"QUEUE": 1, "BACKMERGE": 2, "GETRQ": 4, "ISSUE": 7, "COMPLETE": 8}
DEV = (8 << 20) | 0  # 8,0 in the kernel's dev_t encoding
RECORD = "<IIQQIIIIIHH"  # magic, sequence, time ns, sector, bytes, action, pid, device, cpu, error, pdu_len


def action(code: int, *cats: str) -> int:
    bits = 0
    for c in cats:
        bits |= TC[c]
    return (bits << 16) | code


def main(out_path: str) -> None:
    out = bytearray()
    seq = 0

    def event(t, sector, nbytes, act, pid):
        nonlocal seq
        seq += 1
        out.extend(struct.pack(RECORD, MAGIC, seq, t, sector, nbytes, act, pid, DEV, 0, 0, 0))

    def process(pid, name):
        out.extend(struct.pack(RECORD, MAGIC, 0, 0, 0, 0, TC["NOTIFY"] << 16, pid, DEV, 0, 0, len(name) + 1))
        out.extend(name + b"\0")

    process(697, b"kjournald")
    process(1234, b"my app")
    w = ("WRITE", "SYNC", "FS")
    event(1000, 3417048, 4096, action(TA["QUEUE"], *w, "QUEUE"), 697)
    event(2000, 3417048, 4096, action(TA["GETRQ"], *w, "QUEUE"), 697)
    event(3000, 3417056, 4096, action(TA["QUEUE"], *w, "QUEUE"), 697)
    event(4000, 3417056, 4096, action(TA["BACKMERGE"], *w, "QUEUE"), 697)
    event(5000, 100, 8192, action(TA["QUEUE"], "READ", "QUEUE", "FS"), 1234)
    event(6000, 3417048, 8192, action(TA["ISSUE"], *w, "ISSUE"), 697)
    event(7000, 500, 4096, action(TA["QUEUE"], "DISCARD", "WRITE", "QUEUE", "FS"), 1234)
    event(2540588, 3417048, 8192, action(TA["COMPLETE"], *w, "COMPLETE"), 0)
    event(3000000, 100, 8192, action(TA["ISSUE"], "READ", "ISSUE", "FS"), 55)
    event(4000000, 100, 8192, action(TA["COMPLETE"], "READ", "COMPLETE", "FS"), 0)
    with open(out_path, "wb") as f:
        f.write(out)


if __name__ == "__main__":
    main(sys.argv[1])
