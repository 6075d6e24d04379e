//! What goes into the Extension endpoint and what comes out of it.

use alloc::string::String;
use core::fmt;

use super::RequestHandle;
pub use crate::frame::Excerpt;
use crate::json::Value;
use crate::message::{InitializeParams, Text};
use crate::rpc::{DecodeError, Id};

/// What happened on the extension's side of the pipe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input<'a> {
    /// Bytes read from stdin, in whatever chunks they arrived.
    Stdin(&'a [u8]),
    /// Stdin reached its end: the Core is gone or closed the pipe. It means the same
    /// as a `shutdown` notification, after the lines read before it.
    StdinClosed,
}

/// What the driver should do next.
#[derive(Debug, PartialEq)]
#[must_use = "an output is an action for the driver: dropping it loses it"]
pub enum Output<'a> {
    /// Write all of these bytes to stdout (and flush), then poll again. They are
    /// whole lines; the next [`poll_output`](super::Extension::poll_output) reuses the
    /// buffer they live in.
    Transmit(&'a [u8]),
    /// Something the tool author handles; poll again afterwards.
    Event(Event),
    /// Exit the process with this code. Given once, after [`Event::Shutdown`] and
    /// once no request is pending; nothing but [`Output::Wait`] follows it.
    Exit {
        /// The exit code: `0`.
        code: i32,
    },
    /// Nothing to do until more input arrives or the author answers a request.
    /// The Extension endpoint has no timers: there is no deadline to wait for.
    Wait,
}

/// Something the tool author handles.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// The Core sent `initialize`; it has already been answered from the tool registry.
    Initialized {
        /// The Core's `initialize` params (protocol version and working directory).
        params: InitializeParams,
    },
    /// Run a tool. Answer later, in any order, with
    /// [`respond`](super::Extension::respond) or
    /// [`respond_error`](super::Extension::respond_error); report progress with
    /// [`progress`](super::Extension::progress) meanwhile. The input has already
    /// been checked against the tool's `inputSchema` (unless
    /// [`Config::validate_input`](super::Config::validate_input) is off).
    Execute {
        /// The handle to answer with.
        request: RequestHandle,
        /// A tool from the registry.
        tool_name: Text,
        /// The tool's input.
        input: Value,
    },
    /// A request for a method the protocol does not define, delivered only with
    /// [`Config::custom_methods`](super::Config::custom_methods) on. Answer it with
    /// [`respond_value`](super::Extension::respond_value).
    Request {
        /// The handle to answer with.
        request: RequestHandle,
        /// The method name.
        method: String,
        /// The params, if any.
        params: Option<Value>,
    },
    /// A notification other than `shutdown` (unknown methods included: the protocol
    /// may grow). Never answered.
    Notification {
        /// The method name.
        method: String,
        /// The params, if any.
        params: Option<Value>,
    },
    /// Input that broke the protocol. Where the JSON-RPC specification says so it
    /// has also been answered; the session goes on.
    Protocol(PeerError),
    /// `shutdown` was received, or stdin ended: clean up and finish or fail the
    /// pending requests. [`Output::Exit`] follows once none is pending. Given once.
    Shutdown,
}

/// What was wrong with the input. The same event has the same name and fields as in
/// the Core's `host::PeerError`; each says which reply, if any, was sent for it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum PeerError {
    /// A line that is not JSON. Answered with -32700 (Parse error), id `null`.
    NotJson {
        /// The start of the line.
        line: Excerpt,
        /// Where the JSON went wrong.
        error: DecodeError,
    },
    /// JSON that is not a valid JSON-RPC 2.0 request (or batch entry). Answered with
    /// -32600 (Invalid Request), with the id it carried when one could be read
    /// ([`DecodeError::to_response`] is the reply).
    InvalidMessage {
        /// What is wrong with it.
        error: DecodeError,
    },
    /// A line longer than [`Config::max_line_bytes`](super::Config::max_line_bytes),
    /// skipped. When an `"id"` was found at its start it was answered with -32600.
    LineTooLong {
        /// The start of the line.
        line: Excerpt,
        /// The id found at the start of the line, which the error reply named.
        id: Option<Id>,
    },
    /// Stdin ended in the middle of a line; the partial line was dropped.
    Truncated {
        /// The start of the unfinished line.
        line: Excerpt,
    },
    /// A response: the extension never sends requests, so nothing can be answered.
    /// Not replied to.
    UnexpectedResponse {
        /// The response's id (`null` when it could not be read).
        id: Id,
    },
}

impl fmt::Display for PeerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PeerError::NotJson { line, error } => write!(f, "not JSON ({error}): {line}"),
            PeerError::InvalidMessage { error } => write!(f, "invalid message: {error}"),
            PeerError::LineTooLong { line, id: Some(id) } => {
                write!(f, "line too long ({} bytes, id {id})", line.len)
            }
            PeerError::LineTooLong { line, id: None } => {
                write!(f, "line too long ({} bytes)", line.len)
            }
            PeerError::Truncated { line } => write!(f, "stream ended inside a line: {line}"),
            PeerError::UnexpectedResponse { id } => write!(f, "unexpected response (id {id})"),
        }
    }
}

/// The tool author's mistakes. The call that made one changed nothing and sent nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UsageError {
    /// The request was already answered (by the author, or automatically).
    AlreadyAnswered(RequestHandle),
    /// This endpoint never handed out this request handle.
    UnknownRequest(RequestHandle),
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UsageError::AlreadyAnswered(r) => write!(f, "request {r} was already answered"),
            UsageError::UnknownRequest(r) => write!(f, "request {r} is unknown to this endpoint"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for UsageError {}

#[cfg(feature = "std")]
impl std::error::Error for PeerError {}
