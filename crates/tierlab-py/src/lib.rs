use pyo3::prelude::*;
mod mrc;

#[pymodule]
fn _core(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    mrc::register(_m)?;
    Ok(())
}
