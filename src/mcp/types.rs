//! The MCP messages the bridges use, named as the MCP specification names them, read
//! from and written to [`json::Value`]s.
//!
//! Reading is lenient where MCP lets a message grow: members not named here are
//! ignored, and a content block of a type not named here is kept whole
//! ([`ContentBlock::Unknown`]). A missing or mistyped member named here is a
//! [`ShapeError`].

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::json::{Number, Object, Value};
use crate::rpc::Id;

/// A member of an MCP message that is missing or has the wrong type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeError {
    /// The member, such as `tools[2].inputSchema`, or empty for the value itself.
    pub member: String,
    /// What it should have been, such as `a string`.
    pub expected: &'static str,
}

impl ShapeError {
    fn new(member: impl Into<String>, expected: &'static str) -> ShapeError {
        ShapeError {
            member: member.into(),
            expected,
        }
    }

    /// The same error, for a member inside `outer`.
    fn inside(self, outer: &str) -> ShapeError {
        let member = if self.member.is_empty() {
            String::from(outer)
        } else if self.member.starts_with('[') {
            alloc::format!("{outer}{}", self.member)
        } else {
            alloc::format!("{outer}.{}", self.member)
        };
        ShapeError {
            member,
            expected: self.expected,
        }
    }
}

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.member.is_empty() {
            write!(f, "expected {}", self.expected)
        } else {
            write!(f, "`{}` must be {}", self.member, self.expected)
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for ShapeError {}

// ---- Reading helpers ---------------------------------------------------------------

fn as_object<'a>(value: &'a Value, member: &str) -> Result<&'a Object, ShapeError> {
    value
        .as_object()
        .ok_or_else(|| ShapeError::new(member, "an object"))
}

fn required_str(object: &Object, name: &str) -> Result<String, ShapeError> {
    match object.get(name) {
        Some(Value::String(s)) => Ok(String::from(s.as_str())),
        _ => Err(ShapeError::new(name, "a string")),
    }
}

/// An optional string member: absent or `null` is `None`.
fn optional_str(object: &Object, name: &str) -> Result<Option<String>, ShapeError> {
    match object.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(String::from(s.as_str()))),
        Some(_) => Err(ShapeError::new(name, "a string")),
    }
}

fn optional_number(object: &Object, name: &str) -> Result<Option<Number>, ShapeError> {
    match object.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(Some(n.clone())),
        Some(_) => Err(ShapeError::new(name, "a number")),
    }
}

/// The object `value`'s members named here, for writing: `None` members left out.
fn object<const N: usize>(members: [(&str, Option<Value>); N]) -> Value {
    Value::Object(
        members
            .into_iter()
            .filter_map(|(name, value)| value.map(|value| (name, value)))
            .collect(),
    )
}

// ---- Lifecycle -----------------------------------------------------------------------

/// The name and version of an MCP client or server (`clientInfo`, `serverInfo`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Implementation {
    /// `name`.
    pub name: String,
    /// `version`.
    pub version: String,
}

impl Implementation {
    /// A name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Implementation {
        Implementation {
            name: name.into(),
            version: version.into(),
        }
    }

    /// Reads `{name, version}`.
    pub fn from_value(value: &Value) -> Result<Implementation, ShapeError> {
        let object = as_object(value, "")?;
        Ok(Implementation {
            name: required_str(object, "name")?,
            // Some servers leave the version out; it reads as empty.
            version: optional_str(object, "version")?.unwrap_or_default(),
        })
    }

    /// Writes `{name, version}`.
    pub fn to_value(&self) -> Value {
        object([
            ("name", Some(Value::from(self.name.as_str()))),
            ("version", Some(Value::from(self.version.as_str()))),
        ])
    }
}

/// Params of the `initialize` request, from client to server.
#[derive(Clone, Debug, PartialEq)]
pub struct InitializeRequestParams {
    /// `protocolVersion`: the latest version the client supports.
    pub protocol_version: String,
    /// `capabilities`: the client's capabilities object, as it came.
    pub capabilities: Value,
    /// `clientInfo`.
    pub client_info: Implementation,
}

impl InitializeRequestParams {
    /// Reads the params of an `initialize` request.
    pub fn from_value(value: &Value) -> Result<InitializeRequestParams, ShapeError> {
        let object = as_object(value, "")?;
        let client_info = match object.get("clientInfo") {
            Some(info) => Implementation::from_value(info).map_err(|e| e.inside("clientInfo"))?,
            None => return Err(ShapeError::new("clientInfo", "an object")),
        };
        Ok(InitializeRequestParams {
            protocol_version: required_str(object, "protocolVersion")?,
            capabilities: object
                .get("capabilities")
                .cloned()
                .unwrap_or_else(|| Value::Object(Object::new())),
            client_info,
        })
    }

