//! Trace-format descriptions for `tierlab formats`.

use pyo3::prelude::*;

/// `(name, what it reads, options with defaults)` for every trace format.
#[pyfunction]
fn format_summaries() -> Vec<(&'static str, &'static str, &'static str)> {
    tierlab_core::trace::readers::FORMAT_SUMMARIES.to_vec()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(format_summaries, m)?)?;
    Ok(())
}
