//! The Core endpoint: the side that starts an extension and calls its tools.
//!
//! [`Core`] is a pure state machine. The driver hands it what happened (bytes read
//! from the extension's stdout, the end of stdout, the exit, time passing) and the
//! application's commands, each with the current time; it hands back bytes to write
//! to the extension's stdin, events, the next deadline, and the decision to kill. It
//! never reads a clock and never does I/O. See [`Core`] for a complete driver loop,
//! and `docs/driving.md` in the repository for writing a driver on any runtime.
//!
//! ```
//! use core::time::Duration;
//! use dhara_protocol::host::{Config, Core, Output};
//! use dhara_protocol::message::InitializeParams;
//! use dhara_protocol::time::Instant;
//!
//! let mut core = Core::new(Config::default().timeout(Duration::from_secs(10)));
//! core.initialize(Instant::ZERO, InitializeParams::new("/work"))?;
//! // Bytes for the extension's stdin...
//! let Output::Transmit(bytes) = core.poll_output() else { unreachable!() };
//! assert!(bytes.starts_with(br#"{"jsonrpc":"2.0","id":1,"method":"initialize""#));
//! // ...then nothing to do until its stdout has something, or the deadline passes.
//! assert_eq!(core.poll_output(), Output::Wait(Some(Instant::from_millis(10_000))));
//! # Ok::<(), dhara_protocol::host::UsageError>(())
//! ```
//!
//! The module's parts:
//!
//! | file | what it holds |
//! |---|---|
//! | `mod.rs` | [`Core`], its commands and its output loop; [`Config`], [`CallOptions`] |
//! | `events.rs` | [`Input`], [`Output`], [`Event`], [`Reply`], the errors, [`State`] |
//! | `calls.rs` | the calls in flight, the ids issued, the ring of recently ended ids |
//! | `timers.rs` | call deadlines, the grace timer, and which fires first |
//! | `incoming.rs` | what each line from the extension means |

mod calls;
mod events;
mod incoming;
mod timers;

use alloc::collections::VecDeque;
use alloc::string::String;
use alloc::vec::Vec;
use core::time::Duration;

use crate::frame::{self, LineDecoder};
use crate::json::Value;
use crate::message::{ExecuteParams, InitializeParams, Tool, method};
use crate::rpc::{self, Id, Response};
use crate::schema::PreparedSchema;
use crate::time::Instant;

use calls::{Call, CallKind, Calls};
pub use calls::{CallId, EndReason, MAX_CALL_ID};
pub use events::{
    CallError, EXCERPT_BYTES, Event, Excerpt, Input, Output, PeerError, Reply, ShutdownReason,
    State, UsageError,
};
use timers::Deadline;
pub use timers::{Timer, TimerReason};

/// The methods of the requests the Core writes with an integer id: checked at build
/// time to need no escape, so they are written as they are.
const INITIALIZE: rpc::PlainMethod = rpc::PlainMethod::new(method::INITIALIZE);
const TOOLS_EXECUTE: rpc::PlainMethod = rpc::PlainMethod::new(method::TOOLS_EXECUTE);

/// Settings of a [`Core`].
///
/// ```
/// use core::time::Duration;
/// use dhara_protocol::host::Config;
///
/// let config = Config::default().timeout(Duration::from_secs(10)).max_in_flight(16);
/// assert_eq!(config.grace, Duration::from_secs(5));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Config {
    /// How long a call may wait for its reply. Default 30 s; [`CallOptions::timeout`]
    /// overrides it for one call.
    pub timeout: Duration,
    /// How long the extension has to exit after `shutdown` before the Core asks for a
    /// kill. Default 5 s.
    pub grace: Duration,
    /// The longest line accepted from the extension. Default
    /// [`frame::DEFAULT_MAX_LINE_BYTES`].
    pub max_line_bytes: usize,
    /// The most calls in flight at once; past it a command returns
    /// [`UsageError::TooManyCalls`]. Default 1024.
    pub max_in_flight: usize,
    /// How many ended calls are remembered, to tell a late or duplicate reply from an
    /// unknown one. Default 1024.
    pub recent_ids: usize,
    /// Whether a `progress` notification attributed to a call moves its deadline to a
    /// full timeout from then. Default `false`.
    pub progress_extends_deadline: bool,
    /// When progress extends deadlines: the longest a call may run in total.
    /// `None` (the default): no cap.
    pub progress_cap: Option<Duration>,
    /// Refuse `execute` input that fails the tool's `inputSchema`
    /// ([`UsageError::InvalidInput`]) instead of sending it. Default `true`.
    pub validate_input: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            timeout: Duration::from_secs(30),
            grace: Duration::from_secs(5),
            max_line_bytes: frame::DEFAULT_MAX_LINE_BYTES,
            max_in_flight: 1024,
            recent_ids: 1024,
            progress_extends_deadline: false,
            progress_cap: None,
            validate_input: true,
        }
    }
}