    /// Writes the params.
    pub fn to_value(&self) -> Value {
        object([
            (
                "protocolVersion",
                Some(Value::from(self.protocol_version.as_str())),
            ),
            ("capabilities", Some(self.capabilities.clone())),
            ("clientInfo", Some(self.client_info.to_value())),
        ])
    }
}

/// The result of `initialize`, from server to client.
#[derive(Clone, Debug, PartialEq)]
pub struct InitializeResult {
    /// `protocolVersion`: the version the server chose.
    pub protocol_version: String,
    /// `capabilities`: the server's capabilities object, as it came.
    pub capabilities: Value,
    /// `serverInfo`.
    pub server_info: Implementation,
    /// `instructions`, if any.
    pub instructions: Option<String>,
}

impl InitializeResult {
    /// Reads an `initialize` result.
    pub fn from_value(value: &Value) -> Result<InitializeResult, ShapeError> {
        let object = as_object(value, "")?;
        let server_info = match object.get("serverInfo") {
            Some(info) => Implementation::from_value(info).map_err(|e| e.inside("serverInfo"))?,
            None => return Err(ShapeError::new("serverInfo", "an object")),
        };
        Ok(InitializeResult {
            protocol_version: required_str(object, "protocolVersion")?,
            capabilities: object
                .get("capabilities")
                .cloned()
                .unwrap_or_else(|| Value::Object(Object::new())),
            server_info,
            instructions: optional_str(object, "instructions")?,
        })
    }

    /// Writes the result.
    pub fn to_value(&self) -> Value {
        object([
            (
                "protocolVersion",
                Some(Value::from(self.protocol_version.as_str())),
            ),
            ("capabilities", Some(self.capabilities.clone())),
            ("serverInfo", Some(self.server_info.to_value())),
            (
                "instructions",
                self.instructions.as_deref().map(Value::from),
            ),
        ])
    }
}

// ---- Tools ---------------------------------------------------------------------------

/// One tool an MCP server offers.
#[derive(Clone, Debug, PartialEq)]
pub struct Tool {
    /// `name`.
    pub name: String,
    /// `title`: a name for people, if any.
    pub title: Option<String>,
    /// `description`, if any.
    pub description: Option<String>,
    /// `inputSchema`: a JSON Schema object.
    pub input_schema: Value,
}

impl Tool {
    /// Reads a tool.
    pub fn from_value(value: &Value) -> Result<Tool, ShapeError> {
        let object = as_object(value, "")?;
        let input_schema = match object.get("inputSchema") {
            Some(schema @ Value::Object(_)) => schema.clone(),
            _ => return Err(ShapeError::new("inputSchema", "an object")),
        };
        Ok(Tool {
            name: required_str(object, "name")?,
            title: optional_str(object, "title")?,
            description: optional_str(object, "description")?,
            input_schema,
        })
    }

    /// Writes a tool.
    pub fn to_value(&self) -> Value {
        object([
            ("name", Some(Value::from(self.name.as_str()))),
            ("title", self.title.as_deref().map(Value::from)),
            ("description", self.description.as_deref().map(Value::from)),
            ("inputSchema", Some(self.input_schema.clone())),
        ])
    }
}

/// The result of `tools/list`: one page of tools, and the cursor of the next.
#[derive(Clone, Debug, PartialEq)]
pub struct ListToolsResult {
    /// `tools`.
    pub tools: Vec<Tool>,
    /// `nextCursor`: pass it as `cursor` for the next page; `None` on the last.
    pub next_cursor: Option<String>,
}

impl ListToolsResult {
    /// Reads a `tools/list` result.
    pub fn from_value(value: &Value) -> Result<ListToolsResult, ShapeError> {
        let object = as_object(value, "")?;
        let Some(Value::Array(items)) = object.get("tools") else {
            return Err(ShapeError::new("tools", "an array"));
        };
        let mut tools = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let tool = Tool::from_value(item)
                .map_err(|e| e.inside(&alloc::format!("[{index}]")).inside("tools"))?;
            tools.push(tool);
        }
        Ok(ListToolsResult {
            tools,
            next_cursor: optional_str(object, "nextCursor")?,
        })
    }

    /// Writes the result.
    pub fn to_value(&self) -> Value {
        object([
            (
                "tools",
                Some(Value::Array(
                    self.tools.iter().map(Tool::to_value).collect(),
                )),
            ),
            ("nextCursor", self.next_cursor.as_deref().map(Value::from)),
        ])
    }
}

