//! The checks, in the order they run, and what each depends on.
//!
//! One process carries the session: `initialize`, the declarations, `tools/list`, a
//! real call of each tool, the id and notification probes, then the requests a Core
//! never sends, and `shutdown`. When it exits on the way (a crash on a tool or on a
//! malformed line), it is started again for the rows that do not depend on what
//! made it exit; the rows that do are SKIP, with the reason. The rows that would
//! leave a process in a state that spoils later rows each get a fresh process: a
//! request before `initialize`, end of stdin, and a batch.
//!
//! The id and notification probes use a request the extension is known to answer
//! (`tools/list`, else a call that worked), never an unknown method, so how unknown
//! methods are handled shows in exactly one row.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use dhara_protocol::json::{Number, Object, Value};
use dhara_protocol::message::{self, ExecuteParams, InitializeParams, Tool, method};
use dhara_protocol::rpc::{self, ErrorCode, Id, Message};
use dhara_protocol::schema;

use super::harness::{Exit, Process, Reply, Trace, Unexpected, id_text, shown};
use super::live::Live;
use super::tools::{self, CallEnd, Declared, MAX_CALLED_TOOLS};
use super::{Report, Row, Status};
use crate::args::format_duration;

/// A method no extension implements.
const UNKNOWN_METHOD: &str = "dhara-check/no-such-method";
/// A notification no extension knows.
const UNKNOWN_NOTIFICATION: &str = "dhara-check/no-such-notification";
/// A tool name no extension offers (made unique against the real ones if needed).
const UNKNOWN_TOOL: &str = "dhara-check-no-such-tool";
/// A string id that looks like a number, to catch ids coerced to numbers. The
/// integer ids of one process stay far below it.
const STRING_ID: &str = "777";
/// The largest id the Core issues: 2^53 - 1.
const LARGEST_CORE_ID: &str = "9007199254740991";
/// An integer id just beyond 2^53: a double cannot hold it.
const BEYOND_DOUBLE_ID: &str = "9007199254740993";
/// An integer id beyond `i64` (still within `u64`).
const BEYOND_I64_ID: &str = "12345678901234567890";
/// How many times the session process is started again after it exits.
const MAX_RESTARTS: usize = 8;

/// What the checks need besides the command.
pub(super) struct Settings {
    /// The wait for the reply to `initialize`.
    pub timeout: Duration,
    /// The wait for every other reply, and for the exit after `shutdown` alone.
    pub probe_timeout: Duration,
    /// The wait for the process to exit after end of stdin.
    pub grace: Duration,
    /// The extension's working directory, also sent in `initialize`.
    pub cwd: PathBuf,
    /// Added to the extension's environment (`--env`, then the config file's `env`).
    pub env: Vec<(String, String)>,
    /// Where lines are traced.
    pub trace: Trace,
    /// The status line.
    pub live: Live,
    /// Whether tools are called at all (`--no-calls`: no).
    pub call_tools: bool,
    /// The inputs given with `--call TOOL JSON`, in order.
    pub given_calls: Vec<(String, Value)>,
}

/// The request the probes ride on: one the extension is known to answer.
#[derive(Clone)]
enum Probe {
    /// `tools/list`.
    ListTools,
    /// `tools/execute` of a tool, with an input it answered.
    Execute(String, Value),
}

impl Probe {
    fn send(&self, ext: &mut Process, id: Id) -> Result<(), String> {
        match self {
            Probe::ListTools => ext.send_request(id, method::TOOLS_LIST, None),
            Probe::Execute(tool, input) => {
                let params = Value::from(ExecuteParams::new(tool.as_str(), input.clone()));
                ext.send_request(id, method::TOOLS_EXECUTE, Some(&params))
            }
        }
    }

    fn name(&self) -> String {
        match self {
            Probe::ListTools => String::from("tools/list"),
            Probe::Execute(tool, _) => format!("a call of {tool}"),
        }
    }
}

/// Runs every check against `command`, each row reported as it is decided; the
/// stderr lines to show. `Err` when the command cannot be started.
pub(super) fn run(
    command: &[String],
    settings: &Settings,
    report: &mut Report,
) -> Result<Vec<String>, String> {
    let mut run = Run {
        command,
        settings,
        report,
        started: 0,
        restarts: 0,
        ext: None,
        tools: Vec::new(),
        unreadable: 0,
        unexpected: Unexpected::default(),
        probe: None,
        blamed: None,
        stderr: None,
        restarted: None,
    };
    let first = run.spawn()?;
    run.ext = Some(first);
    run.all();
    run.retire();
    Ok(run.stderr.unwrap_or_default())
}

