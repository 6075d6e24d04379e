//! The parser: one implementation of the JSON grammar, used to build [`Value`] trees
//! ([`Reader::read_value`], and so [`Parser`](super::Parser)), to validate without
//! building
//! ([`Reader::skip_value`]) and, a member at a time, by the pull [`Reader`].
//!
//! Nesting is walked with an explicit stack, never by recursion, so no input can
//! overflow the native stack. Strings are scanned a word (and, in long runs, 64
//! bytes) at a time for the bytes that end a run; a string with escapes is sized
//! before it is decoded, and its runs are copied a word at a time. The input is
//! checked to be UTF-8 once, from the first string on (the grammar before it is
//! ASCII). Numbers are checked once and kept as text.

use alloc::borrow::Cow;
use alloc::string::String;
use core::ops::Range;

use super::error::{Error, ErrorKind, Sure};
use super::options::ParseOptions;
use super::raw::RawValue;
use super::scan::{
    HIGH, RunEnds, SHORT_ESCAPES, Specials, characters_at_end, characters_end, ends_run,
    escape_end, find_run_end, hex4, number_end, run_end, same_bytes, special_bytes, word_at,
};
use super::sink::{
    ARRAY, INLINE_ITEMS, Nesting, OBJECT, Place, Sink, Skip, Strings, Text, Tree, checked_str,
};
use super::string::Str;
use super::value::{Number, Value};

/// A pull reader over one JSON text: walk objects a member at a time and arrays an
/// element at a time, and read, or skip, one value wherever you are.
///
/// It shares its grammar with [`parse`](super::parse), so it accepts exactly the same texts. After
/// an error the reader's position is unspecified; start again with a new reader.
///
/// ```
/// use dhara_protocol::json::{ParseOptions, Reader};
///
/// let text = br#"{"method": "tools/execute", "params": {"toolName": "grep"}}"#;
/// let mut r = Reader::new(text, &ParseOptions::DEFAULT);
/// r.begin_object()?;
/// let mut method = None;
/// let mut params = None;
/// while let Some(name) = r.next_member()? {
///     match name.as_str() {
///         "method" => method = Some(r.read_string()?.0),
///         "params" => params = Some(r.skip_value()?),
///         _ => { r.skip_value()?; }
///     }
/// }
/// r.finish()?;
/// assert_eq!(method.as_deref(), Some("tools/execute"));
/// assert_eq!(&text[params.unwrap()], br#"{"toolName": "grep"}"#);
/// # Ok::<(), dhara_protocol::json::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    input: &'a [u8],
    /// The input from `text_start` on, up to its first byte that is not UTF-8,
    /// checked when the first string needs it (`text_start` is `usize::MAX` until
    /// then): string text is taken from it.
    text: &'a str,
    text_start: usize,
    pub(super) pos: usize,
    pub(super) depth: usize,
    pub(super) max_depth: usize,
    strict_surrogates: bool,
    /// `true` right after `{` or `[`: the next member or element takes no comma.
    pub(super) after_open: bool,
}

/// Reading a [`RawValue`], which is built by [`Reader::read_raw`].
impl<'a> RawValue<'a> {
    /// Checks that `text` is one JSON value (whitespace around it allowed) under
    /// `options`, and keeps the value's text.
    pub fn from_text(text: &'a str, options: &ParseOptions) -> Result<RawValue<'a>, Error> {
        let mut reader = Reader::for_text(text, options);
        let raw = reader.read_raw()?;
        reader.finish()?;
        Ok(raw)
    }

    /// The value as an owned tree.
    pub fn parse(&self) -> Value {
        // The text was checked under these very options, so reading it cannot fail.
        let value = self.reader().read_value();
        value.sure()
    }

    /// A reader at the start of the value, with the options it was checked under.
    pub fn reader(&self) -> Reader<'a> {
        Reader::new(self.as_bytes(), self.options())
    }
}

