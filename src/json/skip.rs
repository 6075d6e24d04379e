//! Checking one value's grammar as fast as it can be done, for
//! [`Reader::skip_value`](super::Reader::skip_value) and so for every payload that is
//! only passed through.
//!
//! [`value_end`] walks the same grammar as the reader, with nothing to report: one
//! tight loop, open containers as bits, whitespace skipped inline, string runs found
//! a word at a time, escapes and multi-byte characters checked in place. It answers
//! only whether the value is well formed (UTF-8 included) and where it ends; for the
//! error the reader walks the value again with its general grammar, so errors are
//! the reader's, byte for byte, by construction.
//!
//! UTF-8 is checked as the strings are passed over, not in a pass of its own: a run
//! of string text ends at any byte from 0x80 up as well as at a quote, backslash or
//! control byte, and the character starting there is checked where it stands. Text
//! that is mostly ASCII so costs nothing more to check than to skip.

use super::scan::{
    RunEnds, SHORT_ESCAPES, characters_end, find_ascii_run_end, hex4, number_end,
    special_or_high_bytes, word_at,
};
use super::sink::{ARRAY, Nesting, OBJECT};

/// Where the value starting at `input[start]` (after optional whitespace) ends,
/// when it is well formed: open at most `levels` arrays and objects deep, and
/// without escaped lone surrogates if `strict` (in member names they are never
/// allowed), its strings UTF-8. `Err(())` for any error, including too deep a
/// nesting.
pub(super) fn value_end(
    input: &[u8],
    start: usize,
    levels: usize,
    strict: bool,
) -> Result<usize, ()> {
    let mut i = start;
    let mut open = Nesting::default();
    loop {
        // A value starts here.
        i = whitespace_end(input, i);
        match input.get(i) {
            Some(b'{') => {
                if open.depth() >= levels {
                    return Err(());
                }
                i = whitespace_end(input, i + 1);
                if input.get(i) == Some(&b'}') {
                    i += 1;
                } else {
                    i = member_name_end(input, i)?;
                    open.push(OBJECT);
                    continue;
                }
            }
            Some(b'[') => {
                if open.depth() >= levels {
                    return Err(());
                }
                i = whitespace_end(input, i + 1);
                if input.get(i) == Some(&b']') {
                    i += 1;
                } else {
                    open.push(ARRAY);
                    continue;
                }
            }
            Some(b'"') => i = string_end(input, i + 1, strict)?,
            Some(b'-' | b'0'..=b'9') => i = number_end(input, i).map_err(|_| ())?,
            Some(b't') => i = literal_end(input, i, b"true")?,
            Some(b'f') => i = literal_end(input, i, b"false")?,
            Some(b'n') => i = literal_end(input, i, b"null")?,
            _ => return Err(()),
        }
        // A value ended here: close the containers it completes, then go on with the
        // next member or element.
        loop {
            let Some(container) = open.top() else {
                return Ok(i);
            };
            i = whitespace_end(input, i);
            match (input.get(i), container) {
                (Some(b','), OBJECT) => {
                    i = member_name_end(input, whitespace_end(input, i + 1))?;
                    break;
                }
                (Some(b','), _) => {
                    i += 1;
                    break;
                }
                (Some(b'}'), OBJECT) | (Some(b']'), ARRAY) => {
                    i += 1;
                    open.pop();
                }
                _ => return Err(()),
            }
        }
    }
}

/// The index of the first byte at or after `i` that is not whitespace. Compact
/// text has none, so the first byte is checked before anything else.
#[inline(always)]
fn whitespace_end(input: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\n' | b'\r' | b'\t') = input.get(i) {
        i += 1;
    }
    i
}

/// After a member name starting at `input[i]` (a `"`, else an error) and the `:`
/// that follows it: where its value starts (whitespace may come first).
#[inline(always)]
fn member_name_end(input: &[u8], i: usize) -> Result<usize, ()> {
    if input.get(i) != Some(&b'"') {
        return Err(());
    }
    let i = whitespace_end(input, string_end(input, i + 1, true)?);
    match input.get(i) {
        Some(b':') => Ok(i + 1),
        _ => Err(()),
    }
}

