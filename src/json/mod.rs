//! Strict RFC 8259 JSON, written for this protocol.
//!
//! * [`parse`] / [`parse_with`] turn bytes into a [`Value`], and a [`Parser`] does so
//!   for many texts with its scratch space kept between them; [`to_vec`] and
//!   [`write_value`] write compact JSON; `Display` for [`Value`] writes the same text.
//! * [`Reader`] walks a text a member or an element at a time, reading, or only
//!   checking ([`Reader::skip_value`]), the values it wants. It shares its grammar
//!   with [`parse`]. [`Reader::read_raw`] checks a value and keeps it as a
//!   [`RawValue`], a slice of the text, for whoever reads it later.
//! * Numbers keep their exact text ([`Number`]), so parse → write is byte-identical.
//! * Objects keep member order and duplicate names ([`Object`]); lookup by name
//!   returns the last member with that name.
//! * Nesting is bounded ([`ParseOptions::max_depth`]) and the parser never recurses
//!   on the native stack, whatever the depth.
//! * [`json!`] builds a [`Value`] from JSON-like syntax.
//! * Input must be UTF-8 (no byte-order mark). An escaped lone UTF-16 surrogate in a
//!   string value becomes U+FFFD, or an error with
//!   [`ParseOptions::strict_surrogates`]; in a member name it is always an error.
//!
//! ```
//! use dhara_protocol::json::{self, Value};
//!
//! let v = json::parse(br#"{"id": 12345678901234567890123, "ok": true}"#)?;
//! assert_eq!(v["ok"], Value::Bool(true));
//! assert_eq!(v.to_string(), r#"{"id":12345678901234567890123,"ok":true}"#);
//! # Ok::<(), json::Error>(())
//! ```
//!
//! Inside, each module uses only modules listed before it: `error`, `options`,
//! `scan`, `string`, `value`, `raw`, `sink`, `read`, `parse`, `write`.
//!
//! # How it is fast
//!
//! Safe Rust throughout; the work per byte is kept small and allocation to what the
//! result needs.
//!
//! * The input is checked to be UTF-8 once, from its first string to its end (the
//!   grammar before that is ASCII); string text is then sliced from that `&str`,
//!   never checked again.
//! * Strings are scanned for `"`, `\` and control bytes eight bytes at a time with
//!   bit tricks on a `u64`, and long runs 64 bytes at a time in a loop the compiler
//!   turns into vector compares. A string without escapes is copied in one piece;
//!   one with escapes gets its capacity once, from where its closing quote is, and
//!   is decoded with runs copied a word at a time.
//! * Strings and member names of up to 22 bytes are stored inline in the value
//!   ([`Str`]), so a small message allocates only for its containers.
//! * Numbers are checked against the grammar and kept as text, inline when short
//!   ([`Number`]): no allocation and no conversion until asked.
//! * Finished elements and members wait on scratch stacks and move into a `Vec` of
//!   exactly their number when their container closes: one allocation per array or
//!   object. The first few items of each stack live in place, so a small value needs
//!   no scratch allocation; a [`Parser`] keeps what its stacks grew to for the next
//!   text. There is no hidden state: `std` and `no_std` builds allocate alike.
//! * [`Reader::skip_value`], for values that are only passed through, walks the same
//!   grammar with a sink that builds nothing: containers as bits, string runs a word
//!   at a time, escapes and multi-byte characters checked where they stand, nothing
//!   decoded. Only a string it turns down is read again, to tell what is wrong.
//! * The writer copies runs without escapes whole (short ones a word at a time),
//!   writes escapes from a table, and keeps its stack of open containers in place.
//!
//! # Implementation-defined cases
//!
//! RFC 8259 leaves some inputs to the parser. These are the choices, one row per
//! `i_` file of JSONTestSuite (`tests/json/suite.rs` reads this table and checks it
//! against the files). "Default" is [`ParseOptions::DEFAULT`]; "strict" sets
//! [`strict_surrogates`](ParseOptions::strict_surrogates).
//!
//! | file | default | strict | why |
//! |---|---|---|---|
//! | `i_number_double_huge_neg_exp.json` | accepted | accepted | numbers keep their text; `as_f64` gives 0 |
//! | `i_number_huge_exp.json` | accepted | accepted | numbers keep their text; `as_f64` gives infinity |
//! | `i_number_neg_int_huge_exp.json` | accepted | accepted | numbers keep their text; `as_f64` gives -infinity |
//! | `i_number_pos_double_huge_exp.json` | accepted | accepted | numbers keep their text; `as_f64` gives infinity |
//! | `i_number_real_neg_overflow.json` | accepted | accepted | numbers keep their text; `as_f64` gives -infinity |
//! | `i_number_real_pos_overflow.json` | accepted | accepted | numbers keep their text; `as_f64` gives infinity |
//! | `i_number_real_underflow.json` | accepted | accepted | numbers keep their text; `as_f64` gives 0 |
//! | `i_number_too_big_neg_int.json` | accepted | accepted | numbers keep their text; `as_i64` gives `None` |
//! | `i_number_too_big_pos_int.json` | accepted | accepted | numbers keep their text; `as_u64` gives `None` |
//! | `i_number_very_big_negative_int.json` | accepted | accepted | numbers keep their text; `as_i64` gives `None` |
//! | `i_object_key_lone_2nd_surrogate.json` | rejected: LoneSurrogate | rejected: LoneSurrogate | a lone surrogate in a member name is always an error |
//! | `i_string_1st_surrogate_but_2nd_missing.json` | accepted | rejected: LoneSurrogate | lone surrogate in a value: U+FFFD |
//! | `i_string_1st_valid_surrogate_2nd_invalid.json` | accepted | rejected: LoneSurrogate | high surrogate followed by a non-surrogate: U+FFFD, then U+1234 |
//! | `i_string_UTF-16LE_with_BOM.json` | rejected: UnexpectedByte | rejected: UnexpectedByte | JSON text is UTF-8; the UTF-16 byte-order mark `FF FE` starts no value |
//! | `i_string_UTF-8_invalid_sequence.json` | rejected: InvalidUtf8 | rejected: InvalidUtf8 | raw bytes must be UTF-8 |
//! | `i_string_UTF8_surrogate_U+D800.json` | rejected: InvalidUtf8 | rejected: InvalidUtf8 | a UTF-8-encoded surrogate is not UTF-8 |
//! | `i_string_incomplete_surrogate_and_escape_valid.json` | accepted | rejected: LoneSurrogate | lone surrogate in a value: U+FFFD, then the newline |
//! | `i_string_incomplete_surrogate_pair.json` | accepted | rejected: LoneSurrogate | lone low surrogate in a value: U+FFFD, then `a` |
//! | `i_string_incomplete_surrogates_escape_valid.json` | accepted | rejected: LoneSurrogate | two lone surrogates in a value: two U+FFFD |
//! | `i_string_invalid_lonely_surrogate.json` | accepted | rejected: LoneSurrogate | lone surrogate in a value: U+FFFD |
//! | `i_string_invalid_surrogate.json` | accepted | rejected: LoneSurrogate | lone surrogate in a value: U+FFFD, then `abc` |
//! | `i_string_invalid_utf-8.json` | rejected: InvalidUtf8 | rejected: InvalidUtf8 | raw bytes must be UTF-8 |
//! | `i_string_inverted_surrogates_U+1D11E.json` | accepted | rejected: LoneSurrogate | low then high surrogate: two U+FFFD |
//! | `i_string_iso_latin_1.json` | rejected: InvalidUtf8 | rejected: InvalidUtf8 | raw bytes must be UTF-8 |
//! | `i_string_lone_second_surrogate.json` | accepted | rejected: LoneSurrogate | lone low surrogate in a value: U+FFFD |
//! | `i_string_lone_utf8_continuation_byte.json` | rejected: InvalidUtf8 | rejected: InvalidUtf8 | raw bytes must be UTF-8 |
//! | `i_string_not_in_unicode_range.json` | rejected: InvalidUtf8 | rejected: InvalidUtf8 | beyond U+10FFFF is not UTF-8 |
//! | `i_string_overlong_sequence_2_bytes.json` | rejected: InvalidUtf8 | rejected: InvalidUtf8 | overlong encodings are not UTF-8 |
//! | `i_string_overlong_sequence_6_bytes.json` | rejected: InvalidUtf8 | rejected: InvalidUtf8 | overlong encodings are not UTF-8 |
//! | `i_string_overlong_sequence_6_bytes_null.json` | rejected: InvalidUtf8 | rejected: InvalidUtf8 | overlong encodings are not UTF-8 |
//! | `i_string_truncated-utf-8.json` | rejected: InvalidUtf8 | rejected: InvalidUtf8 | raw bytes must be UTF-8 |
//! | `i_string_utf16BE_no_BOM.json` | rejected: UnexpectedByte | rejected: UnexpectedByte | JSON text is UTF-8; a NUL byte starts no value |
//! | `i_string_utf16LE_no_BOM.json` | rejected: UnexpectedByte | rejected: UnexpectedByte | JSON text is UTF-8; a NUL byte starts no value |
//! | `i_structure_500_nested_arrays.json` | rejected: TooDeep | rejected: TooDeep | deeper than the default `max_depth` of 128 |
//! | `i_structure_UTF-8_BOM_empty_object.json` | rejected: ByteOrderMark | rejected: ByteOrderMark | the parser takes no byte-order mark; framing skips one at the start of a stream |

mod error;
mod macros;
mod members;
mod options;
mod parse;
mod raw;
mod read;
pub(crate) mod scan;
mod sink;
mod string;
mod value;
mod write;

pub use error::{Error, ErrorKind};
// Inlined: the macro itself is hidden at the crate root (see `macros.rs`).
#[doc(inline)]
pub use macros::json;
pub use members::Name;
pub use options::ParseOptions;
pub use parse::{Parser, parse, parse_with};
pub use raw::RawValue;
pub use read::Reader;
pub use string::Str;
pub use value::{Number, Object, Value};
pub use write::{to_vec, write_array, write_object, write_str, write_string, write_value};
