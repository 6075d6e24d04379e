//! `Reader::skip_value` and `Reader::read_raw` check a value exactly as reading it
//! does: the same texts accepted, the same range, the same error (kind and offset).

use crate::shared_data;

use std::fs;
use std::ops::Range;

use dhara_protocol::json::{self, Error, ErrorKind, ParseOptions, Reader};
use proptest::prelude::*;

const STRICT: ParseOptions = ParseOptions {
    strict_surrogates: true,
    ..ParseOptions::DEFAULT
};

fn with_depth(max_depth: usize) -> ParseOptions {
    ParseOptions {
        max_depth,
        ..ParseOptions::DEFAULT
    }
}

/// Where a reader over `input` stands before the value: at the root, or as the
/// first element of an array the reader has begun (then `input` holds the `[`).
#[derive(Clone, Copy, Debug)]
enum At {
    Root,
    InArray,
}

fn reader_at<'a>(input: &'a [u8], options: &ParseOptions, at: At) -> Option<Reader<'a>> {
    let mut r = Reader::new(input, options);
    if let At::InArray = at {
        r.begin_array().ok()?;
        if !r.next_element().ok()? {
            return None;
        }
    }
    Some(r)
}

/// What reading the value gives: its range (after leading whitespace) or the error,
/// then what `finish` says after it.
fn by_reading(input: &[u8], options: &ParseOptions, at: At) -> Option<Outcome> {
    let mut r = reader_at(input, options, at)?;
    r.peek();
    let start = r.offset();
    Some(match r.read_value() {
        Ok(_) => Outcome::Value(start..r.offset(), r.finish()),
        Err(e) => Outcome::Error(e),
    })
}

fn by_skipping(input: &[u8], options: &ParseOptions, at: At) -> Option<Outcome> {
    let mut r = reader_at(input, options, at)?;
    Some(match r.skip_value() {
        Ok(range) => Outcome::Value(range, r.finish()),
        Err(e) => Outcome::Error(e),
    })
}

fn by_raw(input: &[u8], options: &ParseOptions, at: At) -> Option<Outcome> {
    let mut r = reader_at(input, options, at)?;
    Some(match r.read_raw() {
        Ok(raw) => {
            let start = raw.as_bytes().as_ptr() as usize - input.as_ptr() as usize;
            Outcome::Value(start..start + raw.as_bytes().len(), r.finish())
        }
        Err(e) => Outcome::Error(e),
    })
}

#[derive(Debug, PartialEq)]
enum Outcome {
    Value(Range<usize>, Result<(), Error>),
    Error(Error),
}

/// Skipping, reading raw and reading give the same outcome, at the root and one
/// level down; at the root, skipping then finishing accepts what `parse_with`
/// accepts, with the same error. Returns the outcome at the root.
fn check_same(input: &[u8], options: &ParseOptions) -> Result<Outcome, TestCaseError> {
    for at in [At::Root, At::InArray] {
        let wrapped = [b"[".as_slice(), input, b"]"].concat();
        let input = match at {
            At::Root => input,
            At::InArray => &wrapped,
        };
        let reading = by_reading(input, options, at);
        prop_assert_eq!(&by_skipping(input, options, at), &reading, "{:?}", at);
        prop_assert_eq!(&by_raw(input, options, at), &reading, "{:?}", at);
    }
    let Some(outcome) = by_skipping(input, options, At::Root) else {
        return Err(TestCaseError::fail("a reader at the root is always there"));
    };
    let parsed = json::parse_with(input, options).map(|_| ());
    let skipped = match &outcome {
        Outcome::Value(_, finish) => finish.clone(),
        Outcome::Error(e) => Err(e.clone()),
    };
    prop_assert_eq!(skipped, parsed);
    Ok(outcome)
}

/// Whitespace as the grammar allows it, often none.
fn gap() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["", "", "", " ", "\n", "\t", "\r", " \r\n\t "])
}

