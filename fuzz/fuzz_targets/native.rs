//! tierlab's native format (.tlt): header, block index, checksummed zstd blocks.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    tierlab_fuzz::replay("native", data, &toml::Table::new());
});
