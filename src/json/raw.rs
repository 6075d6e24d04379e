//! [`RawValue`]: one JSON value left as the text it was read from.

use core::fmt;

use super::error::Sure;
use super::options::ParseOptions;

/// One JSON value as a slice of the text it was read from, checked and not built.
///
/// The text is exactly one value, with no whitespace around it, and was checked to
/// be valid under the [`ParseOptions`] it keeps (UTF-8 included).
///
/// It is kept as bytes: the check was made as the value was passed over, and safe
/// Rust cannot turn checked bytes into a `&str` without checking them again, so
/// only [`as_str`](RawValue::as_str) and `Display` do that, when asked. Reading the
/// value ([`reader`](RawValue::reader), [`parse`](RawValue::parse)) does not need
/// it. It is what a decoder hands on for a
/// value it only passes through, or reads later into typed fields: building a tree is
/// left to whoever needs one ([`parse`](RawValue::parse)), and reading typed fields
/// straight from the text to [`reader`](RawValue::reader).
///
/// ```
/// use dhara_protocol::json::{ParseOptions, RawValue, Value};
///
/// let raw = RawValue::from_text(r#" {"text": "hi"} "#, &ParseOptions::DEFAULT)?;
/// assert_eq!(raw.as_str(), r#"{"text": "hi"}"#);
/// assert_eq!(raw.parse()["text"], Value::from("hi"));
///
/// let mut r = raw.reader();
/// r.begin_object()?;
/// assert_eq!(r.next_member_name()?.as_deref(), Some("text"));
/// # Ok::<(), dhara_protocol::json::Error>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct RawValue<'a> {
    text: &'a [u8],
    options: ParseOptions,
}

impl RawValue<'static> {
    /// `null`, checked under the default options: what a reader of an absent
    /// member or payload is given in its place.
    pub const NULL: RawValue<'static> = RawValue {
        text: b"null",
        options: ParseOptions::DEFAULT,
    };
}

impl<'a> RawValue<'a> {
    /// A value whose text the reader has just checked under `options`.
    pub(super) fn checked(text: &'a [u8], options: ParseOptions) -> RawValue<'a> {
        RawValue { text, options }
    }

    /// The value's JSON text. Its UTF-8 is checked again (in one pass over the
    /// text, which never fails): prefer [`as_bytes`](RawValue::as_bytes) where bytes
    /// will do.
    pub fn as_str(&self) -> &'a str {
        let text = core::str::from_utf8(self.text);
        text.sure()
    }

    /// The value's JSON text, as bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.text
    }

    /// The options the text was checked under.
    pub fn options(&self) -> &ParseOptions {
        &self.options
    }

    /// The first byte of the text, which tells the value's type: `{`, `[`, `"`, `t`,
    /// `f`, `n`, or a digit or `-`.
    pub fn first_byte(&self) -> u8 {
        self.text.first().copied().unwrap_or(b'n')
    }

    /// `true` for `null`.
    pub fn is_null(&self) -> bool {
        self.text == b"null"
    }
}

impl fmt::Debug for RawValue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RawValue")
            .field("text", &self.as_str())
            .field("options", &self.options)
            .finish()
    }
}

impl fmt::Display for RawValue<'_> {
    /// The value's JSON text, as it was read.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{ErrorKind, Reader, Value};

    #[test]
    fn only_one_whole_value_is_taken() {
        let options = ParseOptions::DEFAULT;
        let raw = RawValue::from_text("\t[1, {\"a\": null}]\n", &options);
        assert_eq!(raw.map(|r| r.as_str()), Ok("[1, {\"a\": null}]"));
        let kind = |text| RawValue::from_text(text, &options).map_err(|e| e.kind());
        assert_eq!(kind("1 2"), Err(ErrorKind::TrailingCharacters));
        assert_eq!(kind(""), Err(ErrorKind::UnexpectedEnd));
        assert_eq!(kind("[1,]"), Err(ErrorKind::UnexpectedByte(b']')));
    }

    #[test]
    fn the_options_it_was_checked_under_go_with_it() {
        let strict = ParseOptions {
            strict_surrogates: true,
            ..ParseOptions::DEFAULT
        };
        let lone = r#""\ud800""#;
        assert_eq!(
            RawValue::from_text(lone, &strict).map_err(|e| e.kind()),
            Err(ErrorKind::LoneSurrogate)
        );
        let raw = RawValue::from_text(lone, &ParseOptions::DEFAULT);
        assert_eq!(raw.map(|r| r.parse()), Ok(Value::from("\u{FFFD}")));

        // Depth counts from where the value was read: `[[1]]` inside an array was
        // checked at depth 3, and reads alone under the same limit.
        let shallow = ParseOptions {
            max_depth: 3,
            ..ParseOptions::DEFAULT
        };
        let mut reader = Reader::new(b"[[[1]]]", &shallow);
        assert!(reader.begin_array().is_ok());
        assert_eq!(reader.next_element(), Ok(true));
        let raw = reader.read_raw();
        assert_eq!(raw.as_ref().map(|r| *r.options()), Ok(shallow));
        assert_eq!(raw.map(|r| r.reader().skip_value().is_ok()), Ok(true));
        let mut reader = Reader::new(b"[[[[1]]]]", &shallow);
        assert!(reader.begin_array().is_ok());
        assert_eq!(reader.next_element(), Ok(true));
        assert_eq!(
            reader.read_raw().map_err(|e| e.kind()),
            Err(ErrorKind::TooDeep)
        );
    }

    #[test]
    fn null_stands_for_an_absent_value() {
        assert!(RawValue::NULL.is_null());
        assert_eq!(RawValue::NULL.parse(), Value::Null);
        assert_eq!(RawValue::NULL.first_byte(), b'n');
    }
}
