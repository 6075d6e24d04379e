//! The commands over a config file of named extensions: `dhara tools`, `dhara call`
//! and `dhara session` with `--config FILE`.
//!
//! `tools` and `call` run once: an extension that exits is not started again.
//! `session` restarts each extension as its policy in the file says (by default at
//! once, with a backoff and the crash-loop breaker): a call that times out ends with
//! its timeout error, the extension is shut down (killed if need be) and started
//! again, and the calls that come later are served by the new process.

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use dhara_protocol::driver::{FleetError, FleetProcesses, Stderr};
use dhara_protocol::fleet::{
    self, CallError, CallHandle, Config, Event, ExtensionKey, Status as Health, UsageError,
};
use dhara_protocol::json::{self, Object, Value};

use crate::args::{self, Accepts, Options};
use crate::call::{self, Line, MAX_SESSION_LINE, SESSION_POLL};
use crate::config::{self, ExtensionSpec};
use crate::connect::{Failure, print_json};
use crate::{Status, usage_error};

const ACCEPTS: Accepts = Accepts {
    process: true,
    json: true,
    trace: false,
    config: true,
    check: false,
};

/// The extensions of a command line with `--config`, and its options.
struct Setup {
    specs: Vec<ExtensionSpec>,
    env: Vec<(String, String)>,
    options: Options,
    positional: Vec<String>,
}

/// Reads `--config FILE`, `--env` and the other options; `Err` is the status of a
/// usage error, already reported.
fn setup(words: &[String], command: &str, arguments: usize) -> Result<Setup, Status> {
    let mut invocation = args::parse(words, ACCEPTS).map_err(|e| usage_error(&e.0))?;
    if let Some(extra) = invocation.positional.get(arguments) {
        return Err(usage_error(&format!(
            "`dhara {command} --config FILE` takes no argument `{extra}`"
        )));
    }
    if !invocation.command.is_empty() {
        return Err(usage_error(
            "--config names the extensions: give no command after `--`",
        ));
    }
    let Some(file) = invocation.options.config.take() else {
        return Err(usage_error("--config needs a file"));
    };
    let specs =
        config::load(&file).map_err(|e| usage_error(&format!("{}: {e}", file.display())))?;
    Ok(Setup {
        specs,
        env: core::mem::take(&mut invocation.options.env),
        options: invocation.options,
        positional: invocation.positional,
    })
}

/// Starts every extension of the setup; restarts as each one's policy says, unless
/// `once` (a command that runs once has no use for them).
fn start(setup: &Setup, once: bool) -> FleetProcesses {
    let mut fleet = FleetProcesses::new(Config::default(), Stderr::Prefixed(String::new()));
    for spec in &setup.specs {
        let mut config = config::extension_config(spec, &setup.options);
        if once {
            config.restart = config.restart.max_exits(1);
        }
        let (spec_for_command, options, env) =
            (spec.clone(), setup.options.clone(), setup.env.clone());
        let make = Box::new(move || config::command(&spec_for_command, &options, &env));
        // The names were checked as the file was read.
        if let Err(e) = fleet.add(&spec.name, config, make) {
            debug_assert!(false, "an extension the file allowed was refused: {e}");
        }
    }
    fleet
}

/// `dhara tools --config FILE [OPTIONS]`: every tool of every extension, with its
/// extension and qualified name.
pub(crate) fn tools(words: &[String]) -> Status {
    let setup = match setup(words, "tools", 0) {
        Ok(setup) => setup,
        Err(status) => return status,
    };
    let mut fleet = start(&setup, true);
    let started = start_all(&mut fleet, &setup);
    let status = match started.failed {
        0 => Status::Success,
        _ => Status::Exited,
    };
    let (listed, servers) = (started.ready, started.servers);
    if setup.options.json {
        print_json(&registry_json(&fleet, &listed, &servers));
    } else {
        print_registry(&fleet, &listed, &servers);
    }
    fleet.shutdown();
    status
}

