//! [`Server`]: a Dhara extension, served as an MCP server.

use alloc::collections::{BTreeMap, VecDeque};
use alloc::format;
use alloc::string::String;

use super::types::{
    CallToolRequestParams, CallToolResult, CancelledNotificationParams, ContentBlock,
    Implementation, InitializeRequestParams, InitializeResult, ListToolsResult,
    ProgressNotificationParams, ProgressToken,
};
use super::{Decoder, LATEST_PROTOCOL_VERSION, Outbox, Received, SUPPORTED_PROTOCOL_VERSIONS};
use crate::host::{self, CallError, CallId, CallOptions, Core, Reply, State, UsageError};
use crate::json::{Number, Object, Value};
use crate::message::{Content, ExecuteParams, InitializeParams, ToolResult};
use crate::rpc::{ErrorCode, ErrorObject, Id, Message, Notification, Response};
use crate::time::Instant;

/// The JSON-RPC error code of a call whose Dhara deadline passed (the code the MCP
/// TypeScript SDK uses for a request timeout).
pub const REQUEST_TIMEOUT: i64 = -32001;

/// The JSON-RPC error code of a request other than `initialize` and `ping` before
/// the server is initialized (the Dhara protocol's code for the same).
pub const NOT_INITIALIZED: i64 = crate::message::NOT_INITIALIZED;

/// The JSON-RPC error code of a call the extension can no longer run: it is shutting
/// down or has exited.
pub const EXTENSION_GONE: i64 = -32000;

/// Settings of a [`Server`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerConfig {
    /// The Core's configuration: the Dhara timeout, grace and limits that apply to the
    /// extension.
    pub core: host::Config,
    /// The working directory sent in the Dhara `initialize`.
    pub cwd: String,
    /// The longest line accepted from the MCP client. Default 64 MiB.
    pub max_line_bytes: usize,
}

impl ServerConfig {
    /// The default settings, with the session's working directory.
    pub fn new(cwd: impl Into<String>) -> ServerConfig {
        ServerConfig {
            core: host::Config::default(),
            cwd: cwd.into(),
            max_line_bytes: crate::frame::DEFAULT_MAX_LINE_BYTES,
        }
    }

    /// Sets [`core`](ServerConfig::core).
    #[must_use]
    pub fn core(mut self, core: host::Config) -> ServerConfig {
        self.core = core;
        self
    }
}

