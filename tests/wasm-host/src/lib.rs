//! The Core endpoint compiled to `wasm32-unknown-unknown`, for a JavaScript host.
//!
//! The ABI is plain functions over linear memory, without generated bindings: the
//! host owns the extension process, the pipes and the clock; this module owns one
//! [`Core`]. Times are milliseconds as `f64` since an origin the host chooses
//! (`performance.now()`).
//!
//! * Setup: `core_new(timeout_ms, grace_ms)` starts a fresh Core.
//! * Passing bytes in: `input_buffer(len)` returns where to write `len` bytes; the
//!   next call reads them (stdout bytes, the working directory, `tools/execute`
//!   params as JSON).
//! * Commands: `core_initialize(len, now)`, `core_execute(len, timeout_ms, now)` and
//!   `core_shutdown(now)` return the call id (or 1), or 0 when refused; the reason is
//!   then in the output buffer.
//! * What happened: `core_stdout(len, now)`, `core_stdout_closed(now)`,
//!   `core_exited(code, now)` (a negative code: ended by a signal), `core_timeout(now)`.
//! * What to do: `poll()` returns [`POLL_WAIT`], [`POLL_TRANSMIT`], [`POLL_EVENT`],
//!   [`POLL_KILL`] or [`POLL_CLOSE_STDIN`]. The bytes to write, or the event as JSON,
//!   are at `output_ptr()` for `output_len()` bytes until the next call; after a
//!   wait, `wait_deadline_ms()` is the instant to call `core_timeout` at, or -1 when
//!   there is none.
//!
//! Handing a pointer to the host needs no `unsafe`: the buffers are `Vec`s owned here,
//! and their addresses are offsets into linear memory. The only unsafe-marked code is
//! the `#[unsafe(no_mangle)]` attribute on each export.

use std::cell::RefCell;
use std::time::Duration;

use dhara_protocol::host::{
    CallError, CallOptions, Config, Core, Event, Input, Output, Reply, ShutdownReason,
};
use dhara_protocol::json::{self, Object, Value};
use dhara_protocol::message::{ExecuteParams, InitializeParams, Tool};
use dhara_protocol::time::Instant;

/// `poll()`: nothing to do until new input, or until `wait_deadline_ms()`.
pub const POLL_WAIT: u32 = 0;
/// `poll()`: write the output bytes to the extension's stdin, then poll again.
pub const POLL_TRANSMIT: u32 = 1;
/// `poll()`: the output holds an event as one JSON object; poll again.
pub const POLL_EVENT: u32 = 2;
/// `poll()`: kill the extension process now, then report the exit.
pub const POLL_KILL: u32 = 3;
/// `poll()`: close the extension's stdin (after the bytes written before), then poll
/// again.
pub const POLL_CLOSE_STDIN: u32 = 4;

/// The module's one Core and the buffers shared with the host.
struct Host {
    core: Core,
    /// Bytes the host writes in for the next call.
    input: Vec<u8>,
    /// What the last call produced: bytes to transmit, an event, or an error message.
    output: Vec<u8>,
    /// The deadline of the last `POLL_WAIT`, in milliseconds, or -1.
    deadline_ms: f64,
}

impl Host {
    fn new(config: Config) -> Host {
        Host {
            core: Core::new(config),
            input: Vec::new(),
            output: Vec::new(),
            deadline_ms: -1.0,
        }
    }

    /// The input bytes the host wrote, `len` of them at most.
    fn input(&self, len: u32) -> &[u8] {
        let len = (len as usize).min(self.input.len());
        &self.input[..len]
    }

    /// Puts a refusal's reason in the output buffer; returns 0, the ABI's "refused".
    fn refuse(&mut self, reason: impl std::fmt::Display) -> u32 {
        self.output = reason.to_string().into_bytes();
        0
    }
}

thread_local! {
    static HOST: RefCell<Host> = RefCell::new(Host::new(Config::default()));
}

fn with_host<R>(f: impl FnOnce(&mut Host) -> R) -> R {
    HOST.with(|host| f(&mut host.borrow_mut()))
}

/// Milliseconds from the host's clock as an [`Instant`] (the origin if not a finite,
/// non-negative number).
fn instant(now_ms: f64) -> Instant {
    Instant::from_duration(Duration::try_from_secs_f64(now_ms / 1000.0).unwrap_or_default())
}

