//! The application on top of the driver: call lines in, result lines out, exactly as
//! `dhara session` reads and writes them. Nothing here knows about tokio's I/O; it
//! issues commands to the Core and turns its events into lines.

use std::io::{BufRead, Read, Write};
use std::time::Duration;

use tokio::sync::mpsc;

use dhara_protocol::host::{CallError, CallId, Core, Event, Excerpt, Reply, State, UsageError};
use dhara_protocol::json::{self, Object, Value};
use dhara_protocol::message::{InitializeParams, ToolResult};

use crate::Driven;

/// The exit status: the worst outcome of any call. Later variants are worse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    Success = 0,
    /// A result with `isError: true`.
    ToolError = 1,
    Usage = 2,
    /// A JSON-RPC error, or the extension broke the protocol.
    Protocol = 3,
    Timeout = 4,
    /// The extension exited early or could not be started.
    Exited = 5,
}

/// The command line's options.
pub struct Options {
    pub timeout: Duration,
    pub grace: Duration,
}

/// `[--timeout DUR] [--grace DUR] -- COMMAND...` into the options and the command.
pub fn parse_args(args: &[String]) -> Result<(Options, Vec<String>), String> {
    let mut options = Options {
        timeout: Duration::from_secs(30),
        grace: Duration::from_secs(5),
    };
    let mut words = args.iter();
    while let Some(word) = words.next() {
        let (name, inline) = match word.split_once('=') {
            Some((name, value)) => (name, Some(value.to_string())),
            None => (word.as_str(), None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| words.next().cloned())
                .ok_or(format!("{name} needs a value"))
        };
        match name {
            "--" => return Ok((options, words.cloned().collect())),
            "--timeout" => options.timeout = parse_duration(&value()?)?,
            "--grace" => options.grace = parse_duration(&value()?)?,
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Err(String::from("missing `--` and the extension command"))
}

/// `250ms`, `2s`, `1m`, or a bare number of seconds, as `dhara` reads them.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let (number, unit) = if let Some(n) = text.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = text.strip_suffix('m') {
        (n, 60.0)
    } else {
        (text, 1.0)
    };
    let bad = || format!("`{text}` is not a duration: write 250ms, 2s, 1m, or a number of seconds");
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return Err(bad());
    }
    let value: f64 = number.parse().map_err(|_| bad())?;
    Duration::try_from_secs_f64(value * unit).map_err(|_| bad())
}

