//! The string paths of the JSON parser, against a plain byte-at-a-time decoder: every
//! escape at every offset across word and block boundaries, UTF-8 checked only inside
//! strings with the exact offset of the first bad byte, lone surrogates, and the order
//! of errors within one string. Parsing, reading a string, reading a member name and
//! skipping must agree.

use dhara_protocol::json::{self, ErrorKind, ParseOptions, Reader};
use proptest::prelude::*;

use crate::json_support;
use json_support::write_plain_string;

const STRICT: ParseOptions = ParseOptions {
    strict_surrogates: true,
    ..ParseOptions::DEFAULT
};

/// What a string decodes to, or its first error (kind, offset): one byte at a time,
/// for the string whose opening quote is `input[open]`. `name` rejects lone
/// surrogates, as `strict` does.
fn reference(input: &[u8], open: usize, strict: bool) -> Result<String, (ErrorKind, usize)> {
    let hex4 = |at: usize| -> Result<u32, (ErrorKind, usize)> {
        let digits = input
            .get(at..at + 4)
            .ok_or((ErrorKind::UnexpectedEnd, at))?;
        let text = std::str::from_utf8(digits).map_err(|_| (ErrorKind::InvalidEscape, at - 2))?;
        if !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err((ErrorKind::InvalidEscape, at - 2));
        }
        Ok(u32::from_str_radix(text, 16).expect("hex digits"))
    };
    let mut out = String::new();
    let mut i = open + 1;
    loop {
        let Some(&b) = input.get(i) else {
            return Err((ErrorKind::UnexpectedEnd, i));
        };
        match b {
            b'"' => return Ok(out),
            b'\\' => {
                let letter = *input.get(i + 1).ok_or((ErrorKind::UnexpectedEnd, i + 1))?;
                let short = match letter {
                    b'"' => Some('"'),
                    b'\\' => Some('\\'),
                    b'/' => Some('/'),
                    b'b' => Some('\u{8}'),
                    b'f' => Some('\u{c}'),
                    b'n' => Some('\n'),
                    b'r' => Some('\r'),
                    b't' => Some('\t'),
                    b'u' => None,
                    _ => return Err((ErrorKind::InvalidEscape, i)),
                };
                if let Some(c) = short {
                    out.push(c);
                    i += 2;
                    continue;
                }
                let unit = hex4(i + 2)?;
                let (c, len) = if (0xD800..0xDC00).contains(&unit) {
                    let low = match input.get(i + 6..i + 8) {
                        Some(b"\\u") => hex4(i + 8).ok(),
                        _ => None,
                    };
                    match low {
                        Some(low @ 0xDC00..0xE000) => (
                            char::from_u32(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)),
                            12,
                        ),
                        _ => (None, 6),
                    }
                } else {
                    (char::from_u32(unit), 6)
                };
                match c {
                    Some(c) => out.push(c),
                    None if strict => return Err((ErrorKind::LoneSurrogate, i)),
                    None => out.push(char::REPLACEMENT_CHARACTER),
                }
                i += len;
            }
            0..0x20 => return Err((ErrorKind::ControlCharacterInString, i)),
            0x20..0x80 => {
                out.push(char::from(b));
                i += 1;
            }
            _ => {
                let width = match b {
                    0xC0..0xE0 => 2,
                    0xE0..0xF0 => 3,
                    _ => 4,
                };
                let end = (i + width).min(input.len());
                match std::str::from_utf8(&input[i..end]) {
                    Ok(c) => out.push_str(c),
                    Err(_) => return Err((ErrorKind::InvalidUtf8, i)),
                }
                i = end;
            }
        }
    }
}

/// Whether the string in `quoted` closes before its last byte (a lone backslash in
/// the body escaped the quote that was to close it): then it is not one string.
fn ends_early(quoted: &[u8]) -> bool {
    let mut i = 1;
    while let Some(&b) = quoted.get(i) {
        match b {
            b'\\' => i += 2,
            b'"' => return i + 1 < quoted.len(),
            _ => i += 1,
        }
    }
    false
}