/// The state of one run of the checks.
struct Run<'a> {
    command: &'a [String],
    settings: &'a Settings,
    report: &'a mut Report,
    /// Processes started so far (each is numbered in the trace).
    started: usize,
    restarts: usize,
    /// The session process, initialized.
    ext: Option<Process>,
    /// The tools the Core can call, from the first `initialize`.
    tools: Vec<Tool>,
    /// How many descriptors of the first `initialize` the Core cannot read.
    unreadable: usize,
    /// The unexpected lines of the session processes that were retired.
    unexpected: Unexpected,
    probe: Option<Probe>,
    /// The process that was running when the first FAIL was decided.
    blamed: Option<usize>,
    /// Its last stderr lines.
    stderr: Option<Vec<String>>,
    /// Said in the next row: the session process was started again for it.
    restarted: Option<String>,
}

impl Run<'_> {
    fn all(&mut self) {
        let Some(declared) = self.initialize() else {
            for name in SESSION_ROWS.iter().chain(FRESH_ROWS) {
                self.skip(name, "initialize failed");
            }
            return;
        };
        for row in tools::declaration_rows(&declared) {
            self.push(row);
        }
        self.tools = declared.tools;
        self.unreadable = declared.unreadable.len();
        self.list_tools();
        self.calls();
        self.ids();
        self.notification();
        self.error_replies();
        self.output();
        self.shutdown();
        self.before_initialize();
        self.end_of_stdin();
        self.batch();
    }

    fn spawn(&mut self) -> Result<Process, String> {
        self.started += 1;
        let s = self.settings;
        Process::spawn(
            self.started,
            self.command,
            &s.cwd,
            &s.env,
            &s.trace,
            &s.live,
        )
    }

    /// Reports a row; the first FAIL blames the session process running then.
    fn push(&mut self, mut row: Row) {
        if let Some(note) = self.restarted.take() {
            row.detail = format!("({note}) {}", row.detail);
        }
        let row = self.report.push(row);
        if row == Status::Fail && self.blamed.is_none() {
            self.blamed = self.ext.as_ref().map(Process::number);
        }
    }

    fn skip(&mut self, check: &str, why: impl Into<String>) {
        self.push(Row::new(
            check,
            Status::Skip,
            format!("not run: {}", why.into()),
        ));
    }

    /// Lets the session process go: its unexpected lines are kept, and its last
    /// stderr lines when it is the one blamed.
    fn retire(&mut self) {
        let Some(mut ext) = self.ext.take() else {
            return;
        };
        ext.kill();
        let seen = std::mem::take(&mut ext.unexpected);
        self.unexpected.count += seen.count;
        if self.unexpected.first.is_none() {
            self.unexpected.first = seen.first;
        }
        if self.stderr.is_none() && self.blamed == Some(ext.number()) {
            self.stderr = Some(ext.stderr_tail());
        }
    }

    /// The session process, started again (and initialized) when the last one
    /// exited.
    fn session(&mut self) -> Result<&mut Process, String> {
        let alive = self.ext.as_mut().is_some_and(Process::is_alive);
        if !alive {
            self.retire();
            if self.restarts >= MAX_RESTARTS {
                return Err(format!(
                    "the extension exited {MAX_RESTARTS} times; it is not started again"
                ));
            }
            self.restarts += 1;
            let mut ext = self.spawn()?;
            initialize(&mut ext, self.settings)
                .map_err(|why| format!("started again, initialize failed: {why}"))?;
            self.restarted = Some(format!("process {}, started again", ext.number()));
            self.ext = Some(ext);
        }
        self.ext.as_mut().ok_or_else(|| String::from("no process"))
    }

    /// `initialize` answered in time with a result the Core reads.
    fn initialize(&mut self) -> Option<Declared> {
        let started = Instant::now();
        let ext = self.ext.as_mut()?;
        let read =
            initialize(ext, self.settings).and_then(|result| tools::read_initialize(&result));
        let (row, declared) = match read {
            Ok(declared) => {
                let detail = format!(
                    "answered in {} ms: {} {}, {} tool(s)",
                    started.elapsed().as_millis(),
                    declared.name,
                    declared.version,
                    declared.tools.len() + declared.unreadable.len()
                );
                (Row::new("initialize", Status::Pass, detail), Some(declared))
            }
            Err(why) => (Row::new("initialize", Status::Fail, why), None),
        };
        self.push(row);
        declared
    }

    /// `tools/list` answered with the id sent and a tool list. FAIL when the Core's
    /// request would go unanswered or its reply unread; WARN when it is an error or
    /// names other tools than `initialize`.
    fn list_tools(&mut self) {
        const CHECK: &str = "tools/list";
        let wait = self.settings.probe_timeout;
        let known: Vec<String> = self.tools.iter().map(|t| t.name.clone()).collect();
        let ext = match self.session() {
            Ok(ext) => ext,
            Err(why) => return self.skip(CHECK, why),
        };
        let id = ext.new_id();
        let reply = ext
            .send_request(id.clone(), method::TOOLS_LIST, None)
            .map(|()| ext.next_reply(wait));
        let (status, detail) = match reply {
            Err(e) => (Status::Fail, e),
            Ok(Reply::Response(response)) if response.id == id => {
                self.probe = Some(Probe::ListTools);
                match response.outcome {
                    Err(error) => (
                        Status::Warn,
                        format!(
                            "answered error {}: the Core's tools/list request fails",
                            describe_error(&error)
                        ),
                    ),
                    Ok(result) => list_outcome(&result, &known, self.unreadable),
                }
            }
            Ok(Reply::Response(response)) => (
                Status::Fail,
                format!(
                    "sent id {}, the reply has id {}",
                    id_text(&id),
                    id_text(&response.id)
                ),
            ),
            Ok(other) => (Status::Fail, not_answered(&other, ext, wait)),
        };
        self.push(Row::new(CHECK, status, detail));
    }

    /// A real call of each tool (the first [`MAX_CALLED_TOOLS`]), or of the inputs
    /// given with `--call`.
    fn calls(&mut self) {
        const CHECK: &str = "tool calls";
        if !self.settings.call_tools {
            return self.skip(CHECK, "--no-calls");
        }
        let planned = self.planned_calls();
        if planned.is_empty() {
            return self.skip(CHECK, "the extension offers no tools");
        }
        let wait = self.settings.probe_timeout;
        let mut hung: Option<String> = None;
        for (tool, input) in planned {
            let check = format!("call {tool}");
            let input = match input {
                Ok(input) => input,
                Err(why) => {
                    self.skip(&check, why);
                    continue;
                }
            };
            if let Some(earlier) = &hung {
                let why = format!("the call of {earlier} got no reply");
                self.skip(&check, why);
                continue;
            }
            let ext = match self.session() {
                Ok(ext) => ext,
                Err(why) => {
                    self.skip(&check, why);
                    continue;
                }
            };
            let (row, end) = tools::call_row(ext, &tool, &input, wait);
            match end {
                CallEnd::Answered if self.probe.is_none() => {
                    self.probe = Some(Probe::Execute(tool.clone(), input));
                }
                CallEnd::TimedOut => hung = Some(tool.clone()),
                _ => {}
            }
            self.push(row);
            if end == CallEnd::TimedOut {
                // It may still be busy with the call: the next rows get a fresh one.
                self.retire();
            }
        }
        let total = self.tools.len();
        if self.settings.given_calls.is_empty() && total > MAX_CALLED_TOOLS {
            let detail = format!(
                "{} of {total} tools are past the first {MAX_CALLED_TOOLS}, and not called: use --call for them",
                total - MAX_CALLED_TOOLS
            );
            self.push(Row::new(CHECK, Status::Skip, detail));
        }
    }

    /// The calls to make: each `--call`, or else each tool (the first
    /// [`MAX_CALLED_TOOLS`]) with an input built from its schema. `Err` says why a
    /// call cannot be made.
    fn planned_calls(&self) -> Vec<(String, Result<Value, String>)> {
        let checked = |tool: &Tool, input: Value, given: bool| -> Result<Value, String> {
            match tool.check_input(&input) {
                Ok(()) => Ok(input),
                Err(e) if given => Err(format!(
                    "the input given fails the tool's inputSchema ({e}); the Core would refuse it"
                )),
                Err(e) => Err(format!(
                    "no input could be built from the inputSchema ({e}); give one with --call {} JSON",
                    tool.name
                )),
            }
        };
        if !self.settings.given_calls.is_empty() {
            return self
                .settings
                .given_calls
                .iter()
                .map(|(name, input)| {
                    let input = match self.tools.iter().find(|t| &t.name == name) {
                        Some(tool) => checked(tool, input.clone(), true),
                        None => Err(format!("the extension offers no tool {name:?}")),
                    };
                    (name.clone(), input)
                })
                .collect();
        }
        let mut planned: Vec<(String, Result<Value, String>)> = Vec::new();
        for tool in &self.tools {
            if planned.len() == MAX_CALLED_TOOLS {
                break;
            }
            if planned.iter().any(|(name, _)| *name == tool.name) {
                continue;
            }
            let input = super::inputs::input_for(tool.input_schema.as_ref());
            planned.push((tool.name.clone(), checked(tool, input, false)));
        }
        planned
    }

    /// The ids the Core sends are echoed exactly (FAIL); so are ids it never sends
    /// (WARN).
    fn ids(&mut self) {
        let integer = |text| Number::from_text(text).map(Id::Number);
        let ids = [
            (
                "largest Core id echoed",
                integer(LARGEST_CORE_ID),
                Status::Fail,
            ),
            ("string id echoed", Some(Id::from(STRING_ID)), Status::Warn),
            (
                "id beyond 2^53 echoed",
                integer(BEYOND_DOUBLE_ID),
                Status::Warn,
            ),
            ("id beyond i64 echoed", integer(BEYOND_I64_ID), Status::Warn),
        ];
        let wait = self.settings.probe_timeout;
        for (check, id, failure) in ids {
            // The constants are integer text: always `Some`.
            let Some(id) = id else { continue };
            let Some(probe) = self.probe.clone() else {
                self.skip(check, no_probe());
                continue;
            };
            let ext = match self.session() {
                Ok(ext) => ext,
                Err(why) => {
                    self.skip(check, why);
                    continue;
                }
            };
            let reply = probe.send(ext, id.clone()).map(|()| ext.next_reply(wait));
            let (status, detail) = match reply {
                Err(e) => (failure, e),
                Ok(Reply::Response(response)) if response.id == id => (
                    Status::Pass,
                    format!("echoed {} ({})", id_text(&id), probe.name()),
                ),
                Ok(Reply::Response(response)) => (
                    failure,
                    format!("sent {}, got {}", id_text(&id), id_text(&response.id)),
                ),
                Ok(other) => (failure, not_answered(&other, ext, wait)),
            };
            let detail = match failure {
                Status::Warn if status != Status::Pass => {
                    format!("{detail} (the Core sends only integer ids below 2^53)")
                }
                _ => detail,
            };
            self.push(Row::new(check, status, detail));
        }
    }

    /// An unknown notification gets no reply: the only reply is to the probe after
    /// it. WARN: the Core reports such a reply and goes on.
    fn notification(&mut self) {
        const CHECK: &str = "notification not answered";
        let wait = self.settings.probe_timeout;
        let Some(probe) = self.probe.clone() else {
            return self.skip(CHECK, no_probe());
        };
        let ext = match self.session() {
            Ok(ext) => ext,
            Err(why) => return self.skip(CHECK, why),
        };
        let params = Value::Object(Object::new());
        let id = ext.new_id();
        let sent = ext
            .send_notification(UNKNOWN_NOTIFICATION, Some(&params))
            .and_then(|()| probe.send(ext, id.clone()));
        let (status, detail) = match sent.map(|()| ext.next_reply(wait)) {
            Err(e) => (Status::Warn, e),
            Ok(Reply::Response(response)) if response.id == id => (
                Status::Pass,
                String::from("only the request after it was answered"),
            ),
            Ok(Reply::Response(response)) => {
                let mut line = Vec::new();
                rpc::write_message(&response.into(), &mut line);
                // Read on to the request's own reply, so later checks stay in step.
                while let Reply::Response(r) = ext.next_reply(wait) {
                    if r.id == id {
                        break;
                    }
                }
                (
                    Status::Warn,
                    format!("answered the notification: {}", shown(&line)),
                )
            }
            Ok(other) => (Status::Warn, not_answered(&other, ext, wait)),
        };
        self.push(Row::new(CHECK, status, detail));
    }

    /// The requests a Core never sends, each answered with the JSON-RPC error for it.
    /// All WARN. Without a request the extension answers, they are not run: what
    /// they would show is already the tools/list row's failure.
    fn error_replies(&mut self) {
        let wait = self.settings.probe_timeout;
        let rows = [
            "unknown method",
            "malformed line",
            "answers after a malformed line",
            "invalid request (method not a string)",
            "invalid request (jsonrpc not \"2.0\")",
            "unknown tool",
            "missing required input",
        ];
        let Some(probe) = self.probe.clone() else {
            for check in rows {
                self.skip(check, no_probe());
            }
            return;
        };

        self.expect_error("unknown method", ErrorCode::METHOD_NOT_FOUND, |ext, id| {
            ext.send_request(id, UNKNOWN_METHOD, None)
        });

        let exited = self.expect_error("malformed line", ErrorCode::PARSE_ERROR, |ext, _| {
            ext.send_line(br#"{"jsonrpc":"2.0","id":3,"method":"tools/list""#, None)
        });
        if exited {
            self.skip(
                "answers after a malformed line",
                "the extension exited on the malformed line",
            );
        } else {
            const CHECK: &str = "answers after a malformed line";
            match self.session() {
                Err(why) => self.skip(CHECK, why),
                Ok(ext) => {
                    let id = ext.new_id();
                    let reply = probe.send(ext, id.clone()).map(|()| ext.next_reply(wait));
                    let (status, detail) = match reply {
                        Ok(Reply::Response(response)) if response.id == id => {
                            (Status::Pass, format!("answered {}", probe.name()))
                        }
                        Ok(other) => (Status::Warn, not_answered(&other, ext, wait)),
                        Err(e) => (Status::Warn, e),
                    };
                    self.push(Row::new(CHECK, status, detail));
                }
            }
        }

        self.expect_error(
            "invalid request (method not a string)",
            ErrorCode::INVALID_REQUEST,
            |ext, id| {
                let line = format!(r#"{{"jsonrpc":"2.0","id":{},"method":1}}"#, id_text(&id));
                ext.send_line(line.as_bytes(), Some(id))
            },
        );
        self.expect_error(
            "invalid request (jsonrpc not \"2.0\")",
            ErrorCode::INVALID_REQUEST,
            |ext, id| {
                let line = format!(
                    r#"{{"jsonrpc":"1.0","id":{},"method":"tools/list"}}"#,
                    id_text(&id)
                );
                ext.send_line(line.as_bytes(), Some(id))
            },
        );

        let mut unknown_tool = String::from(UNKNOWN_TOOL);
        while self.tools.iter().any(|t| t.name == unknown_tool) {
            unknown_tool.push('_');
        }
        self.expect_error("unknown tool", ErrorCode::INVALID_PARAMS, |ext, id| {
            let params = ExecuteParams::new(unknown_tool.as_str(), Value::Object(Object::new()));
            ext.send_request(id, method::TOOLS_EXECUTE, Some(&Value::from(params)))
        });

        let required = self.tools.iter().find_map(|t| {
            let missing = first_required(t)?;
            Some((t.name.clone(), String::from(missing)))
        });
        match required {
            _ if !self.settings.call_tools => self.skip(
                "missing required input",
                "--no-calls (an extension that does not check its input would run the tool)",
            ),
            None => self.skip(
                "missing required input",
                "no tool declares a required input property",
            ),
            Some((tool, missing)) => {
                let check = "missing required input";
                let note = format!("{tool} without {missing:?}: ");
                self.expect_error_noted(check, ErrorCode::INVALID_PARAMS, &note, |ext, id| {
                    let params = ExecuteParams::new(tool.as_str(), Value::Object(Object::new()));
                    ext.send_request(id, method::TOOLS_EXECUTE, Some(&Value::from(params)))
                });
            }
        }
    }

    /// Sends what `send` writes (with a new id) and reports whether the reply is an
    /// error with `code` and that id (or null). WARN otherwise. `true` when the
    /// extension exited instead of answering.
    fn expect_error(
        &mut self,
        check: &str,
        code: ErrorCode,
        send: impl FnOnce(&mut Process, Id) -> Result<(), String>,
    ) -> bool {
        self.expect_error_noted(check, code, "", send)
    }

    fn expect_error_noted(
        &mut self,
        check: &str,
        code: ErrorCode,
        note: &str,
        send: impl FnOnce(&mut Process, Id) -> Result<(), String>,
    ) -> bool {
        let wait = self.settings.probe_timeout;
        let ext = match self.session() {
            Ok(ext) => ext,
            Err(why) => {
                self.skip(check, why);
                return false;
            }
        };
        let id = ext.new_id();
        let outcome = send(ext, id.clone()).map(|()| ext.next_reply(wait));
        let exited = matches!(outcome, Ok(Reply::Closed)) || !ext.is_alive();
        let (status, detail) = match outcome {
            Err(e) => (Status::Warn, e),
            Ok(reply) => error_outcome(reply, code, &id, ext, wait),
        };
        self.push(Row::new(check, status, format!("{note}{detail}")));
        exited
    }

    /// Stdout held only JSON-RPC messages, and every reply answered a request. WARN:
    /// the Core reports other lines and goes on.
    fn output(&mut self) {
        let mut seen = Unexpected::default();
        if let Some(ext) = self.ext.as_mut() {
            seen = std::mem::take(&mut ext.unexpected);
        }
        self.unexpected.count += seen.count;
        if self.unexpected.first.is_none() {
            self.unexpected.first = seen.first;
        }
        let row = match &self.unexpected.first {
            None => Row::new(
                "only JSON-RPC on stdout",
                Status::Pass,
                "nothing else was seen",
            ),
            Some(first) => Row::new(
                "only JSON-RPC on stdout",
                Status::Warn,
                format!(
                    "{} other line(s), the first: {first}",
                    self.unexpected.count
                ),
            ),
        };
        self.push(row);
    }

    /// After `shutdown` and end of stdin (the Core closes stdin right after
    /// `shutdown`), the process exits with code 0 within the grace. FAIL otherwise;
    /// WARN when it waited for end of stdin.
    fn shutdown(&mut self) {
        const CHECK: &str = "shutdown exits with 0";
        let settings = self.settings;
        let ext = match self.session() {
            Ok(ext) => ext,
            Err(why) => return self.skip(CHECK, why),
        };
        let started = Instant::now();
        let (status, detail) = match ext.send_notification(method::SHUTDOWN, None) {
            Err(e) => (Status::Fail, e),
            Ok(()) => match ext.wait_exit(settings.probe_timeout.min(settings.grace)) {
                Exit::Exited(code) => exit_outcome(code, started, Status::Fail, ""),
                Exit::Running => {
                    ext.close_stdin();
                    match ext.wait_exit(settings.grace) {
                        Exit::Exited(Some(0)) => (
                            Status::Warn,
                            format!(
                                "ignored shutdown; exited at end of stdin, {} ms after shutdown (the Core closes stdin right after it)",
                                started.elapsed().as_millis()
                            ),
                        ),
                        Exit::Exited(code) => {
                            exit_outcome(code, started, Status::Fail, "at end of stdin ")
                        }
                        Exit::Running => {
                            ext.kill();
                            (
                                Status::Fail,
                                format!(
                                    "still running {} after shutdown and end of stdin; killed, as the Core kills it",
                                    format_duration(started.elapsed())
                                ),
                            )
                        }
                    }
                }
            },
        };
        self.push(Row::new(CHECK, status, detail));
    }

    /// A fresh process, initialized unless `initialized` is false, or why there is
    /// none.
    fn fresh(&mut self, initialized: bool) -> Result<Process, String> {
        let mut ext = self.spawn()?;
        if initialized {
            initialize(&mut ext, self.settings)
                .map_err(|why| format!("initialize failed: {why}"))?;
        }
        Ok(ext)
    }

    /// On a fresh process: a request before `initialize` gets -32002. WARN: the Core
    /// always sends `initialize` first.
    fn before_initialize(&mut self) {
        const CHECK: &str = "request before initialize";
        let wait = self.settings.probe_timeout;
        let mut ext = match self.fresh(false) {
            Ok(ext) => ext,
            Err(why) => return self.skip(CHECK, why),
        };
        let id = ext.new_id();
        // `tools/list`: a request that runs nothing, should the extension not wait
        // for `initialize`.
        let outcome = ext
            .send_request(id.clone(), method::TOOLS_LIST, None)
            .map(|()| ext.next_reply(wait));
        let not_initialized = ErrorCode::from(message::NOT_INITIALIZED);
        let (status, detail) = match outcome {
            Err(e) => (Status::Warn, e),
            Ok(reply) => error_outcome(reply, not_initialized, &id, &mut ext, wait),
        };
        self.push(Row::new(CHECK, status, detail));
    }

    /// On a fresh process, initialized: end of stdin alone makes it exit with code 0.
    /// WARN: the Core closes stdin after `shutdown`, not instead of it.
    fn end_of_stdin(&mut self) {
        const CHECK: &str = "end of stdin exits with 0";
        let grace = self.settings.grace;
        let mut ext = match self.fresh(true) {
            Ok(ext) => ext,
            Err(why) => return self.skip(CHECK, why),
        };
        let started = Instant::now();
        ext.close_stdin();
        let (status, detail) = match ext.wait_exit(grace) {
            Exit::Exited(code) => exit_outcome(code, started, Status::Warn, ""),
            Exit::Running => {
                ext.kill();
                (
                    Status::Warn,
                    format!(
                        "still running after the grace ({}); killed",
                        format_duration(grace)
                    ),
                )
            }
        };
        self.push(Row::new(CHECK, status, detail));
    }

    /// On a fresh process: a batch of two requests is answered with an array of two
    /// replies. WARN: the Core never sends a batch.
    fn batch(&mut self) {
        const CHECK: &str = "batch request";
        let wait = self.settings.probe_timeout;
        let mut ext = match self.fresh(true) {
            Ok(ext) => ext,
            Err(why) => return self.skip(CHECK, why),
        };
        let ids = [ext.new_id(), ext.new_id()];
        let batch: Vec<Message> = ids
            .iter()
            .map(|id| {
                Message::Request(rpc::Request {
                    id: id.clone(),
                    method: String::from(method::TOOLS_LIST),
                    params: None,
                })
            })
            .collect();
        let mut line = Vec::new();
        rpc::write_batch(&batch, &mut line);
        let (status, detail) = match ext.send_line(&line, ids.last().cloned()) {
            Err(e) => (Status::Warn, e),
            Ok(()) => {
                let reply = ext.next_reply(wait);
                batch_outcome(reply, &ids, &mut ext, wait)
            }
        };
        self.push(Row::new(CHECK, status, detail));
        let _ = ext.send_notification(method::SHUTDOWN, None);
        ext.close_stdin();
        let _ = ext.wait_exit(self.settings.grace.min(wait));
    }
}

/// The rows of the session, in order, for when `initialize` fails (the calls are
/// one row then).
const SESSION_ROWS: &[&str] = &[
    "tool descriptors",
    "tool names",
    "tool descriptions",
    "input schemas",
    "tools/list",
    "tool calls",
    "largest Core id echoed",
    "string id echoed",
    "id beyond 2^53 echoed",
    "id beyond i64 echoed",
    "notification not answered",
    "unknown method",
    "malformed line",
    "answers after a malformed line",
    "invalid request (method not a string)",
    "invalid request (jsonrpc not \"2.0\")",
    "unknown tool",
    "missing required input",
    "only JSON-RPC on stdout",
    "shutdown exits with 0",
];

/// The rows run on fresh processes.
const FRESH_ROWS: &[&str] = &[
    "request before initialize",
    "end of stdin exits with 0",
    "batch request",
];

/// Why the probes cannot run.
fn no_probe() -> &'static str {
    "no request besides initialize was answered with its id"
}

