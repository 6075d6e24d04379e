//! The checks, in the order they run.
//!
//! Three processes are started. The first goes through a whole session: initialize,
//! every required check, shutdown. The optional checks that could leave a process in
//! a state that spoils later checks each get a fresh one: a request before
//! `initialize` followed by end of stdin, and a batch.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use dhara_protocol::json::{Number, Object, Value};
use dhara_protocol::message::{
    self, ExecuteParams, InitializeParams, InitializeResult, Tool, method,
};
use dhara_protocol::rpc::{self, ErrorCode, Id, Message};

use super::harness::{Exit, Process, Reply, Trace, id_text, shown};
use super::{Row, Status};
use crate::args::format_duration;

/// A method no extension implements.
const UNKNOWN_METHOD: &str = "dhara-check/no-such-method";
/// A notification no extension knows.
const UNKNOWN_NOTIFICATION: &str = "dhara-check/no-such-notification";
/// A tool name no extension offers (made unique against the real ones if needed).
const UNKNOWN_TOOL: &str = "dhara-check-no-such-tool";
/// A string id that looks like a number, to catch ids coerced to numbers.
const STRING_ID: &str = "17";
/// An integer id just beyond 2^53: a double cannot hold it.
const BEYOND_DOUBLE_ID: &str = "9007199254740993";
/// An integer id beyond `i64` (still within `u64`).
const BEYOND_I64_ID: &str = "12345678901234567890";

/// What the checks need besides the command.
pub struct Settings {
    /// The per-step wait for a reply.
    pub timeout: Duration,
    /// The wait for the process to exit after `shutdown` or end of stdin.
    pub grace: Duration,
    /// The extension's working directory, also sent in `initialize`.
    pub cwd: PathBuf,
    /// Where lines are traced.
    pub trace: Trace,
}

/// The outcome of all checks.
pub struct Outcome {
    /// One row per check, in the order they ran.
    pub rows: Vec<Row>,
    /// The last lines the first process wrote on stderr.
    pub stderr: Vec<String>,
}

/// Runs every check against `command`. `Err` when the command cannot be started.
pub fn run(command: &[String], settings: &Settings) -> Result<Outcome, String> {
    let mut rows = Vec::new();
    let mut session = Process::spawn(1, command, &settings.cwd, &settings.trace)?;
    let initialized = check_initialize(&mut session, settings, &mut rows);
    if let Some(result) = &initialized {
        check_tools(&result.tools, &mut rows);
        check_error_replies(&mut session, settings, &result.tools, &mut rows);
        check_ids(&mut session, settings, &mut rows);
        check_notification(&mut session, settings, &mut rows);
        check_output(&session, &mut rows);
    }
    check_shutdown(&mut session, settings, &mut rows);
    let stderr = session.stderr_tail();
    drop(session);

    match &initialized {
        Some(result) => {
            let tool = result.tools.first().map_or("echo", |t| t.name.as_str());
            let mut fresh = Process::spawn(2, command, &settings.cwd, &settings.trace)?;
            check_before_initialize(&mut fresh, settings, tool, &mut rows);
            let mut fresh = Process::spawn(3, command, &settings.cwd, &settings.trace)?;
            check_batch(&mut fresh, settings, &mut rows);
        }
        None => rows.push(Row::new(
            "other checks",
            Status::Warn,
            "not run: they need a successful initialize",
        )),
    }
    Ok(Outcome { rows, stderr })
}

/// `initialize` answered in time with a well-formed result.
fn check_initialize(
    ext: &mut Process,
    settings: &Settings,
    rows: &mut Vec<Row>,
) -> Option<InitializeResult> {
    let started = Instant::now();
    let (status, detail, result) = match initialize(ext, settings, 1) {
        Ok(result) => {
            let detail = format!(
                "answered in {} ms: {} {}, {} tool(s)",
                started.elapsed().as_millis(),
                result.name,
                result.version,
                result.tools.len()
            );
            (Status::Pass, detail, Some(result))
        }
        Err(why) => (Status::Fail, why, None),
    };
    rows.push(Row::new("initialize", status, detail));
    result
}

/// Sends `initialize` with id `id` and reads its result.
fn initialize(ext: &mut Process, settings: &Settings, id: u64) -> Result<InitializeResult, String> {
    let params = InitializeParams::new(settings.cwd.to_string_lossy()).into_value();
    ext.send_request(Id::from(id), method::INITIALIZE, Some(&params))?;
    match ext.next_reply(settings.timeout) {
        Reply::Response(response) if response.id == Id::from(id) => match response.outcome {
            Ok(result) => {
                InitializeResult::from_value(result).map_err(|e| format!("malformed result: {e}"))
            }
            Err(error) => Err(format!("answered with error {}", describe_error(&error))),
        },
        other => Err(unexpected(other, settings, &Id::from(id))),
    }
}