/// String text dense in what the string scanners look at: escapes of every kind,
/// surrogate pairs and lone surrogates, non-ASCII, and runs longer than a block.
fn string_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => "[a-z ]{0,12}",
        2 => any::<char>()
            .prop_filter("raw in a string", |c| *c >= ' ' && *c != '"' && *c != '\\')
            .prop_map(String::from),
        2 => prop::sample::select(vec![
            r#"\""#, r"\\", r"\/", r"\b", r"\f", r"\n", r"\r", r"\t"
        ])
        .prop_map(String::from),
        1 => any::<u16>().prop_map(|u| format!("\\u{u:04x}")),
        1 => (0xD800u32..0xDC00, 0xDC00u32..0xE000)
            .prop_map(|(high, low)| format!("\\u{high:04X}\\u{low:04x}")),
        1 => (0xD800u32..0xE000).prop_map(|u| format!("\\u{u:04x}")),
        1 => "[a-zA-Z0-9 ]{60,150}",
    ];
    prop::collection::vec(piece, 0..6).prop_map(|pieces| format!("\"{}\"", pieces.concat()))
}

fn number_text() -> impl Strategy<Value = String> {
    "-?(0|[1-9][0-9]{0,22})(\\.[0-9]{1,8})?([eE][+-]?[0-9]{1,3})?"
}

/// A JSON value's text with whitespace between its tokens.
fn value_text() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        1 => Just("null".to_string()),
        1 => Just("true".to_string()),
        1 => Just("false".to_string()),
        2 => number_text(),
        3 => string_text(),
    ];
    leaf.prop_recursive(6, 64, 6, |inner| {
        let element = (gap(), inner.clone(), gap()).prop_map(|(a, v, b)| format!("{a}{v}{b}"));
        let member = (gap(), string_text(), gap(), gap(), inner, gap())
            .prop_map(|(a, name, b, c, v, d)| format!("{a}{name}{b}:{c}{v}{d}"));
        prop_oneof![
            (prop::collection::vec(element, 0..6), gap())
                .prop_map(|(items, g)| format!("[{g}{}]", items.join(","))),
            (prop::collection::vec(member, 0..6), gap())
                .prop_map(|(members, g)| format!("{{{g}{}}}", members.join(","))),
        ]
    })
}

/// Damage done to a valid text.
#[derive(Clone, Debug)]
enum Damage {
    None,
    Truncate(prop::sample::Index),
    Replace(prop::sample::Index, u8),
    Insert(prop::sample::Index, &'static [u8]),
}

fn damage() -> impl Strategy<Value = Damage> {
    let inserted: Vec<&'static [u8]> = vec![
        b"\x00",
        b"\x1f",
        b"\n",
        b"\xff",
        b"\x80",
        b"\xc0\x80",
        b"\xe2\x82",
        b"\xed\xa0\x80",
        br"\x",
        br"\u12G4",
        br"\ud800",
        br"\udc00",
        br"\",
        b"\"",
        b",",
        b":",
        b"[",
        b"}",
        b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
    ];
    prop_oneof![
        2 => Just(Damage::None),
        1 => any::<prop::sample::Index>().prop_map(Damage::Truncate),
        1 => (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, b)| Damage::Replace(i, b)),
        2 => (any::<prop::sample::Index>(), prop::sample::select(inserted))
            .prop_map(|(i, bytes)| Damage::Insert(i, bytes)),
    ]
}

fn damaged(text: &[u8], damage: &Damage) -> Vec<u8> {
    let mut out = text.to_vec();
    match damage {
        Damage::None => {}
        Damage::Truncate(i) => out.truncate(i.index(text.len() + 1)),
        Damage::Replace(i, b) => {
            if !text.is_empty() {
                out[i.index(text.len())] = *b;
            }
        }
        Damage::Insert(i, bytes) => {
            let at = i.index(text.len() + 1);
            out.splice(at..at, bytes.iter().copied());
        }
    }
    out
}

