//! The Dhara methods: names, typed params and results, and content items.
//!
//! Each type is read straight from JSON text ([`json::RawValue`]) or from a
//! [`json::Value`], and written as either, with a [`FieldError`] naming the path of a
//! missing or mistyped field.
//!
//! | method | direction | params | result |
//! |---|---|---|---|
//! | `initialize` | Core → Extension, request | [`InitializeParams`] | [`InitializeResult`] |
//! | `tools/list` | Core → Extension, request | none | [`ToolList`] |
//! | `tools/list` | Extension → Core, notification | [`ToolList`] | - |
//! | `tools/execute` | Core → Extension, request | [`ExecuteParams`] | [`ToolResult`] |
//! | `progress` | Extension → Core, notification | [`Progress`] | - |
//! | `shutdown` | Core → Extension, notification | none | - |
//!
//! # Reading and writing
//!
//! Every type has `from_raw`, which reads it straight from the text of a JSON value
//! with a [`json::Reader`], building no tree except for the members that are JSON
//! values themselves (a tool's `input` and `inputSchema`, a content item of an
//! unknown type): the endpoints read what they receive this way, from
//! [`rpc::decode_view`](crate::rpc::decode_view)'s payloads. `from_value` (and `TryFrom<&Value>`) applies
//! the very same rules to a [`Value`] (it reads the value's text). Out, each type
//! converts into a [`Value`] (`From<_> for Value`), and `write_json` appends the
//! same JSON text as writing that value would, straight into a buffer without
//! building the value (the endpoints send their messages this way).
//!
//! Reading is exact where the protocol is exact and lenient where it is silent:
//!
//! * Members the protocol does not name are ignored. A repeated member counts once,
//!   with its last value (as [`Object::get`](crate::json::Object::get) does).
//! * An optional member that is `null` reads as absent (`None`). The exception is
//!   `progress`'s `id`, where `null` is a valid request id ([`Id::Null`](crate::rpc::Id::Null)); an `id`
//!   that is a number must be an integer.
//! * `isError` absent (or `null`) reads as `false`.
//! * `inputSchema`, when present, must be an object or a boolean (both are JSON
//!   Schemas); its contents are checked only by [`schema::validate`](crate::schema::validate).
//! * A content item must be an object, and every object is accepted. One whose
//!   `type` is `text`, `image` or `file` and whose members fit that type becomes the
//!   typed variant; any other object (an unknown `type`, no `type`, or a known type
//!   whose members do not fit, such as a `text` item without a string `text`, or a
//!   `file` whose `size` is not a non-negative integer) is kept whole as
//!   [`Content::Unknown`], so one item a Core cannot read never costs it the whole
//!   tool result. An `image` with a `data` member is [`Content::ImageData`] (it then
//!   needs a string `mimeType`); one without is [`Content::ImagePath`].
//!
//! A missing or mistyped member is a [`FieldError`] naming its path, such as
//! `tools[2].inputSchema`. Writing emits exactly the members the protocol names, in
//! the order of the published examples, leaving out absent optional members.
//!
//! ```
//! use dhara_protocol::json::{self, json, Value};
//! use dhara_protocol::message::{ExecuteParams, Progress, ToolResult};
//!
//! let params = ExecuteParams::new("read_file", json!({"path": "Cargo.toml"}));
//! assert_eq!(
//!     Value::from(params).to_string(),
//!     r#"{"toolName":"read_file","input":{"path":"Cargo.toml"}}"#
//! );
//!
//! // `isError` absent reads as `false`.
//! let result = ToolResult::from_value(&json::parse(br#"{"content":[{"type":"text","text":"ok"}]}"#)?)?;
//! assert!(!result.is_error);
//!
//! // Progress names its request with the optional `id`.
//! let progress = Progress::from_value(&json!({"message": "halfway", "id": 7}))?;
//! assert_eq!(progress.id, Some(7u64.into()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use alloc::vec::Vec;

use crate::json::{self, RawValue, Reader, Value};

mod execute;
mod fields;
mod progress;
#[cfg(test)]
mod tests;
mod text;
mod tools;

