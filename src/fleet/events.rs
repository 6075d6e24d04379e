//! What goes in and out of the [`Fleet`](super::Fleet): the keys that name an
//! extension and one of its processes, inputs, outputs, events, and the errors.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::time::Duration;

use crate::host::{self, PeerError, ShutdownReason};
use crate::json::Value;
use crate::message::{Progress, ToolResult};
use crate::time::Instant;

/// One extension of a fleet, as [`Fleet::add`](super::Fleet::add) returned it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExtensionKey(usize);

impl ExtensionKey {
    pub(crate) fn new(index: usize) -> ExtensionKey {
        ExtensionKey(index)
    }

    pub(crate) fn index(self) -> usize {
        self.0
    }

    #[cfg(test)]
    pub(crate) const fn for_tests(n: usize) -> ExtensionKey {
        ExtensionKey(n)
    }
}

/// One process of one extension: the extension and the count of its starts. Every
/// [`Output::Start`] names a new one, never reused, and every input about that
/// process names it again, so bytes, exits and start answers of an old process are
/// told from the new one's (and ignored).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProcessKey {
    extension: ExtensionKey,
    start: u64,
}

impl ProcessKey {
    pub(crate) fn new(extension: ExtensionKey, start: u64) -> ProcessKey {
        ProcessKey { extension, start }
    }

    /// The extension this is a process of.
    pub fn extension(self) -> ExtensionKey {
        self.extension
    }

    /// Which start of the extension it is: 1 for the first.
    pub fn start(self) -> u64 {
        self.start
    }
}

/// One call the fleet accepted, from [`Fleet::execute`](super::Fleet::execute). It is
/// the fleet's own handle, counted from 1 and never reused: not the JSON-RPC id of any
/// request (each process's Core numbers its requests from 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallHandle(u64);

impl CallHandle {
    pub(crate) fn new(n: u64) -> CallHandle {
        CallHandle(n)
    }

    /// The handle's number.
    pub fn get(self) -> u64 {
        self.0
    }
}

/// What happened, handed to [`Fleet::handle_input`](super::Fleet::handle_input) with
/// the current time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input<'a> {
    /// The process [`Output::Start`] asked for is running, its pipes open.
    Started(ProcessKey),
    /// The process [`Output::Start`] asked for could not be started.
    StartFailed {
        /// The process.
        process: ProcessKey,
        /// Why, for the events and errors that follow.
        reason: &'a str,
    },
    /// Something happened to a running process: what its [`host::Core`] takes.
    Process {
        /// The process.
        process: ProcessKey,
        /// What happened to it.
        input: host::Input<'a>,
    },
    /// Time passed: the instant of the last [`Output::Wait`] was reached.
    Timeout,
}

/// What the driver should do next, from
/// [`Fleet::poll_output`](super::Fleet::poll_output).
#[derive(Debug, PartialEq)]
#[must_use = "an output is an action for the driver: dropping it loses it"]
pub enum Output<'a> {
    /// Start a process of the extension `process.extension()`
    /// ([`Fleet::name`](super::Fleet::name) names it), then report
    /// [`Input::Started`] or [`Input::StartFailed`] with this key.
    Start(ProcessKey),
    /// Write all of these bytes to the process's stdin, then poll again.
    Transmit {
        /// The process.
        process: ProcessKey,
        /// The bytes, borrowed from the fleet until the next poll.
        bytes: &'a [u8],
    },
    /// Close the process's stdin once the bytes transmitted to it before this are
    /// written (its Core sent `shutdown`; see [`host::Output::CloseStdin`]).
    CloseStdin {
        /// The process.
        process: ProcessKey,
    },
    /// Kill the process (and its group), then report its exit.
    Kill {
        /// The process.
        process: ProcessKey,
    },
    /// Something the application should know about.
    Event(Event),
    /// Nothing to do until new input arrives, or until this instant passes (then
    /// report [`Input::Timeout`]). `None`: no timer is pending.
    Wait(Option<Instant>),
}

