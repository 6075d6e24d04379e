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
//! [`rpc::decode_view`]'s payloads. `from_value` applies the very same rules to a
//! [`Value`] (it reads the value's text). Then `to_value` and `into_value`, and the
//! matching `TryFrom<Value>` and `From<_> for Value`; and `write_json`, which appends
//! the same JSON text as writing `to_value` would, straight into a buffer without
//! building the value (the endpoints send their messages this way).
//!
//! Reading is exact where the protocol is exact and lenient where it is silent:
//!
//! * Members the protocol does not name are ignored. A repeated member counts once,
//!   with its last value (as [`Object::get`] does).
//! * An optional member that is `null` reads as absent (`None`). The exception is
//!   `progress`'s `id`, where `null` is a valid request id ([`Id::Null`]); an `id`
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
//! use dhara_protocol::json::{self, json};
//! use dhara_protocol::message::{ExecuteParams, Progress, ToolResult};
//!
//! let params = ExecuteParams::new("read_file", json!({"path": "Cargo.toml"}));
//! assert_eq!(
//!     params.to_value().to_string(),
//!     r#"{"toolName":"read_file","input":{"path":"Cargo.toml"}}"#
//! );
//!
//! // `isError` absent reads as `false`.
//! let result = ToolResult::from_value(json::parse(br#"{"content":[{"type":"text","text":"ok"}]}"#)?)?;
//! assert!(!result.is_error);
//!
//! // Progress names its request with the optional `id`.
//! let progress = Progress::from_value(json!({"message": "halfway", "id": 7}))?;
//! assert_eq!(progress.id, Some(7u64.into()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::json::{self, Object, ParseOptions, RawValue, Reader, Str, Value};
use crate::rpc::{self, Id};
use crate::schema::{PreparedSchema, SchemaError};

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
    /// the decoder to expect (`rpc::IncomingView::decode_expecting`), so a method
    /// comes out as one of these constants, without a check of its text.
    pub const ALL: &[&str] = &[PROGRESS, TOOLS_EXECUTE, INITIALIZE, TOOLS_LIST, SHUTDOWN];
}

/// Error code for a request other than `initialize` received before `initialize`.
pub const NOT_INITIALIZED: i64 = -32002;

/// Params of `initialize`.
#[derive(Clone, Debug, PartialEq)]
pub struct InitializeParams {
    /// The protocol version, [`PROTOCOL_VERSION`].
    pub version: String,
    /// The working directory of the session.
    pub cwd: String,
}

/// Result of `initialize`.
#[derive(Clone, Debug, PartialEq)]
pub struct InitializeResult {
    /// The extension's name.
    pub name: String,
    /// The extension's version.
    pub version: String,
    /// The tools it offers.
    pub tools: Vec<Tool>,
}

/// One tool an extension offers.
#[derive(Clone, Debug, PartialEq)]
pub struct Tool {
    /// The name used in `tools/execute`.
    pub name: String,
    /// What the tool does, for the LLM (the protocol expects one; `None` if absent).
    pub description: Option<String>,
    /// A JSON Schema for the tool's input (the protocol expects an object schema;
    /// `None` if absent).
    pub input_schema: Option<Value>,
}

/// Result of the `tools/list` request, and params of the `tools/list` notification.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolList {
    /// The tools.
    pub tools: Vec<Tool>,
}

/// Params of `tools/execute`.
#[derive(Clone, Debug, PartialEq)]
pub struct ExecuteParams {
    /// The tool to run (`toolName`): a name, kept inline when it is short.
    pub tool_name: Str,
    /// Its input (`input`).
    pub input: Value,
}

/// Result of `tools/execute`.
///
/// `is_error: true` is a tool-level failure the LLM should see; a JSON-RPC error is a
/// protocol-level failure.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolResult {
    /// The content items.
    pub content: Vec<Content>,
    /// `isError`: a tool-level failure. Absent or `null` on the wire reads as `false`;
    /// always written.
    pub is_error: bool,
}

/// One content item of a [`ToolResult`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Content {
    /// `{"type": "text", "text": ...}`
    Text {
        /// The text (kept inline when short, as `"ok"` is).
        text: Str,
    },
    /// `{"type": "image", "mimeType": ..., "data": ...}`: base64 image data.
    ImageData {
        /// The MIME type, such as `image/png`.
        mime_type: String,
        /// The base64-encoded bytes.
        data: String,
    },
    /// `{"type": "image", "path": ...}`: an image file reference.
    ImagePath {
        /// The file path.
        path: String,
        /// The MIME type, if given.
        mime_type: Option<String>,
    },
    /// `{"type": "file", "path": ..., "size": ..., "mimeType": ...}`
    File {
        /// The file path.
        path: String,
        /// Its size in bytes, if given.
        size: Option<u64>,
        /// The MIME type, if given.
        mime_type: Option<String>,
    },
    /// A content item of a type this crate does not know, kept whole.
    Unknown(Object),
}

/// Params of a `progress` notification.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// The progress text.
    pub message: String,
    /// The request it belongs to, if the extension said (`id` member).
    pub id: Option<Id>,
}

/// A member of a Dhara message that is missing or has the wrong type.
///
/// The [`path`](FieldError::path) names the member from the value that was read:
/// member names joined by `.`, array elements as `[index]`, such as
/// `tools[2].inputSchema`. It is empty when the value itself has the wrong type.
///
/// ```
/// use dhara_protocol::json::{Object, Value};
/// use dhara_protocol::message::ExecuteParams;
///
/// let params = Value::Object(Object::from_iter([("input", Value::Object(Object::new()))]));
/// let err = ExecuteParams::from_value(params).unwrap_err();
/// assert_eq!(err.path(), "toolName");
/// assert_eq!(err.to_string(), "toolName: missing, expected a string");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    path: String,
    expected: &'static str,
    found: Option<&'static str>,
}

impl FieldError {
    fn missing(expected: &'static str) -> FieldError {
        FieldError {
            path: String::new(),
            expected,
            found: None,
        }
    }

    /// Text that is not JSON where a value was expected. A checked
    /// [`RawValue`] never gives this.
    fn not_json(_: json::Error) -> FieldError {
        FieldError {
            path: String::new(),
            expected: "JSON text",
            found: Some("text that is not JSON"),
        }
    }

    /// The same error, seen from the object that holds member `name`.
    fn in_member(mut self, name: &str) -> FieldError {
        let separator = if self.path.is_empty() || self.path.starts_with('[') {
            ""
        } else {
            "."
        };
        self.path.insert_str(0, separator);
        self.path.insert_str(0, name);
        self
    }

    /// The same error, seen from the array that holds element `index`.
    fn in_element(mut self, index: usize) -> FieldError {
        use core::fmt::Write;
        let mut prefix = String::new();
        let _ = write!(prefix, "[{index}]");
        if !(self.path.is_empty() || self.path.starts_with('[')) {
            prefix.push('.');
        }
        self.path.insert_str(0, &prefix);
        self
    }

    /// The path of the member, such as `tools[2].inputSchema` (empty for the value
    /// itself).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// What the protocol expects there, such as `a string`.
    pub fn expected(&self) -> &str {
        self.expected
    }

    /// What was found: `missing`, or the JSON type of the value found there
    /// (as [`Value::type_name`] names it).
    pub fn found(&self) -> &str {
        self.found.unwrap_or("missing")
    }

