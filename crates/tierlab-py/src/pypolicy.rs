//! Policies written in Python (`tierlab.PythonPolicy`): the core's `External` policy with
//! callbacks that call the Python object's `on_hit`, `evict` and `on_miss` under the GIL. A
//! Python exception becomes the policy's error (the run stops after the batch) and is kept, so
//! that `run` raises `tierlab.PolicyError` naming the policy, with the exception as its cause.
//!
//! A class with `request_info = True` gets the reference's position, time and size as well:
//! `on_hit(page, seq, time, size)` and likewise `evict` and `on_miss` (the core's
//! [`RefInfo`]); without it the callbacks take the page alone, as before.
//!
//! The same callbacks serve object-size mode (`run(..., object_sizes=True)`): the engine runs
//! the `External` built here as its object-size variant (`External::into_object_mode`), the
//! capacity is in bytes, `page` is the object's id and `size` its size in bytes.

use pyo3::prelude::*;
use std::sync::{Arc, Mutex};
use tierlab_core::policy::external::{External, ExternalPolicy, Host, RefInfo};

/// Python's interpreter lock, held by a replay thread across a batch of callbacks (see [`Host`]).
struct Interpreter;

impl Host for Interpreter {
    fn enter(&self, body: &mut dyn FnMut()) {
        Python::attach(|_| body());
    }
}

pyo3::import_exception!(tierlab.errors, PolicyError);

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("PolicyError", m.py().get_type::<PolicyError>())
}

/// The error of a run in which a Python policy raised: `PolicyError(message)` from the exception.
pub fn policy_error(py: Python<'_>, msg: String, cause: PyErr) -> PyErr {
    let e = PolicyError::new_err(msg);
    e.set_cause(py, Some(cause));
    e
}

/// The first Python exception raised by a policy callback during a run.
pub type Pending = Arc<Mutex<Option<PyErr>>>;

struct PyPolicy {
    on_hit: Py<PyAny>,
    evict: Py<PyAny>,
    on_miss: Py<PyAny>,
    /// The class asked for `(page, seq, time, size)` (`request_info = True`).
    info: bool,
    pending: Pending,
}

impl PyPolicy {
    fn keep(&self, py: Python<'_>, e: PyErr) -> String {
        let msg = e.to_string();
        let mut slot = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(e.clone_ref(py));
        }
        msg
    }
}

impl PyPolicy {
    /// Calls `f` with `(page,)`, or `(page, seq, time, size)` when the class asked for them.
    fn call(&self, py: Python<'_>, f: &Py<PyAny>, page: u64, i: RefInfo) -> PyResult<Py<PyAny>> {
        if self.info {
            f.call1(py, (page, i.seq, i.time, i.size))
        } else {
            f.call1(py, (page,))
        }
    }
}

impl ExternalPolicy for PyPolicy {
    fn hit(&mut self, page: u64) -> Result<(), String> {
        self.hit_at(
            page,
            RefInfo {
                seq: 0,
                time: 0,
                size: 1,
            },
        )
    }

    fn evict(&mut self, page: u64) -> Result<u64, String> {
        self.evict_at(
            page,
            RefInfo {
                seq: 0,
                time: 0,
                size: 1,
            },
        )
    }

    fn miss(&mut self, page: u64) -> Result<(), String> {
        self.miss_at(
            page,
            RefInfo {
                seq: 0,
                time: 0,
                size: 1,
            },
        )
    }

    fn host(&self) -> Option<Arc<dyn Host>> {
        Some(Arc::new(Interpreter))
    }

    fn hit_at(&mut self, page: u64, info: RefInfo) -> Result<(), String> {
        Python::attach(|py| {
            self.call(py, &self.on_hit, page, info)
                .map(|_| ())
                .map_err(|e| self.keep(py, e))
        })
    }

    fn evict_at(&mut self, page: u64, info: RefInfo) -> Result<u64, String> {
        Python::attach(|py| {
            let v = self
                .call(py, &self.evict, page, info)
                .map_err(|e| self.keep(py, e))?;
            v.extract::<u64>(py).map_err(|e| {
                let msg = format!(
                    "must return a resident page number (an object id in object-size mode) as an \
                     int: {e}"
                );
                self.keep(py, pyo3::exceptions::PyTypeError::new_err(msg))
            })
        })
    }

    fn miss_at(&mut self, page: u64, info: RefInfo) -> Result<(), String> {
        Python::attach(|py| {
            self.call(py, &self.on_miss, page, info)
                .map(|_| ())
                .map_err(|e| self.keep(py, e))
        })
    }
}

/// Builds the core policy for one Python policy object (its bound methods are looked up once).
pub fn external(
    py: Python<'_>,
    name: &str,
    capacity: usize,
    obj: &Py<PyAny>,
    pending: &Pending,
) -> PyResult<External> {
    let o = obj.bind(py);
    let p = PyPolicy {
        on_hit: o.getattr("on_hit")?.unbind(),
        evict: o.getattr("evict")?.unbind(),
        on_miss: o.getattr("on_miss")?.unbind(),
        info: o
            .getattr("request_info")
            .and_then(|v| v.is_truthy())
            .unwrap_or(false),
        pending: pending.clone(),
    };
    Ok(External::new(name, capacity, Box::new(p)))
}
