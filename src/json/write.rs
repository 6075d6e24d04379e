//! The writer: compact JSON text, appended to a caller's buffer.
//!
//! Strings escape `"`, `\` and every control character below U+0020 (`\n \r \t \b
//! \f` in their short forms, the rest as `\u00XX`), so the output never holds a raw
//! line break. Numbers are written as their exact text. Nesting is walked with an
//! explicit stack, not by recursion.

use alloc::vec::Vec;
use core::fmt;

use super::error::Sure;
use super::scan::{Specials, WINDOW, find_special, is_special, special_bytes, word_at};
use super::string::Str;
use super::value::{Object, Value};

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
    let mut out = Vec::with_capacity(256);
    write_value(v, &mut out);
    out
}

/// The rest of an array or object being written.
#[derive(Clone, Copy)]
enum Rest<'a> {
    Elements(&'a [Value]),
    Members(&'a [(Str, Value)]),
}

/// The open containers, innermost last: the first levels in place, deeper ones in a
/// `Vec` (so writing usual messages allocates nothing but the output).
struct Open<'a> {
    inline: [Rest<'a>; 16],
    len: usize,
    deeper: Vec<Rest<'a>>,
}

impl<'a> Open<'a> {
    fn new() -> Open<'a> {
        Open {
            inline: [Rest::Elements(&[]); 16],
            len: 0,
            deeper: Vec::new(),
        }
    }

    #[inline]
    fn push(&mut self, rest: Rest<'a>) {
        match self.inline.get_mut(self.len) {
            Some(slot) => *slot = rest,
            None => self.deeper.push(rest),
        }
        self.len += 1;
    }

    #[inline]
    fn last_mut(&mut self) -> Option<&mut Rest<'a>> {
        let last = self.len.checked_sub(1)?;
        match self.inline.get_mut(last) {
            Some(slot) => Some(slot),
            None => self.deeper.last_mut(),
        }
    }

    #[inline]
    fn pop(&mut self) {
        if self.len > self.inline.len() {
            self.deeper.pop();
        }
        self.len = self.len.saturating_sub(1);
    }
}

/// Appends `v` as compact JSON to `out`.
pub fn write_value(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Object(object) => write_object(object, out),
        _ => write_items(v, Open::new(), out),
    }
}

/// Appends an object's members as a compact JSON object to `out`, as
/// [`write_value`] writes a [`Value::Object`].
///
/// ```
/// use dhara_protocol::json::{self, Object, Value};
///
/// let object = Object::from_iter([("a", Value::from(1)), ("b", Value::Null)]);
/// let mut out = Vec::new();
/// json::write_object(&object, &mut out);
/// assert_eq!(out, br#"{"a":1,"b":null}"#);
/// ```
pub fn write_object(object: &Object, out: &mut Vec<u8>) {
    // Its members up to the first array or object are written here: an object
    // without any (most tool inputs) needs no stack of open containers at all.
    let Some(((name, first), mut rest)) = object.as_slice().split_first() else {
        out.extend_from_slice(b"{}");
        return;
    };
    let container = match write_item(b'{', Some(name), first, out) {
        Some(container) => Some(container),
        None => write_scalars_until_container(&mut rest, member_parts, out),
    };
    match container {
        Some(container) => {
            let mut open = Open::new();
            open.push(Rest::Members(rest));
            write_items(container, open, out);
        }
        None => out.push(b'}'),
    }
}

/// Appends a JSON array whose elements `write` appends, one item each: the way to
/// write a list of typed messages without building [`Value`]s for them.
///
/// ```
/// let mut out = Vec::new();
/// dhara_protocol::json::write_array(&[1, 2, 3], |n, out| out.push(b'0' + *n), &mut out);
/// assert_eq!(out, b"[1,2,3]");
/// ```
pub fn write_array<T>(items: &[T], mut write: impl FnMut(&T, &mut Vec<u8>), out: &mut Vec<u8>) {
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write(item, out);
    }
    out.push(b']');
}

