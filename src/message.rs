//! The Dhara methods: names, typed params and results, and content items.
//!
//! Each type converts to and from [`json::Value`] with a
//! [`FieldError`] naming the path of a missing or mistyped field.
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
//! Every type has `from_value` (which consumes the value, so strings move rather
//! than copy), `to_value` and `into_value`, and the matching `TryFrom<Value>` and
//! `From<_> for Value`; and `write_json`, which appends the same JSON text as
//! writing `to_value` would, straight into a buffer without building the value (the
//! endpoints send their messages this way).
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

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::json::{self, Object, Value};
use crate::rpc::{self, Id};
use crate::schema::SchemaError;

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
    /// The tool to run (`toolName`).
    pub tool_name: String,
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
        /// The text.
        text: String,
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

    fn mistyped(expected: &'static str, found: &Value) -> FieldError {
        FieldError {
            path: String::new(),
            expected,
            found: Some(found.type_name()),
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

/// The members of one object being read; each one is moved out as it is read.
struct Members {
    object: Object,
}

impl Members {
    fn of(value: Value) -> Result<Members, FieldError> {
        match value {
            Value::Object(object) => Ok(Members { object }),
            other => Err(FieldError::mistyped(AN_OBJECT, &other)),
        }
    }

    /// Moves out the value of member `name` (the last one if repeated).
    fn take(&mut self, name: &str) -> Option<Value> {
        self.object.get_mut(name).map(Value::take)
    }

    fn string(&mut self, name: &str) -> Result<String, FieldError> {
        match self.take(name) {
            Some(Value::String(s)) => Ok(s.into_string()),
            Some(other) => Err(FieldError::mistyped(A_STRING, &other).in_member(name)),
            None => Err(FieldError::missing(A_STRING).in_member(name)),
        }
    }

    fn optional_string(&mut self, name: &str) -> Result<Option<String>, FieldError> {
        match self.take(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.into_string())),
            Some(other) => Err(FieldError::mistyped(A_STRING, &other).in_member(name)),
        }
    }

    fn any(&mut self, name: &str) -> Result<Value, FieldError> {
        self.take(name)
            .ok_or_else(|| FieldError::missing("a JSON value").in_member(name))
    }

    /// Reads the array member `name`, each element with `read`.
    fn list<T>(
        &mut self,
        name: &str,
        read: fn(Value) -> Result<T, FieldError>,
    ) -> Result<Vec<T>, FieldError> {
        let elements = match self.take(name) {
            Some(Value::Array(elements)) => elements,
            Some(other) => return Err(FieldError::mistyped(AN_ARRAY, &other).in_member(name)),
            None => return Err(FieldError::missing(AN_ARRAY).in_member(name)),
        };
        let mut out = Vec::with_capacity(elements.len());
        for (index, element) in elements.into_iter().enumerate() {
            out.push(read(element).map_err(|e| e.in_element(index).in_member(name))?);
        }
        Ok(out)
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

    /// Writes the member's name; the caller writes its value into the buffer returned.
    fn member(&mut self, name: &str) -> &mut Vec<u8> {
        if !self.empty {
            self.out.push(b',');
        }
        self.empty = false;
        json::write_string(name, self.out);
        self.out.push(b':');
        self.out
    }

    fn string(&mut self, name: &str, value: &str) {
        json::write_string(value, self.member(name));
    }

    fn optional_string(&mut self, name: &str, value: Option<&str>) {
        if let Some(value) = value {
            self.string(name, value);
        }
    }

    fn value(&mut self, name: &str, value: &Value) {
        json::write_value(value, self.member(name));
    }

    /// Writes the array member `name`, each element with `encode`.
    fn list<T>(&mut self, name: &str, items: &[T], encode: fn(&T, &mut Vec<u8>)) {
        json::write_array(items, encode, self.member(name));
    }

    fn end(self) {
        self.out.push(b'}');
    }
}

/// `from_value`, `to_value`, `into_value` and `write_json`, plus the standard
/// conversions, for a type whose reading and writing are given as `read(Value)`,
/// `write(self)` and `encode(&self, out)`.
macro_rules! value_conversions {
    ($type:ident, $what:literal) => {
        impl $type {
            #[doc = concat!("Reads ", $what, " from a JSON value, moving its strings out.")]
            pub fn from_value(value: Value) -> Result<$type, FieldError> {
                $type::read(value)
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
                $type::read(value)
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

    fn read(value: Value) -> Result<InitializeParams, FieldError> {
        let mut m = Members::of(value)?;
        Ok(InitializeParams {
            version: m.string("version")?,
            cwd: m.string("cwd")?,
        })
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
    fn read(value: Value) -> Result<InitializeResult, FieldError> {
        let mut m = Members::of(value)?;
        Ok(InitializeResult {
            name: m.string("name")?,
            version: m.string("version")?,
            tools: m.list("tools", Tool::read)?,
        })
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

    fn read(value: Value) -> Result<Tool, FieldError> {
        let mut m = Members::of(value)?;
        let name = m.string("name")?;
        let description = m.optional_string("description")?;
        let input_schema = match m.take("inputSchema") {
            None | Some(Value::Null) => None,
            Some(schema @ (Value::Object(_) | Value::Bool(_))) => Some(schema),
            Some(other) => {
                return Err(FieldError::mistyped(A_SCHEMA, &other).in_member("inputSchema"));
            }
        };
        Ok(Tool {
            name,
            description,
            input_schema,
        })
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

impl ToolList {
    fn read(value: Value) -> Result<ToolList, FieldError> {
        let mut m = Members::of(value)?;
        Ok(ToolList {
            tools: m.list("tools", Tool::read)?,
        })
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
    pub fn new(tool_name: impl Into<String>, input: Value) -> ExecuteParams {
        ExecuteParams {
            tool_name: tool_name.into(),
            input,
        }
    }

    fn read(value: Value) -> Result<ExecuteParams, FieldError> {
        let mut m = Members::of(value)?;
        Ok(ExecuteParams {
            tool_name: m.string("toolName")?,
            input: m.any("input")?,
        })
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
        let mut o = ObjectWriter::begin(out);
        o.string("toolName", tool_name);
        o.value("input", input);
        o.end();
    }
}

impl ToolResult {
    /// A successful result holding one text item.
    pub fn text(text: impl Into<String>) -> ToolResult {
        ToolResult {
            content: alloc::vec![Content::text(text)],
            is_error: false,
        }
    }

    /// A tool-level failure (`isError: true`) holding one text item: the LLM sees it.
    pub fn error_text(text: impl Into<String>) -> ToolResult {
        ToolResult {
            content: alloc::vec![Content::text(text)],
            is_error: true,
        }
    }

    fn read(value: Value) -> Result<ToolResult, FieldError> {
        let mut m = Members::of(value)?;
        let content = m.list("content", Content::read)?;
        let is_error = match m.take("isError") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => b,
            Some(other) => return Err(FieldError::mistyped(A_BOOLEAN, &other).in_member("isError")),
        };
        Ok(ToolResult { content, is_error })
    }

    fn write(self) -> Value {
        let content = Value::Array(self.content.into_iter().map(Content::write).collect());
        object([
            ("content", Some(content)),
            ("isError", Some(Value::Bool(self.is_error))),
        ])
    }

    fn encode(&self, out: &mut Vec<u8>) {
        let mut o = ObjectWriter::begin(out);
        o.list("content", &self.content, Content::encode);
        o.member("isError")
            .extend_from_slice(if self.is_error { b"true" } else { b"false" });
        o.end();
    }
}

impl Content {
    /// A text item.
    pub fn text(text: impl Into<String>) -> Content {
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

    fn read(value: Value) -> Result<Content, FieldError> {
        match value {
            Value::Object(mut object) => match Content::fit(&mut object) {
                Some(content) => Ok(content),
                None => Ok(Content::Unknown(object)),
            },
            other => Err(FieldError::mistyped(AN_OBJECT, &other)),
        }
    }

    /// The typed variant for an item whose `type` and members fit one, moving its
    /// strings out; `None` (the object untouched) for every other item.
    fn fit(object: &mut Object) -> Option<Content> {
        let string = |v: Option<&Value>| matches!(v, Some(Value::String(_)));
        let optional_string =
            |v: Option<&Value>| matches!(v, None | Some(Value::Null | Value::String(_)));
        let content = match object.get("type").and_then(Value::as_str)? {
            "text" if string(object.get("text")) => Content::Text {
                text: take_string(object, "text"),
            },
            "image" if object.get("data").is_some_and(|d| !d.is_null()) => {
                if !(string(object.get("data")) && string(object.get("mimeType"))) {
                    return None;
                }
                Content::ImageData {
                    mime_type: take_string(object, "mimeType"),
                    data: take_string(object, "data"),
                }
            }
            "image" if string(object.get("path")) && optional_string(object.get("mimeType")) => {
                Content::ImagePath {
                    path: take_string(object, "path"),
                    mime_type: take_optional_string(object, "mimeType"),
                }
            }
            "file" if string(object.get("path")) && optional_string(object.get("mimeType")) => {
                let size = match object.get("size") {
                    None | Some(Value::Null) => None,
                    Some(v) => Some(v.as_u64()?),
                };
                Content::File {
                    path: take_string(object, "path"),
                    size,
                    mime_type: take_optional_string(object, "mimeType"),
                }
            }
            _ => return None,
        };
        Some(content)
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
        let mut o = ObjectWriter::begin(out);
        match self {
            Content::Text { text } => {
                o.string("type", "text");
                o.string("text", text);
            }
            Content::ImageData { mime_type, data } => {
                o.string("type", "image");
                o.string("mimeType", mime_type);
                o.string("data", data);
            }
            Content::ImagePath { path, mime_type } => {
                o.string("type", "image");
                o.string("path", path);
                o.optional_string("mimeType", mime_type.as_deref());
            }
            Content::File {
                path,
                size,
                mime_type,
            } => {
                o.string("type", "file");
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

/// Moves out the string member `name`, which the caller has checked is a string.
fn take_string(object: &mut Object, name: &str) -> String {
    take_optional_string(object, name).unwrap_or_default()
}

/// Moves out the string member `name`; `None` when it is absent or not a string.
fn take_optional_string(object: &mut Object, name: &str) -> Option<String> {
    match object.get_mut(name) {
        Some(Value::String(s)) => Some(core::mem::take(s).into_string()),
        _ => None,
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

    fn read(value: Value) -> Result<Progress, FieldError> {
        let mut m = Members::of(value)?;
        let message = m.string("message")?;
        let id = match m.take("id") {
            None => None,
            Some(Value::Null) => Some(Id::Null),
            Some(Value::String(s)) => Some(Id::String(s.into_string())),
            Some(Value::Number(n)) if n.is_integer() => Some(Id::Number(n)),
            Some(other) => return Err(FieldError::mistyped(AN_ID, &other).in_member("id")),
        };
        Ok(Progress { message, id })
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
        let mut o = ObjectWriter::begin(out);
        o.string("message", message);
        if let Some(id) = id {
            rpc::write_id(id, o.member("id"));
        }
        o.end();
    }
}