/// What happened on either side of a [`Server`], handed to [`Server::handle_input`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerInput<'a> {
    /// Bytes from the MCP client: this process's stdin.
    Mcp(&'a [u8]),
    /// The MCP client closed its end: this process's stdin ended. MCP's stdio
    /// shutdown: the extension is shut down, and the server exits.
    McpClosed,
    /// What happened to the Dhara extension process, as [`Core::handle_input`] takes
    /// it (its stdout, the end of it, its exit, or time passing).
    Extension(host::Input<'a>),
}

/// What the driver of a [`Server`] should do next.
#[derive(Debug, PartialEq)]
#[must_use = "an output is an action for the driver: dropping it loses it"]
pub enum ServerOutput<'a> {
    /// Write these bytes (whole lines) to the MCP client: this process's stdout.
    ToMcp(&'a [u8]),
    /// Write these bytes (whole lines) to the extension's stdin.
    ToExtension(&'a [u8]),
    /// Close the extension's stdin once the bytes given before are written: the
    /// Core's [`host::Output::CloseStdin`], after `shutdown`.
    CloseExtensionStdin,
    /// Kill the extension (and its process group), then report its exit.
    Kill,
    /// Something for the log (stderr).
    Event(ServerEvent),
    /// Exit with this code: the extension has exited. Nothing follows it.
    Exit {
        /// `0` when the MCP client ended the session, `1` when the extension went
        /// first (it crashed, or was shut down after a timeout).
        code: i32,
    },
    /// Nothing to do until input arrives or this instant passes (then report
    /// [`host::Input::Timeout`]).
    Wait(Option<Instant>),
}

/// Something for the log: the server has handled it already.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ServerEvent {
    /// The MCP `initialize` was answered.
    Initialized {
        /// The client's `clientInfo`.
        client_info: Implementation,
        /// The protocol version answered.
        protocol_version: String,
    },
    /// The MCP client broke the protocol or sent something that does not fit; it was
    /// answered where JSON-RPC says so.
    McpProtocol {
        /// What was wrong.
        problem: String,
    },
    /// An event of the Core the bridge does not turn into MCP: the extension's
    /// protocol mistakes, the shutdown and its reason, the extension's exit.
    Extension(host::Event),
}

/// A `tools/call` in flight as a Dhara call.
#[derive(Clone, Debug)]
struct McpCall {
    /// The MCP request's id, which the answer echoes.
    id: Id,
    progress_token: Option<ProgressToken>,
    /// Progress notifications sent so far (`progress` counts them, increasing).
    progress_sent: u64,
}

/// A Dhara extension served as an MCP server: `dhara mcp serve`.
///
/// The MCP side is an MCP server facing the client on this process's stdin and
/// stdout; the Dhara side is a [`Core`] facing the extension process. It does no I/O
/// and reads no clock: hand it input with the current time, then poll until
/// [`ServerOutput::Wait`] (whose deadline is the Core's) or [`ServerOutput::Exit`].
///
/// # What it does
///
/// * **`initialize`** is answered once the Dhara `initialize` (sent when it comes)
///   is; what the client sends meanwhile is read after the answer. It is answered
///   with the client's protocol version when it is one of
///   [`SUPPORTED_PROTOCOL_VERSIONS`], else [`LATEST_PROTOCOL_VERSION`];
///   `capabilities: {tools: {listChanged: true}}`; `serverInfo` from the extension's
///   name and version. Requests before it, but `ping`, get [`NOT_INITIALIZED`].
/// * **`tools/list`** gives the extension's tools in one page (a tool without an
///   `inputSchema` gets `{"type": "object"}`, which MCP requires).
/// * **`tools/call`** becomes `tools/execute`. Dhara content maps to MCP blocks: text
///   and image data as they are, an image path or a file as a `resource_link` to its
///   `file:` URI, an unknown item as it is when it is an MCP block, else as one text
///   block of its JSON. `isError` stays; a JSON-RPC error stays; a timeout is
///   [`REQUEST_TIMEOUT`]; an unknown tool or input the schema refuses is -32602.
/// * **Progress.** When the call named a `progressToken`, each Dhara `progress` for
///   it becomes `notifications/progress` with that token, `progress` counting 1, 2,
///   ... and the message.
/// * **`ping`** is answered `{}`. **`notifications/cancelled`** ends the Dhara call
///   ([`Core::cancel`]); no answer is sent for it, as MCP asks.
/// * A `tools/list` notification from the extension becomes
///   `notifications/tools/list_changed`.
/// * **The end.** The end of stdin shuts the extension down (`shutdown`, the grace,
///   the kill: the Core's rules), then [`ServerOutput::Exit`] with 0. When the
///   extension exits first (after a crash, or a timeout's shutdown), the calls in
///   flight get [`EXTENSION_GONE`] and the server exits with 1.
#[derive(Debug)]
pub struct Server {
    config: ServerConfig,
    core: Core,
    now: Instant,
    decoder: Decoder,
    to_mcp: Outbox,
    to_extension: Outbox,
    events: VecDeque<ServerEvent>,
    /// The MCP `initialize` waiting for the Dhara one: its id, the version to
    /// answer, the client, and the Dhara call.
    initializing: Option<(Id, String, Implementation, CallId)>,
    /// The version answered, once `initialize` was answered.
    initialized: Option<String>,
    calls: BTreeMap<CallId, McpCall>,
    mcp_closed: bool,
    shutdown_requested: bool,
    exit_code: Option<i32>,
    exited: bool,
}

impl Server {
    /// A server with nothing sent yet: the Dhara `initialize` goes out when the MCP one
    /// comes.
    pub fn new(config: ServerConfig) -> Server {
        Server {
            core: Core::new(config.core.clone()),
            decoder: Decoder::new(config.max_line_bytes),
            config,
            now: Instant::ZERO,
            to_mcp: Outbox::default(),
            to_extension: Outbox::default(),
            events: VecDeque::new(),
            initializing: None,
            initialized: None,
            calls: BTreeMap::new(),
            mcp_closed: false,
            shutdown_requested: false,
            exit_code: None,
            exited: false,
        }
    }

    /// Tells the server what happened at `now`. Then poll until [`ServerOutput::Wait`].
    pub fn handle_input(&mut self, now: Instant, input: ServerInput<'_>) {
        self.now = self.now.max(now);
        if self.exited {
            return;
        }
        match input {
            ServerInput::Mcp(bytes) if !self.mcp_closed => self.decoder.push(bytes),
            ServerInput::Mcp(_) => {}
            ServerInput::McpClosed => {
                if !self.mcp_closed {
                    self.mcp_closed = true;
                    self.decoder.end();
                }
            }
            ServerInput::Extension(input) => self.core.handle_input(now, input),
        }
    }

    /// What to do next. Call it until it returns [`ServerOutput::Wait`] or
    /// [`ServerOutput::Exit`].
    pub fn poll_output(&mut self) -> ServerOutput<'_> {
        self.to_mcp.reclaim();
        self.to_extension.reclaim();
        loop {
            if self.to_mcp.is_pending() {
                return ServerOutput::ToMcp(self.to_mcp.hand_out());
            }
            if self.to_extension.is_pending() {
                return ServerOutput::ToExtension(self.to_extension.hand_out());
            }
            if let Some(event) = self.events.pop_front() {
                return ServerOutput::Event(event);
            }
            if self.exited {
                return ServerOutput::Wait(None);
            }
            if let Some(code) = self.exit_code {
                self.exited = true;
                return ServerOutput::Exit { code };
            }
            // The Core runs until it waits before the next MCP line is read, so what
            // the client sees does not depend on how its input was chunked.
            let deadline = match self.core.poll_output() {
                host::Output::Transmit(bytes) => {
                    self.to_extension.extend(bytes);
                    continue;
                }
                host::Output::Event(event) => {
                    self.handle_core(event);
                    continue;
                }
                host::Output::CloseStdin => return ServerOutput::CloseExtensionStdin,
                host::Output::Kill => return ServerOutput::Kill,
                host::Output::Wait(deadline) => deadline,
            };
            // While `initialize` waits for the extension, what the client sends after
            // it waits too (in the decoder), as if it had waited for the answer.
            if let Some(received) = self
                .initializing
                .is_none()
                .then(|| self.decoder.next())
                .flatten()
            {
                self.handle_mcp(received);
                continue;
            }
            if self.mcp_closed && !self.shutdown_requested && self.initializing.is_none() {
                self.shutdown_requested = true;
                // Refused only when the extension is shutting down or gone already.
                let _ = self.core.shutdown(self.now);
                continue;
            }
            return ServerOutput::Wait(deadline);
        }
    }

    /// The Core facing the extension.
    pub fn core(&self) -> &Core {
        &self.core
    }

    // ---- The MCP side --------------------------------------------------------------

    fn answer(&mut self, id: Id, outcome: Result<Value, ErrorObject>) {
        self.to_mcp
            .message(&Message::Response(Response { id, outcome }));
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.to_mcp.message(&Message::Notification(Notification {
            method: String::from(method),
            params: Some(params),
        }));
    }

    fn handle_mcp(&mut self, received: Received) {
        match received {
            Received::Message(Message::Request(request)) => {
                let params = request.params.unwrap_or_default();
                self.handle_request(request.id, &request.method, &params);
            }
            Received::Message(Message::Notification(notification)) => {
                if notification.method == super::method::CANCELLED {
                    let params = notification.params.unwrap_or_default();
                    match CancelledNotificationParams::from_value(&params) {
                        Ok(cancelled) => self.cancel(&cancelled.request_id),
                        Err(e) => self.problem(format!("notifications/cancelled: {e}")),
                    }
                }
                // `notifications/initialized` and the rest need nothing.
            }
            Received::Message(Message::Response(response)) => self.problem(format!(
                "a response (id {}) to a request never sent",
                response.id
            )),
            Received::Invalid(error) => {
                self.problem(format!("{error}"));
                // A request that breaks JSON-RPC is answered as JSON-RPC says; what
                // looks like a response is not (no error storm).
                if !error.is_response_like() {
                    let response = error.to_response();
                    self.to_mcp.message(&Message::Response(response));
                }
            }
            Received::TooLong { len } => {
                self.problem(format!("a line of {len} bytes is over the limit"))
            }
            Received::Truncated { len } => {
                self.problem(format!("the input ended inside a line of {len} bytes"))
            }
        }
    }

    fn handle_request(&mut self, id: Id, method: &str, params: &Value) {
        match method {
            super::method::PING => self.answer(id, Ok(Value::Object(Object::new()))),
            super::method::INITIALIZE => self.initialize(id, params),
            _ if self.initialized.is_none() => {
                let error = ErrorObject::new(NOT_INITIALIZED, "Server not initialized");
                self.answer(id, Err(error));
            }
            super::method::TOOLS_LIST => {
                let outcome = if params.get("cursor").is_some_and(|c| !c.is_null()) {
                    // The list is always one page: no cursor was ever given out.
                    Err(ErrorObject::new(
                        ErrorCode::INVALID_PARAMS,
                        "Invalid cursor",
                    ))
                } else {
                    Ok(self.tool_list().to_value())
                };
                self.answer(id, outcome);
            }
            super::method::TOOLS_CALL => match CallToolRequestParams::from_value(params) {
                Ok(call) => self.call(id, call),
                Err(e) => {
                    let error =
                        ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("Invalid params: {e}"));
                    self.answer(id, Err(error));
                }
            },
            _ => {
                let error =
                    ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "Method not found").with_data(
                        Value::Object(Object::from_iter([("method", Value::from(method))])),
                    );
                self.answer(id, Err(error));
            }
        }
    }

    fn initialize(&mut self, id: Id, params: &Value) {
        if self.initializing.is_some() || self.initialized.is_some() {
            let error = ErrorObject::new(ErrorCode::INVALID_REQUEST, "Already initialized");
            return self.answer(id, Err(error));
        }
        let params = match InitializeRequestParams::from_value(params) {
            Ok(params) => params,
            Err(e) => {
                let error =
                    ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("Invalid params: {e}"));
                return self.answer(id, Err(error));
            }
        };
        let version = if SUPPORTED_PROTOCOL_VERSIONS.contains(&params.protocol_version.as_str()) {
            params.protocol_version
        } else {
            String::from(LATEST_PROTOCOL_VERSION)
        };
        let dhara_params = InitializeParams::new(self.config.cwd.as_str());
        match self.core.initialize(self.now, dhara_params) {
            Ok(call) => self.initializing = Some((id, version, params.client_info, call)),
            Err(e) => {
                let error =
                    ErrorObject::new(EXTENSION_GONE, format!("The extension is unavailable: {e}"));
                self.answer(id, Err(error));
            }
        }
    }

    /// The extension's tools, as MCP lists them.
    fn tool_list(&self) -> ListToolsResult {
        let tools = self
            .core
            .tools()
            .iter()
            .map(|tool| super::types::Tool {
                name: tool.name.clone(),
                title: None,
                description: tool.description.clone(),
                input_schema: match &tool.input_schema {
                    Some(schema @ Value::Object(_)) => schema.clone(),
                    // MCP requires an object schema; `true` or none accepts anything.
                    _ => Value::Object(Object::from_iter([("type", Value::from("object"))])),
                },
            })
            .collect();
        ListToolsResult {
            tools,
            next_cursor: None,
        }
    }

    fn call(&mut self, id: Id, call: CallToolRequestParams) {
        let input = call
            .arguments
            .unwrap_or_else(|| Value::Object(Object::new()));
        let params = ExecuteParams::new(call.name.as_str(), input);
        match self
            .core
            .execute_with(self.now, params, CallOptions::default())
        {
            Ok(dhara_call) => {
                self.calls.insert(
                    dhara_call,
                    McpCall {
                        id,
                        progress_token: call.progress_token,
                        progress_sent: 0,
                    },
                );
            }
            Err(e) => {
                let code = match e {
                    UsageError::UnknownTool { .. } | UsageError::InvalidInput { .. } => {
                        ErrorCode::INVALID_PARAMS
                    }
                    UsageError::ShuttingDown | UsageError::Closed => ErrorCode::new(EXTENSION_GONE),
                    _ => ErrorCode::INTERNAL_ERROR,
                };
                let message = match &e {
                    UsageError::UnknownTool { name } => format!("Unknown tool: {name}"),
                    UsageError::InvalidInput { error, .. } => String::from(error.message()),
                    other => format!("{other}"),
                };
                self.answer(id, Err(ErrorObject::new(code, message)));
            }
        }
    }

    fn cancel(&mut self, request_id: &Id) {
        let call = self
            .calls
            .iter()
            .find(|(_, call)| call.id == *request_id)
            .map(|(call, _)| *call);
        // A cancellation may cross the answer: then there is nothing to end.
        if let Some(call) = call {
            self.calls.remove(&call);
            let cancelled = self.core.cancel(self.now, call);
            debug_assert!(cancelled.is_ok(), "a call in the map is in flight");
        }
    }

    fn problem(&mut self, problem: String) {
        self.events.push_back(ServerEvent::McpProtocol { problem });
    }

    // ---- The Dhara side ------------------------------------------------------------

    fn handle_core(&mut self, event: host::Event) {
        match event {
            host::Event::CallEnded { call, result } => self.call_ended(call, result),
            host::Event::Progress {
                call: Some(call),
                progress,
            } => {
                let Some(mcp) = self.calls.get_mut(&call) else {
                    return;
                };
                let Some(token) = mcp.progress_token.clone() else {
                    return;
                };
                mcp.progress_sent += 1;
                let params = ProgressNotificationParams {
                    progress_token: token,
                    progress: Number::from(mcp.progress_sent),
                    total: None,
                    message: Some(progress.message),
                };
                self.notify(super::method::PROGRESS, params.to_value());
            }
            host::Event::ToolsChanged { .. } if self.initialized.is_some() => {
                self.notify(
                    super::method::TOOLS_LIST_CHANGED,
                    Value::Object(Object::new()),
                );
            }
            host::Event::Closed { code } => {
                self.events
                    .push_back(ServerEvent::Extension(host::Event::Closed { code }));
                self.exit_code = Some(if self.shutdown_requested { 0 } else { 1 });
            }
            host::Event::Progress { call: None, .. } | host::Event::ToolsChanged { .. } => {}
            other => self.events.push_back(ServerEvent::Extension(other)),
        }
    }

    fn call_ended(&mut self, call: CallId, result: Result<Reply, CallError>) {
        if let Some((id, version, client_info, _)) = self
            .initializing
            .take_if(|(_, _, _, initialize)| *initialize == call)
        {
            return self.initialize_ended(id, version, client_info, result);
        }
        // A cancelled call was taken out already: MCP wants no answer for it.
        let Some(mcp) = self.calls.remove(&call) else {
            return;
        };
        let outcome = match result {
            Ok(Reply::Executed(result)) => Ok(mcp_result(result).to_value()),
            Ok(_) => Err(ErrorObject::new(
                ErrorCode::INTERNAL_ERROR,
                "the extension answered tools/execute with another kind of result",
            )),
            Err(CallError::Rpc(error)) => Err(error),
            Err(CallError::Timeout { .. }) => Err(ErrorObject::new(
                REQUEST_TIMEOUT,
                "Request timed out: the extension did not answer in time",
            )),
            Err(CallError::ExtensionExited { .. }) => Err(ErrorObject::new(
                EXTENSION_GONE,
                "the extension exited before answering",
            )),
            Err(CallError::Cancelled) => return,
            Err(other) => Err(ErrorObject::new(
                ErrorCode::INTERNAL_ERROR,
                format!("{other}"),
            )),
        };
        self.answer(mcp.id, outcome);
    }

    fn initialize_ended(
        &mut self,
        id: Id,
        version: String,
        client_info: Implementation,
        result: Result<Reply, CallError>,
    ) {
        match result {
            Ok(Reply::Initialized(info)) => {
                let result = InitializeResult {
                    protocol_version: version.clone(),
                    capabilities: Value::Object(Object::from_iter([(
                        "tools",
                        Value::Object(Object::from_iter([("listChanged", Value::Bool(true))])),
                    )])),
                    server_info: Implementation::new(info.name, info.version),
                    instructions: None,
                };
                self.answer(id, Ok(result.to_value()));
                self.initialized = Some(version.clone());
                self.events.push_back(ServerEvent::Initialized {
                    client_info,
                    protocol_version: version,
                });
            }
            Ok(_) => self.answer(
                id,
                Err(ErrorObject::new(
                    ErrorCode::INTERNAL_ERROR,
                    "the extension answered initialize with another kind of result",
                )),
            ),
            Err(e) => {
                let code = match (&e, self.core.state()) {
                    (CallError::Rpc(error), _) => error.code,
                    (_, State::ShuttingDown | State::Closed) => ErrorCode::new(EXTENSION_GONE),
                    _ => ErrorCode::INTERNAL_ERROR,
                };
                let error =
                    ErrorObject::new(code, format!("The extension did not initialize: {e}"));
                self.answer(id, Err(error));
            }
        }
    }
}

