//! pyo3 glue only: the `tierlab._core` module. Arguments and results cross the
//! boundary as JSON text or numpy arrays; the Python package gives them shape.
//! Long calls release the GIL and check for Ctrl-C after every batch; panics are
//! caught here and never cross into Python.

mod common;
mod flash;
mod kernel;
mod mobile;
mod mrc;
mod native;
mod pypolicy;
mod readers;
mod trace;

use common::{guard, json_arg, to_py_err, PyTierlabError};
use pyo3::prelude::*;
use serde::Deserialize;
use tierlab_core::device::{DeviceCatalog, System, SystemSpec};
use tierlab_core::policy::{all_policies, PolicySpec};
use tierlab_core::sim::engine::{run_with_external as engine_run, InstanceSpec, RunOptions};
use tierlab_core::sim::results::{rows, variant_rows, Row, Value};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InstanceArg {
    policy: String,
    #[serde(default)]
    params: toml::Table,
    size: usize,
}

/// Loads the device catalog: presets plus the given TOML files.
fn catalog(device_files: &[String]) -> tierlab_core::Result<DeviceCatalog> {
    let mut cat = DeviceCatalog::default();
    for f in device_files {
        cat.load_toml_file(std::path::Path::new(f))?;
    }
    Ok(cat)
}

fn value_json(v: &Value) -> serde_json::Value {
    match v {
        Value::Int(i) => serde_json::Value::from(*i),
        Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(serde_json::Value::Number)
            .unwrap_or(serde_json::Value::Null),
        Value::Str(s) => serde_json::Value::from(s.clone()),
    }
}

/// Replays one trace through many policy instances in one pass.
///
/// `trace`: JSON `{"path", "format", "options"}`; `instances`: JSON list of
/// `{"policy", "params", "size"}`; `system`: JSON system spec; `object_sizes`: object-size
/// mode (sizes are bytes); `external`: policies written in Python, `(name, size, object)` with
/// `on_hit`, `evict` and `on_miss` methods (page mode only; their rows follow those of
/// `instances`); `variants`: further systems to price every instance under, each
/// `(system JSON, device files)` whose devices are read from the presets, `device_files` and then
/// its own files, differing from `system` in device costs only (`RunOptions::variants`).
/// Returns JSON `{"rows": [...], "variant_rows": [[...] per variant], "meta": {...}}`.
#[pyfunction]
#[pyo3(signature = (trace, instances, system, device_files=vec![], threads=1, limit=None, callback=None, object_sizes=false, external=vec![], variants=vec![]))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    trace: &str,
    instances: &str,
    system: &str,
    device_files: Vec<String>,
    threads: usize,
    limit: Option<u64>,
    callback: Option<Py<PyAny>>,
    object_sizes: bool,
    external: Vec<(String, usize, Py<PyAny>)>,
    variants: Vec<(String, Vec<String>)>,
) -> PyResult<String> {
    let spec = trace::trace_spec(trace)?;
    let pending = pypolicy::Pending::default();
    let external = external
        .iter()
        .map(|(name, size, obj)| pypolicy::external(py, name, *size, obj, &pending))
        .collect::<PyResult<Vec<_>>>()?;
    let inst: Vec<InstanceArg> = json_arg("instances", instances)?;
    let sys_spec: SystemSpec = json_arg("system", system)?;
    let variant_specs = variants
        .iter()
        .map(|(spec, files)| {
            let spec: SystemSpec = json_arg("variants", spec)?;
            Ok((spec, [device_files.as_slice(), files].concat()))
        })
        .collect::<PyResult<Vec<_>>>()?;
    let instances: Vec<InstanceSpec> = inst
        .into_iter()
        .map(|i| InstanceSpec {
            policy: PolicySpec {
                name: i.policy,
                params: i.params,
            },
            capacity: i.size,
        })
        .collect();
    let mut opts = RunOptions {
        threads,
        limit,
        object_sizes,
        ..RunOptions::default()
    };
    let out = py.detach(|| {
        guard(|| {
            let cat = catalog(&device_files)?;
            let sys = System::resolve(&sys_spec, &cat)?;
            opts.variants = variant_specs
                .iter()
                .map(|(spec, files)| System::resolve(spec, &catalog(files)?))
                .collect::<tierlab_core::Result<_>>()?;
            let mut reader = tierlab_core::trace::open(&spec)?;
            let mut progress = common::progress_callback(callback.as_ref());
            let out = engine_run(
                reader.as_mut(),
                &instances,
                external,
                &sys,
                &opts,
                &mut progress,
            )?;
            let to_json = |rows: Vec<Row>| -> Vec<serde_json::Value> {
                rows.iter()
                    .map(|r| {
                        serde_json::Value::Object(
                            r.iter().map(|(k, v)| (k.clone(), value_json(v))).collect(),
                        )
                    })
                    .collect()
            };
            let variant_rows: Vec<Vec<serde_json::Value>> = opts
                .variants
                .iter()
                .enumerate()
                .map(|(k, v)| to_json(variant_rows(&out, k, v)))
                .collect();
            let rows = to_json(rows(&out, &sys));
            let meta = serde_json::json!({
                "page_refs": out.page_refs,
                "requests": out.requests,
                "events": out.events,
                "distinct_pages": out.distinct_pages,
                "page_size": out.page_size,
                "object_sizes": out.object_sizes,
                "byte_accesses": out.byte_accesses,
                "apps": out.app_names,
                "elapsed_s": out.elapsed_s,
                "format": reader.format(),
            });
            Ok(
                serde_json::json!({"rows": rows, "variant_rows": variant_rows, "meta": meta})
                    .to_string(),
            )
        })
    });
    out.map_err(|f| {
        let cause = pending.lock().unwrap_or_else(|p| p.into_inner()).take();
        match (f, cause) {
            (common::Failure::Core(e), Some(cause)) => {
                pypolicy::policy_error(py, e.to_string(), cause)
            }
            (f, _) => to_py_err(f),
        }
    })
}