/// An event for the application.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// A call ended. Exactly one such event comes for every [`CallHandle`] handed out.
    CallEnded {
        /// The call.
        call: CallHandle,
        /// Its result, or why it has none.
        result: Result<ToolResult, CallError>,
    },
    /// Progress from a process, attributed to a call when its Core could tell.
    Progress {
        /// The process.
        process: ProcessKey,
        /// The call it belongs to, if known.
        call: Option<CallHandle>,
        /// The notification's params.
        progress: Progress,
    },
    /// The registry changed for this extension (its tools, or the names they are
    /// offered under): [`Fleet::tools`](super::Fleet::tools) already shows the new
    /// state. Names are qualified names.
    ToolsChanged {
        /// The extension.
        extension: ExtensionKey,
        /// Tools that were not there before.
        added: Vec<String>,
        /// Tools that are gone.
        removed: Vec<String>,
        /// Tools whose description, schema or offered name changed.
        changed: Vec<String>,
    },
    /// A process answered `initialize`: its tools can be called.
    Ready {
        /// The process.
        process: ProcessKey,
        /// The name and version it gave.
        server: (String, String),
    },
    /// A process failed `initialize` (an error, a bad result, a timeout); it is shut
    /// down and its exit handled as any other.
    InitializeFailed {
        /// The process.
        process: ProcessKey,
        /// Why.
        error: host::CallError,
    },
    /// A process's Core sent `shutdown` and started the grace period.
    ShuttingDown {
        /// The process.
        process: ProcessKey,
        /// Why.
        reason: ShutdownReason,
    },
    /// A process ended (or could not be started), and what comes next.
    Stopped {
        /// The process.
        process: ProcessKey,
        /// How it ended.
        how: Stop,
        /// What the fleet does next.
        next: Next,
    },
    /// An extension broke the protocol; its session goes on.
    Protocol {
        /// The process.
        process: ProcessKey,
        /// What it did.
        error: PeerError,
    },
    /// A notification the Core does not know, passed on as it came.
    Notification {
        /// The process.
        process: ProcessKey,
        /// Its method.
        method: String,
        /// Its params.
        params: Option<Value>,
    },
    /// After [`Fleet::shutdown`](super::Fleet::shutdown): every process has ended and
    /// every call has ended. The last event.
    Closed,
}

/// How a process ended.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stop {
    /// It exited: by itself, or ended by a signal the fleet did not ask for (its
    /// exit code, if it had one, even after a kill was asked).
    Exited {
        /// The exit code, `None` when ended by a signal.
        code: Option<i32>,
    },
    /// The fleet had it killed (the grace after `shutdown` ran out, after a call's
    /// timeout or the fleet's own shutdown), and it ended without an exit code.
    Killed,
    /// It could not be started.
    StartFailed {
        /// Why, as the driver said.
        reason: String,
    },
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stop::Exited { code: Some(code) } => write!(f, "exited with code {code}"),
            Stop::Exited { code: None } => f.write_str("was ended by a signal"),
            Stop::Killed => f.write_str("was killed when its shutdown grace ran out"),
            Stop::StartFailed { reason } => write!(f, "could not be started: {reason}"),
        }
    }
}

/// What the fleet does after a process stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Next {
    /// It asks for a new process no earlier than this (`AtOnce` policy, or calls are
    /// waiting).
    RestartAt(Instant),
    /// It asks for a new process when a call for one of its tools comes, no earlier
    /// than this.
    RestartOnNextCall(Instant),
    /// The crash-loop breaker tripped: the extension is failed.
    Failed(Failure),
    /// Nothing: the fleet is shutting down.
    Nothing,
}

/// Why an extension is marked failed, and since when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// When the breaker tripped.
    pub since: Instant,
    /// How many exits came within the window.
    pub exits: usize,
    /// The window.
    pub window: Duration,
    /// How its last process ended.
    pub last: Stop,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "failed since {:.3}s: {} exits within {}s, the last one {}",
            self.since.since_origin().as_secs_f64(),
            self.exits,
            self.window.as_secs(),
            self.last
        )
    }
}