/// The token a request names in `_meta.progressToken`, echoed by the progress
/// notifications that belong to it: a string or an integer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProgressToken {
    /// A string token.
    String(String),
    /// A number token, kept as its exact text.
    Number(Number),
}

impl ProgressToken {
    /// Reads a token; `None` for anything but a string or a number.
    pub fn from_value(value: &Value) -> Option<ProgressToken> {
        match value {
            Value::String(s) => Some(ProgressToken::String(String::from(s.as_str()))),
            Value::Number(n) => Some(ProgressToken::Number(n.clone())),
            _ => None,
        }
    }

    /// Writes the token.
    pub fn to_value(&self) -> Value {
        match self {
            ProgressToken::String(s) => Value::from(s.as_str()),
            ProgressToken::Number(n) => Value::Number(n.clone()),
        }
    }

    /// The integer this token is, if it is one.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            ProgressToken::Number(n) => n.as_u64(),
            ProgressToken::String(_) => None,
        }
    }
}

/// Params of `tools/call`.
#[derive(Clone, Debug, PartialEq)]
pub struct CallToolRequestParams {
    /// `name`: the tool.
    pub name: String,
    /// `arguments`, if any (an object).
    pub arguments: Option<Value>,
    /// `_meta.progressToken`: where the caller wants progress, if anywhere.
    pub progress_token: Option<ProgressToken>,
}

impl CallToolRequestParams {
    /// Reads the params of a `tools/call` request.
    pub fn from_value(value: &Value) -> Result<CallToolRequestParams, ShapeError> {
        let object = as_object(value, "")?;
        let arguments = match object.get("arguments") {
            None | Some(Value::Null) => None,
            Some(arguments @ Value::Object(_)) => Some(arguments.clone()),
            Some(_) => return Err(ShapeError::new("arguments", "an object")),
        };
        let progress_token =
            match object.get("_meta").map(|meta| &meta["progressToken"]) {
                None | Some(Value::Null) => None,
                Some(token) => Some(ProgressToken::from_value(token).ok_or_else(|| {
                    ShapeError::new("_meta.progressToken", "a string or a number")
                })?),
            };
        Ok(CallToolRequestParams {
            name: required_str(object, "name")?,
            arguments,
            progress_token,
        })
    }

    /// Writes the params.
    pub fn to_value(&self) -> Value {
        let meta = self
            .progress_token
            .as_ref()
            .map(|token| Value::Object(Object::from_iter([("progressToken", token.to_value())])));
        object([
            ("name", Some(Value::from(self.name.as_str()))),
            ("arguments", self.arguments.clone()),
            ("_meta", meta),
        ])
    }
}

/// The result of `tools/call`.
#[derive(Clone, Debug, PartialEq)]
pub struct CallToolResult {
    /// `content`: the content blocks, each an object.
    pub content: Vec<ContentBlock>,
    /// `structuredContent`, if any.
    pub structured_content: Option<Value>,
    /// `isError`: the tool ran and failed. Absent reads as `false`.
    pub is_error: bool,
}

impl CallToolResult {
    /// Reads a `tools/call` result.
    pub fn from_value(value: &Value) -> Result<CallToolResult, ShapeError> {
        let object = as_object(value, "")?;
        let content = match object.get("content") {
            // Only the 2025-06-18 protocol may leave `content` out (for
            // `structuredContent`); it reads as empty.
            None => Vec::new(),
            Some(Value::Array(items)) => {
                let mut content = Vec::with_capacity(items.len());
                for (index, item) in items.iter().enumerate() {
                    let Value::Object(item) = item else {
                        let member = alloc::format!("content[{index}]");
                        return Err(ShapeError::new(member, "an object"));
                    };
                    content.push(ContentBlock::from_object(item));
                }
                content
            }
            Some(_) => return Err(ShapeError::new("content", "an array")),
        };
        let is_error = match object.get("isError") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(ShapeError::new("isError", "a boolean")),
        };
        Ok(CallToolResult {
            content,
            structured_content: object.get("structuredContent").cloned(),
            is_error,
        })
    }

    /// Writes the result (`isError` always).
    pub fn to_value(&self) -> Value {
        object([
            (
                "content",
                Some(Value::Array(
                    self.content.iter().map(ContentBlock::to_value).collect(),
                )),
            ),
            ("structuredContent", self.structured_content.clone()),
            ("isError", Some(Value::Bool(self.is_error))),
        ])
    }
}