impl Config {
    /// Sets [`timeout`](Config::timeout).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Config {
        self.timeout = timeout;
        self
    }

    /// Sets [`grace`](Config::grace).
    #[must_use]
    pub fn grace(mut self, grace: Duration) -> Config {
        self.grace = grace;
        self
    }

    /// Sets [`max_line_bytes`](Config::max_line_bytes).
    #[must_use]
    pub fn max_line_bytes(mut self, max_line_bytes: usize) -> Config {
        self.max_line_bytes = max_line_bytes;
        self
    }

    /// Sets [`max_in_flight`](Config::max_in_flight).
    #[must_use]
    pub fn max_in_flight(mut self, max_in_flight: usize) -> Config {
        self.max_in_flight = max_in_flight;
        self
    }

    /// Sets [`recent_ids`](Config::recent_ids).
    #[must_use]
    pub fn recent_ids(mut self, recent_ids: usize) -> Config {
        self.recent_ids = recent_ids;
        self
    }

    /// Lets progress extend deadlines, up to `cap` in total (`None`: no cap).
    #[must_use]
    pub fn progress_extends_deadline(mut self, extends: bool, cap: Option<Duration>) -> Config {
        self.progress_extends_deadline = extends;
        self.progress_cap = cap;
        self
    }

    /// Sets [`validate_input`](Config::validate_input).
    #[must_use]
    pub fn validate_input(mut self, validate: bool) -> Config {
        self.validate_input = validate;
        self
    }
}

/// Settings for one call, overriding the [`Config`]. `None` keeps the configured value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CallOptions {
    /// This call's timeout.
    pub timeout: Option<Duration>,
    /// Whether progress moves this call's deadline.
    pub progress_extends_deadline: Option<bool>,
    /// The cap on this call's total time when progress moves its deadline.
    pub progress_cap: Option<Duration>,
}

