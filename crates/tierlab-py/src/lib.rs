use pyo3::prelude::*;

mod capture;

#[pymodule]
fn _core(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    capture::register(_m)?;
    Ok(())
}
