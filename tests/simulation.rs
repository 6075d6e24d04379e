//! A deterministic simulation of the Core against a scripted, misbehaving extension.
//!
//! proptest draws a script: the application's commands, the extension's answers (good,
//! wrong, late, duplicated, oversized, with the wrong id type), noise on its stdout,
//! how its bytes are chunked, how time passes (random steps, and sometimes exactly to
//! the deadline the Core asked for), crashes, closing stdout, and whether it obeys
//! `shutdown` at all. After every poll the invariants are checked:
//!
//! * no panic;
//! * every call started ends exactly once, and by the end of the session all have;
//! * `Kill` comes at most once, never before the grace after `shutdown` has ended, never
//!   after the exit;
//! * nothing after `Closed`, and commands are refused after it;
//! * the calls in flight and the ids remembered stay within their limits;
//! * a deadline asked for is never in the past;
//! * every line the Core writes is JSON-RPC, and the only responses it writes are
//!   `-32601` answers to the extension's requests.
//!
//! The seed is fixed so CI runs the same cases every time; set `PROPTEST_RNG_SEED` to
//! explore others. A failing case prints its shrunk script, and proptest saves it to
//! replay.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use core::time::Duration;

use dhara_protocol::host::{
    CallError, CallId, CallOptions, Config, Core, Event, Input, Output, UsageError,
};
use dhara_protocol::json::{self, Object, Value};
use dhara_protocol::message::{ExecuteParams, InitializeParams};
use dhara_protocol::time::Instant;
use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, FileFailurePersistence, RngSeed};

const CASES: u32 = 256;

/// What the cases exercised, summed over the run, to show the simulation is not idle.
static REPLIES: AtomicUsize = AtomicUsize::new(0);
static TIMEOUTS: AtomicUsize = AtomicUsize::new(0);
static EXITED: AtomicUsize = AtomicUsize::new(0);
static OTHER_ENDS: AtomicUsize = AtomicUsize::new(0);
static PEER_ERRORS: AtomicUsize = AtomicUsize::new(0);
static KILLS: AtomicUsize = AtomicUsize::new(0);

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
    Execute {
        known_tool: bool,
        timeout_ms: Option<u16>,
    },
    ListTools,
    Cancel(usize),
    Shutdown,
    Advance(u16),
    ToDeadline,
    Tick,
    Reply {
        request: usize,
        shape: Shape,
    },
    Progress {
        request: Option<usize>,
    },
    Noise(Noise),
    Batch(Vec<(usize, Shape)>),
    Deliver(Vec<u16>),
    CloseStdout,
    Crash {
        code: Option<i32>,
        close_stdout_first: bool,
    },
}

#[derive(Clone, Debug)]
struct Script {
    timeout_ms: u64,
    grace_ms: u64,
    max_in_flight: usize,
    recent_ids: usize,
    max_line_bytes: usize,
    progress_extends: bool,
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
        4 => (any::<bool>(), proptest::option::weighted(0.2, 1u16..3000))
            .prop_map(|(known, t)| Step::Execute { known_tool: known || t.is_some(), timeout_ms: t }),
        1 => Just(Step::ListTools),
        1 => any::<usize>().prop_map(Step::Cancel),
        1 => Just(Step::Shutdown),
        3 => (0u16..4000).prop_map(Step::Advance),
        2 => Just(Step::ToDeadline),
        1 => Just(Step::Tick),
        6 => (any::<usize>(), shape()).prop_map(|(request, shape)| Step::Reply { request, shape }),
        2 => proptest::option::of(any::<usize>()).prop_map(|request| Step::Progress { request }),
        2 => noise().prop_map(Step::Noise),
        1 => proptest::collection::vec((any::<usize>(), shape()), 1..4).prop_map(Step::Batch),
        5 => proptest::collection::vec(0u16..200, 1..6).prop_map(Step::Deliver),
        1 => Just(Step::CloseStdout),
        1 => (proptest::option::of(-2i32..3), any::<bool>())
            .prop_map(|(code, close_stdout_first)| Step::Crash { code, close_stdout_first }),
    ]
}

