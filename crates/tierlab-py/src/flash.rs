//! Flash tools (papers/bs-clock-flash-buffer.md): record the after-cache trace
//! of one policy run, cost it on a device model, and replay it on a real file
//! or block device with O_DIRECT.

use crate::catalog;
use crate::common::{guard, json_arg, to_py_err};
use pyo3::prelude::*;
use std::path::Path;
use tierlab_core::device::replay::{
    model_time, read_device_log, replay, save_device_log, CursorMode, ReplayOptions,
};
use tierlab_core::device::{System, SystemSpec};
use tierlab_core::policy::PolicySpec;
use tierlab_core::sim::accounting::Store;
use tierlab_core::sim::engine::{run as engine_run, InstanceSpec, RunOptions};
use tierlab_core::sim::results::{rows, Value};
use tierlab_core::trace::Op;
use tierlab_core::Error;

fn json_of(v: &Value) -> serde_json::Value {
    match v {
        Value::Int(i) => (*i).into(),
        Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(serde_json::Value::Number)
            .unwrap_or(serde_json::Value::Null),
        Value::Str(s) => s.clone().into(),
    }
}

fn store_arg(store: Option<&str>) -> PyResult<Option<Store>> {
    match store {
        None => Ok(None),
        Some("file") => Ok(Some(Store::File)),
        Some("swap") => Ok(Some(Store::Swap)),
        Some(o) => Err(crate::common::ConfigError::new_err(format!(
            "store: expected 'file' or 'swap', got '{o}'"
        ))),
    }
}

/// Runs `trace` through one policy at `size` pages on `system`, writes the
/// after-cache trace (every device request the cache issued) to `out`, and
/// returns JSON `{"row": {...}, "requests": n, "write_sizes": {pages: count}}`
/// (`write_sizes`: file-store write requests by exact size in pages).
#[pyfunction]
#[pyo3(signature = (trace, policy, size, system, out, device_files=vec![]))]
fn after_cache_trace(
    py: Python<'_>,
    trace: &str,
    policy: &str,
    size: usize,
    system: &str,
    out: &str,
    device_files: Vec<String>,
) -> PyResult<String> {
    let mut all = record_after_cache(
        py,
        trace,
        &[policy.to_string()],
        size,
        system,
        &[out.to_string()],
        &device_files,
    )?;
    Ok(all.remove(0).to_string())
}

/// [`after_cache_trace`] for several policies as instances of one pass over
/// `trace`: policy `i`'s after-cache trace goes to `outs[i]`; returns a JSON
/// list of what `after_cache_trace` returns for each, in order (the same
/// counts and requests as separate runs: instances share nothing but the
/// references they read).
#[pyfunction]
#[pyo3(signature = (trace, policies, size, system, outs, device_files=vec![]))]
fn after_cache_traces(
    py: Python<'_>,
    trace: &str,
    policies: Vec<String>,
    size: usize,
    system: &str,
    outs: Vec<String>,
    device_files: Vec<String>,
) -> PyResult<String> {
    if policies.len() != outs.len() {
        return Err(crate::common::ConfigError::new_err(format!(
            "outs: expected one path per policy ({}), got {}",
            policies.len(),
            outs.len()
        )));
    }
    let all = record_after_cache(py, trace, &policies, size, system, &outs, &device_files)?;
    Ok(serde_json::Value::Array(all).to_string())
}

