//! Whole texts to [`Value`] trees: [`parse`], [`parse_with`], and [`Parser`], which
//! keeps its scratch space from one text to the next.

use core::fmt;

use super::error::{Error, Sure};
use super::options::ParseOptions;
use super::raw::RawValue;
use super::read::Reader;
use super::sink::Tree;
use super::value::Value;

/// Parses one JSON text with the default [`ParseOptions`].
///
/// The input must be exactly one value, with optional whitespace around it. Each
/// call starts with fresh scratch space; [`Parser`] keeps it for the next text.
///
/// ```
/// use dhara_protocol::json;
///
/// let v = json::parse(br#" {"id": 7, "tags": ["a", "b"]} "#)?;
/// assert_eq!(v["id"].as_u64(), Some(7));
/// assert_eq!(v["tags"][1].as_str(), Some("b"));
/// # Ok::<(), json::Error>(())
/// ```
pub fn parse(input: &[u8]) -> Result<Value, Error> {
    parse_with(input, &ParseOptions::DEFAULT)
}

/// Parses one JSON text with the given options.
///
/// ```
/// use dhara_protocol::json::{self, ErrorKind, ParseOptions};
///
/// let strict = ParseOptions { strict_surrogates: true, ..ParseOptions::DEFAULT };
/// assert_eq!(json::parse(br#""\ud800""#)?.as_str(), Some("\u{FFFD}"));
/// let err = json::parse_with(br#""\ud800""#, &strict).unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::LoneSurrogate);
/// # Ok::<(), json::Error>(())
/// ```
pub fn parse_with(input: &[u8], options: &ParseOptions) -> Result<Value, Error> {
    let mut reader = Reader::new(input, options);
    let value = reader.read_value()?;
    reader.finish()?;
    Ok(value)
}

/// A parser for many texts, one after another, that keeps its scratch space.
///
/// Building a tree puts finished members and elements on scratch stacks until their
/// container closes, and decodes strings with escapes into a scratch text. A new
/// parser allocates room on its stacks for the members and elements of a small
/// value at once; what grows past that is allocated as it is needed, and a `Parser`
/// keeps it all for the next text (up to a bound), so that parsing many values
/// allocates little more than the values themselves. [`parse`] and
/// [`Reader::read_value`] start from fresh scratch space each time, its first few
/// items kept in place, without allocating.
///
/// ```
/// use dhara_protocol::json::{ParseOptions, Parser, Reader, Value};
///
/// let mut parser = Parser::new();
/// for line in [&br#"{"n": 1}"#[..], br#"{"n": [2, 3]}"#] {
///     let v = parser.parse(line)?;
///     assert!(v["n"] != Value::Null);
/// }
///
/// // One value inside a longer text, with the parser's scratch space.
/// let mut r = Reader::new(br#"[{"a": true}, 2]"#, parser.options());
/// r.begin_array()?;
/// assert!(r.next_element()?);
/// assert_eq!(parser.read(&mut r)?["a"], Value::Bool(true));
///
/// let strict = Parser::with_options(ParseOptions { max_depth: 2, ..ParseOptions::DEFAULT });
/// assert!(strict.options().max_depth == 2);
/// # Ok::<(), dhara_protocol::json::Error>(())
/// ```
pub struct Parser {
    options: ParseOptions,
    tree: Tree<0>,
}

/// How many members, elements and open containers a new [`Parser`] makes room for.
const ROOM: usize = 8;

impl Parser {
    /// A parser with the default [`ParseOptions`].
    pub fn new() -> Parser {
        Parser::with_options(ParseOptions::DEFAULT)
    }

    /// A parser with the given options.
    pub fn with_options(options: ParseOptions) -> Parser {
        Parser {
            options,
            tree: Tree::with_room(ROOM),
        }
    }

    /// The options it parses under.
    pub fn options(&self) -> &ParseOptions {
        &self.options
    }

    /// Parses one JSON text, as [`parse_with`] does with this parser's options.
    pub fn parse(&mut self, input: &[u8]) -> Result<Value, Error> {
        let mut reader = Reader::new(input, &self.options);
        let value = reader.read_into(&mut self.tree)?;
        reader.finish()?;
        Ok(value)
    }

    /// Reads the value at `reader`, as [`Reader::read_value`] does (under the
    /// reader's options), with this parser's scratch space.
    #[inline]
    pub fn read(&mut self, reader: &mut Reader<'_>) -> Result<Value, Error> {
        reader.read_into(&mut self.tree)
    }

    /// The value of `raw`, as [`RawValue::parse`] builds it (under the options it
    /// was checked with), with this parser's scratch space.
    ///
    /// ```
    /// use dhara_protocol::json::{ParseOptions, Parser, RawValue, Value};
    ///
    /// let raw = RawValue::from_text(r#"{"a": [1, 2]}"#, &ParseOptions::DEFAULT)?;
    /// let mut parser = Parser::new();
    /// assert_eq!(parser.parse_raw(&raw), raw.parse());
    /// # Ok::<(), dhara_protocol::json::Error>(())
    /// ```
    pub fn parse_raw(&mut self, raw: &RawValue<'_>) -> Value {
        // The text was checked under these very options, so reading it cannot fail.
        self.read(&mut raw.reader()).sure()
    }
}

impl Default for Parser {
    fn default() -> Parser {
        Parser::new()
    }
}

impl fmt::Debug for Parser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Parser")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}
