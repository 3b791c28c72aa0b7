//! Bindings of the mobile session simulator (`tierlab_core::mobile`):
//! `mobile_run` runs a scenario and returns its records as JSON;
//! `mobile_minfree` is ProcessList's minfree computation.

use crate::common::{guard, json_arg, to_py_err, ConfigError};
use pyo3::prelude::*;
use std::path::Path;
use tierlab_core::device::DeviceCatalog;
use tierlab_core::mobile::lmk::{compute_minfree_kb, MinfreeTable, OomLevelInputs};
use tierlab_core::mobile::{run_session, Scenario};

/// Runs a session. `scenario` is a TOML file path, or TOML text when
/// `is_text`; `overrides` is a JSON object merged over it (e.g.
/// `{"swap": {"device": "zram-gs2"}}`); `device_files` add devices (TOML).
/// Returns JSON `{"launches", "kills", "memory", "apps", "totals", "lmk",
/// "minfree_kb", "swap_device", "file_store"}`. Releases the GIL.
#[pyfunction]
#[pyo3(signature = (scenario, overrides="{}", is_text=false, base_dir=None, device_files=vec![]))]
fn mobile_run(
    py: Python<'_>,
    scenario: &str,
    overrides: &str,
    is_text: bool,
    base_dir: Option<String>,
    device_files: Vec<String>,
) -> PyResult<String> {
    let over: toml::Table = json_arg("overrides", overrides)?;
    let scenario = scenario.to_string();
    py.detach(move || {
        guard(|| {
            let mut cat = DeviceCatalog::default();
            for f in &device_files {
                cat.load_toml_file(Path::new(f))?;
            }
            let sc = if is_text {
                let mut sc = Scenario::from_toml_str_with(&scenario, "<scenario>", &over)?;
                sc.resolve_paths(base_dir.as_deref().map(Path::new));
                sc
            } else {
                Scenario::from_toml_file_with(Path::new(&scenario), &over)?
            };
            let r = run_session(&sc, &cat)?;
            serde_json::to_string(&r).map_err(|e| tierlab_core::Error::config(e.to_string()))
        })
    })
    .map_err(to_py_err)
}

/// ProcessList.updateOomLevels: the six minfree levels (KB) for a phone.
#[pyfunction]
#[pyo3(signature = (memory_mb, display_w=480, display_h=800, table="kitkat", mem_lo_mb=350, mem_hi_mb=700, minfree_abs_kb=-1, minfree_adj_kb=0))]
#[allow(clippy::too_many_arguments)]
fn mobile_minfree(
    memory_mb: i64,
    display_w: i64,
    display_h: i64,
    table: &str,
    mem_lo_mb: i64,
    mem_hi_mb: i64,
    minfree_abs_kb: i64,
    minfree_adj_kb: i64,
) -> PyResult<Vec<i64>> {
    let table = match table {
        "kitkat" => MinfreeTable::Kitkat,
        "jellybean" => MinfreeTable::Jellybean,
        other => {
            return Err(ConfigError::new_err(format!(
                "table: unknown '{other}'; expected kitkat or jellybean"
            )))
        }
    };
    if mem_hi_mb <= mem_lo_mb {
        return Err(ConfigError::new_err(
            "mem_hi_mb must be greater than mem_lo_mb",
        ));
    }
    Ok(compute_minfree_kb(
        table,
        &OomLevelInputs {
            total_mem_mb: memory_mb,
            display_w,
            display_h,
            mem_lo_mb,
            mem_hi_mb,
            minfree_abs_kb,
            minfree_adj_kb,
        },
    )
    .to_vec())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(mobile_run, m)?)?;
    m.add_function(wrap_pyfunction!(mobile_minfree, m)?)
}
