//! `tierlab._core.capture`: runs a program under valgrind lackey and writes its
//! page references (tierlab_core::trace::capture). Options and the summary
//! travel as JSON; the GIL is released while valgrind runs and re-taken only
//! for the progress callback, which also checks for Ctrl-C.

use crate::common::{json_arg, to_py_err};
use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;
use std::path::PathBuf;
use tierlab_core::trace::capture::{capture as core_capture, CaptureOptions, CaptureProgress};
use tierlab_core::Error;

/// capture(command, output, options_json="{}", progress=None) -> summary_json
///
/// `progress(dict)` is called about twice a second with the running counts.
#[pyfunction]
#[pyo3(signature = (command, output, options_json = "{}", progress = None))]
fn capture(
    py: Python<'_>,
    command: Vec<String>,
    output: PathBuf,
    options_json: &str,
    progress: Option<Py<PyAny>>,
) -> PyResult<String> {
    let opts: CaptureOptions = json_arg("capture options", options_json)?;
    let result = py.detach(|| {
        let mut cb = |p: &CaptureProgress| -> tierlab_core::Result<()> {
            Python::attach(|py| {
                if py.check_signals().is_err() {
                    return Err(Error::Interrupted);
                }
                if let Some(f) = &progress {
                    let text = serde_json::to_string(p).unwrap_or_default();
                    let json = py.import("json").map_err(|_| Error::Interrupted)?;
                    let d = json
                        .call_method1("loads", (text,))
                        .map_err(|_| Error::Interrupted)?;
                    f.call1(py, (d,)).map_err(|_| Error::Interrupted)?;
                }
                Ok(())
            })
        };
        core_capture(&command, &output, &opts, &mut cb)
    });
    match result {
        Ok(summary) => Ok(serde_json::to_string(&summary).unwrap_or_default()),
        Err(Error::Interrupted) => Err(PyKeyboardInterrupt::new_err("capture interrupted")),
        Err(e) => Err(to_py_err(e)),
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(capture, m)?)
}
