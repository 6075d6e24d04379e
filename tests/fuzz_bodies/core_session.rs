//! `core_session`: a Core driven by an arbitrary sequence of inputs and commands.
//!
//! The fuzz bytes choose each step: bytes from the extension (raw, or lines shaped
//! like replies, progress, notifications, requests, batches, oversized lines, in
//! random chunks), time passing, the deadline reached, stdout closed, the exit, and
//! the application's commands. After every step the driver polls until `Wait`, and
//! the run checks the Core's promises:
//!
//! * every call it started ends exactly once, and not by timeout before its deadline;
//! * what it writes is valid JSON-RPC: one request per call, one `shutdown` at most,
//!   and only `-32601` answers to the extension's requests;
//! * `Kill` comes at most once, never before the grace after `shutdown` has ended,
//!   never after the exit;
//! * `Closed` is the last event, and only comes after the exit; nothing follows it;
//! * `Wait` names a deadline still in the future (no busy loop), and the state is
//!   bounded (`max_in_flight` calls, `recent_ids` ids).
//!
//! At the end the session is driven to its close (stdout closed, deadlines passed,
//! the kill carried out), which must come, with every call ended.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use dhara_protocol::frame::DEFAULT_MAX_LINE_BYTES;
use dhara_protocol::host::{
    CallError, CallId, CallOptions, Config, Core, Event, Input, Output, State,
};
use dhara_protocol::json::{Object, Value};
use dhara_protocol::message::{ExecuteParams, InitializeParams, method};
use dhara_protocol::rpc::{self, ErrorCode, Incoming, Message};
use dhara_protocol::time::Instant;

use crate::source::{Chunks, Source};

/// The most outputs one poll loop may give before it must wait.
const MAX_OUTPUTS_PER_STEP: usize = 100_000;

const INIT_RESULT: &str = r#"{"name":"web-tools","version":"1.0.0","tools":[{"name":"echo","description":"Say it back","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}},{"name":"free","description":"Anything"}]}"#;
const TOOL_RESULT: &str = r#"{"content":[{"type":"text","text":"hi"},{"type":"image","mimeType":"image/png","data":"AA=="},{"type":"video","url":"x"}],"isError":false}"#;
const TOOLS: &str = r#"{"tools":[{"name":"free","description":"Anything"}]}"#;

/// A call the Core started, as the driver saw it.
struct Started {
    at: Instant,
    /// The earliest instant it may time out.
    earliest_timeout: Instant,
    cancelled: bool,
}

/// The driver's record of the session, against which every output is checked.
struct Session {
    core: Core,
    config: Config,
    now: Instant,
    in_flight: BTreeMap<u64, Started>,
    ended: BTreeSet<u64>,
    /// Request ids written to the extension's stdin.
    sent: BTreeSet<u64>,
    /// Every call handed out, in order.
    issued: Vec<CallId>,
    shutdown_at: Option<Instant>,
    shutdown_sent: usize,
    stdin_closed: bool,
    kills: usize,
    stdout_closed: bool,
    exited: bool,
    closed: bool,
    wait: Option<Instant>,
}

pub fn run(data: &[u8]) {
    let mut source = Source::new(data);
    let config = config(&mut source);
    let mut session = Session::new(config);
    let mut steps = 0;
    while !source.is_empty() && steps < 200 {
        steps += 1;
        session.step(&mut source);
    }
    session.finish(source.bool());
}

fn config(source: &mut Source<'_>) -> Config {
    let timeout = Duration::from_millis(1 + u64::from(source.u16()) * 10);
    let grace = Duration::from_millis(u64::from(source.u16()) * 2);
    let max_line_bytes = source.pick(&[DEFAULT_MAX_LINE_BYTES, DEFAULT_MAX_LINE_BYTES, 64, 600]);
    let cap = match source.below(3) {
        0 => None,
        _ => Some(Duration::from_millis(u64::from(source.u16()) * 10)),
    };
    Config::default()
        .timeout(timeout)
        .grace(grace)
        .max_line_bytes(max_line_bytes)
        .max_in_flight(1 + source.below(6))
        .recent_ids(source.below(6))
        .progress_extends_deadline(source.bool(), cap)
        .validate_input(source.bool())
}

impl Session {
    fn new(config: Config) -> Session {
        Session {
            core: Core::new(config.clone()),
            config,
            now: Instant::ZERO,
            in_flight: BTreeMap::new(),
            ended: BTreeSet::new(),
            sent: BTreeSet::new(),
            issued: Vec::new(),
            shutdown_at: None,
            shutdown_sent: 0,
            stdin_closed: false,
            kills: 0,
            stdout_closed: false,
            exited: false,
            closed: false,
            wait: None,
        }
    }

