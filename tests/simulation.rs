//! A deterministic simulation of the Core against an extension.
//!
//! Two peers are simulated. A scripted, misbehaving extension: proptest draws its
//! answers (good, wrong, late, duplicated, oversized, with the wrong id type), noise on
//! its stdout, and whether it obeys `shutdown` at all. And the crate's own
//! [`Extension`] endpoint, with the bytes of each side handed to the other in random
//! chunks and a tool author who answers, fails, reports progress, or never answers.
//! For both, proptest also draws the application's commands, how the extension's bytes
//! are chunked, how time passes (random steps, and sometimes exactly to the deadline
//! the Core asked for), crashes and stdout closing. After every poll the invariants are
//! checked:
//!
//! * no panic;
//! * every call started ends exactly once, and by the end of the session all have;
//! * `Kill` comes at most once, never before the grace after `shutdown` has ended, never
//!   after the exit;
//! * nothing written after the exit, no event after `Closed`, and commands are refused
//!   after it;
//! * the calls in flight and the ids remembered stay within their limits;
//! * a deadline asked for is never in the past;
//! * every line the Core writes is JSON-RPC, and the only responses it writes are
//!   `-32601` answers to the extension's requests;
//! * with the real endpoint, neither side ever sees a protocol error, except the
//!   harmless late replies to calls the Core timed out or cancelled.
//!
//! The seed is fixed so CI runs the same cases every time; set `PROPTEST_RNG_SEED` to
//! explore others. A failing case prints its shrunk script, and proptest saves it to
//! replay.

// Helpers are `pub` to be shared by this binary's modules, not exported.
#![allow(unreachable_pub)]

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use core::time::Duration;

use dhara_protocol::extension::{self, Extension, RequestHandle, ServerInfo};
use dhara_protocol::host::{
    CallError, CallId, CallOptions, Config, Core, Event, Input, Output, PeerError, UsageError,
};
use dhara_protocol::json::{self, Object, Value};
use dhara_protocol::message::{ExecuteParams, InitializeParams, Tool, ToolResult};
use dhara_protocol::rpc::{ErrorCode, ErrorObject};
use dhara_protocol::time::Instant;
use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, FileFailurePersistence, RngSeed};

#[path = "support/pair.rs"]
mod pair;
use pair::{Pipe, Process};

const CASES: u32 = 256;

/// What the cases exercised, summed over a run, to show the simulation is not idle.
#[derive(Default)]
struct Tally {
    replies: AtomicUsize,
    timeouts: AtomicUsize,
    exited: AtomicUsize,
    other_ends: AtomicUsize,
    peer_errors: AtomicUsize,
    kills: AtomicUsize,
}

static SCRIPTED: Tally = Tally::new();
static PAIRED: Tally = Tally::new();

impl Tally {
    const fn new() -> Tally {
        Tally {
            replies: AtomicUsize::new(0),
            timeouts: AtomicUsize::new(0),
            exited: AtomicUsize::new(0),
            other_ends: AtomicUsize::new(0),
            peer_errors: AtomicUsize::new(0),
            kills: AtomicUsize::new(0),
        }
    }

    fn print(&self, name: &str) {
        println!(
            "{name}: calls ended by reply {}, timeout {}, exit {}, otherwise {}; {} protocol errors; {} kills",
            self.replies.load(Relaxed),
            self.timeouts.load(Relaxed),
            self.exited.load(Relaxed),
            self.other_ends.load(Relaxed),
            self.peer_errors.load(Relaxed),
            self.kills.load(Relaxed),
        );
    }
}

// ---- The driver: the Core, the clock, the pipes, and the invariants ---------------

/// What the driver does: the application's commands, time, and the pipes.
#[derive(Clone, Debug)]
enum Drive {
    Execute {
        known_tool: bool,
        valid_input: bool,
        timeout_ms: Option<u16>,
    },
    ListTools,
    Cancel(usize),
    Shutdown,
    Advance(u16),
    ToDeadline,
    Tick,
    /// Hands the extension's stdout to the Core, in chunks of these sizes.
    Deliver(Vec<u16>),
    CloseStdout,
    Crash {
        code: Option<i32>,
        close_stdout_first: bool,
    },
}