fn record_after_cache(
    py: Python<'_>,
    trace: &str,
    policies: &[String],
    size: usize,
    system: &str,
    outs: &[String],
    device_files: &[String],
) -> PyResult<Vec<serde_json::Value>> {
    let spec = crate::trace::trace_spec(trace)?;
    let sys_spec: SystemSpec = json_arg("system", system)?;
    let inst = policies
        .iter()
        .map(|p| {
            Ok(InstanceSpec {
                policy: PolicySpec::parse(p).map_err(to_py_err)?,
                capacity: size,
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    py.detach(|| {
        guard(|| {
            let cat = catalog(device_files)?;
            let sys = System::resolve(&sys_spec, &cat)?;
            let mut reader = tierlab_core::trace::open(&spec)?;
            let opts = RunOptions {
                record_device_log: true,
                ..RunOptions::default()
            };
            let run = engine_run(reader.as_mut(), &inst, &sys, &opts, &mut |_| Ok(()))?;
            let rows = rows(&run, &sys);
            let mut all = Vec::with_capacity(outs.len());
            for ((result, row), out) in run.results.iter().zip(&rows).zip(outs) {
                let log = result.device_log.as_deref().unwrap_or_default();
                save_device_log(Path::new(out), log, run.page_size)?;
                let mut sizes = std::collections::BTreeMap::<u32, u64>::new();
                for r in log
                    .iter()
                    .filter(|r| r.store == Store::File && r.op == Op::Write)
                {
                    *sizes.entry(r.pages).or_default() += 1;
                }
                let row: serde_json::Map<String, serde_json::Value> =
                    row.iter().map(|(k, v)| (k.clone(), json_of(v))).collect();
                all.push(serde_json::json!({
                    "row": row,
                    "requests": log.len(),
                    "write_sizes": sizes,
                    "page_size": run.page_size,
                }));
            }
            Ok(all)
        })
    })
    .map_err(to_py_err)
}

fn cursor_arg(cursor: &str) -> PyResult<CursorMode> {
    match cursor {
        "per_direction" => Ok(CursorMode::PerDirection),
        "shared" => Ok(CursorMode::Shared),
        o => Err(crate::common::ConfigError::new_err(format!(
            "cursor: expected 'per_direction' or 'shared', got '{o}'"
        ))),
    }
}

fn modeled(
    log: &tierlab_core::device::replay::DeviceLog,
    store: Store,
    device: &str,
    mode: CursorMode,
    device_files: &[String],
) -> tierlab_core::Result<serde_json::Value> {
    let cat = catalog(device_files)?;
    let dev = cat.get(device)?;
    let m = model_time(&log.requests, store, dev, mode);
    Ok(serde_json::json!({
        "device": device,
        "read_ns": m.read_ns,
        "write_ns": m.write_ns,
        "total_ns": m.total_ns(),
        "reads": m.reads,
        "writes": m.writes,
        "sequential": m.sequential,
    }))
}

/// Modeled time of an after-cache trace file on a device model. `cursor`:
/// "per_direction" (as the engine charges) or "shared" (a read breaks a write
/// stream). Returns JSON with read/write times (ns) and request counts.
#[pyfunction]
#[pyo3(signature = (after_trace, device, store="file", cursor="per_direction", device_files=vec![]))]
fn model_after_cache(
    py: Python<'_>,
    after_trace: &str,
    device: &str,
    store: &str,
    cursor: &str,
    device_files: Vec<String>,
) -> PyResult<String> {
    let mode = cursor_arg(cursor)?;
    let store = store_arg(Some(store))?.unwrap_or(Store::File);
    py.detach(|| {
        guard(|| {
            let log = read_device_log(Path::new(after_trace))?;
            Ok(modeled(&log, store, device, mode, &device_files)?.to_string())
        })
    })
    .map_err(to_py_err)
}

/// [`model_after_cache`] under several pricings of one after-cache trace file,
/// read once: `pricings` is a list of `(device, cursor, device_files)`; returns
/// a JSON list of what `model_after_cache` returns for each, in order.
#[pyfunction]
#[pyo3(signature = (after_trace, pricings, store="file"))]
fn model_after_cache_many(
    py: Python<'_>,
    after_trace: &str,
    pricings: Vec<(String, String, Vec<String>)>,
    store: &str,
) -> PyResult<String> {
    let store = store_arg(Some(store))?.unwrap_or(Store::File);
    let modes = pricings
        .iter()
        .map(|(_, cursor, _)| cursor_arg(cursor))
        .collect::<PyResult<Vec<_>>>()?;
    py.detach(|| {
        guard(|| {
            let log = read_device_log(Path::new(after_trace))?;
            let all = pricings
                .iter()
                .zip(modes)
                .map(|((device, _, files), mode)| modeled(&log, store, device, mode, files))
                .collect::<tierlab_core::Result<Vec<_>>>()?;
            Ok(serde_json::Value::Array(all).to_string())
        })
    })
    .map_err(to_py_err)
}

/// Replays an after-cache trace file on `target` (a file, created if missing,
/// or with `allow_block_device` a block device) with O_DIRECT and returns the
/// measured times as JSON.
#[pyfunction]
#[pyo3(signature = (after_trace, target, region_bytes=None, allow_block_device=false, direct=true, store=None, only=None))]
#[allow(clippy::too_many_arguments)]
fn replay_device(
    py: Python<'_>,
    after_trace: &str,
    target: &str,
    region_bytes: Option<u64>,
    allow_block_device: bool,
    direct: bool,
    store: Option<&str>,
    only: Option<&str>,
) -> PyResult<String> {
    let only = match only {
        None => None,
        Some("reads") => Some(Op::Read),
        Some("writes") => Some(Op::Write),
        Some(o) => {
            return Err(crate::common::ConfigError::new_err(format!(
                "only: expected 'reads' or 'writes', got '{o}'"
            )))
        }
    };
    let opts = ReplayOptions {
        only,
        region_bytes,
        allow_block_device,
        direct,
        store: store_arg(store)?,
    };
    let (after_trace, target) = (after_trace.to_string(), target.to_string());
    py.detach(|| {
        guard(|| {
            let log = read_device_log(Path::new(&after_trace))?;
            let r = replay(&log, Path::new(&target), &opts)?;
            Ok::<_, Error>(
                serde_json::json!({
                    "after_trace": after_trace,
                    "target": target,
                    "requests": r.requests,
                    "reads": r.reads,
                    "writes": r.writes,
                    "pages_read": r.pages_read,
                    "pages_written": r.pages_written,
                    "read_ns": r.read_ns,
                    "write_ns": r.write_ns,
                    "fsync_ns": r.fsync_ns,
                    "io_ns": r.io_ns,
                    "page_size": r.page_size,
                    "region_bytes": r.region_bytes,
                    "direct": r.direct,
                })
                .to_string(),
            )
        })
    })
    .map_err(to_py_err)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(after_cache_trace, m)?)?;
    m.add_function(wrap_pyfunction!(after_cache_traces, m)?)?;
    m.add_function(wrap_pyfunction!(model_after_cache, m)?)?;
    m.add_function(wrap_pyfunction!(model_after_cache_many, m)?)?;
    m.add_function(wrap_pyfunction!(replay_device, m)?)?;
    Ok(())
}
