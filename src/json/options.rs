//! [`ParseOptions`]: the limits and choices every reading of JSON is made under.

/// Limits and choices for parsing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParseOptions {
    /// How deep arrays and objects may nest (`[[1]]` is depth 2); deeper input is a
    /// [`TooDeep`](super::ErrorKind::TooDeep) error. Default 128.
    pub max_depth: usize,
    /// Reject an escaped lone UTF-16 surrogate (`"\ud800"`) in a string value
    /// ([`LoneSurrogate`](super::ErrorKind::LoneSurrogate)) instead of replacing it
    /// with U+FFFD. Default `false`. In member names a lone surrogate is always an
    /// error.
    pub strict_surrogates: bool,
}

impl ParseOptions {
    /// The defaults: `max_depth` 128, lone surrogates in string values replaced.
    pub const DEFAULT: ParseOptions = ParseOptions {
        max_depth: 128,
        strict_surrogates: false,
    };
}

impl Default for ParseOptions {
    fn default() -> ParseOptions {
        ParseOptions::DEFAULT
    }
}
