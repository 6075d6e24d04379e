//! What goes in and out of the Core: inputs, outputs, events, and the two kinds of
//! error (the caller's [`UsageError`] and the extension's [`PeerError`]).

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use super::calls::{CallId, EndReason};
pub use crate::frame::{EXCERPT_BYTES, Excerpt};
use crate::json::Value;
use crate::message::{
    FieldError, InitializeResult, Progress, RejectedTool, Tool, ToolList, ToolResult,
};
use crate::rpc::{DecodeError, ErrorObject, Id};
use crate::schema::SchemaError;

/// Something that happened to the extension process, handed to
/// [`Core::handle_input`](super::Core::handle_input) with the current time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input<'a> {
    /// Bytes read from the extension's stdout, in any chunking.
    Stdout(&'a [u8]),
    /// The extension's stdout reached its end. Bytes reported after this are ignored.
    StdoutClosed,
    /// The process exited (by itself, or after [`Output::Kill`]). `code` is its exit
    /// code, `None` when it was ended by a signal. A driver reads stdout to its end and
    /// reports [`StdoutClosed`](Input::StdoutClosed) first; the Core still decodes the
    /// lines already handed to it before it ends the calls left pending. Everything
    /// reported after the exit is ignored.
    Exited {
        /// The exit code, if the process returned one.
        code: Option<i32>,
    },
    /// Time passed: the instant of the last [`Output::Wait`] was reached.
    Timeout,
}

/// What the driver should do next, from [`Core::poll_output`](super::Core::poll_output).
#[derive(Debug, PartialEq)]
#[must_use = "an output is an action for the driver: dropping it loses it"]
pub enum Output<'a> {
    /// Write all of these bytes to the extension's stdin, then poll again. The slice
    /// borrows the Core's output buffer, which the next call to `poll_output` reuses.
    Transmit(&'a [u8]),
    /// Something the application should know about.
    Event(Event),
    /// Close the extension's stdin, once the bytes transmitted before this are
    /// written. Given once, right after the `shutdown` notification is transmitted:
    /// the end of its input tells an extension to exit as `shutdown` does, so one
    /// that ignores the notification but exits at the end of stdin (many line-loop
    /// programs do) is not left to be killed. The Core transmits nothing after it.
    CloseStdin,
    /// Kill the process (and its group) now, then report [`Input::Exited`]. Given at
    /// most once, and never before the grace period after `shutdown` has ended.
    Kill,
    /// Nothing to do until new input arrives, or until this instant passes (then report
    /// [`Input::Timeout`]). `None`: no deadline is pending.
    Wait(Option<crate::time::Instant>),
}

/// An event for the application.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// A call ended. Exactly one such event comes for every [`CallId`] the Core handed
    /// out.
    CallEnded {
        /// The call.
        call: CallId,
        /// Its reply, or why it has none.
        result: Result<Reply, CallError>,
    },
    /// A `progress` notification, attributed by its `id` member, or to the one call in
    /// flight; `call` is `None` when neither tells (several calls in flight, or an id
    /// that names no call in flight).
    Progress {
        /// The call it belongs to, if known.
        call: Option<CallId>,
        /// The notification's params.
        progress: Progress,
    },
    /// The extension announced a changed tool set with a `tools/list` notification.
    /// [`Core::tools`](super::Core::tools) already returns the new set.
    ToolsChanged {
        /// The new tool set.
        tools: Vec<Tool>,
    },
    /// A notification the Core does not know, passed on as it came (forward
    /// compatible).
    Notification {
        /// Its method.
        method: String,
        /// Its params.
        params: Option<Value>,
    },
    /// The extension broke the protocol. The offending input was skipped (or answered,
    /// see [`PeerError`]); the session goes on.
    Protocol(PeerError),
    /// `shutdown` was sent and the grace period started. If the process has not exited
    /// when it ends, [`Output::Kill`] follows.
    ShuttingDown {
        /// Why the session is ending.
        reason: ShutdownReason,
    },
    /// The session is over: the exit was reported and every call has ended. The last
    /// event; nothing follows it.
    Closed {
        /// The exit code reported with [`Input::Exited`].
        code: Option<i32>,
    },
}

/// The typed reply to a call.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Reply {
    /// The result of `initialize`.
    Initialized(InitializeResult),
    /// The result of a `tools/list` request.
    Tools(ToolList),
    /// The result of `tools/execute`. `is_error: true` is a tool-level failure, still a
    /// reply.
    Executed(ToolResult),
}