/// Tool names unique; each tool with a description and an object `inputSchema`.
fn check_tools(tools: &[Tool], rows: &mut Vec<Row>) {
    let mut problems = Vec::new();
    for (i, tool) in tools.iter().enumerate() {
        if tools
            .iter()
            .take(i)
            .any(|earlier| earlier.name == tool.name)
        {
            problems.push(format!("the name {:?} is used twice", tool.name));
        }
        if tool
            .description
            .as_deref()
            .is_none_or(|d| d.trim().is_empty())
        {
            problems.push(format!("{:?} has no description", tool.name));
        }
        match &tool.input_schema {
            Some(Value::Object(_)) => {}
            Some(other) => problems.push(format!(
                "{:?} has an inputSchema that is {}, not an object",
                tool.name,
                other.type_name()
            )),
            None => problems.push(format!("{:?} has no inputSchema", tool.name)),
        }
    }
    let row = if !problems.is_empty() {
        Row::new("tool list", Status::Fail, problems.join("; "))
    } else if tools.is_empty() {
        Row::new("tool list", Status::Warn, "the extension offers no tools")
    } else {
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        Row::new("tool list", Status::Pass, names.join(", "))
    };
    rows.push(row);
}

/// The requests that must be answered with a JSON-RPC error.
fn check_error_replies(
    ext: &mut Process,
    settings: &Settings,
    tools: &[Tool],
    rows: &mut Vec<Row>,
) {
    let id = Id::from(2u64);
    let sent = ext.send_request(id.clone(), UNKNOWN_METHOD, None);
    let (status, detail) = expect_error(ext, settings, sent, ErrorCode::METHOD_NOT_FOUND, &[id]);
    rows.push(Row::new("unknown method", status, detail));

    let sent = ext.send_line(br#"{"jsonrpc":"2.0","id":3,"method":"tools/list""#, None);
    let (status, detail) = expect_error(ext, settings, sent, ErrorCode::PARSE_ERROR, &[Id::Null]);
    rows.push(Row::new("malformed line", status, detail));

    let id = Id::from(4u64);
    let sent = ext.send_request(id.clone(), UNKNOWN_METHOD, None);
    let (status, detail) = match sent.map(|()| ext.next_reply(settings.timeout)) {
        Ok(Reply::Response(response)) if response.id == id => {
            (Status::Pass, String::from("answered the next request"))
        }
        Ok(other) => (Status::Fail, unexpected(other, settings, &id)),
        Err(e) => (Status::Fail, e),
    };
    rows.push(Row::new("answers after a malformed line", status, detail));

    for (name, line, id) in [
        (
            "invalid request (method not a string)",
            &br#"{"jsonrpc":"2.0","id":5,"method":1}"#[..],
            5u64,
        ),
        (
            "invalid request (jsonrpc not \"2.0\")",
            &br#"{"jsonrpc":"1.0","id":6,"method":"tools/list"}"#[..],
            6,
        ),
    ] {
        let id = Id::from(id);
        let sent = ext.send_line(line, Some(id.clone()));
        let allowed = [id, Id::Null];
        let (status, detail) =
            expect_error(ext, settings, sent, ErrorCode::INVALID_REQUEST, &allowed);
        rows.push(Row::new(name, status, detail));
    }

    let mut unknown_tool = String::from(UNKNOWN_TOOL);
    while tools.iter().any(|t| t.name == unknown_tool) {
        unknown_tool.push('_');
    }
    let id = Id::from(7u64);
    let params = ExecuteParams::new(unknown_tool, Value::Object(Object::new())).into_value();
    let sent = ext.send_request(id.clone(), method::TOOLS_EXECUTE, Some(&params));
    let (status, detail) = expect_error(ext, settings, sent, ErrorCode::INVALID_PARAMS, &[id]);
    rows.push(Row::new("unknown tool", status, detail));

    let row = match tools.iter().find_map(|t| first_required(t).map(|r| (t, r))) {
        None => Row::new(
            "missing required input",
            Status::Warn,
            "not run: no tool declares a required input property",
        ),
        Some((tool, required)) => {
            let id = Id::from(8u64);
            let params =
                ExecuteParams::new(tool.name.clone(), Value::Object(Object::new())).into_value();
            let sent = ext.send_request(id.clone(), method::TOOLS_EXECUTE, Some(&params));
            let (status, detail) =
                expect_error(ext, settings, sent, ErrorCode::INVALID_PARAMS, &[id]);
            let detail = format!("{} without {required:?}: {detail}", tool.name);
            Row::new("missing required input", status, detail)
        }
    };
    rows.push(row);
}

/// The first name in a tool's `inputSchema.required`, if any.
fn first_required(tool: &Tool) -> Option<&str> {
    let required = tool.input_schema.as_ref()?.get("required")?.as_array()?;
    required.iter().find_map(Value::as_str)
}

/// A string id and two large integer ids are echoed exactly.
fn check_ids(ext: &mut Process, settings: &Settings, rows: &mut Vec<Row>) {
    let ids = [
        ("string id echoed", Some(Id::from(STRING_ID))),
        (
            "id beyond 2^53 echoed",
            Number::from_text(BEYOND_DOUBLE_ID).map(Id::Number),
        ),
        (
            "id beyond i64 echoed",
            Number::from_text(BEYOND_I64_ID).map(Id::Number),
        ),
    ];
    for (name, id) in ids {
        let Some(id) = id else { continue };
        let (status, detail) = match ext.send_request(id.clone(), UNKNOWN_METHOD, None) {
            Err(e) => (Status::Fail, e),
            Ok(()) => match ext.next_reply(settings.timeout) {
                Reply::Response(response) if response.id == id => {
                    (Status::Pass, format!("echoed {}", id_text(&id)))
                }
                Reply::Response(response) => (
                    Status::Fail,
                    format!("sent {}, got {}", id_text(&id), id_text(&response.id)),
                ),
                other => (Status::Fail, unexpected(other, settings, &id)),
            },
        };
        rows.push(Row::new(name, status, detail));
    }
}

/// An unknown notification gets no reply: the only reply is to the request after it.
fn check_notification(ext: &mut Process, settings: &Settings, rows: &mut Vec<Row>) {
    let params = Value::Object(Object::new());
    let id = Id::from(9u64);
    let sent = ext
        .send_notification(UNKNOWN_NOTIFICATION, Some(&params))
        .and_then(|()| ext.send_request(id.clone(), UNKNOWN_METHOD, None));
    let (status, detail) = match sent.map(|()| ext.next_reply(settings.timeout)) {
        Err(e) => (Status::Fail, e),
        Ok(Reply::Response(response)) if response.id == id => (
            Status::Pass,
            String::from("only the request after it was answered"),
        ),
        Ok(Reply::Response(response)) => {
            let mut line = Vec::new();
            rpc::write_response(&response, &mut line);
            // Read on to the request's own reply, so later checks stay in step.
            while let Reply::Response(r) = ext.next_reply(settings.timeout) {
                if r.id == id {
                    break;
                }
            }
            (
                Status::Fail,
                format!("answered the notification: {}", shown(&line)),
            )
        }
        Ok(other) => (Status::Fail, unexpected(other, settings, &id)),
    };
    rows.push(Row::new("notification not answered", status, detail));
}

/// Stdout held only JSON-RPC messages, and every reply answered a request.
fn check_output(ext: &Process, rows: &mut Vec<Row>) {
    let seen = &ext.unexpected;
    let row = match &seen.first {
        None => Row::new(
            "only JSON-RPC on stdout",
            Status::Pass,
            "nothing else was seen",
        ),
        Some(first) => Row::new(
            "only JSON-RPC on stdout",
            Status::Warn,
            format!("{} other line(s), the first: {first}", seen.count),
        ),
    };
    rows.push(row);
}

/// `shutdown` makes the process exit with code 0 within the grace.
fn check_shutdown(ext: &mut Process, settings: &Settings, rows: &mut Vec<Row>) {
    let started = Instant::now();
    let (status, detail) = match ext.send_notification(method::SHUTDOWN, None) {
        Err(e) => (Status::Fail, e),
        Ok(()) => exit_row(ext, settings, started, Status::Fail),
    };
    rows.push(Row::new("shutdown exits with 0", status, detail));
}

/// How the process ended within the grace; `failure` is the status when it did not
/// exit with code 0.
fn exit_row(
    ext: &mut Process,
    settings: &Settings,
    started: Instant,
    failure: Status,
) -> (Status, String) {
    match ext.wait_exit(settings.grace) {
        Exit::Exited(Some(0)) => (
            Status::Pass,
            format!("exited in {} ms", started.elapsed().as_millis()),
        ),
        Exit::Exited(Some(code)) => (failure, format!("exited with code {code}")),
        Exit::Exited(None) => (failure, String::from("was killed by a signal")),
        Exit::Running => {
            ext.kill();
            let grace = format_duration(settings.grace);
            (
                failure,
                format!("still running after the grace ({grace}); killed"),
            )
        }
    }
}

/// On a fresh process: a request before `initialize` gets -32002, and end of stdin
/// (after initializing) makes the process exit with code 0. Both WARN only.
fn check_before_initialize(
    ext: &mut Process,
    settings: &Settings,
    tool: &str,
    rows: &mut Vec<Row>,
) {
    let id = Id::from(1u64);
    let params = ExecuteParams::new(tool, Value::Object(Object::new())).into_value();
    let sent = ext.send_request(id.clone(), method::TOOLS_EXECUTE, Some(&params));
    let not_initialized = ErrorCode::from(message::NOT_INITIALIZED);
    let (status, detail) = expect_error(ext, settings, sent, not_initialized, &[id]);
    let status = if status == Status::Pass {
        status
    } else {
        Status::Warn
    };
    rows.push(Row::new("request before initialize", status, detail));

    let (status, detail) = match initialize(ext, settings, 2) {
        Err(why) => (Status::Warn, format!("not run: initialize failed: {why}")),
        Ok(_) => {
            ext.close_stdin();
            exit_row(ext, settings, Instant::now(), Status::Warn)
        }
    };
    rows.push(Row::new("end of stdin exits with 0", status, detail));
}

/// On a fresh process: a batch of two requests is answered with a batch of two
/// replies. WARN only.
fn check_batch(ext: &mut Process, settings: &Settings, rows: &mut Vec<Row>) {
    let (status, detail) = match initialize(ext, settings, 1) {
        Err(why) => (Status::Warn, format!("not run: initialize failed: {why}")),
        Ok(_) => {
            let ids = [Id::from(2u64), Id::from(3u64)];
            let batch: Vec<Message> = ids
                .iter()
                .map(|id| {
                    Message::Request(rpc::Request {
                        id: id.clone(),
                        method: String::from(UNKNOWN_METHOD),
                        params: None,
                    })
                })
                .collect();
            let mut line = Vec::new();
            rpc::write_batch(&batch, &mut line);
            match ext.send_line(&line, ids.last().cloned()) {
                Err(e) => (Status::Warn, e),
                Ok(()) => batch_outcome(ext.next_reply(settings.timeout), &ids, settings),
            }
        }
    };
    rows.push(Row::new("batch request", status, detail));
    let _ = ext.send_notification(method::SHUTDOWN, None);
    let _ = ext.wait_exit(settings.grace);
}

/// Whether a reply answers a batch of requests with `ids`.
fn batch_outcome(reply: Reply, ids: &[Id], settings: &Settings) -> (Status, String) {
    let Reply::Batch(entries) = reply else {
        let why = unexpected(reply, settings, &Id::Null);
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
        (
            Status::Warn,
            format!("array answers ids [{}], expected [2, 3]", got.join(", ")),
        )
    }
}

/// Waits for an error reply with `code` and one of the `allowed` ids, after a send
/// that may have failed.
fn expect_error(
    ext: &mut Process,
    settings: &Settings,
    sent: Result<(), String>,
    code: ErrorCode,
    allowed: &[Id],
) -> (Status, String) {
    if let Err(e) = sent {
        return (Status::Fail, e);
    }
    let expected_id = allowed.first().cloned().unwrap_or(Id::Null);
    let response = match ext.next_reply(settings.timeout) {
        Reply::Response(response) => response,
        other => return (Status::Fail, unexpected(other, settings, &expected_id)),
    };
    let wanted = code.code();
    match &response.outcome {
        Ok(result) => {
            let mut text = Vec::new();
            dhara_protocol::json::write_value(result, &mut text);
            (
                Status::Fail,
                format!(
                    "answered with a result ({}), expected error {wanted}",
                    shown(&text)
                ),
            )
        }
        Err(error) if error.code != code => (
            Status::Fail,
            format!(
                "answered with error {}, expected {wanted}",
                describe_error(error)
            ),
        ),
        Err(_) if !allowed.contains(&response.id) => (
            Status::Fail,
            format!(
                "error {} with id {}, expected id {}",
                wanted,
                id_text(&response.id),
                id_text(&expected_id)
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

/// Why a wait did not give the response to the request with `id`.
fn unexpected(reply: Reply, settings: &Settings, id: &Id) -> String {
    match reply {
        Reply::Response(response) => format!(
            "the reply has id {}, expected {}",
            id_text(&response.id),
            id_text(id)
        ),
        Reply::Batch(_) => String::from("answered with an array"),
        Reply::Invalid(why) => format!("not a valid reply: {why}"),
        Reply::TimedOut => {
            format!("no reply within {}", format_duration(settings.timeout))
        }
        Reply::Closed => String::from("stdout closed before a reply came"),
    }
}

/// An error object as `-32601 "Method not found"`.
fn describe_error(error: &rpc::ErrorObject) -> String {
    format!("{} {:?}", error.code.code(), error.message)
}
