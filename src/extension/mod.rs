//! The Extension endpoint: the side a tool author embeds.
//!
//! [`Extension`] is a sans-IO state machine. The driver hands it the bytes read from
//! stdin ([`Input`]); it hands back bytes to write to stdout, typed [`Event`]s for the
//! tool author, and the decision to exit ([`Output`]). It never blocks, never reads a
//! clock and never does I/O, so the same code runs under threads, an async runtime,
//! WASM or a microcontroller.
//!
//! ```
//! use dhara_protocol::extension::{Event, Extension, Input, Output, ServerInfo};
//!
//! let mut extension = Extension::new(ServerInfo::new("tools", "1.0.0"), Vec::new());
//! extension.handle_input(Input::Stdin(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"));
//! // Answered by the endpoint itself: not initialized yet.
//! let Output::Transmit(reply) = extension.poll_output() else { unreachable!() };
//! assert!(reply.starts_with(br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32002"#));
//! assert_eq!(extension.poll_output(), Output::Wait);
//!
//! extension.handle_input(Input::StdinClosed); // the end of stdin means shutdown
//! assert_eq!(extension.poll_output(), Output::Event(Event::Shutdown));
//! assert_eq!(extension.poll_output(), Output::Exit { code: 0 });
//! ```
//!
//! # What the endpoint answers by itself
//!
//! | input | reply |
//! |---|---|
//! | a line that is not JSON | -32700 Parse error, id `null` |
//! | not a valid request object (see [the `rpc` module](crate::rpc)) | -32600 Invalid Request, with the id when it could be read |
//! | a response or something shaped like one | nothing (the extension sends no requests); reported as [`PeerError`] |
//! | a line over [`Config::max_line_bytes`] | when an `"id"` is found at its start, what a request gets in that state: -32002 before `initialize`, -32000 after `shutdown`, -32600 otherwise; else nothing; reported |
//! | stdin ending in the middle of a line | nothing; reported as [`PeerError::Truncated`] |
//! | `initialize` | the result `{name, version, tools}` from the registry; then [`Event::Initialized`] |
//! | `initialize` a second time | -32600 `Already initialized` |
//! | any other request before `initialize`, a `shutdown` request included | -32002 `Not initialized` ([`NOT_INITIALIZED`]) |
//! | `tools/list` request | `{"tools": [...]}` |
//! | `tools/execute` with missing or mistyped params | -32602, `data.path` naming the field |
//! | `tools/execute` of an unknown tool | -32602 `Unknown tool 'x'`, `data.toolName` |
//! | `tools/execute` whose input fails the tool's `inputSchema` | -32602 with the validator's message (`Missing required parameter 'url'`), `data: {toolName, path}` |
//! | `tools/execute` that is valid | [`Event::Execute`]; the author answers |
//! | a request for another method | -32601 `Method not found`, `data.method`; or [`Event::Request`] with [`Config::custom_methods`] |
//! | a request while [`Config::max_pending`] requests wait for the author | -32001 ([`TOO_MANY_PENDING`]) |
//! | a request after `shutdown` or the end of stdin | -32000 `Shutting down` ([`SHUTTING_DOWN`]): it is not started |
//! | `shutdown` notification (or, after `initialize`, a `shutdown` request, answered with `null`) | [`Event::Shutdown`] |
//! | any other notification | [`Event::Notification`]; never answered |
//!
//! Batches follow the JSON-RPC 2.0 specification: every entry is handled as above,
//! and the replies to a batch's requests go out together as one array line as soon
//! as the last one is known, even when the author answers them later and in any
//! order. A batch of notifications gets no reply at all.
//!
//! # Bounded
//!
//! Lines are decoded one at a time inside [`poll_output`](Extension::poll_output),
//! and only when no event is waiting to be handed out, so a flood of input never
//! builds a queue. At most [`Config::max_pending`] requests wait for the author.
//! Output goes to one buffer that is reused for every message.

mod batch;
mod dispatch;
mod events;
mod pending;
mod registry;

use alloc::collections::VecDeque;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

pub use events::{Event, Excerpt, Input, Output, PeerError, UsageError};

