//! Parse errors: what went wrong ([`ErrorKind`]) and where ([`Error::offset`],
//! [`Error::line`], [`Error::column`]).

use alloc::boxed::Box;
use core::fmt;

/// What made the input not JSON (or not acceptable under the [`ParseOptions`]).
///
/// [`ParseOptions`]: super::ParseOptions
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input ended before the value was complete.
    UnexpectedEnd,
    /// A byte that cannot appear here in JSON text.
    UnexpectedByte(u8),
    /// A UTF-8 byte-order mark at the start of the input. JSON text has none; the
    /// framing layer skips one at the start of a stream, the parser does not.
    ByteOrderMark,
    /// A number that does not follow the JSON number grammar (`01`, `1.`, `-`, `1e`).
    InvalidNumber,
    /// A backslash escape other than `\" \\ \/ \b \f \n \r \t \uXXXX`.
    InvalidEscape,
    /// A `\uXXXX` escape of a UTF-16 surrogate without its other half, in a member
    /// name or under [`strict_surrogates`](super::ParseOptions::strict_surrogates).
    LoneSurrogate,
    /// Bytes that are not UTF-8.
    InvalidUtf8,
    /// A raw control character (below U+0020) inside a string; it must be escaped.
    ControlCharacterInString,
    /// Arrays and objects nested deeper than
    /// [`max_depth`](super::ParseOptions::max_depth).
    TooDeep,
    /// Something other than whitespace after the value.
    TrailingCharacters,
    /// [`Reader::read_string`](super::Reader::read_string) found a value that is not a
    /// string (nothing was consumed).
    ExpectedString,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ErrorKind::UnexpectedEnd => f.write_str("unexpected end of input"),
            ErrorKind::UnexpectedByte(b) if b.is_ascii_graphic() => {
                write!(f, "unexpected character '{}'", b as char)
            }
            ErrorKind::UnexpectedByte(b) => write!(f, "unexpected byte 0x{b:02x}"),
            ErrorKind::ByteOrderMark => f.write_str("byte-order mark before JSON text"),
            ErrorKind::InvalidNumber => f.write_str("invalid number"),
            ErrorKind::InvalidEscape => f.write_str("invalid escape in string"),
            ErrorKind::LoneSurrogate => f.write_str("escaped lone UTF-16 surrogate"),
            ErrorKind::InvalidUtf8 => f.write_str("invalid UTF-8"),
            ErrorKind::ControlCharacterInString => {
                f.write_str("unescaped control character in string")
            }
            ErrorKind::TooDeep => f.write_str("nesting too deep"),
            ErrorKind::TrailingCharacters => f.write_str("trailing characters after the value"),
            ErrorKind::ExpectedString => f.write_str("expected a string"),
        }
    }
}

/// A parse error: its [`kind`](Error::kind) and where it happened.
///
/// The position is a byte offset into the input, plus the 1-based line and column
/// (the column counts characters), which are worked out only when an error is made.
///
/// ```
/// use dhara_protocol::json::{self, ErrorKind};
///
/// let err = json::parse(b"{\"a\": 1,\n \"b\": tru}").unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::UnexpectedByte(b'}'));
/// assert_eq!((err.offset(), err.line(), err.column()), (18, 2, 10));
/// assert_eq!(err.to_string(), "unexpected character '}' at line 2 column 10 (byte 18)");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    // Boxed: a `Result` carrying it stays one word wide on the parser's hot paths,
    // and errors are rare.
    detail: Box<Detail>,
}

#[derive(Clone, PartialEq, Eq)]
struct Detail {
    kind: ErrorKind,
    offset: usize,
    line: usize,
    column: usize,
}

impl Error {
    /// The error for `kind` at byte `offset` of `input`.
    #[cold]
    pub(crate) fn at(input: &[u8], kind: ErrorKind, offset: usize) -> Error {
        let before = input.get(..offset).unwrap_or(input);
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
        // Characters, not bytes: count every byte that does not continue a UTF-8 sequence.
        let column = 1 + before
            .get(line_start..)
            .sure()
            .iter()
            .filter(|&&b| b & 0xC0 != 0x80)
            .count();
        Error {
            detail: Box::new(Detail {
                kind,
                offset,
                line,
                column,
            }),
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> ErrorKind {
        self.detail.kind
    }

    /// The byte offset in the input where it went wrong.
    pub fn offset(&self) -> usize {
        self.detail.offset
    }

    /// The 1-based line of [`offset`](Error::offset).
    pub fn line(&self) -> usize {
        self.detail.line
    }

    /// The 1-based column of [`offset`](Error::offset), in characters.
    pub fn column(&self) -> usize {
        self.detail.column
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = &self.detail;
        write!(
            f,
            "{} at line {} column {} (byte {})",
            d.kind, d.line, d.column, d.offset
        )
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = &self.detail;
        f.debug_struct("Error")
            .field("kind", &d.kind)
            .field("offset", &d.offset)
            .field("line", &d.line)
            .field("column", &d.column)
            .finish()
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {}

/// For a value that is always there, by what the code before has checked (a slice
/// within bounds, text known to be UTF-8): the value, or, should that reasoning
/// ever be wrong, the type's default. A debug build stops at the broken assumption
/// instead of going on quietly; a release build never panics.
pub(super) trait Sure<T> {
    /// The value, or the default where a debug build stops.
    fn sure(self) -> T;
}

impl<T: Default> Sure<T> for Option<T> {
    #[inline(always)]
    #[track_caller]
    fn sure(self) -> T {
        debug_assert!(self.is_some(), "a value that is always there is missing");
        self.unwrap_or_default()
    }
}

impl<T: Default, E> Sure<T> for Result<T, E> {
    #[inline(always)]
    #[track_caller]
    fn sure(self) -> T {
        debug_assert!(self.is_ok(), "a check that always passes failed");
        self.unwrap_or_default()
    }
}