/// One content block of a tool result.
///
/// The known blocks are read from their members; a block of another type, or a known
/// type whose members do not fit, is [`Unknown`](ContentBlock::Unknown), kept whole.
/// `annotations` and `_meta` are not read.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ContentBlock {
    /// `{"type": "text", "text"}`.
    Text {
        /// The text.
        text: String,
    },
    /// `{"type": "image", "data", "mimeType"}`: base64 image data.
    Image {
        /// The base64 bytes.
        data: String,
        /// Such as `image/png`.
        mime_type: String,
    },
    /// `{"type": "audio", "data", "mimeType"}`: base64 audio data.
    Audio {
        /// The base64 bytes.
        data: String,
        /// Such as `audio/wav`.
        mime_type: String,
    },
    /// `{"type": "resource_link", "uri", "name", ...}`: a resource the client may read.
    ResourceLink {
        /// The resource's URI.
        uri: String,
        /// Its name.
        name: String,
        /// `mimeType`, if given.
        mime_type: Option<String>,
        /// `size` in bytes, if given.
        size: Option<u64>,
    },
    /// `{"type": "resource", "resource": {...}}`: a resource embedded whole.
    Resource(ResourceContents),
    /// A block this crate does not read, kept as it came.
    Unknown(Object),
}

/// The contents of an embedded resource: text or a base64 blob.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ResourceContents {
    /// `{"uri", "mimeType"?, "text"}`.
    Text {
        /// The resource's URI.
        uri: String,
        /// `mimeType`, if given.
        mime_type: Option<String>,
        /// The text.
        text: String,
    },
    /// `{"uri", "mimeType"?, "blob"}`.
    Blob {
        /// The resource's URI.
        uri: String,
        /// `mimeType`, if given.
        mime_type: Option<String>,
        /// The base64 bytes.
        blob: String,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> ContentBlock {
        ContentBlock::Text { text: text.into() }
    }

    /// Reads a content block; never fails (see the type's docs).
    pub fn from_object(item: &Object) -> ContentBlock {
        ContentBlock::read(item).unwrap_or_else(|| ContentBlock::Unknown(item.clone()))
    }

    fn read(item: &Object) -> Option<ContentBlock> {
        let kind = item.get("type")?.as_str()?;
        let string = |name: &str| required_str(item, name).ok();
        Some(match kind {
            "text" => ContentBlock::Text {
                text: string("text")?,
            },
            "image" => ContentBlock::Image {
                data: string("data")?,
                mime_type: string("mimeType")?,
            },
            "audio" => ContentBlock::Audio {
                data: string("data")?,
                mime_type: string("mimeType")?,
            },
            "resource_link" => ContentBlock::ResourceLink {
                uri: string("uri")?,
                name: string("name")?,
                mime_type: optional_str(item, "mimeType").ok()?,
                size: match item.get("size") {
                    None | Some(Value::Null) => None,
                    Some(size) => Some(size.as_u64()?),
                },
            },
            "resource" => {
                let resource = item.get("resource")?.as_object()?;
                let uri = required_str(resource, "uri").ok()?;
                let mime_type = optional_str(resource, "mimeType").ok()?;
                match (resource.get("text"), resource.get("blob")) {
                    (Some(Value::String(text)), None) => {
                        ContentBlock::Resource(ResourceContents::Text {
                            uri,
                            mime_type,
                            text: String::from(text.as_str()),
                        })
                    }
                    (None, Some(Value::String(blob))) => {
                        ContentBlock::Resource(ResourceContents::Blob {
                            uri,
                            mime_type,
                            blob: String::from(blob.as_str()),
                        })
                    }
                    _ => return None,
                }
            }
            _ => return None,
        })
    }

    /// Writes the block.
    pub fn to_value(&self) -> Value {
        let s = |s: &str| Some(Value::from(s));
        match self {
            ContentBlock::Text { text } => object([("type", s("text")), ("text", s(text))]),
            ContentBlock::Image { data, mime_type } => object([
                ("type", s("image")),
                ("data", s(data)),
                ("mimeType", s(mime_type)),
            ]),
            ContentBlock::Audio { data, mime_type } => object([
                ("type", s("audio")),
                ("data", s(data)),
                ("mimeType", s(mime_type)),
            ]),
            ContentBlock::ResourceLink {
                uri,
                name,
                mime_type,
                size,
            } => object([
                ("type", s("resource_link")),
                ("uri", s(uri)),
                ("name", s(name)),
                ("mimeType", mime_type.as_deref().map(Value::from)),
                ("size", size.map(Value::from)),
            ]),
            ContentBlock::Resource(contents) => {
                let resource = match contents {
                    ResourceContents::Text {
                        uri,
                        mime_type,
                        text,
                    } => object([
                        ("uri", s(uri)),
                        ("mimeType", mime_type.as_deref().map(Value::from)),
                        ("text", s(text)),
                    ]),
                    ResourceContents::Blob {
                        uri,
                        mime_type,
                        blob,
                    } => object([
                        ("uri", s(uri)),
                        ("mimeType", mime_type.as_deref().map(Value::from)),
                        ("blob", s(blob)),
                    ]),
                };
                object([("type", s("resource")), ("resource", Some(resource))])
            }
            ContentBlock::Unknown(item) => Value::Object(item.clone()),
        }
    }
}