use crate::frame::{self, LineDecoder};
use crate::json::{self, Value};
use crate::message::{Progress, Tool, ToolList, ToolResult, method};
use crate::rpc::{self, Envelope, ErrorObject, Id, Response};
use batch::{BatchId, Batches};
use pending::PendingRequests;
use registry::Registry;

pub use crate::message::NOT_INITIALIZED;

/// Error code for a request that arrives after `shutdown` (or the end of stdin): it
/// is not started.
pub const SHUTTING_DOWN: i64 = -32000;

/// Error code for a request that arrives while [`Config::max_pending`] requests are
/// already waiting for the author.
pub const TOO_MANY_PENDING: i64 = -32001;

/// How the endpoint behaves. Start from [`Config::default`] and set what you need.
///
/// ```
/// use dhara_protocol::extension::Config;
///
/// let config = Config::default().custom_methods(true).max_pending(16);
/// assert!(config.validate_input);
/// assert_eq!(config.max_pending, 16);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Config {
    /// The longest line accepted from stdin, without its newline (default
    /// [`frame::DEFAULT_MAX_LINE_BYTES`], 64 MiB).
    pub max_line_bytes: usize,
    /// Check `tools/execute` input against the tool's `inputSchema` and answer a bad
    /// one with -32602 (default `true`). Off, the author sees every input.
    pub validate_input: bool,
    /// Deliver requests for methods the protocol does not define as
    /// [`Event::Request`], instead of answering them with -32601 (default `false`).
    pub custom_methods: bool,
    /// How many requests may wait for the author at once (default 1024). Past it, a
    /// request is answered with [`TOO_MANY_PENDING`].
    pub max_pending: usize,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            max_line_bytes: frame::DEFAULT_MAX_LINE_BYTES,
            validate_input: true,
            custom_methods: false,
            max_pending: 1024,
        }
    }
}

impl Config {
    /// Sets [`max_line_bytes`](Config::max_line_bytes).
    #[must_use]
    pub fn max_line_bytes(mut self, max_line_bytes: usize) -> Config {
        self.max_line_bytes = max_line_bytes;
        self
    }

    /// Sets [`validate_input`](Config::validate_input).
    #[must_use]
    pub fn validate_input(mut self, validate: bool) -> Config {
        self.validate_input = validate;
        self
    }

    /// Sets [`custom_methods`](Config::custom_methods).
    #[must_use]
    pub fn custom_methods(mut self, deliver: bool) -> Config {
        self.custom_methods = deliver;
        self
    }

    /// Sets [`max_pending`](Config::max_pending).
    #[must_use]
    pub fn max_pending(mut self, max_pending: usize) -> Config {
        self.max_pending = max_pending;
        self
    }
}

/// The extension's name and version, sent in the `initialize` result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerInfo {
    /// The extension's name, such as `web-tools`.
    pub name: String,
    /// The extension's version, such as `1.0.0`.
    pub version: String,
}

impl ServerInfo {
    /// A name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> ServerInfo {
        ServerInfo {
            name: name.into(),
            version: version.into(),
        }
    }
}

/// The handle of one received request the author answers: unique for the life of
/// an [`Extension`], whatever JSON-RPC id the Core used (even a repeated one).
/// [`Extension::rpc_id`] gives that id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestHandle(u64);

impl RequestHandle {
    /// The handle as a number (1 for the first request handed out, then 2, ...).
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for RequestHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// Where the reply to a request goes: a line of its own, or its batch's array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route {
    Line,
    Batch(BatchId),
}

/// A request waiting for the author's answer.
#[derive(Debug)]
struct Pending {
    /// The JSON-RPC id the reply echoes.
    id: Id,
    route: Route,
}

