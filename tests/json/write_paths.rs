//! The writer's fast paths against a plain writer, one character at a time: short
//! strings (up to 16 bytes) stored as two words, short strings with escapes
//! rewritten from their first special byte, and a member's name and short scalar
//! written together. Strings of every length around the thresholds (3/4, 7/8,
//! 16/17 bytes) with a byte to escape, a control or a multi-byte character at every
//! offset; names and values in every combination; numbers of every length; and
//! output appended to buffers already holding text, full to their capacity or not.

use dhara_protocol::json::{self, Number, Object, Value};
use proptest::prelude::*;

use crate::json_support;
use json_support::{any_value_of, write_plain_string};

/// A value as compact JSON, recursively.
fn plain_value(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(n.as_str()),
        Value::String(s) => write_plain_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                plain_value(item, out);
            }
            out.push(']');
        }
        Value::Object(object) => {
            out.push('{');
            for (i, (name, value)) in object.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_plain_string(name, out);
                out.push(':');
                plain_value(value, out);
            }
            out.push('}');
        }
    }
}

fn plain(v: &Value) -> String {
    let mut out = String::new();
    plain_value(v, &mut out);
    out
}

/// Checks every way of writing `v` against the plain writer: alone, after text
/// already in a buffer (with and without room to spare), and, for an object,
/// through `write_object`.
fn check(v: &Value) {
    let expected = plain(v);
    assert_eq!(String::from_utf8(json::to_vec(v)).unwrap(), expected);
    for prefix in ["", "[1,2,3,"] {
        for spare in [0, 64] {
            let mut out = Vec::with_capacity(prefix.len() + spare);
            out.extend_from_slice(prefix.as_bytes());
            json::write_value(v, &mut out);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                format!("{prefix}{expected}"),
                "prefix {prefix:?}, spare {spare}"
            );
        }
    }
    if let Value::Object(object) = v {
        let mut out = b"..".to_vec();
        json::write_object(object, &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), format!("..{expected}"));
    }
}

/// Checks `s` written by `write_string` and as a name, a value and an element next
/// to other items.
fn check_string(s: &str) {
    let mut expected = String::new();
    write_plain_string(s, &mut expected);
    for prefix in ["", "{\"a\":"] {
        let mut out = Vec::with_capacity(prefix.len());
        out.extend_from_slice(prefix.as_bytes());
        json::write_string(s, &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("{prefix}{expected}")
        );
    }
    let string = Value::from(s);
    check(&string);
    check(&Value::Array(vec![string.clone()]));
    check(&Value::Array(vec![
        Value::from(1),
        string.clone(),
        Value::Null,
    ]));
    check(&Value::Object(Object::from_iter([(s, Value::from(true))])));
    check(&Value::Object(Object::from_iter([("k", string.clone())])));
    check(&Value::Object(Object::from_iter([(s, string.clone())])));
    check(&Value::Object(Object::from_iter([
        ("path", Value::from("src/lib.rs")),
        (s, string.clone()),
        ("limit", Value::from(10)),
        (s, Value::Object(Object::new())),
    ])));
}

/// What is put at each offset of a string: bytes to escape, controls, bytes that
/// need no escape next to them, and multi-byte characters.
const SPECIALS: [char; 16] = [
    '"', '\\', '\n', '\r', '\t', '\u{8}', '\u{c}', '\0', '\u{1}', '\u{1f}', ' ', '/', '\u{7f}',
    'é', '日', '😀',
];

#[test]
fn strings_of_every_length_with_a_special_at_every_offset() {
    let letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN";
    for len in 0..=40 {
        let base = &letters[..len];
        check_string(base);
        for at in 0..len {
            for special in SPECIALS {
                let mut s = String::from(&base[..at]);
                s.push(special);
                s.push_str(&base[at + 1..]);
                check_string(&s);
                // A second one at the end.
                if at + 1 < len {
                    s.pop();
                    s.push('\t');
                    check_string(&s);
                }
            }
        }
    }
}

#[test]
fn strings_of_only_bytes_to_escape() {
    for len in 0..=20 {
        for special in SPECIALS {
            check_string(&String::from_iter(std::iter::repeat_n(special, len)));
        }
        let every: String = (0u8..0x20).map(char::from).cycle().take(len).collect();
        check_string(&every);
    }
}

#[test]
fn numbers_of_every_length() {
    let digits = "1234567890123456789012345";
    for len in 1..=digits.len() {
        let texts = [
            String::from(&digits[..len]),
            format!("-{}", &digits[..len]),
            format!("0.{}", &digits[..len]),
            format!("{}e-7", &digits[..len]),
        ];
        for text in texts {
            let n = Value::Number(Number::from_text(&text).unwrap());
            check(&n);
            check(&Value::Array(vec![n.clone(), n.clone()]));
            check(&Value::Object(Object::from_iter([("n", n.clone())])));
            check(&Value::Object(Object::from_iter([
                ("a long member name", n.clone()),
                ("b", Value::from("x")),
            ])));
        }
    }
}

#[test]
fn literals_after_every_name_length() {
    let letters = "abcdefghijklmnopqrstuvwxyz";
    for len in 0..=20 {
        let name = &letters[..len];
        for value in [Value::Null, Value::Bool(true), Value::Bool(false)] {
            check(&Value::Object(Object::from_iter([(name, value.clone())])));
            check(&Value::Object(Object::from_iter([
                ("x", Value::from(1)),
                (name, value.clone()),
            ])));
            check(&Value::Array(vec![value.clone(), value]));
        }
    }
}

/// Text of lengths around the thresholds, made mostly of plain ASCII with the
/// characters of [`SPECIALS`] mixed in.
fn any_text() -> impl Strategy<Value = String> {
    let c = prop_oneof![
        6 => (0x20u8..0x7f).prop_map(char::from),
        1 => prop::sample::select(&SPECIALS[..]),
        1 => (0u8..0x20).prop_map(char::from),
        1 => any::<char>(),
    ];
    prop::collection::vec(c, 0..24).prop_map(String::from_iter)
}

fn any_value() -> impl Strategy<Value = Value> {
    any_value_of(any_text(), any_text().boxed())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn values_are_written_as_the_plain_writer_writes_them(v in any_value()) {
        check(&v);
    }

    #[test]
    fn strings_are_written_as_the_plain_writer_writes_them(s in any_text()) {
        check_string(&s);
    }
}
