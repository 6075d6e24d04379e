//! [`Adapter`]: an MCP server, served as a Dhara extension.

use alloc::collections::{BTreeMap, VecDeque};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::types::{
    CallToolRequestParams, CallToolResult, ContentBlock, Implementation, InitializeRequestParams,
    InitializeResult, ListToolsResult, LoggingMessageNotificationParams,
    ProgressNotificationParams, ProgressToken, ResourceContents, ShapeError,
};
use super::{Decoder, LATEST_PROTOCOL_VERSION, Outbox, Received, SUPPORTED_PROTOCOL_VERSIONS};
use crate::extension::{self, Extension, RequestHandle, ServerInfo};
use crate::json::{Object, Value};
use crate::message::{Content, Tool, ToolResult};
use crate::rpc::{ErrorCode, ErrorObject, Id, Message, Notification, Request, Response};

/// The JSON-RPC error a Dhara call gets when the MCP server exited before answering.
pub const MCP_SERVER_EXITED: i64 = -32000;

/// Settings of an [`Adapter`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AdapterConfig {
    /// The `clientInfo` sent in the MCP `initialize`. Default `dhara` and this crate's
    /// version.
    pub client_info: Implementation,
    /// The longest line accepted from the MCP server. Default 64 MiB.
    pub max_line_bytes: usize,
    /// The most tools kept from the server's list; past it, the rest are left out
    /// and reported. Default 10,000.
    pub max_tools: usize,
    /// The most `tools/list` pages followed for one list. Default 1,000.
    pub max_pages: usize,
    /// The Dhara side's endpoint. Its `validate_input` is on, as for any extension:
    /// input that fails a tool's `inputSchema` is answered with -32602 before it
    /// reaches the MCP server (many MCP servers answer it with `isError` instead,
    /// which the Dhara protocol keeps for tools that ran).
    pub extension: extension::Config,
}

impl Default for AdapterConfig {
    fn default() -> AdapterConfig {
        AdapterConfig {
            client_info: Implementation::new("dhara", env!("CARGO_PKG_VERSION")),
            max_line_bytes: crate::frame::DEFAULT_MAX_LINE_BYTES,
            max_tools: 10_000,
            max_pages: 1_000,
            extension: extension::Config::default(),
        }
    }
}

/// What happened on either side of an [`Adapter`], handed to
/// [`Adapter::handle_input`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdapterInput<'a> {
    /// Bytes from the Dhara Core: this process's stdin.
    Dhara(&'a [u8]),
    /// The Dhara Core's end closed: this process's stdin ended.
    DharaClosed,
    /// Bytes from the MCP server: its stdout.
    Mcp(&'a [u8]),
    /// The MCP server's stdout ended (it exited, or is about to).
    McpClosed,
}

/// What the driver of an [`Adapter`] should do next.
#[derive(Debug, PartialEq)]
#[must_use = "an output is an action for the driver: dropping it loses it"]
pub enum AdapterOutput<'a> {
    /// Write these bytes (whole lines) to the Dhara Core: this process's stdout.
    ToDhara(&'a [u8]),
    /// Write these bytes (whole lines) to the MCP server's stdin.
    ToMcp(&'a [u8]),
    /// Something for the log (stderr).
    Event(AdapterEvent),
    /// Close the MCP server: close its stdin, then wait for its exit, and end it if
    /// it does not go (MCP's stdio shutdown). Given once, before [`Exit`](Self::Exit).
    CloseMcp,
    /// Exit with this code once the MCP server is closed. Nothing follows it.
    Exit {
        /// `0` after a Dhara `shutdown` or the end of stdin; `1` when the MCP server
        /// failed its handshake or went away first.
        code: i32,
    },
    /// Nothing to do until more input comes.
    Wait,
}

/// Something for the log: the adapter has handled it already.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum AdapterEvent {
    /// The MCP handshake is done and the tool list complete: the Dhara `initialize` is
    /// answered from it.
    Ready {
        /// The server's `serverInfo`.
        server_info: Implementation,
        /// The protocol version agreed.
        protocol_version: String,
        /// How many tools it offers.
        tools: usize,
    },
    /// The MCP handshake failed; the adapter closes the server and exits with 1.
    HandshakeFailed {
        /// Why.
        reason: String,
    },
    /// A log message from the MCP server (`notifications/message`).
    Log(LoggingMessageNotificationParams),
    /// The tool list was listed again after `notifications/tools/list_changed`, and
    /// announced to the Dhara Core with a `tools/list` notification.
    ToolsChanged {
        /// How many tools there are now.
        tools: usize,
    },
    /// A notification from the MCP server with no Dhara counterpart, dropped.
    Notification {
        /// Its method.
        method: String,
    },
    /// The MCP server broke the protocol or sent something that does not fit; it was
    /// skipped.
    McpProtocol {
        /// What was wrong.
        problem: String,
    },
    /// The Dhara Core broke the protocol (it was answered as the Extension endpoint
    /// answers).
    DharaProtocol(extension::PeerError),
    /// The MCP server's stdout ended.
    McpClosed,
    /// The Dhara Core sent more than `max_line_bytes` before the MCP handshake was
    /// done: these bytes past it were dropped.
    DharaInputDropped {
        /// How many.
        bytes: usize,
    },
}

/// What a request sent to the MCP server waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Waiting {
    Initialize,
    ListTools,
    Call(RequestHandle),
}

