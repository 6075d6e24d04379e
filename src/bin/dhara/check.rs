//! `dhara check [OPTIONS] -- CMD [ARGS...]`: a conformance check of any extension,
//! in any language.
//!
//! It starts the command, speaks the protocol to it line by line (calling its tools,
//! and sending what a well-behaved Core never sends: lines that are not JSON, invalid
//! requests, string and very large ids), and prints one row per check as it is
//! decided: PASS, FAIL, WARN or SKIP, with the reason. FAIL is kept for what breaks a
//! session with the Core of this crate; WARN for what the Core copes with or never
//! exercises (`--strict` makes it FAIL); SKIP for a row that could not run, because
//! of an earlier failure or an option. [`USAGE`] lists every row with its severity
//! and why.

mod checks;
mod harness;
mod inputs;
mod live;
mod tools;

use std::time::{Duration, Instant};

use dhara_protocol::json::{self, Object, Value};

use crate::args::{self, Accepts, format_duration};
use crate::config;
use checks::Settings;
use harness::Trace;
use live::Live;

/// Exit code when no check failed (warnings and skips allowed).
const EXIT_PASSED: i32 = 0;
/// Exit code when at least one check failed.
const EXIT_FAILED: i32 = 1;
/// Exit code for a usage error.
const EXIT_USAGE: i32 = 2;
/// Exit code when the command cannot be started.
const EXIT_NOT_STARTED: i32 = 5;

/// The default `--probe-timeout`.
const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(3);
/// The width of the check column of the table.
const CHECK_WIDTH: usize = 38;

/// `dhara check --help`.
pub(crate) const USAGE: &str = "usage: dhara check [OPTIONS] -- CMD [ARGS...]

Checks that an extension works with the Dhara Core of this crate, and how closely it
follows JSON-RPC 2.0. It starts CMD several times and CALLS EACH OF ITS TOOLS (the
first 16) with an input built from the tool's inputSchema (required members, type,
enum, const, default, items): use --no-calls for tools with side effects, or --call
to choose the inputs.

OPTIONS:
  --timeout DUR        the wait for the reply to initialize (default 30s)
  --probe-timeout DUR  the wait for every other reply, a tool call included, and for
                       the exit after shutdown alone (default 3s)
  --grace DUR          the wait for the exit after end of stdin (default 5s)
  --call TOOL JSON     call TOOL with this input instead of the built ones
                       (repeatable; then only these calls are made)
  --no-calls           call no tool
  --strict             WARN counts as FAIL
  --cwd DIR            the extension's working directory, also sent in initialize
  --json               print the report as one JSON object
  --trace              print every line, with its direction and time, to stderr
  DUR: 250ms, 2s, 1m, or a bare number of seconds

