//! JSONTestSuite conformance (read at run time from `../shared/conformance/`) and
//! unit tests of the JSON parser and writer.

use crate::shared_data;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use dhara_protocol::json::{
    self, Error, ErrorKind, Number, ParseOptions, Reader, Value, to_vec, write_string,
};

const STRICT: ParseOptions = ParseOptions {
    strict_surrogates: true,
    ..ParseOptions::DEFAULT
};

fn suite_dir(sub: &str) -> Option<PathBuf> {
    shared_data::conformance(&format!("JSONTestSuite/{sub}"))
}

/// Every file of a directory: (name, bytes), sorted by name.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = fs::read_dir(dir)
        .expect("readable directory")
        .map(|e| {
            let path = e.expect("directory entry").path();
            let name = path
                .file_name()
                .expect("file name")
                .to_string_lossy()
                .into_owned();
            (name, fs::read(&path).expect("readable file"))
        })
        .collect();
    out.sort();
    out
}

/// `Ok(())` or the error kind's name, as the docs table writes it.
fn outcome(input: &[u8], options: &ParseOptions) -> String {
    match json::parse_with(input, options) {
        Ok(_) => "accepted".to_string(),
        Err(e) => {
            let kind = format!("{:?}", e.kind());
            let name = kind.split('(').next().unwrap_or_default();
            format!("rejected: {name}")
        }
    }
}

/// The `i_` table of the `json` module docs: file -> (default, strict).
fn documented_choices() -> BTreeMap<String, (String, String)> {
    let docs = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/json/mod.rs"))
        .expect("src/json/mod.rs");
    docs.lines()
        .filter_map(|line| line.strip_prefix("//! | `i_"))
        .map(|row| {
            let cells: Vec<&str> = row.split(" | ").map(str::trim).collect();
            let file = format!("i_{}", cells[0].trim_end_matches('`'));
            (file, (cells[1].to_string(), cells[2].to_string()))
        })
        .collect()
}

#[test]
fn json_test_suite_parsing() {
    let Some(dir) = suite_dir("test_parsing") else {
        return;
    };
    let choices = documented_choices();
    let (mut y, mut n, mut i) = (0, 0, 0);
    let mut seen_i = Vec::new();
    for (name, bytes) in files(&dir) {
        let result = json::parse(&bytes);
        if name.starts_with("y_") {
            assert!(
                result.is_ok(),
                "{name} must be accepted: {:?}",
                result.err()
            );
            // The pull reader agrees: the whole text is one valid value.
            let mut r = Reader::new(&bytes, &ParseOptions::DEFAULT);
            let range = r
                .skip_value()
                .unwrap_or_else(|e| panic!("{name}: skip_value: {e}"));
            r.finish().unwrap_or_else(|e| panic!("{name}: finish: {e}"));
            assert!(range.end <= bytes.len());
            y += 1;
        } else if name.starts_with("n_") {
            assert!(result.is_err(), "{name} must be rejected");
            let mut r = Reader::new(&bytes, &ParseOptions::DEFAULT);
            assert!(
                r.skip_value().and_then(|_| r.finish()).is_err(),
                "{name}: skip_value"
            );
            n += 1;
        } else if name.starts_with("i_") {
            let (default, strict) = choices
                .get(&name)
                .unwrap_or_else(|| panic!("{name} has no row in the docs table"));
            assert_eq!(
                &outcome(&bytes, &ParseOptions::DEFAULT),
                default,
                "{name} (default)"
            );
            assert_eq!(&outcome(&bytes, &STRICT), strict, "{name} (strict)");
            seen_i.push(name);
            i += 1;
        }
    }
    for name in choices.keys() {
        assert!(seen_i.contains(name), "docs table row {name} has no file");
    }
    println!("JSONTestSuite test_parsing: {y} y_ accepted, {n} n_ rejected, {i} i_ as documented");
    assert!(y > 0 && n > 0 && i > 0);
}

