//! Configuration errors name the key and the allowed values (issue 11):
//! unknown keys are errors, never silently ignored, for every registered
//! policy's parameters, the system spec, device TOML files and every trace
//! format's options; a bad enumerated value lists the accepted ones.

use tierlab_core::device::{DeviceCatalog, System, SystemSpec};
use tierlab_core::policy::{all_policies, PolicySpec};
use tierlab_core::sim::check::{check_policy, make_refs};
use tierlab_core::trace::{open, TraceSpec};

fn policy_err(text: &str, tiers: usize) -> String {
    let spec = PolicySpec::parse(text).unwrap();
    match check_policy(&spec, 8, tiers, &make_refs(&[(1, false)])) {
        Ok(_) => panic!("{text}: accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn every_policy_names_an_unknown_parameter_and_its_parameters() {
    for p in all_policies() {
        let msg = policy_err(&format!("{}(no_such_key=1)", p.name), p.min_tiers.max(1));
        assert!(
            msg.contains(&format!("policy '{}'", p.name))
                && msg.contains("unknown field `no_such_key`")
                && !msg.contains('\n'),
            "{}: {msg}",
            p.name
        );
        // The allowed keys: serde lists them, and the message also shows the
        // defaults (which name every key).
        let defaults: toml::Table = toml::from_str(&p.defaults).unwrap();
        for key in defaults.keys() {
            assert!(
                msg.contains(key.as_str()),
                "{}: {key} not named: {msg}",
                p.name
            );
        }
        if !defaults.is_empty() {
            assert!(msg.contains("expected"), "{}: {msg}", p.name);
        }
    }
    let msg = policy_err("no_such_policy", 1);
    assert!(
        msg.contains("no_such_policy") && msg.contains("lru") && msg.contains("clock"),
        "{msg}"
    );
}

#[test]
fn system_spec_and_devices_name_keys_and_allowed_values() {
    let e = toml::from_str::<SystemSpec>("tierz = [\"dram\"]")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("unknown field `tierz`")
            && ["tiers", "file_store", "swap", "write_miss_fetch"]
                .iter()
                .all(|k| e.contains(k)),
        "{e}"
    );
    // An unknown device names itself and the known ones.
    let spec = SystemSpec {
        tiers: vec!["dramm".into()],
        ..SystemSpec::default()
    };
    let e = System::resolve(&spec, &DeviceCatalog::default())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("dramm") && e.contains("nvme"), "{e}");
    // A device file: unknown key lists the allowed ones; a bad class lists the classes.
    let mut cat = DeviceCatalog::default();
    let e = cat
        .load_toml_str("[[device]]\nname = \"x\"\nlatency = 3\n", "mine.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("mine.toml") && e.contains("`latency`") && e.contains("expected one of"),
        "{e}"
    );
}

#[test]
fn trace_options_list_allowed_values() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.txt");
    std::fs::write(&p, "1\n").unwrap();
    let mut spec = TraceSpec::new(&p).with_format("txt");
    spec.options
        .insert("adressing".into(), toml::Value::String("block".into()));
    let e = open(&spec).err().unwrap().to_string();
    assert!(
        e.contains("'txt'") && e.contains("`adressing`") && e.contains("addressing"),
        "{e}"
    );
    let mut spec = TraceSpec::new(&p).with_format("txt");
    spec.options
        .insert("addressing".into(), toml::Value::String("blob".into()));
    let e = open(&spec).err().unwrap().to_string();
    assert!(
        e.contains("blob") && e.contains("object") && e.contains("block"),
        "{e}"
    );
}