/// Writes `{}` for an empty object; otherwise its first member with
/// [`write_item`], the other members pushed on `open`, and returns the first
/// member's value if it is an array or an object.
#[inline]
fn open_object<'a>(
    members: &'a [(Str, Value)],
    open: &mut Open<'a>,
    out: &mut Vec<u8>,
) -> Option<&'a Value> {
    match members.split_first() {
        Some(((name, value), rest)) => {
            open.push(Rest::Members(rest));
            write_item(b'{', Some(name), value, out)
        }
        None => {
            out.extend_from_slice(b"{}");
            None
        }
    }
}

/// A member's name and the `:` after it.
#[inline]
fn write_name(name: &Str, out: &mut Vec<u8>) {
    write_escaped(name.as_bytes(), out);
    out.push(b':');
}

/// Writes `next`, then the rest of every container in `open`, innermost first.
fn write_items<'a>(mut next: &'a Value, mut open: Open<'a>, out: &mut Vec<u8>) {
    loop {
        // Write `next`; a container is opened and its first item written, and
        // if that is a container too, it is next.
        let opened = match next {
            Value::Array(items) => match items.split_first() {
                Some((first, rest)) => {
                    open.push(Rest::Elements(rest));
                    write_item(b'[', None, first, out)
                }
                None => {
                    out.extend_from_slice(b"[]");
                    None
                }
            },
            Value::Object(members) => open_object(members.as_slice(), &mut open, out),
            scalar => {
                write_scalar(scalar, out);
                None
            }
        };
        if let Some(container) = opened {
            next = container;
            continue;
        }
        // Find the next container to open, writing the scalars before it and
        // closing the containers that are done.
        loop {
            let Some(rest) = open.last_mut() else { return };
            let container = match rest {
                Rest::Elements(items) => {
                    let container = write_scalars_until_container(items, |item| (None, item), out);
                    if container.is_none() {
                        out.push(b']');
                    }
                    container
                }
                Rest::Members(members) => {
                    let container = write_scalars_until_container(members, member_parts, out);
                    if container.is_none() {
                        out.push(b'}');
                    }
                    container
                }
            };
            match container {
                Some(container) => {
                    next = container;
                    break;
                }
                None => open.pop(),
            }
        }
    }
}

/// Writes the items of `rest` (each `,` then, for a member, its name) up to the
/// first that is an array or an object, which is returned with `rest` moved past
/// it, its `,` and name written. `None` once all are written.
#[inline(always)]
fn write_scalars_until_container<'a, T>(
    rest: &mut &'a [T],
    parts: impl Fn(&'a T) -> (Option<&'a Str>, &'a Value),
    out: &mut Vec<u8>,
) -> Option<&'a Value> {
    while let Some((item, others)) = rest.split_first() {
        *rest = others;
        let (name, value) = parts(item);
        if let Some(container) = write_item(b',', name, value, out) {
            return Some(container);
        }
    }
    None
}

/// A member's name and value, for [`write_scalars_until_container`].
#[inline(always)]
fn member_parts((name, value): &(Str, Value)) -> (Option<&Str>, &Value) {
    (Some(name), value)
}

/// Writes `lead` (`{`, `[` or `,`), then, for a member, its name and `:`, then
/// `value` unless it is an array or an object, which is returned instead.
///
/// Most items of a message are a short name and a short scalar: those are written
/// in one window ([`write_window`]), with one capacity check and one length update
/// for the lot, each short text stored as two words.
#[inline(always)]
fn write_item<'a>(
    lead: u8,
    name: Option<&Str>,
    value: &'a Value,
    out: &mut Vec<u8>,
) -> Option<&'a Value> {
    let name = match name {
        Some(name) => match Short::plain(name.as_bytes()) {
            Some(short) => Some(short),
            None => {
                out.push(lead);
                write_name(name, out);
                return write_unless_container(value, out);
            }
        },
        None => None,
    };
    let scalar = ShortScalar::of(value);
    write_window::<ITEM_WINDOW>(out, |window| {
        let mut at = put_byte(window, 0, lead);
        if let Some(name) = name {
            at = name.put_quoted(window, at);
            at = put_byte(window, at, b':');
        }
        match scalar {
            Some(scalar) => scalar.put(window, at),
            None => at,
        }
    });
    match scalar {
        Some(_) => None,
        None => write_unless_container(value, out),
    }
}

/// Writes `value` unless it is an array or an object, which is returned instead.
#[inline(always)]
fn write_unless_container<'a>(value: &'a Value, out: &mut Vec<u8>) -> Option<&'a Value> {
    match value {
        Value::Array(_) | Value::Object(_) => Some(value),
        scalar => {
            write_scalar(scalar, out);
            None
        }
    }
}