ROWS, in order. FAIL: a session with the Core breaks (the Core never sees a reply,
cannot read it, or cannot call a tool). WARN: the Core copes, or never sends this.
  initialize              FAIL  the Core's first request; answered with name, version, tools
  tool descriptors        FAIL  a descriptor the Core cannot read (name not a string,
                                description not a string, inputSchema neither object
                                nor boolean) is left out; a name used twice hides the
                                second tool
  tool names              WARN  LLM APIs refuse names outside ^[a-zA-Z0-9_-]{1,64}$
  tool descriptions       WARN  missing or empty: the model chooses tools by them
  input schemas           WARN  not {\"type\": \"object\"}: LLM APIs want an object schema;
                                also lists the keywords the Core's validator ignores
  tools/list              FAIL  no reply, another id, or a result the Core cannot read
                                (WARN: an error reply, or other tools than initialize)
  call TOOL               FAIL  no reply within the probe timeout, a reply under another
                                id (a string id for an integer one too), a result the
                                Core cannot read (content not an array of items, isError
                                not a boolean), or an exit; WARN: no isError, a content
                                item of no known type, a malformed progress notification.
                                An error reply passes: the input may not suit the tool.
  tool calls              SKIP  with --no-calls, without tools, or past the first 16
  largest Core id echoed  FAIL  2^53-1, the largest id the Core sends, comes back exact
  string id echoed        WARN  the Core sends only integer ids
  id beyond 2^53 echoed   WARN  the Core never sends one (a JavaScript number cannot)
  id beyond i64 echoed    WARN  likewise
  notification not answered  WARN  the Core reports a reply to a notification, goes on
  unknown method          WARN  -32601; the Core sends only protocol methods
  malformed line          WARN  -32700; the Core writes only valid JSON
  answers after a malformed line  WARN  likewise
  invalid request (method not a string)  WARN  -32600; the Core never sends one
  invalid request (jsonrpc not \"2.0\")    WARN  likewise
  unknown tool            WARN  -32602; the Core refuses an unknown tool itself
  missing required input  WARN  -32602; the Core checks the input itself
  only JSON-RPC on stdout WARN  the Core reports other lines and goes on
  shutdown exits with 0   FAIL  after shutdown and end of stdin (the Core closes stdin
                                right after shutdown), exit code 0 within the grace;
                                WARN when only end of stdin made it exit
  request before initialize  WARN  -32002; the Core always initializes first
  end of stdin exits with 0  WARN  the Core closes stdin after shutdown, not instead
  batch request           WARN  the Core never sends a batch
A row that depends on an earlier failure is SKIP, with the reason; an extension that
exits is started again for the rows that do not depend on why.

EXIT STATUS: 0 no FAIL (WARN and SKIP allowed), 1 a FAIL, 2 usage error,
5 the command cannot be started.";

/// The result of one check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    /// The extension does what is checked.
    Pass,
    /// It does not, but the Core copes, or never asks it to.
    Warn,
    /// It does not, and a session with the Core breaks.
    Fail,
    /// The check could not run: an earlier failure, or an option, prevents it.
    Skip,
}

impl Status {
    /// The word shown in the table.
    fn label(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Warn => "WARN",
            Status::Fail => "FAIL",
            Status::Skip => "SKIP",
        }
    }
}

/// One row of the report.
pub(crate) struct Row {
    /// What was checked.
    pub check: String,
    /// How it went.
    pub status: Status,
    /// Why, in a few words.
    pub detail: String,
}

impl Row {
    fn new(check: impl Into<String>, status: Status, detail: impl Into<String>) -> Row {
        Row {
            check: check.into(),
            status,
            detail: detail.into(),
        }
    }
}

/// The rows so far, each printed as it comes when the report is a table.
pub(crate) struct Report {
    rows: Vec<Row>,
    strict: bool,
    table: bool,
    live: Live,
}

impl Report {
    /// Adds a row (a WARN becomes a FAIL under `--strict`) and prints it; returns its
    /// status.
    fn push(&mut self, mut row: Row) -> Status {
        if self.strict && row.status == Status::Warn {
            row.status = Status::Fail;
            row.detail = format!("(--strict) {}", row.detail);
        }
        if self.table {
            self.live.print(&format!(
                "  {}  {:CHECK_WIDTH$}  {}\n",
                row.status.label(),
                row.check,
                row.detail
            ));
        }
        let status = row.status;
        self.rows.push(row);
        status
    }

    fn count(&self, status: Status) -> usize {
        self.rows.iter().filter(|r| r.status == status).count()
    }
}

/// What the command line asked for.
struct Options {
    settings: Settings,
    json: bool,
    strict: bool,
    command: Vec<String>,
}

/// Runs `dhara check` with the arguments after `check`; returns the exit code.
pub(crate) fn run(args: &[String]) -> i32 {
    let options = match parse_options(args) {
        Ok(Some(options)) => options,
        Ok(None) => {
            outln!("{USAGE}");
            return EXIT_PASSED;
        }
        Err(why) => {
            eprintln!("dhara check: {why}\n{USAGE}");
            return EXIT_USAGE;
        }
    };
    let live = options.settings.live.clone();
    let mut report = Report {
        rows: Vec::new(),
        strict: options.strict,
        table: !options.json,
        live: live.clone(),
    };
    if !options.json {
        live.print(&header(&options));
    }
    let started = Instant::now();
    let outcome = checks::run(&options.command, &options.settings, &mut report);
    live.finish();
    let stderr = match outcome {
        Ok(stderr) => stderr,
        Err(why) => {
            if options.json {
                let mut error = Object::new();
                error.push("error", Value::from(why.as_str()));
                outln!("{}", Value::Object(error));
            } else {
                eprintln!("dhara check: {why}");
            }
            return EXIT_NOT_STARTED;
        }
    };
    let failed = report.count(Status::Fail) > 0;
    if options.json {
        outln!("{}", json_report(&options, &report, &stderr));
    } else {
        out!("{}", summary(&report, &stderr, started.elapsed()));
    }
    if failed { EXIT_FAILED } else { EXIT_PASSED }
}

