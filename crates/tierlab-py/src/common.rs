//! Error mapping, panic guard, JSON arguments and the progress callback.

use pyo3::prelude::*;
use serde::de::DeserializeOwned;
use tierlab_core::sim::engine::Progress;
use tierlab_core::Error;

// The exception classes are Python's (`tierlab.errors`), so that each can also be a ValueError
// or an OSError, and Python and the core raise the same classes.
pyo3::import_exception!(tierlab.errors, TierlabError);
pyo3::import_exception!(tierlab.errors, TraceFormatError);
pyo3::import_exception!(tierlab.errors, ConfigError);
pyo3::import_exception!(tierlab.errors, TierlabOSError);
pyo3::import_exception!(tierlab.errors, ResourceError);

pub use TierlabError as PyTierlabError;

pub fn register_exceptions(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("TierlabError", py.get_type::<TierlabError>())?;
    m.add("TraceFormatError", py.get_type::<TraceFormatError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("TierlabOSError", py.get_type::<TierlabOSError>())?;
    m.add("ResourceError", py.get_type::<ResourceError>())?;
    Ok(())
}

/// What a native call can end with.
pub enum Failure {
    Core(Error),
    /// A Python exception raised inside the progress callback (e.g. KeyboardInterrupt).
    Python(PyErr),
    Panic(String),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Core(e)
    }
}

pub fn to_py_err(f: impl Into<FailureOrError>) -> PyErr {
    match f.into().0 {
        Failure::Core(e) => core_err(e),
        Failure::Python(e) => e,
        Failure::Panic(msg) => {
            TierlabError::new_err(format!("internal error (please report): {msg}"))
        }
    }
}

pub struct FailureOrError(Failure);
impl From<Failure> for FailureOrError {
    fn from(f: Failure) -> Self {
        FailureOrError(f)
    }
}
impl From<Error> for FailureOrError {
    fn from(e: Error) -> Self {
        FailureOrError(Failure::Core(e))
    }
}

fn core_err(e: Error) -> PyErr {
    match &e {
        Error::Input { .. } => TraceFormatError::new_err(e.to_string()),
        Error::Io { .. } => TierlabOSError::new_err(e.to_string()),
        Error::Resource(_) => ResourceError::new_err(e.to_string()),
        Error::Config(_) => ConfigError::new_err(e.to_string()),
        Error::Interrupted => pyo3::exceptions::PyKeyboardInterrupt::new_err("interrupted"),
        Error::Policy(msg) => crate::pypolicy::PolicyError::new_err(msg.clone()),
    }
}

thread_local! {
    static PENDING_PY_ERR: std::cell::RefCell<Option<PyErr>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f`, turning a panic into an error and a Python exception raised in
/// the callback back into that exception.
pub fn guard<T>(f: impl FnOnce() -> Result<T, Error>) -> Result<T, Failure> {
    // The panic-catching itself is tested in tierlab-core (error::catch_panic):
    // this crate's test binary cannot link without libpython.
    let r = tierlab_core::error::catch_panic(f);
    let pending = PENDING_PY_ERR.with(|p| p.borrow_mut().take());
    match r {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(Error::Interrupted)) if pending.is_some() => Err(Failure::Python(pending.unwrap())),
        Ok(Err(e)) => Err(Failure::Core(e)),
        Err(msg) => Err(Failure::Panic(msg)),
    }
}

/// A progress closure for the engine: calls `callback(page_refs)` (if any)
/// with the GIL held and checks for signals (Ctrl-C) at most every 100 ms.
pub fn progress_callback(
    callback: Option<&Py<PyAny>>,
) -> impl FnMut(&Progress) -> Result<(), Error> + '_ {
    let mut last = std::time::Instant::now();
    move |p: &Progress| {
        if last.elapsed().as_millis() < 100 {
            return Ok(());
        }
        last = std::time::Instant::now();
        report_progress(callback, p)
    }
}

/// Calls `callback(page_refs)` (if any) now, with the GIL held, after checking for signals: what
/// [`progress_callback`] does when its 100 ms are up, and a pass's last report (so that a display
/// ends at its total however short the pass).
pub fn report_progress(callback: Option<&Py<PyAny>>, p: &Progress) -> Result<(), Error> {
    Python::attach(|py| {
        let r = py.check_signals().and_then(|_| match callback {
            Some(cb) => cb.call1(py, (p.page_refs,)).map(|_| ()),
            None => Ok(()),
        });
        r.map_err(|e| {
            PENDING_PY_ERR.with(|slot| *slot.borrow_mut() = Some(e));
            Error::Interrupted
        })
    })
}

/// Parses a JSON argument, naming it on error.
pub fn json_arg<T: DeserializeOwned>(name: &str, text: &str) -> PyResult<T> {
    serde_json::from_str(text).map_err(|e| ConfigError::new_err(format!("{name}: {e}")))
}