/// How far the MCP handshake went.
#[derive(Clone, Debug, PartialEq)]
enum Handshake {
    /// `initialize` sent.
    Initializing,
    /// `initialize` answered; `tools/list` pages being read.
    Listing {
        server_info: Implementation,
        protocol_version: String,
    },
    /// The tools are known; the Dhara side runs.
    Ready,
    /// It failed; the adapter is closing.
    Failed,
}

/// An MCP server served as a Dhara extension: `dhara mcp adapt`.
///
/// The Dhara side is an [`Extension`] endpoint facing the Dhara Core on this process's
/// stdin and stdout; the MCP side is an MCP client facing the server's stdio. Like
/// [`host::Core`](crate::host::Core), it does no I/O: hand it input with
/// [`handle_input`](Adapter::handle_input), then call
/// [`poll_output`](Adapter::poll_output) until it says [`AdapterOutput::Wait`] or
/// [`AdapterOutput::Exit`]. It reads no clock: the Dhara Core keeps the time.
///
/// # What it does
///
/// * **Handshake.** The MCP `initialize` goes out at once (protocol version
///   [`LATEST_PROTOCOL_VERSION`], the configured `clientInfo`, no client
///   capabilities); a result with a version of [`SUPPORTED_PROTOCOL_VERSIONS`] is
///   followed by `notifications/initialized` and `tools/list`, page after page while a
///   `nextCursor` comes. Only then does the Dhara side start: the Dhara Core's
///   `initialize` (held until then) is answered with the server's name and version
///   and the tools with their input schemas. A failed handshake ends the adapter
///   with exit code 1 and [`AdapterEvent::HandshakeFailed`].
/// * **Calls.** `tools/execute` becomes `tools/call {name, arguments}` with a
///   `progressToken`. The result's content is mapped block by block: text to text,
///   image to image with data, a `resource_link` to a `file:` URI to a Dhara file
///   item, an embedded text resource to text and an embedded image blob to image
///   data; audio, other links and other resources are kept whole as unknown items.
///   A result with only `structuredContent` gets it as one text item of JSON.
///   `isError` stays `isError`; a JSON-RPC error stays the same JSON-RPC error.
/// * **Notifications.** Progress for a call's token becomes Dhara `progress` with the
///   call's id (the message, else `progress/total`). `notifications/tools/list_changed`
///   lists the tools again (all pages) and sends the Dhara `tools/list` notification.
///   `notifications/message` is [`AdapterEvent::Log`], for stderr.
/// * **Requests from the server.** `ping` is answered `{}`; anything else (sampling,
///   roots, elicitation: capabilities the adapter does not declare) gets -32601.
/// * **The end.** A Dhara `shutdown`, or the end of stdin, ends the Dhara side once
///   the calls in flight are answered; then [`AdapterOutput::CloseMcp`] and
///   [`AdapterOutput::Exit`] with 0. If the MCP server goes first, the calls in
///   flight get [`MCP_SERVER_EXITED`] and the adapter exits with 1.
///
/// ```
/// use dhara_protocol::mcp::{Adapter, AdapterConfig, AdapterInput, AdapterOutput};
///
/// let mut adapter = Adapter::new(AdapterConfig::default());
/// let AdapterOutput::ToMcp(first) = adapter.poll_output() else { panic!() };
/// assert!(first.starts_with(br#"{"jsonrpc":"2.0","id":1,"method":"initialize""#));
/// assert_eq!(adapter.poll_output(), AdapterOutput::Wait);
/// ```
#[derive(Debug)]
pub struct Adapter {
    config: AdapterConfig,
    decoder: Decoder,
    to_mcp: Outbox,
    to_dhara: Outbox,
    events: VecDeque<AdapterEvent>,
    /// The last id used for a request to the MCP server.
    last_id: u64,
    waiting: BTreeMap<u64, Waiting>,
    handshake: Handshake,
    /// The tools read so far by the listing in progress, and its page count.
    listing: Vec<Tool>,
    pages: usize,
    listing_in_flight: bool,
    /// A `list_changed` came while a listing ran: list again after it.
    list_again: bool,
    /// The Dhara side, once the handshake is done.
    dhara: Option<Extension>,
    /// What the Dhara Core sent before the handshake was done.
    held: Vec<u8>,
    held_closed: bool,
    mcp_closed: bool,
    /// The end of the MCP server was handled (the calls it leaves were answered).
    mcp_end_handled: bool,
    close_due: bool,
    close_sent: bool,
    exit_code: Option<i32>,
    exited: bool,
}