/// The options and the command, or `None` when help was asked for. With
/// `--config FILE NAME` the command, and its `timeout`, `grace`, `cwd` and `env`, come
/// from the extension NAME of the file, by the rule of the other commands: the file's
/// values win over the options given.
fn parse_options(words: &[String]) -> Result<Option<Options>, String> {
    let accepts = Accepts {
        process: true,
        json: true,
        trace: true,
        config: true,
        check: true,
    };
    let invocation = args::parse(words, accepts).map_err(|e| e.to_string())?;
    if invocation.help {
        return Ok(None);
    }
    let mut options = invocation.options;
    let mut positional = invocation.positional.iter();
    let command = match options.config.take() {
        Some(file) => {
            let Some(name) = positional.next() else {
                return Err(String::from(
                    "`dhara check --config FILE NAME` needs the name of one of its extensions",
                ));
            };
            if !invocation.command.is_empty() {
                return Err(String::from(
                    "--config names the extension's command: give none after `--`",
                ));
            }
            let mut specs = config::load(&file).map_err(|e| format!("{}: {e}", file.display()))?;
            let Some(at) = specs.iter().position(|s| s.name == *name) else {
                let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
                return Err(format!(
                    "no extension `{name}` in the file; it names {}",
                    names.join(", ")
                ));
            };
            let spec = specs.swap_remove(at);
            options.timeout = spec.timeout.unwrap_or(options.timeout);
            options.grace = spec.grace.unwrap_or(options.grace);
            options.cwd = spec.cwd.or(options.cwd);
            options.env.extend(spec.env);
            spec.command
        }
        None if invocation.command.is_empty() => {
            return Err(String::from("no extension command given after --"));
        }
        None => invocation.command,
    };
    if let Some(word) = positional.next() {
        return Err(format!(
            "unexpected argument {word:?} (the command goes after --)"
        ));
    }
    let mut given_calls = Vec::new();
    for (tool, input) in options.calls {
        let input = json::parse(input.as_bytes())
            .map_err(|e| format!("--call {tool}: the input is not JSON: {e}"))?;
        if !matches!(input, Value::Object(_)) {
            return Err(format!("--call {tool}: the input must be a JSON object"));
        }
        given_calls.push((tool, input));
    }
    let cwd = match options.cwd {
        Some(dir) => std::fs::canonicalize(&dir)
            .map_err(|e| format!("cannot use --cwd {}: {e}", dir.display()))?,
        None => std::env::current_dir()
            .map_err(|e| format!("cannot read the current directory: {e}"))?,
    };
    let settings = Settings {
        timeout: options.timeout,
        probe_timeout: options.probe_timeout.unwrap_or(DEFAULT_PROBE_TIMEOUT),
        grace: options.grace,
        cwd,
        env: options.env,
        trace: Trace::new(options.trace),
        // The status line would cut into the trace's lines.
        live: Live::new(!options.trace),
        call_tools: !options.no_calls,
        given_calls,
    };
    Ok(Some(Options {
        settings,
        json: options.json,
        strict: options.strict,
        command,
    }))
}

/// The lines before the rows: what runs, and that its tools are called.
fn header(options: &Options) -> String {
    let settings = &options.settings;
    let calls = if !settings.call_tools {
        String::from("no tool is called (--no-calls)")
    } else if settings.given_calls.is_empty() {
        String::from(
            "each tool (the first 16) is called with an input built from its inputSchema (--no-calls: none)",
        )
    } else {
        format!(
            "only the {} call(s) given with --call are made",
            settings.given_calls.len()
        )
    };
    format!(
        "dhara check: {}\n  {calls}\n  timeout {}, probe timeout {}, grace {}{}\n\n",
        options.command.join(" "),
        format_duration(settings.timeout),
        format_duration(settings.probe_timeout),
        format_duration(settings.grace),
        if options.strict { ", --strict" } else { "" }
    )
}