/// What to do with an escaped lone surrogate.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LoneSurrogate {
    Replace,
    Reject,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `input`.
    pub fn new(input: &'a [u8], options: &ParseOptions) -> Reader<'a> {
        Reader {
            input,
            text: "",
            text_start: usize::MAX,
            pos: 0,
            depth: 0,
            max_depth: options.max_depth,
            strict_surrogates: options.strict_surrogates,
            after_open: false,
        }
    }

    /// A reader at the start of `text`, which is known to be UTF-8 already: it is
    /// not checked again.
    pub fn for_text(text: &'a str, options: &ParseOptions) -> Reader<'a> {
        Reader {
            input: text.as_bytes(),
            text,
            text_start: 0,
            pos: 0,
            depth: 0,
            max_depth: options.max_depth,
            strict_surrogates: options.strict_surrogates,
            after_open: false,
        }
    }

    /// The byte offset of the next unread byte.
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// The whole input, as given to [`new`](Reader::new): the ranges that
    /// [`skip_value`](Reader::skip_value) returns index into it.
    pub fn input(&self) -> &'a [u8] {
        self.input
    }

    /// Skips whitespace; the next byte without consuming it (`None` at the end).
    #[inline]
    pub fn peek(&mut self) -> Option<u8> {
        // Compact text has no whitespace here: one compare settles it, as every
        // whitespace byte is at most a space.
        match self.input.get(self.pos) {
            Some(&b) if b > b' ' => Some(b),
            _ => self.skip_whitespace(),
        }
    }

    /// [`peek`](Reader::peek) past any whitespace.
    #[inline]
    fn skip_whitespace(&mut self) -> Option<u8> {
        loop {
            match self.input.get(self.pos) {
                Some(b' ' | b'\n' | b'\r' | b'\t') => self.pos += 1,
                other => return other.copied(),
            }
        }
    }

    /// Consumes `{`; one level deeper ([`TooDeep`](ErrorKind::TooDeep) past
    /// `max_depth`).
    pub fn begin_object(&mut self) -> Result<(), Error> {
        self.expect(b'{')?;
        self.enter()?;
        self.after_open = true;
        Ok(())
    }

    /// The next member's name, consuming the `,` before it and the `:` after it; the
    /// member's value is to be read next. `None` at `}`, which is consumed (one level
    /// up). A lone surrogate escape in a name is always an error.
    pub fn next_member(&mut self) -> Result<Option<String>, Error> {
        Ok(self.next_member_name()?.map(Cow::into_owned))
    }

    /// [`next_member`](Reader::next_member), with the name borrowed from the input
    /// when it holds no escape: reading the members of an object then allocates
    /// nothing for their names.
    ///
    /// ```
    /// use std::borrow::Cow;
    /// use dhara_protocol::json::{ParseOptions, Reader};
    ///
    /// let mut r = Reader::new(br#"{"id": 1, "na\u006de": 2}"#, &ParseOptions::DEFAULT);
    /// r.begin_object()?;
    /// assert!(matches!(r.next_member_name()?, Some(Cow::Borrowed("id"))));
    /// r.skip_value()?;
    /// assert_eq!(r.next_member_name()?.as_deref(), Some("name")); // decoded: owned
    /// r.skip_value()?;
    /// assert_eq!(r.next_member_name()?, None);
    /// # Ok::<(), dhara_protocol::json::Error>(())
    /// ```
    pub fn next_member_name(&mut self) -> Result<Option<Cow<'a, str>>, Error> {
        if !self.member_follows()? {
            return Ok(None);
        }
        let mut name = Cow::default();
        self.member_name(&mut name)?;
        Ok(Some(name))
    }

    /// [`next_member_name`](Reader::next_member_name) as bytes, for names matched
    /// against known ones: borrowed from the input unless the name has escapes.
    #[inline(always)]
    pub(crate) fn next_member_bytes(&mut self) -> Result<Option<Cow<'a, [u8]>>, Error> {
        if !self.member_follows()? {
            return Ok(None);
        }
        if let Some(name) = self.plain_member_name()? {
            return Ok(Some(Cow::Borrowed(name)));
        }
        Ok(Some(match self.any_member_name()? {
            Cow::Borrowed(name) => Cow::Borrowed(name.as_bytes()),
            Cow::Owned(name) => Cow::Owned(name.into_bytes()),
        }))
    }

    /// The member name at the reader, consumed with the `:` after it, when it is
    /// ASCII without escapes and ends within its first word (most names do): taken
    /// as it lies, with no UTF-8 check to make. `None`, with nothing consumed but
    /// whitespace, for any other name.
    #[inline(always)]
    fn plain_member_name(&mut self) -> Result<Option<&'a [u8]>, Error> {
        if self.peek() != Some(b'"') {
            return Err(self.unexpected());
        }
        let first = self.pos + 1;
        let Some(word) = word_at(self.input, first) else {
            return Ok(None);
        };
        let found = special_bytes(word);
        if found == 0 {
            return Ok(None);
        }
        let len = (found.trailing_zeros() / 8) as usize;
        let name = word & ((1u64 << (len * 8)) - 1);
        if name & HIGH != 0 || (word >> (len * 8)) as u8 != b'"' {
            return Ok(None);
        }
        let Some(text) = self.input.get(first..first + len) else {
            return Ok(None);
        };
        self.pos = first + len + 1;
        match self.input.get(self.pos) {
            Some(b':') => self.pos += 1,
            _ => self.expect(b':')?,
        }
        Ok(Some(text))
    }

    /// A member name and the `:` after it, decoded when it holds escapes.
    #[inline(never)]
    fn any_member_name(&mut self) -> Result<Cow<'a, str>, Error> {
        let mut name = Cow::default();
        self.member_name(&mut name)?;
        Ok(name)
    }

    /// Consumes the `,` before the next member (`true`: its name follows), or the
    /// `}` closing the object (`false`, one level up).
    #[inline]
    fn member_follows(&mut self) -> Result<bool, Error> {
        let first = core::mem::replace(&mut self.after_open, false);
        match self.peek() {
            Some(b'}') => {
                self.pos += 1;
                self.leave();
                Ok(false)
            }
            Some(b',') if !first => {
                self.pos += 1;
                Ok(true)
            }
            Some(b'"') if first => Ok(true),
            _ => Err(self.unexpected()),
        }
    }

    /// Consumes `[`; one level deeper ([`TooDeep`](ErrorKind::TooDeep) past
    /// `max_depth`).
    pub fn begin_array(&mut self) -> Result<(), Error> {
        self.expect(b'[')?;
        self.enter()?;
        self.after_open = true;
        Ok(())
    }

    /// `true` if another element follows (the `,` before it is consumed; the element
    /// is to be read next); `false` at `]`, which is consumed (one level up).
    pub fn next_element(&mut self) -> Result<bool, Error> {
        let first = core::mem::replace(&mut self.after_open, false);
        match self.peek() {
            Some(b']') => {
                self.pos += 1;
                self.leave();
                Ok(false)
            }
            Some(b',') if !first => {
                self.pos += 1;
                Ok(true)
            }
            Some(_) if first => Ok(true),
            _ => Err(self.unexpected()),
        }
    }

    /// Reads one whole value as an owned tree. Its nesting counts from the reader's
    /// current depth. [`Parser::read`](super::Parser::read) does the same with
    /// scratch space kept from one value to the next.
    pub fn read_value(&mut self) -> Result<Value, Error> {
        Tree::<INLINE_ITEMS>::fresh(|tree| self.read_into(tree))
    }

    /// [`read_value`](Reader::read_value) with `tree`'s scratch stacks, left empty.
    #[inline(always)]
    pub(super) fn read_into<const N: usize>(&mut self, tree: &mut Tree<N>) -> Result<Value, Error> {
        let walked = self.walk(tree);
        let value = tree.finish();
        walked.map(|()| value)
    }

    /// Reads a string value: the decoded text, and whether an escaped lone surrogate
    /// in it was replaced with U+FFFD (under
    /// [`strict_surrogates`](ParseOptions::strict_surrogates) that is an error
    /// instead). [`ExpectedString`](ErrorKind::ExpectedString), with nothing consumed,
    /// if the next value is not a string.
    pub fn read_string(&mut self) -> Result<(String, bool), Error> {
        let (text, replaced) = self.read_str()?;
        Ok((text.into_owned(), replaced))
    }

    /// [`read_string`](Reader::read_string), with the text borrowed from the input
    /// when it holds no escape.
    #[inline]
    pub fn read_str(&mut self) -> Result<(Cow<'a, str>, bool), Error> {
        if let Some(text) = self.plain_str() {
            // ASCII, so UTF-8: the check, the one way to a `&str`, always passes.
            return Ok((Cow::Borrowed(core::str::from_utf8(text).sure()), false));
        }
        self.str_not_plain()
    }

    /// [`read_str`](Reader::read_str) for a string that
    /// [`plain_str`](Reader::plain_str) turned down (or any other value, an error).
    pub(super) fn str_not_plain(&mut self) -> Result<(Cow<'a, str>, bool), Error> {
        self.after_open = false;
        if self.peek() != Some(b'"') {
            return Err(self.error(ErrorKind::ExpectedString, self.pos));
        }
        let mut text = Cow::default();
        let replaced = self.string(&mut text, Place::Value { in_object: false })?;
        Ok((text, replaced))
    }

    /// The string value at the reader when its text is ASCII without escapes (so
    /// taken as it is in the input, with nothing to check): consumed. `None`, with
    /// nothing consumed but whitespace, for any other value. Short strings (method
    /// names, ids) are searched for their end in line, a word at a time.
    #[inline(always)]
    pub(crate) fn plain_str(&mut self) -> Option<&'a [u8]> {
        if self.peek() != Some(b'"') {
            return None;
        }
        let first = self.pos + 1;
        let end = run_end(self.input, first);
        if self.input.get(end) != Some(&b'"') {
            return None;
        }
        self.after_open = false;
        self.pos = end + 1;
        self.input.get(first..end)
    }

    /// [`plain_str`](Reader::plain_str), the text kept as a [`Str`]: a short one
    /// copied inline as a window of the input, with nothing to check.
    #[inline(always)]
    pub(crate) fn plain_text(&mut self) -> Option<Str> {
        let ascii = self.plain_str()?;
        let end = self.pos - 1;
        Some(checked_str(self.input, end - ascii.len(), end))
    }

    /// Checks one whole value without building it; returns its byte range in the input.
    pub fn skip_value(&mut self) -> Result<Range<usize>, Error> {
        self.peek();
        let start = self.pos;
        self.walk(&mut Skip)?;
        Ok(start..self.pos)
    }

    /// Checks one whole value without building it, like
    /// [`skip_value`](Reader::skip_value), and returns its text.
    #[inline]
    pub fn read_raw(&mut self) -> Result<RawValue<'a>, Error> {
        let range = self.skip_value()?;
        Ok(RawValue::checked(
            self.input.get(range).sure(),
            ParseOptions {
                max_depth: self.max_depth,
                strict_surrogates: self.strict_surrogates,
            },
        ))
    }

    /// Consumes the next value if its text is exactly `text`, which must be a whole
    /// value that nothing can extend (a string without escapes, or a literal), or
    /// a whole member of that kind (name, `:` and value) where a member is read.
    /// Nothing but whitespace is consumed otherwise.
    #[inline]
    pub(crate) fn skip_exact(&mut self, text: &[u8]) -> bool {
        self.peek();
        let end = self.pos + text.len();
        if self
            .input
            .get(self.pos..end)
            .is_some_and(|next| same_bytes(next, text))
        {
            self.after_open = false;
            self.pos = end;
            return true;
        }
        false
    }

    /// The text of the number at the reader (its first byte is `-` or a digit),
    /// checked as [`skip_value`](Reader::skip_value) checks it.
    #[inline]
    pub(crate) fn read_number_text(&mut self) -> Result<&'a [u8], Error> {
        self.after_open = false;
        self.peek();
        let start = self.pos;
        self.pos = number_end(self.input, start).map_err(|(kind, at)| self.error(kind, at))?;
        Ok(self.input.get(start..self.pos).sure())
    }

    /// The number at the reader, checked as [`skip_value`](Reader::skip_value)
    /// checks it and kept as its text: a short text copied as a window of the input.
    /// [`InvalidNumber`](ErrorKind::InvalidNumber) for any other value.
    #[inline]
    pub fn read_number(&mut self) -> Result<Number, Error> {
        let text = self.read_number_text()?;
        let start = self.pos - text.len();
        Ok(Number::from_checked_text(checked_str(
            self.input, start, self.pos,
        )))
    }

    /// The number at the reader when it is an integer, with no fraction and no
    /// exponent (as a JSON-RPC id or an error code must be), kept as its text;
    /// `Ok(None)`, with the number consumed, for any other number.
    /// [`InvalidNumber`](ErrorKind::InvalidNumber) for any other value.
    ///
    /// ```
    /// use dhara_protocol::json::{ParseOptions, Reader};
    ///
    /// let mut r = Reader::new(b"[17, 1.5]", &ParseOptions::DEFAULT);
    /// r.begin_array()?;
    /// assert!(r.next_element()?);
    /// assert_eq!(r.read_integer()?.and_then(|n| n.as_u64()), Some(17));
    /// assert!(r.next_element()?);
    /// assert_eq!(r.read_integer()?, None);
    /// # Ok::<(), dhara_protocol::json::Error>(())
    /// ```
    #[inline]
    pub fn read_integer(&mut self) -> Result<Option<Number>, Error> {
        self.after_open = false;
        self.peek();
        let (input, start) = (self.input, self.pos);
        // Digits, with no leading zero and nothing after them that goes on with a
        // fraction or an exponent (as ids mostly are), are taken in one pass.
        let first = start + usize::from(input.get(start) == Some(&b'-'));
        let mut end = first;
        while input.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
        }
        let plain = match input.get(first..end) {
            Some([b'0', _, ..]) | Some([]) | None => false,
            Some(_) => !matches!(input.get(end), Some(b'.' | b'e' | b'E')),
        };
        if plain {
            self.pos = end;
            return Ok(Some(Number::from_checked_text(checked_str(
                input, start, end,
            ))));
        }
        let number = self.read_number()?;
        Ok(number.is_integer().then_some(number))
    }

    /// Checks that only whitespace remains.
    pub fn finish(&mut self) -> Result<(), Error> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.error(ErrorKind::TrailingCharacters, self.pos)),
        }
    }

    // ---- The grammar ------------------------------------------------------------

    /// Walks one whole value, telling `sink` what it finds. Open containers are kept
    /// on `open` (a bit per level: object or array), not on the native stack.
    ///
    /// The position is kept in a local, `pos`, and written back to `self.pos`
    /// before anything that reads or sets it (strings, errors) is called: the hot
    /// loop then works from a register. Compact text is settled with one compare
    /// before whitespace is looked for.
    fn walk<S: Sink<'a>>(&mut self, sink: &mut S) -> Result<(), Error> {
        self.after_open = false;
        let input = self.input;
        let mut open = Nesting::default();
        // Whether the innermost open container is an object.
        let mut in_object = false;
        let mut pos = self.pos;
        // How many more levels may open. The walk closes as many as it opens, so
        // `self.depth` is the same after it; after an error it does not matter.
        let mut room = self.max_depth.saturating_sub(self.depth);
        loop {
            // A value starts here.
            match next_byte(input, &mut pos) {
                Some(b'{') => {
                    pos += 1;
                    if room == 0 {
                        self.pos = pos;
                        return Err(self.error(ErrorKind::TooDeep, pos - 1));
                    }
                    room -= 1;
                    sink.open(OBJECT);
                    match next_byte(input, &mut pos) {
                        Some(b'}') => {
                            pos += 1;
                            room += 1;
                            sink.close(OBJECT, in_object);
                        }
                        Some(b'"') => {
                            pos = self.member_name_at(sink, pos)?;
                            open.push(OBJECT);
                            in_object = true;
                            continue;
                        }
                        _ => return Err(self.unexpected_at(pos)),
                    }
                }
                Some(b'[') => {
                    pos += 1;
                    if room == 0 {
                        self.pos = pos;
                        return Err(self.error(ErrorKind::TooDeep, pos - 1));
                    }
                    room -= 1;
                    sink.open(ARRAY);
                    if next_byte(input, &mut pos) == Some(b']') {
                        pos += 1;
                        room += 1;
                        sink.close(ARRAY, in_object);
                    } else {
                        open.push(ARRAY);
                        in_object = false;
                        continue;
                    }
                }
                Some(b'"') => {
                    pos = self.string_at(input, sink, pos, Place::Value { in_object })?;
                }
                Some(b'-' | b'0'..=b'9') => {
                    let start = pos;
                    pos = number_end(input, start).map_err(|(kind, at)| self.error(kind, at))?;
                    sink.number(input, start, pos, in_object);
                }
                Some(b't') => {
                    pos = self.literal_at(pos, b"true")?;
                    sink.literal(Some(true), in_object);
                }
                Some(b'f') => {
                    pos = self.literal_at(pos, b"false")?;
                    sink.literal(Some(false), in_object);
                }
                Some(b'n') => {
                    pos = self.literal_at(pos, b"null")?;
                    sink.literal(None, in_object);
                }
                _ => return Err(self.unexpected_at(pos)),
            }
            // A value ended here: close the containers it completes, then go on with
            // the next member or element.
            loop {
                if open.is_empty() {
                    self.pos = pos;
                    return Ok(());
                }
                match (next_byte(input, &mut pos), in_object) {
                    (Some(b','), OBJECT) => {
                        pos += 1;
                        if next_byte(input, &mut pos) != Some(b'"') {
                            return Err(self.unexpected_at(pos));
                        }
                        pos = self.member_name_at(sink, pos)?;
                        break;
                    }
                    (Some(b','), ARRAY) => {
                        pos += 1;
                        break;
                    }
                    (Some(b'}'), OBJECT) => {
                        pos += 1;
                        room += 1;
                        in_object = open.pop();
                        sink.close(OBJECT, in_object);
                    }
                    (Some(b']'), ARRAY) => {
                        pos += 1;
                        room += 1;
                        in_object = open.pop();
                        sink.close(ARRAY, in_object);
                    }
                    _ => return Err(self.unexpected_at(pos)),
                }
            }
        }
    }

    /// The member name whose `"` is at `quote`, and the `:` after it, for
    /// [`walk`](Reader::walk); returns the position after the `:`. Compact text has
    /// it right after the name.
    #[inline(always)]
    fn member_name_at<S: Sink<'a>>(&mut self, sink: &mut S, quote: usize) -> Result<usize, Error> {
        let mut pos = self.string_at(self.input, sink, quote, Place::Name)?;
        if next_byte(self.input, &mut pos) == Some(b':') {
            return Ok(pos + 1);
        }
        Err(self.unexpected_at(pos))
    }

    /// Consumes the literal `word` (`true`, `false`, `null`) at `pos`; returns the
    /// position after it.
    #[inline(always)]
    fn literal_at(&mut self, pos: usize, word: &[u8]) -> Result<usize, Error> {
        self.pos = pos;
        self.literal(word)?;
        Ok(self.pos)
    }

    /// A member name (lone surrogates rejected) and the `:` after it.
    #[inline(always)]
    fn member_name<S: Strings<'a>>(&mut self, sink: &mut S) -> Result<(), Error> {
        if self.peek() != Some(b'"') {
            return Err(self.unexpected());
        }
        self.string(sink, Place::Name)?;
        self.expect(b':')
    }

    /// The string starting at the `"` under `self.pos`, given to `sink`; returns
    /// whether a lone surrogate escape was replaced with U+FFFD.
    ///
    /// Runs of ASCII are found a word at a time, and the multi-byte characters
    /// between them checked where they stand. A string without escapes goes to the
    /// sink as the bytes it is in the input, checked to be UTF-8 this way.
    #[inline(always)]
    fn string<S: Strings<'a>>(&mut self, sink: &mut S, place: Place) -> Result<bool, Error> {
        let first = self.pos + 1;
        let end = first_run_end::<S>(self.input, first);
        self.string_from(sink, place, first, end)
    }

    /// [`string`](Reader::string) for [`walk`](Reader::walk), which keeps its
    /// position and the input (`input`, the same as `self.input`) in locals: the
    /// string whose `"` is at `quote`, given to `sink`;
    /// returns the position after it. A text that is one run of ASCII (most strings
    /// in the protocol are) is taken here, without going through `self.pos`; any
    /// other goes on in [`string_from`](Reader::string_from) from where that run
    /// ends.
    #[inline(always)]
    fn string_at<S: Strings<'a>>(
        &mut self,
        input: &'a [u8],
        sink: &mut S,
        quote: usize,
        place: Place,
    ) -> Result<usize, Error> {
        let first = quote + 1;
        let end = first_run_end::<S>(input, first);
        if input.get(end) == Some(&b'"') {
            sink.checked(input, first, end, place);
            return Ok(end + 1);
        }
        self.pos = quote;
        self.string_from(sink, place, first, end)?;
        Ok(self.pos)
    }

    /// [`string`](Reader::string) on from `end`, where the first run of its text,
    /// from `first`, ends.
    #[inline(always)]
    fn string_from<S: Strings<'a>>(
        &mut self,
        sink: &mut S,
        place: Place,
        first: usize,
        mut end: usize,
    ) -> Result<bool, Error> {
        // For a sink that takes no decoded text: the first escape, and how many
        // have been checked in place.
        let mut first_escape = usize::MAX;
        let mut escapes = 0;
        loop {
            match self.input.get(end) {
                Some(b'"') => {
                    sink.checked(self.input, first, end, place);
                    self.pos = end + 1;
                    return Ok(false);
                }
                Some(0x80..=0xFF) => match characters_at_end(self.input, end) {
                    Ok(next) => end = run_end(self.input, next),
                    Err(bad) => {
                        end = bad;
                        break;
                    }
                },
                Some(b'\\') if !S::DECODES => {
                    first_escape = first_escape.min(end);
                    if escapes == DENSE_ESCAPES {
                        return self.check_dense(sink, place, first, first_escape, end);
                    }
                    escapes += 1;
                    let strict = matches!(place, Place::Name) || self.strict_surrogates;
                    match escape_end(self.input, end, strict) {
                        Some(next) => end = run_end(self.input, next),
                        None => break,
                    }
                }
                _ => break,
            }
        }
        // An escape, or what the general path reports: a control byte, a byte that
        // is not UTF-8, the end of the input.
        self.string_with_escapes(sink, place, first, first_escape.min(end))
    }

    /// The rest of [`string`](Reader::string) from the escape at `input[at]`, for a
    /// sink that takes no decoded text, once the string is taken for text dense with
    /// escapes: walked from stop to stop with 64-byte masks of the bytes that end
    /// runs, escapes and multi-byte characters checked where they stand. Whatever
    /// does not pass is read again from the string's `first_escape` by the general
    /// path, which tells what is wrong.
    #[inline(never)]
    fn check_dense<S: Strings<'a>>(
        &mut self,
        sink: &mut S,
        place: Place,
        first: usize,
        first_escape: usize,
        at: usize,
    ) -> Result<bool, Error> {
        let input = self.input;
        let strict = matches!(place, Place::Name) || self.strict_surrogates;
        let mut i = at;
        let mut stops = RunEnds::<true>::at(input, i);
        loop {
            i = match input.get(i) {
                Some(b'"') => {
                    self.pos = i + 1;
                    return Ok(false);
                }
                Some(b'\\') => match escape_end(input, i, strict) {
                    Some(next) => next,
                    None => break,
                },
                Some(0x80..=0xFF) => match characters_at_end(input, i) {
                    Ok(next) => next,
                    Err(_) => break,
                },
                _ => break,
            };
            i = stops.next(input, i);
        }
        self.string_with_escapes(sink, place, first, first_escape)
    }

    /// A string whose text, from `first`, starts with a run of ASCII longer than
    /// [`Str::PIECE_BYTES`] (a base64 image, say), for a sink that copies its strings:
    /// scanned a piece ([`LONG_PIECE`]) at a time, each piece copied right after it
    /// is checked, while it is still in the cache. The copy is sized for the rest of
    /// the input and cut back when the sink boxes it. At an escape, or whatever ends
    /// the string in error, the string is read again from its start on the general
    /// path.
    #[inline(never)]
    fn long_string<S: Strings<'a>>(
        &mut self,
        sink: &mut S,
        place: Place,
        first: usize,
    ) -> Result<bool, Error> {
        let input = self.input;
        let mut text = String::with_capacity(input.len().saturating_sub(first));
        let mut start = first;
        loop {
            let piece_end = start + 8 + LONG_PIECE;
            let end = find_run_end::<true, LONG_PIECE>(input, start);
            let next = match input.get(end) {
                _ if end == piece_end => end,
                Some(b'"') => end,
                Some(0x80..=0xFF) => match characters_end(input, end) {
                    Ok(next) => next,
                    Err(bad) => return self.string_with_escapes(sink, place, first, bad),
                },
                _ => return self.string_with_escapes(sink, place, first, end),
            };
            // ASCII, then whole characters checked where they stood: this check
            // passes, and is what safe code needs to append them.
            let checked = core::str::from_utf8(input.get(start..next).sure());
            text.push_str(checked.sure());
            if input.get(next) == Some(&b'"') && next == end {
                sink.copied(text, place);
                self.pos = end + 1;
                return Ok(false);
            }
            start = next;
        }
    }

    /// The rest of [`string`](Reader::string) when the string's text starts at
    /// `first` and its first escape (or whatever else ended the first run) is at
    /// `special`; or, for a sink that copies, when the first run was searched as far
    /// as a piece and goes on ([`long_string`](Reader::long_string)).
    ///
    /// The string is decoded from the checked text ([`Reader::text`]): escapes are
    /// ASCII, so the raw text is UTF-8 exactly as far as the decoded text is, and
    /// the checked text stops at the first byte that is not. Runs are copied a word
    /// at a time, escapes in between.
    #[inline(never)]
    fn string_with_escapes<S: Strings<'a>>(
        &mut self,
        sink: &mut S,
        place: Place,
        first: usize,
        special: usize,
    ) -> Result<bool, Error> {
        if S::COPIES
            && special == first + 8 + LONG_RUN
            && self
                .input
                .get(special)
                .is_some_and(|&b| !ends_run::<true>(b))
        {
            // Not an escape: the first run was searched no further than a piece.
            return self.long_string(sink, place, first);
        }
        if S::KEEPS_SHORT && special - first <= Str::INLINE_CAPACITY {
            let mut text = [0; Str::INLINE_CAPACITY];
            if let Some((len, end)) = decode_short(self.input, first, &mut text) {
                sink.short(&text, len, place);
                self.pos = end + 1;
                return Ok(false);
            }
        }
        let lone = match place {
            Place::Name => LoneSurrogate::Reject,
            Place::Value { .. } => self.value_surrogates(),
        };
        let text = self.text_from(first);
        let mut out = sink.start_text(text, special - first);
        let mut replaced = false;
        let stop = self.decode(text, first, special - first, &mut out, lone, &mut replaced)?;
        if text.as_bytes().get(stop) != Some(&b'"') {
            // The checked text ended first: at the end of the input, or at a byte
            // that is not UTF-8.
            let end = first + text.len();
            return Err(match self.input.get(end) {
                None => self.error(ErrorKind::UnexpectedEnd, end),
                Some(_) => self.error(ErrorKind::InvalidUtf8, end),
            });
        }
        sink.decoded(out.finish(), place);
        self.pos = first + stop + 1;
        Ok(replaced)
    }

    /// Decodes the escapes and runs of `text`, the checked text from `input[first]`
    /// on, from the escape at `text[i]`, into `out`. Returns where it stops: at the
    /// closing quote, or at the end of `text`.
    #[inline(always)]
    fn decode<T: Text>(
        &self,
        text: &str,
        first: usize,
        mut i: usize,
        out: &mut T,
        lone: LoneSurrogate,
        replaced: &mut bool,
    ) -> Result<usize, Error> {
        let bytes = text.as_bytes();
        let mut specials = Specials::at(bytes, i);
        loop {
            match bytes.get(i) {
                Some(b'\\') => {
                    let next = self.escape(bytes, first, i, out, lone, replaced)?;
                    i = specials.next(bytes, next);
                    out.take(text, next, i);
                }
                None | Some(b'"') => return Ok(i),
                Some(_) => return Err(self.error(ErrorKind::ControlCharacterInString, first + i)),
            }
        }
    }

    /// The input from `start` on, as far as it is UTF-8.
    #[inline]
    fn text_from(&mut self, start: usize) -> &'a str {
        let checked = start
            .checked_sub(self.text_start)
            .and_then(|from| self.text.get(from..));
        match checked {
            Some(text) => text,
            None => self.check_text(start),
        }
    }

    /// [`text_from`](Reader::text_from) before the text checked so far: checks the
    /// rest of the input from `start`, once for all the strings that follow (the
    /// bytes between them are the grammar's ASCII).
    #[inline(never)]
    fn check_text(&mut self, start: usize) -> &'a str {
        let rest = self.input.get(start..).sure();
        let text = match core::str::from_utf8(rest) {
            Ok(text) => text,
            Err(e) => {
                let valid = rest.get(..e.valid_up_to()).sure();
                core::str::from_utf8(valid).sure()
            }
        };
        self.text = text;
        self.text_start = start;
        text
    }

    /// Decodes the escape at `text[at]` (a backslash), where `text` is the checked
    /// text from `input[first]` on, into `out`; returns the index in `text` after
    /// it. Read from the checked text, which the decoding loop holds, rather than
    /// from the input; an escape running past the checked text is reported as the
    /// input has it.
    #[inline(always)]
    fn escape<T: Text>(
        &self,
        text: &[u8],
        first: usize,
        at: usize,
        out: &mut T,
        lone: LoneSurrogate,
        replaced: &mut bool,
    ) -> Result<usize, Error> {
        let Some(&letter) = text.get(at + 1) else {
            return Err(self.bad_escape(first + at));
        };
        match SHORT_ESCAPES[usize::from(letter)] {
            0 if letter == b'u' => self.unicode_escape(text, first, at, out, lone, replaced),
            0 => Err(self.error(ErrorKind::InvalidEscape, first + at)),
            decoded => {
                out.push_ascii(decoded);
                Ok(at + 2)
            }
        }
    }

    /// Decodes `\uXXXX` at `text[at]` (see [`escape`](Reader::escape)), joining a
    /// surrogate pair written as two escapes. An ASCII character (a control
    /// character, most often) goes out as a byte.
    #[inline(always)]
    fn unicode_escape<T: Text>(
        &self,
        text: &[u8],
        first: usize,
        at: usize,
        out: &mut T,
        lone: LoneSurrogate,
        replaced: &mut bool,
    ) -> Result<usize, Error> {
        let Some(unit) = hex4(text, at + 2) else {
            return Err(self.bad_escape(first + at));
        };
        if unit < 0x80 {
            out.push_ascii(unit as u8);
            return Ok(at + 6);
        }
        let (c, end) = match unit {
            0xD800..=0xDBFF => {
                let low = match text.get(at + 6..at + 8) {
                    Some(b"\\u") => hex4(text, at + 8),
                    _ => None,
                };
                match low {
                    Some(low @ 0xDC00..=0xDFFF) => {
                        let c = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                        (char::from_u32(c), at + 12)
                    }
                    _ => (None, at + 6),
                }
            }
            _ => (char::from_u32(unit), at + 6),
        };
        match c {
            Some(c) => out.push(c),
            None if lone == LoneSurrogate::Replace => {
                *replaced = true;
                out.push(char::REPLACEMENT_CHARACTER);
            }
            None => return Err(self.error(ErrorKind::LoneSurrogate, first + at)),
        }
        Ok(end)
    }

    /// The error for the escape at `input[at]` that the checked text does not hold
    /// whole as an escape: it runs past the end of the input, or its letter or hex
    /// digits are not what an escape has (a byte that is not UTF-8 among them
    /// included).
    #[cold]
    fn bad_escape(&self, at: usize) -> Error {
        match self.input.get(at + 1) {
            None => self.error(ErrorKind::UnexpectedEnd, at + 1),
            // `\u` and fewer than four bytes after it.
            Some(b'u') if self.input.len() < at + 6 => self.error(ErrorKind::UnexpectedEnd, at + 2),
            Some(_) => self.error(ErrorKind::InvalidEscape, at),
        }
    }

    /// Consumes the literal `word` (`true`, `false`, `null`).
    #[inline]
    fn literal(&mut self, word: &[u8]) -> Result<(), Error> {
        let end = self.pos + word.len();
        if self.input.get(self.pos..end) == Some(word) {
            self.pos = end;
            return Ok(());
        }
        let rest = self.input.get(self.pos..).sure();
        let same = rest.iter().zip(word).take_while(|(a, b)| a == b).count();
        self.pos += same;
        Err(self.unexpected())
    }

    /// Consumes `byte` after optional whitespace.
    #[inline]
    fn expect(&mut self, byte: u8) -> Result<(), Error> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    #[inline]
    fn enter(&mut self) -> Result<(), Error> {
        if self.depth >= self.max_depth {
            return Err(self.error(ErrorKind::TooDeep, self.pos.saturating_sub(1)));
        }
        self.depth += 1;
        Ok(())
    }

    #[inline]
    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    fn value_surrogates(&self) -> LoneSurrogate {
        if self.strict_surrogates {
            LoneSurrogate::Reject
        } else {
            LoneSurrogate::Replace
        }
    }

    /// [`unexpected`](Reader::unexpected) at `pos`, which the reader is moved to.
    #[cold]
    fn unexpected_at(&mut self, pos: usize) -> Error {
        self.pos = pos;
        self.unexpected()
    }

    /// The error for whatever is at `self.pos` when it was not what the grammar needs.
    #[cold]
    fn unexpected(&self) -> Error {
        match self.input.get(self.pos) {
            None => self.error(ErrorKind::UnexpectedEnd, self.pos),
            Some(0xEF) if self.pos == 0 && self.input.starts_with(b"\xEF\xBB\xBF") => {
                self.error(ErrorKind::ByteOrderMark, 0)
            }
            Some(&b) => self.error(ErrorKind::UnexpectedByte(b), self.pos),
        }
    }

    #[cold]
    fn error(&self, kind: ErrorKind, offset: usize) -> Error {
        Error::at(self.input, kind, offset)
    }
}