/// Why a call ended without a reply.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum CallError {
    /// The extension answered with a JSON-RPC error.
    Rpc(ErrorObject),
    /// The call's deadline passed. The Core also started the shutdown of the
    /// extension.
    Timeout {
        /// Bytes the extension wrote after its last newline, if any: most often the
        /// reply itself, written without its final newline or not flushed.
        unfinished_line: Option<Excerpt>,
    },
    /// The caller cancelled it with [`Core::cancel`](super::Core::cancel).
    Cancelled,
    /// The extension exited, or closed its stdout, before answering.
    ExtensionExited {
        /// Bytes the extension wrote after its last newline before its stdout ended,
        /// if any: most often the reply, written without its final newline.
        unfinished_line: Option<Excerpt>,
    },
    /// The extension answered with a result that does not have the shape of the
    /// method's result.
    InvalidResult(FieldError),
    /// The extension answered with a line shaped like a response to this call (its
    /// id could be read) that breaks JSON-RPC 2.0: a wrong `jsonrpc`, both `result`
    /// and `error`, an error object without an integer `code`, and so on. The answer
    /// came and cannot be used, so the call ends at once instead of at its deadline.
    InvalidReply(DecodeError),
    /// The reply was longer than `max_line_bytes` and was discarded. The call ends as
    /// soon as the line passes the limit, when the kept start of the line shows it is
    /// a response with this call's id: that is, when `id` comes before the `result` or
    /// `error` member, as most JSON-RPC writers put it. Otherwise the line is reported
    /// as [`PeerError::LineTooLong`] and the call ends by its deadline.
    TooLarge {
        /// Its length in bytes.
        len: u64,
    },
}

/// Why the session is shutting down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShutdownReason {
    /// The application asked for it with [`Core::shutdown`](super::Core::shutdown).
    Requested,
    /// A call's deadline passed.
    Timeout {
        /// The call that timed out.
        call: CallId,
    },
    /// The extension closed its stdout while still running: it can no longer answer.
    StdoutClosed,
}

/// Where the session is in its lifecycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum State {
    /// Nothing sent yet: call [`Core::initialize`](super::Core::initialize).
    NotStarted,
    /// `initialize` was sent; its reply has not come yet.
    Initializing,
    /// The extension answered `initialize`: tools can be called.
    Ready,
    /// `shutdown` was sent; waiting for the exit (or the end of the grace period).
    ShuttingDown,
    /// The exit was reported. Commands are refused; the events left (the end of the
    /// calls still pending, then [`Event::Closed`]) are still handed out.
    Closed,
}

/// A mistake of the extension. It is reported as [`Event::Protocol`] and never ends the
/// session by itself. The Core never answers a response, an error, or a line that is
/// not JSON, so no error storm can start between the two sides; only a request gets an
/// answer (`-32601`).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum PeerError {
    /// A line that is not JSON: most often an extension printing logs to stdout.
    /// Skipped.
    NotJson {
        /// The start of the line.
        line: Excerpt,
        /// Where the JSON went wrong.
        error: DecodeError,
    },
    /// JSON that is not a valid JSON-RPC 2.0 message (or batch entry). Skipped.
    InvalidMessage {
        /// What is wrong with it.
        error: DecodeError,
    },
    /// A line longer than `max_line_bytes` that names no call in flight (or whose id
    /// could not be found in its first bytes). Discarded.
    LineTooLong {
        /// The start of the line.
        line: Excerpt,
        /// The id found at the start of the line, which names no call in flight.
        id: Option<Id>,
    },
    /// The stream ended in the middle of a line. Discarded.
    Truncated {
        /// The start of the unfinished line.
        line: Excerpt,
    },
    /// A response whose id the Core never issued: an integer it has not used yet (or
    /// zero, or negative), a string (even `"1"`: ids are never matched by guess), or
    /// `null` with a result.
    UnknownId {
        /// The id as it came.
        id: Id,
    },
    /// A response for a call that is no longer in flight: it timed out, was cancelled,
    /// or was already answered (a duplicate). Harmless.
    LateResponse {
        /// The call it answers.
        call: CallId,
        /// How the call ended, if it ended recently enough to be remembered
        /// (`Config::recent_ids`).
        ended: Option<EndReason>,
    },
    /// An error response with a `null` id: the extension could not read a line the
    /// Core sent. No call can be named; pending calls end by their own deadlines.
    ErrorWithoutId {
        /// The error it sent.
        error: ErrorObject,
    },
    /// The extension sent a request. The Core serves none, so it answered `-32601`
    /// (Method not found), unless the process had already exited.
    UnexpectedRequest {
        /// The request's id (echoed in the answer).
        id: Id,
        /// The method asked for.
        method: String,
    },
    /// A notification the Core knows (`progress`, `tools/list`) with params that do
    /// not fit. Skipped.
    InvalidParams {
        /// The notification's method.
        method: String,
        /// What does not fit.
        error: FieldError,
    },
    /// A tool descriptor in an `initialize` result or a tool list that does not fit
    /// (a numeric `description`, a string `inputSchema`, ...). It is left out of
    /// [`Core::tools`](crate::host::Core::tools); the other tools stay callable.
    InvalidTool {
        /// Which tool, and why.
        tool: RejectedTool,
    },
}

