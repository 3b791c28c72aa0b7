"""Writes the checked-in seed corpus of the text and binary targets from
hand-made snippets of each format (python3 fuzz/make_text_seeds.py)."""
import gzip
import lzma
import struct
from pathlib import Path

ROOT = Path(__file__).parent / "corpus"
TEXT = ["lirs", "arc", "csv", "txt", "addr", "msr", "spc", "blkparse", "android", "vfs", "lackey"]
SNIPPETS = {
    "lirs": [b"1\n2\n3\n1\n*\n4\n2\n"],
    "arc": [b"100 4 0 1\n200 1 0 2\n100 2 0 3\n"],
    "csv": [b"time,id,size,op\n1,10,512,read\n2,11,4096,write\n3,10,512,get\n",
            b"1,10,512\n2,20,8192\n"],
    "txt": [b"1\n2\n3\n2\n1\n", b"18446744073709551615\n0\n"],
    "addr": [b"l 0x7fff1000 1\ns 0x7fff1008 3\nl 0x400000 0\n"],
    "msr": [b"128166372003061629,hm,0,Read,383496192,32768,1\n"
            b"128166372016382155,hm,0,Write,2822144,4096,2\n"],
    "spc": [b"0,20941264,8192,W,0.551706\n0,20939840,8192,r,0.554041\n1,3436288,15872,R,1.2\n"],
    "blkparse": [b"  8,0    3        1     0.000000000   697  Q  WS 3417048 + 8 [kjournald]\n"
                 b"  8,0    3        2     0.000010000   697  D  WS 3417048 + 8 [kjournald]\n"
                 b"  8,0    1        3     0.000100000   700  Q   R 100 + 16 [cat]\n"
                 b"CPU0 (8,0):\n"],
    "android": [b"proces,device,rw_flag,sector,size,timestamp\n"
                b"com.app-12,1,R,4096,8,1.5\nkworker/0:1,1,W,8,16,2.0\n"],
    "vfs": [b"r 1\nw 2\nr -1\n# comment\nr 100\n"],
    "lackey": [b"I  04000000,3\n L 7ff000008,8\n S 7ff000010,8\n M 0421d8b0,4\n"],
}


def write(target: str, name: str, data: bytes) -> None:
    d = ROOT / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data)


for fmt, items in SNIPPETS.items():
    sel = bytes([TEXT.index(fmt)])
    for i, body in enumerate(items):
        write("text_readers", f"{fmt}-{i}", sel + body)
    # Compressed variants of the first snippet (and a cut gzip stream).
    gz = gzip.compress(items[0])
    write("text_readers", f"{fmt}-gz", sel + gz)
    write("text_readers", f"{fmt}-xz", sel + lzma.compress(items[0]))
    if fmt in ("txt", "vfs"):
        write("text_readers", f"{fmt}-gzcut", sel + gz[: len(gz) // 2])
        write("text_readers", f"{fmt}-lzma", sel + lzma.compress(items[0], format=lzma.FORMAT_ALONE))

# oracleGeneral: <u32 time, u64 id, u32 size, i64 next>.
oracle = b"".join(struct.pack("<IQIq", t, i, 4096, -1) for t, i in [(1, 7), (2, 8), (3, 7)])
write("binary_readers", "oracle", b"\x00" + oracle)
write("binary_readers", "oracle-block", b"\x03" + oracle)
# vscsi version 1 (32 B): u32 sn, u32 len, u32 nSG, u16 cmd, u16 ver, u64 lbn, u64 ts.
v1 = b"".join(struct.pack("<IIIHHQQ", n, 4096, 1, cmd, 1 << 8, lbn, 10 * n)
              for n, cmd, lbn in [(1, 0x28, 800), (2, 0x2A, 808), (3, 0x28, 800)])
write("binary_readers", "vscsi1", b"\x01" + v1)
# vscsi version 2 (40 B): u16 cmd, u16 ver, u32 sn, u32 len, u32 nSG, u64 lbn, u64 ts, u64 rt.
v2 = b"".join(struct.pack("<HHIIIQQQ", cmd, 2 << 8, n, 8192, 1, lbn, 10 * n, 5)
              for n, cmd, lbn in [(1, 0x28, 16), (2, 0x2A, 24)])
write("binary_readers", "vscsi2", b"\x04" + v2)


def zigzag(v: int) -> int:
    return (v << 1) ^ (v >> 63) if v >= 0 else ((-v) << 1) - 1


def varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


# tlpages (uncompressed is accepted too; the input layer sniffs compression).
prev, body = 0, bytearray(b"TLPAGES1" + struct.pack("<I", 4096))
for page, op, kind in [(5, 0, 0), (6, 1, 1), (5, 0, 1), (1000, 0, 0)]:
    body += varint(zigzag(page - prev) << 2 | op << 1 | kind)
    prev = page
write("binary_readers", "tlpages", b"\x02" + bytes(body))
write("binary_readers", "tlpages-xz", b"\x02" + lzma.compress(bytes(body)))

SYNTH = [
    "zipf:alpha=1.0,pages=1000,n=5000,seed=1",
    "zipf:alpha=0.8,pages=1e3,n=1e3,write=0.3,kind=anon,layout=scrambled",
    "scan:pages=500,start=2000",
    "loop:pages=120,n=1000",
    "mix:0.9*zipf(alpha=1.0,pages=100)+0.1*scan(pages=1000),n=10000,seed=7",
    "phases:zipf(alpha=1.0,pages=100,n=500)+loop(pages=30,n=300)",
    "phases:mix(0.5*zipf(pages=10,n=100)+0.5*loop(pages=5,n=50),n=100)+scan(pages=10)",
]
for i, s in enumerate(SYNTH):
    write("synth_spec", f"s{i}", s.encode())

POLICIES = ["lru", "clock(bits=2)", "fifo", "arc", "lirs", "2q", "opt", "car", "tpp", "clock-pro"]
for i, p in enumerate(POLICIES):
    write("policy_spec", f"p{i}", bytes([i * 37 % 256]) + p.encode())
