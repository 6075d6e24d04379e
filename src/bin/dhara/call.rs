//! `dhara tools`, `dhara call` and `dhara session`: talking to any extension.

use std::io::{BufRead, Read};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use dhara_protocol::driver::{ExtensionProcess, Stderr};
use dhara_protocol::host::{CallError, CallId, Event, Reply, UsageError};
use dhara_protocol::json::{self, Object, Value};
use dhara_protocol::message::{Tool, ToolResult};

use crate::args::{self, Accepts, Invocation, Options};
use crate::connect::{self, Failure, print_json};
use crate::{Status, usage_error};

const ACCEPTS: Accepts = Accepts {
    process: true,
    json: true,
    trace: true,
    ..Accepts::NONE
};

/// The prefix of the extension's stderr lines on ours.
const STDERR_PREFIX: &str = "[extension] ";

/// How long the session loop waits for the extension before reading stdin again.
pub(crate) const SESSION_POLL: Duration = Duration::from_millis(10);

/// `dhara tools [OPTIONS] -- CMD [ARGS...]`
pub(crate) fn tools(words: &[String]) -> Status {
    let invocation = match parse_without_arguments(words, "tools") {
        Ok(invocation) => invocation,
        Err(status) => return status,
    };
    let options = &invocation.options;
    let mut extension = match connect::start(&invocation.command, options, stderr()) {
        Ok(extension) => extension,
        Err(failure) => return failure.report(options.json),
    };
    let info = match connect::initialize(&mut extension, options) {
        Ok(info) => info,
        Err(failure) => {
            connect::shut_down(&mut extension, options);
            return failure.report(options.json);
        }
    };
    if options.json {
        print_json(&Value::from(info.clone()));
    } else {
        outln!("{} {}: {} tools", info.name, info.version, info.tools.len());
        for tool in &info.tools {
            print_tool(tool);
        }
    }
    report_protocol_events(&mut extension);
    connect::shut_down(&mut extension, options);
    Status::Success
}

fn print_tool(tool: &Tool) {
    outln!();
    outln!("  {}", tool.name);
    if let Some(description) = &tool.description {
        outln!("    {description}");
    }
    match &tool.input_schema {
        Some(schema) => outln!("    input: {schema}"),
        None => outln!("    input: (no schema)"),
    }
}

/// `dhara call TOOL [INPUT_JSON] [OPTIONS] -- CMD [ARGS...]`
pub(crate) fn call(words: &[String]) -> Status {
    let invocation = match parse(words, "call") {
        Ok(invocation) => invocation,
        Err(status) => return status,
    };
    let options = &invocation.options;
    let (tool_name, input) = match invocation.positional.as_slice() {
        [tool] => (tool, Value::Object(Object::new())),
        [tool, input] => match json::parse(input.as_bytes()) {
            Ok(input) => (tool, input),
            Err(e) => {
                let message = format!(
                    "INPUT_JSON is not JSON ({e}): `{input}`. Quote it for the shell, as in '{{\"text\": \"hi\"}}'"
                );
                return Failure::new(Status::Usage, "usage", message).report(options.json);
            }
        },
        [] => {
            return usage_error(
                "`dhara call` needs a tool name: dhara call TOOL [INPUT_JSON] -- CMD",
            );
        }
        [_, _, extra, ..] => {
            return usage_error(&format!(
                "unexpected argument `{extra}` (options and `--` follow the input)"
            ));
        }
    };
    let mut extension = match connect::start(&invocation.command, options, stderr()) {
        Ok(extension) => extension,
        Err(failure) => return failure.report(options.json),
    };
    let outcome = run_call(&mut extension, options, tool_name, input);
    report_protocol_events(&mut extension);
    let status = match outcome {
        Ok(result) => print_result(&result, options.json),
        Err(failure) => failure.report(options.json),
    };
    connect::shut_down(&mut extension, options);
    status
}

