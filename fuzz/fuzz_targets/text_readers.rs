//! Every text trace reader: the first byte picks the format, the rest is the
//! file (compressed or not: the input layer sniffs magic bytes).
#![no_main]
use libfuzzer_sys::fuzz_target;

const FORMATS: &[&str] = &[
    "lirs", "arc", "csv", "txt", "addr", "msr", "spc", "blkparse", "android", "vfs", "lackey",
];

fuzz_target!(|data: &[u8]| {
    let Some((&sel, body)) = data.split_first() else {
        return;
    };
    let format = FORMATS[sel as usize % FORMATS.len()];
    let mut opts = toml::Table::new();
    // Every other selector value exercises block addressing where it exists.
    if sel as usize / FORMATS.len() % 2 == 1 && matches!(format, "csv" | "txt") {
        opts.insert("addressing".into(), "block".into());
    }
    tierlab_fuzz::replay(format, body, &opts);
});