/// The Core endpoint: a sans-IO state machine for one extension process.
///
/// A driver is one loop: give the Core what happened with
/// [`handle_input`](Core::handle_input), then call [`poll_output`](Core::poll_output)
/// until it says [`Output::Wait`]; write what it transmits, act on its events, kill
/// the process when told, and wait for stdout, the exit, or the deadline. Here the
/// extension is a script that answers each request with canned bytes:
///
/// ```
/// use dhara_protocol::host::{Config, Core, Event, Input, Output, Reply};
/// use dhara_protocol::json::{Object, Value};
/// use dhara_protocol::message::InitializeParams;
/// use dhara_protocol::time::Instant;
///
/// /// The scripted extension: what it prints in answer to one line of its stdin.
/// fn extension(line: &[u8]) -> &'static [u8] {
///     let line = core::str::from_utf8(line).unwrap_or("");
///     if line.contains(r#""method":"initialize""#) {
///         concat!(
///             r#"{"jsonrpc":"2.0","id":1,"result":{"name":"demo","version":"1.0.0","#,
///             r#""tools":[{"name":"echo","description":"Says it back","#,
///             r#""inputSchema":{"type":"object","required":["text"]}}]}}"#,
///             "\n",
///         )
///         .as_bytes()
///     } else if line.contains(r#""method":"tools/execute""#) {
///         concat!(
///             r#"{"jsonrpc":"2.0","method":"progress","params":{"message":"echoing"}}"#,
///             "\n",
///             r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hi"}],"isError":false}}"#,
///             "\n",
///         )
///         .as_bytes()
///     } else {
///         b"" // `shutdown`: it exits
///     }
/// }
///
/// let mut core = Core::new(Config::default());
/// let mut now = Instant::ZERO;
/// core.initialize(now, InitializeParams::new("/home/user/project"))?;
///
/// let mut stdout = Vec::new(); // what the extension printed, not yet read
/// let mut exiting = false; // the extension is about to exit
/// let mut answer = None;
/// loop {
///     match core.poll_output() {
///         Output::Transmit(bytes) => {
///             // Write `bytes` to the extension's stdin.
///             for line in bytes.split_inclusive(|&b| b == b'\n') {
///                 stdout.extend_from_slice(extension(line));
///                 exiting |= line.starts_with(br#"{"jsonrpc":"2.0","method":"shutdown""#);
///             }
///         }
///         Output::Event(Event::CallEnded { result: Ok(Reply::Initialized(info)), .. }) => {
///             assert_eq!(info.tools[0].name, "echo");
///             let input = Value::Object(Object::from_iter([("text", Value::from("hi"))]));
///             core.execute(now, "echo", input)?;
///         }
///         Output::Event(Event::CallEnded { result, .. }) => {
///             answer = Some(result);
///             core.shutdown(now)?;
///         }
///         Output::Event(Event::Closed { code }) => {
///             assert_eq!(code, Some(0));
///             break;
///         }
///         Output::Event(other) => println!("{other:?}"), // progress, shutting down
///         Output::CloseStdin => {} // close the extension's stdin here
///         Output::Kill => exiting = true, // kill the process group here
///         Output::Wait(deadline) => {
///             // Block until stdout has bytes, the process exits, or `deadline` passes.
///             if !stdout.is_empty() {
///                 core.handle_input(now, Input::Stdout(&stdout));
///                 stdout.clear();
///             } else if exiting {
///                 core.handle_input(now, Input::StdoutClosed);
///                 core.handle_input(now, Input::Exited { code: Some(0) });
///             } else if let Some(deadline) = deadline {
///                 now = deadline;
///                 core.handle_input(now, Input::Timeout);
///             }
///         }
///     }
/// }
/// let Some(Ok(Reply::Executed(result))) = answer else { panic!("no result") };
/// assert!(!result.is_error);
/// # Ok::<(), dhara_protocol::host::UsageError>(())
/// ```
///
/// # The rules it follows
///
/// * **Lifecycle.** [`initialize`](Core::initialize) first; its reply is read into an
///   `InitializeResult`, which sets [`tools`](Core::tools) and
///   [`server_info`](Core::server_info), and the state becomes [`State::Ready`].
///   `execute` and `list_tools` before that are refused with [`UsageError::NotReady`]:
///   calls are not queued. If `initialize` fails with an error or a bad result, the
///   state goes back to [`State::NotStarted`] and the caller may try again or shut
///   down. A `tools/list` notification from the extension replaces the tools and
///   gives [`Event::ToolsChanged`]. A tool descriptor that does not fit (a numeric
///   `description`, a string `inputSchema`) is left out with
///   [`PeerError::InvalidTool`] naming it and why; the other tools stay callable.
/// * **Ids.** Integers from 1, never reused, below 2^53 ([`MAX_CALL_ID`]). A reply
///   matches a call only by the exact integer id the Core sent: the string `"1"` does
///   not answer call 1. A reply for a call that ended already is
///   [`PeerError::LateResponse`]; an id never issued is [`PeerError::UnknownId`]. A
///   reply that breaks JSON-RPC 2.0 (a wrong `jsonrpc`, both `result` and `error`, ...)
///   but whose id can be read whole ends the call it names at once with
///   [`CallError::InvalidReply`], rather than leaving it to wait for its deadline.
/// * **Timeouts.** Every call has a deadline (the configured timeout, or the call's
///   own). When it passes, the call ends at once with [`CallError::Timeout`], the Core
///   sends `shutdown` (once) and starts the grace timer; replies to other calls during
///   the grace are still delivered. If the exit is not reported when the grace ends,
///   [`Output::Kill`] comes, exactly once, and never earlier.
/// * **Closing stdin.** Right after the `shutdown` notification is transmitted,
///   whatever started the shutdown, [`Output::CloseStdin`] tells the driver to close
///   the extension's stdin, since the end of input means `shutdown` too. Nothing is
///   written after it (not even the answer to a request the extension sends later).
/// * **Time.** Every command and input carries `now`; an earlier `now` than one seen
///   before counts as the latest one. Timers fire in `poll_output`, earliest first:
///   those due at `now` fire before the bytes handed in with the same input are
///   decoded. Commands fire none themselves.
/// * **End of stdout.** The lines already handed in are decoded first (an unfinished
///   last line is reported as [`PeerError::Truncated`]); then every pending call ends
///   with [`CallError::ExtensionExited`] and, if the process was not already shutting
///   down, the Core sends `shutdown` with the grace and kill that follow it.
/// * **Exit.** A driver reads stdout to its end and reports [`Input::StdoutClosed`]
///   before [`Input::Exited`], so no reply written just before the exit is lost. The
///   Core decodes whatever it was already handed, then ends every pending call with
///   [`CallError::ExtensionExited`], then gives [`Event::Closed`], the last event.
///   Timers stop at the exit, nothing more is written (not even the answer to a
///   request decoded after it), and input reported after it is ignored.
/// * **Bounded.** At most `max_in_flight` calls and `recent_ids` remembered ids; the
///   line decoder keeps the bytes handed in and not yet decoded, and never more than
///   `max_line_bytes` of one line. Lines are decoded only when the driver polls and no
///   event is waiting, so the events queued are those of one line or one timer. The
///   driver polls until [`Output::Wait`] after every input.
/// * **Output.** Bytes to write go to one buffer reused across messages:
///   [`Output::Transmit`] borrows it and the next `poll_output` clears it. The Core
///   may still send `shutdown` to a process whose stdout has closed; a driver ignores
///   a write that fails because the process is gone (its exit will be reported).
#[derive(Debug)]
pub struct Core {
    config: Config,
    /// How far the handshake went: `NotStarted`, `Initializing` or `Ready`. The later
    /// states are read from `shutdown` and `exit` (see [`state`](Core::state)).
    handshake: State,
    now: Instant,
    calls: Calls,
    tools: Vec<Tool>,
    /// Each tool's `inputSchema`, prepared for checking inputs (set with `tools`).
    input_schemas: Vec<Option<PreparedSchema>>,
    server_info: Option<(String, String)>,

