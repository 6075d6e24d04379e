//! MCP both ways: an MCP server served as a Dhara extension ([`Adapter`]), and a Dhara
//! extension served as an MCP server ([`Server`]).
//!
//! The Model Context Protocol is JSON-RPC 2.0 over a child's stdio, like the Dhara
//! protocol: `initialize`, a tool list, calls whose result is `content` plus
//! `isError`, and progress. The bridges are sans-IO state machines in the style of
//! [`host::Core`](crate::host::Core): bytes from each side go in with
//! `handle_input`, and `poll_output` says what to write to which side, what happened,
//! and when to stop. They are built on the endpoints, not on string rewriting: the
//! [`Adapter`] drives an [`Extension`](crate::extension::Extension) facing the Dhara
//! Core, the [`Server`] drives a [`Core`](crate::host::Core) facing the Dhara
//! extension, and each speaks MCP on the other side with the messages of
//! [this module's types](self#types).
//!
//! | file | what it holds |
//! |---|---|
//! | `mod.rs` | the protocol versions and methods, the MCP-side [`Decoder`] |
//! | `types.rs` | the MCP messages the bridges read and write |
//! | `adapter.rs` | [`Adapter`]: an MCP client on one side, a Dhara extension on the other |
//! | `server.rs` | [`Server`]: an MCP server on one side, a Dhara Core on the other |
//!
//! # Versions
//!
//! The protocol versions 2024-11-05, 2025-03-26 and 2025-06-18 are supported
//! ([`SUPPORTED_PROTOCOL_VERSIONS`]). The [`Adapter`] asks for the latest and accepts
//! any of them; the [`Server`] answers with the version the client asked for when it
//! is one of them, else with the latest (the client then decides).
//!
//! # Types
//!
//! [`InitializeRequestParams`], [`InitializeResult`], [`Implementation`], [`Tool`],
//! [`ListToolsResult`], [`CallToolRequestParams`], [`CallToolResult`],
//! [`ContentBlock`], [`ResourceContents`], [`ProgressToken`],
//! [`ProgressNotificationParams`], [`LoggingMessageNotificationParams`] and
//! [`CancelledNotificationParams`], each with `from_value` and `to_value`.

mod adapter;
mod server;
mod types;

use alloc::collections::VecDeque;
use alloc::vec::Vec;

pub use adapter::{
    Adapter, AdapterConfig, AdapterEvent, AdapterInput, AdapterOutput, MCP_SERVER_EXITED,
};
pub use server::{
    EXTENSION_GONE, NOT_INITIALIZED, REQUEST_TIMEOUT, Server, ServerConfig, ServerEvent,
    ServerInput, ServerOutput,
};
pub use types::{
    CallToolRequestParams, CallToolResult, CancelledNotificationParams, ContentBlock,
    Implementation, InitializeRequestParams, InitializeResult, ListToolsResult,
    LoggingMessageNotificationParams, ProgressNotificationParams, ProgressToken, ResourceContents,
    ShapeError, Tool,
};

use crate::frame::{Frame, LineDecoder};
use crate::rpc::{self, DecodeError, Incoming, Message};

/// The MCP protocol version the bridges prefer.
pub const LATEST_PROTOCOL_VERSION: &str = "2025-06-18";

/// The MCP protocol versions the bridges speak, the latest first.
pub const SUPPORTED_PROTOCOL_VERSIONS: &[&str] = &["2025-06-18", "2025-03-26", "2024-11-05"];

/// MCP method names, as they appear on the wire.
pub mod method {
    /// `initialize`: the client's first request.
    pub const INITIALIZE: &str = "initialize";
    /// `notifications/initialized`: the client's answer to the `initialize` result.
    pub const INITIALIZED: &str = "notifications/initialized";
    /// `ping`: either side checks the other is alive; the answer is `{}`.
    pub const PING: &str = "ping";
    /// `tools/list`: one page of the server's tools.
    pub const TOOLS_LIST: &str = "tools/list";
    /// `tools/call`: run one tool.
    pub const TOOLS_CALL: &str = "tools/call";
    /// `notifications/progress`: progress of a request that named a progress token.
    pub const PROGRESS: &str = "notifications/progress";
    /// `notifications/cancelled`: the sender no longer wants the answer to a request.
    pub const CANCELLED: &str = "notifications/cancelled";
    /// `notifications/tools/list_changed`: the server's tools changed.
    pub const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
    /// `notifications/message`: a log message from the server.
    pub const MESSAGE: &str = "notifications/message";
}

