//! [`StdioExtension`]: an [`Extension`] served over this process's stdin and stdout,
//! with tools given as closures.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::string::{String, ToString};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread;
use std::time::Duration;
use std::vec::Vec;
use std::{boxed::Box, eprintln, format};

use crate::extension::{Config, Event, Extension, Input, Output, RequestHandle, ServerInfo};
use crate::json::Value;
use crate::message::{Tool, ToolResult};
use crate::rpc::{ErrorCode, ErrorObject};

/// The size of one read from stdin.
const READ_CHUNK: usize = 8 * 1024;
/// How many messages (stdin chunks, progress, results) may wait for the loop.
const CHANNEL_MESSAGES: usize = 64;
/// After stdin has closed, how long calls still running may take before the process
/// exits anyway: the host is gone and nobody will read their results.
const STDIN_CLOSED_GRACE: Duration = Duration::from_secs(5);

/// A tool's code: takes the call's input and the [`RunningCall`] (to send progress),
/// and returns the result (`isError` in it for a tool-level failure) or a JSON-RPC error.
pub type ToolHandler =
    dyn Fn(Value, &RunningCall) -> Result<ToolResult, ErrorObject> + Send + Sync + 'static;

/// A tool call in progress, handed to its [`ToolHandler`].
#[derive(Debug)]
pub struct RunningCall {
    request: RequestHandle,
    to_loop: SyncSender<Wake>,
}

impl RunningCall {
    /// Sends a `progress` notification for this call (it carries the request's id).
    pub fn progress(&self, message: &str) {
        // The send fails only when the loop has ended (the process is exiting).
        let _ = self
            .to_loop
            .send(Wake::Progress(self.request, message.to_string()));
    }
}

/// What wakes the loop.
#[derive(Debug)]
enum Wake {
    Stdin(Vec<u8>),
    StdinClosed,
    Progress(RequestHandle, String),
    Finished(RequestHandle, Result<ToolResult, ErrorObject>),
}

/// An extension over this process's stdin and stdout: the shortest path to writing one
/// in Rust. Each call runs on its own thread, so calls overlap.
///
/// ```no_run
/// use dhara_protocol::driver::StdioExtension;
/// use dhara_protocol::json::{Object, Value};
/// use dhara_protocol::message::{Tool, ToolResult};
///
/// let schema = Value::Object(Object::from_iter([("type", Value::from("object"))]));
/// let code = StdioExtension::new("hello", "1.0.0")
///     .tool(Tool::new("hello", "Say hello", schema), |_input, call| {
///         call.progress("thinking...");
///         Ok(ToolResult::text("Hello!"))
///     })
///     .serve();
/// std::process::exit(code);
/// ```
pub struct StdioExtension {
    info: ServerInfo,
    tools: Vec<Tool>,
    handlers: BTreeMap<String, Arc<ToolHandler>>,
    config: Option<Config>,
}

impl StdioExtension {
    /// An extension with this name and version, and no tools yet.
    pub fn new(name: &str, version: &str) -> StdioExtension {
        StdioExtension {
            info: ServerInfo::new(name, version),
            tools: Vec::new(),
            handlers: BTreeMap::new(),
            config: None,
        }
    }

    /// Adds a tool and the code that runs it. A tool with the same name replaces the
    /// earlier one.
    #[must_use]
    pub fn tool(
        mut self,
        tool: Tool,
        handler: impl Fn(Value, &RunningCall) -> Result<ToolResult, ErrorObject> + Send + Sync + 'static,
    ) -> StdioExtension {
        self.tools.retain(|t| t.name != tool.name);
        self.handlers.insert(tool.name.clone(), Arc::new(handler));
        self.tools.push(tool);
        self
    }

    /// Sets the Extension endpoint's configuration (limits, input validation).
    /// [`Config::custom_methods`] is left off: tools are all this driver serves, so
    /// the endpoint answers any other method with -32601 itself.
    #[must_use]
    pub fn config(mut self, config: Config) -> StdioExtension {
        self.config = Some(config.custom_methods(false));
        self
    }