/// Sends `initialize` with a new id and waits (`--timeout`) for its result.
fn initialize(ext: &mut Process, settings: &Settings) -> Result<Value, String> {
    let id = ext.new_id();
    let params = Value::from(InitializeParams::new(settings.cwd.to_string_lossy()));
    ext.send_request(id.clone(), method::INITIALIZE, Some(&params))?;
    match ext.next_reply(settings.timeout) {
        Reply::Response(response) if response.id == id => match response.outcome {
            Ok(result) => Ok(result),
            Err(error) => Err(format!("answered with error {}", describe_error(&error))),
        },
        Reply::Response(response) => Err(format!(
            "sent id {}, the reply has id {}",
            id_text(&id),
            id_text(&response.id)
        )),
        other => Err(not_answered(&other, ext, settings.timeout)),
    }
}

/// How a `tools/list` result compares with the tools of `initialize` (`known`, and
/// `unreadable` descriptors the Core could not read, already reported).
fn list_outcome(result: &Value, known: &[String], unreadable: usize) -> (Status, String) {
    let (listed, bad) = match tools::read_tool_list(result) {
        Err(why) => return (Status::Fail, why),
        Ok(read) => read,
    };
    let names: Vec<String> = listed.iter().map(|t| t.name.clone()).collect();
    if bad.len() > unreadable {
        let detail = format!("{}; the Core leaves these tools out", bad.join("; "));
        (Status::Fail, detail)
    } else if names != known || bad.len() != unreadable {
        let detail = format!(
            "lists [{}], initialize declared [{}]",
            names.join(", "),
            known.join(", ")
        );
        (Status::Warn, detail)
    } else {
        (
            Status::Pass,
            format!("{} tool(s), as declared", names.len()),
        )
    }
}