/// Writes a value that is not an array or an object (nothing for those).
#[inline(always)]
fn write_scalar(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => out.extend_from_slice(n.text_bytes()),
        Value::String(s) => write_escaped(s.as_bytes(), out),
        Value::Array(_) | Value::Object(_) => {}
    }
}

/// The bytes [`write_item`]'s window holds: a lead byte, a name of up to 16 bytes
/// in quotes and its `:`, and a value of up to 16 bytes in quotes (38), rounded up.
const ITEM_WINDOW: usize = 40;

/// The bytes [`write_escaped`]'s window holds: a string of up to 16 bytes in quotes
/// (18), rounded up.
const STRING_WINDOW: usize = 24;

/// Appends what `fill` writes at the start of a window of `N` bytes and returns
/// the length of: the window is added to `out` (zeroes) and cut back to that
/// length, so the bytes in it go in with one capacity check and one length update,
/// as stores at offsets known to be in bounds.
#[inline(always)]
fn write_window<const N: usize>(out: &mut Vec<u8>, fill: impl FnOnce(&mut [u8; N]) -> usize) {
    let start = out.len();
    out.resize(start + N, 0);
    let len = out.last_chunk_mut::<N>().map_or(0, fill);
    out.truncate(start + len);
}

/// Stores `b` at `window[at]`; returns the index after it.
#[inline(always)]
fn put_byte(window: &mut [u8], at: usize, b: u8) -> usize {
    if let Some(slot) = window.get_mut(at) {
        *slot = b;
    }
    at + 1
}

/// Stores `word` little-endian at `window[at..at + 8]`.
#[inline(always)]
fn put_word(window: &mut [u8], at: usize, word: u64) {
    if let Some(slot) = window.get_mut(at..at + 8) {
        slot.copy_from_slice(&word.to_le_bytes());
    }
}

/// A text of at most 16 bytes as two words that cover it: `head`, its bytes from
/// the first, and `tail`, its bytes from `tail_at` to its end, each padded with
/// spaces (which need no escape) where the text is shorter than a word. Checking it
/// for bytes to escape takes two word operations, and copying it two stores, which
/// may reach up to 8 bytes past the text's start, into what is written next.
#[derive(Clone, Copy)]
struct Short {
    len: usize,
    head: u64,
    tail: u64,
    tail_at: usize,
}

impl Short {
    /// `text` (at most 8 bytes, padded with spaces to 8) as a `Short` of `len` bytes.
    const fn literal(text: &[u8; 8], len: usize) -> Short {
        let word = u64::from_le_bytes(*text);
        Short {
            len,
            head: word,
            tail: word,
            tail_at: 0,
        }
    }

    /// `bytes` as a `Short` if they are at most 16: from 8 bytes on as two words
    /// that may overlap, from 4 as two 4-byte halves, and the shortest a byte at a
    /// time.
    #[inline(always)]
    fn of(bytes: &[u8]) -> Option<Short> {
        let len = bytes.len();
        let (head, tail, tail_at) = match len {
            8..=16 => (word_at(bytes, 0)?, word_at(bytes, len - 8)?, len - 8),
            4..=7 => (
                half_word_at(bytes, 0)?,
                half_word_at(bytes, len - 4)?,
                len - 4,
            ),
            0..=3 => {
                let word = bytes
                    .iter()
                    .rfold(SPACES, |word, &b| word << 8 | u64::from(b));
                (word, word, 0)
            }
            _ => return None,
        };
        Some(Short {
            len,
            head,
            tail,
            tail_at,
        })
    }

    /// `bytes` as a `Short` if they are at most 16 and hold no `"`, `\` or control
    /// byte: a string written between quotes as it is.
    #[inline(always)]
    fn plain(bytes: &[u8]) -> Option<Short> {
        Short::of(bytes).filter(|short| short.specials() == 0)
    }

    /// Not 0 if the text holds a `"`, `\` or control byte.
    #[inline(always)]
    fn specials(self) -> u64 {
        special_bytes(self.head) | special_bytes(self.tail)
    }

