//! Reading an object whose member names, and some of whose string values, come
//! from a short list known in advance: the way a protocol message is read.
//!
//! A name written without escapes is compared where it lies in the input, so
//! matching it costs no allocation and no UTF-8 check; only a name with escapes is
//! decoded first, and then compared the same way.

use alloc::borrow::Cow;
use alloc::string::String;

use super::error::{Error, ErrorKind, Sure};
use super::read::Reader;
use super::scan::{same_bytes, special_bytes, word_at};
use super::string::Str;

/// A name read from the input and matched against a list of known names: a
/// member name ([`Reader::next_known_member`]) or a string value
/// ([`Reader::read_known_str`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Name<'a> {
    /// The name is `known[index]`.
    Known(usize),
    /// Any other name, borrowed from the input when it holds no escape.
    Other(Cow<'a, str>),
}

/// The index of `name` in `known`, its bytes compared without a call for most names.
#[inline(always)]
fn find(known: &[&str], name: &[u8]) -> Option<usize> {
    known.iter().position(|known| same(known.as_bytes(), name))
}

/// The index in `known` of the name written at `input[first..]` up to a closing
/// quote, and where that quote is: the name's first letter and the quote after it
/// are compared before the name itself, so most names that differ cost a compare
/// or two.
#[inline(always)]
fn known_at(input: &[u8], first: usize, known: &[&str]) -> Option<(usize, usize)> {
    let initial = input.get(first)?;
    for (index, name) in known.iter().enumerate() {
        if name.as_bytes().first() != Some(initial) {
            continue;
        }
        let end = first + name.len();
        if input.get(end) == Some(&b'"')
            && input
                .get(first..end)
                .is_some_and(|text| same(text, name.as_bytes()))
        {
            return Some((index, end));
        }
    }
    None
}

/// Whether `name` is written in JSON as it is: it holds no quote, no backslash and
/// no control character (found a word at a time).
#[inline]
fn plain(name: &str) -> bool {
    let name = name.as_bytes();
    match name.len().checked_sub(8) {
        // Two words cover a name of 8 to 16 bytes.
        Some(last @ 0..=8) => [0, last]
            .into_iter()
            .all(|at| word_at(name, at).is_some_and(|word| special_bytes(word) == 0)),
        _ => name.iter().all(|&b| b >= b' ' && b != b'"' && b != b'\\'),
    }
}

/// Whether `a` and `b` are the same bytes: a short name (most are) compared byte by
/// byte in line, a longer one as [`same_bytes`] compares it.
#[inline(always)]
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    if a.len() <= 8 {
        return a.iter().zip(b).all(|(x, y)| x == y);
    }
    same_bytes(a, b)
}