#[test]
fn json_test_suite_transform() {
    let Some(dir) = suite_dir("test_transform") else {
        return;
    };
    let mut checked = 0;
    for (name, bytes) in files(&dir) {
        checked += 1;
        // Raw UTF-8-encoded surrogates are not UTF-8; escaped ones become U+FFFD.
        if name.contains("_invalid_codepoint") && !name.contains("escaped") {
            let err = json::parse(&bytes).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidUtf8, "{name}");
            continue;
        }
        let Ok(v) = json::parse(&bytes) else {
            panic!("{name} must be accepted");
        };
        // Writing is exact and stable: no whitespace in these files, so the compact
        // text is the input itself, numbers included.
        let text = std::str::from_utf8(&bytes).unwrap_or_default().trim_end();
        if !name.starts_with("string_") && !text.is_empty() {
            assert_eq!(
                String::from_utf8_lossy(&to_vec(&v)),
                text.replace(", ", ","),
                "{name}"
            );
        }
        assert_eq!(json::parse(&to_vec(&v)).as_ref(), Ok(&v), "{name}");
    }
    let get = |name: &str| json::parse(&fs::read(dir.join(name)).expect(name)).expect(name);
    assert_eq!(
        get("object_same_key_different_values.json")["a"].as_i64(),
        Some(2)
    );
    let unclear = get("object_same_key_unclear_values.json");
    assert_eq!(unclear.as_object().map(|o| o.count("a")), Some(2));
    assert_eq!(unclear["a"].as_number().map(Number::as_str), Some("-0"));
    assert_eq!(
        get("object_key_nfc_nfd.json").as_object().map(|o| o.len()),
        Some(2)
    );
    assert_eq!(
        get("string_1_escaped_invalid_codepoint.json")[0].as_str(),
        Some("\u{FFFD}")
    );
    assert_eq!(
        get("string_3_escaped_invalid_codepoints.json")[0].as_str(),
        Some("\u{FFFD}".repeat(3).as_str())
    );
    assert_eq!(
        get("string_with_escaped_NULL.json")[0].as_str(),
        Some("A\0B")
    );
    assert_eq!(
        to_vec(&get("string_with_escaped_NULL.json")),
        br#"["A\u0000B"]"#
    );
    for big in [
        "number_1.000000000000000005.json",
        "number_10000000000000000999.json",
        "number_1e-999.json",
    ] {
        let text = fs::read_to_string(dir.join(big)).expect(big);
        assert_eq!(to_vec(&get(big)), text.trim_end().as_bytes(), "{big}");
    }
    println!("JSONTestSuite test_transform: {checked} files checked");
}

#[test]
fn ten_million_brackets_are_too_deep() {
    let input = vec![b'['; 10_000_000];
    let err = json::parse(&input).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TooDeep);
    assert_eq!(err.offset(), 128);
    let mut r = Reader::new(&input, &ParseOptions::DEFAULT);
    assert_eq!(r.skip_value().unwrap_err().kind(), ErrorKind::TooDeep);
    // A deep limit is honoured without recursion too.
    let input = vec![b'['; 1_000_000];
    let deep = ParseOptions {
        max_depth: usize::MAX,
        ..ParseOptions::DEFAULT
    };
    let err = json::parse_with(&input, &deep).unwrap_err();
    assert_eq!(
        (err.kind(), err.offset()),
        (ErrorKind::UnexpectedEnd, input.len())
    );
}

#[test]
fn depth_limit_is_exact() {
    let nested = |n: usize| [vec![b'['; n], vec![b']'; n]].concat();
    assert!(json::parse(&nested(128)).is_ok());
    assert_eq!(
        json::parse(&nested(129)).unwrap_err().kind(),
        ErrorKind::TooDeep
    );
    let shallow = ParseOptions {
        max_depth: 1,
        ..ParseOptions::DEFAULT
    };
    assert!(json::parse_with(b"[1,{}]", &shallow).is_err());
    assert!(json::parse_with(b"[1,2]", &shallow).is_ok());
    let none = ParseOptions {
        max_depth: 0,
        ..ParseOptions::DEFAULT
    };
    assert!(json::parse_with(b"\"scalar\"", &none).is_ok());
    assert_eq!(
        json::parse_with(b"{}", &none).unwrap_err().kind(),
        ErrorKind::TooDeep
    );
    // Deep values that are allowed parse and write back exactly (1000 levels).
    let wide = ParseOptions {
        max_depth: 1000,
        ..ParseOptions::DEFAULT
    };
    let text = [
        b"{\"a\":".repeat(500),
        b"[".repeat(500),
        b"1".to_vec(),
        b"]".repeat(500),
        b"}".repeat(500),
    ]
    .concat();
    let v = json::parse_with(&text, &wide).unwrap();
    assert_eq!(to_vec(&v), text);
}