fn print_registry(
    fleet: &FleetProcesses,
    listed: &[(ExtensionKey, String)],
    servers: &BTreeMap<ExtensionKey, (String, String)>,
) {
    for (i, (extension, name)) in listed.iter().enumerate() {
        if i > 0 {
            outln!();
        }
        let tools: Vec<_> = fleet
            .fleet()
            .tools()
            .filter(|t| t.extension == *extension)
            .collect();
        let server = servers
            .get(extension)
            .map(|(n, v)| format!(" ({n} {v})"))
            .unwrap_or_default();
        let count = match tools.len() {
            1 => String::from("1 tool"),
            n => format!("{n} tools"),
        };
        outln!("{name}{server}: {count}");
        for tool in tools {
            outln!();
            outln!("  {}", tool.offered);
            let mut names = format!("    extension {name}, qualified name {}", tool.qualified);
            let bare = fleet::alias(&tool.tool.name);
            if tool.offered == tool.qualified {
                names.push_str(&format!("; the bare name {bare} is ambiguous"));
            }
            if bare != tool.tool.name {
                names.push_str(&format!("; sent as {:?}", tool.tool.name));
            }
            outln!("{names}");
            if let Some(description) = &tool.tool.description {
                outln!("    {description}");
            }
            match &tool.tool.input_schema {
                Some(schema) => outln!("    input: {schema}"),
                None => outln!("    input: (no schema)"),
            }
        }
    }
}

fn registry_json(
    fleet: &FleetProcesses,
    listed: &[(ExtensionKey, String)],
    servers: &BTreeMap<ExtensionKey, (String, String)>,
) -> Value {
    let tools = fleet
        .fleet()
        .tools()
        .filter(|t| listed.iter().any(|(e, _)| *e == t.extension))
        .map(|t| {
            let mut tool = Object::from_iter([
                ("name", Value::from(t.offered)),
                ("qualifiedName", Value::from(t.qualified)),
                ("realName", Value::from(t.tool.name.as_str())),
                ("extension", Value::from(t.extension_name)),
            ]);
            if let Some(description) = &t.tool.description {
                tool.push("description", Value::from(description.as_str()));
            }
            if let Some(schema) = &t.tool.input_schema {
                tool.push("inputSchema", schema.clone());
            }
            Value::Object(tool)
        })
        .collect();
    let extensions = listed
        .iter()
        .map(|(extension, name)| {
            let mut entry = Object::from_iter([("name", Value::from(name.as_str()))]);
            if let Some((server, version)) = servers.get(extension) {
                entry.push("server", Value::from(server.as_str()));
                entry.push("version", Value::from(version.as_str()));
            }
            Value::Object(entry)
        })
        .collect();
    Value::Object(Object::from_iter([
        ("extensions", Value::Array(extensions)),
        ("tools", Value::Array(tools)),
    ]))
}

/// What [`start_all`] found.
struct Started {
    /// The extensions that are ready, with their names.
    ready: Vec<(ExtensionKey, String)>,
    /// The name and version each ready one gave.
    servers: BTreeMap<ExtensionKey, (String, String)>,
    /// How many are not ready (each reported on stderr).
    failed: usize,
}

/// Waits until every extension is ready or failed (at most the longest `timeout`
/// and a second), telling on stderr why each one that is not ready is not.
fn start_all(fleet: &mut FleetProcesses, setup: &Setup) -> Started {
    let longest = setup
        .specs
        .iter()
        .map(|s| s.timeout.unwrap_or(setup.options.timeout))
        .max()
        .unwrap_or(setup.options.timeout);
    fleet.wait_ready(longest + Duration::from_secs(1));

    let mut why: BTreeMap<ExtensionKey, String> = BTreeMap::new();
    let mut servers = BTreeMap::new();
    while let Some(event) = fleet.next_event_timeout(Duration::ZERO) {
        match event {
            Event::Ready { process, server } => {
                servers.insert(process.extension(), server);
            }
            Event::InitializeFailed { process, error } => {
                why.insert(process.extension(), format!("initialize failed: {error}"));
            }
            Event::Stopped { process, how, .. } => {
                why.entry(process.extension())
                    .or_insert_with(|| format!("the extension {how}"));
            }
            _ => {}
        }
    }
    let mut started = Started {
        ready: Vec::new(),
        servers,
        failed: 0,
    };
    for extension in fleet.fleet().extensions().collect::<Vec<_>>() {
        let name = fleet
            .fleet()
            .name(extension)
            .unwrap_or_default()
            .to_string();
        let ready = matches!(
            fleet.fleet().status(extension),
            Some(Health::Running { ready: true, .. })
        );
        if ready {
            started.ready.push((extension, name));
        } else {
            let reason = why
                .remove(&extension)
                .unwrap_or_else(|| String::from("it did not answer initialize in time"));
            eprintln!("dhara: extension '{name}': {reason}");
            started.failed += 1;
        }
    }
    started
}

