//! Device presets and user-defined devices in TOML.

use std::path::Path;
use tierlab_core::device::{presets, Device, DeviceCatalog, DeviceClass};

fn dev(name: &str) -> Device {
    DeviceCatalog::default().get(name).unwrap().clone()
}

/// Time of one request of `n` pages.
fn rd(d: &Device, n: u64, seq: bool) -> f64 {
    d.read.time_ns(n, seq)
}
fn wr(d: &Device, n: u64, seq: bool) -> f64 {
    d.write.time_ns(n, seq)
}

const PRESETS: &[&str] = &[
    "dram",
    "cxl-dram",
    "pcm",
    "emram",
    "stt-mram",
    "microsd-class6",
    "microsd-class10",
    "emmc",
    "ufs",
    "nvme",
    "zram",
    "zram-lzo",
    // presets_mobile.rs (the Android swap-vs-LMK paper)
    "microsd-class6-paper",
    "microsd-class10-paper",
    "emmc-gs2",
    "zram-gs2",
    // presets_swap.rs (the eMRAM swap paper)
    "emram-swap",
    "flash-ufs31",
    // presets_tiered.rs (the shadow-paging paper)
    "nomad-local-dram",
    "nomad-remote-dram",
    // device/presets_hybrid.rs
    "dram-ratio",
    "pcm-ratio",
    "storage-ratio",
    "dram-table1",
    "pcm-table1",
    // presets_flash.rs (the BS-CLOCK paper, calibrated to its Figure 2)
    "microsd-samsung-c10",
    "microsd-sandisk-c10",
];

#[test]
fn every_preset_validates_and_cites_a_source() {
    let all = presets::all();
    let names: Vec<&str> = all.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, PRESETS);
    for d in &all {
        d.validate().unwrap_or_else(|m| panic!("{}: {m}", d.name));
        assert!(d.source.len() > 40, "{}: source too thin", d.name);
        // Every device costs something to read and write a page.
        assert!(rd(d, 1, false) > 0.0 && wr(d, 1, false) > 0.0, "{}", d.name);
        // A sequential request never costs more than a random one.
        assert!(rd(d, 1, true) <= rd(d, 1, false), "{}", d.name);
        assert!(wr(d, 1, true) <= wr(d, 1, false), "{}", d.name);
        match d.class {
            DeviceClass::Memory => assert!(d.access_read_ns > 0.0 && d.access_write_ns > 0.0),
            _ => assert_eq!((d.access_read_ns, d.access_write_ns), (0.0, 0.0)),
        }
    }
}

#[test]
fn memory_orderings() {
    let (dram, pcm, cxl) = (dev("dram"), dev("pcm"), dev("cxl-dram"));
    // DRAM faster than PCM, in CPU accesses and page moves.
    assert!(dram.access_read_ns < pcm.access_read_ns);
    assert!(dram.access_write_ns < pcm.access_write_ns);
    assert!(rd(&dram, 1, false) < rd(&pcm, 1, false));
    assert!(wr(&dram, 1, false) < wr(&pcm, 1, false));
    // PCM writes are slower and costlier than its reads.
    assert!(pcm.access_write_ns > pcm.access_read_ns);
    assert!(wr(&pcm, 1, false) > rd(&pcm, 1, false));
    assert!(pcm.write.energy_nj_per_page > pcm.read.energy_nj_per_page);
    // The hybrid paper's time ratios for page transfers: PCM read 2, write 50.
    assert_eq!(pcm.read.per_page_ns / dram.read.per_page_ns, 2.0);
    assert_eq!(pcm.write.per_page_ns / dram.write.per_page_ns, 50.0);
    // CXL-attached DRAM: about 2x local DRAM latency.
    let r = cxl.access_read_ns / dram.access_read_ns;
    assert!((1.8..=2.5).contains(&r), "cxl/dram = {r}");
    // Only DRAM-based devices pay refresh power; PCM and MRAM are non-volatile.
    for nv in ["pcm", "emram", "stt-mram"] {
        assert_eq!(dev(nv).static_mw_per_gib, 0.0, "{nv}");
        assert!(dev(nv).endurance_writes.is_some(), "{nv}");
    }
    assert!(dram.static_mw_per_gib > 0.0);
    // MRAM endures far more writes than PCM.
    assert!(dev("emram").endurance_writes.unwrap() > 1e4 * pcm.endurance_writes.unwrap());
}