impl Adapter {
    /// An adapter whose first output is the MCP `initialize` request.
    pub fn new(config: AdapterConfig) -> Adapter {
        let mut adapter = Adapter {
            decoder: Decoder::new(config.max_line_bytes),
            config,
            to_mcp: Outbox::default(),
            to_dhara: Outbox::default(),
            events: VecDeque::new(),
            last_id: 0,
            waiting: BTreeMap::new(),
            handshake: Handshake::Initializing,
            listing: Vec::new(),
            pages: 0,
            listing_in_flight: false,
            list_again: false,
            dhara: None,
            held: Vec::new(),
            held_closed: false,
            mcp_closed: false,
            mcp_end_handled: false,
            close_due: false,
            close_sent: false,
            exit_code: None,
            exited: false,
        };
        let params = InitializeRequestParams {
            protocol_version: String::from(LATEST_PROTOCOL_VERSION),
            capabilities: Value::Object(Object::new()),
            client_info: adapter.config.client_info.clone(),
        };
        adapter.request(
            super::method::INITIALIZE,
            Some(params.to_value()),
            Waiting::Initialize,
        );
        adapter
    }

    /// Tells the adapter what happened. Then poll until [`AdapterOutput::Wait`].
    pub fn handle_input(&mut self, input: AdapterInput<'_>) {
        if self.exited {
            return;
        }
        match input {
            AdapterInput::Dhara(bytes) => match &mut self.dhara {
                Some(dhara) => dhara.handle_input(extension::Input::Stdin(bytes)),
                None if self.held_closed => {}
                None => {
                    // Held until the handshake is done; bounded like one line.
                    let room = self
                        .config
                        .extension
                        .max_line_bytes
                        .saturating_sub(self.held.len());
                    if bytes.len() > room {
                        self.events.push_back(AdapterEvent::DharaInputDropped {
                            bytes: bytes.len() - room,
                        });
                    }
                    self.held
                        .extend_from_slice(bytes.get(..room.min(bytes.len())).unwrap_or_default());
                }
            },
            AdapterInput::DharaClosed => match &mut self.dhara {
                Some(dhara) => dhara.handle_input(extension::Input::StdinClosed),
                // Nothing was asked: there is nothing to wait for the handshake for.
                None if self.held.iter().all(u8::is_ascii_whitespace) => self.finish(0),
                None => self.held_closed = true,
            },
            AdapterInput::Mcp(bytes) if !self.mcp_closed => self.decoder.push(bytes),
            AdapterInput::Mcp(_) => {}
            AdapterInput::McpClosed => {
                if !self.mcp_closed {
                    self.mcp_closed = true;
                    self.decoder.end();
                }
            }
        }
    }