/// `dhara call --config FILE TOOL [INPUT_JSON] [OPTIONS]`
pub(crate) fn call(words: &[String]) -> Status {
    let setup = match setup(words, "call", 2) {
        Ok(setup) => setup,
        Err(status) => return status,
    };
    let json_out = setup.options.json;
    let input = match setup.positional.get(1).map(|i| json::parse(i.as_bytes())) {
        None => Value::Object(Object::new()),
        Some(Ok(input)) => input,
        Some(Err(e)) => {
            let message = format!("INPUT_JSON is not JSON ({e})");
            return Failure::new(Status::Usage, "usage", message).report(json_out);
        }
    };
    let Some(tool) = setup.positional.first().cloned() else {
        return usage_error("`dhara call --config FILE` needs a tool name");
    };
    let mut fleet = start(&setup, true);
    let started = start_all(&mut fleet, &setup);
    let status = match fleet.fleet().resolve(&tool).map(|t| t.extension) {
        Ok(extension) => {
            let options = options_of(&fleet, extension, &setup.options);
            let progress = |p: &dhara_protocol::message::Progress| {
                eprintln!("progress: {}", p.message);
            };
            match fleet.call(&tool, input, progress) {
                Ok(result) => call::print_result(&result, json_out),
                Err(error) => failure(&error, &tool, &options).report(json_out),
            }
        }
        // Unknown, with an extension missing: that may be why.
        Err(UsageError::UnknownTool { .. }) if started.failed > 0 => {
            let message = format!("cannot call `{tool}`: not every extension could start");
            Failure::new(Status::Exited, "exited", message).report(json_out)
        }
        Err(error) => usage(&error, &tool, &fleet).report(json_out),
    };
    fleet.shutdown();
    status
}

/// The options a failure of a call to `extension` is told with: its own timeout.
fn options_of(fleet: &FleetProcesses, extension: ExtensionKey, options: &Options) -> Options {
    let mut options = options.clone();
    if let Some(core) = fleet
        .fleet()
        .process(extension)
        .and_then(|p| fleet.fleet().core(p))
    {
        options.timeout = core.config().timeout;
    }
    options
}

/// A call the fleet refused.
fn usage(error: &UsageError, tool: &str, fleet: &FleetProcesses) -> Failure {
    let (status, kind) = match error {
        UsageError::ExtensionFailed { .. } => (Status::Exited, "exited"),
        UsageError::AmbiguousTool { .. } => (Status::Usage, "ambiguous_tool"),
        UsageError::UnknownTool { .. } => (Status::Usage, "unknown_tool"),
        _ => (Status::Usage, "usage"),
    };
    let mut message = format!("cannot call `{tool}`: {error}");
    if let UsageError::UnknownTool { .. } = error {
        let known: Vec<&str> = fleet.fleet().tools().map(|t| t.offered).collect();
        message.push_str(&format!("; known tools: {}", known.join(", ")));
    }
    Failure::new(status, kind, message)
}

/// A call that ended without a result.
fn failure(error: &FleetError, tool: &str, options: &Options) -> Failure {
    match error {
        FleetError::Call(CallError::Host(error)) => Failure::of_call(error, tool, options),
        FleetError::Call(CallError::QueueTimeout) => Failure::new(
            Status::Timeout,
            "timeout",
            format!("{tool}: its extension was not ready in time"),
        ),
        FleetError::Call(CallError::Refused(error)) => Failure::new(
            Status::Usage,
            "usage",
            format!("cannot call `{tool}`: {error}"),
        ),
        FleetError::Call(other) => {
            Failure::new(Status::Exited, "exited", format!("{tool}: {other}"))
        }
        FleetError::Usage(error) => Failure::new(
            Status::Usage,
            "usage",
            format!("cannot call `{tool}`: {error}"),
        ),
        // Closed, and anything a later driver adds.
        _ => Failure::new(
            Status::Exited,
            "exited",
            format!("{tool}: the extensions are gone"),
        ),
    }
}

/// A call the session started and has not printed yet.
struct Pending {
    line: usize,
    /// The tool as the line named it.
    tool: String,
}