#[test]
fn flash_orderings() {
    for name in ["microsd-class6", "microsd-class10"] {
        let sd = dev(name);
        // A random 4 KiB write is far slower than a sequential one, and than
        // streaming a page at the card's sequential bandwidth.
        let ratio_req = wr(&sd, 1, false) / wr(&sd, 1, true);
        let ratio_bw = wr(&sd, 1, false) / sd.write.per_page_ns;
        println!("{name}: random/sequential 4 KiB write {ratio_req:.1}x, random/streaming {ratio_bw:.1}x");
        assert!(ratio_req >= 10.0, "{name}: {ratio_req}");
        assert!(ratio_bw >= 20.0, "{name}: {ratio_bw}");
        // Writing 1 MiB as one request is faster than as 256 sequential 4 KiB
        // requests (the BS-CLOCK paper's Fig. 2 premise).
        let one = wr(&sd, 256, true);
        let many = 256.0 * wr(&sd, 1, true);
        assert!(one < many / 1.5, "{name}");
    }
    let (c6, c10) = (dev("microsd-class6"), dev("microsd-class10"));
    // Class 10 is faster than class 6 sequentially (10 vs 6 MB/s minimum).
    assert!(wr(&c10, 256, true) < wr(&c6, 256, true));
    assert!(rd(&c10, 256, true) < rd(&c6, 256, true));
    assert!((wr(&c6, 256, true) / wr(&c10, 256, true) - 10.0 / 6.0).abs() < 0.01);
    // Mobile storage generations: UFS 3.1 > eMMC 5.1 > microSD, both ways.
    let (emmc, ufs) = (dev("emmc"), dev("ufs"));
    for seq in [false, true] {
        assert!(rd(&ufs, 1, seq) < rd(&emmc, 1, seq));
        assert!(rd(&emmc, 1, seq) < rd(&c10, 1, seq));
        assert!(wr(&ufs, 1, seq) < wr(&emmc, 1, seq));
        assert!(wr(&emmc, 1, seq) < wr(&c10, 1, seq));
    }
    // The eMMC 5.1 datasheet figures: 11,000 and 13,000 IOPS.
    assert!((rd(&emmc, 1, false) - 1e9 / 11_000.0).abs() < 1.0);
    assert!((wr(&emmc, 1, false) - 1e9 / 13_000.0).abs() < 1.0);
}

#[test]
fn swap_device_orderings() {
    let emram = dev("emram");
    // The eMRAM paper's premise: eMRAM writes much faster than flash.
    for flash in ["microsd-class10", "emmc", "ufs", "nvme"] {
        assert!(
            wr(&emram, 1, false) * 2.0 < wr(&dev(flash), 1, false),
            "{flash}"
        );
    }
    for z in ["zram", "zram-lzo"] {
        let z = dev(z);
        assert_eq!(z.class, DeviceClass::Compressed);
        // Compression is slower than decompression.
        assert!(wr(&z, 1, false) > rd(&z, 1, false));
        // And a page in zram is cheaper to fetch than from any flash device.
        for flash in ["microsd-class10", "emmc", "ufs", "nvme"] {
            assert!(rd(&z, 1, false) < rd(&dev(flash), 1, false));
        }
    }
    // lz4 is faster than lzo both ways.
    assert!(rd(&dev("zram"), 1, false) < rd(&dev("zram-lzo"), 1, false));
    assert!(wr(&dev("zram"), 1, false) < wr(&dev("zram-lzo"), 1, false));
}

fn example_path() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/devices.example.toml"
    ))
}