/// What one line from the MCP side held, message by message.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Received {
    /// A valid JSON-RPC 2.0 message.
    Message(Message),
    /// A line that is not JSON, or a message (or batch entry) that breaks JSON-RPC 2.0.
    Invalid(DecodeError),
    /// A line over the limit, discarded.
    TooLong {
        /// Its length in bytes.
        len: u64,
    },
    /// The stream ended inside a line, discarded.
    Truncated {
        /// The length of the unfinished line.
        len: u64,
    },
}

/// The MCP side's decoder: newline framing (MCP's stdio transport), then JSON-RPC 2.0,
/// a batch's entries one by one.
///
/// Bounded: it keeps the bytes pushed and not yet decoded (at most one line of
/// `max_line_bytes` at a time beyond the complete lines waiting), and the entries of
/// one batch line.
///
/// ```
/// use dhara_protocol::mcp::{Decoder, Received};
///
/// let mut decoder = Decoder::new(1 << 20);
/// decoder.push(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
/// assert_eq!(decoder.next(), None); // no newline yet
/// decoder.push(b"\n");
/// assert!(matches!(decoder.next(), Some(Received::Message(_))));
/// ```
#[derive(Debug)]
pub struct Decoder {
    lines: LineDecoder,
    batch: VecDeque<Result<Message, DecodeError>>,
}

impl Decoder {
    /// A decoder that accepts lines up to `max_line_bytes`.
    pub fn new(max_line_bytes: usize) -> Decoder {
        Decoder {
            lines: LineDecoder::with_max_line_bytes(max_line_bytes),
            batch: VecDeque::new(),
        }
    }

    /// Bytes read, in any chunking.
    pub fn push(&mut self, bytes: &[u8]) {
        self.lines.push(bytes);
    }

    /// The stream ended: a last unfinished line is reported as truncated.
    pub fn end(&mut self) {
        self.lines.end();
    }
}

impl Iterator for Decoder {
    type Item = Received;

    /// The next message, if a complete line holds one. `None` means "not yet": more
    /// bytes (or the end) may give more.
    fn next(&mut self) -> Option<Received> {
        loop {
            if let Some(entry) = self.batch.pop_front() {
                return Some(received(entry));
            }
            match self.lines.next_frame()? {
                Frame::Line(line) => match rpc::decode(line, rpc::DecodeOptions::DEFAULT) {
                    Incoming::Single(entry) => return Some(received(entry)),
                    Incoming::Batch(entries) => self.batch.extend(entries),
                },
                Frame::TooLong { len, .. } => return Some(Received::TooLong { len }),
                Frame::Truncated { len, .. } => return Some(Received::Truncated { len }),
            }
        }
    }
}

fn received(entry: Result<Message, DecodeError>) -> Received {
    match entry {
        Ok(message) => Received::Message(message),
        Err(error) => Received::Invalid(error),
    }
}

/// Bytes for one side, handed out once and cleared by the next poll.
#[derive(Debug, Default)]
struct Outbox {
    bytes: Vec<u8>,
    handed: bool,
}

impl Outbox {
    /// Clears what was handed out.
    fn reclaim(&mut self) {
        if core::mem::take(&mut self.handed) {
            self.bytes.clear();
            if self.bytes.capacity() > crate::frame::OutputBuffer::KEEP_BYTES {
                self.bytes.shrink_to(crate::frame::OutputBuffer::KEEP_BYTES);
            }
        }
    }

    fn is_pending(&self) -> bool {
        !self.handed && !self.bytes.is_empty()
    }

    /// Appends whole lines as they are.
    fn extend(&mut self, lines: &[u8]) {
        self.reclaim();
        self.bytes.extend_from_slice(lines);
    }

    /// Appends one message as a line.
    fn message(&mut self, message: &Message) {
        self.reclaim();
        crate::frame::write_line(&mut self.bytes, |out| rpc::write_message(message, out));
    }

    fn hand_out(&mut self) -> &[u8] {
        self.handed = true;
        &self.bytes
    }
}