    /// Where the first `"`, `\` or control byte of the text is, if it has one.
    #[inline(always)]
    fn first_special(self) -> Option<usize> {
        let at = |found: u64| (found.trailing_zeros() / 8) as usize;
        match (special_bytes(self.head), special_bytes(self.tail)) {
            (0, 0) => None,
            (0, found) => Some(self.tail_at + at(found)),
            (found, _) => Some(at(found)),
        }
    }

    /// Stores the text at `window[at..]`; returns the index after it.
    #[inline(always)]
    fn put(self, window: &mut [u8], at: usize) -> usize {
        // The bounds the compiler cannot see through the match in `of`, spelled out
        // (they change nothing), so that it needs no checks of its own.
        let (len, tail_at) = (self.len.min(16), self.tail_at.min(8));
        put_word(window, at, self.head);
        put_word(window, at + tail_at, self.tail);
        at + len
    }

    /// Stores the text in quotes at `window[at..]`; returns the index after it.
    #[inline(always)]
    fn put_quoted(self, window: &mut [u8], at: usize) -> usize {
        let at = put_byte(window, at, b'"');
        let at = self.put(window, at);
        put_byte(window, at, b'"')
    }
}

/// Eight spaces, as a word.
const SPACES: u64 = u64::from_le_bytes(*b"        ");

/// A scalar whose text is a [`Short`]: a literal, a number of up to 16 bytes, or
/// a string of up to 16 bytes with nothing to escape, in quotes.
#[derive(Clone, Copy)]
struct ShortScalar {
    text: Short,
    quoted: bool,
}

impl ShortScalar {
    const NULL: ShortScalar = ShortScalar::bare(Short::literal(b"null    ", 4));
    const TRUE: ShortScalar = ShortScalar::bare(Short::literal(b"true    ", 4));
    const FALSE: ShortScalar = ShortScalar::bare(Short::literal(b"false   ", 5));

    const fn bare(text: Short) -> ShortScalar {
        ShortScalar {
            text,
            quoted: false,
        }
    }

    /// `v` as a `ShortScalar`, if it is one.
    #[inline(always)]
    fn of(v: &Value) -> Option<ShortScalar> {
        match v {
            Value::Null => Some(ShortScalar::NULL),
            Value::Bool(true) => Some(ShortScalar::TRUE),
            Value::Bool(false) => Some(ShortScalar::FALSE),
            Value::Number(n) => Short::of(n.text_bytes()).map(ShortScalar::bare),
            Value::String(s) => {
                Short::plain(s.as_bytes()).map(|text| ShortScalar { text, quoted: true })
            }
            Value::Array(_) | Value::Object(_) => None,
        }
    }