    decoder: LineDecoder,
    /// Entries of a batch line not handled yet, and the answers owed to its requests.
    batch: incoming::Batch,
    batch_answers: Vec<Response>,

    out: frame::OutputBuffer,
    events: VecDeque<Event>,

    /// Why `shutdown` was sent, once it was.
    shutdown: Option<ShutdownReason>,
    /// When the grace period ends, while it runs.
    grace_ends: Option<Instant>,
    kill_due: bool,
    /// The unfinished last line, once stdout ended in the middle of one: the calls
    /// still pending end naming it.
    truncated_line: Option<Excerpt>,
    /// [`Output::CloseStdin`] is owed: `shutdown` was queued for transmission.
    close_stdin_due: bool,
    /// [`Output::CloseStdin`] was given: nothing more is written.
    stdin_closed: bool,
    stdout_closed: bool,
    /// The exit code, once the exit was reported.
    exit: Option<Option<i32>>,
    /// [`Event::Closed`] was queued: nothing more happens.
    finished: bool,
}

impl Core {
    /// A Core that has sent nothing yet.
    pub fn new(config: Config) -> Core {
        Core {
            handshake: State::NotStarted,
            now: Instant::ZERO,
            calls: Calls::new(config.recent_ids),
            tools: Vec::new(),
            input_schemas: Vec::new(),
            server_info: None,
            decoder: LineDecoder::with_max_line_bytes(config.max_line_bytes),
            batch: incoming::Batch::default(),
            batch_answers: Vec::new(),
            out: frame::OutputBuffer::new(),
            events: VecDeque::new(),
            shutdown: None,
            grace_ends: None,
            kill_due: false,
            truncated_line: None,
            close_stdin_due: false,
            stdin_closed: false,
            stdout_closed: false,
            exit: None,
            finished: false,
            config,
        }
    }

    // ---- Commands -----------------------------------------------------------------
    //
    // Each checks everything first and changes nothing when it returns an error.

