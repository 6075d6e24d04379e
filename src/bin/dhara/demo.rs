//! `dhara demo`: a whole session against the example extension, as a transcript.

use std::io::{IsTerminal, Write};
use std::process::Command;
use std::time::{Duration, Instant};

use dhara_protocol::driver::{self, ExtensionProcess, FleetError, FleetProcesses, Stderr};
use dhara_protocol::fleet::{self, Event as FleetEvent};
use dhara_protocol::host::{CallError, CallOptions, Config, Event, ShutdownReason};
use dhara_protocol::json::{self, Value};
use dhara_protocol::message::{ExecuteParams, Progress, ToolResult};

use crate::args::{self, Accepts};
use crate::connect::{self, describe_content, describe_error_object};
use crate::{Status, usage_error};

/// The timeout of the call that never ends, and the grace after it.
const SHORT_TIMEOUT: Duration = Duration::from_secs(1);
const GRACE: Duration = Duration::from_secs(1);
/// The timeout of every other call.
const TIMEOUT: Duration = Duration::from_secs(10);

/// `dhara demo [--trace]`
pub(crate) fn run(words: &[String]) -> Status {
    let accepts = Accepts {
        process: false,
        json: false,
        trace: true,
        ..Accepts::NONE
    };
    let invocation = match args::parse(words, accepts) {
        Ok(invocation) => invocation,
        Err(e) => return usage_error(&format!("demo: {e}")),
    };
    if invocation.help {
        out!("{}", crate::USAGE);
        return Status::Success;
    }
    if let Some(extra) = invocation.positional.first().or(invocation.command.first()) {
        return usage_error(&format!("`dhara demo` takes no arguments (got `{extra}`)"));
    }
    let mut demo = match Demo::start(invocation.options.trace) {
        Ok(demo) => demo,
        Err(message) => {
            eprintln!("dhara: {message}");
            return Status::Exited;
        }
    };
    match demo.run() {
        Ok(()) => Status::Success,
        Err(message) => {
            eprintln!("dhara: demo failed: {message}");
            Status::Protocol
        }
    }
}

struct Demo {
    extension: ExtensionProcess,
    started: Instant,
    terminal: bool,
}

impl Demo {
    fn start(trace: bool) -> Result<Demo, String> {
        let exe =
            std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
        let mut command = Command::new(&exe);
        command.arg("example-extension");
        let config = Config::default()
            .timeout(TIMEOUT)
            .grace(GRACE)
            .validate_input(false);
        let mut options = driver::Options::default();
        options.config = config;
        options.stderr = Stderr::Prefixed(String::from("[example-extension] "));
        let mut extension = ExtensionProcess::spawn(command, options)
            .map_err(|e| format!("cannot start {} example-extension: {e}", exe.display()))?;
        if trace {
            extension.set_trace(connect::trace_to_stderr());
        }
        Ok(Demo {
            extension,
            started: Instant::now(),
            terminal: std::io::stdout().is_terminal(),
        })
    }

