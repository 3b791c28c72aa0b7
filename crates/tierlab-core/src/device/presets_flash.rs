//! microSD presets calibrated to the BS-CLOCK paper's Figure 2
//! (papers/bs-clock-flash-buffer.md, section I, Table 1 and Figure 2).
//!
//! The paper writes 64 MB to two 16 GB class-10 microSDHC cards (Samsung and
//! Sandisk, Table 1) once as 4 KB requests and once as 1 MB requests with
//! O_DIRECT, and reports that the 1 MB requests take 35 % (Samsung) and
//! 77.5 % (Sandisk) less time. tierlab's request cost is
//! `t = setup + n * per_page` (`IoCost`), with `setup = seq_setup` when the
//! request starts where the previous write to that device ended and
//! `random_setup` otherwise (`Accounting`'s per-direction cursor). Writing
//! `N` = 16384 pages (64 MB) sequentially in requests of `n` pages costs
//! `T(n) = N/n * (s + n p)` (s = seq_setup, p = per_page; the one random
//! first request is negligible), so the reduction of 1 MB (n = 256) over
//! 4 KB (n = 1) requests is
//!
//! ```text
//! R = 1 - T(256)/T(1) = 1 - (s/256 + p) / (s + p)
//! =>  s/p = x = R / ((1 - R) - 1/256)
//! ```
//!
//! - Samsung: R = 0.35  -> x = 0.35 / (0.65 - 0.00390625) = 0.5417
//! - Sandisk: R = 0.775 -> x = 0.775 / (0.225 - 0.00390625) = 3.5053
//!
//! The paper gives only the ratio, not absolute times; the absolute scale is
//! fixed by an assumed 1 MB-request write bandwidth typical of 16 GB class-10
//! UHS-I cards of 2015 (class 10 guarantees >= 10 MB/s): 18 MB/s (Samsung),
//! 12 MB/s (Sandisk), i.e. `s + 256 p = 2^20 B / bandwidth`:
//!
//! - Samsung: 256.5417 p = 58.254 ms -> p = 227.07 us, s = 123.01 us
//!   (a sequential 4 KB request: 350 us, 11.7 MB/s)
//! - Sandisk: 259.5053 p = 87.381 ms -> p = 336.72 us, s = 1180.3 us
//!   (a sequential 4 KB request: 1.517 ms, 2.7 MB/s)
//!
//! Random writes (a write that does not continue the previous one) are not in
//! the paper; they are set from the random-write rates of such cards
//! (REFERENCE.md: A1 cards guarantee >= 500 random-write IOPS, older class-10
//! cards manage a few hundred): 4 KB random write 2.5 ms (400 IOPS, Samsung)
//! and 5 ms (200 IOPS, Sandisk), so `random_setup = t - p`. Reads (not
//! calibrated by the paper either): 45 MB/s and 40 MB/s sequential, random
//! 4 KB read 0.5 ms and 0.7 ms. Energy per page from ~0.3 W while writing and
//! ~0.2 W while reading. Because the BS-CLOCK/Spatial Clock comparison moves
//! only writes (their hits and misses are identical), its modeled time
//! reduction depends on the calibrated write numbers, not on these guesses;
//! only its absolute value and the read share of total time do.

use super::{storage, Device, DeviceClass, IoCost};

/// Pages of 4 KB in the paper's 64 MB experiment.
pub const FIG2_TOTAL_PAGES: u64 = 16384;

/// Time to write `total_pages` sequentially as requests of `request_pages`
/// pages (the first request random, the rest continuing the previous one):
/// the paper's Figure 2 experiment on a modeled device.
pub fn sequential_write_time_ns(dev: &Device, total_pages: u64, request_pages: u64) -> f64 {
    let request_pages = request_pages.max(1);
    let full = total_pages / request_pages;
    let rest = total_pages % request_pages;
    let mut t = 0.0;
    let mut first = true;
    for _ in 0..full {
        t += dev.write.time_ns(request_pages, !first);
        first = false;
    }
    if rest > 0 {
        t += dev.write.time_ns(rest, !first);
    }
    t
}