    /// Sends `initialize`, the first request of a session.
    pub fn initialize(
        &mut self,
        now: Instant,
        params: InitializeParams,
    ) -> Result<CallId, UsageError> {
        match self.state() {
            State::NotStarted if self.stdout_closed => return Err(UsageError::ShuttingDown),
            State::NotStarted => {}
            State::Initializing | State::Ready => return Err(UsageError::AlreadyInitialized),
            State::ShuttingDown => return Err(UsageError::ShuttingDown),
            State::Closed => return Err(UsageError::Closed),
        }
        self.check_capacity()?;
        self.observe(now);
        let deadline = self.deadline(&CallOptions::default());
        let call = self.start_call(CallKind::Initialize, deadline, |id, out| {
            rpc::write_request_with_u64(id.get(), INITIALIZE, |out| params.write_json(out), out)
        });
        self.handshake = State::Initializing;
        Ok(call)
    }

    /// Calls a tool with the configured timeout: `tools/execute`.
    pub fn execute(
        &mut self,
        now: Instant,
        tool_name: &str,
        input: Value,
    ) -> Result<CallId, UsageError> {
        self.start_execute(now, tool_name, &input, CallOptions::default())
    }

    /// Calls a tool with per-call options.
    ///
    /// Refused, with nothing sent, when the session is not [`State::Ready`], when the
    /// tool is not among [`tools`](Core::tools), or when `validate_input` is on and the
    /// input fails the tool's `inputSchema`.
    pub fn execute_with(
        &mut self,
        now: Instant,
        params: ExecuteParams,
        options: CallOptions,
    ) -> Result<CallId, UsageError> {
        self.start_execute(now, &params.tool_name, &params.input, options)
    }

    /// `execute_with`, the params written straight from the caller's tool name and
    /// input (borrowed, so a caller that keeps the input when the call is refused
    /// need not copy it).
    pub(crate) fn start_execute(
        &mut self,
        now: Instant,
        tool_name: &str,
        input: &Value,
        options: CallOptions,
    ) -> Result<CallId, UsageError> {
        self.check_ready()?;
        self.check_capacity()?;
        let Some(index) = self
            .tools
            .iter()
            .position(|t| t.is_named(tool_name.as_bytes()))
        else {
            return Err(UsageError::UnknownTool {
                name: String::from(tool_name),
            });
        };
        if self.config.validate_input {
            let checked = match self.input_schemas.get(index) {
                Some(Some(schema)) => schema.validate(input),
                Some(None) => Ok(()),
                None => self
                    .tools
                    .get(index)
                    .map_or(Ok(()), |t| t.check_input(input)),
            };
            if let Err(error) = checked {
                return Err(UsageError::InvalidInput {
                    tool: String::from(tool_name),
                    error,
                });
            }
        }
        self.observe(now);
        let deadline = self.deadline(&options);
        Ok(self.start_call(CallKind::Execute, deadline, |id, out| {
            rpc::write_request_with_u64(
                id.get(),
                TOOLS_EXECUTE,
                |out| ExecuteParams::write_parts(tool_name, input, out),
                out,
            )
        }))
    }

    /// Asks the extension for its tools: a `tools/list` request. The reply also
    /// replaces [`tools`](Core::tools).
    pub fn list_tools(&mut self, now: Instant) -> Result<CallId, UsageError> {
        self.check_ready()?;
        self.check_capacity()?;
        self.observe(now);
        let deadline = self.deadline(&CallOptions::default());
        Ok(self.start_call(CallKind::ListTools, deadline, |id, out| {
            rpc::write_request(&Id::from(id), method::TOOLS_LIST, None, out)
        }))
    }

    /// Ends a call in flight with [`CallError::Cancelled`] (its `CallEnded` event comes
    /// from the next `poll_output`). The protocol has no cancel message, so nothing is
    /// sent: a reply that comes later is reported as [`PeerError::LateResponse`].
    pub fn cancel(&mut self, now: Instant, call: CallId) -> Result<(), UsageError> {
        if self.state() == State::Closed {
            return Err(UsageError::Closed);
        }
        if self.calls.get(call).is_none() {
            return Err(UsageError::UnknownCall { call });
        }
        self.observe(now);
        self.end_call(call, Err(CallError::Cancelled), Some(EndReason::Cancelled));
        Ok(())
    }