/// The byte at `input[*pos]`, past any whitespace (`*pos` is moved past it);
/// `None` at the end. Compact text has no whitespace here: one compare settles it,
/// as every whitespace byte is at most a space.
#[inline(always)]
fn next_byte(input: &[u8], pos: &mut usize) -> Option<u8> {
    match input.get(*pos) {
        Some(&b) if b > b' ' => Some(b),
        _ => loop {
            match input.get(*pos) {
                Some(b' ' | b'\n' | b'\r' | b'\t') => *pos += 1,
                other => return other.copied(),
            }
        },
    }
}

/// Decodes the string whose text starts at `input[first]` into `out`, a byte at a
/// time, when its decoded text fits there: returns the text's length and where
/// its closing quote is. `None`, having decoded as far as it got, for a longer
/// string and for anything the general path ([`Reader::string_with_escapes`])
/// decides or reports: a `\u` escape of a surrogate, a bad escape, a control byte,
/// a byte that is not UTF-8, the end of the input. For a short string with escapes
/// (a search pattern, a path with a quote in it) this is cheaper than the general
/// path, which sets up a word-at-a-time scan, a UTF-8 check and a scratch text.
#[inline]
fn decode_short(
    input: &[u8],
    first: usize,
    out: &mut [u8; Str::INLINE_CAPACITY],
) -> Option<(usize, usize)> {
    let (mut i, mut len) = (first, 0);
    loop {
        let b = *input.get(i)?;
        let (taken, next) = match b {
            b'"' => return Some((len, i)),
            b'\\' => {
                let letter = *input.get(i + 1)?;
                match SHORT_ESCAPES[usize::from(letter)] {
                    // `\u`: a character that is not a surrogate, or the general path.
                    0 if letter == b'u' => {
                        let c = char::from_u32(hex4(input, i + 2)?)?;
                        let width = c.len_utf8();
                        c.encode_utf8(out.get_mut(len..len + width)?);
                        (width, i + 6)
                    }
                    0 => return None,
                    decoded => {
                        *out.get_mut(len)? = decoded;
                        (1, i + 2)
                    }
                }
            }
            0x00..=0x1F => return None,
            0x80..=0xFF => {
                let end = characters_end(input, i).ok()?;
                let characters = input.get(i..end)?;
                out.get_mut(len..len + characters.len())?
                    .copy_from_slice(characters);
                (characters.len(), end)
            }
            _ => {
                *out.get_mut(len)? = b;
                (1, i + 1)
            }
        };
        len += taken;
        i = next;
    }
}

