mod mobile;

use pyo3::prelude::*;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    mobile::register(m)?;
    Ok(())
}
