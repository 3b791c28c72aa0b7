//! Helpers shared by the fuzz targets: the readers open paths (the native
//! reader seeks), so each input is written to one scratch file per process
//! (in /dev/shm when it exists) and opened from there.

use std::path::PathBuf;
use tierlab_core::trace::readers::open_format;
use tierlab_core::trace::Record;

/// Records read per input at most: enough to walk every branch of a reader,
/// few enough that a valid but long stream does not time the run out.
pub const MAX_RECORDS: usize = 200_000;

/// Pages a synthetic spec may shuffle before its first record (`layout=scrambled`; 4 bytes and
/// one swap each): 16M, about 0.1 s, so set-up cost stays on the scale of [`MAX_RECORDS`].
pub const MAX_PERMUTED_PAGES: u64 = 1 << 24;

fn scratch() -> PathBuf {
    let dir = if std::path::Path::new("/dev/shm").is_dir() {
        PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    dir.join(format!("tierlab-fuzz-{}", std::process::id()))
}

/// Opens `data` as `format` and streams it to the end (or [`MAX_RECORDS`]).
/// Errors are the expected outcome for most inputs; they must be located
/// (name the file), and nothing may panic, hang or allocate without bound.
pub fn replay(format: &str, data: &[u8], options: &toml::Table) {
    let path = scratch();
    std::fs::write(&path, data).expect("scratch file");
    let name = path.display().to_string();
    let result = open_format(format, &path, options).and_then(|mut r| {
        let mut out: Vec<Record> = Vec::with_capacity(4096);
        let mut total = 0usize;
        while r.read_batch(&mut out, 4096)? {
            total += out.len();
            out.clear();
            if total >= MAX_RECORDS {
                break;
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        let msg = e.to_string();
        assert!(!msg.contains('\n'), "{format}: multi-line error: {msg}");
        assert!(msg.contains(&name), "{format}: error does not name the file: {msg}");
    }
}
