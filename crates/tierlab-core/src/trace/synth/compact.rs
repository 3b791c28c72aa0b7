//! The compact form of a generator spec (`zipf:alpha=1.0,pages=1000,n=5000`, see the module
//! docs of `trace::synth`), turned into the same table the options of format `synth` are.

use super::spec::{GenSpec, GENERATORS};
use crate::error::{Error, Result};
use std::path::Path;

/// Parses a compact spec such as `zipf:alpha=1.0,pages=1000,n=5000`.
pub fn parse_spec(text: &str) -> Result<GenSpec> {
    let table = spec_to_table(text).map_err(|m| bad_spec(text, &m))?;
    let spec = GenSpec::try_from(table).map_err(|m| bad_spec(text, &m))?;
    spec.validate(true).map_err(|m| bad_spec(text, &m))?;
    Ok(spec)
}

fn bad_spec(text: &str, msg: &str) -> Error {
    Error::config(format!(
        "synthetic trace '{text}': {}",
        msg.trim().replace('\n', " ")
    ))
}

/// Whether `path` is a generator spec rather than a file name: it starts with
/// a generator name and `:`, and no file of that name exists.
pub fn looks_like_spec(path: &Path) -> bool {
    let Some(s) = path.to_str() else {
        return false;
    };
    GENERATORS
        .iter()
        .any(|g| s.strip_prefix(g).is_some_and(|r| r.starts_with(':')))
        && !path.exists()
}

/// Splits at top-level separators (outside parentheses).
fn split_top(s: &str, seps: &[char]) -> std::result::Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for ch in s.chars() {
        match ch {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return Err("unbalanced ')'".into());
                }
            }
            _ => {}
        }
        if depth == 0 && seps.contains(&ch) {
            out.push(std::mem::take(&mut cur));
        } else {
            cur.push(ch);
        }
    }
    if depth != 0 {
        return Err("unbalanced '('".into());
    }
    out.push(cur);
    Ok(out)
}

/// `NAME:BODY` to a table with `generator = NAME`.
fn spec_to_table(text: &str) -> std::result::Result<toml::Table, String> {
    let (name, body) = text
        .split_once(':')
        .ok_or_else(|| format!("expected NAME:KEY=VALUE,... with NAME one of {GENERATORS:?}"))?;
    gen_table(name.trim(), body)
}

fn gen_table(name: &str, body: &str) -> std::result::Result<toml::Table, String> {
    if !GENERATORS.contains(&name) {
        return Err(format!(
            "unknown generator '{name}'; expected one of: {}",
            GENERATORS.join(", ")
        ));
    }
    let mut t = toml::Table::new();
    t.insert("generator".into(), toml::Value::String(name.into()));
    let composite = name == "mix" || name == "phases";
    let mut components = Vec::new();
    for item in split_top(body, if composite { &[',', '+'] } else { &[','] })? {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        let paren = item.find('(');
        let eq = item.find('=');
        let is_component = match (paren, eq) {
            (Some(p), Some(e)) => p < e,
            (Some(_), None) => true,
            _ => false,
        };
        if is_component {
            if !composite {
                return Err(format!("'{item}': only mix and phases take components"));
            }
            components.push(toml::Value::Table(component_table(item)?));
        } else {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| format!("'{item}': expected KEY=VALUE"))?;
            let k = k.trim();
            if k == "generator" || k == "components" {
                return Err(format!("'{k}' is not a key of the compact form"));
            }
            if t.insert(k.into(), parse_value(v.trim())).is_some() {
                return Err(format!("key '{k}' given twice"));
            }
        }
    }
    if composite {
        t.insert("components".into(), toml::Value::Array(components));
    }
    Ok(t)
}

/// `[WEIGHT*]NAME(BODY)`.
fn component_table(item: &str) -> std::result::Result<toml::Table, String> {
    let open = item.find('(').expect("checked by the caller");
    let head = item[..open].trim();
    let Some(inner) = item[open + 1..].strip_suffix(')') else {
        return Err(format!("'{item}': expected NAME(KEY=VALUE,...)"));
    };
    let (weight, name) = match head.split_once('*') {
        Some((w, n)) => {
            let w: f64 = w
                .trim()
                .parse()
                .map_err(|_| format!("'{item}': bad weight '{}'", w.trim()))?;
            (Some(w), n.trim())
        }
        None => (None, head),
    };
    let mut t = gen_table(name, inner)?;
    if let Some(w) = weight {
        if t.insert("weight".into(), toml::Value::Float(w)).is_some() {
            return Err(format!("'{item}': weight given twice"));
        }
    }
    Ok(t)
}

fn parse_value(v: &str) -> toml::Value {
    let clean: String = v.chars().filter(|&c| c != '_').collect();
    if let Ok(i) = clean.parse::<i64>() {
        return toml::Value::Integer(i);
    }
    if let Ok(f) = clean.parse::<f64>() {
        let integral_exp = clean.contains(['e', 'E']) && !clean.contains('.');
        if integral_exp && f.fract() == 0.0 && f.abs() < 9.0e18 {
            return toml::Value::Integer(f as i64);
        }
        return toml::Value::Float(f);
    }
    toml::Value::String(v.to_string())
}