    /// What to do next. Call it until it returns [`AdapterOutput::Wait`] or
    /// [`AdapterOutput::Exit`].
    pub fn poll_output(&mut self) -> AdapterOutput<'_> {
        self.to_mcp.reclaim();
        self.to_dhara.reclaim();
        loop {
            if self.to_mcp.is_pending() {
                return AdapterOutput::ToMcp(self.to_mcp.hand_out());
            }
            if self.to_dhara.is_pending() {
                return AdapterOutput::ToDhara(self.to_dhara.hand_out());
            }
            if let Some(event) = self.events.pop_front() {
                return AdapterOutput::Event(event);
            }
            if self.exited {
                return AdapterOutput::Wait;
            }
            if core::mem::take(&mut self.close_due) {
                self.close_sent = true;
                return AdapterOutput::CloseMcp;
            }
            if let Some(code) = self.exit_code {
                self.exited = true;
                return AdapterOutput::Exit { code };
            }
            // The Dhara side runs until it waits before the next MCP line is read, so
            // what the Core sees does not depend on how the server's output was
            // chunked.
            if let Some(dhara) = &mut self.dhara {
                match dhara.poll_output() {
                    extension::Output::Transmit(bytes) => {
                        self.to_dhara.extend(bytes);
                        continue;
                    }
                    extension::Output::Event(event) => {
                        self.handle_dhara(event);
                        continue;
                    }
                    extension::Output::Exit { code } => {
                        self.finish(code);
                        continue;
                    }
                    _ => {}
                }
            }
            if let Some(received) = self.decoder.next() {
                self.handle_mcp(received);
                continue;
            }
            if self.mcp_closed && !self.mcp_end_handled {
                self.mcp_end_handled = true;
                self.mcp_ended();
                continue;
            }
            if self.mcp_end_handled && self.exit_code.is_none() && !self.close_sent {
                // The calls it left were answered and written: nothing more can happen.
                self.finish(1);
                continue;
            }
            return AdapterOutput::Wait;
        }
    }

    /// The Dhara side's endpoint, once the handshake is done.
    pub fn dhara(&self) -> Option<&Extension> {
        self.dhara.as_ref()
    }

    /// How many requests to the MCP server wait for their answer.
    pub fn requests_in_flight(&self) -> usize {
        self.waiting.len()
    }

    // ---- The MCP side --------------------------------------------------------------

    fn request(&mut self, method: &str, params: Option<Value>, waiting: Waiting) -> u64 {
        self.last_id += 1;
        let id = self.last_id;
        self.waiting.insert(id, waiting);
        self.to_mcp.message(&Message::Request(Request {
            id: Id::from(id),
            method: String::from(method),
            params,
        }));
        id
    }

    fn notify(&mut self, method: &str, params: Option<Value>) {
        self.to_mcp.message(&Message::Notification(Notification {
            method: String::from(method),
            params,
        }));
    }

    fn handle_mcp(&mut self, received: Received) {
        match received {
            Received::Message(Message::Response(response)) => self.handle_response(response),
            Received::Message(Message::Request(request)) => {
                let outcome = if request.method == super::method::PING {
                    Ok(Value::Object(Object::new()))
                } else {
                    // The adapter declares no client capability: no sampling, roots
                    // or elicitation to offer.
                    Err(
                        ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "Method not found")
                            .with_data(Value::Object(Object::from_iter([(
                                "method",
                                Value::from(request.method.as_str()),
                            )]))),
                    )
                };
                self.to_mcp.message(&Message::Response(Response {
                    id: request.id,
                    outcome,
                }));
            }
            Received::Message(Message::Notification(notification)) => {
                self.handle_notification(notification)
            }
            // Never answered: an answer to a server that logs to stdout could start
            // an error storm (the Core's rule too).
            Received::Invalid(error) => self.mcp_problem(format!("{error}")),
            Received::TooLong { len } => {
                self.mcp_problem(format!("a line of {len} bytes is over the limit"))
            }
            Received::Truncated { len } => {
                self.mcp_problem(format!("the output ended inside a line of {len} bytes"))
            }
        }
    }

    fn handle_response(&mut self, response: Response) {
        let waiting = match &response.id {
            Id::Number(n) => n.as_u64().and_then(|id| self.waiting.remove(&id)),
            _ => None,
        };
        let Some(waiting) = waiting else {
            return self.mcp_problem(format!("a response with unknown id {}", response.id));
        };
        match waiting {
            Waiting::Initialize => self.initialized(response.outcome),
            Waiting::ListTools => self.listed(response.outcome),
            Waiting::Call(request) => self.answer_call(request, response.outcome),
        }
    }

    fn initialized(&mut self, outcome: Result<Value, ErrorObject>) {
        let result = match outcome {
            Ok(value) => InitializeResult::from_value(&value)
                .map_err(|e| format!("the initialize result does not fit: {e}")),
            Err(e) => Err(format!(
                "initialize failed: error {}: {}",
                e.code.code(),
                e.message
            )),
        };
        let result = result.and_then(|result| {
            if SUPPORTED_PROTOCOL_VERSIONS.contains(&result.protocol_version.as_str()) {
                Ok(result)
            } else {
                Err(format!(
                    "the server chose protocol version {:?}; supported: {}",
                    result.protocol_version,
                    SUPPORTED_PROTOCOL_VERSIONS.join(", ")
                ))
            }
        });
        match result {
            Ok(result) => {
                self.handshake = Handshake::Listing {
                    server_info: result.server_info,
                    protocol_version: result.protocol_version,
                };
                self.notify(super::method::INITIALIZED, None);
                self.list_tools(None);
            }
            Err(reason) => self.fail(reason),
        }
    }

    /// Asks for one page of tools: the first when `cursor` is `None`.
    fn list_tools(&mut self, cursor: Option<String>) {
        if cursor.is_none() {
            self.listing.clear();
            self.pages = 0;
        }
        self.listing_in_flight = true;
        let params = cursor
            .map(|cursor| Value::Object(Object::from_iter([("cursor", Value::from(cursor))])));
        self.request(super::method::TOOLS_LIST, params, Waiting::ListTools);
    }

    fn listed(&mut self, outcome: Result<Value, ErrorObject>) {
        self.listing_in_flight = false;
        let page = match outcome {
            Ok(value) => ListToolsResult::from_value(&value)
                .map_err(|e| format!("a tools/list result does not fit: {e}")),
            Err(e) => Err(format!(
                "tools/list failed: error {}: {}",
                e.code.code(),
                e.message
            )),
        };
        let page = match page {
            Ok(page) => page,
            Err(reason) if self.handshake == Handshake::Ready => {
                // The tools known before stay.
                return self.mcp_problem(reason);
            }
            Err(reason) => return self.fail(reason),
        };
        self.pages += 1;
        let room = self.config.max_tools.saturating_sub(self.listing.len());
        if page.tools.len() > room {
            self.mcp_problem(format!(
                "the server offers more than {} tools; the rest are left out",
                self.config.max_tools
            ));
        }
        self.listing
            .extend(page.tools.into_iter().take(room).map(dhara_tool));
        match page.next_cursor {
            Some(cursor) if self.pages < self.config.max_pages && room > 0 => {
                return self.list_tools(Some(cursor));
            }
            Some(_) => self.mcp_problem(format!(
                "tools/list gave more than {} pages; the rest are left out",
                self.config.max_pages
            )),
            None => {}
        }
        let tools = core::mem::take(&mut self.listing);
        match core::mem::replace(&mut self.handshake, Handshake::Ready) {
            Handshake::Listing {
                server_info,
                protocol_version,
            } => self.start_dhara(server_info, protocol_version, tools),
            _ => {
                let count = tools.len();
                if let Some(dhara) = &mut self.dhara {
                    dhara.set_tools(tools);
                }
                self.events
                    .push_back(AdapterEvent::ToolsChanged { tools: count });
                if core::mem::take(&mut self.list_again) {
                    self.list_tools(None);
                }
            }
        }
    }

    /// The handshake is done: the Dhara side starts, with what the Core sent so far.
    fn start_dhara(
        &mut self,
        server_info: Implementation,
        protocol_version: String,
        tools: Vec<Tool>,
    ) {
        self.events.push_back(AdapterEvent::Ready {
            server_info: server_info.clone(),
            protocol_version,
            tools: tools.len(),
        });
        let info = ServerInfo::new(server_info.name, server_info.version);
        let mut dhara = Extension::with_config(info, tools, self.config.extension.clone());
        dhara.handle_input(extension::Input::Stdin(&self.held));
        if self.held_closed {
            dhara.handle_input(extension::Input::StdinClosed);
        }
        self.held = Vec::new();
        self.dhara = Some(dhara);
        if core::mem::take(&mut self.list_again) {
            self.list_tools(None);
        }
    }

    fn answer_call(&mut self, request: RequestHandle, outcome: Result<Value, ErrorObject>) {
        let Some(dhara) = &mut self.dhara else {
            debug_assert!(false, "a call answered before the Dhara side started");
            return;
        };
        let answered = match outcome {
            Ok(value) => match dhara_result(&value) {
                Ok(result) => dhara.respond(request, result),
                Err(e) => dhara.respond_error(
                    request,
                    ErrorObject::new(
                        ErrorCode::INTERNAL_ERROR,
                        format!("the MCP server's tools/call result does not fit: {e}"),
                    ),
                ),
            },
            Err(error) => dhara.respond_error(request, error),
        };
        debug_assert!(answered.is_ok(), "only the adapter answers calls");
    }

    fn handle_notification(&mut self, notification: Notification) {
        let params = notification.params.unwrap_or_default();
        match notification.method.as_str() {
            super::method::PROGRESS => match ProgressNotificationParams::from_value(&params) {
                Ok(progress) => self.progress(&progress),
                Err(e) => self.mcp_problem(format!("notifications/progress: {e}")),
            },
            super::method::TOOLS_LIST_CHANGED => match self.handshake {
                Handshake::Ready if !self.listing_in_flight => self.list_tools(None),
                // The list being read may be the old one: read it again after.
                Handshake::Ready | Handshake::Listing { .. } => self.list_again = true,
                Handshake::Initializing | Handshake::Failed => {}
            },
            super::method::MESSAGE => match LoggingMessageNotificationParams::from_value(&params) {
                Ok(log) => self.events.push_back(AdapterEvent::Log(log)),
                Err(e) => self.mcp_problem(format!("notifications/message: {e}")),
            },
            _ => self.events.push_back(AdapterEvent::Notification {
                method: notification.method,
            }),
        }
    }

    /// Progress for a call in flight becomes Dhara progress with the call's id;
    /// progress for a call that already ended is dropped.
    fn progress(&mut self, progress: &ProgressNotificationParams) {
        let call = progress
            .progress_token
            .as_u64()
            .and_then(|id| self.waiting.get(&id));
        let (Some(Waiting::Call(request)), Some(dhara)) = (call, &mut self.dhara) else {
            return;
        };
        let sent = dhara.progress(*request, &progress.text());
        debug_assert!(sent.is_ok(), "a call waiting on the MCP server is pending");
    }

    /// The MCP server's output ended: the calls it leaves are answered.
    fn mcp_ended(&mut self) {
        self.events.push_back(AdapterEvent::McpClosed);
        if self.handshake != Handshake::Ready {
            if self.handshake != Handshake::Failed {
                self.fail(String::from(
                    "the MCP server closed its output before the handshake was done",
                ));
            }
            return;
        }
        let waiting = core::mem::take(&mut self.waiting);
        if let Some(dhara) = &mut self.dhara {
            for waiting in waiting.into_values() {
                if let Waiting::Call(request) = waiting {
                    let error = ErrorObject::new(
                        MCP_SERVER_EXITED,
                        "the MCP server exited before answering",
                    );
                    let answered = dhara.respond_error(request, error);
                    debug_assert!(answered.is_ok(), "only the adapter answers calls");
                }
            }
        }
    }

    fn fail(&mut self, reason: String) {
        self.handshake = Handshake::Failed;
        self.events
            .push_back(AdapterEvent::HandshakeFailed { reason });
        self.finish(1);
    }

    /// Closes the MCP server (once) and exits with `code`.
    fn finish(&mut self, code: i32) {
        if self.exit_code.is_none() {
            self.close_due = !self.close_sent;
            self.exit_code = Some(code);
        }
    }

    fn mcp_problem(&mut self, problem: String) {
        self.events.push_back(AdapterEvent::McpProtocol { problem });
    }

    // ---- The Dhara side ------------------------------------------------------------

    fn handle_dhara(&mut self, event: extension::Event) {
        match event {
            extension::Event::Execute {
                request,
                tool_name,
                input,
            } => {
                if self.mcp_closed {
                    let error = ErrorObject::new(MCP_SERVER_EXITED, "the MCP server exited");
                    if let Some(dhara) = &mut self.dhara {
                        let answered = dhara.respond_error(request, error);
                        debug_assert!(answered.is_ok(), "a new request is pending");
                    }
                    return;
                }
                let id = self.last_id + 1;
                let params = CallToolRequestParams {
                    name: tool_name.into_string(),
                    arguments: Some(input),
                    progress_token: Some(ProgressToken::Number(id.into())),
                };
                self.request(
                    super::method::TOOLS_CALL,
                    Some(params.to_value()),
                    Waiting::Call(request),
                );
            }
            extension::Event::Request {
                request, method, ..
            } => {
                // Not delivered unless `custom_methods` is on: no MCP counterpart.
                if let Some(dhara) = &mut self.dhara {
                    let error = ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "Method not found")
                        .with_data(Value::Object(Object::from_iter([(
                            "method",
                            Value::from(method),
                        )])));
                    let answered = dhara.respond_error(request, error);
                    debug_assert!(answered.is_ok(), "a new request is pending");
                }
            }
            extension::Event::Protocol(error) => {
                self.events.push_back(AdapterEvent::DharaProtocol(error))
            }
            // `Initialized` was answered from the MCP tools; `Shutdown` ends the Dhara
            // side once the calls in flight are answered; other notifications have no
            // MCP counterpart.
            _ => {}
        }
    }
}