fn drive() -> impl Strategy<Value = Drive> {
    prop_oneof![
        4 => (any::<bool>(), proptest::bool::weighted(0.9), proptest::option::weighted(0.2, 1u16..3000))
            .prop_map(|(known, valid_input, t)| Drive::Execute {
                known_tool: known || t.is_some(),
                valid_input,
                timeout_ms: t,
            }),
        1 => Just(Drive::ListTools),
        1 => any::<usize>().prop_map(Drive::Cancel),
        1 => Just(Drive::Shutdown),
        3 => (0u16..4000).prop_map(Drive::Advance),
        2 => Just(Drive::ToDeadline),
        1 => Just(Drive::Tick),
        5 => proptest::collection::vec(0u16..200, 1..6).prop_map(Drive::Deliver),
        1 => Just(Drive::CloseStdout),
        1 => (proptest::option::of(-2i32..3), any::<bool>())
            .prop_map(|(code, close_stdout_first)| Drive::Crash { code, close_stdout_first }),
    ]
}

/// The settings both simulations draw.
#[derive(Clone, Debug)]
struct Settings {
    timeout_ms: u64,
    grace_ms: u64,
    max_in_flight: usize,
    recent_ids: usize,
    max_line_bytes: usize,
    progress_extends: bool,
    validate_input: bool,
}

fn settings() -> impl Strategy<Value = Settings> {
    (
        (500u64..10_000, 0u64..3000, 1usize..6, 0usize..6),
        (
            prop_oneof![Just(256usize), Just(1024), Just(64 * 1024)],
            any::<bool>(),
            any::<bool>(),
        ),
    )
        .prop_map(
            |(
                (timeout_ms, grace_ms, max_in_flight, recent_ids),
                (max_line_bytes, progress_extends, validate_input),
            )| {
                Settings {
                    timeout_ms,
                    grace_ms,
                    max_in_flight,
                    recent_ids,
                    max_line_bytes,
                    progress_extends,
                    validate_input,
                }
            },
        )
}

/// The extension process as the driver sees it.
trait Peer {
    /// Takes the bytes the Core wrote to the process's stdin.
    fn stdin(&mut self, bytes: &[u8]) -> Result<(), TestCaseError>;
    /// The process's stdout: written, not yet read by the driver.
    fn stdout(&mut self) -> &mut Vec<u8>;
    /// The process is gone: it writes and reads nothing more.
    fn stop(&mut self);
    /// The driver closed the process's stdin: once it has read what came before, it
    /// reads the end of its input.
    fn close_stdin(&mut self);
}

/// The driver side: the Core, the clock, the extension, and what has been seen.
struct Sim<P> {
    core: Core,
    peer: P,
    tally: &'static Tally,
    now: Instant,
    settings: Settings,
    stdout_open: bool,
    started: BTreeSet<CallId>,
    ended: BTreeSet<CallId>,
    /// Calls the Core timed out or the application cancelled: a reply may still come.
    abandoned: BTreeSet<CallId>,
    protocol_errors: Vec<PeerError>,
    shutdown_at: Option<Instant>,
    kills: usize,
    kill_pending: bool,
    /// The `shutdown` line was transmitted, and then stdin was closed.
    shutdown_transmitted: bool,
    stdin_closed: bool,
    exit_reported: bool,
    closed: bool,
    wait: Option<Instant>,
}

impl<P: Peer> Sim<P> {
    fn new(settings: &Settings, peer: P, tally: &'static Tally) -> Sim<P> {
        let config = Config::default()
            .timeout(Duration::from_millis(settings.timeout_ms))
            .grace(Duration::from_millis(settings.grace_ms))
            .max_in_flight(settings.max_in_flight)
            .recent_ids(settings.recent_ids)
            .max_line_bytes(settings.max_line_bytes)
            .validate_input(settings.validate_input)
            .progress_extends_deadline(
                settings.progress_extends,
                Some(Duration::from_millis(settings.timeout_ms * 3)),
            );
        Sim {
            core: Core::new(config),
            peer,
            tally,
            now: Instant::ZERO,
            settings: settings.clone(),
            stdout_open: true,
            started: BTreeSet::new(),
            ended: BTreeSet::new(),
            abandoned: BTreeSet::new(),
            protocol_errors: Vec::new(),
            shutdown_at: None,
            kills: 0,
            kill_pending: false,
            shutdown_transmitted: false,
            stdin_closed: false,
            exit_reported: false,
            closed: false,
            wait: None,
        }
    }