/// `dhara session --config FILE [OPTIONS]`: calls from stdin lines, concurrently,
/// over every extension of the file, which are restarted as their policies say.
pub(crate) fn session(words: &[String]) -> Status {
    let setup = match setup(words, "session", 0) {
        Ok(setup) => setup,
        Err(status) => return status,
    };
    let mut fleet = start(&setup, false);
    let mut worst = match start_all(&mut fleet, &setup).failed {
        0 => Status::Success,
        _ => Status::Exited,
    };
    let (to_session, lines) = mpsc::sync_channel(16);
    thread::spawn(move || call::read_lines(std::io::stdin().lock(), to_session));

    let mut pending: BTreeMap<CallHandle, Pending> = BTreeMap::new();
    let mut input_ended = false;
    loop {
        // The session waits: no line is read while the fleet's wait queue is full,
        // so the reader thread blocks on its bounded channel and stdin stays unread.
        while fleet.fleet().calls_waiting() < fleet.fleet().config().max_queued {
            let Ok(line) = lines.try_recv() else {
                break;
            };
            match line {
                Line::Text(number, text) if !text.trim().is_empty() => {
                    match start_session_call(&mut fleet, number, &text) {
                        Ok((call, started)) => {
                            pending.insert(call, started);
                        }
                        Err(failure) => {
                            worst = worst.max(failure.status);
                            call::print_session_line(number, None, Err(failure));
                        }
                    }
                }
                Line::Text(..) => {}
                Line::TooLong(number) => {
                    let message = format!("line {number} is longer than {MAX_SESSION_LINE} bytes");
                    let failure = Failure::new(Status::Usage, "usage", message);
                    worst = worst.max(failure.status);
                    call::print_session_line(number, None, Err(failure));
                }
                Line::End => input_ended = true,
            }
        }
        if input_ended && pending.is_empty() {
            break;
        }
        let Some(event) = fleet.next_event_timeout(SESSION_POLL) else {
            continue;
        };
        match event {
            Event::CallEnded { call, result } => {
                let Some(done) = pending.remove(&call) else {
                    continue;
                };
                let extension = fleet.fleet().resolve(&done.tool).map(|t| t.extension);
                let options = match extension {
                    Ok(extension) => options_of(&fleet, extension, &setup.options),
                    Err(_) => setup.options.clone(),
                };
                let outcome =
                    result.map_err(|e| failure(&FleetError::Call(e), &done.tool, &options));
                let status = match &outcome {
                    Ok(result) if result.is_error => Status::ToolError,
                    Ok(_) => Status::Success,
                    Err(failure) => failure.status,
                };
                worst = worst.max(status);
                call::print_session_line(done.line, Some(&done.tool), outcome);
            }
            Event::Progress {
                call: Some(call),
                progress,
                ..
            } if pending.contains_key(&call) => {
                let line = pending.get(&call).map_or(0, |p| p.line);
                eprintln!("progress (line {line}): {}", progress.message);
            }
            Event::Stopped { process, how, next } => {
                let name = fleet.fleet().name(process.extension()).unwrap_or_default();
                eprintln!("dhara: extension '{name}' {how}; {}", describe_next(&next));
            }
            Event::Protocol { process, error } => {
                let name = fleet.fleet().name(process.extension()).unwrap_or_default();
                eprintln!("dhara: protocol ({name}): {error}");
            }
            _ => {}
        }
    }
    fleet.shutdown();
    worst
}

fn describe_next(next: &fleet::Next) -> String {
    match next {
        fleet::Next::RestartAt(_) => String::from("it will be started again"),
        fleet::Next::RestartOnNextCall(_) => String::from("it will be started for the next call"),
        fleet::Next::Failed(failure) => format!("it is {failure}"),
        _ => String::from("it is not started again"),
    }
}

/// Reads one session line, `{"tool": "...", "input": {...}}`, and starts its call.
fn start_session_call(
    fleet: &mut FleetProcesses,
    number: usize,
    text: &str,
) -> Result<(CallHandle, Pending), Failure> {
    let usage_failure = |message: String| Failure::new(Status::Usage, "usage", message);
    let request = json::parse(text.as_bytes())
        .map_err(|e| usage_failure(format!("line {number} is not JSON ({e})")))?;
    let Some(tool) = request.get("tool").and_then(Value::as_str) else {
        return Err(usage_failure(format!(
            "line {number} has no \"tool\": write {{\"tool\": \"name\", \"input\": {{...}}}}"
        )));
    };
    let input = request
        .get("input")
        .cloned()
        .unwrap_or(Value::Object(Object::new()));
    let now = fleet.now();
    let call = fleet
        .fleet_mut()
        .execute(now, tool, input)
        .map_err(|e| usage(&e, tool, fleet))?;
    let pending = Pending {
        line: number,
        tool: tool.to_string(),
    };
    Ok((call, pending))
}