/// How many escapes a string that is only checked is searched past a word at a
/// time before it is taken for text dense with escapes ([`Reader::check_dense`]).
const DENSE_ESCAPES: u32 = 3;

/// How far past its first word a string's first run is searched before, for a sink
/// that copies its strings, the string is taken for long: a piece in all
/// ([`Reader::long_string`]).
const LONG_RUN: usize = Str::PIECE_BYTES - 8;

/// How far past its first word each piece of a long string is searched
/// ([`Reader::long_string`]): 16 KiB pieces in all.
const LONG_PIECE: usize = 16 * 1024 - 8;

/// Where the first run of a string's text, from `first`, ends, as `S` reads it: a
/// sink that copies its strings stops a first run longer than a piece (it goes on
/// in `long_string`, see `string_with_escapes`).
#[inline(always)]
fn first_run_end<'a, S: Strings<'a>>(input: &[u8], first: usize) -> usize {
    if S::COPIES {
        find_run_end::<true, LONG_RUN>(input, first)
    } else {
        run_end(input, first)
    }
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::json::{Object, parse};
    use alloc::{format, vec};
    use proptest::prelude::*;

    proptest! {
        /// [`Reader::read_integer`] takes a plain integer in one pass, and any other
        /// number through the grammar: the same number, the same place after it and
        /// the same error as [`Reader::read_number`] followed by
        /// [`Number::is_integer`], for integers, fractions, exponents, leading zeros,
        /// signs alone and what may follow a number.
        #[test]
        fn integers_read_as_numbers_read(
            number in r"-?(0|[1-9][0-9]{0,24}|0[0-9]{1,3}|)(\.[0-9]{0,3})?([eE][+-]?[0-9]{0,3})?",
            after in prop::sample::select(vec!["", ",", "}", " ", "a", ".", "e", "\"\""]),
        ) {
            let text = format!("{number}{after}");
            let mut integer = Reader::new(text.as_bytes(), &ParseOptions::DEFAULT);
            let mut general = Reader::new(text.as_bytes(), &ParseOptions::DEFAULT);
            let read = integer.read_integer();
            let expected = general.read_number().map(|n| n.is_integer().then_some(n));
            prop_assert_eq!(&read, &expected, "{}", text);
            if read.is_ok() {
                prop_assert_eq!(integer.offset(), general.offset(), "{}", text);
            }
        }
    }

    /// Strings whose first run of ASCII is longer than a piece are copied as they
    /// are scanned: parsed into a tree they give the same text, or the same error at
    /// the same place, as the reader's own string reading (which borrows and never
    /// takes that path). The ASCII run ends on both sides of piece edges (where a
    /// string is taken for long, and the edges of the pieces it is then scanned in), in a quote,
    /// multi-byte characters, an escape, a byte that is not UTF-8, a control byte or
    /// the end of the input; as a value, a member's value and a member name.
    #[test]
    fn long_strings_are_copied_as_they_are_scanned() {
        let piece = Str::PIECE_BYTES;
        let tails: [&[u8]; 10] = [
            b"\"",
            b"\xC3\xA9\xE2\x82\xAC\xF0\x9D\x84\x9E\"",
            b"\xC3\xA9",
            b"\\n tail\"",
            b"\\u00e9\"",
            b"\xFF\"",
            b"\xE2\x82\"",
            b"\x01\"",
            b"\xC3",
            b"",
        ];
        let options = ParseOptions::default();
        let long_piece = LONG_PIECE + 8;
        for run in [
            piece - 1,
            piece,
            piece + 1,
            piece + long_piece - 1,
            piece + long_piece,
            piece + long_piece + 1,
            2 * piece - 1,
            2 * piece,
            3 * piece + 5,
        ] {
            for tail in tails {
                for more in [0, 1, piece] {
                    // The run, the tail, then (while the string is open) more ASCII
                    // and a closing quote.
                    let mut text = alloc::vec![b'x'; run];
                    text.extend_from_slice(tail);
                    if !tail.ends_with(b"\"") && !tail.is_empty() {
                        text.extend(core::iter::repeat_n(b'y', more));
                        text.push(b'"');
                    }
                    let what = alloc::format!("run {run}, tail {tail:?}, {more} more");
                    let string = [b"\"".as_slice(), &text].concat();
                    let expected = Reader::new(&string, &options).read_string();
                    let expected_value = expected.clone().map(|(s, _)| Value::from(s));
                    assert_eq!(parse(&string), expected_value, "{what}");
                    let member = [b"{\"a\":".as_slice(), &string, b"}"].concat();
                    let in_member = member.get(5..).unwrap_or_default();
                    let in_member = Reader::new(in_member, &options).read_string();
                    let expected_member = in_member
                        .map(|(s, _)| Value::Object(Object::from_iter([("a", Value::from(s))])));
                    let got = parse(&member);
                    match (&got, &expected_member) {
                        (Err(got), Err(e)) => {
                            let at = |e: &Error| (e.kind(), e.offset());
                            assert_eq!(at(got), (e.kind(), e.offset() + 5), "{what}");
                        }
                        _ => assert_eq!(got, expected_member, "{what}"),
                    }
                    // Another string after it: what ends this one must not be
                    // passed over.
                    let element = [b"[".as_slice(), &string, b",\"z\"]"].concat();
                    match &expected {
                        Ok((s, _)) => {
                            let both = alloc::vec![Value::from(s.as_str()), Value::from("z")];
                            assert_eq!(parse(&element), Ok(Value::Array(both)), "{what}");
                        }
                        Err(_) => assert!(parse(&element).is_err(), "{what}"),
                    }
                    let name = [b"{".as_slice(), &string, b":1}"].concat();
                    if let Ok((s, _)) = &expected {
                        let expected = Object::from_iter([(s.as_str(), Value::from(1))]);
                        assert_eq!(parse(&name), Ok(Value::Object(expected)), "{what}");
                    } else {
                        assert!(parse(&name).is_err(), "{what}");
                    }
                }
            }
        }
    }

    /// Short strings and numbers are copied into the tree in place as a fixed-size
    /// window of the input, and, where the input ends within the window, as their
    /// bytes: as a member name, a member value, an element and the whole text, of
    /// every length around the inline capacity and with every amount of input
    /// after them, they come out as the same values built from their text.
    #[test]
    fn short_texts_are_the_same_copied_as_a_window_or_as_their_bytes() {
        let capacity = Str::INLINE_CAPACITY;
        for len in 0..=capacity + 3 {
            let text: String = "aé€"
                .chars()
                .cycle()
                .scan(0, |bytes, c| {
                    *bytes += c.len_utf8();
                    (*bytes <= len).then_some(c)
                })
                .collect();
            let digits: String = "1234567890".chars().cycle().take(len.max(2) - 1).collect();
            let number = alloc::format!("-{digits}");
            let string = Value::from(text.as_str());
            let number_value = Value::Number(Number::from_text(&number).unwrap_or_else(|| {
                panic!("{number} is a number");
            }));
            let quoted = alloc::format!("\"{text}\"");
            for (json, value) in [(&quoted, &string), (&number, &number_value)] {
                for pad in 0..=capacity + 2 {
                    let spaces = " ".repeat(pad);
                    let cases = [
                        (alloc::format!("{json}{spaces}"), value.clone()),
                        (
                            alloc::format!("[{json}{spaces}]"),
                            Value::Array(alloc::vec![value.clone()]),
                        ),
                        (
                            alloc::format!("{{\"k\":{json}{spaces}}}"),
                            Value::Object(Object::from_iter([("k", value.clone())])),
                        ),
                    ];
                    for (input, expected) in cases {
                        assert_eq!(parse(input.as_bytes()), Ok(expected), "{input:?}");
                    }
                }
            }
            for pad in 0..=capacity + 2 {
                let spaces = " ".repeat(pad);
                let input = alloc::format!("{{{quoted}:1{spaces}}}");
                let expected = Object::from_iter([(text.as_str(), Value::from(1))]);
                assert_eq!(
                    parse(input.as_bytes()),
                    Ok(Value::Object(expected)),
                    "{input:?}"
                );
            }
        }
    }

    /// A run between escapes is taken as a 64-byte window, a 32-byte one, a 16-byte
    /// one or in one piece, as its length and the characters around the window's
    /// end allow: for runs of every length around those sizes, with a multi-byte
    /// character across each window's end, after every kind of escape and with
    /// every amount of input after the string, the string comes out as the text it
    /// was built from, and a byte that is not allowed in the run is reported where
    /// it is.
    #[test]
    fn runs_between_escapes_are_the_same_taken_as_windows_or_in_one_piece() {
        let escapes = [
            ("\\n", "\n"),
            ("\\\"", "\""),
            ("\\\\", "\\"),
            ("\\/", "/"),
            ("\\u00e9", "\u{e9}"),
            ("\\u001b", "\u{1b}"),
            ("\\ud83d\\ude00", "\u{1F600}"),
        ];
        for len in 0..=70 {
            // Where a three-byte character starts in the run: none, or across the
            // end of a window.
            let places = [
                None,
                Some(14),
                Some(15),
                Some(30),
                Some(31),
                Some(62),
                Some(63),
            ];
            for place in places
                .into_iter()
                .filter(|p| p.is_none_or(|p| p + 3 <= len))
            {
                let mut run = String::new();
                while run.len() < len {
                    if Some(run.len()) == place {
                        run.push('\u{20AC}');
                    } else {
                        run.push(char::from(b'a' + (run.len() % 26) as u8));
                    }
                }
                for (escape, decoded) in escapes {
                    for pad in [0, 1, 15, 31, 33, 63, 65] {
                        let spaces = " ".repeat(pad);
                        let input = alloc::format!("[\"x{escape}{run}{escape}{run}\"{spaces}]");
                        let text = alloc::format!("x{decoded}{run}{decoded}{run}");
                        let expected = Value::Array(alloc::vec![Value::from(text.as_str())]);
                        assert_eq!(parse(input.as_bytes()), Ok(expected), "{input:?}");
                    }
                    for bad in [&[0x01u8][..], &[0xFF], &[0xE2, 0x82]] {
                        let mut input = alloc::format!("[\"x{escape}{run}").into_bytes();
                        let at = input.len();
                        input.extend_from_slice(bad);
                        input.extend_from_slice(alloc::format!("{run}\"]").as_bytes());
                        let error = parse(&input).map(|_| ()).unwrap_err();
                        assert_eq!(error.offset(), at, "{input:?}");
                    }
                }
            }
        }
    }

    /// A short string with escapes is decoded into the tree a byte at a time
    /// (`decode_short`); it must give what the general path gives (a `Cow` sink
    /// never takes the short path): the same text, or the same error at the same
    /// offset, around the inline capacity and for every kind of piece.
    #[test]
    fn short_strings_with_escapes_are_the_same_decoded_a_byte_at_a_time() {
        let pieces: [&[u8]; 20] = [
            b"\\n",
            b"\\\"",
            b"\\\\",
            b"\\/",
            b"\\b",
            b"\\t",
            b"\\u0041",
            b"\\u00e9",
            b"\\u20AC",
            b"\\ud83d\\ude00",
            b"\\ud800",
            b"\\udc00x",
            b"\\x",
            b"\\u12G4",
            "\u{e9}".as_bytes(),
            "\u{65e5}\u{672c}".as_bytes(),
            "\u{1F600}".as_bytes(),
            &[0x01],
            &[0xFF],
            &[0xE6, 0x97],
        ];
        let general = |body: &[u8]| {
            let mut quoted = alloc::vec![b'"'];
            quoted.extend_from_slice(body);
            quoted.push(b'"');
            let mut reader = Reader::new(&quoted, &ParseOptions::DEFAULT);
            reader
                .read_str()
                .map(|(text, _)| String::from(text))
                .map_err(|e| (e.kind(), e.offset()))
        };
        let mut compared = 0;
        for before in 0..=24 {
            for after in 0..=6 {
                for (a, first) in pieces.iter().enumerate() {
                    for second in pieces.iter().skip(a % 3).step_by(3).chain([&&b""[..]]) {
                        let mut body = b"abcdefghijklmnopqrstuvwxyz"[..before].to_vec();
                        body.extend_from_slice(first);
                        body.extend_from_slice(&b"0123456"[..after]);
                        body.extend_from_slice(second);
                        let expected = general(&body);
                        let mut quoted = alloc::vec![b'"'];
                        quoted.extend_from_slice(&body);
                        quoted.push(b'"');
                        let tree = parse(&quoted).map_err(|e| (e.kind(), e.offset()));
                        let text = tree.map(|v| String::from(v.as_str().unwrap_or("not a string")));
                        assert_eq!(text, expected, "{:?}", String::from_utf8_lossy(&body));
                        // As a member name, where a lone surrogate is an error.
                        let name = expected.as_ref().ok().filter(|n| !n.contains('\u{FFFD}'));
                        if let Some(name) = name {
                            let mut object = b"{".to_vec();
                            object.extend_from_slice(&quoted);
                            object.extend_from_slice(b":0}");
                            let names = parse(&object).map(|v| match v {
                                Value::Object(o) => {
                                    o.iter().map(|(n, _)| String::from(n.as_str())).collect()
                                }
                                _ => alloc::vec![],
                            });
                            assert_eq!(names, Ok(alloc::vec![name.clone()]));
                        }
                        compared += 1;
                    }
                }
            }
        }
        assert!(compared > 10_000);
    }
}