    fn step(&mut self, source: &mut Source<'_>) {
        match source.below(40) {
            0 => {
                let bytes = source.bytes();
                self.input(Input::Stdout(bytes));
            }
            1..=14 => {
                let line = self.extension_line(source);
                let mut chunks = Chunks::new(u64::from(source.u16()));
                let max_chunk = 1 + source.below(200);
                for chunk in chunks.split(&line, max_chunk) {
                    self.input(Input::Stdout(chunk));
                }
            }
            15..=17 => {
                self.now = self.now + Duration::from_millis(u64::from(source.u16()) * 10);
                self.input(Input::Timeout);
            }
            18..=20 => {
                if let Some(deadline) = self.wait {
                    self.now = self.now.max(deadline);
                }
                self.input(Input::Timeout);
            }
            21 => {
                // A clock that went backwards counts as the latest time seen.
                let back = Duration::from_millis(u64::from(source.u16()));
                let earlier = Instant::from_duration(self.now.since_origin().saturating_sub(back));
                self.core.handle_input(earlier, Input::Timeout);
                self.poll();
            }
            22 => self.input(Input::StdoutClosed),
            23 => {
                let code = source.pick(&[Some(0), Some(1), None]);
                self.input(Input::Exited { code });
            }
            24 | 25 => {
                let started = self.core.initialize(self.now, InitializeParams::new("/p"));
                self.started(started.ok(), CallOptions::default());
            }
            26..=31 => {
                let tool = source.pick(&["echo", "free", "nope"]);
                let input = match source.below(3) {
                    0 => Value::Object(Object::from_iter([("text", Value::from("hi"))])),
                    1 => Value::Object(Object::new()),
                    _ => Value::from(7u8),
                };
                let options = CallOptions {
                    timeout: source
                        .bool()
                        .then(|| Duration::from_millis(u64::from(source.u16()))),
                    progress_extends_deadline: source.bool().then(|| source.bool()),
                    progress_cap: source
                        .bool()
                        .then(|| Duration::from_millis(u64::from(source.u16()))),
                };
                let params = ExecuteParams::new(tool, input);
                let started = self.core.execute_with(self.now, params, options);
                self.started(started.ok(), options);
            }
            32 | 33 => {
                let started = self.core.list_tools(self.now);
                self.started(started.ok(), CallOptions::default());
            }
            34..=36 => {
                let in_flight: Vec<u64> = self.in_flight.keys().copied().collect();
                let ended: Vec<u64> = self.ended.iter().copied().collect();
                let pool = if source.bool() { in_flight } else { ended };
                if let Some(&call) = pool.get(source.below(pool.len())) {
                    self.cancel(call);
                }
            }
            37 => {
                let before = self.shutdown_at;
                let result = self.core.shutdown(self.now);
                assert_eq!(
                    result.is_ok(),
                    before.is_none() && !self.closed && !self.exited,
                    "shutdown accepted or refused wrongly: {result:?}"
                );
                self.poll();
            }
            _ => {
                let bytes = self.extension_line(source);
                self.input(Input::Stdout(&bytes));
            }
        }
        self.check_bounds();
    }

    /// Cancels a call by the id the Core gave for it.
    fn cancel(&mut self, call: u64) {
        let Some(id) = self.call_id(call) else { return };
        let result = self.core.cancel(self.now, id);
        if self.in_flight.contains_key(&call) && !self.exited {
            assert!(
                result.is_ok(),
                "cancel of a call in flight refused: {result:?}"
            );
            if let Some(started) = self.in_flight.get_mut(&call) {
                started.cancelled = true;
            }
        } else {
            assert!(result.is_err(), "cancel of an ended call accepted");
        }
        self.poll();
    }

    fn call_id(&self, call: u64) -> Option<CallId> {
        self.issued.iter().copied().find(|id| id.get() == call)
    }

    fn started(&mut self, call: Option<CallId>, options: CallOptions) {
        let before = self.core.calls_in_flight();
        if let Some(call) = call {
            let id = call.get();
            assert!(!self.exited, "a call started after the exit");
            assert!(
                !self.in_flight.contains_key(&id) && !self.ended.contains(&id),
                "call id {id} reused"
            );
            assert!(self.issued.last().is_none_or(|last| last.get() < id));
            let timeout = options.timeout.unwrap_or(self.config.timeout);
            let extends = options
                .progress_extends_deadline
                .unwrap_or(self.config.progress_extends_deadline);
            let mut earliest = self.now + timeout;
            if let (true, Some(cap)) = (extends, options.progress_cap.or(self.config.progress_cap))
            {
                earliest = earliest.min(self.now + cap);
            }
            self.in_flight.insert(
                id,
                Started {
                    at: self.now,
                    earliest_timeout: earliest,
                    cancelled: false,
                },
            );
            self.issued.push(call);
        } else {
            assert_eq!(self.core.calls_in_flight(), before);
        }
        self.poll();
    }