/// The MCP result for a Dhara result, item by item.
fn mcp_result(result: ToolResult) -> CallToolResult {
    CallToolResult {
        content: result.content.into_iter().map(mcp_content).collect(),
        structured_content: None,
        is_error: result.is_error,
    }
}

/// The MCP block for a Dhara content item.
fn mcp_content(item: Content) -> ContentBlock {
    match item {
        Content::Text { text } => ContentBlock::text(text.into_string()),
        Content::ImageData { mime_type, data } => ContentBlock::Image { data, mime_type },
        Content::ImagePath { path, mime_type } => resource_link(&path, mime_type, None),
        Content::File {
            path,
            size,
            mime_type,
        } => resource_link(&path, mime_type, size),
        Content::Unknown(item) => match ContentBlock::from_object(&item) {
            // Already an MCP block (from `mcp adapt`, say): as it came.
            ContentBlock::Unknown(item) => json_text(&Value::Object(item)),
            _ => ContentBlock::Unknown(item),
        },
    }
}

/// One text block holding a value's JSON.
fn json_text(value: &Value) -> ContentBlock {
    ContentBlock::text(String::from_utf8_lossy(&crate::json::to_vec(value)).into_owned())
}

/// A `resource_link` to a local file.
fn resource_link(path: &str, mime_type: Option<String>, size: Option<u64>) -> ContentBlock {
    let name = path
        .rsplit('/')
        .find(|part| !part.is_empty())
        .unwrap_or(path);
    ContentBlock::ResourceLink {
        uri: file_uri(path),
        name: String::from(name),
        mime_type,
        size,
    }
}