/// Starts a fresh Core with these call timeout and grace period.
#[unsafe(no_mangle)]
pub extern "C" fn core_new(timeout_ms: u32, grace_ms: u32) {
    let config = Config::default()
        .timeout(Duration::from_millis(timeout_ms.into()))
        .grace(Duration::from_millis(grace_ms.into()));
    with_host(|host| *host = Host::new(config));
}

/// Makes room for `len` input bytes and returns their address.
#[unsafe(no_mangle)]
pub extern "C" fn input_buffer(len: u32) -> u32 {
    with_host(|host| {
        host.input.clear();
        host.input.resize(len as usize, 0);
        host.input.as_ptr() as u32
    })
}

/// Sends `initialize`; the working directory is the `len` input bytes (UTF-8).
#[unsafe(no_mangle)]
pub extern "C" fn core_initialize(len: u32, now_ms: f64) -> u32 {
    with_host(|host| {
        let cwd = String::from_utf8_lossy(host.input(len)).into_owned();
        match host
            .core
            .initialize(instant(now_ms), InitializeParams::new(cwd))
        {
            Ok(call) => call.get() as u32,
            Err(e) => host.refuse(e),
        }
    })
}

/// Calls a tool: the `len` input bytes are `tools/execute` params as JSON
/// (`{"toolName": ..., "input": ...}`); `timeout_ms` 0 keeps the configured timeout.
#[unsafe(no_mangle)]
pub extern "C" fn core_execute(len: u32, timeout_ms: u32, now_ms: f64) -> u32 {
    with_host(|host| {
        let params = match json::parse(host.input(len)) {
            Ok(value) => ExecuteParams::from_value(&value),
            Err(e) => return host.refuse(e),
        };
        let params = match params {
            Ok(params) => params,
            Err(e) => return host.refuse(e),
        };
        let options = CallOptions {
            timeout: (timeout_ms > 0).then(|| Duration::from_millis(timeout_ms.into())),
            ..CallOptions::default()
        };
        match host.core.execute_with(instant(now_ms), params, options) {
            Ok(call) => call.get() as u32,
            Err(e) => host.refuse(e),
        }
    })
}

/// Sends `shutdown`: 1 when sent, 0 when refused.
#[unsafe(no_mangle)]
pub extern "C" fn core_shutdown(now_ms: f64) -> u32 {
    with_host(|host| match host.core.shutdown(instant(now_ms)) {
        Ok(()) => 1,
        Err(e) => host.refuse(e),
    })
}

/// The extension wrote the `len` input bytes to its stdout.
#[unsafe(no_mangle)]
pub extern "C" fn core_stdout(len: u32, now_ms: f64) {
    with_host(|host| {
        let len = (len as usize).min(host.input.len());
        let Host { core, input, .. } = host;
        core.handle_input(instant(now_ms), Input::Stdout(&input[..len]));
    });
}

/// The extension's stdout reached its end.
#[unsafe(no_mangle)]
pub extern "C" fn core_stdout_closed(now_ms: f64) {
    with_host(|host| host.core.handle_input(instant(now_ms), Input::StdoutClosed));
}

/// The extension exited with `code`; a negative code: it was ended by a signal.
#[unsafe(no_mangle)]
pub extern "C" fn core_exited(code: i32, now_ms: f64) {
    let code = (code >= 0).then_some(code);
    with_host(|host| {
        host.core
            .handle_input(instant(now_ms), Input::Exited { code })
    });
}

/// The deadline of the last wait was reached.
#[unsafe(no_mangle)]
pub extern "C" fn core_timeout(now_ms: f64) {
    with_host(|host| host.core.handle_input(instant(now_ms), Input::Timeout));
}

/// What to do next: one of the `POLL_*` kinds; see the module docs.
#[unsafe(no_mangle)]
pub extern "C" fn poll() -> u32 {
    with_host(|host| {
        let Host {
            core,
            output,
            deadline_ms,
            ..
        } = host;
        output.clear();
        match core.poll_output() {
            Output::Transmit(bytes) => {
                output.extend_from_slice(bytes);
                POLL_TRANSMIT
            }
            Output::Event(event) => {
                json::write_value(&event_json(event), output);
                POLL_EVENT
            }
            Output::Kill => POLL_KILL,
            Output::CloseStdin => POLL_CLOSE_STDIN,
            Output::Wait(deadline) => {
                *deadline_ms = deadline.map_or(-1.0, |at| at.since_origin().as_secs_f64() * 1e3);
                POLL_WAIT
            }
        }
    })
}