/// Initializes, checks the tool exists, calls it, and waits for its end, printing its
/// progress on stderr.
fn run_call(
    extension: &mut ExtensionProcess,
    options: &Options,
    tool_name: &str,
    input: Value,
) -> Result<ToolResult, Failure> {
    connect::initialize(extension, options)?;
    check_tool_exists(extension, tool_name)?;
    let call = extension
        .start_call(tool_name, input)
        .map_err(|e| refused(&e, tool_name))?;
    while let Some(event) = extension.next_event() {
        match event {
            Event::CallEnded { call: c, result } if c == call => {
                return match result {
                    Ok(Reply::Executed(result)) => Ok(result),
                    Ok(_) => Err(Failure::new(
                        Status::Protocol,
                        "protocol",
                        String::from("unexpected reply"),
                    )),
                    Err(error) => Err(Failure::of_call(&error, tool_name, options)),
                };
            }
            Event::Progress { progress, .. } => eprintln!("progress: {}", progress.message),
            other => report_event(&other),
        }
    }
    Err(Failure::of_call(
        &CallError::ExtensionExited {
            unfinished_line: None,
        },
        tool_name,
        options,
    ))
}

/// An unknown tool is the caller's mistake: say which tools there are.
fn check_tool_exists(extension: &ExtensionProcess, tool_name: &str) -> Result<(), Failure> {
    let tools = extension.core().tools();
    if tools.iter().any(|t| t.name == tool_name) {
        return Ok(());
    }
    let known: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    let list = if known.is_empty() {
        String::from("it offers no tools")
    } else {
        format!("known tools: {}", known.join(", "))
    };
    Err(Failure::new(
        Status::Usage,
        "unknown_tool",
        format!("unknown tool `{tool_name}`; {list}"),
    ))
}

/// The Core refused to start the call.
fn refused(error: &UsageError, tool_name: &str) -> Failure {
    let status = match error {
        UsageError::ShuttingDown | UsageError::Closed => Status::Exited,
        _ => Status::Usage,
    };
    Failure::new(
        status,
        "usage",
        format!("cannot call `{tool_name}`: {error}"),
    )
}

/// Prints a tool result: text as is, other content described; `--json`: the result as
/// one line. The status says whether the tool reported an error.
pub(crate) fn print_result(result: &ToolResult, json: bool) -> Status {
    if json {
        print_json(&Value::from(result.clone()));
    } else {
        for content in &result.content {
            let text = connect::describe_content(content);
            if text.ends_with('\n') {
                out!("{text}");
            } else {
                outln!("{text}");
            }
        }
        if result.is_error {
            eprintln!("dhara: the tool reported an error (isError: true)");
        }
    }
    if result.is_error {
        Status::ToolError
    } else {
        Status::Success
    }
}

/// `dhara session [OPTIONS] -- CMD [ARGS...]`: calls from stdin lines, concurrently.
pub(crate) fn session(words: &[String]) -> Status {
    let invocation = match parse_without_arguments(words, "session") {
        Ok(invocation) => invocation,
        Err(status) => return status,
    };
    let options = &invocation.options;
    let mut extension = match connect::start(&invocation.command, options, stderr()) {
        Ok(extension) => extension,
        Err(failure) => return failure.report(true),
    };
    if let Err(failure) = connect::initialize(&mut extension, options) {
        connect::shut_down(&mut extension, options);
        return failure.report(true);
    }
    let worst = run_session(&mut extension, options);
    connect::shut_down(&mut extension, options);
    worst
}

/// A line of the session's input, numbered from 1, or its end.
pub(crate) enum Line {
    Text(usize, String),
    /// A line longer than [`MAX_SESSION_LINE`], skipped.
    TooLong(usize),
    End,
}

/// The longest session line: the same bound as a protocol line.
pub(crate) const MAX_SESSION_LINE: usize = dhara_protocol::frame::DEFAULT_MAX_LINE_BYTES;