    fn poll(&mut self) -> Result<(), TestCaseError> {
        for _ in 0..100_000 {
            match self.core.poll_output() {
                Output::Transmit(bytes) => {
                    prop_assert!(!self.exit_reported, "bytes written after the exit");
                    prop_assert!(!self.stdin_closed, "bytes written after stdin was closed");
                    let bytes = bytes.to_vec();
                    self.shutdown_transmitted |= bytes
                        .split(|&b| b == b'\n')
                        .any(|line| line == br#"{"jsonrpc":"2.0","method":"shutdown"}"#);
                    self.peer.stdin(&bytes)?;
                }
                Output::CloseStdin => {
                    prop_assert!(!self.stdin_closed, "stdin closed twice");
                    prop_assert!(self.shutdown_transmitted, "stdin closed before shutdown");
                    prop_assert!(!self.exit_reported, "stdin closed after the exit");
                    self.stdin_closed = true;
                    self.peer.close_stdin();
                }
                Output::Event(event) => self.event(event)?,
                Output::Kill => {
                    prop_assert!(!self.closed && !self.exit_reported, "kill after the exit");
                    prop_assert_eq!(self.kills, 0, "a second kill");
                    let shutdown_at = self
                        .shutdown_at
                        .ok_or_else(|| TestCaseError::fail("kill without shutdown"))?;
                    let grace = Duration::from_millis(self.settings.grace_ms);
                    prop_assert!(
                        self.now >= shutdown_at + grace,
                        "kill before the grace ended"
                    );
                    self.kills += 1;
                    self.tally.kills.fetch_add(1, Relaxed);
                    self.kill_pending = true;
                }
                Output::Wait(deadline) => {
                    if let Some(deadline) = deadline {
                        prop_assert!(deadline > self.now, "a deadline in the past");
                        prop_assert!(!self.closed, "a deadline after Closed");
                    }
                    self.wait = deadline;
                    prop_assert!(self.core.calls_in_flight() <= self.settings.max_in_flight);
                    prop_assert!(self.core.remembered_ids() <= self.settings.recent_ids);
                    return Ok(());
                }
            }
        }
        Err(TestCaseError::fail("poll_output never said Wait"))
    }

    fn event(&mut self, event: Event) -> Result<(), TestCaseError> {
        prop_assert!(!self.closed, "event after Closed: {:?}", event);
        match event {
            Event::CallEnded { call, result } => {
                let counter = match result {
                    Ok(_) => &self.tally.replies,
                    Err(CallError::Timeout { .. }) => &self.tally.timeouts,
                    Err(CallError::ExtensionExited { .. }) => &self.tally.exited,
                    Err(_) => &self.tally.other_ends,
                };
                counter.fetch_add(1, Relaxed);
                if let Err(CallError::Timeout { .. } | CallError::Cancelled) = result {
                    self.abandoned.insert(call);
                }
                prop_assert!(
                    self.started.contains(&call),
                    "an unknown call ended: {:?}",
                    call
                );
                prop_assert!(self.ended.insert(call), "a call ended twice: {:?}", call);
            }
            Event::ShuttingDown { .. } => {
                prop_assert!(self.shutdown_at.is_none(), "a second shutdown");
                self.shutdown_at = Some(self.now);
            }
            Event::Protocol(error) => {
                self.tally.peer_errors.fetch_add(1, Relaxed);
                self.protocol_errors.push(error);
            }
            Event::Closed { .. } => {
                prop_assert!(self.exit_reported);
                self.closed = true;
            }
            _ => {}
        }
        Ok(())
    }

    fn input(&mut self, input: Input<'_>) -> Result<(), TestCaseError> {
        if let Input::Exited { .. } = input {
            self.exit_reported = true;
        }
        self.core.handle_input(self.now, input);
        self.poll()
    }

    fn started(&mut self, result: Result<CallId, UsageError>) -> Result<(), TestCaseError> {
        let before = self.core.calls_in_flight();
        match result {
            Ok(call) => {
                prop_assert!(self.started.insert(call), "a call id handed out twice");
                prop_assert!(!self.closed);
            }
            Err(error) => {
                prop_assert_eq!(self.core.calls_in_flight(), before);
                if self.closed {
                    prop_assert_eq!(error, UsageError::Closed);
                }
            }
        }
        self.poll()
    }

    /// Hands the extension's stdout to the Core in chunks of the given sizes.
    fn deliver(&mut self, chunks: &[u16]) -> Result<(), TestCaseError> {
        for &size in chunks {
            if self.peer.stdout().is_empty() || !self.stdout_open {
                break;
            }
            let stdout = self.peer.stdout();
            let n = usize::from(size.max(1)).min(stdout.len());
            let chunk: Vec<u8> = stdout.drain(..n).collect();
            self.input(Input::Stdout(&chunk))?;
        }
        Ok(())
    }

    fn deliver_all(&mut self) -> Result<(), TestCaseError> {
        while self.stdout_open && !self.peer.stdout().is_empty() {
            self.deliver(&[4096])?;
        }
        Ok(())
    }

    fn close_stdout(&mut self) -> Result<(), TestCaseError> {
        if self.stdout_open {
            self.deliver_all()?;
            self.stdout_open = false;
            self.input(Input::StdoutClosed)?;
        }
        Ok(())
    }

    /// The process exits. With `close_stdout_first`, the driver reads stdout to its
    /// end and reports that first; otherwise the last bytes and the exit are handed in
    /// with no poll between them.
    fn exit(&mut self, code: Option<i32>, close_stdout_first: bool) -> Result<(), TestCaseError> {
        if self.exit_reported {
            return Ok(());
        }
        if close_stdout_first {
            self.close_stdout()?;
        } else if self.stdout_open {
            let rest = core::mem::take(self.peer.stdout());
            self.core.handle_input(self.now, Input::Stdout(&rest));
        }
        self.peer.stop();
        self.stdout_open = false;
        self.input(Input::Exited { code })
    }

    fn advance(&mut self, to: Instant) -> Result<(), TestCaseError> {
        self.now = self.now.max(to);
        self.input(Input::Timeout)
    }

    fn drive(&mut self, step: &Drive, tool: &str, input: Value) -> Result<(), TestCaseError> {
        match step {
            Drive::Execute {
                known_tool,
                timeout_ms,
                ..
            } => {
                let tool = if *known_tool { tool } else { "missing" };
                let options = CallOptions {
                    timeout: timeout_ms.map(|t| Duration::from_millis(t.into())),
                    ..CallOptions::default()
                };
                let result =
                    self.core
                        .execute_with(self.now, ExecuteParams::new(tool, input), options);
                self.started(result)?;
            }
            Drive::ListTools => {
                let result = self.core.list_tools(self.now);
                self.started(result)?;
            }
            Drive::Cancel(k) => {
                let open: Vec<CallId> = self.started.difference(&self.ended).copied().collect();
                if let Some(&call) = open.get(k % open.len().max(1)) {
                    let result = self.core.cancel(self.now, call);
                    prop_assert_eq!(result.is_ok(), !self.exit_reported);
                    self.poll()?;
                }
            }
            Drive::Shutdown => {
                let result = self.core.shutdown(self.now);
                prop_assert_eq!(
                    result.is_ok(),
                    self.shutdown_at.is_none() && !self.exit_reported
                );
                self.poll()?;
            }
            Drive::Advance(ms) => self.advance(self.now + Duration::from_millis((*ms).into()))?,
            Drive::ToDeadline => {
                if let Some(deadline) = self.wait {
                    self.advance(deadline)?;
                }
            }
            Drive::Tick => self.input(Input::Timeout)?,
            Drive::Deliver(chunks) => self.deliver(chunks)?,
            Drive::CloseStdout => self.close_stdout()?,
            Drive::Crash {
                code,
                close_stdout_first,
            } => self.exit(*code, *close_stdout_first)?,
        }
        Ok(())
    }

    /// After a step: the driver carries out a kill it was asked for.
    fn after_step(&mut self) -> Result<(), TestCaseError> {
        if core::mem::take(&mut self.kill_pending) {
            self.exit(None, true)?;
        }
        Ok(())
    }

    /// The end of the session: the extension is stopped if it still runs, and every
    /// call must have ended.
    fn finish(&mut self) -> Result<(), TestCaseError> {
        self.exit(Some(0), true)?;
        prop_assert!(self.closed, "no Closed after the exit");
        let open: Vec<&CallId> = self.started.difference(&self.ended).collect();
        prop_assert!(open.is_empty(), "calls that never ended: {:?}", open);
        prop_assert_eq!(
            self.core.execute(self.now, "t", Value::Null),
            Err(UsageError::Closed)
        );
        self.poll()
    }
}

// ---- The scripted, misbehaving extension ------------------------------------------

/// How the extension answers one request.
#[derive(Clone, Copy, Debug)]
enum Shape {
    Good,
    ToolError,
    RpcError,
    WrongResult,
    StringId,
    UnknownId,
    Oversized,
}

/// A line on the extension's stdout that is not an answer.
#[derive(Clone, Copy, Debug)]
enum Noise {
    LogLine,
    NotJson,
    InvalidEnvelope,
    Binary,
    Request,
    NullIdError,
    UnknownNotification,
    ToolsChanged,
    BlankLines,
    HugeGarbage,
    UnfinishedLine,
}

#[derive(Clone, Debug)]
enum Step {
    Drive(Drive),
    Reply { request: usize, shape: Shape },
    Progress { request: Option<usize> },
    Noise(Noise),
    Batch(Vec<(usize, Shape)>),
}

#[derive(Clone, Debug)]
struct Script {
    settings: Settings,
    obeys_shutdown: bool,
    /// The extension answers `initialize` as soon as it reads it.
    answers_initialize: bool,
    steps: Vec<Step>,
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        6 => Just(Shape::Good),
        1 => Just(Shape::ToolError),
        1 => Just(Shape::RpcError),
        1 => Just(Shape::WrongResult),
        1 => Just(Shape::StringId),
        1 => Just(Shape::UnknownId),
        1 => Just(Shape::Oversized),
    ]
}