/// A Dhara tool for an MCP tool: its description, else its title.
fn dhara_tool(tool: super::types::Tool) -> Tool {
    Tool {
        name: tool.name,
        description: tool.description.or(tool.title),
        input_schema: Some(tool.input_schema),
    }
}

/// The Dhara result for an MCP `tools/call` result, block by block.
fn dhara_result(value: &Value) -> Result<ToolResult, ShapeError> {
    let result = CallToolResult::from_value(value)?;
    let items = value["content"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut content: Vec<Content> = result
        .content
        .into_iter()
        .zip(items)
        .map(|(block, item)| dhara_content(block, item))
        .collect();
    if content.is_empty() {
        if let Some(structured) = &result.structured_content {
            let text = crate::json::to_vec(structured);
            content.push(Content::text(String::from_utf8_lossy(&text).into_owned()));
        }
    }
    Ok(ToolResult {
        content,
        is_error: result.is_error,
    })
}

/// The nearest Dhara item for an MCP content block, else the block kept whole.
fn dhara_content(block: ContentBlock, item: &Value) -> Content {
    let nearest = match block {
        ContentBlock::Text { text } => Some(Content::text(text)),
        ContentBlock::Image { data, mime_type } => Some(Content::ImageData { mime_type, data }),
        ContentBlock::ResourceLink {
            uri,
            mime_type,
            size,
            ..
        } => local_path(&uri).map(|path| Content::File {
            path: String::from(path),
            size,
            mime_type,
        }),
        ContentBlock::Resource(ResourceContents::Text { text, .. }) => Some(Content::text(text)),
        ContentBlock::Resource(ResourceContents::Blob {
            mime_type: Some(mime_type),
            blob,
            ..
        }) if mime_type.starts_with("image/") => Some(Content::ImageData {
            mime_type,
            data: blob,
        }),
        _ => None,
    };
    nearest.unwrap_or_else(|| match item {
        Value::Object(item) => Content::Unknown(item.clone()),
        // `CallToolResult::from_value` read every item as an object.
        other => {
            debug_assert!(false, "a content item that is not an object");
            Content::Unknown(Object::from_iter([("value", other.clone())]))
        }
    })
}

/// The path of a `file:` URI naming a local file with no escapes to decode.
fn local_path(uri: &str) -> Option<&str> {
    let path = uri.strip_prefix("file://")?;
    (path.starts_with('/') && !path.contains('%')).then_some(path)
}