/// Registered policies as JSON.
#[pyfunction]
fn policies() -> PyResult<String> {
    serde_json::to_string(&all_policies()).map_err(|e| PyTierlabError::new_err(e.to_string()))
}

/// Admission policies as JSON.
#[pyfunction]
fn admissions() -> PyResult<String> {
    serde_json::to_string(&tierlab_core::policy::admission::all_admissions())
        .map_err(|e| PyTierlabError::new_err(e.to_string()))
}

/// Device presets (plus devices from TOML files) as JSON.
#[pyfunction]
#[pyo3(signature = (device_files=vec![]))]
fn devices(device_files: Vec<String>) -> PyResult<String> {
    let cat = catalog(&device_files).map_err(to_py_err)?;
    let list: Vec<_> = cat.iter().collect();
    serde_json::to_string(&list).map_err(|e| PyTierlabError::new_err(e.to_string()))
}

/// Checks a policy spec string such as `clock(bits=2)` and returns it as JSON
/// `{"name", "params"}`.
#[pyfunction]
fn parse_policy(text: &str) -> PyResult<String> {
    let spec = PolicySpec::parse(text).map_err(to_py_err)?;
    tierlab_core::policy::policy_info(&spec.name).map_err(to_py_err)?;
    spec.split_admission().map_err(to_py_err)?;
    let params =
        serde_json::to_value(&spec.params).map_err(|e| PyTierlabError::new_err(e.to_string()))?;
    Ok(serde_json::json!({"name": spec.name, "params": params}).to_string())
}

mod capture;
/// The benchmark floor on a trace's dense id stream (or, `over_refs`, on the engine's reference
/// stream): seconds per repeat.
#[pyfunction]
#[pyo3(signature = (trace, repeats=3, over_refs=false))]
fn bench_floor(py: Python<'_>, trace: &str, repeats: usize, over_refs: bool) -> PyResult<Vec<f64>> {
    let spec = trace::trace_spec(trace)?;
    py.detach(|| {
        guard(|| {
            use tierlab_core::sim::bench;
            let mut reader = tierlab_core::trace::open(&spec)?;
            let (refs, distinct) = bench::dense_refs(reader.as_mut())?;
            if over_refs {
                return Ok((0..repeats)
                    .map(|_| bench::floor_refs(&refs, distinct, RunOptions::default().batch).0)
                    .collect());
            }
            let ids: Vec<u32> = refs.iter().map(|r| r.id).collect();
            drop(refs);
            Ok((0..repeats)
                .map(|_| bench::floor(&ids, distinct).0)
                .collect())
        })
    })
    .map_err(to_py_err)
}

/// The leanest CLOCK or LRU (`policy` = "clock" or "lru") over a trace's dense ids at
/// `capacity` pages, no sink (`tierlab_core::sim::bench::clock_kernel`): (seconds per repeat,
/// misses). What those policies can do on this machine, to read the floor ratios against.
#[pyfunction]
#[pyo3(signature = (trace, policy, capacity, repeats=3))]
fn bench_kernel(
    py: Python<'_>,
    trace: &str,
    policy: &str,
    capacity: usize,
    repeats: usize,
) -> PyResult<(Vec<f64>, u64)> {
    use tierlab_core::sim::bench;
    let spec = trace::trace_spec(trace)?;
    let kernel: fn(&[u32], usize, usize) -> (f64, u64) = match policy {
        "clock" => bench::clock_kernel,
        "lru" => bench::lru_kernel,
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "bench_kernel: policy must be 'clock' or 'lru', got '{other}'"
            )))
        }
    };
    py.detach(|| {
        guard(|| {
            let mut reader = tierlab_core::trace::open(&spec)?;
            let (ids, distinct) = bench::dense_ids(reader.as_mut())?;
            let mut misses = 0;
            let secs = (0..repeats.max(1))
                .map(|_| {
                    let (s, m) = kernel(&ids, distinct, capacity);
                    misses = m;
                    s
                })
                .collect();
            Ok((secs, misses))
        })
    })
    .map_err(to_py_err)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // A panic becomes a one-line `TierlabError` (`common::guard`); the default hook would also
    // print its message and, with RUST_BACKTRACE set, a backtrace on stderr.
    std::panic::set_hook(Box::new(|_| {}));
    common::register_exceptions(m)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(policies, m)?)?;
    m.add_function(wrap_pyfunction!(admissions, m)?)?;
    m.add_function(wrap_pyfunction!(devices, m)?)?;
    m.add_function(wrap_pyfunction!(parse_policy, m)?)?;
    m.add_function(wrap_pyfunction!(bench_floor, m)?)?;
    m.add_function(wrap_pyfunction!(bench_kernel, m)?)?;
    trace::register(m)?;
    capture::register(m)?;
    mobile::register(m)?;
    native::register(m)?;
    readers::register(m)?;
    mrc::register(m)?;
    flash::register(m)?;
    kernel::register(m)?;
    pypolicy::register(m)?;
    Ok(())
}