    /// Stores the scalar's text at `window[at..]`; returns the index after it.
    #[inline(always)]
    fn put(self, window: &mut [u8], at: usize) -> usize {
        match self.quoted {
            true => self.text.put_quoted(window, at),
            false => self.text.put(window, at),
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
#[inline]
pub fn write_string(s: &str, out: &mut Vec<u8>) {
    write_escaped(s.as_bytes(), out);
}

/// [`write_string`] of a [`Str`], from its bytes: a short one, kept inline, is not
/// checked to be UTF-8 again on its way out, as taking it as a `&str` would.
///
/// ```
/// use dhara_protocol::json::{self, Str};
///
/// let mut out = Vec::new();
/// json::write_str(&Str::from("ok \"quoted\""), &mut out);
/// assert_eq!(out, br#""ok \"quoted\"""#);
/// ```
#[inline]
pub fn write_str(s: &Str, out: &mut Vec<u8>) {
    write_escaped(s.as_bytes(), out);
}

/// [`write_string`] of a string's bytes (valid UTF-8, as a [`Str`] holds): a `Str`
/// gives its bytes without checking them again.
///
/// Most strings of a message are short (member names, paths, ids, patterns): those
/// are checked in two words and written in one window ([`write_window`]), as two
/// stores when they hold nothing to escape; the longer ones go to
/// [`write_escaped_runs`].
#[inline(always)]
fn write_escaped(bytes: &[u8], out: &mut Vec<u8>) {
    match Short::of(bytes) {
        Some(short) => match short.first_special() {
            None => write_window::<STRING_WINDOW>(out, |window| short.put_quoted(window, 0)),
            Some(first) => write_short_escaped(short, bytes, first, out),
        },
        None => write_escaped_runs(bytes, out),
    }
}

/// [`write_escaped`] of a string of at most 16 bytes whose first byte to escape is
/// `bytes[first]`: written whole as two words, then from that byte on rewritten a
/// byte at a time, each byte's text ([`ESCAPED`]) stored as a word, without a branch
/// on what the byte is.
#[inline(never)]
fn write_short_escaped(short: Short, bytes: &[u8], first: usize, out: &mut Vec<u8>) {
    write_window::<ESCAPED_WINDOW>(out, |window| {
        let at = put_byte(window, 0, b'"');
        short.put(window, at);
        let mut at = at + first;
        for &b in bytes.get(first..).sure() {
            let text = ESCAPED[usize::from(b)];
            put_word(window, at, text);
            at += (text >> 56) as usize;
        }
        put_byte(window, at, b'"')
    });
}

/// The bytes [`write_short_escaped`]'s window holds: a string of up to 16 bytes,
/// each escaped as `\u00XX`, in quotes (98; the last escape, stored as a word,
/// reaches 99), rounded up.
const ESCAPED_WINDOW: usize = 104;

/// What `write_short_escaped` writes for each byte, as a little-endian word: the
/// byte itself, or its escape, in the low bytes; the length of that text in the top
/// byte.
static ESCAPED: [u64; 256] = {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut table = [0; 256];
    let mut b = 0;
    while b < 256 {
        let text: [u8; 8] = match ESCAPES[b] {
            0 => [b as u8, 0, 0, 0, 0, 0, 0, 1],
            b'u' => [b'\\', b'u', b'0', b'0', HEX[b >> 4], HEX[b & 0xF], 0, 6],
            letter => [b'\\', letter, 0, 0, 0, 0, 0, 2],
        };
        table[b] = u64::from_le_bytes(text);
        b += 1;
    }
    table
};

/// The four bytes at `bytes[at..]` as the low half of a word whose high half is
/// spaces.
#[inline]
fn half_word_at(bytes: &[u8], at: usize) -> Option<u64> {
    let half = bytes.get(at..at + 4)?;
    let half = <[u8; 4]>::try_from(half).ok()?;
    Some(u64::from(u32::from_le_bytes(half)) | SPACES << 32)
}

/// [`write_escaped`] of any string: runs copied, escapes written.
#[inline(never)]
fn write_escaped_runs(bytes: &[u8], out: &mut Vec<u8>) {
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut i = copy_run(bytes, 0, out);
    if i < bytes.len() && bytes.len() - i >= Specials::BLOCK {
        // A long text with escapes: the rest is walked from special byte to special
        // byte with a bit mask per 64-byte block, each run copied as a fixed window.
        i = write_escaped_long(bytes, i, out);
    }
    while let Some(&b) = bytes.get(i) {
        write_escape(b, out);
        i = copy_run(bytes, i + 1, out);
    }
    out.push(b'"');
}

/// The rest of a long string, from its special byte at `bytes[from]` to its end
/// (the index returned): escapes written, runs copied.
#[inline(never)]
fn write_escaped_long(bytes: &[u8], from: usize, out: &mut Vec<u8>) -> usize {
    let mut specials = Specials::at(bytes, from);
    let mut i = from;
    while let Some(&b) = bytes.get(i) {
        write_escape(b, out);
        let start = i + 1;
        i = specials.next(bytes, start);
        match bytes.get(start..start + WINDOW) {
            // A run of up to a window's length: one fixed-size copy, cut back.
            Some(window) if i - start <= WINDOW => {
                out.extend_from_slice(window);
                out.truncate(out.len() - (WINDOW - (i - start)));
            }
            _ => out.extend_from_slice(bytes.get(start..i).sure()),
        }
    }
    i
}

/// Writes the escape for the special byte `b`.
#[inline]
fn write_escape(b: u8, out: &mut Vec<u8>) {
    match ESCAPES[usize::from(b)] {
        b'u' => {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            let hex = |d: u8| HEX[usize::from(d & 0xF)];
            out.extend_from_slice(&[b'\\', b'u', b'0', b'0', hex(b >> 4), hex(b)]);
        }
        letter => out.extend_from_slice(&[b'\\', letter]),
    }
}

/// Appends the bytes from `bytes[from]` up to the next `"`, `\` or control byte to
/// `out`; returns that byte's index (or `bytes.len()`).
///
/// Short runs go a word at a time, each word appended whole as it is checked (a
/// fixed-size copy) and cut back to the special byte, and the last few bytes one at
/// a time; a run still going after four words is found with [`find_special`] and
/// appended in one piece.
#[inline(always)]
fn copy_run(bytes: &[u8], from: usize, out: &mut Vec<u8>) -> usize {
    let mut i = from;
    for _ in 0..4 {
        let Some(word) = word_at(bytes, i) else {
            // Fewer than eight bytes left (most member names): one at a time.
            for &b in bytes.get(i..).sure() {
                if is_special(b) {
                    break;
                }
                out.push(b);
                i += 1;
            }
            return i;
        };
        out.extend_from_slice(&word.to_le_bytes());
        let found = special_bytes(word);
        if found != 0 {
            let clean = (found.trailing_zeros() / 8) as usize;
            out.truncate(out.len() - (8 - clean));
            return i + clean;
        }
        i += 8;
    }
    let end = find_special(bytes, i);
    out.extend_from_slice(bytes.get(i..end).sure());
    end
}

/// How a string's bytes are written: the letter after the backslash for those
/// escaped (the bytes `find_special` stops at), `u` for `\u00XX`; 0 for the others,
/// written as they are.
static ESCAPES: [u8; 256] = {
    let mut table = [0; 256];
    let mut control = 0;
    while control < 0x20 {
        table[control] = b'u';
        control += 1;
    }
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table[0x08] = b'b';
    table[0x0C] = b'f';
    table[b'\n' as usize] = b'n';
    table[b'\r' as usize] = b'r';
    table[b'\t' as usize] = b't';
    table
};

impl fmt::Display for Value {
    /// The same compact text as [`to_vec`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = Vec::new();
        write_value(self, &mut out);
        f.write_str(core::str::from_utf8(&out).map_err(|_| fmt::Error)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Number;
    use alloc::string::String;
    use alloc::vec;
    use proptest::prelude::*;

    /// The obvious recursive writer: what the writer's loop must write.
    fn reference(v: &Value, out: &mut Vec<u8>) {
        match v {
            Value::Array(items) => {
                out.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    reference(item, out);
                }
                out.push(b']');
            }
            Value::Object(object) => {
                out.push(b'{');
                for (i, (name, value)) in object.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    write_name(name, out);
                    reference(value, out);
                }
                out.push(b'}');
            }
            scalar => write_scalar(scalar, out),
        }
    }

    /// Values with runs of scalars before, between and after containers, nested
    /// deeper than the writer keeps in place.
    fn any_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| Value::Number(Number::from(n))),
            "[a-z\"\\\\\n]{0,20}".prop_map(Value::from),
        ];
        leaf.prop_recursive(24, 96, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::vec(("[a-c]{1,2}", inner), 0..5)
                    .prop_map(|members| Value::Object(Object::from_iter(members))),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn values_and_objects_are_written_as_the_recursive_writer_writes_them(
            v in any_value(),
        ) {
            let mut expected = Vec::new();
            reference(&v, &mut expected);
            let mut written = Vec::new();
            write_value(&v, &mut written);
            prop_assert_eq!(&written, &expected);
            if let Value::Object(object) = &v {
                let mut written = Vec::new();
                write_object(object, &mut written);
                prop_assert_eq!(&written, &expected);
            }
        }
    }

    #[test]
    fn objects_of_scalars_and_containers_in_every_place() {
        let members = [
            Value::from("s"),
            Value::Object(Object::new()),
            Value::Array(vec![
                Value::Null,
                Value::Object(Object::new()),
                Value::from(1),
            ]),
        ];
        for len in 0..4usize {
            for pick in 0..3usize.pow(len as u32) {
                let object = Object::from_iter((0..len).map(|i| {
                    let choice = pick / 3usize.pow(i as u32) % 3;
                    (String::from("k"), members[choice].clone())
                }));
                let v = Value::Object(object);
                let mut expected = Vec::new();
                reference(&v, &mut expected);
                assert_eq!(crate::json::to_vec(&v), expected);
            }
        }
    }
}