/// Where the output of the last call starts.
#[unsafe(no_mangle)]
pub extern "C" fn output_ptr() -> u32 {
    with_host(|host| host.output.as_ptr() as u32)
}

/// How many bytes of output the last call left.
#[unsafe(no_mangle)]
pub extern "C" fn output_len() -> u32 {
    with_host(|host| host.output.len() as u32)
}

/// The deadline of the last `POLL_WAIT` in milliseconds, or -1 when there is none.
#[unsafe(no_mangle)]
pub extern "C" fn wait_deadline_ms() -> f64 {
    with_host(|host| host.deadline_ms)
}

/// An event as one JSON object, named by its `event` member.
fn event_json(event: Event) -> Value {
    let members: Vec<(&str, Value)> = match event {
        Event::CallEnded { call, result } => {
            let outcome = match result {
                Ok(Reply::Initialized(info)) => ("initialized", Value::from(info)),
                Ok(Reply::Tools(list)) => ("tools", tool_names(&list.tools)),
                Ok(Reply::Executed(result)) => ("executed", Value::from(result)),
                Ok(other) => ("reply", Value::from(format!("{other:?}"))),
                Err(error) => ("error", call_error_json(&error)),
            };
            vec![
                ("event", Value::from("CallEnded")),
                ("call", Value::from(call.get())),
                outcome,
            ]
        }
        Event::Progress { call, progress } => vec![
            ("event", Value::from("Progress")),
            (
                "call",
                call.map_or(Value::Null, |call| Value::from(call.get())),
            ),
            ("message", Value::from(progress.message)),
        ],
        Event::ToolsChanged { tools } => vec![
            ("event", Value::from("ToolsChanged")),
            ("tools", tool_names(&tools)),
        ],
        Event::Notification { method, params } => vec![
            ("event", Value::from("Notification")),
            ("method", Value::from(method)),
            ("params", params.unwrap_or(Value::Null)),
        ],
        Event::Protocol(error) => vec![
            ("event", Value::from("Protocol")),
            ("message", Value::from(error.to_string())),
        ],
        Event::ShuttingDown { reason } => {
            let (reason, call) = match reason {
                ShutdownReason::Requested => ("Requested", None),
                ShutdownReason::Timeout { call } => ("Timeout", Some(call)),
                ShutdownReason::StdoutClosed => ("StdoutClosed", None),
                _ => ("Other", None),
            };
            vec![
                ("event", Value::from("ShuttingDown")),
                ("reason", Value::from(reason)),
                (
                    "call",
                    call.map_or(Value::Null, |call| Value::from(call.get())),
                ),
            ]
        }
        Event::Closed { code } => vec![
            ("event", Value::from("Closed")),
            ("code", code.map_or(Value::Null, Value::from)),
        ],
        other => vec![
            ("event", Value::from("Other")),
            ("debug", Value::from(format!("{other:?}"))),
        ],
    };
    Value::Object(Object::from_iter(members))
}

/// `{"kind": ..., "message": ...}` for why a call ended without a reply.
fn call_error_json(error: &CallError) -> Value {
    let kind = match error {
        CallError::Rpc(_) => "Rpc",
        CallError::Timeout { .. } => "Timeout",
        CallError::Cancelled => "Cancelled",
        CallError::ExtensionExited { .. } => "ExtensionExited",
        CallError::InvalidResult(_) => "InvalidResult",
        CallError::TooLarge { .. } => "TooLarge",
        _ => "Other",
    };
    Value::Object(Object::from_iter([
        ("kind", Value::from(kind)),
        ("message", Value::from(error.to_string())),
    ]))
}

fn tool_names(tools: &[Tool]) -> Value {
    Value::Array(
        tools
            .iter()
            .map(|tool| Value::from(tool.name.as_str()))
            .collect(),
    )
}
