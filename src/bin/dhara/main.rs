//! `dhara`: run the demo, call an extension's tools, check an extension, or serve the
//! example extension.

/// `print!` that ignores a closed stdout (as when piped into `head`) instead of
/// panicking.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($arg)*);
    }};
}

/// `println!` that ignores a closed stdout.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

mod args;
mod call;
mod check;
mod config;
mod connect;
mod demo;
mod example_extension;
mod fleet;
mod mcp;
mod png;

use std::process::ExitCode;

/// The usage text, for `dhara --help` and usage errors.
pub const USAGE: &str = "\
dhara: call and check Dhara extensions (JSON-RPC 2.0 over stdio)

USAGE:
    dhara demo [--trace]
    dhara tools [OPTIONS] -- CMD [ARGS...]
    dhara tools --config FILE [--env KEY=VALUE]... [OPTIONS]
    dhara call TOOL [INPUT_JSON] [OPTIONS] -- CMD [ARGS...]
    dhara call --config FILE TOOL [INPUT_JSON] [OPTIONS]
    dhara session [OPTIONS] -- CMD [ARGS...]
    dhara session --config FILE [OPTIONS]
    dhara check [OPTIONS] -- CMD [ARGS...]
    dhara check --config FILE NAME [OPTIONS]
    dhara example-extension
    dhara mcp adapt [OPTIONS] -- CMD [ARGS...]
    dhara mcp serve [OPTIONS] -- CMD [ARGS...]

COMMANDS:
    demo               run a short session against the example extension
    tools              initialize the extension and list its tools
    call               call one tool (INPUT_JSON defaults to {})
    session            read {\"tool\": ..., \"input\": ...} lines from stdin, run them
                       concurrently, print one JSON line per finished call
    check              check an extension for conformance; it calls each tool
                       (see `dhara check --help`)
    example-extension  serve the example extension on stdin/stdout
    mcp adapt          run an MCP server CMD, be a Dhara extension on stdin/stdout
    mcp serve          run a Dhara extension CMD, be an MCP server on stdin/stdout

OPTIONS:
    --timeout DUR   time allowed for each call (default 30s)
    --grace DUR     time allowed to exit after shutdown, before the kill (default 5s)
    --cwd DIR       the extension's working directory
    --json          machine-readable output: one JSON line per result
    --trace         every message, with direction and time, to stderr
    --config FILE   a JSON file of named extensions, in place of `-- CMD`:
                    {\"extensions\": {\"web\": {\"command\": [\"node\", \"web.js\"]}}}
                    (fields: command, cwd, env, timeout, grace, restart); a field
                    there wins over --timeout, --grace and --cwd for its extension
    --env KEY=VALUE an environment variable for every extension of --config
                    (the file's env wins over it)
DUR: 250ms, 2s, 1m, or a bare number of seconds

EXIT STATUS:
    0 success   1 the tool reported an error (isError)   2 usage error
    3 JSON-RPC error or protocol violation   4 timeout
    5 the extension exited or could not be started
";

/// How a command ended; the process exit code. Later variants are worse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// A result with `isError: false`, or a command that did its job.
    Success = 0,
    /// A result with `isError: true`.
    ToolError = 1,
    /// The command line was wrong.
    Usage = 2,
    /// A JSON-RPC error, or the extension broke the protocol.
    Protocol = 3,
    /// A call timed out.
    Timeout = 4,
    /// The extension exited early or could not be started.
    Exited = 5,
}

impl From<Status> for ExitCode {
    fn from(status: Status) -> ExitCode {
        ExitCode::from(status as u8)
    }
}

/// Prints a usage mistake and how to get help; returns [`Status::Usage`].
pub fn usage_error(message: &str) -> Status {
    eprintln!("dhara: {message}");
    eprintln!("Run `dhara --help` for usage.");
    Status::Usage
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, rest)) = args.split_first() else {
        eprint!("{USAGE}");
        return Status::Usage.into();
    };
    let status = match command.as_str() {
        "demo" => demo::run(rest),
        "tools" if config::wanted(rest) => fleet::tools(rest),
        "tools" => call::tools(rest),
        "call" if config::wanted(rest) => fleet::call(rest),
        "call" => call::call(rest),
        "session" if config::wanted(rest) => fleet::session(rest),
        "session" => call::session(rest),
        "mcp" => return ExitCode::from(u8::try_from(mcp::run(rest)).unwrap_or(1)),
        "check" => return ExitCode::from(u8::try_from(check::run(rest)).unwrap_or(1)),
        "example-extension" => {
            if let Some(extra) = rest.first() {
                return usage_error(&format!(
                    "`dhara example-extension` takes no arguments (got `{extra}`)"
                ))
                .into();
            }
            return ExitCode::from(u8::try_from(example_extension::run()).unwrap_or(1));
        }
        "-h" | "--help" | "help" => {
            out!("{USAGE}");
            Status::Success
        }
        other => usage_error(&format!(
            "unknown command `{other}`; the commands are demo, tools, call, session, check, example-extension and mcp"
        )),
    };
    status.into()
}