/// A mistake of the caller, returned by the command that made it. The command changed
/// nothing.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum UsageError {
    /// `execute` or `list_tools` before the reply to `initialize` came (calls are not
    /// queued: wait for [`Reply::Initialized`]).
    NotReady,
    /// `initialize` was already sent.
    AlreadyInitialized,
    /// The session is shutting down (`shutdown` was sent, or stdout closed): no new
    /// calls, no second shutdown.
    ShuttingDown,
    /// The exit was reported: the session is over.
    Closed,
    /// `max_in_flight` calls are already in flight.
    TooManyCalls {
        /// The configured limit.
        limit: usize,
    },
    /// No tool of that name is known ([`Core::tools`](super::Core::tools)).
    UnknownTool {
        /// The name asked for.
        name: String,
    },
    /// The input does not satisfy the tool's `inputSchema` (checked when
    /// `Config::validate_input` is on).
    InvalidInput {
        /// The tool.
        tool: String,
        /// Why the input does not fit.
        error: SchemaError,
    },
    /// That call is not in flight (it already ended, or was never started).
    UnknownCall {
        /// The call named.
        call: CallId,
    },
    /// Every id below 2^53 has been used: the session cannot start another call.
    IdsExhausted,
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UsageError::NotReady => f.write_str("the extension has not answered initialize yet"),
            UsageError::AlreadyInitialized => f.write_str("initialize was already sent"),
            UsageError::ShuttingDown => f.write_str("the session is shutting down"),
            UsageError::Closed => f.write_str("the session is closed"),
            UsageError::TooManyCalls { limit } => write!(f, "already {limit} calls in flight"),
            UsageError::UnknownTool { name } => write!(f, "unknown tool '{name}'"),
            UsageError::InvalidInput { tool, error } => {
                write!(f, "invalid input for tool '{tool}': {error}")
            }
            UsageError::UnknownCall { call } => write!(f, "call {} is not in flight", call.get()),
            UsageError::IdsExhausted => f.write_str("no request ids left below 2^53"),
        }
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::Rpc(e) => write!(f, "error {}: {}", e.code.code(), e.message),
            CallError::Timeout { unfinished_line } => {
                f.write_str("the extension did not answer in time")?;
                write_unfinished(f, unfinished_line.as_ref(), "are pending")
            }
            CallError::Cancelled => f.write_str("cancelled"),
            CallError::ExtensionExited { unfinished_line } => {
                f.write_str("the extension exited before answering")?;
                write_unfinished(f, unfinished_line.as_ref(), "came before the end")
            }
            CallError::InvalidResult(e) => write!(f, "invalid result: {e}"),
            CallError::InvalidReply(e) => write!(f, "invalid reply: {e}"),
            CallError::TooLarge { len } => write!(f, "the reply was too large ({len} bytes)"),
        }
    }
}

/// `; 57 bytes without a newline are pending: {"jsonrpc"… (a missing newline or
/// flush?)`, for a call that ended with bytes left after the last newline.
fn write_unfinished(f: &mut fmt::Formatter<'_>, line: Option<&Excerpt>, how: &str) -> fmt::Result {
    match line {
        Some(line) => write!(
            f,
            "; {} bytes without a newline {how}: {line} (a missing newline or flush?)",
            line.len
        ),
        None => Ok(()),
    }
}

/// `line too long (70000 bytes, id 7)`: the same words in both endpoints.
fn write_too_long(f: &mut fmt::Formatter<'_>, line: &Excerpt, id: Option<&Id>) -> fmt::Result {
    match id {
        Some(id) => write!(f, "line too long ({} bytes, id {id})", line.len),
        None => write!(f, "line too long ({} bytes)", line.len),
    }
}

impl fmt::Display for PeerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PeerError::NotJson { line, error } => write!(f, "not JSON ({error}): {line}"),
            PeerError::InvalidMessage { error } => write!(f, "invalid message: {error}"),
            PeerError::LineTooLong { line, id } => write_too_long(f, line, id.as_ref()),
            PeerError::Truncated { line } => write!(f, "stream ended inside a line: {line}"),
            PeerError::UnknownId { id } => write!(f, "response with unknown id {id}"),
            PeerError::LateResponse { call, .. } => {
                write!(f, "late response for call {}", call.get())
            }
            PeerError::ErrorWithoutId { error } => {
                write!(
                    f,
                    "error without id: {} {}",
                    error.code.code(),
                    error.message
                )
            }
            PeerError::UnexpectedRequest { method, .. } => {
                write!(f, "unexpected request '{method}' (answered -32601)")
            }
            PeerError::InvalidParams { method, error } => {
                write!(f, "invalid params for '{method}': {error}")
            }
            PeerError::InvalidTool { tool } => write!(f, "left out {tool}"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for UsageError {}
#[cfg(feature = "std")]
impl std::error::Error for CallError {}
#[cfg(feature = "std")]
impl std::error::Error for PeerError {}