/// The first name in a tool's `inputSchema.required`, if any.
fn first_required(tool: &Tool) -> Option<&str> {
    let required = tool.input_schema.as_ref()?.get("required")?.as_array()?;
    let first = required.iter().find_map(Value::as_str)?;
    // Only when an empty input really lacks it.
    let empty = Value::Object(Object::new());
    schema::validate(tool.input_schema.as_ref()?, &empty)
        .is_err()
        .then_some(first)
}

/// Whether a reply is an error with `code` and the id `id` (or null); WARN when not.
fn error_outcome(
    reply: Reply,
    code: ErrorCode,
    id: &Id,
    ext: &mut Process,
    wait: Duration,
) -> (Status, String) {
    let response = match reply {
        Reply::Response(response) => response,
        other => return (Status::Warn, not_answered(&other, ext, wait)),
    };
    let wanted = code.code();
    match &response.outcome {
        Ok(result) => (
            Status::Warn,
            format!(
                "answered with a result ({}), expected error {wanted}",
                shown(&dhara_protocol::json::to_vec(result))
            ),
        ),
        Err(error) if error.code != code => (
            Status::Warn,
            format!(
                "answered with error {}, expected {wanted}",
                describe_error(error)
            ),
        ),
        Err(_) if response.id != *id && !response.id.is_null() => (
            Status::Warn,
            format!(
                "error {wanted} with id {}, expected id {}",
                id_text(&response.id),
                id_text(id)
            ),
        ),
        Err(error) => (
            Status::Pass,
            format!(
                "{} with id {}",
                describe_error(error),
                id_text(&response.id)
            ),
        ),
    }
}