/// Reads `input` line by line, numbering every line (blank ones too), and sends each
/// to the session; a line longer than [`MAX_SESSION_LINE`] is skipped, not kept.
pub(crate) fn read_lines(mut input: impl BufRead, to_session: mpsc::SyncSender<Line>) {
    let limit = u64::try_from(MAX_SESSION_LINE).unwrap_or(u64::MAX);
    for number in 1.. {
        let mut line = Vec::new();
        match (&mut input).take(limit).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let message = if line.ends_with(b"\n") || line.len() < MAX_SESSION_LINE {
            let text = String::from_utf8_lossy(&line).trim_end().to_string();
            Line::Text(number, text)
        } else {
            skip_rest_of_line(&mut input);
            Line::TooLong(number)
        };
        if to_session.send(message).is_err() {
            return;
        }
    }
    let _ = to_session.send(Line::End);
}

fn skip_rest_of_line(input: &mut impl BufRead) {
    while let Ok(buf) = input.fill_buf() {
        if buf.is_empty() {
            return;
        }
        match buf.iter().position(|&b| b == b'\n') {
            Some(end) => return input.consume(end + 1),
            None => {
                let all = buf.len();
                input.consume(all);
            }
        }
    }
}

/// A call the session started and has not printed yet.
struct Pending {
    call: CallId,
    line: usize,
    tool: String,
}

fn run_session(extension: &mut ExtensionProcess, options: &Options) -> Status {
    let (to_session, lines) = mpsc::sync_channel(16);
    thread::spawn(move || read_lines(std::io::stdin().lock(), to_session));

    let mut worst = Status::Success;
    let mut pending: Vec<Pending> = Vec::new();
    let mut input_ended = false;
    // Backpressure: past this many calls in flight, no line is read until one ends, so
    // the reader thread blocks on its bounded channel and stdin stays unread.
    let max_in_flight = extension.core().config().max_in_flight;
    loop {
        while pending.len() < max_in_flight {
            let Ok(line) = lines.try_recv() else {
                break;
            };
            match line {
                Line::Text(number, text) if !text.trim().is_empty() => {
                    match start_session_call(extension, number, &text) {
                        Ok(started) => pending.push(started),
                        Err(failure) => {
                            worst = worst.max(failure.status);
                            print_session_line(number, None, Err(failure));
                        }
                    }
                }
                Line::Text(..) => {}
                Line::TooLong(number) => {
                    let message = format!("line {number} is longer than {MAX_SESSION_LINE} bytes");
                    let failure = Failure::new(Status::Usage, "usage", message);
                    worst = worst.max(failure.status);
                    print_session_line(number, None, Err(failure));
                }
                Line::End => input_ended = true,
            }
        }
        if input_ended && pending.is_empty() {
            return worst;
        }
        if extension.is_closed() && !pending.is_empty() {
            // Every call ends before `Closed`; nothing is left to wait for.
            pending.clear();
        }
        let Some(event) = extension.next_event_timeout(SESSION_POLL) else {
            if extension.is_closed() && !input_ended {
                // The extension is gone: the calls still to come fail as they are read.
                thread::sleep(SESSION_POLL);
            }
            continue;
        };
        match event {
            Event::CallEnded { call, result } => {
                let Some(index) = pending.iter().position(|p| p.call == call) else {
                    continue;
                };
                let done = pending.swap_remove(index);
                let outcome = match result {
                    Ok(Reply::Executed(result)) => Ok(result),
                    Ok(_) => Err(Failure::new(
                        Status::Protocol,
                        "protocol",
                        String::from("unexpected reply"),
                    )),
                    Err(error) => Err(Failure::of_call(&error, &done.tool, options)),
                };
                let status = match &outcome {
                    Ok(result) if result.is_error => Status::ToolError,
                    Ok(_) => Status::Success,
                    Err(failure) => failure.status,
                };
                worst = worst.max(status);
                print_session_line(done.line, Some(&done.tool), outcome);
            }
            Event::Progress { call, progress } => {
                let line = call
                    .and_then(|c| pending.iter().find(|p| p.call == c))
                    .map(|p| p.line);
                match line {
                    Some(line) => eprintln!("progress (line {line}): {}", progress.message),
                    None => eprintln!("progress: {}", progress.message),
                }
            }
            other => report_event(&other),
        }
    }
}