/// `250ms`, `2s`, `1.5s`, `2m`: as `dhara` writes a duration in its messages.
fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms.is_multiple_of(60_000) {
        format!("{}m", ms / 60_000)
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

/// Why a call (or the whole session) failed: the status, one line for stderr, and
/// the `error` member of the output line.
pub struct Failure {
    status: Status,
    message: String,
    json: Value,
}

impl Failure {
    fn new(status: Status, kind: &str, message: String) -> Failure {
        let json = json::json!({"kind": kind, "message": (message.as_str())});
        Failure {
            status,
            message,
            json,
        }
    }

    pub fn usage(message: String) -> Failure {
        Failure::new(Status::Usage, "usage", message)
    }

    pub fn spawn(program: &str, e: &std::io::Error) -> Failure {
        let message = match e.kind() {
            std::io::ErrorKind::NotFound => {
                format!("command not found: `{program}` (is it installed and on PATH?)")
            }
            std::io::ErrorKind::PermissionDenied => {
                format!("cannot run `{program}`: permission denied")
            }
            _ => format!("cannot start `{program}`: {e}"),
        };
        Failure::new(Status::Exited, "spawn", message)
    }

    /// The failure of a call, by how it ended.
    fn of_call(error: &CallError, what: &str, timeout: Duration) -> Failure {
        match error {
            CallError::Rpc(object) => {
                let mut message = format!(
                    "{what} failed: error {}: {}",
                    object.code.code(),
                    object.message
                );
                let mut json = Object::from_iter([
                    ("code", Value::from(object.code.code())),
                    ("message", Value::from(object.message.as_str())),
                ]);
                if let Some(data) = &object.data {
                    message.push_str(&format!(" (data: {data})"));
                    json.push("data", data.clone());
                }
                let json = Value::Object(json);
                Failure {
                    status: Status::Protocol,
                    message,
                    json,
                }
            }
            CallError::Timeout { unfinished_line } => Failure::new(
                Status::Timeout,
                "timeout",
                format!(
                    "{what}: no reply within {}; the extension was sent shutdown{}",
                    format_duration(timeout),
                    unfinished(unfinished_line.as_ref(), "were pending")
                ),
            ),
            CallError::ExtensionExited { unfinished_line } => Failure::new(
                Status::Exited,
                "exited",
                format!(
                    "{what}: the extension exited before replying{}",
                    unfinished(unfinished_line.as_ref(), "came before its stdout ended")
                ),
            ),
            CallError::InvalidResult(why) => Failure::new(
                Status::Protocol,
                "invalid_result",
                format!("{what}: the reply is not a valid result: {why}"),
            ),
            other => Failure::new(Status::Protocol, "protocol", format!("{what}: {other}")),
        }
    }

    /// A failure of the whole session (spawn, initialize): the message on stderr and
    /// `{"error": ...}` on stdout.
    pub fn report_alone(self) -> Status {
        eprintln!("tokio-host: {}", self.message);
        print_json(&json::json!({"error": (self.json)}));
        self.status
    }
}

/// What `dhara` adds to a call's failure when the extension left bytes without a
/// newline: the likeliest first mistake of an extension author.
fn unfinished(line: Option<&Excerpt>, how: &str) -> String {
    match line {
        Some(line) => format!(
            ". {} bytes without a final newline {how}: `{line}`. Does the extension end each message with a newline and flush its stdout?",
            line.len
        ),
        None => String::new(),
    }
}

/// One line of our stdin, numbered from 1, or its end.
pub enum Line {
    Text(usize, String),
    TooLong(usize),
    End,
}

/// The longest call line: the same bound as a protocol line.
const MAX_LINE: usize = dhara_protocol::frame::DEFAULT_MAX_LINE_BYTES;

/// Reads our stdin on a plain thread (reading a terminal or a pipe blocks, and tokio
/// would use a thread for it anyway), handing each line to the loop.
pub fn read_stdin_lines() -> mpsc::Receiver<Line> {
    let (tx, rx) = mpsc::channel(16);
    std::thread::spawn(move || {
        let mut input = std::io::stdin().lock();
        for number in 1.. {
            let mut line = Vec::new();
            match (&mut input)
                .take(MAX_LINE as u64)
                .read_until(b'\n', &mut line)
            {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let message = if line.ends_with(b"\n") || line.len() < MAX_LINE {
                Line::Text(
                    number,
                    String::from_utf8_lossy(&line).trim_end().to_string(),
                )
            } else {
                // Skip the rest of an overlong line without keeping it.
                let mut rest = Vec::new();
                while matches!((&mut input).take(64 * 1024).read_until(b'\n', &mut rest), Ok(n) if n > 0 && !rest.ends_with(b"\n"))
                {
                    rest.clear();
                }
                Line::TooLong(number)
            };
            if tx.blocking_send(message).is_err() {
                return;
            }
        }
        let _ = tx.blocking_send(Line::End);
    });
    rx
}

/// Where the session is.
#[derive(PartialEq)]
enum Phase {
    /// `initialize` was sent.
    Initializing(Option<CallId>),
    /// Call lines are read and run.
    Running,
    /// `initialize` failed; the session is shutting down.
    Failed,
}

/// A call started from a line and not printed yet.
struct Pending {
    call: CallId,
    line: usize,
    tool: String,
}

/// The session: what `dhara session` does between the Core and the person.
pub struct Session {
    options: Options,
    lines: mpsc::Receiver<Line>,
    phase: Phase,
    pending: Vec<Pending>,
    input_ended: bool,
    worst: Status,
}

impl Session {
    pub fn new(options: Options, lines: mpsc::Receiver<Line>) -> Session {
        Session {
            options,
            lines,
            phase: Phase::Initializing(None),
            pending: Vec::new(),
            input_ended: false,
            worst: Status::Success,
        }
    }

    /// Sends `initialize` with the current directory.
    pub fn start(&mut self, core: &mut Core, now: dhara_protocol::time::Instant) {
        let cwd = std::env::current_dir().unwrap_or_default();
        let params = InitializeParams::new(cwd.display().to_string());
        self.phase = Phase::Initializing(core.initialize(now, params).ok());
    }

    /// Whether the loop should read another call line now: not while the Core has
    /// its most calls in flight (the line waits, and so does our stdin, unread).
    pub fn wants_lines(&self, core: &Core) -> bool {
        self.phase == Phase::Running
            && !self.input_ended
            && core.state() != State::Closed
            && self.pending.len() < core.config().max_in_flight
    }

    /// The next line of our stdin (the end, once the reader has stopped).
    pub async fn next_line(&mut self) -> Line {
        self.lines.recv().await.unwrap_or(Line::End)
    }

    /// Starts the call a line asks for, or prints why it cannot be started.
    pub fn handle_line(&mut self, core: &mut Core, now: dhara_protocol::time::Instant, line: Line) {
        match line {
            Line::Text(number, text) if !text.trim().is_empty() => {
                match start_call(core, now, number, &text) {
                    Ok(pending) => self.pending.push(pending),
                    Err(failure) => self.print(number, None, Err(failure)),
                }
            }
            Line::Text(..) => {}
            Line::TooLong(number) => {
                let message = format!("line {number} is longer than {MAX_LINE} bytes");
                self.print(number, None, Err(Failure::usage(message)));
            }
            Line::End => self.input_ended = true,
        }
        self.shut_down_when_done(core, now);
    }

    /// Acts on one of the Core's events (all but `Closed`, which ends the loop).
    pub fn handle(&mut self, core: &mut Core, now: dhara_protocol::time::Instant, event: Event) {
        match event {
            Event::CallEnded { call, result } if self.phase == Phase::Initializing(Some(call)) => {
                match result {
                    Ok(_) => self.phase = Phase::Running,
                    Err(error) => {
                        let failure = Failure::of_call(&error, "initialize", self.options.timeout);
                        self.worst = failure.report_alone();
                        self.phase = Phase::Failed;
                        let _ = core.shutdown(now);
                    }
                }
            }
            Event::CallEnded { call, result } => {
                let Some(index) = self.pending.iter().position(|p| p.call == call) else {
                    return;
                };
                let done = self.pending.swap_remove(index);
                let outcome = match result {
                    Ok(Reply::Executed(result)) => Ok(result),
                    Ok(_) => Err(Failure::new(
                        Status::Protocol,
                        "protocol",
                        "unexpected reply".into(),
                    )),
                    Err(error) => Err(Failure::of_call(&error, &done.tool, self.options.timeout)),
                };
                self.print(done.line, Some(&done.tool), outcome);
                self.shut_down_when_done(core, now);
            }
            Event::Progress { call, progress } => {
                match call.and_then(|c| self.pending.iter().find(|p| p.call == c)) {
                    Some(p) => eprintln!("progress (line {}): {}", p.line, progress.message),
                    None => eprintln!("progress: {}", progress.message),
                }
            }
            Event::Protocol(problem) => eprintln!("tokio-host: protocol: {problem}"),
            Event::ToolsChanged { tools } => {
                eprintln!("tokio-host: the extension now offers {} tools", tools.len())
            }
            _ => {}
        }
    }

    /// Once the input has ended and every call has been printed: `shutdown`.
    fn shut_down_when_done(&mut self, core: &mut Core, now: dhara_protocol::time::Instant) {
        if self.input_ended && self.pending.is_empty() && core.state() == State::Ready {
            let _ = core.shutdown(now);
        }
    }

    /// After the loop: fails the call lines still to come (the extension is gone),
    /// says how the extension ended, and returns the exit status.
    pub async fn finish(&mut self, core: &mut Core, driven: Driven) -> Status {
        while self.phase == Phase::Running && !self.input_ended {
            let line = self.next_line().await;
            self.handle_line(core, driven.at, line);
        }
        match driven.code {
            Some(0) => {}
            Some(code) => eprintln!("tokio-host: the extension exited with code {code}"),
            None if driven.killed => eprintln!(
                "tokio-host: the extension did not exit within the grace period ({}) and was killed",
                format_duration(self.options.grace)
            ),
            None => eprintln!("tokio-host: the extension was ended by a signal"),
        }
        self.worst
    }

    /// `{"line": N, "tool": "...", "result": {...}}` or `{"line": N, "error": {...}}`.
    fn print(&mut self, line: usize, tool: Option<&str>, outcome: Result<ToolResult, Failure>) {
        let status = match &outcome {
            Ok(result) if result.is_error => Status::ToolError,
            Ok(_) => Status::Success,
            Err(failure) => failure.status,
        };
        self.worst = self.worst.max(status);
        let mut object = Object::from_iter([("line", Value::from(line))]);
        if let Some(tool) = tool {
            object.push("tool", Value::from(tool));
        }
        match outcome {
            Ok(result) => object.push("result", Value::from(result)),
            Err(failure) => {
                eprintln!("tokio-host: line {line}: {}", failure.message);
                object.push("error", failure.json);
            }
        }
        print_json(&Value::Object(object));
    }
}

/// Reads one call line, `{"tool": "...", "input": {...}}`, and starts its call.
fn start_call(
    core: &mut Core,
    now: dhara_protocol::time::Instant,
    number: usize,
    text: &str,
) -> Result<Pending, Failure> {
    let request = json::parse(text.as_bytes())
        .map_err(|e| Failure::usage(format!("line {number} is not JSON ({e})")))?;
    let Some(tool) = request.get("tool").and_then(Value::as_str) else {
        return Err(Failure::usage(format!(
            "line {number} has no \"tool\": write {{\"tool\": \"name\", \"input\": {{...}}}}"
        )));
    };
    let known: Vec<&str> = core.tools().iter().map(|t| t.name.as_str()).collect();
    if !known.contains(&tool) {
        let list = match known.is_empty() {
            true => String::from("it offers no tools"),
            false => format!("known tools: {}", known.join(", ")),
        };
        let message = format!("unknown tool `{tool}`; {list}");
        return Err(Failure::new(Status::Usage, "unknown_tool", message));
    }
    let input = request.get("input").cloned().unwrap_or(json::json!({}));
    match core.execute(now, tool, input) {
        Ok(call) => Ok(Pending {
            call,
            line: number,
            tool: tool.to_string(),
        }),
        Err(error) => {
            let status = match error {
                UsageError::ShuttingDown | UsageError::Closed => Status::Exited,
                _ => Status::Usage,
            };
            let message = format!("cannot call `{tool}`: {error}");
            Err(Failure::new(status, "usage", message))
        }
    }
}

/// One compact JSON line on stdout (a closed stdout is ignored).
fn print_json(value: &Value) {
    let mut line = json::to_vec(value);
    line.push(b'\n');
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(&line).and_then(|()| out.flush());
}