/// The lines after the rows: the counts, and, when something failed, the last lines
/// the extension wrote on stderr.
fn summary(report: &Report, stderr: &[String], took: Duration) -> String {
    let failed = report.count(Status::Fail);
    let mut out = format!(
        "\n{} passed, {failed} failed, {} warnings, {} skipped, in {:.1}s\n",
        report.count(Status::Pass),
        report.count(Status::Warn),
        report.count(Status::Skip),
        took.as_secs_f64()
    );
    if failed > 0 && !stderr.is_empty() {
        out += "\nthe extension's last lines on stderr (the process of the first failure):\n";
        for line in stderr {
            out += &format!("  | {line}\n");
        }
    }
    out
}

/// The report as one JSON object: `{"command": [...], "passed": bool, "strict":
/// bool, "checks": [{"check", "status", "detail"}], "stderr": [...]}`.
fn json_report(options: &Options, report: &Report, stderr: &[String]) -> Value {
    let checks: Vec<Value> = report
        .rows
        .iter()
        .map(|row| {
            let mut o = Object::new();
            o.push("check", Value::from(row.check.as_str()));
            o.push(
                "status",
                Value::from(row.status.label().to_ascii_lowercase()),
            );
            o.push("detail", Value::from(row.detail.as_str()));
            Value::Object(o)
        })
        .collect();
    let mut out = Object::new();
    out.push(
        "command",
        Value::from(
            options
                .command
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        ),
    );
    out.push("passed", Value::from(report.count(Status::Fail) == 0));
    out.push("strict", Value::from(options.strict));
    out.push("checks", Value::from(checks));
    out.push(
        "stderr",
        Value::from(stderr.iter().map(String::as_str).collect::<Vec<_>>()),
    );
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn options_then_the_command_after_the_separator() {
        let parsed = parse_options(&words("--timeout 5s --json -- python3 ext.py"));
        let Ok(Some(options)) = parsed else {
            panic!("valid options refused: {:?}", parsed.err());
        };
        assert_eq!(options.settings.timeout, Duration::from_secs(5));
        assert_eq!(options.settings.grace, Duration::from_secs(5));
        assert!(options.json);
        assert_eq!(options.command, ["python3", "ext.py"]);
        assert_eq!(options.settings.probe_timeout, DEFAULT_PROBE_TIMEOUT);
        assert!(options.settings.call_tools && !options.strict);
        assert!(matches!(parse_options(&words("--help")), Ok(None)));
    }

    #[test]
    fn the_options_of_check_alone() {
        let parsed = parse_options(&words(
            r#"--strict --probe-timeout 250ms --call echo {"text":"hi"} --call now {} --json -- node ext.js --strict"#,
        ));
        let Ok(Some(options)) = parsed else {
            panic!("valid options refused: {:?}", parsed.err());
        };
        assert!(options.strict && options.json);
        assert_eq!(options.settings.probe_timeout, Duration::from_millis(250));
        let calls: Vec<(&str, String)> = options
            .settings
            .given_calls
            .iter()
            .map(|(tool, input)| (tool.as_str(), input.to_string()))
            .collect();
        assert_eq!(
            calls,
            [
                ("echo", String::from(r#"{"text":"hi"}"#)),
                ("now", String::from("{}"))
            ]
        );
        // What follows `--` is the command's, even when it looks like an option.
        assert_eq!(options.command, ["node", "ext.js", "--strict"]);
        let parsed = parse_options(&words("--probe-timeout=2s --no-calls -- x"));
        let Ok(Some(options)) = parsed else {
            panic!("valid options refused: {:?}", parsed.err());
        };
        assert_eq!(options.settings.probe_timeout, Duration::from_secs(2));
        assert!(!options.settings.call_tools);
    }

    #[test]
    fn mistakes_are_refused() {
        for bad in [
            "--timeout 5s",
            "--",
            "--bogus -- x",
            "ext.py -- python3",
            "--grace",
            "--probe-timeout soon -- x",
            "--call echo -- x",
            "--call echo {bad -- x",
            "--call echo [1] -- x",
            "--no-calls --call echo {} -- x",
        ] {
            assert!(
                parse_options(&words(bad)).is_err(),
                "{bad:?} should be refused"
            );
        }
    }
}