/// After the string whose text starts at `input[i]`: the index past its closing
/// quote. ASCII runs are found a word at a time and escapes and multi-byte
/// characters checked where they stand; a string with more than
/// [`SHORT_STRING_ESCAPES`] escapes is taken for text dense with them, and goes on
/// in [`escaped_string_end`].
#[inline(always)]
fn string_end(input: &[u8], mut i: usize, strict: bool) -> Result<usize, ()> {
    let mut escapes = 0;
    loop {
        i = run_end(input, i);
        match input.get(i) {
            Some(b'"') => return Ok(i + 1),
            Some(b'\\') if escapes == SHORT_STRING_ESCAPES => {
                return escaped_string_end(input, i, strict);
            }
            Some(b'\\') => {
                escapes += 1;
                i = escape_end(input, i, strict)?;
            }
            Some(0x80..=0xFF) => i = characters_at_end(input, i)?,
            _ => return Err(()),
        }
    }
}

/// After the multi-byte characters starting at `input[i]` (a byte from 0x80 up),
/// or past the first of them: a two-byte character (the accented letters of most
/// European text) or a three-byte one that is not a surrogate or overlong (most of
/// the rest of the Basic Multilingual Plane: CJK, arrows, `…`) is checked here in
/// line, and the string's run goes on after it; anything else is left to
/// [`characters_end`].
#[inline(always)]
fn characters_at_end(input: &[u8], i: usize) -> Result<usize, ()> {
    match (input.get(i), input.get(i + 1)) {
        (Some(0xC2..=0xDF), Some(0x80..=0xBF)) => Ok(i + 2),
        (Some(0xE1..=0xEC | 0xEE..=0xEF), Some(0x80..=0xBF))
            if matches!(input.get(i + 2), Some(0x80..=0xBF)) =>
        {
            Ok(i + 3)
        }
        _ => characters_end(input, i).map_err(|_| ()),
    }
}

/// How many escapes a string is searched past a word at a time, before it is taken
/// for text dense with escapes.
const SHORT_STRING_ESCAPES: u32 = 3;

/// [`string_end`] from an escape at `input[i]` on: walked from stop to stop with
/// 64-byte masks of the bytes that end runs, so text dense with escapes (source
/// code, say) costs no search per run.
#[inline(never)]
fn escaped_string_end(input: &[u8], mut i: usize, strict: bool) -> Result<usize, ()> {
    let mut stops = RunEnds::<true>::at(input, i);
    loop {
        i = match input.get(i) {
            Some(b'"') => return Ok(i + 1),
            Some(b'\\') => escape_end(input, i, strict)?,
            Some(0x80..=0xFF) => characters_at_end(input, i)?,
            _ => return Err(()),
        };
        i = stops.next(input, i);
    }
}