    /// Sends `shutdown` and starts the grace timer. Calls in flight go on: their
    /// replies are delivered until the exit.
    pub fn shutdown(&mut self, now: Instant) -> Result<(), UsageError> {
        match self.state() {
            State::Closed => Err(UsageError::Closed),
            State::ShuttingDown => Err(UsageError::ShuttingDown),
            _ => {
                self.observe(now);
                self.begin_shutdown(ShutdownReason::Requested);
                Ok(())
            }
        }
    }

    // ---- Input --------------------------------------------------------------------

    /// Tells the Core what happened at `now`. Then poll until [`Output::Wait`].
    pub fn handle_input(&mut self, now: Instant, input: Input<'_>) {
        self.observe(now);
        if self.exit.is_some() {
            return;
        }
        match input {
            Input::Stdout(bytes) if !self.stdout_closed => self.decoder.push(bytes),
            Input::Stdout(_) | Input::Timeout => {}
            Input::StdoutClosed => self.close_stdout(),
            Input::Exited { code } => {
                self.close_stdout();
                self.exit = Some(code);
                self.grace_ends = None;
                self.kill_due = false;
            }
        }
    }

    fn close_stdout(&mut self) {
        if !self.stdout_closed {
            self.stdout_closed = true;
            self.decoder.end();
        }
    }

    // ---- Output -------------------------------------------------------------------