fn script() -> impl Strategy<Value = Script> {
    (
        (500u64..10_000, 0u64..3000, 1usize..6, 0usize..6),
        (
            prop_oneof![Just(256usize), Just(1024), Just(64 * 1024)],
            any::<bool>(),
            any::<bool>(),
            proptest::bool::weighted(0.8),
        ),
        proptest::collection::vec(step(), 0..100),
    )
        .prop_map(
            |(
                (timeout_ms, grace_ms, max_in_flight, recent_ids),
                (max_line_bytes, progress_extends, obeys_shutdown, answers_initialize),
                steps,
            )| Script {
                timeout_ms,
                grace_ms,
                max_in_flight,
                recent_ids,
                max_line_bytes,
                progress_extends,
                obeys_shutdown,
                answers_initialize,
                steps,
            },
        )
}

/// The scripted extension: it reads the Core's lines and writes what the script says.
struct Extension {
    /// Every request the Core sent: its id and method.
    requests: Vec<(u64, String)>,
    /// Requests it sent to the Core, and `-32601` answers it got back.
    requests_sent: usize,
    answers_received: usize,
    got_shutdown: bool,
    /// Bytes written to its stdout, not yet read by the driver.
    stdout: Vec<u8>,
    running: bool,
    stdout_open: bool,
    /// Bytes of a line the Core wrote that is not finished yet.
    partial: Vec<u8>,
}

impl Extension {
    fn new() -> Extension {
        Extension {
            requests: Vec::new(),
            requests_sent: 0,
            answers_received: 0,
            got_shutdown: false,
            stdout: Vec::new(),
            running: true,
            stdout_open: true,
            partial: Vec::new(),
        }
    }