/// `body` as a JSON string, checked every way the parser reads strings: as a whole
/// text, an element after another string, with `read_string`, as a member name,
/// and skipped; strict and not.
fn check(body: &[u8]) {
    let quoted = [b"\"", body, b"\""].concat();
    if ends_early(&quoted) {
        return;
    }
    for strict in [false, true] {
        let options = if strict {
            STRICT
        } else {
            ParseOptions::DEFAULT
        };
        let expected = reference(&quoted, 0, strict);
        let got = json::parse_with(&quoted, &options)
            .map(|v| v.as_str().expect("a string").to_owned())
            .map_err(|e| (e.kind(), e.offset()));
        assert_eq!(
            got,
            expected,
            "parse {:?} strict {strict}",
            String::from_utf8_lossy(body)
        );

        let mut reader = Reader::new(&quoted, &options);
        let read = reader
            .read_string()
            .map(|(s, _)| s)
            .map_err(|e| (e.kind(), e.offset()));
        assert_eq!(
            read,
            expected,
            "read_string {:?}",
            String::from_utf8_lossy(body)
        );

        let mut reader = Reader::new(&quoted, &options);
        let skipped = reader.skip_value().map_err(|e| (e.kind(), e.offset()));
        assert_eq!(
            skipped.map(|_| ()),
            expected.clone().map(|_| ()),
            "skip {:?}",
            String::from_utf8_lossy(body)
        );

        // After another string: offsets count from the start of the whole input.
        let array = [b"[\"\xC3\xA9\", \"", body, b"\"]"].concat();
        let expected = reference(&array, 7, strict);
        let got = json::parse_with(&array, &options)
            .map(|v| v[1].as_str().expect("a string").to_owned())
            .map_err(|e| (e.kind(), e.offset()));
        assert_eq!(got, expected, "element {:?}", String::from_utf8_lossy(body));
        let mut reader = Reader::new(&array, &options);
        let skipped = reader.skip_value().map_err(|e| (e.kind(), e.offset()));
        assert_eq!(skipped.map(|_| ()), expected.map(|_| ()), "skip element");
    }
    // As a member name, lone surrogates are always an error.
    let object = [b"{\"", body, b"\": 1}"].concat();
    let expected = reference(&object, 1, true);
    let mut reader = Reader::new(&object, &ParseOptions::DEFAULT);
    reader.begin_object().expect("an object");
    let name = reader
        .next_member_name()
        .map(|n| n.expect("a member").into_owned())
        .map_err(|e| (e.kind(), e.offset()));
    assert_eq!(name, expected, "name {:?}", String::from_utf8_lossy(body));
    let parsed = json::parse(&object).map_err(|e| (e.kind(), e.offset()));
    match (&parsed, &expected) {
        (Ok(v), Ok(name)) => assert_eq!(
            v.as_object()
                .expect("an object")
                .get(name)
                .and_then(|v| v.as_u64()),
            Some(1)
        ),
        (Err(got), Err(want)) => assert_eq!(got, want),
        _ => panic!(
            "member {:?}: {parsed:?} against {expected:?}",
            String::from_utf8_lossy(body)
        ),
    }
}

/// Escapes, each with a character of its own to tell them apart.
const ESCAPES: &[&str] = &[
    r#"\n"#,
    r#"\t"#,
    r#"\""#,
    r#"\\"#,
    r#"\/"#,
    r#"\b"#,
    r#"\f"#,
    r#"\r"#,
    r#"\u001b"#,
    r#"\u00e9"#,
    r#"\u2192"#,
    r#"\uD83D\uDE00"#,
    r#"\ud800"#,
    r#"\udc00x"#,
];

#[test]
fn every_escape_at_every_offset_across_words_and_blocks() {
    for escape in ESCAPES {
        for offset in 0..16 {
            for tail in [0, 1, 6, 7, 8, 9, 15, 16, 17, 40, 63, 64, 65, 130] {
                for filler in ["a", "é"] {
                    let body = format!("{}{escape}{}", filler.repeat(offset), "z".repeat(tail));
                    check(body.as_bytes());
                    // Two escapes in a row, and one at the very end.
                    check(format!("{body}{escape}{escape}").as_bytes());
                }
            }
        }
    }
}

#[test]
fn long_strings_cross_64_byte_blocks() {
    for len in (0..300usize).step_by(7) {
        let plain: String = (0..len)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        check(plain.as_bytes());
        for at in [0, len / 3, len / 2, len.saturating_sub(1)] {
            let (a, b) = plain.split_at(at.min(plain.len()));
            check(format!("{a}\\n{b}").as_bytes());
            check(format!("{a}\\\"{b}\\\\").as_bytes());
            check(format!("{a}日本{b}").as_bytes());
        }
    }
    // Runs of backslashes before a quote: the string ends only after an even number.
    for n in 0..20 {
        check(format!("{}x", "\\\\".repeat(n)).as_bytes());
        check(format!("{}\\\"x", "\\\\".repeat(n)).as_bytes());
    }
}

#[test]
fn bytes_that_are_not_utf8_at_each_position_with_the_exact_offset() {
    let bad: &[&[u8]] = &[
        b"\xFF",
        b"\x80",
        b"\xC3",
        b"\xE2\x82",
        b"\xED\xA0\x80",
        b"\xC0\xAF",
        b"\xF4\x90\x80\x80",
    ];
    for base in [
        "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "a\\nb\\tc\\\"d\\\\e\\u00e9f\\uD83D\\uDE00g",
    ] {
        for at in 0..=base.len() {
            if !base.is_char_boundary(at) {
                continue;
            }
            for b in bad {
                let body = [&base.as_bytes()[..at], b, &base.as_bytes()[at..]].concat();
                check(&body);
                let quoted = [b"\"", &body[..], b"\""].concat();
                let err = json::parse(&quoted).expect_err("not UTF-8");
                // Escapes cut apart by the bad bytes fail first; otherwise the bad byte.
                if err.kind() == ErrorKind::InvalidUtf8 {
                    assert_eq!(err.offset(), 1 + at);
                }
            }
        }
    }
}