    fn run(&mut self) -> Result<(), String> {
        outln!("The Dhara demo: this process is the Core; the example extension is a child");
        outln!("process speaking JSON-RPC 2.0 on its stdin/stdout, one message per line.");
        outln!("(`dhara demo --trace` shows every message on stderr.)");
        outln!();
        outln!(
            "== started `dhara example-extension` (pid {}, in its own process group)",
            self.extension.id()
        );

        self.step("initialize");
        let cwd = std::env::current_dir().unwrap_or_default();
        let info = self
            .extension
            .initialize(&cwd.display().to_string())
            .map_err(|e| format!("initialize: {e}"))?;
        outln!(
            "   {} {} offers {} tools:",
            info.name,
            info.version,
            info.tools.len()
        );
        for tool in &info.tools {
            outln!(
                "     {:<10} {}",
                tool.name,
                tool.description.as_deref().unwrap_or("")
            );
        }

        self.show_call(
            "echo",
            r#"{"text": "Hello from the Core"}"#,
            "a normal call",
        )?;
        self.show_call("add", r#"{"a": 2, "b": 40}"#, "numbers in, text out")?;
        self.show_call(
            "sleep",
            r#"{"ms": 800}"#,
            "progress arrives while the call runs",
        )?;
        self.show_call("image", "{}", "binary content travels as base64")?;
        self.show_call("fail", "{}", "a tool error is a result with isError: true")?;
        self.show_call("echo", "{}", "bad input is refused with a JSON-RPC error")?;
        self.show_timeout()?;
        self.show_fleet()?;

        outln!();
        outln!("Done in {:.1}s.", self.started.elapsed().as_secs_f64());
        Ok(())
    }

    fn step(&self, what: &str) {
        outln!();
        outln!("== [{:>5.2}s] {what}", self.started.elapsed().as_secs_f64());
    }

    fn show_call(&mut self, tool: &str, input: &str, why: &str) -> Result<(), String> {
        let input = json::parse(input.as_bytes()).map_err(|e| format!("demo input: {e}"))?;
        self.step(&format!("call {tool} {input}: {why}"));
        let terminal = self.terminal;
        let mut progress_shown = false;
        let mut on_progress = |progress: &Progress| {
            progress_shown = true;
            if terminal {
                out!("\r   progress: {:<40}", progress.message);
                let _ = std::io::stdout().flush();
            } else {
                outln!("   progress: {}", progress.message);
            }
        };
        let outcome = self.extension.call(tool, input, &mut on_progress);
        if terminal && progress_shown {
            outln!();
        }
        match outcome {
            Ok(result) => print_result(&result),
            Err(driver::Error::Call(CallError::Rpc(error))) => {
                outln!("   JSON-RPC {}", describe_error_object(&error));
            }
            Err(e) => return Err(format!("{tool}: {e}")),
        }
        Ok(())
    }

    /// A call that never ends, with a short timeout: the call fails at once, the Core
    /// sends `shutdown`, waits out the grace, and kills the process group.
    fn show_timeout(&mut self) -> Result<(), String> {
        self.step(&format!(
            "call hang {{}} with a {} timeout: the extension never answers",
            args::format_duration(SHORT_TIMEOUT)
        ));
        let now = self.extension.now();
        let options = CallOptions {
            timeout: Some(SHORT_TIMEOUT),
            ..CallOptions::default()
        };
        let params = ExecuteParams::new("hang", Value::Object(Default::default()));
        let call = self
            .extension
            .core_mut()
            .execute_with(now, params, options)
            .map_err(|e| format!("hang: {e}"))?;
        for event in self.extension.events() {
            let at = self.started.elapsed().as_secs_f64();
            match event {
                Event::CallEnded {
                    call: c,
                    result: Err(CallError::Timeout { .. }),
                } if c == call => {
                    outln!(
                        "   [{at:>5.2}s] no reply in time: the call ends now with a timeout error"
                    );
                }
                Event::ShuttingDown {
                    reason: ShutdownReason::Timeout { .. },
                } => {
                    outln!(
                        "   [{at:>5.2}s] the Core sends `shutdown` and allows {} of grace",
                        args::format_duration(GRACE)
                    );
                    outln!("           (`hang` ignores shutdown, so the extension does not exit)");
                }
                Event::Closed { code: None } => {
                    outln!(
                        "   [{at:>5.2}s] grace over: the Core killed the process group; session closed"
                    );
                }
                Event::Closed { code: Some(code) } => {
                    outln!("   [{at:>5.2}s] the extension exited with code {code}; session closed");
                }
                Event::CallEnded { result, .. } => {
                    return Err(format!("hang ended unexpectedly: {result:?}"));
                }
                _ => {}
            }
        }
        Ok(())
    }
}

impl Demo {
    /// Two extensions behind one tool list: one is killed after a timeout and started
    /// again, and serves the next call.
    fn show_fleet(&mut self) -> Result<(), String> {
        self.step("two extensions, `left` and `right`, behind one tool list");
        let exe =
            std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
        let mut fleet = FleetProcesses::new(
            fleet::Config::default(),
            Stderr::Prefixed(String::from("[example-extension ")),
        );
        let host = Config::default()
            .timeout(TIMEOUT)
            .grace(GRACE)
            .validate_input(false);
        for name in ["left", "right"] {
            let exe = exe.clone();
            let command = Box::new(move || {
                let mut command = Command::new(&exe);
                command.arg("example-extension");
                command
            });
            let config = fleet::ExtensionConfig::default().host(host.clone());
            fleet
                .add(name, config, command)
                .map_err(|e| format!("{name}: {e}"))?;
        }
        if !fleet.wait_ready(TIMEOUT) {
            return Err(String::from("the two extensions did not get ready"));
        }
        let right = fleet.fleet().key("right").ok_or("no `right`")?;
        let names: Vec<&str> = fleet.fleet().tools().map(|t| t.offered).collect();
        outln!(
            "   {} tools; both offer every name, so each is listed by its qualified name:",
            names.len()
        );
        for row in names.chunks(7) {
            outln!("     {}", row.join(" "));
        }
        match fleet.call("echo", Value::Object(Default::default()), |_| {}) {
            Err(FleetError::Usage(e)) => outln!("   call echo: refused: {e}"),
            other => return Err(format!("echo was not refused: {other:?}")),
        }
        let input = json::parse(br#"{"text": "from the left"}"#).map_err(|e| e.to_string())?;
        let result = fleet
            .call("left__echo", input, |_| {})
            .map_err(|e| format!("left__echo: {e}"))?;
        outln!("   call left__echo: {}", describe_result(&result));

        let pid = fleet.pid(right).unwrap_or_default();
        let first = fleet.fleet().process(right);
        let options = CallOptions {
            timeout: Some(SHORT_TIMEOUT),
            ..CallOptions::default()
        };
        outln!(
            "   call right__hang with a {} timeout (`right` is pid {pid}):",
            args::format_duration(SHORT_TIMEOUT)
        );
        match fleet.call_with(
            "right__hang",
            Value::Object(Default::default()),
            options,
            |_| {},
        ) {
            Err(e) => outln!("   [{:>5.2}s] right__hang: {e}", self.elapsed()),
            Ok(result) => return Err(format!("hang answered: {result:?}")),
        }
        while let Some(event) = fleet.next_event() {
            match event {
                FleetEvent::Stopped { process, how, .. } if process.extension() == right => {
                    outln!(
                        "   [{:>5.2}s] `right` {how}; the fleet starts it again",
                        self.elapsed()
                    );
                }
                FleetEvent::Ready { process, .. }
                    if process.extension() == right && Some(process) != first =>
                {
                    outln!(
                        "   [{:>5.2}s] `right` is ready again: start {}, pid {}",
                        self.elapsed(),
                        process.start(),
                        fleet.pid(right).unwrap_or_default()
                    );
                    break;
                }
                _ => {}
            }
        }
        let input =
            json::parse(br#"{"text": "served by the new process"}"#).map_err(|e| e.to_string())?;
        let result = fleet
            .call("right__echo", input, |_| {})
            .map_err(|e| format!("right__echo: {e}"))?;
        outln!("   call right__echo: {}", describe_result(&result));
        fleet.shutdown();
        Ok(())
    }

    fn elapsed(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }
}

fn describe_result(result: &ToolResult) -> String {
    let label = if result.is_error {
        "tool error"
    } else {
        "result"
    };
    let content: Vec<String> = result
        .content
        .iter()
        .map(|c| describe_content(c).trim_end().to_string())
        .collect();
    format!("{label}: {}", content.join(" "))
}

fn print_result(result: &ToolResult) {
    let label = if result.is_error {
        "tool error"
    } else {
        "result"
    };
    for content in &result.content {
        outln!("   {label}: {}", describe_content(content).trim_end());
    }
}