/// Where an extension is, from [`Fleet::status`](super::Fleet::status).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Status {
    /// A process was asked for and has not been reported started.
    Starting(ProcessKey),
    /// A process runs; `ready` once it answered `initialize`.
    Running {
        /// The process.
        process: ProcessKey,
        /// Its tools can be called.
        ready: bool,
    },
    /// No process runs; one will be asked for no earlier than `not_before`, at once
    /// or on the next call per its policy.
    Stopped {
        /// The earliest restart.
        not_before: Instant,
    },
    /// The crash-loop breaker tripped.
    Failed(Failure),
    /// The fleet shut down.
    Finished,
}

/// A mistake of the caller, returned by the command that made it. The command changed
/// nothing.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum UsageError {
    /// No tool of any extension has that name.
    UnknownTool {
        /// The name asked for.
        name: String,
    },
    /// A bare name that several extensions offer.
    AmbiguousTool {
        /// The name asked for.
        name: String,
        /// The qualified names of the tools it could mean.
        candidates: Vec<String>,
    },
    /// The tool's extension is marked failed.
    ExtensionFailed {
        /// The extension's name.
        extension: String,
        /// Why, and since when.
        failure: Failure,
    },
    /// The call cannot be sent now, and the wait queue is full.
    QueueFull {
        /// The queue's capacity ([`Config::max_queued`](super::Config::max_queued)).
        limit: usize,
    },
    /// The extension's Core refused the call: its input does not fit the tool's
    /// schema, for example.
    Refused(host::UsageError),
    /// That call is not in flight or waiting.
    UnknownCall {
        /// The call named.
        call: CallHandle,
    },
    /// No extension has that key or name.
    UnknownExtension,
    /// An extension name that does not fit the rule of
    /// [`valid_extension_name`](super::valid_extension_name), or one already taken.
    BadExtensionName {
        /// The name.
        name: String,
    },
    /// That extension is running or starting already.
    AlreadyRunning,
    /// [`Fleet::shutdown`](super::Fleet::shutdown) was called.
    ShuttingDown,
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UsageError::UnknownTool { name } => write!(f, "unknown tool '{name}'"),
            UsageError::AmbiguousTool { name, candidates } => {
                write!(f, "tool name '{name}' is ambiguous: use one of ")?;
                for (i, candidate) in candidates.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    write!(f, "{sep}'{candidate}'")?;
                }
                Ok(())
            }
            UsageError::ExtensionFailed { extension, failure } => {
                write!(f, "extension '{extension}' {failure}")
            }
            UsageError::QueueFull { limit } => {
                write!(f, "{limit} calls are already waiting to be sent")
            }
            UsageError::Refused(e) => write!(f, "{e}"),
            UsageError::UnknownCall { call } => write!(f, "call {} is not pending", call.get()),
            UsageError::UnknownExtension => f.write_str("no such extension"),
            UsageError::BadExtensionName { name } => write!(
                f,
                "bad or repeated extension name '{name}' (letters, digits, '-' and '_', no '__')"
            ),
            UsageError::AlreadyRunning => f.write_str("the extension is already running"),
            UsageError::ShuttingDown => f.write_str("the fleet is shutting down"),
        }
    }
}

/// Why a call ended without a result.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum CallError {
    /// It was sent, and its process's Core ended it without a result: a JSON-RPC
    /// error, a timeout, the exit, a bad reply, a cancellation.
    Host(host::CallError),
    /// It was cancelled while it waited to be sent.
    Cancelled,
    /// It waited its whole timeout to be sent (its extension was not ready, or the
    /// limits were reached). It was never sent, so nothing was shut down for it.
    QueueTimeout,
    /// Its extension was marked failed while it waited.
    ExtensionFailed(Failure),
    /// Its extension's Core refused it when its turn came (the tools changed while it
    /// waited, say).
    Refused(host::UsageError),
    /// The fleet shut down while it waited.
    ShuttingDown,
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::Host(e) => write!(f, "{e}"),
            CallError::Cancelled => f.write_str("cancelled before it was sent"),
            CallError::QueueTimeout => f.write_str("the extension was not ready in time"),
            CallError::ExtensionFailed(failure) => write!(f, "the extension {failure}"),
            CallError::Refused(e) => write!(f, "refused: {e}"),
            CallError::ShuttingDown => f.write_str("the fleet shut down before it was sent"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for UsageError {}
#[cfg(feature = "std")]
impl std::error::Error for CallError {}
