//! Trace access from Python: opening by spec, summaries, and record batches as
//! numpy arrays (for Parquet export and analysis in pandas).

use crate::common::{guard, json_arg, progress_callback, report_progress, to_py_err};
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde::Deserialize;
use tierlab_core::sim::engine::Progress;
use tierlab_core::trace::{Record, TraceReader, TraceSpec};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TraceArg {
    path: String,
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    options: toml::Table,
}

/// Parses the JSON trace argument `{"path", "format", "options"}`.
pub fn trace_spec(json: &str) -> PyResult<TraceSpec> {
    let a: TraceArg = json_arg("trace", json)?;
    Ok(TraceSpec {
        path: a.path.into(),
        format: a.format,
        options: a.options,
    })
}

/// Summarises a trace (JSON text of `TraceInfo`). Releases the GIL; calls `callback(page_refs)`
/// (if given) at most every 100 ms, as `run` does, and once more at the end; Ctrl-C or an
/// exception from it stops the pass.
#[pyfunction]
#[pyo3(signature = (trace, limit=None, callback=None))]
fn trace_info(
    py: Python<'_>,
    trace: &str,
    limit: Option<u64>,
    callback: Option<Py<PyAny>>,
) -> PyResult<String> {
    let spec = trace_spec(trace)?;
    py.detach(|| {
        guard(|| {
            let mut reader = tierlab_core::trace::open(&spec)?;
            let mut progress = progress_callback(callback.as_ref());
            let info =
                tierlab_core::trace::info::summarize_with(reader.as_mut(), limit, &mut progress)?;
            // The last report, with the trace still open (its file read to the end).
            let last = Progress {
                page_refs: info.page_refs,
                requests: info.requests,
            };
            report_progress(callback.as_ref(), &last)?;
            Ok(serde_json::to_string(&info).unwrap_or_default())
        })
    })
    .map_err(to_py_err)
}

/// Iterates over a trace in batches of records, each a dict of numpy arrays:
/// `time`, `page`, `npages` (u64/u32), `size` (u32: the object size in bytes the format
/// gives, 0 if none), `op` (0 read, 1 write), `kind` (0 file,
/// 1 anon), `app` (u32), `event` (255 for accesses, else the event kind:
/// 0 launch, 1 foreground, 2 background, 3 exit).
#[pyclass(unsendable)]
struct TraceBatches {
    reader: Option<Box<dyn TraceReader>>,
    batch: usize,
    done: bool,
}

#[pymethods]
impl TraceBatches {
    #[new]
    #[pyo3(signature = (trace, batch=1 << 20))]
    fn new(trace: &str, batch: usize) -> PyResult<Self> {
        let spec = trace_spec(trace)?;
        let reader = guard(|| tierlab_core::trace::open(&spec)).map_err(to_py_err)?;
        Ok(TraceBatches {
            reader: Some(reader),
            batch: batch.max(1),
            done: false,
        })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn page_size(&self) -> u32 {
        self.reader.as_ref().map(|r| r.page_size()).unwrap_or(0)
    }

    fn app_names(&self) -> Vec<String> {
        self.reader
            .as_ref()
            .map(|r| r.app_names())
            .unwrap_or_default()
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        if self.done {
            return Ok(None);
        }
        let Some(reader) = self.reader.as_mut() else {
            return Ok(None);
        };
        let batch = self.batch;
        let (records, more) = py
            .detach(|| {
                guard(|| {
                    let mut out = Vec::with_capacity(batch);
                    let more = reader.read_batch(&mut out, batch)?;
                    Ok((out, more))
                })
            })
            .map_err(to_py_err)?;
        if !more {
            self.done = true;
        }
        if records.is_empty() {
            return Ok(None);
        }
        let n = records.len();
        let (mut time, mut page, mut npages, mut size) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        let (mut op, mut kind, mut app, mut event) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        for r in &records {
            match r {
                Record::Access(a) => {
                    time.push(a.time);
                    page.push(a.page);
                    npages.push(a.npages);
                    size.push(a.size);
                    op.push(a.op as u8);
                    kind.push(a.kind as u8);
                    app.push(a.app);
                    event.push(255u8);
                }
                Record::Event(e) => {
                    time.push(e.time);
                    page.push(0);
                    npages.push(0);
                    size.push(0u32);
                    op.push(0);
                    kind.push(0);
                    app.push(e.app);
                    event.push(e.kind as u8);
                }
            }
        }
        let d = PyDict::new(py);
        d.set_item("time", time.into_pyarray(py))?;
        d.set_item("page", page.into_pyarray(py))?;
        d.set_item("npages", npages.into_pyarray(py))?;
        d.set_item("size", size.into_pyarray(py))?;
        d.set_item("op", op.into_pyarray(py))?;
        d.set_item("kind", kind.into_pyarray(py))?;
        d.set_item("app", app.into_pyarray(py))?;
        d.set_item("event", event.into_pyarray(py))?;
        Ok(Some(d))
    }
}

/// Format names the readers accept.
#[pyfunction]
fn formats() -> Vec<&'static str> {
    tierlab_core::trace::readers::FORMAT_NAMES.to_vec()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(trace_info, m)?)?;
    m.add_function(wrap_pyfunction!(formats, m)?)?;
    m.add_class::<TraceBatches>()?;
    Ok(())
}
