//! Bounded previews of values, names and lists for error messages.

use core::fmt::{self, Write};

use crate::json::{Number, Value};

/// Longest text of a string, a name or a number shown in a message, in characters.
pub(super) const PREVIEW_CHARS: usize = 40;

/// A short form of a value: scalars as JSON (long strings and numbers cut with `…`),
/// arrays and objects by their size.
pub(super) struct Preview<'a>(pub(super) &'a Value);

impl fmt::Display for Preview<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Number(n) => write!(f, "{}", PreviewNumber(n)),
            Value::String(s) => write!(f, "{}", Quoted(s, PREVIEW_CHARS)),
            Value::Array(a) => write!(
                f,
                "an array of {} item{}",
                a.len(),
                if a.len() == 1 { "" } else { "s" }
            ),
            Value::Object(o) => write!(
                f,
                "an object with {} member{}",
                o.len(),
                if o.len() == 1 { "" } else { "s" }
            ),
        }
    }
}

pub(super) struct PreviewNumber<'a>(pub(super) &'a Number);

impl fmt::Display for PreviewNumber<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", Truncated(self.0.as_str()))
    }
}

/// Text cut to [`PREVIEW_CHARS`] characters, with `…` when cut.
pub(super) struct Truncated<'a>(pub(super) &'a str);

impl fmt::Display for Truncated<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut chars = self.0.chars();
        for c in chars.by_ref().take(PREVIEW_CHARS) {
            f.write_char(c)?;
        }
        match chars.next() {
            Some(_) => f.write_char('…'),
            None => Ok(()),
        }
    }
}

/// A string as a JSON string literal, cut after `limit` characters (with `…` inside
/// the quotes when cut).
pub(super) struct Quoted<'a>(pub(super) &'a str, pub(super) usize);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_char('"')?;
        for (count, c) in self.0.chars().enumerate() {
            if count == self.1 {
                f.write_char('…')?;
                break;
            }
            match c {
                '"' => f.write_str("\\\"")?,
                '\\' => f.write_str("\\\\")?,
                '\n' => f.write_str("\\n")?,
                '\r' => f.write_str("\\r")?,
                '\t' => f.write_str("\\t")?,
                c if u32::from(c) < 0x20 => write!(f, "\\u{:04x}", u32::from(c))?,
                c => f.write_char(c)?,
            }
        }
        f.write_char('"')
    }
}

/// A list such as `a, b or c`, showing at most `limit` items and then `…`.
pub(super) struct Listed<'a, T> {
    pub(super) items: &'a [T],
    pub(super) last_separator: &'a str,
    pub(super) limit: usize,
}

impl<T: fmt::Display> fmt::Display for Listed<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = self.items.len().min(self.limit);
        for (i, item) in self.items.iter().take(shown).enumerate() {
            if i > 0 {
                let last = i + 1 == self.items.len();
                f.write_str(if last { self.last_separator } else { ", " })?;
            }
            write!(f, "{item}")?;
        }
        if shown < self.items.len() {
            write!(f, ", … ({} in all)", self.items.len())?;
        }
        Ok(())
    }
}
