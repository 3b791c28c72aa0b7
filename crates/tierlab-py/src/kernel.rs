//! `tierlab._core.kernel_drive`: generates a ground-truth workload, writes its
//! references as a native trace, and drives them against the real kernel in a
//! memory cgroup (tierlab_core::kernel). The GIL is released while the child
//! runs; Ctrl-C kills the child and raises KeyboardInterrupt.

use crate::common::{json_arg, to_py_err};
use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;
use std::path::PathBuf;
use tierlab_core::kernel::driver::{drive, prepare_data_file, DriveSpec, PAGE};
use tierlab_core::kernel::workload::{write_trace, Workload};
use tierlab_core::Error;

/// The workload's `file_pages`, `anon_pages` and `references`, as JSON.
fn info(w: &Workload) -> String {
    serde_json::json!({
        "file_pages": w.file_pages(),
        "anon_pages": w.anon_pages(),
        "references": w.reference_count(),
    })
    .to_string()
}

/// kernel_prepare(workload_json, data_file) -> info_json: writes the data file
/// the workload needs (its pages dropped from the page cache) and returns the
/// workload's `file_pages`, `anon_pages` and `references`.
#[pyfunction]
fn kernel_prepare(py: Python<'_>, workload_json: &str, data_file: PathBuf) -> PyResult<String> {
    let w: Workload = json_arg("kernel-check workload", workload_json)?;
    py.detach(|| prepare_data_file(&data_file, w.file_pages().max(1)))
        .map_err(to_py_err)?;
    Ok(info(&w))
}

/// kernel_trace(workload_json, trace_out) -> info_json: writes the workload's
/// references as a native trace (what a driver elsewhere, e.g. in a VM,
/// reads back) and returns its `file_pages`, `anon_pages` and `references`.
#[pyfunction]
fn kernel_trace(py: Python<'_>, workload_json: &str, trace_out: PathBuf) -> PyResult<String> {
    let w: Workload = json_arg("kernel-check workload", workload_json)?;
    py.detach(|| write_trace(&w.references()?, &trace_out, PAGE as u32))
        .map_err(to_py_err)?;
    Ok(info(&w))
}

/// kernel_drive(workload_json, trace_out, data_file, cgroup_dir, readahead=False, cpu=None)
/// -> outcome_json
#[pyfunction]
#[pyo3(signature = (workload_json, trace_out, data_file, cgroup_dir, readahead=false, cpu=None))]
fn kernel_drive(
    py: Python<'_>,
    workload_json: &str,
    trace_out: PathBuf,
    data_file: PathBuf,
    cgroup_dir: PathBuf,
    readahead: bool,
    cpu: Option<usize>,
) -> PyResult<String> {
    let w: Workload = json_arg("kernel-check workload", workload_json)?;
    let spec = DriveSpec {
        data_file,
        anon_pages: w.anon_pages(),
        cgroup_dir,
        readahead,
        cpu,
    };
    let result = py.detach(|| {
        let refs = w.references()?;
        write_trace(&refs, &trace_out, PAGE as u32)?;
        let interrupted = || Python::attach(|py| py.check_signals().is_err());
        drive(&refs, &spec, &interrupted)
    });
    match result {
        Ok(o) => Ok(serde_json::to_string(&o).unwrap_or_default()),
        Err(Error::Interrupted) => Err(PyKeyboardInterrupt::new_err("kernel-check interrupted")),
        Err(e) => Err(to_py_err(e)),
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(kernel_prepare, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_trace, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_drive, m)?)
}