    /// Reads what the Core wrote to its stdin, checking each line.
    fn read_stdin(&mut self, bytes: &[u8]) -> Result<(), TestCaseError> {
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

/// The driver side: the Core, the clock, and what has been seen.
struct Sim {
    core: Core,
    ext: Extension,
    now: Instant,
    grace: Duration,
    max_in_flight: usize,
    recent_ids: usize,
    max_line_bytes: usize,
    started: BTreeSet<CallId>,
    ended: BTreeSet<CallId>,
    shutdown_at: Option<Instant>,
    kills: usize,
    kill_pending: bool,
    exit_reported: bool,
    closed: bool,
    wait: Option<Instant>,
}

impl Sim {
    fn poll(&mut self) -> Result<(), TestCaseError> {
        for _ in 0..100_000 {
            match self.core.poll_output() {
                Output::Transmit(bytes) => {
                    prop_assert!(!self.closed, "bytes after Closed");
                    let bytes = bytes.to_vec();
                    if self.ext.running {
                        self.ext.read_stdin(&bytes)?;
                    }
                }
                Output::Event(event) => self.event(event)?,
                Output::Kill => {
                    prop_assert!(!self.closed && !self.exit_reported, "kill after the exit");
                    prop_assert_eq!(self.kills, 0, "a second kill");
                    let shutdown_at = self
                        .shutdown_at
                        .ok_or_else(|| TestCaseError::fail("kill without shutdown"))?;
                    prop_assert!(
                        self.now >= shutdown_at + self.grace,
                        "kill before the grace ended"
                    );
                    self.kills += 1;
                    KILLS.fetch_add(1, Relaxed);
                    self.kill_pending = true;
                }
                Output::Wait(deadline) => {
                    if let Some(deadline) = deadline {
                        prop_assert!(deadline > self.now, "a deadline in the past");
                        prop_assert!(!self.closed, "a deadline after Closed");
                    }
                    self.wait = deadline;
                    prop_assert!(self.core.calls_in_flight() <= self.max_in_flight);
                    prop_assert!(self.core.remembered_ids() <= self.recent_ids);
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
                    Ok(_) => &REPLIES,
                    Err(CallError::Timeout) => &TIMEOUTS,
                    Err(CallError::ExtensionExited) => &EXITED,
                    Err(_) => &OTHER_ENDS,
                };
                counter.fetch_add(1, Relaxed);
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
            Event::Protocol(_) => {
                PEER_ERRORS.fetch_add(1, Relaxed);
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

    /// Delivers the extension's stdout to the Core in chunks of the given sizes.
    fn deliver(&mut self, chunks: &[u16]) -> Result<(), TestCaseError> {
        for &size in chunks {
            if self.ext.stdout.is_empty() || !self.ext.stdout_open {
                break;
            }
            let n = usize::from(size.max(1)).min(self.ext.stdout.len());
            let chunk: Vec<u8> = self.ext.stdout.drain(..n).collect();
            self.input(Input::Stdout(&chunk))?;
        }
        Ok(())
    }

    fn deliver_all(&mut self) -> Result<(), TestCaseError> {
        while self.ext.stdout_open && !self.ext.stdout.is_empty() {
            self.deliver(&[4096])?;
        }
        Ok(())
    }

    fn close_stdout(&mut self) -> Result<(), TestCaseError> {
        if self.ext.stdout_open {
            self.deliver_all()?;
            self.ext.stdout_open = false;
            self.input(Input::StdoutClosed)?;
        }
        Ok(())
    }

    fn exit(&mut self, code: Option<i32>, close_stdout_first: bool) -> Result<(), TestCaseError> {
        if self.exit_reported {
            return Ok(());
        }
        if close_stdout_first {
            self.close_stdout()?;
        } else {
            // The last bytes are handed in with no poll before the exit.
            let rest = core::mem::take(&mut self.ext.stdout);
            if self.ext.stdout_open {
                self.core.handle_input(self.now, Input::Stdout(&rest));
            }
        }
        self.ext.running = false;
        self.ext.stdout_open = false;
        self.input(Input::Exited { code })
    }

    fn advance(&mut self, to: Instant) -> Result<(), TestCaseError> {
        self.now = self.now.max(to);
        self.input(Input::Timeout)
    }

    fn step(&mut self, step: &Step) -> Result<(), TestCaseError> {
        match step {
            Step::Execute {
                known_tool,
                timeout_ms,
            } => {
                let tool = if *known_tool { "t" } else { "missing" };
                let options = CallOptions {
                    timeout: timeout_ms.map(|t| Duration::from_millis(t.into())),
                    ..CallOptions::default()
                };
                let input = Value::Object(Object::new());
                let result =
                    self.core
                        .execute_with(self.now, ExecuteParams::new(tool, input), options);
                self.started(result)?;
            }
            Step::ListTools => {
                let result = self.core.list_tools(self.now);
                self.started(result)?;
            }
            Step::Cancel(k) => {
                let open: Vec<CallId> = self.started.difference(&self.ended).copied().collect();
                if let Some(&call) = open.get(k % open.len().max(1)) {
                    let result = self.core.cancel(self.now, call);
                    prop_assert_eq!(result.is_ok(), !self.exit_reported);
                    self.poll()?;
                }
            }
            Step::Shutdown => {
                let result = self.core.shutdown(self.now);
                prop_assert_eq!(
                    result.is_ok(),
                    self.shutdown_at.is_none() && !self.exit_reported
                );
                self.poll()?;
            }
            Step::Advance(ms) => self.advance(self.now + Duration::from_millis((*ms).into()))?,
            Step::ToDeadline => {
                if let Some(deadline) = self.wait {
                    self.advance(deadline)?;
                }
            }
            Step::Tick => self.input(Input::Timeout)?,
            Step::Reply { request, shape } => {
                if let Some((id, method)) = self.ext.pick(*request) {
                    let line = self.ext.answer(id, &method, *shape, self.max_line_bytes);
                    self.ext.line(&line);
                }
            }
            Step::Progress { request } => {
                let id = request
                    .and_then(|k| self.ext.pick(k))
                    .map(|(id, _)| format!(r#","id":{id}"#));
                let line = format!(
                    r#"{{"jsonrpc":"2.0","method":"progress","params":{{"message":"working"{}}}}}"#,
                    id.unwrap_or_default()
                );
                self.ext.line(&line);
            }
            Step::Noise(noise) => self.ext.noise(*noise),
            Step::Batch(entries) => {
                let answers: Vec<String> = entries
                    .iter()
                    .filter_map(|(k, shape)| {
                        let (id, method) = self.ext.pick(*k)?;
                        Some(self.ext.answer(id, &method, *shape, self.max_line_bytes))
                    })
                    .collect();
                if !answers.is_empty() {
                    self.ext.line(&format!("[{}]", answers.join(",")));
                }
            }
            Step::Deliver(chunks) => self.deliver(chunks)?,
            Step::CloseStdout => self.close_stdout()?,
            Step::Crash {
                code,
                close_stdout_first,
            } => self.exit(*code, *close_stdout_first)?,
        }
        if self.kill_pending {
            self.kill_pending = false;
            self.exit(None, true)?;
        }
        Ok(())
    }
}

fn run(script: &Script) -> Result<(), TestCaseError> {
    let config = Config::default()
        .timeout(Duration::from_millis(script.timeout_ms))
        .grace(Duration::from_millis(script.grace_ms))
        .max_in_flight(script.max_in_flight)
        .recent_ids(script.recent_ids)
        .max_line_bytes(script.max_line_bytes)
        .progress_extends_deadline(
            script.progress_extends,
            Some(Duration::from_millis(script.timeout_ms * 3)),
        );
    let mut sim = Sim {
        core: Core::new(config),
        ext: Extension::new(),
        now: Instant::ZERO,
        grace: Duration::from_millis(script.grace_ms),
        max_in_flight: script.max_in_flight,
        recent_ids: script.recent_ids,
        max_line_bytes: script.max_line_bytes,
        started: BTreeSet::new(),
        ended: BTreeSet::new(),
        shutdown_at: None,
        kills: 0,
        kill_pending: false,
        exit_reported: false,
        closed: false,
        wait: None,
    };
    let init = sim.core.initialize(sim.now, InitializeParams::new("/sim"));
    sim.started(init)?;
    if script.answers_initialize {
        let line = sim
            .ext
            .answer(1, "initialize", Shape::Good, script.max_line_bytes);
        sim.ext.line(&line);
    }

    for step in &script.steps {
        sim.step(step)?;
        if script.obeys_shutdown && sim.ext.got_shutdown && sim.ext.running {
            if let Step::Advance(_) | Step::ToDeadline = step {
                sim.exit(Some(0), true)?;
            }
        }
    }

    // The end of the session: the extension is stopped if it still runs.
    sim.exit(Some(0), true)?;
    prop_assert!(sim.closed, "no Closed after the exit");
    let open: Vec<&CallId> = sim.started.difference(&sim.ended).collect();
    prop_assert!(open.is_empty(), "calls that never ended: {:?}", open);
    prop_assert!(sim.core.execute(sim.now, "t", Value::Null).is_err());
    sim.poll()?;
    Ok(())
}

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
        run(&script)?;
    });
    println!(
        "simulation: calls ended by reply {}, timeout {}, exit {}, otherwise {}; {} protocol errors; {} kills",
        REPLIES.load(Relaxed),
        TIMEOUTS.load(Relaxed),
        EXITED.load(Relaxed),
        OTHER_ENDS.load(Relaxed),
        PEER_ERRORS.load(Relaxed),
        KILLS.load(Relaxed),
    );
}