    /// Serves on stdin and stdout until the endpoint says to exit; returns the exit
    /// code to end the process with.
    pub fn serve(self) -> i32 {
        self.serve_on(io::stdin(), io::stdout())
    }

    /// Serves on any byte streams (for tests, or sockets); returns the exit code.
    ///
    /// This is the loop: a thread reads `input` into a channel that the tools' threads
    /// also send their progress and results into; the loop feeds each message to the
    /// endpoint, writes what it transmits (flushing each message), and starts a thread
    /// per call. A write error means the host is gone: the code is then 1.
    pub fn serve_on(self, input: impl Read + Send + 'static, mut output: impl Write) -> i32 {
        let StdioExtension {
            info,
            tools,
            handlers,
            config,
        } = self;
        let mut endpoint = match config {
            Some(config) => Extension::with_config(info, tools, config),
            None => Extension::new(info, tools),
        };
        let (to_loop, wakes) = mpsc::sync_channel(CHANNEL_MESSAGES);
        if spawn_stdin_reader(input, to_loop.clone()).is_err() {
            return 1;
        }
        // Once stdin has closed: the instant by which the process exits in any case.
        let mut exit_by = None;
        loop {
            match endpoint.poll_output() {
                Output::Transmit(bytes) => {
                    if output
                        .write_all(bytes)
                        .and_then(|()| output.flush())
                        .is_err()
                    {
                        return 1;
                    }
                }
                Output::Event(event) => handle_event(&mut endpoint, event, &handlers, &to_loop),
                Output::Exit { code } => return code,
                Output::Wait => {
                    let Some(wake) = next_wake(&wakes, exit_by) else {
                        // Stdin closed and the calls still running did not finish in
                        // time: the host is gone, so exit.
                        return 0;
                    };
                    match wake {
                        Wake::Stdin(bytes) => endpoint.handle_input(Input::Stdin(&bytes)),
                        Wake::StdinClosed => {
                            exit_by = Some(std::time::Instant::now() + STDIN_CLOSED_GRACE);
                            endpoint.handle_input(Input::StdinClosed);
                        }
                        Wake::Progress(request, message) => {
                            // Refused only when the call has already ended.
                            let _ = endpoint.progress(request, &message);
                        }
                        Wake::Finished(request, outcome) => {
                            let _ = match outcome {
                                Ok(result) => endpoint.respond(request, result),
                                Err(error) => endpoint.respond_error(request, error),
                            };
                        }
                    }
                }
            }
        }
    }
}