#[test]
fn number_texts_round_trip_byte_for_byte() {
    for text in [
        "12345678901234567890123",
        "1.5e3",
        "-0",
        "0.1000000000000000055511151231257827",
        "1E+2",
        "-1e-7",
        "123456789012345678901234567890.000000000000000000001e-999",
        "0",
        "9223372036854775808",
    ] {
        let v = json::parse(text.as_bytes()).unwrap();
        assert_eq!(to_vec(&v), text.as_bytes());
        assert_eq!(v.as_number().map(Number::as_str), Some(text));
        let wrapped = format!("[{text},{{\"n\":{text}}}]");
        assert_eq!(
            to_vec(&json::parse(wrapped.as_bytes()).unwrap()),
            wrapped.as_bytes()
        );
    }
    assert_eq!(json::parse(b"-0").unwrap().as_u64(), Some(0));
    assert_eq!(
        json::parse(b"18446744073709551615").unwrap().as_u64(),
        Some(u64::MAX)
    );
    assert_eq!(
        json::parse(b"-9223372036854775808").unwrap().as_i64(),
        Some(i64::MIN)
    );
    assert_eq!(json::parse(b"1.5e3").unwrap().as_f64(), Some(1500.0));
    assert_eq!(json::parse(b"1.0").unwrap().as_i64(), None);
}

#[test]
fn invalid_numbers() {
    for (text, kind, offset) in [
        (&b"01"[..], ErrorKind::TrailingCharacters, 1),
        (b"-", ErrorKind::UnexpectedEnd, 1),
        (b"-a", ErrorKind::InvalidNumber, 1),
        (b"1.", ErrorKind::UnexpectedEnd, 2),
        (b"1.e5", ErrorKind::InvalidNumber, 2),
        (b"1e", ErrorKind::UnexpectedEnd, 2),
        (b"1e+]", ErrorKind::InvalidNumber, 3),
        (b"[+1]", ErrorKind::UnexpectedByte(b'+'), 1),
        (b"[.5]", ErrorKind::UnexpectedByte(b'.'), 1),
        (b"[1 2]", ErrorKind::UnexpectedByte(b'2'), 3),
    ] {
        let err = json::parse(text).unwrap_err();
        assert_eq!(
            (err.kind(), err.offset()),
            (kind, offset),
            "{}",
            String::from_utf8_lossy(text)
        );
    }
}

#[test]
fn from_f64() {
    assert_eq!(Value::from(1.5), json::parse(b"1.5").unwrap());
    assert_eq!(Value::from(1e100).to_string(), "1e100");
    assert_eq!(Value::from(3.0).to_string(), "3.0");
    assert_eq!(Value::from(f64::NAN), Value::Null);
    assert_eq!(Value::from(f64::INFINITY), Value::Null);
    assert_eq!(Value::from(f64::NEG_INFINITY), Value::Null);
    assert_eq!(Value::from(0.1).as_f64(), Some(0.1));
}