/// How the process ended: PASS for code 0, else `failure`.
fn exit_outcome(
    code: Option<i32>,
    started: Instant,
    failure: Status,
    when: &str,
) -> (Status, String) {
    match code {
        Some(0) => (
            Status::Pass,
            format!("exited {when}in {} ms", started.elapsed().as_millis()),
        ),
        Some(code) => (failure, format!("exited {when}with code {code}")),
        None => (failure, format!("was killed by a signal {when}")),
    }
}

/// Whether a reply answers a batch of requests with `ids`.
fn batch_outcome(reply: Reply, ids: &[Id], ext: &mut Process, wait: Duration) -> (Status, String) {
    let Reply::Batch(entries) = reply else {
        let why = not_answered(&reply, ext, wait);
        return (Status::Warn, format!("not answered with an array: {why}"));
    };
    let answered: Vec<&Id> = entries
        .iter()
        .filter_map(|entry| match entry {
            Ok(Message::Response(response)) => Some(&response.id),
            _ => None,
        })
        .collect();
    let complete = answered.len() == ids.len() && ids.iter().all(|id| answered.contains(&id));
    if complete {
        (
            Status::Pass,
            format!("{} replies in one array", answered.len()),
        )
    } else {
        let got: Vec<String> = answered.iter().map(|id| id_text(id)).collect();
        let want: Vec<String> = ids.iter().map(id_text).collect();
        (
            Status::Warn,
            format!(
                "array answers ids [{}], expected [{}]",
                got.join(", "),
                want.join(", ")
            ),
        )
    }
}

/// Why a wait did not give the reply waited for.
pub(super) fn not_answered(reply: &Reply, ext: &mut Process, wait: Duration) -> String {
    match reply {
        Reply::Response(response) => format!("the reply has id {}", id_text(&response.id)),
        Reply::Batch(_) => String::from("answered with an array"),
        Reply::Invalid(why) => format!("not a valid reply: {why}"),
        Reply::TimedOut => match ext.pending_bytes() {
            0 => format!("no reply within {}", format_duration(wait)),
            n => format!(
                "no reply within {}; {n} byte(s) came without a newline (missing newline or flush?)",
                format_duration(wait)
            ),
        },
        Reply::Closed => match ext.ended() {
            Some(how) => format!("the extension {how}"),
            None => String::from("stdout closed"),
        },
    }
}

/// An error object as `-32601 "Method not found"`.
pub(super) fn describe_error(error: &rpc::ErrorObject) -> String {
    format!("{} {:?}", error.code.code(), error.message)
}