    fn input(&mut self, input: Input<'_>) {
        match input {
            Input::StdoutClosed => self.stdout_closed = true,
            Input::Exited { .. } => {
                self.stdout_closed = true;
                self.exited = true;
            }
            _ => {}
        }
        self.core.handle_input(self.now, input);
        self.poll();
    }

    /// Polls until `Wait`, checking every output.
    fn poll(&mut self) {
        for _ in 0..MAX_OUTPUTS_PER_STEP {
            match self.core.poll_output() {
                Output::Wait(deadline) => {
                    if let Some(at) = deadline {
                        assert!(at > self.now, "Wait names a deadline already passed");
                        assert!(!self.exited, "a deadline after the exit");
                    }
                    self.wait = deadline;
                    assert_eq!(
                        self.core.calls_in_flight(),
                        self.in_flight.len(),
                        "calls in flight and CallEnded events disagree"
                    );
                    assert_eq!(self.sent.len(), self.issued.len(), "a call was never sent");
                    return;
                }
                output => {
                    assert!(!self.closed, "output after Closed: {output:?}");
                    match output {
                        Output::Transmit(bytes) => {
                            assert!(!self.stdin_closed, "bytes written after stdin was closed");
                            let bytes = bytes.to_vec();
                            self.transmitted(&bytes);
                        }
                        Output::Event(event) => self.event(event),
                        Output::CloseStdin => {
                            assert_eq!(self.shutdown_sent, 1, "stdin closed before shutdown");
                            assert!(!self.stdin_closed, "stdin closed twice");
                            self.stdin_closed = true;
                        }
                        Output::Kill => self.kill(),
                        other => panic!("an output this target does not know: {other:?}"),
                    }
                }
            }
        }
        panic!("poll_output never said Wait");
    }

    fn transmitted(&mut self, bytes: &[u8]) {
        assert!(
            !bytes.is_empty() && bytes.ends_with(b"\n"),
            "not whole lines"
        );
        for line in bytes[..bytes.len() - 1].split(|&b| b == b'\n') {
            match rpc::decode(line, rpc::DecodeOptions::DEFAULT) {
                Incoming::Single(Ok(Message::Request(request))) => {
                    let id = request.id.as_u64().expect("the Core sends integer ids");
                    assert!(self.call_id(id).is_some(), "a request for no call: {id}");
                    assert!(self.sent.insert(id), "request {id} sent twice");
                    assert!(matches!(
                        request.method.as_str(),
                        method::INITIALIZE | method::TOOLS_LIST | method::TOOLS_EXECUTE
                    ));
                }
                Incoming::Single(Ok(Message::Notification(n))) => {
                    assert_eq!(n.method, method::SHUTDOWN);
                    self.shutdown_sent += 1;
                    assert_eq!(self.shutdown_sent, 1, "shutdown sent twice");
                }
                Incoming::Single(Ok(Message::Response(response))) => not_found(&response),
                Incoming::Batch(entries) => {
                    for entry in entries {
                        match entry {
                            Ok(Message::Response(response)) => not_found(&response),
                            other => panic!("the Core sent a batch entry {other:?}"),
                        }
                    }
                }
                other => panic!(
                    "the Core wrote an invalid line {:?}: {other:?}",
                    String::from_utf8_lossy(line)
                ),
            }
        }
    }

    fn event(&mut self, event: Event) {
        match event {
            Event::CallEnded { call, result } => {
                let id = call.get();
                let started = self
                    .in_flight
                    .remove(&id)
                    .unwrap_or_else(|| panic!("call {id} ended twice, or was never started"));
                self.ended.insert(id);
                match result {
                    Err(CallError::Timeout { .. }) => assert!(
                        self.now >= started.earliest_timeout,
                        "call {id} timed out early: started {:?}, now {:?}",
                        started.at,
                        self.now
                    ),
                    Err(CallError::Cancelled) => assert!(started.cancelled),
                    Err(CallError::ExtensionExited { .. }) => assert!(self.stdout_closed),
                    _ => {}
                }
            }
            Event::Progress {
                call: Some(call), ..
            } => {
                assert!(
                    self.in_flight.contains_key(&call.get()),
                    "progress attributed to a call not in flight"
                );
            }
            Event::ToolsChanged { tools } => assert_eq!(self.core.tools(), tools.as_slice()),
            Event::ShuttingDown { .. } => {
                assert!(self.shutdown_at.is_none(), "ShuttingDown twice");
                self.shutdown_at = Some(self.now);
            }
            Event::Closed { .. } => {
                assert!(self.exited, "Closed before the exit");
                assert!(self.in_flight.is_empty(), "Closed with calls pending");
                assert_eq!(self.core.state(), State::Closed);
                self.closed = true;
            }
            _ => {}
        }
    }