/// `result` is the error `kind` at `offset` of `text`.
fn fails_at<T: std::fmt::Debug>(
    result: Result<T, json::Error>,
    kind: ErrorKind,
    offset: usize,
    text: &[u8],
) {
    let err = result.expect_err("bad");
    assert_eq!(
        (err.kind(), err.offset()),
        (kind, offset),
        "{:?}",
        String::from_utf8_lossy(text)
    );
}

#[test]
fn the_first_error_in_a_string_wins() {
    // Each: the text, the error's kind and offset.
    let cases: &[(&[u8], ErrorKind, usize)] = &[
        (b"\"a\xFF b\\x\"", ErrorKind::InvalidUtf8, 2),
        (b"\"a\\x b\xFF\"", ErrorKind::InvalidEscape, 2),
        (b"\"a\x01 b\xFF\"", ErrorKind::ControlCharacterInString, 2),
        (b"\"a\\n\xFF\x01\"", ErrorKind::InvalidUtf8, 4),
        (b"\"\\u12\xFF4\"", ErrorKind::InvalidEscape, 1),
        (b"\"ok\\\xFF\"", ErrorKind::InvalidEscape, 3),
        (b"\"\\ud83d\\u12\xFF4\"", ErrorKind::InvalidEscape, 7),
        (b"\"ok\\n\xE2\x82", ErrorKind::InvalidUtf8, 5),
        (b"\"ok\\n\xE2\x82\xAC", ErrorKind::UnexpectedEnd, 8),
        (b"\"ok\\", ErrorKind::UnexpectedEnd, 4),
        (b"\"ok\\u00", ErrorKind::UnexpectedEnd, 5),
    ];
    for &(text, kind, offset) in cases {
        fails_at(json::parse(text), kind, offset, text);
        fails_at(
            Reader::new(text, &ParseOptions::DEFAULT).skip_value(),
            kind,
            offset,
            text,
        );
    }
}

#[test]
fn bytes_outside_strings_are_grammar_errors() {
    for (text, kind, offset) in [
        (&b"[1, \xFF]"[..], ErrorKind::UnexpectedByte(0xFF), 4),
        (b"\"ok\" \xC3\xA9", ErrorKind::TrailingCharacters, 5),
        (
            b"{\"a\": 1, \xE2\x82\xAC: 2}",
            ErrorKind::UnexpectedByte(0xE2),
            9,
        ),
        (b"[\"a\", \"b\xFF\"]", ErrorKind::InvalidUtf8, 8),
    ] {
        fails_at(json::parse(text), kind, offset, text);
    }
    // Bytes that are not UTF-8 after the value decide nothing before them.
    let mut reader = Reader::new(b"[\"fine\"] \xFF", &ParseOptions::DEFAULT);
    assert_eq!(reader.skip_value().expect("valid"), 0..8);
}