fn any_options() -> impl Strategy<Value = ParseOptions> {
    let depth = prop_oneof![3 => Just(128usize), 1 => 1usize..8, 1 => 60usize..70];
    (depth, any::<bool>()).prop_map(|(max_depth, strict_surrogates)| ParseOptions {
        max_depth,
        strict_surrogates,
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Texts as written, with whitespace around: skipped whole, the range exactly
    /// the value's text.
    #[test]
    fn written_values_are_skipped_whole(
        lead in gap(),
        value in value_text(),
        trail in gap(),
        options in any_options(),
    ) {
        let input = format!("{lead}{value}{trail}");
        let outcome = check_same(input.as_bytes(), &options)?;
        if let Outcome::Value(range, finish) = outcome {
            prop_assert_eq!(range, lead.len()..lead.len() + value.len());
            prop_assert_eq!(finish, Ok(()));
        }
    }

    /// Damaged texts, some nested deeply: the same outcome as reading them.
    #[test]
    fn damaged_values_give_the_same_outcome(
        value in value_text(),
        damage in damage(),
        nesting in prop_oneof![3 => 0usize..4, 1 => 60usize..70, 1 => 124usize..132],
        options in any_options(),
    ) {
        let nested = format!("{}{value}{}", "[".repeat(nesting), "]".repeat(nesting));
        let input = damaged(nested.as_bytes(), &damage);
        check_same(&input, &options)?;
    }

    /// Any bytes at all.
    #[test]
    fn arbitrary_bytes_give_the_same_outcome(
        input in prop::collection::vec(any::<u8>(), 0..64),
        options in any_options(),
    ) {
        check_same(&input, &options)?;
    }
}

/// The outcome at the root, checked to be the same whichever way it is read.
fn skip(input: &[u8], options: &ParseOptions) -> Result<Range<usize>, (ErrorKind, usize)> {
    match check_same(input, options) {
        Ok(Outcome::Value(range, _)) => Ok(range),
        Ok(Outcome::Error(e)) => Err((e.kind(), e.offset())),
        Err(e) => panic!("{e}"),
    }
}

fn whole(input: &[u8]) -> Result<Range<usize>, (ErrorKind, usize)> {
    Ok(0..input.len())
}

#[test]
fn depth_limit_exactly_and_one_past() {
    for max_depth in [1, 2, 5, 63, 64, 65, 128, 129, 200] {
        let options = with_depth(max_depth);
        let arrays = format!("{}{}", "[".repeat(max_depth), "]".repeat(max_depth));
        assert_eq!(skip(arrays.as_bytes(), &options), whole(arrays.as_bytes()));
        let past = format!("[{arrays}]");
        assert_eq!(
            skip(past.as_bytes(), &options),
            Err((ErrorKind::TooDeep, max_depth))
        );

        // Objects and arrays by turns, members after the deepest value.
        let mut mixed = String::new();
        for level in 0..max_depth {
            mixed.push_str(if level % 2 == 0 { r#"{"a":"# } else { "[" });
        }
        mixed.push('1');
        for level in (0..max_depth).rev() {
            mixed.push_str(if level % 2 == 0 { r#","b":2}"# } else { ",2]" });
        }
        assert_eq!(skip(mixed.as_bytes(), &options), whole(mixed.as_bytes()));
        let past = format!("[{mixed}]");
        let deepest = past.rfind(['{', '[']).unwrap_or_default();
        assert_eq!(
            skip(past.as_bytes(), &options),
            Err((ErrorKind::TooDeep, deepest))
        );
        // A close that does not match its open, deep down.
        if max_depth >= 2 {
            let mismatched = mixed.replacen("]", "}", 1);
            assert!(skip(mismatched.as_bytes(), &options).is_err());
        }
    }
    // An empty container past the limit is still too deep.
    assert_eq!(skip(b"[[]]", &with_depth(1)), Err((ErrorKind::TooDeep, 1)));
    assert_eq!(skip(b"[{}]", &with_depth(1)), Err((ErrorKind::TooDeep, 1)));
}

#[test]
fn depth_counts_from_where_the_reader_is() {
    let input = br#"{"a": [[1]], "b": [[[1]]]}"#;
    let mut r = Reader::new(input, &with_depth(3));
    r.begin_object().unwrap();
    assert_eq!(r.next_member_name().unwrap().as_deref(), Some("a"));
    assert_eq!(r.skip_value(), Ok(6..11));
    assert_eq!(r.next_member_name().unwrap().as_deref(), Some("b"));
    assert_eq!(
        r.skip_value().map_err(|e| (e.kind(), e.offset())),
        Err((ErrorKind::TooDeep, 20))
    );
}

#[test]
fn every_escape() {
    for escape in [
        r#"\""#,
        r"\\",
        r"\/",
        r"\b",
        r"\f",
        r"\n",
        r"\r",
        r"\t",
        r"\u0041",
        r"\u00e9",
        r"\uFFFF",
        r"\uD834\uDD1E",
        r"\udbff\udfff",
    ] {
        for options in [ParseOptions::DEFAULT, STRICT] {
            let input = format!(r#"["a{escape}b", {{"n{escape}": "{escape}"}}]"#);
            assert_eq!(
                skip(input.as_bytes(), &options),
                whole(input.as_bytes()),
                "{input}"
            );
        }
    }
    for (escape, kind) in [
        (r"\a", ErrorKind::InvalidEscape),
        (r"\x41", ErrorKind::InvalidEscape),
        (r"\U0041", ErrorKind::InvalidEscape),
        (r"\u", ErrorKind::InvalidEscape),
        (r"\u12G4", ErrorKind::InvalidEscape),
        (r"\u-123", ErrorKind::InvalidEscape),
        ("\\\u{e9}", ErrorKind::InvalidEscape),
    ] {
        let input = format!(r#"["ok", "a{escape}xyzzy"]"#);
        assert_eq!(
            skip(input.as_bytes(), &ParseOptions::DEFAULT),
            Err((kind, 9))
        );
    }
    // Cut off inside an escape.
    for input in [
        &br#""\"#[..],
        br#""\u"#,
        br#""\u12"#,
        br#""\ud834\"#,
        br#""\ud834\ud"#,
    ] {
        assert_eq!(
            skip(input, &ParseOptions::DEFAULT).map_err(|e| e.0),
            Err(ErrorKind::UnexpectedEnd)
        );
    }
}

#[test]
fn surrogate_pairs_split_across() {
    let lone: Result<Range<usize>, _> = Err((ErrorKind::LoneSurrogate, 1));
    for (input, strict) in [
        (&br#""\uD834\uDD1E""#[..], whole(br#""\uD834\uDD1E""#)),
        (br#""\uD834""#, lone.clone()),
        (br#""\uDD1E""#, lone.clone()),
        (br#""\uDD1E\uD834""#, lone.clone()),
        (br#""\uD834 \uDD1E""#, lone.clone()),
        (br#""\uD834\n\uDD1E""#, lone.clone()),
        (br#""\uD834\\uDD1E""#, lone.clone()),
        (br#""\uD834\uD834\uDD1E""#, lone.clone()),
        (br#""a\uD834\u0041""#, Err((ErrorKind::LoneSurrogate, 2))),
        (
            br#"["\uD834", "\uDD1E"]"#,
            Err((ErrorKind::LoneSurrogate, 2)),
        ),
    ] {
        assert_eq!(
            skip(input, &ParseOptions::DEFAULT),
            whole(input),
            "{input:?}"
        );
        assert_eq!(skip(input, &STRICT), strict, "{input:?}");
    }
}

#[test]
fn member_names_with_lone_surrogates_are_always_errors() {
    for options in [ParseOptions::DEFAULT, STRICT] {
        assert_eq!(
            skip(br#"{"\ud800": 1}"#, &options),
            Err((ErrorKind::LoneSurrogate, 2))
        );
        assert_eq!(
            skip(br#"{"a": 1, "b\udc00": 1}"#, &options),
            Err((ErrorKind::LoneSurrogate, 11))
        );
        assert_eq!(
            skip(br#"[{"\ud800\ud800": 1}]"#, &options),
            Err((ErrorKind::LoneSurrogate, 3))
        );
        let paired = br#"{"\ud834\udd1e": "\ud834\udd1e"}"#;
        assert_eq!(skip(paired, &options), whole(paired));
    }
}

#[test]
fn whitespace_everywhere_allowed() {
    let input = b" \t\n\r{ \t\n\r\"a\" \t\n\r: \t\n\r[ \t\n\r1 \t\n\r, \t\n\r{ \t\n\r} \t\n\r, \
                  \t\n\r[ \t\n\r] \t\n\r, \t\n\rnull \t\n\r] \t\n\r, \t\n\r\"b\"\t:\"c\"\n} \t\n\r";
    let start = 4;
    let end = input.len() - 4;
    assert_eq!(skip(input, &ParseOptions::DEFAULT), Ok(start..end));
    // Whitespace that is not JSON's.
    for odd in ["\u{b}", "\u{c}", "\u{a0}"] {
        let input = format!("[1,{odd}2]");
        assert_eq!(
            skip(input.as_bytes(), &ParseOptions::DEFAULT).map_err(|e| e.1),
            Err(3)
        );
    }
}

#[test]
fn literals_and_numbers() {
    for good in [
        "true",
        "false",
        "null",
        "0",
        "-0",
        "1.5e3",
        "-12.25E-7",
        "12345678901234567890",
    ] {
        assert_eq!(
            skip(good.as_bytes(), &ParseOptions::DEFAULT),
            whole(good.as_bytes())
        );
    }
    for bad in [
        "tru", "nul", "fals", "trUe", "-", "1.", "1e", "1e+", ".5", "+1", "[01]",
    ] {
        assert!(
            skip(bad.as_bytes(), &ParseOptions::DEFAULT).is_err(),
            "{bad}"
        );
    }
    // A number ends where the grammar says; what follows is not the value's.
    assert_eq!(skip(b"01", &ParseOptions::DEFAULT), Ok(0..1));
}

#[test]
fn invalid_utf8_inside_a_skipped_value_is_still_rejected() {
    let input = b"{\"a\": [\"x\xffy\", 1], \"b\": 2}";
    let mut r = Reader::new(input, &ParseOptions::DEFAULT);
    r.begin_object().unwrap();
    assert_eq!(r.next_member_name().unwrap().as_deref(), Some("a"));
    let err = r.skip_value().unwrap_err();
    assert_eq!((err.kind(), err.offset()), (ErrorKind::InvalidUtf8, 9));
    let mut r = Reader::new(input, &ParseOptions::DEFAULT);
    r.begin_object().unwrap();
    r.next_member_name().unwrap();
    let err = r.read_raw().unwrap_err();
    assert_eq!((err.kind(), err.offset()), (ErrorKind::InvalidUtf8, 9));
    assert_eq!(
        skip(input, &ParseOptions::DEFAULT),
        Err((ErrorKind::InvalidUtf8, 9))
    );

    // In a member name, in a value with escapes, and a surrogate encoded in UTF-8.
    for (input, at) in [
        (&b"{\"\xc0\x80\": 1}"[..], 2),
        (b"[\"a\\n\xe2\x82\"]", 5),
        (b"\"\xed\xa0\x80\"", 1),
    ] {
        assert_eq!(
            skip(input, &ParseOptions::DEFAULT),
            Err((ErrorKind::InvalidUtf8, at))
        );
    }
    // An error in an escape before the bad byte comes first.
    assert_eq!(
        skip(b"\"\\x\xff\"", &ParseOptions::DEFAULT),
        Err((ErrorKind::InvalidEscape, 1))
    );
    // Bytes that are not UTF-8 after the value are not the value's.
    let mut r = Reader::new(b"[\"ok\", 1] \xff", &ParseOptions::DEFAULT);
    assert_eq!(r.read_raw().map(|raw| raw.as_str()), Ok(r#"["ok", 1]"#));
}

/// Every `y_`, `n_` and `i_` file: skipping then finishing accepts exactly what
/// `parse_with` accepts, with the same error, under both surrogate choices.
#[test]
fn json_test_suite_skipped() {
    let Some(dir) = shared_data::conformance("JSONTestSuite/test_parsing") else {
        return;
    };
    let mut count = 0;
    for entry in fs::read_dir(&dir).expect("readable directory") {
        let path = entry.expect("directory entry").path();
        let input = fs::read(&path).expect("readable file");
        for options in [ParseOptions::DEFAULT, STRICT] {
            if let Err(e) = check_same(&input, &options) {
                panic!("{}: {e}", path.display());
            }
        }
        count += 1;
    }
    assert!(count > 300, "only {count} files in {}", dir.display());
    println!("JSONTestSuite: {count} files skipped as parsed");
}

/// Strings with few and with many escapes (so checked in place a word at a time,
/// and with 64-byte masks once dense), with every kind of fault at offsets on both
/// sides of 64-byte block edges, under both surrogate choices: skipping judges
/// them as reading does, errors included.
#[test]
fn strings_dense_with_escapes_are_judged_as_reading_judges_them() {
    let faults: [&[u8]; 9] = [
        b"",
        b"\\x01",
        b"\\u00e9",
        b"\\ud834\\udd1e",
        b"\\ud800",
        b"\\q",
        b"\\u12",
        b"\x01",
        b"\xC3\x28",
    ];
    let tails: [&[u8]; 3] = [b"\"", b"\\t\"", b"\xE2\x82\xAC\""];
    for escapes in 0..8 {
        for pad in 0..70 {
            for fault in faults {
                for tail in tails {
                    let mut text = b"[\"".to_vec();
                    for k in 0..escapes {
                        let piece: &[u8] = if k % 2 == 0 { b"\\n" } else { b"ab\xC3\xA9" };
                        text.extend_from_slice(piece);
                    }
                    text.extend(std::iter::repeat_n(b'x', pad));
                    text.extend_from_slice(fault);
                    text.extend_from_slice(tail);
                    text.push(b']');
                    for options in [ParseOptions::DEFAULT, STRICT] {
                        if let Err(e) = check_same(&text, &options) {
                            panic!("{}: {e}", String::from_utf8_lossy(&text));
                        }
                    }
                }
            }
        }
    }
}

/// Every byte from 0x80 up, with every byte after it and some after those, in a
/// string with few escapes and in one dense with them (most two- and three-byte
/// characters are checked in line, the rest by the general check): skipping
/// judges them as reading does.
#[test]
fn multi_byte_characters_are_judged_as_reading_judges_them() {
    for before in [&b"a"[..], b"\\n\\t\\r\\\"a"] {
        for lead in 0x80..=0xFFu8 {
            for second in 0..=0xFFu8 {
                for after in [b'"', b'a', 0x7F, 0x80, 0xA9, 0xBF, 0xC0, 0xC3] {
                    let mut text = b"[\"".to_vec();
                    text.extend_from_slice(before);
                    text.extend_from_slice(&[lead, second, after, b'"', b']']);
                    if let Err(e) = check_same(&text, &ParseOptions::DEFAULT) {
                        panic!("{text:x?}: {e}");
                    }
                }
            }
        }
    }
}
