//! The binary trace readers (oracleGeneral, vscsi, tlpages): the first byte
//! picks the format, the rest is the file.
#![no_main]
use libfuzzer_sys::fuzz_target;

const FORMATS: &[&str] = &["oracle", "vscsi", "tlpages"];

fuzz_target!(|data: &[u8]| {
    let Some((&sel, body)) = data.split_first() else {
        return;
    };
    let format = FORMATS[sel as usize % FORMATS.len()];
    let mut opts = toml::Table::new();
    if sel as usize / FORMATS.len() % 2 == 1 && format != "tlpages" {
        opts.insert("addressing".into(), "block".into());
    }
    tierlab_fuzz::replay(format, body, &opts);
});