/// Reads one session line, `{"tool": "...", "input": {...}}`, and starts its call.
fn start_session_call(
    extension: &mut ExtensionProcess,
    number: usize,
    text: &str,
) -> Result<Pending, Failure> {
    let usage = |message: String| Failure::new(Status::Usage, "usage", message);
    let request = json::parse(text.as_bytes())
        .map_err(|e| usage(format!("line {number} is not JSON ({e})")))?;
    let Some(tool) = request.get("tool").and_then(Value::as_str) else {
        return Err(usage(format!(
            "line {number} has no \"tool\": write {{\"tool\": \"name\", \"input\": {{...}}}}"
        )));
    };
    let input = request
        .get("input")
        .cloned()
        .unwrap_or(Value::Object(Object::new()));
    check_tool_exists(extension, tool)?;
    let call = extension
        .start_call(tool, input)
        .map_err(|e| refused(&e, tool))?;
    Ok(Pending {
        call,
        line: number,
        tool: tool.to_string(),
    })
}

/// `{"line": N, "tool": "...", "result": {...}}` or `{"line": N, "error": {...}}`.
pub(crate) fn print_session_line(
    line: usize,
    tool: Option<&str>,
    outcome: Result<ToolResult, Failure>,
) {
    let mut object = Object::from_iter([("line", Value::from(line))]);
    if let Some(tool) = tool {
        object.push("tool", Value::from(tool));
    }
    match outcome {
        Ok(result) => object.push("result", Value::from(result)),
        Err(failure) => {
            eprintln!("dhara: line {line}: {}", failure.message);
            object.push("error", failure.json);
        }
    }
    print_json(&Value::Object(object));
}

/// Tells the person about events no command waits for: the extension's protocol
/// mistakes, and its shutting down.
fn report_event(event: &Event) {
    match event {
        Event::Protocol(problem) => eprintln!("dhara: protocol: {problem}"),
        Event::ToolsChanged { tools } => {
            eprintln!("dhara: the extension now offers {} tools", tools.len())
        }
        _ => {}
    }
}

/// Reports the events set aside while a blocking step waited (initialize).
fn report_protocol_events(extension: &mut ExtensionProcess) {
    while let Some(event) = extension.next_event_timeout(Duration::ZERO) {
        report_event(&event);
    }
}

fn parse(words: &[String], command: &str) -> Result<Invocation, Status> {
    match args::parse(words, ACCEPTS) {
        Ok(invocation) if invocation.help => {
            out!("{}", crate::USAGE);
            Err(Status::Success)
        }
        Ok(invocation) => Ok(invocation),
        Err(e) => Err(usage_error(&format!("{command}: {e}"))),
    }
}

/// [`parse`] for a command that takes nothing but options before `--`.
fn parse_without_arguments(words: &[String], command: &str) -> Result<Invocation, Status> {
    let invocation = parse(words, command)?;
    match invocation.positional.first() {
        Some(extra) => Err(usage_error(&format!(
            "`dhara {command}` takes no arguments before `--` (got `{extra}`)"
        ))),
        None => Ok(invocation),
    }
}

fn stderr() -> Stderr {
    Stderr::Prefixed(String::from(STDERR_PREFIX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(input: &[u8]) -> Vec<String> {
        let (tx, rx) = mpsc::sync_channel(100);
        read_lines(input, tx);
        rx.iter()
            .map(|line| match line {
                Line::Text(n, text) => format!("{n}:{text}"),
                Line::TooLong(n) => format!("{n}:too long"),
                Line::End => String::from("end"),
            })
            .collect()
    }

    #[test]
    fn session_lines_are_numbered_with_blanks_counted() {
        assert_eq!(lines_of(b"a\n\nb\r\nc"), ["1:a", "2:", "3:b", "4:c", "end"]);
        assert_eq!(lines_of(b""), ["end"]);
    }

    #[test]
    fn an_overlong_session_line_is_skipped_and_the_next_one_read() {
        let mut input = vec![b'x'; MAX_SESSION_LINE + 10];
        input.extend_from_slice(b"\nnext\n");
        assert_eq!(lines_of(&input), ["1:too long", "2:next", "end"]);
    }
}