fn noise() -> impl Strategy<Value = Noise> {
    prop_oneof![
        Just(Noise::LogLine),
        Just(Noise::NotJson),
        Just(Noise::InvalidEnvelope),
        Just(Noise::Binary),
        Just(Noise::Request),
        Just(Noise::NullIdError),
        Just(Noise::UnknownNotification),
        Just(Noise::ToolsChanged),
        Just(Noise::BlankLines),
        Just(Noise::HugeGarbage),
        Just(Noise::UnfinishedLine),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        18 => drive().prop_map(Step::Drive),
        6 => (any::<usize>(), shape()).prop_map(|(request, shape)| Step::Reply { request, shape }),
        2 => proptest::option::of(any::<usize>()).prop_map(|request| Step::Progress { request }),
        2 => noise().prop_map(Step::Noise),
        1 => proptest::collection::vec((any::<usize>(), shape()), 1..4).prop_map(Step::Batch),
    ]
}

fn script() -> impl Strategy<Value = Script> {
    (
        settings(),
        any::<bool>(),
        proptest::bool::weighted(0.8),
        proptest::collection::vec(step(), 0..100),
    )
        .prop_map(
            |(settings, obeys_shutdown, answers_initialize, steps)| Script {
                settings,
                obeys_shutdown,
                answers_initialize,
                steps,
            },
        )
}

