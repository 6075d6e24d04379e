//! Starting an extension for the commands, and putting what happens into words.

use std::io::{ErrorKind, Write};
use std::process::Command;
use std::time::Duration;

use dhara_protocol::driver::{self, ExtensionProcess, Stderr, TraceHook, Traced};
use dhara_protocol::host::{CallError, Config, EndReason, Event, Excerpt, PeerError};
use dhara_protocol::json::{Object, Value};
use dhara_protocol::message::{Content, InitializeResult};
use dhara_protocol::rpc::ErrorObject;

use crate::Status;
use crate::args::{Options, format_duration};

/// How a command failed, with what to tell the person and the exit status.
#[derive(Debug)]
pub(crate) struct Failure {
    /// The exit status.
    pub status: Status,
    /// One line for stderr.
    pub message: String,
    /// The same failure as the `error` member of `--json` output.
    pub json: Value,
}

impl Failure {
    /// A failure described by a `kind` and a message.
    pub(crate) fn new(status: Status, kind: &str, message: String) -> Failure {
        let json = Value::Object(Object::from_iter([
            ("kind", Value::from(kind)),
            ("message", Value::from(message.as_str())),
        ]));
        Failure {
            status,
            message,
            json,
        }
    }

    /// The failure of a call, by how it ended.
    pub(crate) fn of_call(error: &CallError, what: &str, options: &Options) -> Failure {
        match error {
            CallError::Rpc(object) => Failure {
                status: Status::Protocol,
                message: format!("{what} failed: {}", describe_error_object(object)),
                json: error_object_json(object),
            },
            CallError::Timeout { unfinished_line } => Failure::new(
                Status::Timeout,
                "timeout",
                format!(
                    "{what}: no reply within {}; the extension was sent shutdown{}",
                    format_duration(options.timeout),
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

    /// Prints the failure: the message on stderr, and with `--json` the error object on
    /// stdout. Returns the status.
    pub(crate) fn report(&self, json: bool) -> Status {
        eprintln!("dhara: {}", self.message);
        if json {
            let line = Value::Object(Object::from_iter([("error", self.json.clone())]));
            print_json(&line);
        }
        self.status
    }
}

/// What to add to a call's failure when the extension left bytes without a newline:
/// the likeliest first mistake of an extension author.
fn unfinished(line: Option<&Excerpt>, how: &str) -> String {
    match line {
        Some(line) => format!(
            ". {} bytes without a final newline {how}: `{line}`. Does the extension end each message with a newline and flush its stdout?",
            line.len
        ),
        None => String::new(),
    }
}

/// `code: message (data)` for a JSON-RPC error.
pub(crate) fn describe_error_object(error: &ErrorObject) -> String {
    let mut text = format!("error {}: {}", error.code.code(), error.message);
    if let Some(data) = &error.data {
        text.push_str(&format!(" (data: {data})"));
    }
    text
}

/// A JSON-RPC error object as JSON.
pub(crate) fn error_object_json(error: &ErrorObject) -> Value {
    let mut object = Object::from_iter([
        ("code", Value::from(error.code.code())),
        ("message", Value::from(error.message.as_str())),
    ]);
    if let Some(data) = &error.data {
        object.push("data", data.clone());
    }
    Value::Object(object)
}

/// Prints one compact JSON line on stdout.
pub(crate) fn print_json(value: &Value) {
    let mut line = dhara_protocol::json::to_vec(value);
    line.push(b'\n');
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(&line).and_then(|()| out.flush());
}

/// A content item for a person: text as is, other items described.
pub(crate) fn describe_content(content: &Content) -> String {
    match content {
        Content::Text { text } => String::from(text.as_str()),
        Content::ImageData { mime_type, data } => format!(
            "[image: {mime_type}, {} bytes of base64 data]",
            crate::png::base64_decoded_len(data)
        ),
        Content::ImagePath { path, mime_type } => match mime_type {
            Some(mime) => format!("[image: {mime} at {path}]"),
            None => format!("[image at {path}]"),
        },
        Content::File {
            path,
            size,
            mime_type,
        } => {
            let mut text = format!("[file: {path}");
            if let Some(size) = size {
                text.push_str(&format!(", {size} bytes"));
            }
            if let Some(mime) = mime_type {
                text.push_str(&format!(", {mime}"));
            }
            text.push(']');
            text
        }
        other => format!(
            "[{} content: {}]",
            other.kind().unwrap_or("unknown"),
            Value::from(other.clone())
        ),
    }
}

/// Starts the extension command of a command line, as the options say.
pub(crate) fn start(
    command: &[String],
    options: &Options,
    stderr: Stderr,
) -> Result<ExtensionProcess, Failure> {
    let Some((program, args)) = command.split_first() else {
        return Err(Failure::new(
            Status::Usage,
            "usage",
            String::from(
                "missing the extension command: put it after `--`, as in `dhara tools -- python3 my_extension.py`",
            ),
        ));
    };
    let mut process = Command::new(program);
    process.args(args);
    if let Some(cwd) = &options.cwd {
        if !cwd.is_dir() {
            return Err(Failure::new(
                Status::Usage,
                "usage",
                format!("--cwd {}: not a directory", cwd.display()),
            ));
        }
        process.current_dir(cwd);
    }
    let config = Config::default()
        .timeout(options.timeout)
        .grace(options.grace)
        // The extension's own answer to bad input is what a person testing it wants.
        .validate_input(false);
    let mut driver_options = driver::Options::default();
    driver_options.config = config;
    driver_options.stderr = stderr;
    let mut extension = ExtensionProcess::spawn(process, driver_options).map_err(|e| {
        let message = match e.kind() {
            ErrorKind::NotFound => {
                format!("command not found: `{program}` (is it installed and on PATH?)")
            }
            ErrorKind::PermissionDenied => format!("cannot run `{program}`: permission denied"),
            _ => format!("cannot start `{program}`: {e}"),
        };
        Failure::new(Status::Exited, "spawn", message)
    })?;
    if options.trace {
        extension.set_trace(trace_to_stderr());
    }
    Ok(extension)
}

/// The working directory sent in `initialize`: `--cwd` or the current directory.
pub(crate) fn session_cwd(options: &Options) -> String {
    let dir = match &options.cwd {
        Some(cwd) => std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.clone()),
        None => std::env::current_dir().unwrap_or_default(),
    };
    dir.display().to_string()
}

/// Initializes the extension, or says why it could not be.
pub(crate) fn initialize(
    extension: &mut ExtensionProcess,
    options: &Options,
) -> Result<InitializeResult, Failure> {
    extension
        .initialize(&session_cwd(options))
        .map_err(|e| match e {
            driver::Error::Call(error) => Failure::of_call(&error, "initialize", options),
            other => Failure::new(Status::Protocol, "protocol", format!("initialize: {other}")),
        })
}

/// Sends `shutdown` and waits for the exit (or the kill after the grace), telling the
/// person what the extension got wrong meanwhile. Says so when the extension had to be
/// killed, exited with an error code, or was ended by a signal.
pub(crate) fn shut_down(extension: &mut ExtensionProcess, options: &Options) {
    let outcome = extension.shutdown_with(|event| report_late(&event));
    if let Err(e) = outcome {
        eprintln!("dhara: shutdown: {e}");
        return;
    }
    if let Some(how) = describe_exit(extension, options) {
        eprintln!("dhara: {how}");
    }
}

/// How the extension ended, when it is worth saying: `None` for an exit with code 0.
pub(crate) fn describe_exit(extension: &ExtensionProcess, options: &Options) -> Option<String> {
    if extension.killed() {
        return Some(format!(
            "the extension did not exit within the grace period ({}) and was killed",
            format_duration(options.grace)
        ));
    }
    let status = extension.exit_status()?;
    match status.code() {
        Some(0) => None,
        Some(code) => Some(format!("the extension exited with code {code}")),
        None => Some(match signal_of(&status) {
            Some(signal) => format!("the extension was ended by signal {signal}"),
            None => String::from("the extension was ended by a signal"),
        }),
    }
}

#[cfg(unix)]
fn signal_of(status: &std::process::ExitStatus) -> Option<String> {
    use std::os::unix::process::ExitStatusExt;
    let number = status.signal()?;
    let name = match number {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        15 => "SIGTERM",
        _ => return Some(number.to_string()),
    };
    Some(format!("{number} ({name})"))
}

#[cfg(not(unix))]
fn signal_of(_: &std::process::ExitStatus) -> Option<String> {
    None
}

/// An event that comes while the session ends: the extension's mistakes, and a reply
/// that came only after its call had timed out (often a reply flushed at exit).
fn report_late(event: &Event) {
    match event {
        Event::Protocol(PeerError::LateResponse {
            call,
            ended: Some(EndReason::TimedOut),
        }) => eprintln!(
            "dhara: the reply to call {} came only after it had timed out; is the extension's stdout flushed after each message?",
            call.get()
        ),
        Event::Protocol(PeerError::Truncated { line }) => eprintln!(
            "dhara: protocol: the extension's output ended inside a line ({} bytes without a final newline: `{line}`); does it end each message with a newline?",
            line.len
        ),
        Event::Protocol(problem) => eprintln!("dhara: protocol: {problem}"),
        _ => {}
    }
}

/// A trace hook printing `[  0.012s] -> {...}` lines to stderr.
pub(crate) fn trace_to_stderr() -> TraceHook {
    Box::new(|elapsed: Duration, traced: Traced<'_>| {
        let (arrow, text) = match traced {
            Traced::Sent(line) => ("->", String::from_utf8_lossy(line).into_owned()),
            Traced::Received(line) => ("<-", String::from_utf8_lossy(line).into_owned()),
            Traced::Stderr(line) => ("!!", String::from_utf8_lossy(line).into_owned()),
            Traced::StdoutClosed => ("--", String::from("stdout closed")),
            Traced::StdinClosed => ("--", String::from("stdin closed (after shutdown)")),
            Traced::Killed => ("--", String::from("killed the process group")),
            Traced::Exited(Some(code)) => ("--", format!("exited with code {code}")),
            Traced::Exited(None) => ("--", String::from("ended by a signal")),
            _ => return,
        };
        eprintln!("[{:>8.3}s] {arrow} {text}", elapsed.as_secs_f64());
    })
}