/// The Extension endpoint: a sans-IO state machine for the extension side of the
/// Dhara protocol.
///
/// A complete extension: the loop below is all a driver does. It pushes what stdin
/// gives into [`handle_input`](Extension::handle_input) and acts on
/// [`poll_output`](Extension::poll_output) until it says [`Output::Exit`]. Here the
/// tool answers at once; a real one may run tools on other threads or tasks and
/// call [`respond`](Extension::respond) later, in any order, with
/// [`progress`](Extension::progress) meanwhile.
///
/// ```
/// use std::io::{Read, Write};
///
/// use dhara_protocol::extension::{Event, Extension, Input, Output, ServerInfo};
/// use dhara_protocol::json;
/// use dhara_protocol::message::{Tool, ToolResult};
///
/// /// The whole extension: `run(std::io::stdin().lock(), std::io::stdout().lock())`
/// /// in `main`, then `std::process::exit` with the code it returns.
/// fn run(mut stdin: impl Read, mut stdout: impl Write) -> std::io::Result<i32> {
///     let schema = json::parse(
///         br#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#,
///     )
///     .map_err(std::io::Error::other)?;
///     let echo = Tool::new("echo", "Repeat the text", schema);
///     let mut extension = Extension::new(ServerInfo::new("echo-tools", "1.0.0"), vec![echo]);
///
///     let mut buf = [0u8; 8192];
///     loop {
///         match extension.poll_output() {
///             Output::Transmit(bytes) => {
///                 stdout.write_all(bytes)?;
///                 stdout.flush()?;
///             }
///             Output::Event(Event::Execute { request, tool_name, input }) => {
///                 extension.progress(request, "echoing").ok();
///                 let text = input["text"].as_str().unwrap_or_default();
///                 let result = match tool_name.as_str() {
///                     "echo" => ToolResult::text(text),
///                     _ => ToolResult::error_text("no such tool"),
///                 };
///                 extension.respond(request, result).ok();
///             }
///             Output::Event(Event::Shutdown) => { /* close files, stop workers */ }
///             Output::Event(_) => {} // initialized, notifications, the Core's mistakes
///             Output::Exit { code } => return Ok(code),
///             // Output::Wait: nothing to do until stdin has more.
///             _ => match stdin.read(&mut buf)? {
///                 0 => extension.handle_input(Input::StdinClosed),
///                 n => extension.handle_input(Input::Stdin(&buf[..n])),
///             },
///         }
///     }
/// }
///
/// // What a Core sends: initialize, a call, a call the schema refuses, shutdown.
/// let stdin = concat!(
///     r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"version":"0.1.0","cwd":"/tmp"}}"#, "\n",
///     r#"{"jsonrpc":"2.0","id":2,"method":"tools/execute","params":{"toolName":"echo","input":{"text":"hi"}}}"#, "\n",
///     r#"{"jsonrpc":"2.0","id":3,"method":"tools/execute","params":{"toolName":"echo","input":{}}}"#, "\n",
///     r#"{"jsonrpc":"2.0","method":"shutdown"}"#, "\n",
/// );
/// let mut stdout = Vec::new();
/// let code = run(stdin.as_bytes(), &mut stdout)?;
/// assert_eq!(code, 0);
///
/// let stdout = String::from_utf8(stdout).unwrap();
/// let lines: Vec<&str> = stdout.lines().collect();
/// assert_eq!(lines.len(), 4);
/// assert!(lines[0].starts_with(r#"{"jsonrpc":"2.0","id":1,"result":{"name":"echo-tools""#));
/// assert_eq!(lines[1], r#"{"jsonrpc":"2.0","method":"progress","params":{"message":"echoing","id":2}}"#);
/// assert_eq!(
///     lines[2],
///     r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hi"}],"isError":false}}"#
/// );
/// assert_eq!(
///     lines[3],
///     r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Missing required parameter 'text'","data":{"toolName":"echo","path":"$"}}}"#
/// );
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct Extension {
    info: ServerInfo,
    registry: Registry,
    config: Config,
    decoder: LineDecoder,
    /// Reads each request's input, its scratch space kept from one to the next.
    parser: json::Parser,
    /// The output buffer, reused for every message.
    out: frame::OutputBuffer,
    events: VecDeque<Event>,
    pending: PendingRequests,
    batches: Batches,
    /// The last request handle given out (0: none yet).
    last_request: u64,
    initialized: bool,
    stdin_closed: bool,
    /// `shutdown` was received or stdin ended; [`Event::Shutdown`] was queued.
    shutting_down: bool,
    /// [`Output::Exit`] was given.
    exited: bool,
}

impl Extension {
    /// An endpoint offering `tools`, with the default [`Config`].
    pub fn new(info: ServerInfo, tools: Vec<Tool>) -> Extension {
        Extension::with_config(info, tools, Config::default())
    }