impl core::fmt::Debug for StdioExtension {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("StdioExtension")
            .field("info", &self.info)
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

/// Waits for the next message; once stdin has closed, only until `exit_by`.
fn next_wake(wakes: &Receiver<Wake>, exit_by: Option<std::time::Instant>) -> Option<Wake> {
    match exit_by {
        Some(exit_by) => {
            let left = exit_by.saturating_duration_since(std::time::Instant::now());
            wakes.recv_timeout(left).ok()
        }
        None => wakes.recv().ok(),
    }
}

/// Acts on one event from the endpoint: starts a call on its own thread, or answers
/// what the tools cannot.
fn handle_event(
    endpoint: &mut Extension,
    event: Event,
    handlers: &BTreeMap<String, Arc<ToolHandler>>,
    to_loop: &SyncSender<Wake>,
) {
    match event {
        Event::Execute {
            request,
            tool_name,
            input,
        } => {
            // Every tool is added with its handler, and the endpoint refuses calls of
            // tools it does not offer, so a handler is always found.
            let Some(handler) = handlers.get(tool_name.as_str()).cloned() else {
                let error = ErrorObject::new(ErrorCode::INTERNAL_ERROR, "No handler for the tool");
                let _ = endpoint.respond_error(request, error);
                return;
            };
            let call = RunningCall {
                request,
                to_loop: to_loop.clone(),
            };
            let started = thread::Builder::new()
                .name(format!("tool-{tool_name}"))
                .spawn(move || {
                    let outcome = catch_unwind(AssertUnwindSafe(|| handler(input, &call)))
                        .unwrap_or_else(|_| {
                            Err(ErrorObject::new(
                                ErrorCode::INTERNAL_ERROR,
                                format!("Tool '{tool_name}' failed unexpectedly"),
                            ))
                        });
                    let _ = call.to_loop.send(Wake::Finished(call.request, outcome));
                });
            if started.is_err() {
                let error = ErrorObject::new(ErrorCode::INTERNAL_ERROR, "Could not start the tool");
                let _ = endpoint.respond_error(request, error);
            }
        }
        Event::Protocol(problem) => eprintln!("dhara extension: {problem}"),
        // Initialized, Shutdown (the exit follows once no call is pending), and unknown
        // notifications need nothing from the tools; requests for other methods are
        // answered by the endpoint (custom methods are off).
        _ => {}
    }
}

/// Reads `input` to its end on a thread, then sends [`Wake::StdinClosed`].
fn spawn_stdin_reader(
    mut input: impl Read + Send + 'static,
    to_loop: SyncSender<Wake>,
) -> io::Result<()> {
    thread::Builder::new()
        .name(String::from("dhara-stdin"))
        .spawn(move || {
            let mut buf = Box::new([0u8; READ_CHUNK]);
            loop {
                match input.read(&mut buf[..]) {
                    Ok(0) => break,
                    Ok(n) => {
                        let chunk = buf[..n.min(buf.len())].to_vec();
                        if to_loop.send(Wake::Stdin(chunk)).is_err() {
                            return;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = to_loop.send(Wake::StdinClosed);
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{self, Object};
    use std::io::Cursor;

    fn object_schema() -> Value {
        Value::Object(Object::from_iter([("type", Value::from("object"))]))
    }

    fn serve(input: &str) -> (i32, Vec<Value>) {
        let mut output = Vec::new();
        let code = StdioExtension::new("test", "1.0")
            .tool(
                Tool::new("work", "Works in steps", object_schema()),
                |_, call| {
                    call.progress("step 1");
                    call.progress("step 2");
                    Ok(ToolResult::text("worked"))
                },
            )
            .tool(Tool::new("broken", "Panics", object_schema()), |_, _| {
                panic!("the tool's own bug")
            })
            .serve_on(Cursor::new(input.to_string().into_bytes()), &mut output);
        let lines = output
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| json::parse(l).expect("output lines are JSON"))
            .collect();
        (code, lines)
    }

    #[test]
    fn calls_progress_and_exit_on_shutdown() {
        let (code, lines) = serve(concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"version":"0.1.0","cwd":"/"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/execute","params":{"toolName":"work","input":{}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"shutdown"}"#,
            "\n",
        ));
        assert_eq!(code, 0);
        assert_eq!(lines.len(), 4, "{lines:?}");
        assert_eq!(lines[0]["result"]["name"], Value::from("test"));
        assert_eq!(lines[1]["method"], Value::from("progress"));
        assert_eq!(lines[1]["params"]["message"], Value::from("step 1"));
        assert_eq!(lines[1]["params"]["id"], Value::from(2u64));
        assert_eq!(lines[2]["params"]["message"], Value::from("step 2"));
        assert_eq!(lines[3]["id"], Value::from(2u64));
        assert_eq!(
            lines[3]["result"]["content"][0]["text"],
            Value::from("worked")
        );
    }

    #[test]
    fn a_panicking_tool_is_an_internal_error_and_end_of_input_exits() {
        let (code, lines) = serve(concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"version":"0.1.0","cwd":"/"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":"b","method":"tools/execute","params":{"toolName":"broken","input":{}}}"#,
            "\n",
        ));
        assert_eq!(code, 0);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(lines[1]["id"], Value::from("b"));
        assert_eq!(lines[1]["error"]["code"], Value::from(-32603));
    }
}
