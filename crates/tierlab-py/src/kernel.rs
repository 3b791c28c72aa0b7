//! `tierlab._core.kernel_drive`: generates a ground-truth workload, writes its
//! references as a native trace, and drives them against the real kernel in a
//! memory cgroup (tierlab_core::kernel). The GIL is released while the child
//! runs; Ctrl-C kills the child and raises KeyboardInterrupt.

use crate::common::{json_arg, to_py_err};
use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;
use std::path::PathBuf;
use tierlab_core::kernel::driver::{drive, prepare_data_file, DriveSpec, PAGE};
use tierlab_core::kernel::workload::{write_trace, RefArray, Workload};
use tierlab_core::Error;

/// The footprint and length of a cell's references, as JSON.
fn info_json(a: &RefArray) -> String {
    serde_json::json!({
        "file_pages": a.file_pages,
        "anon_pages": a.anon_pages,
        "references": a.refs.len(),
    })
    .to_string()
}

/// kernel_prepare(workload_json, data_file) -> info_json: writes the data file
/// the workload needs (its pages dropped from the page cache) and returns the
/// workload's `file_pages`, `anon_pages` and `references` (a trace is read to
/// know them).
#[pyfunction]
fn kernel_prepare(py: Python<'_>, workload_json: &str, data_file: PathBuf) -> PyResult<String> {
    let w: Workload = json_arg("kernel-check workload", workload_json)?;
    let a = py
        .detach(|| {
            let a = w.build()?;
            prepare_data_file(&data_file, a.file_pages.max(1))?;
            Ok::<_, Error>(a)
        })
        .map_err(to_py_err)?;
    Ok(info_json(&a))
}

/// kernel_references(workload_json, trace_out) -> info_json: the workload's
/// references written as the native trace tierlab replays, without driving
/// anything (what kernel-check would issue; no root needed).
#[pyfunction]
fn kernel_references(py: Python<'_>, workload_json: &str, trace_out: PathBuf) -> PyResult<String> {
    let w: Workload = json_arg("kernel-check workload", workload_json)?;
    let a = py
        .detach(|| {
            let a = w.build()?;
            write_trace(&a.refs, &trace_out, PAGE as u32)?;
            Ok::<_, Error>(a)
        })
        .map_err(to_py_err)?;
    Ok(info_json(&a))
}

/// kernel_drive(workload_json, trace_out, data_file, cgroup_dir, readahead=False, cpu=None,
/// progress_every=0) -> outcome_json
#[pyfunction]
#[pyo3(signature = (workload_json, trace_out, data_file, cgroup_dir, readahead=false, cpu=None, progress_every=0))]
#[allow(clippy::too_many_arguments)]
fn kernel_drive(
    py: Python<'_>,
    workload_json: &str,
    trace_out: PathBuf,
    data_file: PathBuf,
    cgroup_dir: PathBuf,
    readahead: bool,
    cpu: Option<usize>,
    progress_every: usize,
) -> PyResult<String> {
    let w: Workload = json_arg("kernel-check workload", workload_json)?;
    let result = py.detach(|| {
        let a = w.build()?;
        let spec = DriveSpec {
            data_file,
            anon_pages: a.anon_pages,
            cgroup_dir,
            readahead,
            cpu,
            drain_charge_stock: false,
            progress_every,
        };
        write_trace(&a.refs, &trace_out, PAGE as u32)?;
        let interrupted = || Python::attach(|py| py.check_signals().is_err());
        drive(&a.refs, &spec, &interrupted)
    });
    match result {
        Ok(o) => Ok(serde_json::to_string(&o).unwrap_or_default()),
        Err(Error::Interrupted) => Err(PyKeyboardInterrupt::new_err("kernel-check interrupted")),
        Err(e) => Err(to_py_err(e)),
    }
}

/// kernel_zswap_model(after_trace, page_bytes, total_pages, zswap_json) -> json: the
/// swap requests of an after-cache trace through tierlab's zswap model
/// (mobile/compressed.rs) with every page compressing to `page_bytes` bytes;
/// `zswap_json` is a `[swap.zswap]` table (e.g. `memcg_zswap_max_bytes`).
/// Returns the model's stores, write-backs, pages sent to the device at the
/// group's limit and global rejections, pool loads, device writes and reads.
#[pyfunction]
fn kernel_zswap_model(
    py: Python<'_>,
    after_trace: PathBuf,
    page_bytes: u16,
    total_pages: u64,
    zswap_json: &str,
) -> PyResult<String> {
    let cfg: tierlab_core::mobile::compressed::ZswapConfig = json_arg("zswap", zswap_json)?;
    if !(1..=PAGE as u16).contains(&page_bytes) {
        return Err(crate::common::ConfigError::new_err(format!(
            "page_bytes: expected 1..={PAGE} (a compressed page), got {page_bytes}"
        )));
    }
    let r = py
        .detach(|| {
            cfg.validate()?;
            let log = tierlab_core::device::replay::read_device_log(&after_trace)?;
            let dev = tierlab_core::device::DeviceCatalog::default()
                .get(&cfg.compressor)?
                .clone();
            tierlab_core::mobile::compressed::zswap_replay(
                &log.requests,
                page_bytes,
                total_pages,
                &cfg,
                dev,
            )
        })
        .map_err(to_py_err)?;
    Ok(serde_json::to_string(&r).unwrap_or_default())
}

/// kernel_psi_model(counts_json, swap, file, pool, scan_ns_per_page, reclaim_stall) -> json:
/// the PSI stall (`[some_ns, full_ns]`) the lmkd model prices for a run's counts
/// (`tierlab_core::mobile::lmkd::psi_stall`; `counts_json` a `StallCounts`), with the
/// catalog devices named `swap` and `file`, and `pool` (zswap's compressor) or None.
#[pyfunction]
#[pyo3(signature = (counts_json, swap, file, pool, scan_ns_per_page, reclaim_stall))]
fn kernel_psi_model(
    counts_json: &str,
    swap: &str,
    file: &str,
    pool: Option<&str>,
    scan_ns_per_page: f64,
    reclaim_stall: f64,
) -> PyResult<String> {
    use tierlab_core::mobile::lmkd::{psi_stall, StallCounts};
    let c: StallCounts = json_arg("counts", counts_json)?;
    for (what, v) in [
        ("scan_ns_per_page", scan_ns_per_page),
        ("reclaim_stall", reclaim_stall),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(crate::common::ConfigError::new_err(format!(
                "{what}: expected a finite number >= 0, got {v}"
            )));
        }
    }
    let cat = tierlab_core::device::DeviceCatalog::default();
    let (some, full) = (|| {
        let pool = pool.map(|p| cat.get(p)).transpose()?;
        Ok::<_, Error>(psi_stall(
            &c,
            cat.get(swap)?,
            cat.get(file)?,
            pool,
            scan_ns_per_page,
            reclaim_stall,
        ))
    })()
    .map_err(to_py_err)?;
    Ok(serde_json::json!([some, full]).to_string())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(kernel_zswap_model, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_psi_model, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_prepare, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_references, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_drive, m)?)
}