    /// An endpoint offering `tools`, configured.
    pub fn with_config(info: ServerInfo, tools: Vec<Tool>, config: Config) -> Extension {
        Extension {
            info,
            registry: Registry::new(tools),
            decoder: LineDecoder::with_max_line_bytes(config.max_line_bytes),
            parser: json::Parser::new(),
            config,
            out: frame::OutputBuffer::new(),
            events: VecDeque::new(),
            pending: PendingRequests::default(),
            batches: Batches::default(),
            last_request: 0,
            initialized: false,
            stdin_closed: false,
            shutting_down: false,
            exited: false,
        }
    }

    /// Hands the endpoint what happened on stdin. Nothing is decoded here: lines are
    /// read one at a time by [`poll_output`](Extension::poll_output). Ignored after
    /// [`Output::Exit`].
    pub fn handle_input(&mut self, input: Input<'_>) {
        if self.exited {
            return;
        }
        match input {
            Input::Stdin(bytes) if !self.stdin_closed => self.decoder.push(bytes),
            Input::StdinClosed if !self.stdin_closed => {
                self.stdin_closed = true;
                self.decoder.end();
            }
            // Anything after the end of stdin.
            Input::Stdin(_) | Input::StdinClosed => {}
        }
    }

    /// What to do next. Call it until it returns [`Output::Wait`] (then wait for
    /// stdin, or for a tool to finish) or [`Output::Exit`].
    ///
    /// In order: bytes to transmit, then a queued event, then the next line from
    /// stdin is decoded and handled (which may produce either), then the shutdown
    /// that the end of stdin means, then the exit once nothing is pending.
    pub fn poll_output(&mut self) -> Output<'_> {
        self.out.reclaim();
        loop {
            if self.out.is_pending() {
                let bytes = self.out.hand_out();
                debug_assert!(bytes.is_some(), "pending bytes are handed out");
                return Output::Transmit(bytes.unwrap_or_default());
            }
            if let Some(event) = self.events.pop_front() {
                return Output::Event(event);
            }
            if self.exited {
                return Output::Wait;
            }
            if self.read_next_line() {
                continue;
            }
            if self.stdin_closed && !self.shutting_down {
                self.begin_shutdown();
                continue;
            }
            if self.shutting_down && self.pending.is_empty() {
                self.exited = true;
                return Output::Exit { code: 0 };
            }
            return Output::Wait;
        }
    }

    /// Answers a `tools/execute` request with the tool's result (`is_error: true` for
    /// a failure the LLM should see).
    pub fn respond(
        &mut self,
        request: RequestHandle,
        result: ToolResult,
    ) -> Result<(), UsageError> {
        let pending = self.take_pending(request)?;
        match pending.route {
            // Written straight from the typed result, without building its value.
            Route::Line => self.out.write_line(|buf| {
                let id = &pending.id;
                rpc::write_with(Envelope::Result { id }, |out| result.write_json(out), buf)
            }),
            Route::Batch(batch) => {
                self.answer_in_batch(batch, Response::result(pending.id, Value::from(result)))
            }
        }
        Ok(())
    }

    /// Answers a request with a JSON-RPC error: a protocol-level failure (use
    /// [`ToolResult`] with `is_error` for a tool that ran and failed). Extension-specific
    /// codes are -32000 to -32099.
    pub fn respond_error(
        &mut self,
        request: RequestHandle,
        error: ErrorObject,
    ) -> Result<(), UsageError> {
        self.respond_value(request, Err(error))
    }

    /// Answers a request with any result or error: for [`Event::Request`] (custom
    /// methods), or a `tools/execute` result built by hand.
    pub fn respond_value(
        &mut self,
        request: RequestHandle,
        outcome: Result<Value, ErrorObject>,
    ) -> Result<(), UsageError> {
        let pending = self.take_pending(request)?;
        let response = Response {
            id: pending.id,
            outcome,
        };
        match pending.route {
            Route::Line => self.write_response(&response),
            Route::Batch(batch) => self.answer_in_batch(batch, response),
        }
        Ok(())
    }

    /// Sends a `progress` notification for a pending request, with the request's
    /// JSON-RPC id as its `id` member. Any number of times before the answer.
    pub fn progress(&mut self, request: RequestHandle, message: &str) -> Result<(), UsageError> {
        // The request's id is written from where it is kept, without a copy.
        let Some(pending) = self.pending.get(request) else {
            return Err(self.not_pending(request));
        };
        self.out.write_line(|buf| {
            rpc::write_with(
                Envelope::Notification {
                    method: method::PROGRESS,
                },
                |out| Progress::write_parts(message, Some(&pending.id), out),
                buf,
            )
        });
        Ok(())
    }

    /// Replaces the tool registry. Once `initialize` has been answered, the change is
    /// announced to the Core with a `tools/list` notification.
    pub fn set_tools(&mut self, tools: Vec<Tool>) {
        self.registry = Registry::new(tools);
        if self.initialized && !self.exited {
            let params = Value::from(ToolList {
                tools: self.registry.tools().to_vec(),
            });
            self.write_notification(method::TOOLS_LIST, &params);
        }
    }

    /// The tools offered, in the order they were declared.
    pub fn tools(&self) -> &[Tool] {
        self.registry.tools()
    }

    /// The JSON-RPC id of a pending request; `None` once it is answered.
    pub fn rpc_id(&self, request: RequestHandle) -> Option<&Id> {
        self.pending.get(request).map(|p| &p.id)
    }

    /// How many requests wait for the author's answer.
    pub fn pending_requests(&self) -> usize {
        self.pending.len()
    }

    /// `true` once `initialize` has been answered.
    pub fn is_initialized(&self) -> bool {
        self.initialized
    }

    /// `true` once `shutdown` was received or stdin ended.
    pub fn is_shutting_down(&self) -> bool {
        self.shutting_down
    }

    // ---- Requests waiting for the author -------------------------------------------

    /// Registers a request the author answers; `None` (and the request is answered
    /// with [`TOO_MANY_PENDING`]) when too many already wait.
    fn start_request(&mut self, route: Route, id: Id) -> Option<RequestHandle> {
        if self.pending.len() >= self.config.max_pending {
            let error = ErrorObject::new(TOO_MANY_PENDING, "Too many pending requests").with_data(
                Value::from(crate::json::Object::from_iter([(
                    "maxPending",
                    Value::from(self.config.max_pending),
                )])),
            );
            self.reply(route, Response::error(id, error));
            return None;
        }
        self.last_request += 1;
        let request = RequestHandle(self.last_request);
        if let Route::Batch(batch) = route {
            self.batches.expect(batch);
        }
        self.pending.push(request, Pending { id, route });
        Some(request)
    }

    fn take_pending(&mut self, request: RequestHandle) -> Result<Pending, UsageError> {
        match self.pending.remove(request) {
            Some(pending) => Ok(pending),
            None => Err(self.not_pending(request)),
        }
    }

    fn not_pending(&self, request: RequestHandle) -> UsageError {
        if request.0 >= 1 && request.0 <= self.last_request {
            UsageError::AlreadyAnswered(request)
        } else {
            UsageError::UnknownRequest(request)
        }
    }

    /// `shutdown` received or stdin ended: tell the author, once.
    fn begin_shutdown(&mut self) {
        if !self.shutting_down {
            self.shutting_down = true;
            self.events.push_back(Event::Shutdown);
        }
    }

    // ---- Output ----------------------------------------------------------------------

    /// Sends a reply known now: as its own line, or into its batch.
    fn reply(&mut self, route: Route, response: Response) {
        match route {
            Route::Line => self.write_response(&response),
            Route::Batch(batch) => self.batches.add(batch, response),
        }
    }

    fn write_response(&mut self, response: &Response) {
        self.out
            .write_line(|buf| rpc::write_response(response, buf));
    }

    /// Adds the answer to a request that came in a batch, and writes the batch's
    /// replies once it is complete.
    fn answer_in_batch(&mut self, batch: BatchId, response: Response) {
        if let Some(replies) = self.batches.answer(batch, response) {
            self.write_batch(&replies);
        }
    }

    /// Writes a finished batch's replies as one array line; nothing for none.
    fn write_batch(&mut self, replies: &[Response]) {
        if !replies.is_empty() {
            self.out
                .write_line(|buf| rpc::write_response_batch(replies, buf));
        }
    }

    fn write_notification(&mut self, method: &str, params: &Value) {
        self.out
            .write_line(|buf| rpc::write_notification(method, Some(params), buf));
    }
}
