//! The Dhara methods: names, typed params and results, and content items.
//!
//! Each type converts to and from [`json::Value`](crate::json::Value) with a
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

use alloc::string::String;
use alloc::vec::Vec;

use crate::json::{Object, Value};
use crate::rpc::Id;

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
    /// `isError`.
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
