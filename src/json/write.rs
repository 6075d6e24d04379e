//! The writer: compact JSON text, appended to a caller's buffer.
//!
//! Strings escape `"`, `\` and every control character below U+0020 (`\n \r \t \b
//! \f` in their short forms, the rest as `\u00XX`), so the output never holds a raw
//! line break. Numbers are written as their exact text. Nesting is walked with an
//! explicit stack, not by recursion.

use alloc::vec::Vec;
use core::fmt;

use super::read::find_special;
use super::value::Value;

/// Writes `v` as compact JSON into a new buffer.
///
/// ```
/// use dhara_protocol::json::{self, Value};
///
/// let v = json::parse(br#"{ "n": 1.50, "s": "a\u000ab" }"#)?;
/// assert_eq!(json::to_vec(&v), br#"{"n":1.50,"s":"a\nb"}"#);
/// assert_eq!(v.to_string(), r#"{"n":1.50,"s":"a\nb"}"#);
/// # Ok::<(), json::Error>(())
/// ```
pub fn to_vec(v: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    write_value(v, &mut out);
    out
}

/// An array or object being written: its items and how many are written.
enum Open<'a> {
    Array(&'a [Value], usize),
    Object(&'a [(alloc::string::String, Value)], usize),
}

/// Appends `v` as compact JSON to `out`.
pub fn write_value(v: &Value, out: &mut Vec<u8>) {
    let mut open: Vec<Open<'_>> = Vec::new();
    let mut next = Some(v);
    loop {
        if let Some(v) = next.take() {
            match v {
                Value::Null => out.extend_from_slice(b"null"),
                Value::Bool(true) => out.extend_from_slice(b"true"),
                Value::Bool(false) => out.extend_from_slice(b"false"),
                Value::Number(n) => out.extend_from_slice(n.as_str().as_bytes()),
                Value::String(s) => write_string(s, out),
                Value::Array(items) if items.is_empty() => out.extend_from_slice(b"[]"),
                Value::Object(members) if members.is_empty() => out.extend_from_slice(b"{}"),
                Value::Array(items) => {
                    out.push(b'[');
                    open.push(Open::Array(items, 0));
                }
                Value::Object(members) => {
                    out.push(b'{');
                    open.push(Open::Object(members.as_slice(), 0));
                }
            }
        }
        // Find the next item to write, closing the containers that are done.
        match open.last_mut() {
            None => return,
            Some(Open::Array(items, written)) => match items.get(*written) {
                Some(item) => {
                    if *written > 0 {
                        out.push(b',');
                    }
                    *written += 1;
                    next = Some(item);
                }
                None => {
                    out.push(b']');
                    open.pop();
                }
            },
            Some(Open::Object(members, written)) => match members.get(*written) {
                Some((name, value)) => {
                    if *written > 0 {
                        out.push(b',');
                    }
                    *written += 1;
                    write_string(name, out);
                    out.push(b':');
                    next = Some(value);
                }
                None => {
                    out.push(b'}');
                    open.pop();
                }
            },
        }
    }
}

/// Appends `s` as a quoted JSON string to `out`.
///
/// ```
/// let mut out = Vec::new();
/// dhara_protocol::json::write_string("tab\there \"quoted\" \u{1}", &mut out);
/// assert_eq!(out, br#""tab\there \"quoted\" \u0001""#);
/// ```
pub fn write_string(s: &str, out: &mut Vec<u8>) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut start = 0;
    loop {
        let at = find_special(bytes, start);
        out.extend_from_slice(bytes.get(start..at).unwrap_or_default());
        let Some(&b) = bytes.get(at) else { break };
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0C => out.extend_from_slice(b"\\f"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                let hex = |d: u8| HEX[usize::from(d & 0xF)];
                out.extend_from_slice(&[b'\\', b'u', b'0', b'0', hex(b >> 4), hex(b)]);
            }
        }
        start = at + 1;
    }
    out.push(b'"');
}

impl fmt::Display for Value {
    /// The same compact text as [`to_vec`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = Vec::new();
        write_value(self, &mut out);
        f.write_str(core::str::from_utf8(&out).map_err(|_| fmt::Error)?)
    }
}
