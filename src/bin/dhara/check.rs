//! `dhara check [OPTIONS] -- CMD [ARGS...]`: a conformance check of any extension,
//! in any language.
//!
//! It starts the command, speaks the protocol to it line by line (including what a
//! well-behaved Core never sends: lines that are not JSON, invalid requests, string
//! and very large ids), and prints one row per check: PASS, FAIL or WARN, with the
//! reason. The exit code is 0 when nothing failed (warnings allowed), 1 when a check
//! failed, 2 for a usage error and 5 when the command cannot be started.

mod checks;
mod harness;

use dhara_protocol::json::{Object, Value};

use crate::args::{self, Accepts, format_duration};
use checks::Settings;
use harness::Trace;

/// Exit code when every check passed (warnings allowed).
const EXIT_PASSED: i32 = 0;
/// Exit code when at least one check failed.
const EXIT_FAILED: i32 = 1;
/// Exit code for a usage error.
const EXIT_USAGE: i32 = 2;
/// Exit code when the command cannot be started.
const EXIT_NOT_STARTED: i32 = 5;

const USAGE: &str = "usage: dhara check [--timeout DUR] [--grace DUR] [--cwd DIR] [--json] [--trace] -- CMD [ARGS...]
  --timeout DUR  the wait for each reply (default 30s)
  --grace DUR    the wait for the process to exit after shutdown (default 5s)
  --cwd DIR      the extension's working directory, also sent in initialize
  --json         print the report as one JSON object
  --trace        print every line, with its direction and time, to stderr
  DUR: 250ms, 2s, 1m, or a bare number of seconds";

/// The result of one check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The extension does what the protocol requires.
    Pass,
    /// It does not do what an optional check looks for, or the check could not run.
    Warn,
    /// It breaks the protocol.
    Fail,
}

impl Status {
    /// The word shown in the table.
    fn label(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Warn => "WARN",
            Status::Fail => "FAIL",
        }
    }
}

/// One row of the report.
pub struct Row {
    /// What was checked.
    pub check: &'static str,
    /// How it went.
    pub status: Status,
    /// Why, in a few words.
    pub detail: String,
}

impl Row {
    fn new(check: &'static str, status: Status, detail: impl Into<String>) -> Row {
        Row {
            check,
            status,
            detail: detail.into(),
        }
    }
}

/// What the command line asked for.
struct Options {
    settings: Settings,
    json: bool,
    command: Vec<String>,
}

/// Runs `dhara check` with the arguments after `check`; returns the exit code.
pub fn run(args: &[String]) -> i32 {
    let options = match parse_options(args) {
        Ok(Some(options)) => options,
        Ok(None) => {
            println!("{USAGE}");
            return EXIT_PASSED;
        }
        Err(why) => {
            eprintln!("dhara check: {why}\n{USAGE}");
            return EXIT_USAGE;
        }
    };
    match checks::run(&options.command, &options.settings) {
        Ok(outcome) => {
            let failed = outcome.rows.iter().any(|r| r.status == Status::Fail);
            if options.json {
                println!("{}", json_report(&options.command, &outcome));
            } else {
                print!("{}", table(&options, &outcome));
            }
            if failed { EXIT_FAILED } else { EXIT_PASSED }
        }
        Err(why) => {
            if options.json {
                let mut error = Object::new();
                error.push("error", Value::from(why.as_str()));
                println!("{}", Value::Object(error));
            } else {
                eprintln!("dhara check: {why}");
            }
            EXIT_NOT_STARTED
        }
    }
}

/// The options and the command, or `None` when help was asked for.
fn parse_options(words: &[String]) -> Result<Option<Options>, String> {
    let accepts = Accepts {
        process: true,
        json: true,
        trace: true,
    };
    let invocation = args::parse(words, accepts).map_err(|e| e.to_string())?;
    if invocation.help {
        return Ok(None);
    }
    if let Some(word) = invocation.positional.first() {
        return Err(format!(
            "unexpected argument {word:?} (the command goes after --)"
        ));
    }
    if invocation.command.is_empty() {
        return Err(String::from("no extension command given after --"));
    }
    let options = invocation.options;
    let cwd = match options.cwd {
        Some(dir) => std::fs::canonicalize(&dir)
            .map_err(|e| format!("cannot use --cwd {}: {e}", dir.display()))?,
        None => std::env::current_dir()
            .map_err(|e| format!("cannot read the current directory: {e}"))?,
    };
    let settings = Settings {
        timeout: options.timeout,
        grace: options.grace,
        cwd,
        trace: Trace::new(options.trace),
    };
    Ok(Some(Options {
        settings,
        json: options.json,
        command: invocation.command,
    }))
}

/// The report as a table, with a summary line and, when something failed, the last
/// lines the extension wrote on stderr.
fn table(options: &Options, outcome: &checks::Outcome) -> String {
    let settings = &options.settings;
    let mut out = format!(
        "dhara check: {} (timeout {}, grace {})\n\n",
        options.command.join(" "),
        format_duration(settings.timeout),
        format_duration(settings.grace)
    );
    let width = outcome
        .rows
        .iter()
        .map(|r| r.check.len())
        .max()
        .unwrap_or(0);
    for row in &outcome.rows {
        out += &format!(
            "  {}  {:width$}  {}\n",
            row.status.label(),
            row.check,
            row.detail
        );
    }
    let count = |status| outcome.rows.iter().filter(|r| r.status == status).count();
    let failed = count(Status::Fail);
    out += &format!(
        "\n{} passed, {failed} failed, {} warnings\n",
        count(Status::Pass),
        count(Status::Warn)
    );
    if failed > 0 && !outcome.stderr.is_empty() {
        out += "\nthe extension's last lines on stderr:\n";
        for line in &outcome.stderr {
            out += &format!("  | {line}\n");
        }
    }
    out
}

/// The report as one JSON object:
/// `{"command": [...], "passed": bool, "checks": [{"check", "status", "detail"}], "stderr": [...]}`.
fn json_report(command: &[String], outcome: &checks::Outcome) -> Value {
    let checks: Vec<Value> = outcome
        .rows
        .iter()
        .map(|row| {
            let mut o = Object::new();
            o.push("check", Value::from(row.check));
            o.push(
                "status",
                Value::from(row.status.label().to_ascii_lowercase()),
            );
            o.push("detail", Value::from(row.detail.as_str()));
            Value::Object(o)
        })
        .collect();
    let passed = outcome.rows.iter().all(|r| r.status != Status::Fail);
    let mut report = Object::new();
    report.push(
        "command",
        Value::from(command.iter().map(String::as_str).collect::<Vec<_>>()),
    );
    report.push("passed", Value::from(passed));
    report.push("checks", Value::from(checks));
    report.push(
        "stderr",
        Value::from(
            outcome
                .stderr
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        ),
    );
    Value::Object(report)
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
        assert!(matches!(parse_options(&words("--help")), Ok(None)));
    }

    #[test]
    fn mistakes_are_refused() {
        for bad in [
            "--timeout 5s",
            "--",
            "--bogus -- x",
            "ext.py -- python3",
            "--grace",
        ] {
            assert!(
                parse_options(&words(bad)).is_err(),
                "{bad:?} should be refused"
            );
        }
    }
}
