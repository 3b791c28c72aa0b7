//! Every value a person types gets a right answer or one clear line: property tests over the
//! policy-spec grammar (`lru`, `clock(bits=2)`, `lru+bloom`) and the error messages. Any text
//! either parses and builds, or fails with one printable line of bounded length: never a panic,
//! never a raw control byte (a terminal escape sequence in a value is shown escaped).

use proptest::prelude::*;
use tierlab_core::error::{show, Error, Location, MAX_MESSAGE};
use tierlab_core::policy::PolicySpec;
use tierlab_core::sim::check::{check_policy, make_refs};

/// No control character, and at most `MAX_MESSAGE` characters of the message (each shown in
/// at most 4, `\x1b`) and the count of what was cut.
fn is_one_clear_line(text: &str) -> bool {
    !text.chars().any(|c| c.is_control()) && text.chars().count() <= 4 * MAX_MESSAGE + 40
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn any_policy_spec_builds_or_fails_with_one_line(
        text in prop_oneof![
            ".{0,40}",
            "(lru|clock|arc|opt|s3fifo|lru\\+bloom)(\\((bits|p|k|window)=(-?[0-9.e]{1,8}|nan|inf|\"\\PC{0,4}\"|\\[\\]),?\\))?",
        ]
    ) {
        let refs = make_refs(&[(1, false), (2, true), (1, false)]);
        match PolicySpec::parse(&text) {
            Err(e) => prop_assert!(is_one_clear_line(&e.to_string()), "{}", e),
            Ok(spec) => {
                if let Err(e) = check_policy(&spec, 4, 2, &refs) {
                    prop_assert!(is_one_clear_line(&e.to_string()), "{}", e);
                }
            }
        }
    }

    #[test]
    fn messages_escape_control_bytes_and_are_bounded(value in "\\PC{0,20}[\\x00-\\x1f\\x7f]{0,3}.{0,3000}") {
        for e in [
            Error::config(format!("size {value} is not a size")),
            Error::input("f.csv", Location::Line(3), format!("found '{value}'")),
        ] {
            prop_assert!(is_one_clear_line(&e.to_string()), "{:?}", e.to_string());
        }
        let shown = show(&value, 60);
        prop_assert!(!shown.chars().any(|c| c.is_control()));
        prop_assert!(shown.chars().count() <= 4 * 60 + 40);
    }
}