#[test]
fn lone_surrogates_are_replaced_in_values_and_rejected_in_names() {
    for (escape, decoded) in [
        (r"\ud800", "\u{FFFD}"),
        (r"\udfff", "\u{FFFD}"),
        (r"\ud800\ud800", "\u{FFFD}\u{FFFD}"),
        (r"\udc00\ud800", "\u{FFFD}\u{FFFD}"),
        (r"\ud800\u0041", "\u{FFFD}A"),
        (r"\ud800\n", "\u{FFFD}\n"),
    ] {
        for offset in [0, 5, 8, 13] {
            let text = format!("\"{}{escape}\"", "x".repeat(offset));
            let mut reader = Reader::new(text.as_bytes(), &ParseOptions::DEFAULT);
            let (s, replaced) = reader.read_string().expect("replaced");
            assert_eq!(s, format!("{}{decoded}", "x".repeat(offset)));
            assert!(replaced);
            let err = json::parse_with(text.as_bytes(), &STRICT).expect_err("strict");
            assert_eq!(
                (err.kind(), err.offset()),
                (ErrorKind::LoneSurrogate, 1 + offset)
            );
            let name = format!("{{{text}: 1}}");
            let err = json::parse(name.as_bytes()).expect_err("in a name");
            assert_eq!(
                (err.kind(), err.offset()),
                (ErrorKind::LoneSurrogate, 2 + offset)
            );
        }
    }
    let mut reader = Reader::new(br#""\uD83D\uDE00""#, &ParseOptions::DEFAULT);
    assert_eq!(
        reader.read_string().expect("a pair"),
        ("\u{1F600}".to_owned(), false)
    );
}

/// Bad pieces: bytes that are not UTF-8, a raw control byte, bad escapes.
const BAD: &[&[u8]] = &[
    b"\xFF",
    b"\x80",
    b"\xE2\x82",
    b"\x01",
    b"\\x",
    b"\\u12g4",
    b"\\",
];

/// Pieces of string text, good and bad, to be strung together.
fn piece() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => "[a-z ]{0,20}".prop_map(String::into_bytes),
        2 => prop::sample::select(ESCAPES).prop_map(|e| e.as_bytes().to_vec()),
        1 => prop::sample::select(&["é", "日本語", "\u{1F600}", "Ω"][..]).prop_map(|c| c.as_bytes().to_vec()),
        1 => any::<u16>().prop_map(|u| format!("\\u{u:04x}").into_bytes()),
        1 => prop::sample::select(BAD).prop_map(<[u8]>::to_vec),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Any string text, good or bad, reads as the byte-at-a-time decoder reads it.
    #[test]
    fn strings_read_as_the_plain_decoder_reads_them(pieces in prop::collection::vec(piece(), 0..24)) {
        check(&pieces.concat());
    }

    /// Text that is only good pieces parses, and writes back to the same value.
    #[test]
    fn good_strings_round_trip(pieces in prop::collection::vec(piece(), 0..24)) {
        let body = pieces.concat();
        let quoted = [b"\"", &body[..], b"\""].concat();
        if let Ok(v) = json::parse(&quoted) {
            prop_assert_eq!(json::parse(&json::to_vec(&v)).expect("written text parses"), v);
        }
    }
}

/// How a string is written, one character at a time.
fn reference_written(s: &str) -> String {
    let mut out = String::new();
    write_plain_string(s, &mut out);
    out
}

#[test]
fn every_character_that_needs_escaping_is_written_at_every_offset() {
    let special = (0u8..0x20).map(char::from).chain(['"', '\\']);
    for c in special {
        for offset in 0..16 {
            for tail in [0, 1, 7, 8, 9, 31, 32, 33, 70] {
                for filler in ["a", "é"] {
                    let s = format!("{}{c}{}{c}", filler.repeat(offset), "z".repeat(tail));
                    let mut out = b"[".to_vec();
                    json::write_string(&s, &mut out);
                    assert_eq!(out[1..], *reference_written(&s).as_bytes(), "{s:?}");
                    let value = json::Value::from(s.as_str());
                    assert_eq!(json::to_vec(&value), reference_written(&s).as_bytes());
                }
            }
        }
    }
}

/// Short strings (up to 16 bytes are checked and copied in one piece) with a byte
/// to escape, or one that needs none, at every position.
#[test]
fn short_strings_are_escaped_wherever_the_byte_is() {
    for len in 0..=20 {
        let plain: String = "abcdefghijklmnopqrstu".chars().take(len).collect();
        let mut out = Vec::new();
        json::write_string(&plain, &mut out);
        assert_eq!(out, reference_written(&plain).as_bytes(), "{plain:?}");
        for at in 0..len {
            for special in ['"', '\\', '\n', '\u{0}', '\u{1f}', 'é', '\u{7f}', ' '] {
                let mut s = String::from(&plain[..at]);
                s.push(special);
                s.push_str(&plain[at + 1..]);
                let mut out = Vec::new();
                json::write_string(&s, &mut out);
                assert_eq!(out, reference_written(&s).as_bytes(), "{s:?}");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any text is written as the character-at-a-time writer writes it.
    #[test]
    fn strings_are_written_as_the_plain_writer_writes_them(pieces in prop::collection::vec(piece(), 0..24)) {
        let text = String::from_utf8_lossy(&pieces.concat()).into_owned();
        let mut out = Vec::new();
        json::write_string(&text, &mut out);
        prop_assert_eq!(out, reference_written(&text).into_bytes());
    }
}

/// Long texts dense with characters to escape (the writer walks them a 64-byte block
/// at a time): every run length from 0 to 40 between escapes, across block edges.
#[test]
fn long_texts_dense_with_escapes_are_written_as_the_plain_writer_writes_them() {
    let alphabet = [
        'a', 'é', '\n', '"', '\\', '\u{1}', '\u{1f}', '日', 'z', '\t',
    ];
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut random = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    for _ in 0..400 {
        let mut text = String::new();
        while text.len() < 64 + random(400) {
            text.extend((0..random(41)).map(|_| 'x'));
            text.push(alphabet[random(alphabet.len())]);
        }
        let mut out = Vec::new();
        json::write_string(&text, &mut out);
        assert_eq!(out, reference_written(&text).into_bytes(), "{text:?}");
    }
}