    /// `true` when the member is absent (rather than of the wrong type).
    pub fn is_missing(&self) -> bool {
        self.found.is_none()
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        match self.found {
            None => write!(f, "missing, expected {}", self.expected),
            Some(found) => write!(f, "expected {}, found {}", self.expected, found),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for FieldError {}

const A_STRING: &str = "a string";
const AN_OBJECT: &str = "an object";
const AN_ARRAY: &str = "an array";
const A_BOOLEAN: &str = "a boolean";
const A_SCHEMA: &str = "a JSON Schema (an object or a boolean)";
const AN_ID: &str = "a string, an integer or null";

// ---- Reading straight from JSON text ------------------------------------------------
//
// Every type is read with a `json::Reader` from the text of its value, building no tree
// except for the members that are JSON values themselves (a tool's `input` and
// `inputSchema`, an unknown content item). A reading function consumes the whole value
// it is at, whether it fits or not; the outer `Err` is text that is not JSON (which a
// checked `RawValue` never is), the inner one a member that does not fit.

/// What reading one value gives.
type Read<T> = Result<Result<T, FieldError>, json::Error>;

/// Reads a value spelled as the protocol's writers spell it with `usual`, which
/// compares the fixed text in place and leaves the reader as it was (`None`) at any
/// other spelling; `any` then reads it the general way. The two are the same reading
/// for that one spelling, so they agree wherever `usual` answers.
#[inline(always)]
fn read_usual_or_any<T>(
    r: &mut Reader<'_>,
    usual: fn(&mut Reader<'_>) -> Option<T>,
    any: fn(&mut Reader<'_>) -> Read<T>,
) -> Read<T> {
    match usual(r) {
        Some(value) => Ok(Ok(value)),
        None => any(r),
    }
}

/// The JSON type of the value at the reader, as [`Value::type_name`] names it.
fn type_at(r: &mut Reader<'_>) -> &'static str {
    match r.peek() {
        Some(b'"') => "string",
        Some(b'{') => "object",
        Some(b'[') => "array",
        Some(b't' | b'f') => "boolean",
        Some(b'n') => "null",
        _ => "number",
    }
}

/// Skips the value at the reader, which is not what `expected` says.
fn mistyped<T>(r: &mut Reader<'_>, expected: &'static str) -> Read<T> {
    let found = type_at(r);
    r.skip_value()?;
    Ok(Err(FieldError {
        path: String::new(),
        expected,
        found: Some(found),
    }))
}

/// Reads a string as a [`Str`] (inline when short: a name, a short text).
fn read_str(r: &mut Reader<'_>) -> Read<Str> {
    match r.peek() {
        Some(b'"') => Ok(Ok(str_value(r)?)),
        _ => mistyped(r, A_STRING),
    }
}

/// The string value at the reader as a [`Str`]: plain ASCII kept as a window of the
/// line, anything else decoded. A JSON error for a value that is not a string.
#[inline(always)]
fn str_value(r: &mut Reader<'_>) -> Result<Str, json::Error> {
    match r.plain_text() {
        Some(text) => Ok(text),
        None => Ok(Str::from(r.read_str()?.0)),
    }
}

/// Reads a string.
fn read_string(r: &mut Reader<'_>) -> Read<String> {
    match r.peek() {
        Some(b'"') => match r.plain_str() {
            Some(ascii) => Ok(Ok(ascii_text(ascii).into_owned())),
            None => Ok(Ok(r.read_string()?.0)),
        },
        _ => mistyped(r, A_STRING),
    }
}

/// Reads a string or `null`.
fn read_optional_string(r: &mut Reader<'_>) -> Read<Option<String>> {
    match r.peek() {
        Some(b'n') => read_literal(r).map(|_| Ok(None)),
        _ => Ok(read_string(r)?.map(Some)),
    }
}

/// Reads `true`, `false` or `null`.
fn read_flag(r: &mut Reader<'_>) -> Read<Option<bool>> {
    match r.peek() {
        Some(b'n') => read_literal(r).map(|_| Ok(None)),
        Some(b't' | b'f') => Ok(Ok(Some(read_literal(r)? == b"true"))),
        _ => mistyped(r, A_BOOLEAN),
    }
}

/// Reads the literal at the reader (`true`, `false` or `null`): compared in place
/// when spelled out whole, else checked by the reader.
fn read_literal<'a>(r: &mut Reader<'a>) -> Result<&'a [u8], json::Error> {
    for literal in [&b"true"[..], b"false", b"null"] {
        if r.skip_exact(literal) {
            return Ok(literal);
        }
    }
    Ok(r.read_raw()?.as_bytes())
}

/// Reads a request id: a string, an integer or `null`.
fn read_id(r: &mut Reader<'_>) -> Read<Option<Id>> {
    let id = match r.peek() {
        Some(b'n') => {
            r.skip_value()?;
            Id::Null
        }
        Some(b'"') => Id::String(r.read_string()?.0),
        Some(b'-' | b'0'..=b'9') => match rpc::read_number(r)? {
            n if n.is_integer() => Id::Number(n),
            _ => {
                return Ok(Err(FieldError {
                    path: String::new(),
                    expected: AN_ID,
                    found: Some("number"),
                }));
            }
        },
        _ => return mistyped(r, AN_ID),
    };
    Ok(Ok(Some(id)))
}

/// Reads an array, each element with `read`; the first element that does not fit
/// is the error.
fn read_list<'a, T>(r: &mut Reader<'a>, read: fn(&mut Reader<'a>) -> Read<T>) -> Read<Vec<T>> {
    if r.peek() != Some(b'[') {
        return mistyped(r, AN_ARRAY);
    }
    r.begin_array()?;
    let mut out = Ok(Vec::new());
    let mut index = 0;
    while r.next_element()? {
        match (read(r)?, &mut out) {
            // Most lists (a result's content) hold one item: room for just that one.
            (Ok(item), Ok(items)) if items.capacity() == 0 => *items = alloc::vec![item],
            (Ok(item), Ok(items)) => items.push(item),
            (Err(e), Ok(_)) => out = Err(e.in_element(index)),
            (_, Err(_)) => {}
        }
        index += 1;
    }
    Ok(out)
}

/// Reads an object, giving each member's name (as bytes) to `member`, which reads
/// its value and returns `true`, or returns `false` to have it skipped. Names
/// without escapes are matched where they lie in the text.
fn read_members<'a>(
    r: &mut Reader<'a>,
    mut member: impl FnMut(&[u8], &mut Reader<'a>) -> Result<bool, json::Error>,
) -> Read<()> {
    if r.peek() != Some(b'{') {
        return mistyped(r, AN_OBJECT);
    }
    r.begin_object()?;
    while let Some(name) = r.next_member_bytes()? {
        if !member(&name, r)? {
            r.skip_value()?;
        }
    }
    Ok(Ok(()))
}

/// A member read as it came, the last one when repeated (as [`Object::get`] does).
struct Slot<T>(Option<Result<T, FieldError>>);

impl<T> Slot<T> {
    fn new() -> Slot<T> {
        Slot(None)
    }

    /// Reads (again) the member's value.
    fn read<'a>(
        &mut self,
        r: &mut Reader<'a>,
        read: fn(&mut Reader<'a>) -> Read<T>,
    ) -> Result<bool, json::Error> {
        self.0 = Some(read(r)?);
        Ok(true)
    }

    /// The member `name`, which must be present.
    fn required(self, name: &str, expected: &'static str) -> Result<T, FieldError> {
        match self.0 {
            Some(read) => read.map_err(|e| e.in_member(name)),
            None => Err(FieldError::missing(expected).in_member(name)),
        }
    }
}

impl<T> Slot<Option<T>> {
    /// The member `name`, which may be absent.
    fn optional(self, name: &str) -> Result<Option<T>, FieldError> {
        match self.0 {
            Some(read) => read.map_err(|e| e.in_member(name)),
            None => Ok(None),
        }
    }
}

/// Options for reading the text written from a [`Value`]: any depth (the value was
/// built, not read), lone surrogates as the writer escapes them.
const VALUE_TEXT: ParseOptions = ParseOptions {
    max_depth: usize::MAX,
    strict_surrogates: false,
};

/// Reads a type from a reader at the start of its value, to the end of the text.
fn read_whole<'a, T>(
    mut r: Reader<'a>,
    read: fn(&mut Reader<'a>) -> Read<T>,
) -> Result<T, FieldError> {
    match read(&mut r).and_then(|field| r.finish().map(|()| field)) {
        Ok(field) => field,
        Err(error) => Err(FieldError::not_json(error)),
    }
}

/// Builds an object from members, leaving out the absent ones.
fn object<const N: usize>(members: [(&str, Option<Value>); N]) -> Value {
    let mut object = Object::with_capacity(N);
    for (name, value) in members {
        if let Some(value) = value {
            object.push(name, value);
        }
    }
    Value::Object(object)
}

/// Writes one JSON object member by member: `write_json`'s counterpart of [`object`].
struct ObjectWriter<'a> {
    out: &'a mut Vec<u8>,
    empty: bool,
}

impl<'a> ObjectWriter<'a> {
    fn begin(out: &'a mut Vec<u8>) -> ObjectWriter<'a> {
        out.push(b'{');
        ObjectWriter { out, empty: true }
    }

    /// Writes the member's name, one of the protocol's own, which need no escape;
    /// the caller writes its value into the buffer returned.
    fn member(&mut self, name: &'static str) -> &mut Vec<u8> {
        let comma: &[u8] = if self.empty { b"\"" } else { b",\"" };
        self.empty = false;
        self.out.extend_from_slice(comma);
        self.out.extend_from_slice(name.as_bytes());
        self.out.extend_from_slice(b"\":");
        self.out
    }

    /// Writes members whose names and values never change, given as their text
    /// (`"type":"text"`), in one piece.
    fn fixed(&mut self, members: &'static str) {
        if !self.empty {
            self.out.push(b',');
        }
        self.empty = false;
        self.out.extend_from_slice(members.as_bytes());
    }

    fn string(&mut self, name: &'static str, value: &str) {
        json::write_string(value, self.member(name));
    }

    fn optional_string(&mut self, name: &'static str, value: Option<&str>) {
        if let Some(value) = value {
            self.string(name, value);
        }
    }

    fn value(&mut self, name: &'static str, value: &Value) {
        json::write_value(value, self.member(name));
    }

    /// Writes the array member `name`, each element with `encode`.
    fn list<T>(&mut self, name: &'static str, items: &[T], encode: fn(&T, &mut Vec<u8>)) {
        json::write_array(items, encode, self.member(name));
    }

    fn end(self) {
        self.out.push(b'}');
    }
}

/// `from_raw`, `from_value`, `to_value`, `into_value` and `write_json`, plus the
/// standard conversions, for a type whose reading and writing are given as
/// `read(&mut Reader)`, `write(self)` and `encode(&self, out)`.
macro_rules! value_conversions {
    ($type:ident, $what:literal) => {
        impl $type {
            #[doc = concat!("Reads ", $what, " straight from the text of a JSON value,")]
            /// building no tree but for the members that are JSON values themselves.
            pub fn from_raw(raw: RawValue<'_>) -> Result<$type, FieldError> {
                read_whole(raw.reader(), $type::read)
            }

            #[doc = concat!("Reads ", $what, " from the JSON value at `reader`, which")]
            /// moves past the whole value whether it fits or not: what
            /// [`from_raw`](Self::from_raw) does, for a value inside a larger text
            /// (such as a payload, read as the envelope reader reaches it).
            ///
            /// The outer `Err` is text that is not JSON, the inner one a member that
            /// does not fit.
            pub fn read_from(
                reader: &mut Reader<'_>,
            ) -> Result<Result<$type, FieldError>, json::Error> {
                $type::read(reader)
            }

            #[doc = concat!("Reads ", $what, " from a JSON value.")]
            ///
            /// The same rules as [`from_raw`](Self::from_raw), applied to the
            /// value's text.
            pub fn from_value(value: Value) -> Result<$type, FieldError> {
                let text = json::to_vec(&value);
                read_whole(Reader::new(&text, &VALUE_TEXT), $type::read)
            }

            #[doc = concat!("Writes ", $what, " as a JSON value.")]
            pub fn to_value(&self) -> Value {
                self.clone().write()
            }

            #[doc = concat!("Writes ", $what, " as a JSON value, moving its strings in.")]
            pub fn into_value(self) -> Value {
                self.write()
            }

            #[doc = concat!("Appends ", $what, " to `out` as compact JSON: the text")]
            /// [`json::write_value`] writes for [`to_value`](Self::to_value), without
            /// building the value.
            pub fn write_json(&self, out: &mut Vec<u8>) {
                self.encode(out)
            }
        }

        impl TryFrom<Value> for $type {
            type Error = FieldError;
            fn try_from(value: Value) -> Result<$type, FieldError> {
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

impl InitializeParams {
    /// `initialize` params for the session's working directory, with
    /// [`PROTOCOL_VERSION`].
    pub fn new(cwd: impl Into<String>) -> InitializeParams {
        InitializeParams {
            version: String::from(PROTOCOL_VERSION),
            cwd: cwd.into(),
        }
    }

    fn read(r: &mut Reader<'_>) -> Read<InitializeParams> {
        let (mut version, mut cwd) = (Slot::new(), Slot::new());
        let members = read_members(r, |name, r| match name {
            b"version" => version.read(r, read_string),
            b"cwd" => cwd.read(r, read_string),
            _ => Ok(false),
        })?;
        Ok(members.and_then(|()| {
            Ok(InitializeParams {
                version: version.required("version", A_STRING)?,
                cwd: cwd.required("cwd", A_STRING)?,
            })
        }))
    }

    fn write(self) -> Value {
        object([
            ("version", Some(self.version.into())),
            ("cwd", Some(self.cwd.into())),
        ])
    }

    fn encode(&self, out: &mut Vec<u8>) {
        let mut o = ObjectWriter::begin(out);
        o.string("version", &self.version);
        o.string("cwd", &self.cwd);
        o.end();
    }
}

impl InitializeResult {
    /// Reads an `initialize` result, leaving out each tool descriptor that does not
    /// fit (a numeric `description`, a string `inputSchema`, ...) and saying which in
    /// the list returned beside it, so one bad tool does not cost the good ones. The
    /// rest is read as [`from_raw`](Self::from_raw) reads it.
    pub fn from_raw_keeping_good_tools(
        raw: RawValue<'_>,
    ) -> Result<(InitializeResult, Vec<RejectedTool>), FieldError> {
        let mut rejected = Vec::new();
        let mut r = raw.reader();
        let read = InitializeResult::read_with(&mut r, &mut Some(&mut rejected));
        match read.and_then(|field| r.finish().map(|()| field)) {
            Ok(result) => result.map(|result| (result, rejected)),
            Err(error) => Err(FieldError::not_json(error)),
        }
    }

    fn read(r: &mut Reader<'_>) -> Read<InitializeResult> {
        InitializeResult::read_with(r, &mut None)
    }

    /// Reads the result; with `rejected`, bad tools are left out and listed there,
    /// without it the first is the error.
    fn read_with(
        r: &mut Reader<'_>,
        rejected: &mut Option<&mut Vec<RejectedTool>>,
    ) -> Read<InitializeResult> {
        let (mut name, mut version, mut tools) = (Slot::new(), Slot::new(), Slot::new());
        let members = read_members(r, |member, r| match member {
            b"name" => name.read(r, read_string),
            b"version" => version.read(r, read_string),
            b"tools" => {
                tools.0 = Some(read_tools_with(r, rejected)?);
                Ok(true)
            }
            _ => Ok(false),
        })?;
        Ok(members.and_then(|()| {
            Ok(InitializeResult {
                name: name.required("name", A_STRING)?,
                version: version.required("version", A_STRING)?,
                tools: tools.required("tools", AN_ARRAY)?,
            })
        }))
    }

    fn write(self) -> Value {
        object([
            ("name", Some(self.name.into())),
            ("version", Some(self.version.into())),
            ("tools", Some(write_tools(self.tools))),
        ])
    }

    fn encode(&self, out: &mut Vec<u8>) {
        let mut o = ObjectWriter::begin(out);
        o.string("name", &self.name);
        o.string("version", &self.version);
        o.list("tools", &self.tools, Tool::encode);
        o.end();
    }
}

/// A tool descriptor left out of a tool list because it does not fit: which one, and
/// why. See [`InitializeResult::from_raw_keeping_good_tools`].
#[derive(Clone, Debug, PartialEq)]
pub struct RejectedTool {
    /// Its position in the list, from 0.
    pub index: usize,
    /// Its `name`, when it has a string one.
    pub name: Option<String>,
    /// What does not fit, such as `description: expected a string, found a number`.
    pub error: FieldError,
}

impl fmt::Display for RejectedTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.name {
            Some(name) => write!(f, "tool `{name}` (tools[{}]): {}", self.index, self.error),
            None => write!(f, "tools[{}]: {}", self.index, self.error),
        }
    }
}

/// Reads a tool list; with `rejected`, the descriptors that do not fit are left out
/// and listed there, without it the first is the error.
fn read_tools_with(
    r: &mut Reader<'_>,
    rejected: &mut Option<&mut Vec<RejectedTool>>,
) -> Read<Vec<Tool>> {
    let Some(rejected) = rejected else {
        return read_list(r, Tool::read);
    };
    if r.peek() != Some(b'[') {
        return mistyped(r, AN_ARRAY);
    }
    r.begin_array()?;
    // A repeated `tools` member: the last one counts, and so do only its rejections.
    rejected.clear();
    let mut tools = Vec::new();
    let mut index = 0;
    while r.next_element()? {
        let start = r.offset();
        match Tool::read(r)? {
            Ok(tool) => tools.push(tool),
            Err(error) => {
                // The descriptor's text is JSON (it was just read past): its name, if any.
                let text = r.input().get(start..r.offset()).unwrap_or_default();
                let name = json::parse(text)
                    .ok()
                    .and_then(|v| v.get("name").and_then(Value::as_str).map(String::from));
                rejected.push(RejectedTool { index, name, error });
            }
        }
        index += 1;
    }
    Ok(Ok(tools))
}

fn write_tools(tools: Vec<Tool>) -> Value {
    Value::Array(tools.into_iter().map(Tool::write).collect())
}

impl Tool {
    /// A tool with a description and an input schema.
    ///
    /// ```
    /// use dhara_protocol::json::{Object, Value};
    /// use dhara_protocol::message::Tool;
    ///
    /// let schema = Value::Object(Object::from_iter([("type", Value::from("object"))]));
    /// let tool = Tool::new("fetch_url", "Fetch a URL and extract readable content", schema);
    /// assert_eq!(tool.to_value()["inputSchema"]["type"], Value::from("object"));
    /// ```
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Tool {
        Tool {
            name: name.into(),
            description: Some(description.into()),
            input_schema: Some(input_schema),
        }
    }

    /// Whether the tool is named `name` (the name's bytes, so a `json::Str` needs no
    /// UTF-8 check to be asked with): lengths compared first, a name of 8 to 16
    /// bytes as two words, without a call ([`Reader::same_bytes`]). How both
    /// endpoints find a tool by name, in declaration order.
    #[inline]
    pub(crate) fn is_named(&self, name: &[u8]) -> bool {
        Reader::same_bytes(self.name.as_bytes(), name)
    }

    /// Checks `input` against the tool's `inputSchema` with
    /// [`schema::validate`](crate::schema::validate); a tool without a schema accepts
    /// any input.
    ///
    /// ```
    /// use dhara_protocol::json::{Object, Value};
    /// use dhara_protocol::message::Tool;
    ///
    /// let schema = Value::Object(Object::from_iter([("required", Value::from(vec!["url"]))]));
    /// let tool = Tool::new("fetch_url", "Fetch a URL", schema);
    /// let err = tool.check_input(&Value::Object(Object::new())).unwrap_err();
    /// assert_eq!(err.message(), "Missing required parameter 'url'");
    /// ```
    pub fn check_input(&self, input: &Value) -> Result<(), SchemaError> {
        match &self.input_schema {
            Some(schema) => crate::schema::validate(schema, input),
            None => Ok(()),
        }
    }

    /// The tool's `inputSchema` read once, for checking the input of many calls as
    /// [`check_input`](Tool::check_input) does, faster; `None` without a schema
    /// (any input is accepted).
    pub fn prepare_input_schema(&self) -> Option<PreparedSchema> {
        self.input_schema.clone().map(PreparedSchema::new)
    }

    fn read(r: &mut Reader<'_>) -> Read<Tool> {
        let (mut name, mut description, mut schema) = (Slot::new(), Slot::new(), Slot::new());
        let members = read_members(r, |member, r| match member {
            b"name" => name.read(r, read_string),
            b"description" => description.read(r, read_optional_string),
            b"inputSchema" => schema.read(r, read_schema),
            _ => Ok(false),
        })?;
        Ok(members.and_then(|()| {
            Ok(Tool {
                name: name.required("name", A_STRING)?,
                description: description.optional("description")?,
                input_schema: schema.optional("inputSchema")?,
            })
        }))
    }

    fn write(self) -> Value {
        object([
            ("name", Some(self.name.into())),
            ("description", self.description.map(Value::from)),
            ("inputSchema", self.input_schema),
        ])
    }

    fn encode(&self, out: &mut Vec<u8>) {
        let mut o = ObjectWriter::begin(out);
        o.string("name", &self.name);
        o.optional_string("description", self.description.as_deref());
        if let Some(schema) = &self.input_schema {
            o.value("inputSchema", schema);
        }
        o.end();
    }
}

/// Reads an `inputSchema`: an object or a boolean, or `null` for none.
fn read_schema(r: &mut Reader<'_>) -> Read<Option<Value>> {
    match r.peek() {
        Some(b'n') => read_literal(r).map(|_| Ok(None)),
        Some(b'{' | b't' | b'f') => Ok(Ok(Some(r.read_value()?))),
        _ => mistyped(r, A_SCHEMA),
    }
}

impl ToolList {
    /// Reads a tool list, leaving out each descriptor that does not fit and saying
    /// which, as [`InitializeResult::from_raw_keeping_good_tools`] does.
    pub fn from_raw_keeping_good_tools(
        raw: RawValue<'_>,
    ) -> Result<(ToolList, Vec<RejectedTool>), FieldError> {
        let mut rejected = Vec::new();
        let mut r = raw.reader();
        let read = ToolList::read_with(&mut r, &mut Some(&mut rejected));
        match read.and_then(|field| r.finish().map(|()| field)) {
            Ok(list) => list.map(|list| (list, rejected)),
            Err(error) => Err(FieldError::not_json(error)),
        }
    }

    fn read(r: &mut Reader<'_>) -> Read<ToolList> {
        ToolList::read_with(r, &mut None)
    }

    fn read_with(
        r: &mut Reader<'_>,
        rejected: &mut Option<&mut Vec<RejectedTool>>,
    ) -> Read<ToolList> {
        let mut tools = Slot::new();
        let members = read_members(r, |name, r| match name {
            b"tools" => {
                tools.0 = Some(read_tools_with(r, rejected)?);
                Ok(true)
            }
            _ => Ok(false),
        })?;
        Ok(members.and_then(|()| {
            Ok(ToolList {
                tools: tools.required("tools", AN_ARRAY)?,
            })
        }))
    }

    fn write(self) -> Value {
        object([("tools", Some(write_tools(self.tools)))])
    }

    fn encode(&self, out: &mut Vec<u8>) {
        let mut o = ObjectWriter::begin(out);
        o.list("tools", &self.tools, Tool::encode);
        o.end();
    }
}

impl ExecuteParams {
    /// `tools/execute` params: run `tool_name` with `input`.
    pub fn new(tool_name: impl Into<Str>, input: Value) -> ExecuteParams {
        ExecuteParams {
            tool_name: tool_name.into(),
            input,
        }
    }

    fn read(r: &mut Reader<'_>) -> Read<ExecuteParams> {
        read_usual_or_any(r, ExecuteParams::read_usual, ExecuteParams::read_any)
    }

    /// The params as the protocol's writers write them (`{"toolName":...,"input":...}`,
    /// those two members in that order, no whitespace between a name and its value),
    /// read by comparing the names in place; `None` for any other text
    /// ([`read_usual_or_any`]).
    #[inline]
    fn read_usual(r: &mut Reader<'_>) -> Option<ExecuteParams> {
        let mut usual = r.clone();
        usual.begin_object().ok()?;
        if !usual.skip_exact(br#""toolName":"#) {
            return None;
        }
        let tool_name = str_value(&mut usual).ok()?;
        if !usual.skip_exact_member_name(br#","input":"#) {
            return None;
        }
        // Any value is an input: it is kept as it is read, with nothing to check.
        let input = usual.read_value().ok()?;
        if usual.next_member_bytes().ok()?.is_some() {
            return None;
        }
        *r = usual;
        Some(ExecuteParams { tool_name, input })
    }

    /// Reads the params in any spelling: members in any order, repeated or unknown.
    fn read_any(r: &mut Reader<'_>) -> Read<ExecuteParams> {
        // Any value is an input: it is kept as it is read, with nothing to check.
        let (mut tool_name, mut input) = (Slot::new(), None);
        let members = read_members(r, |name, r| match name {
            b"toolName" => tool_name.read(r, read_str),
            b"input" => {
                input = Some(r.read_value()?);
                Ok(true)
            }
            _ => Ok(false),
        })?;
        Ok(members.and_then(|()| {
            Ok(ExecuteParams {
                tool_name: tool_name.required("toolName", A_STRING)?,
                input: input
                    .ok_or_else(|| FieldError::missing("a JSON value").in_member("input"))?,
            })
        }))
    }

    fn write(self) -> Value {
        object([
            ("toolName", Some(self.tool_name.into())),
            ("input", Some(self.input)),
        ])
    }

    fn encode(&self, out: &mut Vec<u8>) {
        ExecuteParams::write_parts(&self.tool_name, &self.input, out);
    }

    /// Appends `tools/execute` params for `tool_name` and `input` to `out`, as
    /// [`write_json`](Self::write_json) does, without an `ExecuteParams` to hold them.
    pub fn write_parts(tool_name: &str, input: &Value, out: &mut Vec<u8>) {
        // Both members always: the names in one piece with what surrounds them.
        out.extend_from_slice(br#"{"toolName":"#);
        json::write_string(tool_name, out);
        out.extend_from_slice(br#","input":"#);
        json::write_value(input, out);
        out.push(b'}');
    }
}

impl ToolResult {
    /// A successful result holding one text item.
    pub fn text(text: impl Into<Str>) -> ToolResult {
        ToolResult {
            content: alloc::vec![Content::text(text)],
            is_error: false,
        }
    }

    /// A tool-level failure (`isError: true`) holding one text item: the LLM sees it.
    pub fn error_text(text: impl Into<Str>) -> ToolResult {
        ToolResult {
            content: alloc::vec![Content::text(text)],
            is_error: true,
        }
    }

    /// A tool-level failure (`isError: true`) with these content items: the LLM sees
    /// them, as it sees a result. ([`error_text`](ToolResult::error_text) is the
    /// one-text case.) A protocol-level failure is a JSON-RPC error instead.
    ///
    /// ```
    /// use dhara_protocol::message::{Content, ToolResult};
    ///
    /// let result = ToolResult::error([Content::text("no such file: a.txt")]);
    /// assert!(result.is_error);
    /// assert_eq!(
    ///     result.to_value().to_string(),
    ///     r#"{"content":[{"type":"text","text":"no such file: a.txt"}],"isError":true}"#
    /// );
    /// ```
    pub fn error(content: impl IntoIterator<Item = Content>) -> ToolResult {
        ToolResult {
            content: content.into_iter().collect(),
            is_error: true,
        }
    }

    fn read(r: &mut Reader<'_>) -> Read<ToolResult> {
        read_usual_or_any(r, ToolResult::read_usual, ToolResult::read_any)
    }

    /// The result as the protocol's writers write the usual one
    /// (`{"content":[{"type":"text","text":...}],"isError":false}` or `true`, without
    /// whitespace), read by comparing all but the text in place; `None` for any other
    /// text ([`read_usual_or_any`]).
    #[inline]
    fn read_usual(r: &mut Reader<'_>) -> Option<ToolResult> {
        let mut usual = r.clone();
        // Each `{` and `[` is entered, and left, as the general reading does, so the
        // depth limit applies alike.
        usual.begin_object().ok()?;
        if !usual.skip_exact(br#""content":"#) {
            return None;
        }
        usual.begin_array().ok()?;
        usual.begin_object().ok()?;
        if !usual.skip_exact(br#""type":"text","text":"#) {
            return None;
        }
        let text = str_value(&mut usual).ok()?;
        if usual.next_member_bytes().ok()?.is_some() || usual.next_element().ok()? {
            return None;
        }
        let is_error = if usual.skip_exact_member_name(br#","isError":false"#) {
            false
        } else if usual.skip_exact_member_name(br#","isError":true"#) {
            true
        } else {
            return None;
        };
        if usual.next_member_bytes().ok()?.is_some() {
            return None;
        }
        *r = usual;
        Some(ToolResult {
            content: alloc::vec![Content::Text { text }],
            is_error,
        })
    }

    /// Reads the result in any spelling: members in any order, repeated or unknown,
    /// any content items.
    fn read_any(r: &mut Reader<'_>) -> Read<ToolResult> {
        let (mut content, mut is_error) = (Slot::new(), Slot::new());
        let members = read_members(r, |name, r| match name {
            b"content" => content.read(r, |r| read_list(r, Content::read)),
            b"isError" => is_error.read(r, read_flag),
            _ => Ok(false),
        })?;
        Ok(members.and_then(|()| {
            Ok(ToolResult {
                content: content.required("content", AN_ARRAY)?,
                is_error: is_error.optional("isError")?.unwrap_or(false),
            })
        }))
    }

    fn write(self) -> Value {
        let content = Value::Array(self.content.into_iter().map(Content::write).collect());
        object([
            ("content", Some(content)),
            ("isError", Some(Value::Bool(self.is_error))),
        ])
    }

    fn encode(&self, out: &mut Vec<u8>) {
        // Both members always, so the fixed text around the list in one piece each.
        out.extend_from_slice(br#"{"content":"#);
        json::write_array(&self.content, Content::encode, out);
        out.extend_from_slice(if self.is_error {
            br#","isError":true}"#
        } else {
            br#","isError":false}"#
        });
    }
}

impl Content {
    /// A text item.
    pub fn text(text: impl Into<Str>) -> Content {
        Content::Text { text: text.into() }
    }

    /// The item's `type` as written on the wire: `text`, `image`, `file`, or for an
    /// unknown item its `type` member (`None` if it has no string `type`).
    pub fn kind(&self) -> Option<&str> {
        match self {
            Content::Text { .. } => Some("text"),
            Content::ImageData { .. } | Content::ImagePath { .. } => Some("image"),
            Content::File { .. } => Some("file"),
            Content::Unknown(object) => object.get("type").and_then(Value::as_str),
        }
    }

    fn read(r: &mut Reader<'_>) -> Read<Content> {
        if r.peek() != Some(b'{') {
            return mistyped(r, AN_OBJECT);
        }
        let start = r.offset();
        let mut item = Item::default();
        r.begin_object()?;
        while let Some(name) = r.next_member_bytes()? {
            let slot = match &*name {
                b"type" => {
                    item.kind = Some(Seen::read_kind(r)?);
                    continue;
                }
                b"text" => &mut item.text,
                b"data" => &mut item.data,
                b"mimeType" => &mut item.mime_type,
                b"path" => &mut item.path,
                b"size" => &mut item.size,
                _ => {
                    r.skip_value()?;
                    continue;
                }
            };
            *slot = Some(Seen::read(r)?);
        }
        if let Some(content) = item.fit() {
            return Ok(Ok(content));
        }
        // Kept whole: the item's text, read again as a tree.
        let text = r.input().get(start..r.offset()).unwrap_or_default();
        match json::parse_with(text, &VALUE_TEXT)? {
            Value::Object(object) => Ok(Ok(Content::Unknown(object))),
            _ => Ok(Ok(Content::Unknown(Object::new()))),
        }
    }

    fn write(self) -> Value {
        let kind = |k: &str| Some(Value::from(k));
        match self {
            Content::Text { text } => object([("type", kind("text")), ("text", Some(text.into()))]),
            Content::ImageData { mime_type, data } => object([
                ("type", kind("image")),
                ("mimeType", Some(mime_type.into())),
                ("data", Some(data.into())),
            ]),
            Content::ImagePath { path, mime_type } => object([
                ("type", kind("image")),
                ("path", Some(path.into())),
                ("mimeType", mime_type.map(Value::from)),
            ]),
            Content::File {
                path,
                size,
                mime_type,
            } => object([
                ("type", kind("file")),
                ("path", Some(path.into())),
                ("size", size.map(Value::from)),
                ("mimeType", mime_type.map(Value::from)),
            ]),
            Content::Unknown(object) => Value::Object(object),
        }
    }

    fn encode(&self, out: &mut Vec<u8>) {
        if let Content::Unknown(object) = self {
            return json::write_object(object, out);
        }
        if let Content::Text { text } = self {
            // The usual item, its fixed start in one piece.
            out.extend_from_slice(br#"{"type":"text","text":"#);
            json::write_str(text, out);
            out.push(b'}');
            return;
        }
        let mut o = ObjectWriter::begin(out);
        match self {
            Content::Text { .. } => {}
            Content::ImageData { mime_type, data } => {
                o.fixed(r#""type":"image""#);
                o.string("mimeType", mime_type);
                o.string("data", data);
            }
            Content::ImagePath { path, mime_type } => {
                o.fixed(r#""type":"image""#);
                o.string("path", path);
                o.optional_string("mimeType", mime_type.as_deref());
            }
            Content::File {
                path,
                size,
                mime_type,
            } => {
                o.fixed(r#""type":"file""#);
                o.string("path", path);
                if let Some(size) = size {
                    o.member("size")
                        .extend_from_slice(json::Number::from(*size).text_bytes());
                }
                o.optional_string("mimeType", mime_type.as_deref());
            }
            Content::Unknown(_) => {}
        }
        o.end();
    }
}

/// What a content item's member held, as far as fitting it to a typed variant
/// needs: strings borrowed from the text when they hold no escape.
enum Seen<'a> {
    Null,
    String(Cow<'a, str>),
    /// A number that is a `u64`.
    U64(u64),
    /// Anything else.
    Other,
}

impl<'a> Seen<'a> {
    /// Reads a `type`: one of the known ones is compared in place when it is spelled
    /// out without escapes, anything else read as [`read`](Seen::read) reads it.
    fn read_kind(r: &mut Reader<'a>) -> Result<Seen<'a>, json::Error> {
        const KINDS: [(&[u8], &str); 3] = [
            (b"\"text\"", "text"),
            (b"\"image\"", "image"),
            (b"\"file\"", "file"),
        ];
        for (quoted, kind) in KINDS {
            if r.skip_exact(quoted) {
                return Ok(Seen::String(Cow::Borrowed(kind)));
            }
        }
        Seen::read(r)
    }

    fn read(r: &mut Reader<'a>) -> Result<Seen<'a>, json::Error> {
        Ok(match r.peek() {
            Some(b'"') => Seen::String(match r.plain_str() {
                Some(ascii) => ascii_text(ascii),
                None => r.read_str()?.0,
            }),
            Some(b'n') => {
                r.skip_value()?;
                Seen::Null
            }
            Some(b'-' | b'0'..=b'9') => {
                let number = rpc::read_number(r)?;
                number.as_u64().map_or(Seen::Other, Seen::U64)
            }
            _ => {
                r.skip_value()?;
                Seen::Other
            }
        })
    }
}

/// Text the reader found to be ASCII without escapes. A short one (`"ok"`, a MIME
/// type, a path) is built a character at a time into its own `String`, which costs
/// less than the UTF-8 check that is the other safe way to text; a longer one is
/// checked in one piece and borrowed.
fn ascii_text(ascii: &[u8]) -> Cow<'_, str> {
    const BUILT_BELOW: usize = 24;
    if ascii.len() < BUILT_BELOW {
        let mut text = String::with_capacity(ascii.len());
        for &b in ascii {
            text.push(char::from(b));
        }
        Cow::Owned(text)
    } else {
        Cow::Borrowed(core::str::from_utf8(ascii).unwrap_or_default())
    }
}

/// The members of a content item that decide its variant (the last of each when
/// repeated); `None` when absent.
#[derive(Default)]
struct Item<'a> {
    kind: Option<Seen<'a>>,
    text: Option<Seen<'a>>,
    data: Option<Seen<'a>>,
    mime_type: Option<Seen<'a>>,
    path: Option<Seen<'a>>,
    size: Option<Seen<'a>>,
}

impl Item<'_> {
    /// The typed variant for an item whose `type` and members fit one; `None` for
    /// every other item.
    fn fit(self) -> Option<Content> {
        fn string(seen: Option<Seen<'_>>) -> Option<String> {
            match seen {
                Some(Seen::String(s)) => Some(s.into_owned()),
                _ => None,
            }
        }
        fn optional_string(seen: Option<Seen<'_>>) -> Option<Option<String>> {
            match seen {
                None | Some(Seen::Null) => Some(None),
                Some(Seen::String(s)) => Some(Some(s.into_owned())),
                _ => None,
            }
        }
        let Item {
            kind: Some(Seen::String(kind)),
            text,
            data,
            mime_type,
            path,
            size,
        } = self
        else {
            return None;
        };
        let content = match &*kind {
            "text" => Content::Text {
                text: match text {
                    Some(Seen::String(s)) => Str::from(s),
                    _ => return None,
                },
            },
            "image" if !matches!(data, None | Some(Seen::Null)) => Content::ImageData {
                mime_type: string(mime_type)?,
                data: string(data)?,
            },
            "image" => Content::ImagePath {
                path: string(path)?,
                mime_type: optional_string(mime_type)?,
            },
            "file" => Content::File {
                path: string(path)?,
                size: match size {
                    None | Some(Seen::Null) => None,
                    Some(Seen::U64(size)) => Some(size),
                    Some(_) => return None,
                },
                mime_type: optional_string(mime_type)?,
            },
            _ => return None,
        };
        Some(content)
    }
}

impl Progress {
    /// Progress text not attributed to a request.
    pub fn new(message: impl Into<String>) -> Progress {
        Progress {
            message: message.into(),
            id: None,
        }
    }

    /// Progress text for the request with this id.
    pub fn for_request(id: Id, message: impl Into<String>) -> Progress {
        Progress {
            message: message.into(),
            id: Some(id),
        }
    }

    fn read(r: &mut Reader<'_>) -> Read<Progress> {
        read_usual_or_any(r, Progress::read_usual, Progress::read_any)
    }

    /// The params as the protocol's writers write them (`{"message":...}`, then
    /// `,"id":...` or not, no whitespace between a name and its value), read by
    /// comparing the names in place; `None` for any other text
    /// ([`read_usual_or_any`]).
    #[inline]
    fn read_usual(r: &mut Reader<'_>) -> Option<Progress> {
        let mut usual = r.clone();
        usual.begin_object().ok()?;
        if !usual.skip_exact(br#""message":"#) {
            return None;
        }
        let Ok(Ok(message)) = read_string(&mut usual) else {
            return None;
        };
        let id = if usual.skip_exact_member_name(br#","id":"#) {
            let Ok(Ok(id)) = read_id(&mut usual) else {
                return None;
            };
            id
        } else {
            None
        };
        if usual.next_member_bytes().ok()?.is_some() {
            return None;
        }
        *r = usual;
        Some(Progress { message, id })
    }

    /// Reads the params in any spelling: members in any order, repeated or unknown.
    fn read_any(r: &mut Reader<'_>) -> Read<Progress> {
        let (mut message, mut id) = (Slot::new(), Slot::new());
        let members = read_members(r, |name, r| match name {
            b"message" => message.read(r, read_string),
            b"id" => id.read(r, read_id),
            _ => Ok(false),
        })?;
        Ok(members.and_then(|()| {
            Ok(Progress {
                message: message.required("message", A_STRING)?,
                id: id.optional("id")?,
            })
        }))
    }

    fn write(self) -> Value {
        let id = self.id.map(|id| match id {
            Id::Number(n) => Value::Number(n),
            Id::String(s) => Value::from(s),
            Id::Null => Value::Null,
        });
        object([("message", Some(self.message.into())), ("id", id)])
    }

    fn encode(&self, out: &mut Vec<u8>) {
        Progress::write_parts(&self.message, self.id.as_ref(), out);
    }

    /// Appends `progress` params with `message` and `id` to `out`, as
    /// [`write_json`](Self::write_json) does, without a `Progress` to hold them.
    pub fn write_parts(message: &str, id: Option<&Id>, out: &mut Vec<u8>) {
        // `message` always comes first: its name in one piece with the brace.
        out.extend_from_slice(br#"{"message":"#);
        json::write_string(message, out);
        if let Some(id) = id {
            out.extend_from_slice(br#","id":"#);
            rpc::write_id(id, out);
        }
        out.push(b'}');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn content(text: &str) -> Content {
        let raw = RawValue::from_text(text, &ParseOptions::DEFAULT);
        match raw.map(Content::from_raw) {
            Ok(Ok(content)) => content,
            other => panic!("{text}: {other:?}"),
        }
    }

    // ---- The usual spellings, read in place, against the general reading -------

    use alloc::vec;
    use proptest::prelude::*;

    /// Reads `text` both ways, with the reading `usual` falls back on as `any`:
    /// the same answer, the reader at the same place, the same rest.
    fn read_alike<T: PartialEq + fmt::Debug>(
        text: &[u8],
        options: &ParseOptions,
        read: fn(&mut Reader<'_>) -> Read<T>,
        any: fn(&mut Reader<'_>) -> Read<T>,
    ) -> Result<(), TestCaseError> {
        let (mut fast, mut general) = (Reader::new(text, options), Reader::new(text, options));
        let (read, expected) = (read(&mut fast), any(&mut general));
        let shown = String::from_utf8_lossy(text);
        prop_assert_eq!(read, expected, "{}", shown);
        prop_assert_eq!(fast.offset(), general.offset(), "{}", shown);
        prop_assert_eq!(fast.finish(), general.finish(), "{}", shown);
        Ok(())
    }

    /// A string member's value: plain ASCII of any length, escapes, non-ASCII, lone
    /// surrogates, or not a string at all.
    fn text_value() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z ./]{0,40}".prop_map(|t| alloc::format!("\"{t}\"")),
            r#"[a-z]{0,8}(\\n|\\"|\\u00e9|\\ud83d\\ude00|é|\\ud800)[a-z]{0,30}"#
                .prop_map(|t| alloc::format!("\"{t}\"")),
            prop::sample::select(vec!["5", "null", "true", "[]", "{}", "\"a", "\"\\x\""])
                .prop_map(String::from),
        ]
    }

    /// A JSON value for an `input`: nested or not, and some that are not JSON.
    fn input_value() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(vec![
                r#"{"path":"src/lib.rs","pattern":"fn \"main\"\\s+{","limit":12,"recursive":true}"#,
                r#"{}"#,
                r#"[]"#,
                r#"[[[[{"a":[[[]]]}]]]]"#,
                r#"{"a":{"b":{"c":{"d":1.5e3}}}}"#,
                r#"null"#,
                r#"-0"#,
                r#""caf\u00e9""#,
                r#"{"a":1,}"#,
                r#"{"a" 1}"#,
                r#"[1,2"#,
            ])
            .prop_map(String::from),
            text_value(),
        ]
    }

    /// The text `usual` was written in, then changed or not: a byte inserted,
    /// removed or replaced, or the text cut short.
    fn changed(usual: String) -> impl Strategy<Value = Vec<u8>> {
        let len = usual.len();
        let byte = prop::sample::select(b" \t\n,:}]{[\"\\\x0e\xc3\xff".to_vec());
        (0..5u8, 0..=len, byte).prop_map(move |(how, at, byte)| {
            let mut text = usual.clone().into_bytes();
            match how {
                0 | 1 => {}
                2 => text.insert(at, byte),
                3 if at < len => _ = text.remove(at),
                3 => text.truncate(at.saturating_sub(1)),
                _ => {
                    if let Some(b) = text.get_mut(at) {
                        *b = byte;
                    }
                }
            }
            text
        })
    }

    /// Any depth limit, either surrogate rule, the default most often.
    fn options() -> impl Strategy<Value = ParseOptions> {
        prop_oneof![
            3 => Just(ParseOptions::DEFAULT),
            1 => (0..6usize, any::<bool>()).prop_map(|(max_depth, strict_surrogates)| {
                ParseOptions { max_depth, strict_surrogates }
            }),
        ]
    }

    fn tool_result_text() -> impl Strategy<Value = Vec<u8>> {
        let is_error = prop::sample::select(vec![
            r#","isError":false"#,
            r#","isError":true"#,
            r#","isError":false"#,
            r#","isError":true"#,
            r#","isError":null"#,
            "",
        ]);
        let extra = prop::sample::select(vec!["", "", "", r#","more":1"#, r#","isError":true"#]);
        (text_value(), is_error, extra)
            .prop_map(|(text, is_error, extra)| {
                alloc::format!(
                    r#"{{"content":[{{"type":"text","text":{text}}}]{is_error}{extra}}}"#
                )
            })
            .prop_flat_map(changed)
    }

    fn execute_params_text() -> impl Strategy<Value = Vec<u8>> {
        let extra = prop::sample::select(vec!["", "", "", r#","more":1"#, r#","toolName":"b""#]);
        (text_value(), input_value(), extra)
            .prop_map(|(name, input, extra)| {
                alloc::format!(r#"{{"toolName":{name},"input":{input}{extra}}}"#)
            })
            .prop_flat_map(changed)
    }

    fn progress_text() -> impl Strategy<Value = Vec<u8>> {
        let id = prop::sample::select(vec![
            "",
            "",
            r#","id":7"#,
            r#","id":"r-1""#,
            r#","id":null"#,
            r#","id":1.5"#,
            r#","id":true"#,
            r#","id":"\ud800""#,
        ]);
        let extra = prop::sample::select(vec!["", "", "", r#","more":1"#, r#","message":"b""#]);
        (text_value(), id, extra)
            .prop_map(|(message, id, extra)| {
                alloc::format!(r#"{{"message":{message}{id}{extra}}}"#)
            })
            .prop_flat_map(changed)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        #[test]
        fn usual_progress_params_read_as_the_general_reading_reads_them(
            text in progress_text(),
            options in options(),
        ) {
            read_alike(&text, &options, Progress::read, Progress::read_any)?;
        }

        #[test]
        fn a_usual_tool_result_reads_as_the_general_reading_reads_it(
            text in tool_result_text(),
            options in options(),
        ) {
            read_alike(&text, &options, ToolResult::read, ToolResult::read_any)?;
        }

        #[test]
        fn usual_execute_params_read_as_the_general_reading_reads_them(
            text in execute_params_text(),
            options in options(),
        ) {
            read_alike(&text, &options, ExecuteParams::read, ExecuteParams::read_any)?;
        }
    }

    /// The usual spellings are the ones the endpoints write: the in-place reading
    /// answers for them (so the comparisons above compare two readings).
    #[test]
    fn what_the_endpoints_write_is_read_in_place() {
        let result = ToolResult::text("caf\u{e9} \"ok\"");
        let mut text = Vec::new();
        result.write_json(&mut text);
        let mut r = Reader::new(&text, &ParseOptions::DEFAULT);
        assert_eq!(ToolResult::read_usual(&mut r), Some(result));
        let params = ExecuteParams::new(
            "grep",
            json::parse(br#"{"path":"a","n":[1,2]}"#).expect("JSON"),
        );
        let mut text = Vec::new();
        params.write_json(&mut text);
        let mut r = Reader::new(&text, &ParseOptions::DEFAULT);
        assert_eq!(ExecuteParams::read_usual(&mut r), Some(params));
        for progress in [
            Progress::new("Reading\u{2026} 42%"),
            Progress::for_request(Id::from(7), "a"),
        ] {
            let mut text = Vec::new();
            progress.write_json(&mut text);
            let mut r = Reader::new(&text, &ParseOptions::DEFAULT);
            assert_eq!(Progress::read_usual(&mut r), Some(progress));
        }
    }

    #[test]
    fn texts_read_the_same_at_every_length_ascii_or_not() {
        for len in 0..64 {
            for piece in ["abcdefghij", "a\u{e9}\"\\\n", "\u{1F600}z"] {
                let text: String = piece.chars().cycle().take(len).collect();
                let mut quoted = Vec::new();
                json::write_string(&text, &mut quoted);
                let quoted = String::from_utf8(quoted).expect("written JSON is UTF-8");
                let item = content(&alloc::format!(r#"{{"type":"text","text":{quoted}}}"#));
                assert_eq!(item, Content::text(text.as_str()), "{quoted}");
                let item = content(&alloc::format!(r#"{{"type":"file","path":{quoted}}}"#));
                assert!(
                    matches!(&item, Content::File { path, .. } if *path == text),
                    "{quoted}"
                );
            }
        }
    }

    #[test]
    fn a_type_reads_the_same_spelled_out_or_escaped() {
        let text = Content::Text {
            text: Str::from("a"),
        };
        assert_eq!(content(r#"{"type":"text","text":"a"}"#), text);
        assert_eq!(content(r#"{"type":"te\u0078t","text":"a"}"#), text);
        assert_eq!(content(r#"{ "type" : "text" , "text":"a"}"#), text);
        assert_eq!(content(r#"{"text":"a","type":"text"}"#), text);
        let path = |kind: &str| content(&alloc::format!(r#"{{"type":"{kind}","path":"p"}}"#));
        assert!(matches!(path("image"), Content::ImagePath { .. }));
        assert!(matches!(path("im\\u0061ge"), Content::ImagePath { .. }));
        assert!(matches!(path("file"), Content::File { .. }));
        for other in ["texts", "tex", "fil", "files", "Text"] {
            let item = content(&alloc::format!(
                r#"{{"type":"{other}","text":"a","path":"p"}}"#
            ));
            assert_eq!(item.kind(), Some(other), "{other}");
        }
    }
}