/// The scripted extension: it reads the Core's lines and writes what the script says.
struct ScriptedExtension {
    /// Every request the Core sent: its id and method.
    requests: Vec<(u64, String)>,
    /// Requests it sent to the Core, and `-32601` answers it got back.
    requests_sent: usize,
    answers_received: usize,
    got_shutdown: bool,
    /// Bytes written to its stdout, not yet read by the driver.
    stdout: Vec<u8>,
    running: bool,
    /// Bytes of a line the Core wrote that is not finished yet.
    partial: Vec<u8>,
}

impl ScriptedExtension {
    fn new() -> ScriptedExtension {
        ScriptedExtension {
            requests: Vec::new(),
            requests_sent: 0,
            answers_received: 0,
            got_shutdown: false,
            stdout: Vec::new(),
            running: true,
            partial: Vec::new(),
        }
    }

    /// Checks each line the Core wrote to its stdin, and notes its requests.
    fn check_stdin(&mut self, bytes: &[u8]) -> Result<(), TestCaseError> {
        self.partial.extend_from_slice(bytes);
        while let Some(end) = self.partial.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            let value = json::parse(&line[..end]).map_err(|e| {
                TestCaseError::fail(format!("the Core wrote bad JSON ({e}): {line:?}"))
            })?;
            match value {
                Value::Array(answers) => {
                    for answer in &answers {
                        self.check_answer(answer)?;
                    }
                }
                value => {
                    prop_assert_eq!(value.get("jsonrpc").and_then(Value::as_str), Some("2.0"));
                    match (value.get("method").and_then(Value::as_str), value.get("id")) {
                        (Some("shutdown"), None) => self.got_shutdown = true,
                        (Some(method), Some(id)) => {
                            let id = id
                                .as_u64()
                                .ok_or_else(|| TestCaseError::fail("a non-integer id"))?;
                            prop_assert!((1..1 << 53).contains(&id));
                            prop_assert!(
                                self.requests.last().is_none_or(|(last, _)| id > *last),
                                "ids increase"
                            );
                            self.requests.push((id, method.to_string()));
                        }
                        _ => self.check_answer(&value)?,
                    }
                }
            }
        }
        Ok(())
    }

    fn check_answer(&mut self, answer: &Value) -> Result<(), TestCaseError> {
        let code = answer
            .get("error")
            .and_then(|e| e.get("code"))
            .and_then(Value::as_i64);
        prop_assert_eq!(
            code,
            Some(-32601),
            "the Core answered something other than a request: {:?}",
            answer
        );
        self.answers_received += 1;
        prop_assert!(self.answers_received <= self.requests_sent);
        Ok(())
    }

    fn print(&mut self, text: &str) {
        if self.running {
            self.stdout.extend_from_slice(text.as_bytes());
        }
    }

    fn line(&mut self, text: &str) {
        self.print(text);
        self.print("\n");
    }

    fn pick(&self, index: usize) -> Option<(u64, String)> {
        match self.requests.len() {
            0 => None,
            n => self.requests.get(index % n).cloned(),
        }
    }

    fn answer(&self, id: u64, method: &str, shape: Shape, max_line_bytes: usize) -> String {
        let id_text = match shape {
            Shape::StringId => format!("\"{id}\""),
            Shape::UnknownId => (id + 1_000_000).to_string(),
            _ => id.to_string(),
        };
        let result = match (method, shape) {
            (_, Shape::RpcError) => {
                return format!(r#"{{"jsonrpc":"2.0","id":{id_text},"error":{{"code":-32000,"message":"boom"}}}}"#);
            }
            (_, Shape::WrongResult) => r#"{"unexpected":true}"#.to_string(),
            ("initialize", _) => r#"{"name":"sim","version":"0.0.1","tools":[{"name":"t","description":"d","inputSchema":{"type":"object"}}]}"#.to_string(),
            ("tools/list", _) => r#"{"tools":[{"name":"t","description":"d"}]}"#.to_string(),
            (_, Shape::Oversized) => format!(
                r#"{{"content":[{{"type":"text","text":"{}"}}],"isError":false}}"#,
                "x".repeat(max_line_bytes)
            ),
            (_, Shape::ToolError) => r#"{"content":[{"type":"text","text":"no"}],"isError":true}"#.to_string(),
            _ => r#"{"content":[{"type":"text","text":"ok"}],"isError":false}"#.to_string(),
        };
        format!(r#"{{"jsonrpc":"2.0","id":{id_text},"result":{result}}}"#)
    }

    fn noise(&mut self, noise: Noise) {
        match noise {
            Noise::LogLine => self.line("INFO listening on 127.0.0.1:8080"),
            Noise::NotJson => self.line(r#"{"jsonrpc":"2.0","id":1,"result":"#),
            Noise::InvalidEnvelope => self.line(r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}"#),
            Noise::Binary => {
                if self.running {
                    self.stdout.extend_from_slice(b"\xff\x00\xfe\n");
                }
            }
            Noise::Request => {
                self.line(r#"{"jsonrpc":"2.0","id":"ext-1","method":"ask","params":{}}"#);
                if self.running {
                    self.requests_sent += 1;
                }
            }
            Noise::NullIdError => self.line(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#),
            Noise::UnknownNotification => self.line(r#"{"jsonrpc":"2.0","method":"log","params":{"m":"hi"}}"#),
            Noise::ToolsChanged => self.line(r#"{"jsonrpc":"2.0","method":"tools/list","params":{"tools":[{"name":"t","description":"d"}]}}"#),
            Noise::BlankLines => self.print("\n  \r\n\n"),
            Noise::HugeGarbage => {
                let garbage = "#".repeat(70 * 1024);
                self.line(&garbage);
            }
            Noise::UnfinishedLine => self.print(r#"{"jsonrpc":"2.0","#),
        }
    }
}

impl Peer for ScriptedExtension {
    fn stdin(&mut self, bytes: &[u8]) -> Result<(), TestCaseError> {
        self.check_stdin(bytes)
    }

    fn stdout(&mut self) -> &mut Vec<u8> {
        &mut self.stdout
    }

    fn stop(&mut self) {
        self.running = false;
    }

    fn close_stdin(&mut self) {
        // The script decides by itself when the process exits.
    }
}

fn run_scripted(script: &Script) -> Result<(), TestCaseError> {
    let mut sim = Sim::new(&script.settings, ScriptedExtension::new(), &SCRIPTED);
    let max_line_bytes = script.settings.max_line_bytes;
    let init = sim.core.initialize(sim.now, InitializeParams::new("/sim"));
    sim.started(init)?;
    if script.answers_initialize {
        let line = sim
            .peer
            .answer(1, "initialize", Shape::Good, max_line_bytes);
        sim.peer.line(&line);
    }
    for step in &script.steps {
        let ext = &mut sim.peer;
        match step {
            Step::Drive(drive) => sim.drive(drive, "t", Value::Object(Object::new()))?,
            Step::Reply { request, shape } => {
                if let Some((id, method)) = ext.pick(*request) {
                    let line = ext.answer(id, &method, *shape, max_line_bytes);
                    ext.line(&line);
                }
            }
            Step::Progress { request } => {
                let id = request
                    .and_then(|k| ext.pick(k))
                    .map(|(id, _)| format!(r#","id":{id}"#));
                let line = format!(
                    r#"{{"jsonrpc":"2.0","method":"progress","params":{{"message":"working"{}}}}}"#,
                    id.unwrap_or_default()
                );
                ext.line(&line);
            }
            Step::Noise(noise) => ext.noise(*noise),
            Step::Batch(entries) => {
                let answers: Vec<String> = entries
                    .iter()
                    .filter_map(|(k, shape)| {
                        let (id, method) = ext.pick(*k)?;
                        Some(ext.answer(id, &method, *shape, max_line_bytes))
                    })
                    .collect();
                if !answers.is_empty() {
                    ext.line(&format!("[{}]", answers.join(",")));
                }
            }
        }
        sim.after_step()?;
        // An obedient extension exits once it has read `shutdown` and time has passed.
        let time_passed = matches!(step, Step::Drive(Drive::Advance(_) | Drive::ToDeadline));
        if script.obeys_shutdown && sim.peer.got_shutdown && time_passed {
            sim.exit(Some(0), true)?;
        }
    }
    sim.finish()
}

// ---- The crate's own Extension endpoint on the other side -------------------------

/// What the tool author does with a request waiting for an answer.
#[derive(Clone, Copy, Debug)]
enum Answer {
    Result,
    ToolError,
    RpcError,
    Progress,
}

#[derive(Clone, Debug)]
enum PairStep {
    Drive(Drive),
    /// Hands the Core's bytes to the extension, in chunks of these sizes.
    Pump(Vec<u16>),
    Answer {
        request: usize,
        answer: Answer,
    },
    SetTools,
}

#[derive(Clone, Debug)]
struct PairScript {
    settings: Settings,
    /// After `shutdown`, the author still answers what is pending (then the extension
    /// exits by itself); otherwise it never does and the Core must kill it.
    finishes_on_shutdown: bool,
    steps: Vec<PairStep>,
}

fn pair_step() -> impl Strategy<Value = PairStep> {
    prop_oneof![
        18 => drive().prop_map(PairStep::Drive),
        8 => proptest::collection::vec(0u16..200, 1..6).prop_map(PairStep::Pump),
        8 => (any::<usize>(), prop_oneof![
            4 => Just(Answer::Result),
            1 => Just(Answer::ToolError),
            1 => Just(Answer::RpcError),
            2 => Just(Answer::Progress),
        ])
            .prop_map(|(request, answer)| PairStep::Answer { request, answer }),
        1 => Just(PairStep::SetTools),
    ]
}

fn pair_script() -> impl Strategy<Value = PairScript> {
    (
        settings(),
        proptest::bool::weighted(0.7),
        proptest::collection::vec(pair_step(), 0..100),
    )
        .prop_map(|(settings, finishes_on_shutdown, steps)| PairScript {
            settings,
            finishes_on_shutdown,
            steps,
        })
}

fn echo_tool() -> Tool {
    let schema = json::parse(
        br#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#,
    );
    Tool {
        name: "echo".into(),
        description: Some("Says it back".into()),
        input_schema: schema.ok(),
    }
}

/// The extension process (the shared `Process`: the Extension endpoint behind its
/// pipes) and its tool author.
struct Paired {
    process: Process,
    /// Requests waiting for the author.
    pending: Vec<RequestHandle>,
    shutdown_seen: bool,
}

impl Peer for Paired {
    fn stdin(&mut self, bytes: &[u8]) -> Result<(), TestCaseError> {
        self.process.write_stdin(bytes);
        Ok(())
    }

    fn stdout(&mut self) -> &mut Vec<u8> {
        &mut self.process.stdout.bytes
    }

    fn stop(&mut self) {
        self.process.stop();
    }

    fn close_stdin(&mut self) {
        self.process.close_stdin();
    }
}

impl Paired {
    fn new() -> Paired {
        let ext = Extension::new(ServerInfo::new("echo-tools", "1.0.0"), vec![echo_tool()]);
        Paired {
            process: Process::new(ext, Pipe::whole(), Pipe::whole()),
            pending: Vec::new(),
            shutdown_seen: false,
        }
    }

    /// Runs the extension's loop until it waits, and hands its events to the author.
    fn poll(&mut self) -> Result<(), TestCaseError> {
        self.process.poll();
        for event in self.process.take_events() {
            match event {
                extension::Event::Execute { request, .. } => self.pending.push(request),
                extension::Event::Shutdown => self.shutdown_seen = true,
                extension::Event::Protocol(error) => {
                    return Err(TestCaseError::fail(format!(
                        "the Core broke the protocol: {error:?}"
                    )));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The extension's exit code, once it has decided to exit.
    fn take_exit(&mut self) -> Option<i32> {
        self.process.exits.drain(..).next_back()
    }

    fn pump(&mut self, chunks: &[u16]) -> Result<(), TestCaseError> {
        for &size in chunks {
            if !self.process.read_stdin(usize::from(size.max(1))) {
                break;
            }
            self.poll()?;
        }
        if self.process.read_stdin_end() {
            self.poll()?;
        }
        Ok(())
    }

    fn answer(&mut self, k: usize, answer: Answer) -> Result<(), TestCaseError> {
        if self.pending.is_empty() || !self.process.running {
            return Ok(());
        }
        let index = k % self.pending.len();
        let request = self.pending[index];
        let done = match answer {
            Answer::Progress => self.process.ext.progress(request, "working").map(|_| false),
            Answer::Result => self
                .process
                .ext
                .respond(request, ToolResult::text("said"))
                .map(|_| true),
            Answer::ToolError => self
                .process
                .ext
                .respond(request, ToolResult::error_text("no"))
                .map(|_| true),
            Answer::RpcError => self
                .process
                .ext
                .respond_error(request, ErrorObject::new(ErrorCode::new(-32050), "boom"))
                .map(|_| true),
        };
        prop_assert!(
            done.is_ok(),
            "a pending request could not be answered: {:?}",
            done
        );
        if done == Ok(true) {
            self.pending.remove(index);
        }
        self.poll()
    }
}

fn run_paired(script: &PairScript) -> Result<(), TestCaseError> {
    let mut sim = Sim::new(&script.settings, Paired::new(), &PAIRED);
    let init = sim.core.initialize(sim.now, InitializeParams::new("/sim"));
    sim.started(init)?;
    for step in &script.steps {
        match step {
            PairStep::Drive(drive) => {
                let valid = matches!(
                    drive,
                    Drive::Execute {
                        valid_input: true,
                        ..
                    }
                );
                let input = match valid {
                    true => Value::Object(Object::from_iter([("text", Value::from("hi"))])),
                    false => Value::Object(Object::new()),
                };
                sim.drive(drive, "echo", input)?;
            }
            PairStep::Pump(chunks) => sim.peer.pump(chunks)?,
            PairStep::Answer { request, answer } => sim.peer.answer(*request, *answer)?,
            PairStep::SetTools => {
                sim.peer.process.ext.set_tools(vec![echo_tool()]);
                sim.peer.poll()?;
            }
        }
        sim.after_step()?;
        // After `shutdown` a willing author fails what is pending; then the extension
        // exits by itself.
        if sim.peer.shutdown_seen && script.finishes_on_shutdown {
            while let Some(request) = sim.peer.pending.pop() {
                let failed = sim.peer.process.ext.respond_error(
                    request,
                    ErrorObject::new(ErrorCode::new(-32000), "shutting down"),
                );
                prop_assert!(failed.is_ok());
            }
            sim.peer.poll()?;
        }
        if let Some(code) = sim.peer.take_exit() {
            sim.exit(Some(code), true)?;
        }
    }
    // Whatever is still in the pipes reaches the other side before the end.
    sim.peer.pump(&[u16::MAX])?;
    sim.finish()?;
    for error in &sim.protocol_errors {
        let PeerError::LateResponse { call, .. } = error else {
            return Err(TestCaseError::fail(format!(
                "the extension broke the protocol: {error:?}"
            )));
        };
        prop_assert!(
            sim.abandoned.contains(call),
            "a late reply to a call that was not abandoned"
        );
    }
    Ok(())
}

// ---- The tests ---------------------------------------------------------------------

fn proptest_config() -> ProptestConfig {
    let mut config = ProptestConfig {
        cases: CASES,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "tests/simulation.proptest-regressions",
        ))),
        ..ProptestConfig::default()
    };
    if config.rng_seed == RngSeed::Random {
        config.rng_seed = RngSeed::Fixed(0x0D4A_4A00);
    }
    config
}

#[test]
fn the_core_survives_a_misbehaving_extension() {
    println!("simulation: {CASES} cases against a scripted extension");
    proptest!(proptest_config(), |(script in script())| {
        run_scripted(&script)?;
    });
    SCRIPTED.print("scripted extension");
}

#[test]
fn the_core_and_the_extension_endpoint_agree() {
    println!("simulation: {CASES} cases against the Extension endpoint");
    proptest!(proptest_config(), |(script in pair_script())| {
        run_paired(&script)?;
    });
    PAIRED.print("extension endpoint");
}
