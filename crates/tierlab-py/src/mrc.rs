//! `tierlab._core.mrc`: miss-ratio curves (exact one-pass LRU, or SHARDS
//! sampling) for the `tierlab mrc` command.

use crate::common::{guard, to_py_err};
use crate::trace::trace_spec;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tierlab_core::sim::mrc::{lru_mrc, shards_mrc, Shards};

/// mrc(trace, sizes, shards_rate=None, shards_max_pages=None, seed=0)
///
/// LRU miss-ratio curve of `trace` (JSON `{"path", "format", "options"}`) at
/// `sizes` (pages). Exact (all sizes in one pass) unless `shards_rate`
/// (sampling rate in (0, 1]) or `shards_max_pages` (fixed-size SHARDS; the
/// initial rate is `shards_rate` or 0.1) is given. Returns a dict with
/// `sizes`, `misses`, `miss_ratios`, `accesses`, `distinct`, `sampled` and
/// `method` ("exact", "shards" or "shards-fixed-size").
#[pyfunction]
#[pyo3(signature = (trace, sizes, shards_rate=None, shards_max_pages=None, seed=0))]
fn mrc<'py>(
    py: Python<'py>,
    trace: &str,
    sizes: Vec<usize>,
    shards_rate: Option<f64>,
    shards_max_pages: Option<usize>,
    seed: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let spec = trace_spec(trace)?;
    let sampled = shards_rate.is_some() || shards_max_pages.is_some();
    let cfg = Shards {
        rate: shards_rate.unwrap_or(if shards_max_pages.is_some() {
            0.1
        } else {
            0.01
        }),
        max_pages: shards_max_pages,
        seed,
    };
    let m = py
        .detach(|| {
            guard(|| {
                let mut reader = tierlab_core::trace::open(&spec)?;
                if sampled {
                    shards_mrc(reader.as_mut(), &sizes, &cfg)
                } else {
                    lru_mrc(reader.as_mut(), &sizes)
                }
            })
        })
        .map_err(to_py_err)?;
    let d = PyDict::new(py);
    d.set_item("sizes", m.points.iter().map(|p| p.0).collect::<Vec<_>>())?;
    d.set_item("misses", m.points.iter().map(|p| p.1).collect::<Vec<_>>())?;
    d.set_item(
        "miss_ratios",
        m.ratios().iter().map(|p| p.1).collect::<Vec<_>>(),
    )?;
    d.set_item("accesses", m.accesses)?;
    d.set_item("distinct", m.distinct)?;
    d.set_item("sampled", m.sampled)?;
    let method = match (sampled, shards_max_pages) {
        (false, _) => "exact",
        (true, None) => "shards",
        (true, Some(_)) => "shards-fixed-size",
    };
    d.set_item("method", method)?;
    Ok(d)
}

/// Adds `mrc` to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(mrc, m)?)
}