    /// What to do next. Call it until it returns [`Output::Wait`].
    pub fn poll_output(&mut self) -> Output<'_> {
        self.out.reclaim();
        loop {
            if self.out.is_pending() {
                break;
            }
            if core::mem::take(&mut self.close_stdin_due) && self.exit.is_none() {
                self.stdin_closed = true;
                return Output::CloseStdin;
            }
            if let Some(event) = self.events.pop_front() {
                return Output::Event(event);
            }
            if core::mem::take(&mut self.kill_due) {
                return Output::Kill;
            }
            if !self.step() {
                return Output::Wait(self.next_timer().map(|timer| timer.at));
            }
        }
        let bytes = self.out.hand_out();
        debug_assert!(bytes.is_some(), "pending bytes are handed out");
        Output::Transmit(bytes.unwrap_or_default())
    }

    /// Does the next piece of pending work, if any: fire one due timer, handle one
    /// line (or batch entry), or one step of the end of stdout and the exit.
    fn step(&mut self) -> bool {
        if self.finished {
            return false;
        }
        if let Some(timer) = self.next_timer().filter(|timer| timer.at <= self.now) {
            self.fire(timer);
            return true;
        }
        if self.handle_next_batch_entry() || self.handle_next_line() {
            return true;
        }
        if self.stdout_closed {
            if let Some(call) = self.calls.first() {
                let unfinished_line = self.truncated_line.clone();
                self.end_call(
                    call,
                    Err(CallError::ExtensionExited { unfinished_line }),
                    None,
                );
                return true;
            }
            if let Some(code) = self.exit {
                self.events.push_back(Event::Closed { code });
                self.finished = true;
                return true;
            }
            if self.shutdown.is_none() {
                self.begin_shutdown(ShutdownReason::StdoutClosed);
                return true;
            }
        }
        false
    }

    fn fire(&mut self, timer: Timer) {
        match timer.reason {
            TimerReason::CallDeadline(call) => {
                let unfinished_line = self
                    .decoder
                    .unfinished_line()
                    .map(|(start, len)| Excerpt::of(start, len));
                let error = CallError::Timeout { unfinished_line };
                self.end_call(call, Err(error), Some(EndReason::TimedOut));
                if self.shutdown.is_none() {
                    self.begin_shutdown(ShutdownReason::Timeout { call });
                }
            }
            TimerReason::GraceEnd => {
                self.grace_ends = None;
                self.kill_due = true;
            }
        }
    }

    // ---- What the driver may look at ----------------------------------------------

    /// The next timer, with its reason: what [`Output::Wait`] names. None after the
    /// exit.
    pub fn next_timer(&self) -> Option<Timer> {
        if self.exit.is_some() {
            return None;
        }
        let call = self.calls.earliest_deadline().map(|(at, call)| Timer {
            at,
            reason: TimerReason::CallDeadline(call),
        });
        let grace = self.grace_ends.map(|at| Timer {
            at,
            reason: TimerReason::GraceEnd,
        });
        timers::earliest(call, grace)
    }

    /// Where the session is in its lifecycle.
    pub fn state(&self) -> State {
        if self.exit.is_some() {
            State::Closed
        } else if self.shutdown.is_some() {
            State::ShuttingDown
        } else {
            self.handshake
        }
    }

    /// The tools the extension offers: empty until `initialize` is answered, then
    /// updated by every `tools/list` reply or notification.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The extension's name and version, from its `initialize` result.
    pub fn server_info(&self) -> Option<(&str, &str)> {
        self.server_info
            .as_ref()
            .map(|(name, version)| (name.as_str(), version.as_str()))
    }

    /// How many calls are in flight (at most `max_in_flight`).
    pub fn calls_in_flight(&self) -> usize {
        self.calls.len()
    }

    /// How many ended calls are remembered to classify late replies (at most
    /// `recent_ids`).
    pub fn remembered_ids(&self) -> usize {
        self.calls.remembered()
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    // ---- Shared steps -------------------------------------------------------------

    /// Replaces the tools the extension offers.
    fn set_tools(&mut self, tools: &[Tool]) {
        self.input_schemas = tools.iter().map(Tool::prepare_input_schema).collect();
        self.tools = tools.to_vec();
    }

    fn observe(&mut self, now: Instant) {
        self.now = self.now.max(now);
    }

    fn check_ready(&self) -> Result<(), UsageError> {
        match self.state() {
            State::Closed => Err(UsageError::Closed),
            State::ShuttingDown => Err(UsageError::ShuttingDown),
            // Stdout ended; the shutdown it starts comes with the next poll.
            _ if self.stdout_closed => Err(UsageError::ShuttingDown),
            State::Ready => Ok(()),
            State::NotStarted | State::Initializing => Err(UsageError::NotReady),
        }
    }

    fn check_capacity(&self) -> Result<(), UsageError> {
        if self.calls.len() >= self.config.max_in_flight {
            return Err(UsageError::TooManyCalls {
                limit: self.config.max_in_flight,
            });
        }
        match self.calls.next_id() {
            Some(_) => Ok(()),
            None => Err(UsageError::IdsExhausted),
        }
    }

    #[inline]
    fn deadline(&self, options: &CallOptions) -> Deadline {
        Deadline::new(
            self.now,
            options.timeout.unwrap_or(self.config.timeout),
            options
                .progress_extends_deadline
                .unwrap_or(self.config.progress_extends_deadline),
            options.progress_cap.or(self.config.progress_cap),
        )
    }

    /// Registers a call and sends its request, which `write_request` writes with the
    /// call's id.
    fn start_call(
        &mut self,
        kind: CallKind,
        deadline: Deadline,
        write_request: impl FnOnce(CallId, &mut Vec<u8>),
    ) -> CallId {
        let call = self.calls.insert(Call { kind, deadline });
        self.send(|out| write_request(call, out));
        call
    }

    /// Ends a call in flight (once: a call already ended is left alone) and queues its
    /// `CallEnded` event.
    fn end_call(&mut self, call: CallId, result: Result<Reply, CallError>, how: Option<EndReason>) {
        let Some(ended) = self.calls.end(call, how) else {
            return;
        };
        if ended.kind == CallKind::Initialize && self.handshake == State::Initializing {
            self.handshake = match result {
                Ok(_) => State::Ready,
                Err(_) => State::NotStarted,
            };
        }
        self.events.push_back(Event::CallEnded { call, result });
    }

    fn begin_shutdown(&mut self, reason: ShutdownReason) {
        self.send(|out| rpc::write_notification(method::SHUTDOWN, None, out));
        self.close_stdin_due = !self.stdin_closed;
        self.shutdown = Some(reason);
        self.grace_ends = Some(self.now + self.config.grace);
        self.events.push_back(Event::ShuttingDown { reason });
    }

    /// Appends one line to the output buffer; nothing once the process has exited or
    /// its stdin was closed.
    fn send(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        if self.exit.is_none() && !self.stdin_closed {
            self.out.write_line(write);
        }
    }
}