#[test]
fn toml_example_file_loads() {
    let mut cat = DeviceCatalog::default();
    cat.load_toml_file(example_path()).unwrap();
    let lp = cat.get("lpddr4x").unwrap();
    assert_eq!(lp.class, DeviceClass::Memory);
    assert_eq!(lp.access_read_ns, 100.0);
    assert_eq!(lp.read.per_page_ns, 240.0);
    let sd = cat.get("old-sd-card").unwrap();
    assert_eq!(sd.class, DeviceClass::Block);
    assert_eq!(sd.erase_block_pages, Some(1024));
    assert_eq!(wr(sd, 1, false), 25_024_000.0);
    assert_eq!(sd.read.energy_nj_per_page, 0.0);
    // Presets are still there.
    assert!(cat.get("dram").is_ok());
}

#[test]
fn toml_device_replaces_a_preset_of_the_same_name() {
    let mut cat = DeviceCatalog::default();
    let text = r#"
        [[device]]
        name = "nvme"
        class = "block"
        source = "my drive"
        read = { random_setup_ns = 1.0, seq_setup_ns = 1.0, per_page_ns = 1.0 }
        write = { random_setup_ns = 2.0, seq_setup_ns = 2.0, per_page_ns = 2.0 }
    "#;
    cat.load_toml_str(text, "inline.toml").unwrap();
    assert_eq!(cat.get("nvme").unwrap().source, "my drive");
    assert_eq!(cat.iter().count(), PRESETS.len());
}

fn load_err(text: &str) -> String {
    let mut cat = DeviceCatalog::default();
    cat.load_toml_str(text, "mine.toml")
        .unwrap_err()
        .to_string()
}

const GOOD: &str = r#"
[[device]]
name = "x"
class = "block"
source = "s"
[device.read]
random_setup_ns = 10.0
seq_setup_ns = 1.0
per_page_ns = 5.0
[device.write]
random_setup_ns = 10.0
seq_setup_ns = 1.0
per_page_ns = 5.0
"#;

#[test]
fn toml_rejects_unknown_keys_naming_them() {
    DeviceCatalog::default()
        .load_toml_str(GOOD, "mine.toml")
        .unwrap();
    let e = load_err(&GOOD.replace("source = \"s\"", "source = \"s\"\nlatency = 3"));
    assert!(
        e.contains("mine.toml") && e.contains("unknown field `latency`"),
        "{e}"
    );
    let e = load_err(&GOOD.replace(
        "per_page_ns = 5.0\n[device.write]",
        "per_page_ns = 5.0\nper_pg = 1.0\n[device.write]",
    ));
    assert!(e.contains("unknown field `per_pg`"), "{e}");
    let e = load_err(&format!("{GOOD}\n[[devices]]\nname = \"y\"\n"));
    assert!(e.contains("unknown field `devices`"), "{e}");
    let e = load_err(&GOOD.replace("class = \"block\"", "class = \"disk\""));
    assert!(e.contains("disk") && e.contains("memory"), "{e}");
}

#[test]
fn toml_rejects_negative_numbers_naming_the_key() {
    let e = load_err(
        &GOOD
            .replacen("per_page_ns = 5.0", "per_page_ns = -5.0", 2)
            .replacen("per_page_ns = -5.0", "per_page_ns = 5.0", 1),
    );
    assert!(
        e.contains("mine.toml: device 'x': write.per_page_ns must be a finite number >= 0, got -5"),
        "{e}"
    );
    let e = load_err(&GOOD.replace("source = \"s\"", "source = \"s\"\naccess_read_ns = -1.0"));
    assert!(
        e.contains("access_read_ns must be a finite number >= 0"),
        "{e}"
    );
    let e = load_err(&GOOD.replace("source = \"s\"", "source = \"s\"\nendurance_writes = -3.0"));
    assert!(e.contains("endurance_writes must be > 0"), "{e}");
    let e = load_err(&GOOD.replace("source = \"s\"", "source = \"s\"\nerase_block_pages = -1"));
    assert!(e.contains("erase_block_pages"), "{e}");
}

#[test]
fn docs_table_lists_every_preset() {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/devices.md"
    ))
    .unwrap();
    for name in PRESETS {
        assert!(
            doc.contains(&format!("| `{name}` |")),
            "docs/devices.md lacks {name}"
        );
    }
}