/// The index of the first `"`, `\\`, control byte or byte from 0x80 up at or after
/// `i`. Most runs (names, short values, text between escapes) end within a few
/// words, checked here in line; a run still going after four words is long, and
/// goes on in [`find_ascii_run_end`], which takes long runs 64 bytes at a time.
#[inline(always)]
pub(super) fn run_end(input: &[u8], mut i: usize) -> usize {
    for _ in 0..4 {
        let Some(word) = word_at(input, i) else { break };
        let found = special_or_high_bytes(word);
        if found != 0 {
            return i + (found.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    find_ascii_run_end(input, i)
}

/// After the escape at `input[at]` (a backslash): the index past it. A `\u`
/// escape needs four hex digits; if `strict`, a high surrogate must be followed by
/// an escaped low one, and a low one must not stand alone.
#[inline(always)]
fn escape_end(input: &[u8], at: usize, strict: bool) -> Result<usize, ()> {
    let letter = *input.get(at + 1).ok_or(())?;
    if SHORT_ESCAPES[usize::from(letter)] != 0 {
        return Ok(at + 2);
    }
    if letter != b'u' {
        return Err(());
    }
    let unit = hex4(input, at + 2).ok_or(())?;
    if !strict || !(0xD800..=0xDFFF).contains(&unit) {
        return Ok(at + 6);
    }
    let low = match input.get(at + 6..at + 8) {
        Some(b"\\u") if unit <= 0xDBFF => hex4(input, at + 8),
        _ => None,
    };
    match low {
        Some(0xDC00..=0xDFFF) => Ok(at + 12),
        _ => Err(()),
    }
}

/// After the literal `word` starting at `input[i]`.
#[inline(always)]
fn literal_end(input: &[u8], i: usize, word: &[u8]) -> Result<usize, ()> {
    let end = i + word.len();
    match input.get(i..end) {
        Some(found) if found == word => Ok(end),
        _ => Err(()),
    }
}

#[cfg(test)]
mod tests {
    use super::value_end;
    use crate::json::{ParseOptions, parse_with};

    /// Strings with few and with many escapes (so walked both ways), with every
    /// kind of fault at offsets on both sides of 64-byte block edges: the fast
    /// check's verdict is the reader's.
    #[test]
    fn strings_dense_with_escapes_are_judged_as_the_reader_judges_them() {
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
                        text.extend(core::iter::repeat_n(b'x', pad));
                        text.extend_from_slice(fault);
                        text.extend_from_slice(tail);
                        text.push(b']');
                        for strict in [false, true] {
                            let options = ParseOptions {
                                max_depth: 8,
                                strict_surrogates: strict,
                            };
                            let fast = value_end(&text, 0, 8, strict);
                            let read = parse_with(&text, &options).map(|_| text.len());
                            let shown = alloc::string::String::from_utf8_lossy(&text);
                            assert_eq!(fast, read.map_err(|_| ()), "{shown} strict {strict}");
                        }
                    }
                }
            }
        }
    }

    /// Every byte from 0x80 up, with every byte after it and some after those,
    /// inside a string with few escapes and in one dense with them (most two- and
    /// three-byte characters are checked in line, the rest by the general check):
    /// the fast check's verdict is the reader's.
    #[test]
    fn multi_byte_characters_are_judged_as_the_reader_judges_them() {
        let options = ParseOptions::DEFAULT;
        for before in [&b"a"[..], b"\\n\\t\\r\\\"a"] {
            for lead in 0x80..=0xFFu8 {
                for second in 0..=0xFFu8 {
                    for after in [b'"', b'a', 0x7F, 0x80, 0xA9, 0xBF, 0xC0, 0xC3] {
                        let mut text = b"[\"".to_vec();
                        text.extend_from_slice(before);
                        text.extend_from_slice(&[lead, second, after, b'"', b']']);
                        let fast = value_end(&text, 0, 8, true);
                        let read = parse_with(&text, &options).map(|_| text.len());
                        assert_eq!(fast, read.map_err(|_| ()), "{text:x?}");
                    }
                }
            }
        }
    }

    /// The fast check accepts what the reader accepts: a value it turns down only
    /// costs a second walk, so a wrong refusal shows nowhere else.
    #[test]
    fn accepts_what_the_reader_accepts() {
        let texts = [
            r#""\uD834\uDD1E""#,
            r#""\uD834\uD834\uDD1E""#,
            r#""\uDD1E""#,
            r#""\ud800x""#,
            r#"{"\ud834\udd1e": ["\"\\\/\b\f\n\r\t", -0.5e-3, true, false, null]}"#,
            r#"{"\ud800": 1}"#,
            " [ 1 , { \"a\" : [ ] } , { } ] ",
            "[[[[[[[[]]]]]]]]",
            "[[[[[[[[[]]]]]]]]]",
            r#"{"a":1,}"#,
            "[1 2]",
            "\"a\tb\"",
        ];
        for text in texts {
            for strict_surrogates in [false, true] {
                let options = ParseOptions {
                    max_depth: 8,
                    strict_surrogates,
                };
                let input = text.as_bytes();
                let end = input.len()
                    - input
                        .iter()
                        .rev()
                        .take_while(|b| b.is_ascii_whitespace())
                        .count();
                let fast = value_end(input, 0, 8, strict_surrogates);
                let read = parse_with(input, &options).map(|_| end);
                assert_eq!(
                    fast,
                    read.map_err(|_| ()),
                    "{text} strict: {strict_surrogates}"
                );
            }
        }
    }
}