impl<'a> Reader<'a> {
    /// The next member's name, matched against `known`, consuming the `,` before it
    /// and the `:` after it, as [`next_member_name`](Reader::next_member_name) does;
    /// the member's value is to be read next. `None` at the `}` that closes the
    /// object.
    ///
    /// ```
    /// use dhara_protocol::json::{Name, ParseOptions, Reader};
    ///
    /// let text = br#"{"input": {}, "extra": 1, "tool\u004eame": "grep"}"#;
    /// let mut r = Reader::new(text, &ParseOptions::DEFAULT);
    /// r.begin_object()?;
    /// let mut tool_name = None;
    /// while let Some(name) = r.next_known_member(&["toolName", "input"])? {
    ///     match name {
    ///         Name::Known(0) => tool_name = Some(r.read_string()?.0),
    ///         Name::Known(_) | Name::Other(_) => _ = r.skip_value()?,
    ///     }
    /// }
    /// r.finish()?;
    /// assert_eq!(tool_name.as_deref(), Some("grep")); // matched after decoding
    /// # Ok::<(), dhara_protocol::json::Error>(())
    /// ```
    ///
    /// A name of `known` spelled in place without escapes, its `:` right after it,
    /// is found by comparing bytes where it lies, whatever its length; any other
    /// name is read as [`next_member_name`](Reader::next_member_name) reads it, and
    /// then compared. The names in `known` hold no `"` and no `\` (member names
    /// that need escapes are matched with [`next_member_name`](Reader::next_member_name)).
    #[inline(always)]
    pub fn next_known_member(&mut self, known: &[&str]) -> Result<Option<Name<'a>>, Error> {
        if let Some(index) = self.known_name_in_place(known) {
            return Ok(Some(Name::Known(index)));
        }
        let Some(name) = self.next_member_bytes()? else {
            return Ok(None);
        };
        if let Some(index) = find(known, &name) {
            return Ok(Some(Name::Known(index)));
        }
        // The reader checked the name's text, so it is UTF-8: the check never fails.
        Ok(Some(Name::Other(match name {
            Cow::Borrowed(bytes) => Cow::Borrowed(core::str::from_utf8(bytes).sure()),
            Cow::Owned(bytes) => Cow::Owned(String::from_utf8(bytes).sure()),
        })))
    }

    /// The index in `known` of the next member's name, when the input goes on with
    /// its separator (`,` unless right after `{`), the name in quotes and `:`, with
    /// no whitespace inside: those are consumed. `None`, with nothing consumed but
    /// whitespace, otherwise.
    #[inline(always)]
    fn known_name_in_place(&mut self, known: &[&str]) -> Option<usize> {
        let quote = match self.peek()? {
            b'"' if self.after_open => self.pos,
            b',' if !self.after_open => self.pos + 1,
            _ => return None,
        };
        let input = self.input();
        if input.get(quote) != Some(&b'"') {
            return None;
        }
        let (index, end) = known_at(input, quote + 1, known)?;
        if input.get(end + 1) != Some(&b':') {
            return None;
        }
        debug_assert!(
            known.get(index).is_none_or(|name| plain(name)),
            "names need no escape"
        );
        self.pos = end + 2;
        self.after_open = false;
        Some(index)
    }

    /// Reads a string value and matches it against `known`, as
    /// [`next_known_member`](Reader::next_known_member) matches a name: a value
    /// written without escapes is compared in place. As with
    /// [`read_str`](Reader::read_str), an escaped lone surrogate is replaced (or an
    /// error, by the options), and the flag says whether one was.
    /// [`ExpectedString`](ErrorKind::ExpectedString), with nothing consumed, if the
    /// next value is not a string.
    ///
    /// ```
    /// use dhara_protocol::json::{Name, ParseOptions, Reader};
    ///
    /// let mut r = Reader::new(br#"["image", "audio"]"#, &ParseOptions::DEFAULT);
    /// r.begin_array()?;
    /// r.next_element()?;
    /// assert_eq!(r.read_known_str(&["text", "image"])?, (Name::Known(1), false));
    /// r.next_element()?;
    /// assert_eq!(r.read_known_str(&["text", "image"])?, (Name::Other("audio".into()), false));
    /// # Ok::<(), dhara_protocol::json::Error>(())
    /// ```
    #[inline]
    pub fn read_known_str(&mut self, known: &[&str]) -> Result<(Name<'a>, bool), Error> {
        if let Some(index) = self.known_str_in_place(known) {
            return Ok((Name::Known(index), false));
        }
        if let Some(text) = self.plain_str() {
            return Ok(match find(known, text) {
                Some(index) => (Name::Known(index), false),
                // ASCII, so UTF-8: the check never fails.
                None => (
                    Name::Other(Cow::Borrowed(core::str::from_utf8(text).sure())),
                    false,
                ),
            });
        }
        let (text, replaced) = self.str_not_plain()?;
        Ok(match find(known, text.as_bytes()) {
            Some(index) => (Name::Known(index), replaced),
            None => (Name::Other(text), replaced),
        })
    }

    /// The index in `known` of the string value at the reader, when it is written
    /// as that name in quotes, without escapes: consumed. `None`, with nothing
    /// consumed but whitespace, otherwise.
    #[inline(always)]
    fn known_str_in_place(&mut self, known: &[&str]) -> Option<usize> {
        if self.peek()? != b'"' {
            return None;
        }
        let (index, end) = known_at(self.input(), self.pos + 1, known)?;
        // A value with a quote or a backslash is never written as it is: such text
        // is not JSON, and the general reading tells what it is.
        if !known.get(index).is_some_and(|name| plain(name)) {
            return None;
        }
        self.pos = end + 1;
        self.after_open = false;
        Some(index)
    }

    /// Consumes `prefix` when the input goes on with exactly those bytes: a piece
    /// of a message as writers usually spell it, such as
    /// `{"content":[{"type":"text","text":` at the start of a tool result, so that
    /// a reader of a known message can go on from there. Its `{` and `[` open
    /// containers as [`begin_object`](Reader::begin_object) and
    /// [`begin_array`](Reader::begin_array) do, and its `}` and `]` close them.
    /// `false`, with nothing consumed but whitespace, when the input differs or the
    /// containers would nest deeper than allowed.
    ///
    /// `prefix` must be JSON the grammar allows at this place, in whole tokens,
    /// without whitespace or escapes, its strings holding no bracket, and its closing
    /// brackets those of containers open here: the reader compares the input with
    /// it and does not check it.
    ///
    /// ```
    /// use dhara_protocol::json::{ParseOptions, Reader};
    ///
    /// let mut r = Reader::new(br#"{"items":[{"id":7}]}"#, &ParseOptions::DEFAULT);
    /// r.begin_object()?;
    /// assert!(!r.skip_prefix(r#""items":[{"name":"#));
    /// assert!(r.skip_prefix(r#""items":[{"id":"#));
    /// assert_eq!(r.read_number()?.as_u64(), Some(7));
    /// assert_eq!(r.next_member_name()?, None); // `}`
    /// assert!(!r.next_element()?); // `]`
    /// assert_eq!(r.next_member_name()?, None); // `}`
    /// r.finish()?;
    /// # Ok::<(), dhara_protocol::json::Error>(())
    /// ```
    #[inline]
    pub fn skip_prefix(&mut self, prefix: &str) -> bool {
        let prefix = prefix.as_bytes();
        self.peek();
        let end = self.pos + prefix.len();
        if !self
            .input()
            .get(self.pos..end)
            .is_some_and(|next| same_bytes(next, prefix))
        {
            return false;
        }
        let opened = prefix.iter().filter(|&&b| b == b'{' || b == b'[').count();
        let closed = prefix.iter().filter(|&&b| b == b'}' || b == b']').count();
        if self.depth + opened > self.max_depth || closed > self.depth + opened {
            return false;
        }
        self.depth = self.depth + opened - closed;
        self.pos = end;
        self.after_open = matches!(prefix.last(), Some(b'{' | b'['));
        true
    }

    /// Reads a string value as a [`Str`]: stored inline, with no allocation, when
    /// it is at most [`Str::INLINE_CAPACITY`] bytes, and taken as it lies in the
    /// input, with nothing to check, when it is ASCII without escapes. Otherwise
    /// as [`read_str`](Reader::read_str).
    ///
    /// ```
    /// use dhara_protocol::json::{ParseOptions, Reader};
    ///
    /// let mut r = Reader::new(br#""grep""#, &ParseOptions::DEFAULT);
    /// let name = r.read_inline_str()?;
    /// assert_eq!(name, "grep");
    /// assert!(name.is_inline());
    /// # Ok::<(), dhara_protocol::json::Error>(())
    /// ```
    #[inline]
    pub fn read_inline_str(&mut self) -> Result<Str, Error> {
        if let Some(text) = self.plain_text() {
            return Ok(text);
        }
        Ok(Str::from(self.read_str()?.0))
    }

    /// Reads `true` or `false`. Any other value is an
    /// [`UnexpectedByte`](ErrorKind::UnexpectedByte) error at its first byte, with
    /// nothing consumed but whitespace.
    ///
    /// ```
    /// use dhara_protocol::json::{ParseOptions, Reader};
    ///
    /// let mut r = Reader::new(b" false", &ParseOptions::DEFAULT);
    /// assert_eq!(r.read_bool()?, false);
    /// assert!(Reader::new(b"null", &ParseOptions::DEFAULT).read_bool().is_err());
    /// # Ok::<(), dhara_protocol::json::Error>(())
    /// ```
    #[inline]
    pub fn read_bool(&mut self) -> Result<bool, Error> {
        if self.skip_exact(b"true") {
            return Ok(true);
        }
        if self.skip_exact(b"false") {
            return Ok(false);
        }
        let at = self.offset();
        let kind = match self.input().get(at) {
            Some(&byte) => ErrorKind::UnexpectedByte(byte),
            None => ErrorKind::UnexpectedEnd,
        };
        Err(Error::at(self.input(), kind, at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::ParseOptions;
    use alloc::string::String;
    use alloc::vec::Vec;
    use alloc::{format, vec};
    use proptest::prelude::*;

    const KNOWN: &[&str] = &["type", "text", "t", "toolName", "a_much_longer_name_x", "é"];

    /// What a general reading makes of `text`, an object: each member's name
    /// decoded and looked up in `known`, and each string value likewise.
    fn general(text: &[u8]) -> Result<Vec<(Name<'_>, Option<Name<'_>>)>, ()> {
        let mut r = Reader::new(text, &ParseOptions::DEFAULT);
        let mut out = Vec::new();
        r.begin_object().map_err(|_| ())?;
        while let Some(name) = r.next_member_name().map_err(|_| ())? {
            let name = match KNOWN.iter().position(|k| *k == name) {
                Some(i) => Name::Known(i),
                None => Name::Other(name),
            };
            let value = if r.peek() == Some(b'"') {
                let (s, _) = r.read_str().map_err(|_| ())?;
                Some(match KNOWN.iter().position(|k| *k == s) {
                    Some(i) => Name::Known(i),
                    None => Name::Other(s),
                })
            } else {
                r.skip_value().map_err(|_| ())?;
                None
            };
            out.push((name, value));
        }
        r.finish().map_err(|_| ())?;
        Ok(out)
    }

    /// The same with the known-name readers, which match in place where they can.
    fn known(text: &[u8]) -> Result<Vec<(Name<'_>, Option<Name<'_>>)>, ()> {
        let mut r = Reader::new(text, &ParseOptions::DEFAULT);
        let mut out = Vec::new();
        r.begin_object().map_err(|_| ())?;
        while let Some(name) = r.next_known_member(KNOWN).map_err(|_| ())? {
            let value = if r.peek() == Some(b'"') {
                Some(r.read_known_str(KNOWN).map_err(|_| ())?.0)
            } else {
                r.skip_value().map_err(|_| ())?;
                None
            };
            out.push((name, value));
        }
        r.finish().map_err(|_| ())?;
        Ok(out)
    }

    fn spelling() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "type",
            "text",
            "t",
            "te",
            "texts",
            "toolName",
            "toolNam",
            "a_much_longer_name_x",
            "a_much_longer_name_y",
            "é",
            "e",
            "ty\\u0070e",
            "\\u0074",
            "\\u00e9",
            "",
            "x\\\"y",
        ])
        .prop_map(String::from)
    }

    /// A known name that holds a backslash or a quote is never taken as written:
    /// that text is not JSON.
    #[test]
    fn names_that_need_escapes_are_matched_decoded_only() {
        let known = &["b\\c", "a\"b"];
        for bad in [&br#""b\c""#[..], br#""a"b""#] {
            let mut r = Reader::new(bad, &ParseOptions::DEFAULT);
            assert!(r.read_known_str(known).is_err() || r.finish().is_err());
        }
        let mut r = Reader::new(br#""b\\c""#, &ParseOptions::DEFAULT);
        assert_eq!(r.read_known_str(known), Ok((Name::Known(0), false)));
        let mut r = Reader::new(br#"{"a\"b":1}"#, &ParseOptions::DEFAULT);
        r.begin_object().unwrap();
        assert_eq!(r.next_known_member(known), Ok(Some(Name::Known(1))));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        /// Names and string values matched in place are what the general reading
        /// finds, whatever the spelling, whitespace, order or damage.
        #[test]
        fn known_names_match_in_place_as_they_do_decoded(
            members in prop::collection::vec((spelling(), spelling(), any::<bool>(), any::<bool>()), 0..5),
            cut in any::<prop::sample::Index>(),
            damage in any::<bool>(),
        ) {
            let mut text = String::from("{");
            for (i, (name, value, spaced, number)) in members.iter().enumerate() {
                if i > 0 {
                    text.push(',');
                }
                let gap = if *spaced { " " } else { "" };
                let value = if *number { String::from("12") } else { format!("\"{value}\"") };
                text.push_str(&format!("{gap}\"{name}\"{gap}:{gap}{value}"));
            }
            text.push('}');
            let mut bytes = text.into_bytes();
            if damage {
                bytes.truncate(cut.index(bytes.len() + 1));
            }
            prop_assert_eq!(known(&bytes), general(&bytes));
        }
    }
}