#[test]
fn lone_surrogates() {
    let fffd = Some("\u{FFFD}");
    assert_eq!(json::parse(br#""\ud800""#).unwrap().as_str(), fffd);
    assert_eq!(json::parse(br#""\udc00""#).unwrap().as_str(), fffd);
    assert_eq!(
        json::parse(br#""a\ud800\ud800b""#).unwrap().as_str(),
        Some("a\u{FFFD}\u{FFFD}b")
    );
    assert_eq!(
        json::parse(br#""\ud800\n""#).unwrap().as_str(),
        Some("\u{FFFD}\n")
    );
    assert_eq!(
        json::parse(br#""\ud83d\ude00""#).unwrap().as_str(),
        Some("\u{1F600}")
    );
    assert_eq!(
        json::parse(br#""\uD834\uDD1E""#).unwrap().as_str(),
        Some("\u{1D11E}")
    );
    // Strict: rejected in values, the error at the escape.
    let err = json::parse_with(br#"["ok", "x\ud800"]"#, &STRICT).unwrap_err();
    assert_eq!((err.kind(), err.offset()), (ErrorKind::LoneSurrogate, 9));
    assert!(json::parse_with(br#""\ud83d\ude00""#, &STRICT).is_ok());
    // Names: always rejected.
    for options in [ParseOptions::DEFAULT, STRICT] {
        let err = json::parse_with(br#"{"a\udfaa": 1}"#, &options).unwrap_err();
        assert_eq!((err.kind(), err.offset()), (ErrorKind::LoneSurrogate, 3));
        let mut r = Reader::new(br#"{"\ud800": 1}"#, &options);
        r.begin_object().unwrap();
        assert_eq!(
            r.next_member().unwrap_err().kind(),
            ErrorKind::LoneSurrogate
        );
    }
    // The reader reports a replacement exactly.
    let mut r = Reader::new(
        br#"["\ud800x", "\ud800\udc00", "plain"]"#,
        &ParseOptions::DEFAULT,
    );
    r.begin_array().unwrap();
    assert!(r.next_element().unwrap());
    assert_eq!(r.read_string().unwrap(), ("\u{FFFD}x".to_string(), true));
    assert!(r.next_element().unwrap());
    assert_eq!(r.read_string().unwrap(), ("\u{10000}".to_string(), false));
    assert!(r.next_element().unwrap());
    assert_eq!(r.read_string().unwrap(), ("plain".to_string(), false));
    assert!(!r.next_element().unwrap());
    r.finish().unwrap();
    let mut r = Reader::new(br#""\ud800""#, &STRICT);
    assert_eq!(
        r.read_string().unwrap_err().kind(),
        ErrorKind::LoneSurrogate
    );
}

#[test]
fn escapes() {
    let v = json::parse(br#""\"\\\/\b\f\n\r\t\u0041\u00e9\u20AC""#).unwrap();
    assert_eq!(v.as_str(), Some("\"\\/\u{8}\u{c}\n\r\tAé€"));
    for (text, kind, offset) in [
        (&br#""\x""#[..], ErrorKind::InvalidEscape, 1),
        (br#""\u12G4""#, ErrorKind::InvalidEscape, 1),
        (br#""\u12"#, ErrorKind::UnexpectedEnd, 3),
        (br#""\"#, ErrorKind::UnexpectedEnd, 2),
        (b"\"a\tb\"", ErrorKind::ControlCharacterInString, 2),
        (b"\"a\nb\"", ErrorKind::ControlCharacterInString, 2),
        (b"\"abc", ErrorKind::UnexpectedEnd, 4),
    ] {
        let err = json::parse(text).unwrap_err();
        assert_eq!(
            (err.kind(), err.offset()),
            (kind, offset),
            "{}",
            String::from_utf8_lossy(text)
        );
    }
}

#[test]
fn invalid_utf8_is_rejected() {
    for (text, offset) in [
        (&b"\"\xff\""[..], 1),
        (b"\"abc\xc3\"", 4),
        (b"[\"0123456789abcdef\xed\xa0\x80\"]", 18),
        (b"{\"k\xc0\xaf\": 1}", 3),
        (b"\"\xf4\x90\x80\x80\"", 1),
    ] {
        let err = json::parse(text).unwrap_err();
        assert_eq!(
            (err.kind(), err.offset()),
            (ErrorKind::InvalidUtf8, offset),
            "{text:?}"
        );
    }
    // Raw non-ASCII outside strings is no value at all.
    assert_eq!(
        json::parse("é".as_bytes()).unwrap_err().kind(),
        ErrorKind::UnexpectedByte(0xC3)
    );
    // Valid multi-byte text of every length survives.
    let text = "\"aé€😀 – ünïcødé\"";
    assert_eq!(
        to_vec(&json::parse(text.as_bytes()).unwrap()),
        text.as_bytes()
    );
}

#[test]
fn byte_order_mark_is_rejected() {
    let err = json::parse(b"\xEF\xBB\xBF{}").unwrap_err();
    assert_eq!((err.kind(), err.offset()), (ErrorKind::ByteOrderMark, 0));
}

#[test]
fn error_positions() {
    let err: Error = json::parse(b"{\n  \"a\": [1, 2,\n   ]\n}").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::UnexpectedByte(b']'));
    assert_eq!((err.offset(), err.line(), err.column()), (19, 3, 4));
    assert_eq!(
        err.to_string(),
        "unexpected character ']' at line 3 column 4 (byte 19)"
    );
    // Columns count characters, not bytes.
    let err = json::parse("[\"é€\", x]".as_bytes()).unwrap_err();
    assert_eq!((err.offset(), err.line(), err.column()), (10, 1, 8));
    let err = json::parse(b"").unwrap_err();
    assert_eq!(
        (err.kind(), err.offset(), err.line(), err.column()),
        (ErrorKind::UnexpectedEnd, 0, 1, 1)
    );
    let err = json::parse(b"  ").unwrap_err();
    assert_eq!((err.kind(), err.offset()), (ErrorKind::UnexpectedEnd, 2));
    let err = json::parse(b"{} x").unwrap_err();
    assert_eq!(
        (err.kind(), err.offset()),
        (ErrorKind::TrailingCharacters, 3)
    );
    let err = json::parse(b"{\"a\" 1}").unwrap_err();
    assert_eq!(
        (err.kind(), err.offset()),
        (ErrorKind::UnexpectedByte(b'1'), 5)
    );
    let err = json::parse(b"[nul]").unwrap_err();
    assert_eq!(
        (err.kind(), err.offset()),
        (ErrorKind::UnexpectedByte(b']'), 4)
    );
    let err = json::parse(b"[1,]").unwrap_err();
    assert_eq!(
        (err.kind(), err.offset()),
        (ErrorKind::UnexpectedByte(b']'), 3)
    );
    let err = json::parse(b"{\"a\":1,}").unwrap_err();
    assert_eq!(
        (err.kind(), err.offset()),
        (ErrorKind::UnexpectedByte(b'}'), 7)
    );
    let err = json::parse(b"[1}").unwrap_err();
    assert_eq!(
        (err.kind(), err.offset()),
        (ErrorKind::UnexpectedByte(b'}'), 2)
    );
    #[cfg(feature = "std")]
    {
        let boxed: Box<dyn std::error::Error> = Box::new(err);
        assert!(boxed.to_string().contains("byte 2"));
    }
}

#[test]
fn whitespace_and_structure() {
    let v = json::parse(b" \t\r\n{ \"a\" : [ 1 , true , null , false , \"s\" , { } , [ ] ] } \n")
        .unwrap();
    assert_eq!(v.to_string(), r#"{"a":[1,true,null,false,"s",{},[]]}"#);
    // Only JSON whitespace counts.
    assert!(json::parse(b"\x0c1").is_err());
    assert!(json::parse("\u{a0}1".as_bytes()).is_err());
}

#[test]
fn duplicate_members_are_kept_and_last_wins() {
    let v = json::parse(br#"{"a":1,"b":2,"a":3}"#).unwrap();
    assert_eq!(v["a"].as_i64(), Some(3));
    assert_eq!(v.as_object().map(|o| o.len()), Some(3));
    assert_eq!(v.to_string(), r#"{"a":1,"b":2,"a":3}"#);
}

#[test]
fn writer_escapes_every_control_character() {
    let all: String = (0u8..0x80).map(char::from).collect();
    let mut out = Vec::new();
    write_string(&all, &mut out);
    assert!(out.iter().all(|&b| b >= 0x20), "no raw control byte");
    assert_eq!(json::parse(&out).unwrap().as_str(), Some(all.as_str()));
    let mut out = Vec::new();
    write_string("\u{0}\u{1f}\u{8}\u{c}\n\r\t\"\\/\u{7f}", &mut out);
    assert_eq!(out, b"\"\\u0000\\u001f\\b\\f\\n\\r\\t\\\"\\\\/\x7f\"");
    // Long strings are scanned in words: escapes at every position of a word.
    for at in 0..20 {
        let s: String = (0..20).map(|i| if i == at { '\n' } else { 'x' }).collect();
        let mut out = Vec::new();
        write_string(&s, &mut out);
        assert_eq!(json::parse(&out).unwrap().as_str(), Some(s.as_str()));
        assert_eq!(out.len(), 20 + 2 + 1);
    }
    // Runs of every length, with an escape at every position: the writer copies
    // short runs a word at a time and long ones in one piece.
    for len in [0, 1, 7, 8, 9, 15, 16, 31, 32, 33, 40, 63, 64, 65, 100, 200] {
        for at in 0..=len {
            let s: String = (0..len)
                .map(|i| if i == at { '"' } else { 'é' })
                .chain("abc\t".chars())
                .collect();
            let mut out = Vec::new();
            write_string(&s, &mut out);
            assert_eq!(
                json::parse(&out).unwrap().as_str(),
                Some(s.as_str()),
                "{len} {at}"
            );
        }
    }
    // `write_value` appends.
    let mut out = b"x".to_vec();
    json::write_value(&Value::from(vec![1, 2]), &mut out);
    assert_eq!(out, b"x[1,2]");
}

#[test]
fn reader_walks_an_envelope() {
    let text = br#" {"jsonrpc":"2.0","id":"a\u0062","method":"tools/execute","params":{"input":[1,{"x":null}]},"extra":[]} "#;
    let mut r = Reader::new(text, &ParseOptions::DEFAULT);
    assert_eq!(r.peek(), Some(b'{'));
    r.begin_object().unwrap();
    let mut seen = Vec::new();
    while let Some(name) = r.next_member().unwrap() {
        match name.as_str() {
            "id" | "jsonrpc" | "method" => seen.push(r.read_string().unwrap().0),
            "params" => {
                let range = r.skip_value().unwrap();
                assert_eq!(&text[range], br#"{"input":[1,{"x":null}]}"#);
            }
            _ => assert_eq!(r.read_value().unwrap(), Value::Array(vec![])),
        }
    }
    r.finish().unwrap();
    assert_eq!(seen, ["2.0", "ab", "tools/execute"]);
    assert_eq!(r.offset(), text.len());

    // Not a string: nothing consumed.
    let mut r = Reader::new(b"[7]", &ParseOptions::DEFAULT);
    r.begin_array().unwrap();
    assert!(r.next_element().unwrap());
    assert_eq!(
        r.read_string().unwrap_err().kind(),
        ErrorKind::ExpectedString
    );
    assert_eq!(r.read_value().unwrap().as_i64(), Some(7));
    assert!(!r.next_element().unwrap());
    r.finish().unwrap();

    // Grammar errors surface through the reader too.
    for bad in [
        &b"{,}"[..],
        b"{\"a\":1,}",
        b"{\"a\" 1}",
        b"{\"a\":1 \"b\":2}",
        b"{\"a\":1]",
    ] {
        let mut r = Reader::new(bad, &ParseOptions::DEFAULT);
        let mut result = r.begin_object();
        while result.is_ok() {
            match r.next_member() {
                Ok(Some(_)) => result = r.skip_value().map(|_| ()),
                Ok(None) => break,
                Err(e) => result = Err(e),
            }
        }
        assert!(result.is_err(), "{}", String::from_utf8_lossy(bad));
    }
    let mut r = Reader::new(b"[1 2]", &ParseOptions::DEFAULT);
    r.begin_array().unwrap();
    assert!(r.next_element().unwrap());
    r.skip_value().unwrap();
    assert!(r.next_element().is_err());

    // Depth counts from where the reader is.
    let shallow = ParseOptions {
        max_depth: 2,
        ..ParseOptions::DEFAULT
    };
    let mut r = Reader::new(b"{\"a\":[[1]]}", &shallow);
    r.begin_object().unwrap();
    r.next_member().unwrap();
    assert_eq!(r.read_value().unwrap_err().kind(), ErrorKind::TooDeep);
    let mut r = Reader::new(b"{\"a\":[1]}", &shallow);
    r.begin_object().unwrap();
    r.next_member().unwrap();
    assert!(r.read_value().is_ok());
    assert_eq!(r.next_member().unwrap(), None);
    r.finish().unwrap();
}

#[test]
fn reader_rejects_trailing_input() {
    let mut r = Reader::new(b"1 2", &ParseOptions::DEFAULT);
    assert_eq!(r.skip_value().unwrap(), 0..1);
    assert_eq!(
        r.finish().unwrap_err().kind(),
        ErrorKind::TrailingCharacters
    );
}

#[test]
fn long_strings_cross_word_boundaries() {
    for len in 0..40 {
        for special in ["\\n", "\\u00e9", "é", "\\\"", ""] {
            let body = format!("{}{special}{}", "a".repeat(len), "b".repeat(len % 9));
            let text = format!("\"{body}\"");
            let v = json::parse(text.as_bytes()).unwrap();
            assert_eq!(json::parse(&to_vec(&v)).unwrap(), v);
            let mut r = Reader::new(text.as_bytes(), &ParseOptions::DEFAULT);
            assert_eq!(r.skip_value().unwrap(), 0..text.len());
        }
    }
}

#[test]
fn json_macro_builds_values() {
    use dhara_protocol::json as j;
    let name = String::from("né");
    let v = dhara_protocol::json::json!({
        "null": null,
        "bools": [true, false],
        "numbers": [0, (-7), 18446744073709551615u64, 1.5],
        "text": name,
        "empty": {"a": [], "o": {}},
        "dup": 1,
        "dup": 2,
    });
    let expected = r#"{"null":null,"bools":[true,false],"numbers":[0,-7,18446744073709551615,1.5],"text":"né","empty":{"a":[],"o":{}},"dup":1,"dup":2}"#;
    assert_eq!(v.to_string(), expected);
    assert_eq!(v["dup"].as_i64(), Some(2));
    assert_eq!(j::parse(v.to_string().as_bytes()).unwrap(), v);
    assert_eq!(dhara_protocol::json::json!(null), Value::Null);
    assert_eq!(dhara_protocol::json::json!("s"), Value::from("s"));
    assert_eq!(dhara_protocol::json::json!([]), Value::Array(Vec::new()));
}

#[test]
fn parses_after_errors_start_clean() {
    // A parse that fails half-way leaves nothing behind for the next one by the same
    // parser (whose scratch stacks are reused).
    let good = br#"{"a":[1,{"b":"c"}],"d":{}}"#;
    let expected = json::parse(good).unwrap();
    let mut parser = json::Parser::new();
    for bad in [
        &br#"{"a":[1,{"b":"c"},"#[..],
        br#"[{"x":[[[1]]],"y":"#,
        br#"[1,2,{"k":tru"#,
    ] {
        assert!(parser.parse(bad).is_err());
        assert_eq!(parser.parse(good).unwrap(), expected);
        let mut r = Reader::new(good, &ParseOptions::DEFAULT);
        assert_eq!(parser.read(&mut r).unwrap(), expected);
        let mut r = Reader::new(good, &ParseOptions::DEFAULT);
        assert_eq!(r.read_value().unwrap(), expected);
    }
    // A big value does not keep its scratch space, and the next parse still works.
    let big = format!("[{}0]", "0,".repeat(100_000));
    assert_eq!(
        parser
            .parse(big.as_bytes())
            .unwrap()
            .as_array()
            .map(Vec::len),
        Some(100_001)
    );
    assert_eq!(parser.parse(good).unwrap(), expected);
}
