"""Writes a tiny binary blktrace file (struct blk_io_trace records, little-endian, with
process-name notify records) for the blkparse fixture of tests/readers.rs
(blkparse_real_tool_output). Regenerate the fixture text with

    python3 crates/tierlab-core/tests/reference/blkparse_fixture.py /tmp/sda.blktrace.0
    blkparse -i /tmp/sda        # blktrace 1.2.0

The events: two queued 4 KiB sync writes that the scheduler back-merges and dispatches as one
8 KiB write, an 8 KiB read queued by "my app" and dispatched from a kworker context, a discard,
and the completions.
"""

import struct, sys
MAGIC = 0x65617400 | 0x07
TC = dict(READ=1<<0, WRITE=1<<1, FLUSH=1<<2, SYNC=1<<3, QUEUE=1<<4, ISSUE=1<<6, COMPLETE=1<<7, FS=1<<8, NOTIFY=1<<10, DISCARD=1<<13)
TA = dict(QUEUE=1, BACKMERGE=2, GETRQ=4, INSERT=5, ISSUE=7, COMPLETE=8)
def act(code, *cats):
    c = 0
    for x in cats: c |= TC[x]
    return (c << 16) | code
DEV = (8 << 20) | 0
out = bytearray()
seq = 0
def ev(t, sector, nbytes, action, pid, cpu=0, pdu=b''):
    global seq
    seq += 1
    out.extend(struct.pack('<IIQQIIIIIHH', MAGIC, seq, t, sector, nbytes, action, pid, DEV, cpu, 0, len(pdu)))
    out.extend(pdu)
def proc(pid, name, t=0):
    # notify: process name
    out.extend(struct.pack('<IIQQIIIIIHH', MAGIC, 0, t, 0, 0, (TC['NOTIFY'] << 16) | 0, pid, DEV, 0, 0, len(name)+1))
    out.extend(name + b'\0')
proc(697, b'kjournald')
proc(1234, b'my app')
ev(1000, 3417048, 4096, act(TA['QUEUE'], 'WRITE', 'SYNC', 'QUEUE', 'FS'), 697)
ev(2000, 3417048, 4096, act(TA['GETRQ'], 'WRITE', 'SYNC', 'QUEUE', 'FS'), 697)
ev(3000, 3417056, 4096, act(TA['QUEUE'], 'WRITE', 'SYNC', 'QUEUE', 'FS'), 697)
ev(4000, 3417056, 4096, act(TA['BACKMERGE'], 'WRITE', 'SYNC', 'QUEUE', 'FS'), 697)
ev(5000, 100, 8192, act(TA['QUEUE'], 'READ', 'QUEUE', 'FS'), 1234)
ev(6000, 3417048, 8192, act(TA['ISSUE'], 'WRITE', 'SYNC', 'ISSUE', 'FS'), 697)
ev(7000, 500, 4096, act(TA['QUEUE'], 'DISCARD', 'WRITE', 'QUEUE', 'FS'), 1234)
ev(2540588, 3417048, 8192, act(TA['COMPLETE'], 'WRITE', 'SYNC', 'COMPLETE', 'FS'), 0)
ev(3000000, 100, 8192, act(TA['ISSUE'], 'READ', 'ISSUE', 'FS'), 55)
ev(4000000, 100, 8192, act(TA['COMPLETE'], 'READ', 'COMPLETE', 'FS'), 0)
open(sys.argv[1], 'wb').write(out)
