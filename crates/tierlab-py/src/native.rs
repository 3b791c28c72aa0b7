//! The native trace format from Python: `convert_native(trace, out)` streams any
//! readable trace (or a synthetic generator spec) into a `.tlt` file.

use crate::common::{guard, progress_callback, to_py_err};
use pyo3::prelude::*;
use std::path::Path;
use tierlab_core::sim::engine::Progress;
use tierlab_core::trace::native::{convert, NativeOptions, NativeReader};

/// Converts `trace` (JSON `{"path", "format", "options"}`) to the native format
/// at `out`; returns the number of records written. Releases the GIL; Ctrl-C
/// (or an exception from `callback(records)`) stops it and leaves no output.
#[pyfunction]
#[pyo3(signature = (trace, out, callback=None))]
fn convert_native(
    py: Python<'_>,
    trace: &str,
    out: &str,
    callback: Option<Py<PyAny>>,
) -> PyResult<u64> {
    let spec = crate::trace::trace_spec(trace)?;
    py.detach(|| {
        guard(|| {
            let mut report = progress_callback(callback.as_ref());
            let stats = convert(&spec, Path::new(out), &mut |p| {
                report(&Progress {
                    page_refs: p.records,
                    requests: p.records,
                })
            })?;
            Ok(stats.records)
        })
    })
    .map_err(to_py_err)
}

/// `(records, events, bytes)` of the native trace at `path`, from its trailer (no block is
/// decoded): what a progress bar needs for its total and ETA.
#[pyfunction]
fn native_totals(path: &str) -> PyResult<(u64, u64, u64)> {
    guard(|| {
        let t = NativeReader::open(Path::new(path), NativeOptions::default())?.totals();
        Ok((t.records, t.events, t.bytes))
    })
    .map_err(to_py_err)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(convert_native, m)?)?;
    m.add_function(wrap_pyfunction!(native_totals, m)?)
}