/// The `file:` URI of a path: bytes other than unreserved ones and `/` escaped.
fn file_uri(path: &str) -> String {
    let mut uri = String::from("file://");
    if !path.starts_with('/') {
        uri.push('/');
    }
    for &byte in path.as_bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_escape_what_is_not_unreserved() {
        assert_eq!(file_uri("/tmp/a b.png"), "file:///tmp/a%20b.png");
        assert_eq!(file_uri("/tmp/é"), "file:///tmp/%C3%A9");
        assert_eq!(file_uri("rel/x"), "file:///rel/x");
    }

    #[test]
    fn dhara_items_map_to_mcp_blocks() {
        let file = Content::File {
            path: String::from("/tmp/out.csv"),
            size: Some(12),
            mime_type: Some(String::from("text/csv")),
        };
        assert_eq!(
            mcp_content(file).to_value(),
            crate::json::json!({"type": "resource_link", "uri": "file:///tmp/out.csv", "name": "out.csv", "mimeType": "text/csv", "size": 12})
        );
        let audio = crate::json::json!({"type": "audio", "data": "AAA=", "mimeType": "audio/wav"});
        let Value::Object(audio) = audio else {
            unreachable!()
        };
        assert_eq!(
            mcp_content(Content::Unknown(audio.clone())),
            ContentBlock::Unknown(audio)
        );
        let odd = Object::from_iter([("type", Value::from("chart"))]);
        assert_eq!(
            mcp_content(Content::Unknown(odd)),
            ContentBlock::text(r#"{"type":"chart"}"#)
        );
    }
}
