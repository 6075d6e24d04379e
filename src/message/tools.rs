//! The types of `initialize` and `tools/list`: the handshake and the tool
//! descriptors.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use super::PROTOCOL_VERSION;
use super::fields::{
    A_SCHEMA, A_STRING, AN_ARRAY, FieldError, ObjectWriter, Read, Slot, mistyped, object,
    read_list, read_members, read_optional_string, read_string,
};
use crate::json::{self, RawValue, Reader, Value};
use crate::schema::{PreparedSchema, SchemaError};

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

impl InitializeParams {
    /// `initialize` params for the session's working directory, with
    /// [`PROTOCOL_VERSION`].
    pub fn new(cwd: impl Into<String>) -> InitializeParams {
        InitializeParams {
            version: String::from(PROTOCOL_VERSION),
            cwd: cwd.into(),
        }
    }

    pub(super) fn read(r: &mut Reader<'_>) -> Read<InitializeParams> {
        let (mut version, mut cwd) = (Slot::new(), Slot::new());
        let members = read_members(r, &["version", "cwd"], |member, r| match member {
            0 => version.read(r, read_string),
            _ => cwd.read(r, read_string),
        })?;
        Ok(members.and_then(|()| {
            Ok(InitializeParams {
                version: version.required("version", A_STRING)?,
                cwd: cwd.required("cwd", A_STRING)?,
            })
        }))
    }

    pub(super) fn write(self) -> Value {
        object([
            ("version", Some(self.version.into())),
            ("cwd", Some(self.cwd.into())),
        ])
    }

    pub(super) fn encode(&self, out: &mut Vec<u8>) {
        let mut o = ObjectWriter::begin(out);
        o.string("version", &self.version);
        o.string("cwd", &self.cwd);
        o.end();
    }
}

/// How a message holding tools is read, with `rejected` to keep the good ones.
type ReadWith<T> = for<'a> fn(&mut Reader<'a>, &mut Option<&mut Vec<RejectedTool>>) -> Read<T>;

/// Reads `raw` with `read_with`, leaving out each tool descriptor that does not fit
/// and listing it beside what was read.
fn keeping_good_tools<T>(
    raw: RawValue<'_>,
    read_with: ReadWith<T>,
) -> Result<(T, Vec<RejectedTool>), FieldError> {
    let mut rejected = Vec::new();
    let mut r = raw.reader();
    let read = read_with(&mut r, &mut Some(&mut rejected));
    match read.and_then(|field| r.finish().map(|()| field)) {
        Ok(value) => value.map(|value| (value, rejected)),
        Err(error) => Err(FieldError::not_json(error)),
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
        keeping_good_tools(raw, InitializeResult::read_with)
    }

    pub(super) fn read(r: &mut Reader<'_>) -> Read<InitializeResult> {
        InitializeResult::read_with(r, &mut None)
    }

    /// Reads the result; with `rejected`, bad tools are left out and listed there,
    /// without it the first is the error.
    fn read_with(
        r: &mut Reader<'_>,
        rejected: &mut Option<&mut Vec<RejectedTool>>,
    ) -> Read<InitializeResult> {
        let (mut name, mut version, mut tools) = (Slot::new(), Slot::new(), Slot::new());
        let names = ["name", "version", "tools"];
        let members = read_members(r, &names, |member, r| {
            match member {
                0 => name.read(r, read_string)?,
                1 => version.read(r, read_string)?,
                _ => tools.0 = Some(read_tools_with(r, rejected)?),
            }
            Ok(())
        })?;
        Ok(members.and_then(|()| {
            Ok(InitializeResult {
                name: name.required("name", A_STRING)?,
                version: version.required("version", A_STRING)?,
                tools: tools.required("tools", AN_ARRAY)?,
            })
        }))
    }

    pub(super) fn write(self) -> Value {
        object([
            ("name", Some(self.name.into())),
            ("version", Some(self.version.into())),
            ("tools", Some(write_tools(self.tools))),
        ])
    }

    pub(super) fn encode(&self, out: &mut Vec<u8>) {
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
                let text = r.input().get(start..r.offset());
                debug_assert!(text.is_some(), "the descriptor lies within the input");
                let text = text.unwrap_or_default();
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
    /// assert_eq!(Value::from(tool)["inputSchema"]["type"], Value::from("object"));
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

    /// Whether the tool is named `name` (given as bytes, which need no UTF-8
    /// check): how both endpoints find a tool by name, in declaration order.
    #[inline]
    pub(crate) fn is_named(&self, name: &[u8]) -> bool {
        json::scan::same_bytes(self.name.as_bytes(), name)
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

    pub(super) fn read(r: &mut Reader<'_>) -> Read<Tool> {
        let (mut name, mut description, mut schema) = (Slot::new(), Slot::new(), Slot::new());
        let names = ["name", "description", "inputSchema"];
        let members = read_members(r, &names, |member, r| match member {
            0 => name.read(r, read_string),
            1 => description.read(r, read_optional_string),
            _ => schema.read(r, read_schema),
        })?;
        Ok(members.and_then(|()| {
            Ok(Tool {
                name: name.required("name", A_STRING)?,
                description: description.optional("description")?,
                input_schema: schema.optional("inputSchema")?,
            })
        }))
    }

    pub(super) fn write(self) -> Value {
        object([
            ("name", Some(self.name.into())),
            ("description", self.description.map(Value::from)),
            ("inputSchema", self.input_schema),
        ])
    }

    pub(super) fn encode(&self, out: &mut Vec<u8>) {
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
        Some(b'n') => r.skip_value().map(|_| Ok(None)),
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
        keeping_good_tools(raw, ToolList::read_with)
    }

    pub(super) fn read(r: &mut Reader<'_>) -> Read<ToolList> {
        ToolList::read_with(r, &mut None)
    }

    fn read_with(
        r: &mut Reader<'_>,
        rejected: &mut Option<&mut Vec<RejectedTool>>,
    ) -> Read<ToolList> {
        let mut tools = Slot::new();
        let members = read_members(r, &["tools"], |_, r| {
            tools.0 = Some(read_tools_with(r, rejected)?);
            Ok(())
        })?;
        Ok(members.and_then(|()| {
            Ok(ToolList {
                tools: tools.required("tools", AN_ARRAY)?,
            })
        }))
    }

    pub(super) fn write(self) -> Value {
        object([("tools", Some(write_tools(self.tools)))])
    }

    pub(super) fn encode(&self, out: &mut Vec<u8>) {
        let mut o = ObjectWriter::begin(out);
        o.list("tools", &self.tools, Tool::encode);
        o.end();
    }
}