    fn kill(&mut self) {
        self.kills += 1;
        assert_eq!(self.kills, 1, "Kill given twice");
        assert!(!self.exited, "Kill after the exit");
        let shutdown_at = self.shutdown_at.expect("Kill without shutdown");
        assert!(
            self.now >= shutdown_at + self.config.grace,
            "Kill before the grace ended: shutdown at {shutdown_at:?}, grace {:?}, now {:?}",
            self.config.grace,
            self.now
        );
    }

    fn check_bounds(&self) {
        assert!(self.core.calls_in_flight() <= self.config.max_in_flight);
        assert!(self.core.remembered_ids() <= self.config.recent_ids);
    }

    /// Drives the session to its end: stdout closes, deadlines pass, the kill is
    /// carried out. `Closed` must come, with every call ended.
    fn finish(&mut self, exit_first: bool) {
        if exit_first {
            self.input(Input::Exited { code: Some(0) });
        } else {
            self.input(Input::StdoutClosed);
        }
        for _ in 0..100 {
            if self.closed {
                break;
            }
            if self.kills == 1 && !self.exited {
                self.input(Input::Exited { code: None });
            } else if let Some(deadline) = self.wait {
                self.now = deadline;
                self.input(Input::Timeout);
            } else if !self.exited {
                panic!("the session waits for nothing and never closes");
            }
        }
        assert!(self.closed, "the session never closed");
        assert!(self.in_flight.is_empty());
        assert_eq!(self.ended.len(), self.issued.len(), "a call never ended");
        // Nothing follows Closed.
        self.input(Input::Stdout(
            b"{\"jsonrpc\":\"2.0\",\"method\":\"progress\"}\n",
        ));
    }

    /// A line as an extension might write it, with its ending.
    fn extension_line(&self, source: &mut Source<'_>) -> Vec<u8> {
        let id = match source.below(6) {
            0..=2 => match self.issued.get(source.below(self.issued.len())) {
                Some(id) => id.get().to_string(),
                None => String::from("1"),
            },
            3 => (self.issued.len() + 1 + source.below(3)).to_string(),
            _ => String::from(source.pick(&[
                "\"1\"",
                "null",
                "-1",
                "1.0",
                "1e0",
                "9007199254740993",
                "184467440737095516160",
                "{}",
                "[1]",
            ])),
        };
        let mut line = match source.below(16) {
            0 => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{INIT_RESULT}}}"#),
            1 => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{TOOL_RESULT}}}"#),
            2 => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{TOOLS}}}"#),
            3 => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"isError":1}}}}"#),
            4 => {
                let code = source.pick(&["-32601", "-32000", "7", "\"x\"", "1.5"]);
                format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":"no"}}}}"#)
            }
            5 => format!(
                r#"{{"jsonrpc":"2.0","method":"progress","params":{{"message":"step","id":{id}}}}}"#
            ),
            6 => String::from(r#"{"jsonrpc":"2.0","method":"progress","params":{"message":"step"}}"#),
            7 => format!(r#"{{"jsonrpc":"2.0","method":"tools/list","params":{TOOLS}}}"#),
            8 => String::from(r#"{"jsonrpc":"2.0","method":"log","params":{"level":"info"}}"#),
            9 => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"sampling","params":[]}}"#),
            10 => format!(
                r#"[{{"jsonrpc":"2.0","id":{id},"result":{TOOL_RESULT}}},{{"jsonrpc":"2.0","id":9,"method":"x"}},1]"#
            ),
            11 => {
                let filler = "x".repeat(self.config.max_line_bytes.min(2000) + source.below(50));
                format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{filler}"}}]}}}}"#
                )
            }
            12 => format!(
                r#"{{"jsonrpc":"2.0","id":{id},"id":{id},"result":{TOOL_RESULT},"error":{{"code":1,"message":"m"}}}}"#
            ),
            13 => format!(r#"{{"jsonrpc":"1.0","id":{id},"result":{TOOL_RESULT}}}"#),
            14 => String::from("starting up... \u{1F600}"),
            _ => String::from_utf8_lossy(source.bytes()).into_owned(),
        }
        .into_bytes();
        if source.below(8) == 0 {
            // Cut it somewhere.
            line.truncate(source.below(line.len() + 1));
        }
        line.extend_from_slice(source.pick(&[&b"\n"[..], b"\r\n", b"\n\n", b"\n \t\n", b""]));
        line
    }
}

/// The only answer the Core gives: Method not found, to the extension's requests.
fn not_found(response: &rpc::Response) {
    match &response.outcome {
        Err(error) => assert_eq!(error.code, ErrorCode::METHOD_NOT_FOUND),
        Ok(result) => panic!("the Core answered with a result: {result:?}"),
    }
}
