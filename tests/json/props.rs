//! Properties of the JSON parser and writer.

use dhara_protocol::json::{self, Error, Object, ParseOptions, Reader, Value, to_vec};
use proptest::prelude::*;

use crate::json_support;
use json_support::any_value_of;

/// Characters that exercise the string paths: controls, quotes, backslashes,
/// ASCII, and any other Unicode scalar value.
fn any_text() -> impl Strategy<Value = String> {
    let c = prop_oneof![
        3 => (0x20u8..0x7f).prop_map(char::from),
        1 => (0u8..0x20).prop_map(char::from),
        1 => Just('"'),
        1 => Just('\\'),
        2 => any::<char>(),
    ];
    prop::collection::vec(c, 0..24).prop_map(String::from_iter)
}

/// Values up to six levels deep; member names mostly from a small set, so
/// duplicates are common.
fn any_value() -> impl Strategy<Value = Value> {
    any_value_of(
        any_text(),
        prop_oneof![3 => "[ab]", 1 => any_text()].boxed(),
    )
}

/// Writes `v` loosely: whitespace between tokens and characters escaped as
/// `\uXXXX` (surrogate pairs above U+FFFF), chosen by the bits of `noise`.
fn write_loose(v: &Value, noise: &mut impl Iterator<Item = u8>, out: &mut String) {
    let gap = |out: &mut String, noise: &mut dyn Iterator<Item = u8>| {
        const WS: [&str; 8] = ["", "", "", "", " ", "\n", "\t", "\r\n  "];
        out.push_str(WS[usize::from(noise.next().unwrap_or(0) % 8)]);
    };
    gap(out, noise);
    match v {
        Value::String(s) => write_loose_string(s, noise, out),
        Value::Array(items) => {
            out.push('[');
            gap(out, noise);
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_loose(item, noise, out);
            }
            out.push(']');
        }
        Value::Object(members) => {
            out.push('{');
            gap(out, noise);
            for (i, (name, value)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                gap(out, noise);
                write_loose_string(name, noise, out);
                gap(out, noise);
                out.push(':');
                write_loose(value, noise, out);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
    gap(out, noise);
}

fn write_loose_string(s: &str, noise: &mut impl Iterator<Item = u8>, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        let escape = noise.next().unwrap_or(0) % 4 == 0;
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '/' if escape => out.push_str("\\/"),
            c if escape || u32::from(c) < 0x20 => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04X}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Walks a text with the pull reader the way an envelope decoder does.
fn pull(r: &mut Reader<'_>, skip_arrays: bool, input: &[u8]) -> Result<Value, Error> {
    match r.peek() {
        Some(b'{') => {
            r.begin_object()?;
            let mut members = Object::new();
            while let Some(name) = r.next_member()? {
                members.push(name, pull(r, skip_arrays, input)?);
            }
            Ok(Value::Object(members))
        }
        Some(b'[') if skip_arrays => {
            let range = r.skip_value()?;
            Ok(json::parse(&input[range]).expect("skip_value validated it"))
        }
        Some(b'[') => {
            r.begin_array()?;
            let mut items = Vec::new();
            while r.next_element()? {
                items.push(pull(r, skip_arrays, input)?);
            }
            Ok(Value::Array(items))
        }
        Some(b'"') => Ok(Value::from(r.read_string()?.0)),
        _ => r.read_value(),
    }
}

fn pull_whole(input: &[u8], skip_arrays: bool) -> Result<Value, Error> {
    let mut r = Reader::new(input, &ParseOptions::DEFAULT);
    let v = pull(&mut r, skip_arrays, input)?;
    r.finish()?;
    Ok(v)
}

/// Valid texts with a few bytes changed, inserted or removed: inputs that get deep
/// into the grammar before going wrong.
fn mutated_text() -> impl Strategy<Value = Vec<u8>> {
    (
        any_value(),
        prop::collection::vec((any::<usize>(), 0u8..3, any::<u8>()), 1..4),
    )
        .prop_map(|(v, edits)| {
            let mut bytes = to_vec(&v);
            for (at, op, byte) in edits {
                let at = at % (bytes.len() + 1);
                match op {
                    0 => bytes.insert(at, byte),
                    1 if at < bytes.len() => bytes[at] = byte,
                    _ if at < bytes.len() => {
                        bytes.remove(at);
                    }
                    _ => {}
                }
            }
            bytes
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn parse_of_written_value_is_the_value(v in any_value()) {
        let text = to_vec(&v);
        prop_assert_eq!(json::parse(&text), Ok(v.clone()));
        prop_assert!(text.iter().all(|&b| b >= 0x20), "no raw control byte in output");
        prop_assert_eq!(v.to_string().into_bytes(), text);
    }

    #[test]
    fn loose_text_parses_to_the_value_and_writing_is_idempotent(
        v in any_value(),
        noise in prop::collection::vec(any::<u8>(), 0..512),
    ) {
        let mut text = String::new();
        write_loose(&v, &mut noise.into_iter().cycle(), &mut text);
        let parsed = json::parse(text.as_bytes());
        prop_assert_eq!(parsed.as_ref(), Ok(&v), "{}", text);
        let once = to_vec(&v);
        let twice = to_vec(&json::parse(&once).expect("written text parses"));
        prop_assert_eq!(once, twice);
    }

    #[test]
    fn writing_is_idempotent_for_accepted_input(input in mutated_text()) {
        if let Ok(v) = json::parse(&input) {
            let once = to_vec(&v);
            let twice = to_vec(&json::parse(&once).expect("written text parses"));
            prop_assert_eq!(once, twice);
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(input in prop::collection::vec(any::<u8>(), 0..256)) {
        let parsed = json::parse(&input);
        let strict = ParseOptions { strict_surrogates: true, max_depth: 4 };
        let _ = json::parse_with(&input, &strict);
        let mut r = Reader::new(&input, &ParseOptions::DEFAULT);
        let skipped = r.skip_value().and_then(|_| r.finish());
        prop_assert_eq!(parsed.is_ok(), skipped.is_ok());
    }

    #[test]
    fn reader_traversal_agrees_with_parse(input in mutated_text(), skip_arrays in any::<bool>()) {
        let parsed = json::parse(&input);
        prop_assert_eq!(pull_whole(&input, skip_arrays), parsed.clone());
        let mut r = Reader::new(&input, &ParseOptions::DEFAULT);
        let skipped = r.skip_value().and_then(|_| r.finish());
        prop_assert_eq!(skipped.map_err(|e| e.kind()), parsed.map(|_| ()).map_err(|e| e.kind()));
    }

    #[test]
    fn reader_traversal_of_valid_text(v in any_value(), skip_arrays in any::<bool>()) {
        let text = to_vec(&v);
        prop_assert_eq!(pull_whole(&text, skip_arrays), Ok(v));
    }
}
