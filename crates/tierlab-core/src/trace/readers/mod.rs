//! Trace readers, one file per format, and the table that maps format names to
//! them. Each reader parses its options into a typed struct that rejects
//! unknown keys.

mod arc;
mod lirs;

use crate::error::{Error, Result};
use crate::trace::TraceReader;
use serde::de::DeserializeOwned;
use std::path::Path;

pub use arc::ArcReader;
pub use lirs::LirsReader;

/// Every format name `open_format` accepts.
pub const FORMAT_NAMES: &[&str] = &["lirs", "arc", "native", "synth"];

/// Opens `path` as `format`.
pub fn open_format(
    format: &str,
    path: &Path,
    options: &toml::Table,
) -> Result<Box<dyn TraceReader>> {
    Ok(match format {
        "lirs" => Box::new(LirsReader::open(path, parse_options(format, options)?)?),
        "arc" => Box::new(ArcReader::open(path, parse_options(format, options)?)?),
        "native" => Box::new(crate::trace::native::NativeReader::open(
            path,
            parse_options(format, options)?,
        )?),
        "synth" => crate::trace::synth::open(path, options)?,
        other => {
            return Err(Error::config(format!(
                "unknown trace format '{other}'; expected one of: {}",
                FORMAT_NAMES.join(", ")
            )))
        }
    })
}

/// Guesses a format from a file name with compression suffixes removed.
pub fn guess_from_name(stem: &str) -> Option<&'static str> {
    if stem.ends_with(crate::trace::native::SUFFIX) {
        Some("native")
    } else if stem.ends_with(".lis") {
        Some("arc")
    } else if stem.ends_with(".trace") || stem.ends_with(".lirs") {
        Some("lirs")
    } else {
        None
    }
}

/// Deserialises a reader's options, naming the format on error.
pub(crate) fn parse_options<T: DeserializeOwned>(format: &str, options: &toml::Table) -> Result<T> {
    T::deserialize(toml::Value::Table(options.clone()))
        .map_err(|e| Error::config(format!("options of trace format '{format}': {e}")))
}
