//! Writes the native-format seed corpus (`corpus/native/`) with tierlab's own
//! writer: a few tiny traces with small blocks, events and several apps, so the
//! fuzzer starts from valid headers, blocks, checksums and trailers.
//! Run: `cargo +nightly fuzz build && target/x86_64-unknown-linux-gnu/release/make_native_seeds corpus/native`.

use std::path::PathBuf;
use tierlab_core::trace::native::{NativeWriter, WriterOptions};
use tierlab_core::trace::{Access, Event, EventKind, Kind, Op, Record};

fn main() {
    let dir = PathBuf::from(std::env::args().nth(1).unwrap_or("corpus/native".into()));
    std::fs::create_dir_all(&dir).unwrap();
    for (k, (n, per_block)) in [(5u64, 4u32), (40, 16), (200, 64)].into_iter().enumerate() {
        let path = dir.join(format!("seed{k}.tlt"));
        let opts = WriterOptions {
            records_per_block: per_block,
            level: 1,
        };
        let mut w = NativeWriter::create_with(&path, 4096, opts).unwrap();
        for i in 0..n {
            if i % 17 == 3 {
                w.push(&Record::Event(Event {
                    time: i,
                    app: (i % 3) as u32,
                    kind: EventKind::Foreground,
                }))
                .unwrap();
            }
            let mut a = Access::page(
                i * 10,
                (i * 7919) % 97,
                if i % 4 == 0 { Op::Write } else { Op::Read },
                if i % 3 == 0 { Kind::Anon } else { Kind::File },
            );
            a.app = (i % 3) as u32;
            a.npages = 1 + (i % 5) as u32;
            w.push(&Record::Access(a)).unwrap();
        }
        w.finish(&["a".into(), "b".into(), "c".into()]).unwrap();
    }
}