// ---- Notifications ----------------------------------------------------------------

/// Params of `notifications/progress`.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgressNotificationParams {
    /// `progressToken`: the request this belongs to.
    pub progress_token: ProgressToken,
    /// `progress`: how far, increasing with every notification.
    pub progress: Number,
    /// `total`, if known.
    pub total: Option<Number>,
    /// `message`, if any.
    pub message: Option<String>,
}

impl ProgressNotificationParams {
    /// Reads the params.
    pub fn from_value(value: &Value) -> Result<ProgressNotificationParams, ShapeError> {
        let object = as_object(value, "")?;
        let progress_token = object
            .get("progressToken")
            .and_then(ProgressToken::from_value)
            .ok_or_else(|| ShapeError::new("progressToken", "a string or a number"))?;
        Ok(ProgressNotificationParams {
            progress_token,
            progress: optional_number(object, "progress")?
                .ok_or_else(|| ShapeError::new("progress", "a number"))?,
            total: optional_number(object, "total")?,
            message: optional_str(object, "message")?,
        })
    }

    /// Writes the params.
    pub fn to_value(&self) -> Value {
        object([
            ("progressToken", Some(self.progress_token.to_value())),
            ("progress", Some(Value::Number(self.progress.clone()))),
            ("total", self.total.clone().map(Value::Number)),
            ("message", self.message.as_deref().map(Value::from)),
        ])
    }

    /// The text a Dhara `progress` notification carries for this: the message, else
    /// `progress/total` or `progress`.
    pub fn text(&self) -> String {
        match (&self.message, &self.total) {
            (Some(message), _) => message.clone(),
            (None, Some(total)) => alloc::format!("{}/{}", self.progress, total),
            (None, None) => alloc::format!("{}", self.progress),
        }
    }
}

/// Params of `notifications/message`: a log message from the server.
#[derive(Clone, Debug, PartialEq)]
pub struct LoggingMessageNotificationParams {
    /// `level`: `debug`, `info`, `notice`, `warning`, `error`, `critical`, `alert`,
    /// `emergency`.
    pub level: String,
    /// `logger`, if given.
    pub logger: Option<String>,
    /// `data`: any JSON value.
    pub data: Value,
}

impl LoggingMessageNotificationParams {
    /// Reads the params.
    pub fn from_value(value: &Value) -> Result<LoggingMessageNotificationParams, ShapeError> {
        let object = as_object(value, "")?;
        Ok(LoggingMessageNotificationParams {
            level: required_str(object, "level")?,
            logger: optional_str(object, "logger")?,
            data: object.get("data").cloned().unwrap_or_default(),
        })
    }
}

/// Params of `notifications/cancelled`.
#[derive(Clone, Debug, PartialEq)]
pub struct CancelledNotificationParams {
    /// `requestId`: the request to cancel.
    pub request_id: Id,
    /// `reason`, if given.
    pub reason: Option<String>,
}

impl CancelledNotificationParams {
    /// Reads the params.
    pub fn from_value(value: &Value) -> Result<CancelledNotificationParams, ShapeError> {
        let object = as_object(value, "")?;
        let request_id = match object.get("requestId") {
            Some(Value::String(s)) => Id::from(s.as_str()),
            Some(Value::Number(n)) if n.is_integer() => Id::Number(n.clone()),
            _ => return Err(ShapeError::new("requestId", "a string or an integer")),
        };
        Ok(CancelledNotificationParams {
            request_id,
            reason: optional_str(object, "reason")?,
        })
    }

    /// Writes the params.
    pub fn to_value(&self) -> Value {
        let request_id = match &self.request_id {
            Id::Number(n) => Value::Number(n.clone()),
            Id::String(s) => Value::from(s.as_str()),
            Id::Null => Value::Null,
        };
        object([
            ("requestId", Some(request_id)),
            ("reason", self.reason.as_deref().map(Value::from)),
        ])
    }
}