pub use execute::{Content, ExecuteParams, ToolResult};
pub use fields::FieldError;
pub use progress::Progress;
pub use text::Text;
pub use tools::{InitializeParams, InitializeResult, RejectedTool, Tool, ToolList};

use fields::{VALUE_TEXT, read_whole};

/// The protocol version the Core sends in `initialize`.
pub const PROTOCOL_VERSION: &str = "0.1.0";

/// Method names, as they appear on the wire.
pub mod method {
    /// `initialize`: the Core's first request.
    pub const INITIALIZE: &str = "initialize";
    /// `tools/list`: a request from the Core, or a notification from the extension.
    pub const TOOLS_LIST: &str = "tools/list";
    /// `tools/execute`: run one tool.
    pub const TOOLS_EXECUTE: &str = "tools/execute";
    /// `progress`: a notification from the extension while a call runs.
    pub const PROGRESS: &str = "progress";
    /// `shutdown`: a notification from the Core; the extension exits with code 0.
    pub const SHUTDOWN: &str = "shutdown";
    /// Every method of the protocol, the most frequent first: what the endpoints tell
    /// the decoder to expect (`rpc::DecodeOptions::expecting`), so a method
    /// comes out as one of these constants, without a check of its text.
    pub const ALL: &[&str] = &[PROGRESS, TOOLS_EXECUTE, INITIALIZE, TOOLS_LIST, SHUTDOWN];
}

/// Error code for a request other than `initialize` received before `initialize`.
pub const NOT_INITIALIZED: i64 = -32002;

/// The ways in and out of every type, given its `read(&mut Reader)`, `write(self)`
/// and `encode(&self, out)`: in, `from_raw` and `from_value` (with
/// `TryFrom<&Value>`); out, `write_json` and `From<_> for Value`. The endpoints read
/// a payload in place, inside its line, with the crate's own `read_from`.
macro_rules! value_conversions {
    ($type:ident, $what:literal) => {
        impl $type {
            #[doc = concat!("Reads ", $what, " straight from the text of a JSON value,")]
            /// building no tree but for the members that are JSON values themselves.
            pub fn from_raw(raw: RawValue<'_>) -> Result<$type, FieldError> {
                read_whole(raw.reader(), $type::read)
            }

            #[doc = concat!("Reads ", $what, " from a JSON value: the rules of")]
            /// [`from_raw`](Self::from_raw), applied to the value's text.
            pub fn from_value(value: &Value) -> Result<$type, FieldError> {
                let text = json::to_vec(value);
                read_whole(Reader::new(&text, &VALUE_TEXT), $type::read)
            }

            #[doc = concat!("Appends ", $what, " to `out` as compact JSON: the text")]
            /// [`json::write_value`] writes for the [`Value`] it converts into, without
            /// building the value.
            pub fn write_json(&self, out: &mut Vec<u8>) {
                self.encode(out)
            }

            /// Reads the value at `reader`, which moves past it whether it fits or
            /// not: [`from_raw`](Self::from_raw) for a payload inside its line. The
            /// outer `Err` is text that is not JSON, the inner one a member that does
            /// not fit.
            #[allow(dead_code)] // the endpoints read only some types in place
            pub(crate) fn read_from(
                reader: &mut Reader<'_>,
            ) -> Result<Result<$type, FieldError>, json::Error> {
                $type::read(reader)
            }
        }

        impl TryFrom<&Value> for $type {
            type Error = FieldError;
            fn try_from(value: &Value) -> Result<$type, FieldError> {
                $type::from_value(value)
            }
        }

        impl From<$type> for Value {
            fn from(v: $type) -> Value {
                v.write()
            }
        }
    };
}

value_conversions!(InitializeParams, "`initialize` params");
value_conversions!(InitializeResult, "an `initialize` result");
value_conversions!(Tool, "a tool descriptor");
value_conversions!(ToolList, "a tool list");
value_conversions!(ExecuteParams, "`tools/execute` params");
value_conversions!(ToolResult, "a `tools/execute` result");
value_conversions!(Content, "a content item");
value_conversions!(Progress, "`progress` params");
