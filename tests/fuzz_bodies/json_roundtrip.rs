//! `json_roundtrip`: values built from the fuzz bytes, written and parsed back.
//!
//! `parse(write(v)) == v` for every value, whatever its strings (control
//! characters, quotes, U+2028, astral characters) and numbers (huge integers, long
//! decimals, exponents: kept as exact text), and the written text is a single line
//! the framing hands back whole.

use dhara_protocol::frame::{self, Frame, LineDecoder};
use dhara_protocol::json::{self, Number, Object, Value};

use crate::source::Source;

/// Nesting of the built values; well under the parser's default `max_depth`.
const MAX_DEPTH: usize = 24;

pub fn run(data: &[u8]) {
    let mut source = Source::new(data);
    let value = build_value(&mut source, 0);

    let written = json::to_vec(&value);
    assert!(
        !written.iter().any(|&b| b < 0x20),
        "written JSON holds a raw control character"
    );
    let parsed = json::parse(&written)
        .unwrap_or_else(|e| panic!("written JSON does not parse ({e}): {written:?}"));
    assert_eq!(parsed, value, "parse(write(v)) != v");

    // The written value is exactly one line of the framing.
    let mut line = Vec::new();
    frame::write_line(&mut line, |out| json::write_value(&value, out));
    let mut decoder = LineDecoder::new();
    decoder.push(&line);
    decoder.end();
    assert_eq!(decoder.next_frame(), Some(Frame::Line(&written)));
    assert_eq!(decoder.next_frame(), None);
}

fn build_value(source: &mut Source<'_>, depth: usize) -> Value {
    let kinds = if depth < MAX_DEPTH { 7 } else { 5 };
    match source.below(kinds) {
        0 => Value::Null,
        1 => Value::Bool(source.bool()),
        2 => Value::Number(build_number(source)),
        3 | 4 => Value::from(build_string(source)),
        5 => {
            let len = source.below(6);
            Value::Array((0..len).map(|_| build_value(source, depth + 1)).collect())
        }
        _ => {
            let len = source.below(6);
            let mut object = Object::new();
            for _ in 0..len {
                // `push` keeps duplicate names, as the parser does.
                let name = build_string(source);
                let member = build_value(source, depth + 1);
                object.push(name, member);
            }
            Value::Object(object)
        }
    }
}

fn build_number(source: &mut Source<'_>) -> Number {
    match source.below(4) {
        0 => Number::from(source.u64()),
        1 => Number::from(source.u64() as i64),
        2 => Number::from_f64(f64::from_bits(source.u64())).unwrap_or_else(|| Number::from(0u8)),
        _ => {
            // Number text of any length: huge integers and long decimals.
            let mut text = String::new();
            if source.bool() {
                text.push('-');
            }
            let digits = source.below(40);
            if digits == 0 {
                text.push('0');
            } else {
                text.push(char::from(b'1' + source.below(9) as u8));
                for _ in 1..digits {
                    text.push(char::from(b'0' + source.below(10) as u8));
                }
            }
            if source.bool() {
                text.push('.');
                for _ in 0..=source.below(40) {
                    text.push(char::from(b'0' + source.below(10) as u8));
                }
            }
            if source.bool() {
                text.push(source.pick(&['e', 'E']));
                if let Some(sign) = source.pick(&[None, Some('+'), Some('-')]) {
                    text.push(sign);
                }
                for _ in 0..=source.below(4) {
                    text.push(char::from(b'0' + source.below(10) as u8));
                }
            }
            Number::from_text(&text).unwrap_or_else(|| panic!("not number text: {text}"))
        }
    }
}

fn build_string(source: &mut Source<'_>) -> String {
    const SPECIAL: [char; 12] = [
        '"',
        '\\',
        '/',
        '\n',
        '\r',
        '\t',
        '\u{0}',
        '\u{1f}',
        '\u{7f}',
        '\u{2028}',
        '\u{FFFD}',
        '\u{1F600}',
    ];
    let len = source.below(16);
    let mut text = String::new();
    for _ in 0..len {
        let c = match source.below(4) {
            0 => char::from(source.byte() & 0x7f),
            1 => source.pick(&SPECIAL),
            2 => char::from_u32(source.u32() % 0x11_0000).unwrap_or('\u{FFFD}'),
            _ => char::from(b'a' + source.below(26) as u8),
        };
        text.push(c);
    }
    text
}
