//! One error type for the whole engine. Every error that comes from input data
//! names where it happened (file and line, or file and byte offset) and what was
//! expected, so that a user can open the file at that spot and see the problem.

use std::fmt;
use std::path::Path;

/// Where in an input an error was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// 1-based line number in a text input.
    Line(u64),
    /// 0-based byte offset in a binary input (of the decompressed stream).
    Offset(u64),
    /// The whole input (e.g. an empty file or an unreadable header).
    Whole,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Line(l) => write!(f, "line {l}"),
            Location::Offset(o) => write!(f, "byte offset {o}"),
            Location::Whole => Ok(()),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Malformed input data: file, where, and what was expected.
    #[error("{file}{}: {msg}", fmt_loc(.loc))]
    Input {
        file: String,
        loc: Location,
        msg: String,
    },
    /// An I/O error while reading or writing a file.
    #[error("{file}: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    /// A bad configuration value: which key, what was given, what is allowed.
    #[error("{0}")]
    Config(String),
    /// The run was interrupted (e.g. Ctrl-C seen by the progress callback).
    #[error("interrupted")]
    Interrupted,
    /// A policy defined outside the crate failed (see `policy::external`): names the policy,
    /// the callback and the page.
    #[error("{0}")]
    Policy(String),
    /// A run would need more memory than there is: how much it needs, how much there is, and
    /// how to make it smaller.
    #[error("{0}")]
    Resource(String),
}

fn fmt_loc(loc: &Location) -> String {
    match loc {
        Location::Whole => String::new(),
        l => format!(":{l}"),
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn input(file: impl Into<String>, loc: Location, msg: impl Into<String>) -> Self {
        Error::Input {
            file: file.into(),
            loc,
            msg: one_line(msg.into()),
        }
    }
    pub fn io(file: impl AsRef<Path>, source: std::io::Error) -> Self {
        Error::Io {
            file: file.as_ref().display().to_string(),
            source,
        }
    }
    pub fn config(msg: impl Into<String>) -> Self {
        Error::Config(one_line(msg.into()))
    }
    pub fn resource(msg: impl Into<String>) -> Self {
        Error::Resource(one_line(msg.into()))
    }
}

/// Longest message an error keeps (a list of the accepted values fits): a longer one (a whole
/// trace line quoted, say) is cut there, with a count of what was cut.
pub const MAX_MESSAGE: usize = 2000;

/// A value quoted in a message as a user can read it on a terminal: control characters (ESC,
/// BEL, ...) escaped as `\x1b`, and cut to `max` characters with a count of the rest, so that
/// neither a colour sequence nor a 1 GiB line reaches the terminal.
pub fn show(value: &str, max: usize) -> String {
    let mut out = String::new();
    let total = value.chars().count();
    for (shown, c) in value.chars().enumerate() {
        if shown >= max {
            out.push_str(&format!("... ({} more characters)", total - shown));
            break;
        }
        escape_char(c, &mut out);
    }
    out
}

fn escape_char(c: char, out: &mut String) {
    use std::fmt::Write;
    match c {
        '\t' => out.push_str("\\t"),
        c if c.is_control() => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c => out.push(c),
    }
}

/// Errors are one line: wrapped library messages (the toml/serde ones end with a newline, some
/// span several) are joined with "; ", other control characters are escaped (a quoted trace line
/// may hold a terminal escape sequence) and a message longer than [`MAX_MESSAGE`] is cut.
fn one_line(msg: String) -> String {
    let joined = if msg.contains(['\n', '\r']) {
        msg.split(['\n', '\r'])
            .map(|l| l.trim().trim_start_matches([';', ' ']))
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("; ")
    } else {
        msg
    };
    if !joined.chars().any(|c| c.is_control()) && joined.len() <= MAX_MESSAGE {
        return joined;
    }
    show(&joined, MAX_MESSAGE)
}

/// Runs `f`, turning a panic into its message (`"panic"` when the payload is
/// not a string). The Python bindings wrap every native call in this so that
/// no panic unwinds into the interpreter.
pub fn catch_panic<T>(f: impl FnOnce() -> T) -> std::result::Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|p| {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panic".into())
    })
}

#[cfg(test)]
mod panic_tests {
    use super::*;

    #[test]
    fn catch_panic_returns_the_message_or_the_value() {
        assert_eq!(catch_panic(|| 5), Ok(5));
        let r: std::result::Result<u32, String> =
            catch_panic(|| panic!("index {} out of range", 7));
        assert_eq!(r, Err("index 7 out of range".to_string()));
        let r: std::result::Result<u32, String> = catch_panic(|| std::panic::panic_any(42u8));
        assert_eq!(r, Err("panic".to_string()));
    }
}

#[cfg(test)]
mod one_line_tests {
    use super::*;

    #[test]
    fn messages_are_joined_onto_one_line() {
        let e = Error::config("unknown field `x`, there are no fields\n; defaults are: ");
        assert_eq!(
            e.to_string(),
            "unknown field `x`, there are no fields; defaults are:"
        );
        let e = Error::input("f", Location::Line(3), "a\r\nb\n");
        assert_eq!(e.to_string(), "f:line 3: a; b");
    }

    #[test]
    fn control_bytes_are_escaped_and_long_messages_cut() {
        let e = Error::input("f", Location::Line(1), "found 'abc\x1b[31mRED\x07'");
        assert_eq!(e.to_string(), "f:line 1: found 'abc\\x1b[31mRED\\x07'");
        let e = Error::config("x".repeat(10_000));
        let text = e.to_string();
        assert!(text.starts_with(&"x".repeat(MAX_MESSAGE)));
        assert!(text.ends_with("... (8000 more characters)"), "{text}");
        assert_eq!(show("a\tb\u{7f}", 10), "a\\tb\\x7f");
    }
}