/// Write cost from the Figure 2 reduction `r`, the 1 MB-request bandwidth
/// (bytes/s) and the 4 KB random-write time (ns); see the module docs.
fn calibrated_write(r: f64, bw_1m: f64, random_4k_ns: f64, watts: f64) -> IoCost {
    let x = r / ((1.0 - r) - 1.0 / 256.0);
    let t_1m_ns = (1u64 << 20) as f64 / bw_1m * 1e9;
    let p = t_1m_ns / (256.0 + x);
    IoCost {
        random_setup_ns: random_4k_ns - p,
        seq_setup_ns: x * p,
        per_page_ns: p,
        energy_nj_per_page: watts * p,
    }
}

fn read_cost(bw: f64, random_4k_ns: f64, seq_setup_ns: f64, watts: f64) -> IoCost {
    let p = 4096.0 / bw * 1e9;
    IoCost {
        random_setup_ns: random_4k_ns - p,
        seq_setup_ns,
        per_page_ns: p,
        energy_nj_per_page: watts * p,
    }
}

fn microsd(name: &str, source: &str, write: IoCost, read: IoCost) -> Device {
    // TLC-class consumer cards; 1 MB erase blocks (assumed).
    storage(
        name,
        DeviceClass::Block,
        source,
        read,
        write,
        Some(1000.0),
        Some(256),
    )
}

/// The two microSD presets of the BS-CLOCK paper.
pub fn all() -> Vec<Device> {
    vec![
        microsd(
            "microsd-samsung-c10",
            "Samsung 16 GB class-10 microSDHC (bs-clock paper Table 1): 64 MB as 1 MB requests \
             takes 35% less time than as 4 KB requests (Fig. 2); 18 MB/s at 1 MB requests, \
             4 KB random write 2.5 ms and read 45 MB/s assumed (see device/presets_flash.rs)",
            calibrated_write(0.35, 18e6, 2.5e6, 0.3),
            read_cost(45e6, 0.5e6, 100_000.0, 0.2),
        ),
        microsd(
            "microsd-sandisk-c10",
            "Sandisk 16 GB class-10 microSDHC (bs-clock paper Table 1): 64 MB as 1 MB requests \
             takes 77.5% less time than as 4 KB requests (Fig. 2); 12 MB/s at 1 MB requests, \
             4 KB random write 5 ms and read 40 MB/s assumed (see device/presets_flash.rs)",
            calibrated_write(0.775, 12e6, 5e6, 0.3),
            read_cost(40e6, 0.7e6, 150_000.0, 0.2),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reduction(d: &Device) -> f64 {
        let t4k = sequential_write_time_ns(d, FIG2_TOTAL_PAGES, 1);
        let t1m = sequential_write_time_ns(d, FIG2_TOTAL_PAGES, 256);
        1.0 - t1m / t4k
    }

    #[test]
    fn presets_reproduce_figure_2() {
        let devs = all();
        let r: Vec<f64> = devs.iter().map(reduction).collect();
        // The one random first request shifts the ratio by < 0.5 %.
        assert!((r[0] - 0.35).abs() < 0.005, "samsung {}", r[0]);
        assert!((r[1] - 0.775).abs() < 0.005, "sandisk {}", r[1]);
        for d in &devs {
            d.validate().unwrap();
            // 64 MB as 1 MB requests at the assumed bandwidth.
            let t1m = sequential_write_time_ns(d, FIG2_TOTAL_PAGES, 256);
            let bw = 64.0 * (1u64 << 20) as f64 / (t1m / 1e9);
            assert!(bw > 10e6 && bw < 20e6, "{} {bw}", d.name);
            // A random write costs more than a sequential one.
            assert!(d.write.random_setup_ns > d.write.seq_setup_ns);
        }
    }

    #[test]
    fn bigger_requests_are_never_slower() {
        for d in all() {
            let mut last = f64::INFINITY;
            for n in [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024] {
                let t = sequential_write_time_ns(&d, FIG2_TOTAL_PAGES, n);
                assert!(t < last, "{} n={n}", d.name);
                last = t;
            }
        }
    }
}
