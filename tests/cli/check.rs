//! `dhara check` against extensions that work with the Core (the example extension,
//! the Python interop extension, a Node.js one on the npm package `json-rpc-2.0`) and
//! against one that breaks on purpose (`tests/broken/faulty_ext.py`, one fault at a
//! time): each fault must give exactly its rows their FAIL, WARN or SKIP, every other
//! row PASS, and the exit code that follows.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use dhara_protocol::json::{self, Value};

const DHARA: &str = env!("CARGO_BIN_EXE_dhara");

/// Every row of a run against the faulty extension, whose tools are `echo` and
/// `now`: the two `call` rows stand where a fault's extra tools add theirs.
const FAULTY_ROWS: [&str; 25] = [
    "initialize",
    "tool descriptors",
    "tool names",
    "tool descriptions",
    "input schemas",
    "tools/list",
    "call echo",
    "call now",
    "largest Core id echoed",
    "string id echoed",
    "id beyond 2^53 echoed",
    "id beyond i64 echoed",
    "notification not answered",
    "unknown method",
    "malformed line",
    "answers after a malformed line",
    "invalid request (method not a string)",
    "invalid request (jsonrpc not \"2.0\")",
    "unknown tool",
    "missing required input",
    "only JSON-RPC on stdout",
    "shutdown exits with 0",
    "request before initialize",
    "end of stdin exits with 0",
    "batch request",
];

/// A report's rows: (check, status, detail).
type Rows = Vec<(String, String, String)>;

fn tests_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// `true` when `program --version` runs; otherwise says why `test` is skipped, and
/// fails when `CI` is set (CI must run every test).
fn available(program: &str, test: &str) -> bool {
    let found = Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "{test}: {program} is not installed, and CI is set"
        );
        eprintln!("skipping {test}: {program} is not installed");
    }
    found
}

fn python3(test: &str) -> bool {
    available("python3", test)
}

fn dhara(args: &[&str]) -> Output {
    match Command::new(DHARA).args(args).output() {
        Ok(output) => output,
        Err(e) => panic!("cannot run {DHARA}: {e}"),
    }
}

/// Runs `dhara check --json` with `options` against `command`; returns the exit code
/// and the report's rows.
fn check_json(options: &[&str], command: &[&str]) -> (Option<i32>, Rows) {
    let mut args = vec!["check", "--json"];
    args.extend_from_slice(options);
    args.push("--");
    args.extend_from_slice(command);
    let output = dhara(&args);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let report = match json::parse(stdout.trim_end().as_bytes()) {
        Ok(report) => report,
        Err(e) => panic!(
            "the report is not one JSON value ({e}): {stdout}\nstderr: {}",
            String::from_utf8_lossy(&output.stderr)
        ),
    };
    let text = |row: &Value, name: &str| {
        row.get(name)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let rows = report
        .get("checks")
        .and_then(Value::as_array)
        .map(|rows| {
            rows.iter()
                .map(|row| (text(row, "check"), text(row, "status"), text(row, "detail")))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        report.get("passed").and_then(Value::as_bool),
        Some(output.status.code() == Some(0)),
        "`passed` agrees with the exit code: {stdout}"
    );
    (output.status.code(), rows)
}

fn faulty_ext() -> String {
    tests_dir()
        .join("broken/faulty_ext.py")
        .to_string_lossy()
        .into_owned()
}

/// The faulty extension with `fault`, with `options`.
fn check_fault_with(fault: &str, options: &[&str]) -> (Option<i32>, Rows) {
    let script = faulty_ext();
    check_json(options, &["python3", &script, fault])
}

/// The faulty extension with `fault`. `probe` is short where the fault makes the
/// checker wait it out, and generous elsewhere so a loaded machine cannot fail a row.
fn check_fault(fault: &str, probe: &str) -> (Option<i32>, Rows) {
    check_fault_with(
        fault,
        &[
            "--timeout",
            "20s",
            "--probe-timeout",
            probe,
            "--grace",
            "1s",
        ],
    )
}

/// Asserts that the rows are those of the faulty extension, with a `call` row for
/// each of `extra_tools` after `call now`, and that each row has the status
/// `expected` gives it, or else `pass`.
fn assert_rows(rows: &Rows, extra_tools: &[&str], expected: &[(&str, &str)]) {
    let mut want: Vec<String> = FAULTY_ROWS.iter().map(|r| r.to_string()).collect();
    let at = want
        .iter()
        .position(|r| r == "call now")
        .map_or(0, |i| i + 1);
    for (i, tool) in extra_tools.iter().enumerate() {
        want.insert(at + i, format!("call {tool}"));
    }
    let names: Vec<&str> = rows.iter().map(|(name, _, _)| name.as_str()).collect();
    assert_eq!(names, want, "every check runs, in order");
    for (name, got, detail) in rows {
        let status = expected
            .iter()
            .find(|(row, _)| row == name)
            .map_or("pass", |(_, status)| status);
        assert_eq!(got, status, "row {name:?}: {detail}");
    }
}

fn row<'a>(rows: &'a Rows, name: &str) -> (&'a str, &'a str) {
    match rows.iter().find(|(n, _, _)| n == name) {
        Some((_, status, detail)) => (status, detail),
        None => panic!("no row {name:?} in {rows:?}"),
    }
}

/// One test per fault: exactly its rows get their status, and the exit code is 1
/// for a FAIL, 0 otherwise.
macro_rules! faults {
    ($($test:ident: $fault:literal, probe $probe:literal, tools [$($tool:literal),*]
        => exit $code:literal { $($row:literal: $status:literal),* };)*) => {$(
        #[test]
        fn $test() {
            if !python3(stringify!($test)) {
                return;
            }
            let (code, rows) = check_fault($fault, $probe);
            assert_rows(&rows, &[$($tool),*], &[$(($row, $status)),*]);
            assert_eq!(code, Some($code), "the exit code: {rows:?}");
        }
    )*};
}

faults! {
    passes_on_the_faulty_extension_without_a_fault: "none", probe "10s", tools [] => exit 0 {};
    // Answering a tool run under another id, or under the id as a string, or
    // crashing in it, or sending a result the Core cannot read: the call fails.
    fails_calls_answered_under_another_id: "other-id", probe "10s", tools [] => exit 1 {
        "call echo": "fail", "call now": "fail"
    };
    fails_calls_answered_under_a_string_id: "string-id", probe "10s", tools [] => exit 1 {
        "call echo": "fail", "call now": "fail"
    };
    fails_calls_that_crash_and_goes_on_after_a_restart: "crash-on-tool", probe "10s", tools [] => exit 1 {
        "call echo": "fail", "call now": "fail"
    };
    fails_calls_with_a_result_the_core_cannot_read: "bad-result", probe "10s", tools [] => exit 1 {
        "call echo": "fail", "call now": "fail"
    };
    fails_a_reply_without_its_newline: "no-newline", probe "2s", tools [] => exit 1 {
        "call echo": "fail", "call now": "skip"
    };
    fails_a_reply_held_until_the_end_of_stdin: "no-flush", probe "2s", tools [] => exit 1 {
        "call echo": "fail", "call now": "skip"
    };
    warns_on_a_malformed_progress_notification: "bad-progress", probe "10s", tools [] => exit 0 {
        "call now": "warn"
    };
    // What the Core never sends is WARN.
    warns_when_malformed_lines_get_no_reply: "ignores-malformed", probe "2s", tools [] => exit 0 {
        "malformed line": "warn"
    };
    skips_what_a_crash_on_a_malformed_line_prevents: "crash-on-malformed", probe "10s", tools [] => exit 0 {
        "malformed line": "warn", "answers after a malformed line": "skip"
    };
    warns_only_once_when_unknown_methods_get_no_reply: "ignores-unknown", probe "2s", tools [] => exit 0 {
        "unknown method": "warn"
    };
    warns_when_string_ids_come_back_as_numbers: "numeric-ids", probe "10s", tools [] => exit 0 {
        "string id echoed": "warn"
    };
    warns_when_ids_the_core_never_sends_lose_precision: "float-ids", probe "10s", tools [] => exit 0 {
        "id beyond 2^53 echoed": "warn", "id beyond i64 echoed": "warn"
    };
    warns_when_notifications_are_answered: "answers-notifications", probe "10s", tools [] => exit 0 {
        "notification not answered": "warn"
    };
    warns_when_required_input_is_not_checked: "skips-validation", probe "10s", tools [] => exit 0 {
        "missing required input": "warn"
    };
    warns_on_log_lines_on_stdout: "logs-to-stdout", probe "10s", tools [] => exit 0 {
        "only JSON-RPC on stdout": "warn"
    };
    // The lifecycle.
    fails_when_shutdown_exits_with_1: "exit-1-on-shutdown", probe "10s", tools [] => exit 1 {
        "shutdown exits with 0": "fail"
    };
    warns_when_only_the_end_of_stdin_ends_it: "ignores-shutdown", probe "2s", tools [] => exit 0 {
        "shutdown exits with 0": "warn"
    };
    fails_when_neither_shutdown_nor_end_of_stdin_ends_it: "hangs-on-shutdown", probe "2s", tools [] => exit 1 {
        "shutdown exits with 0": "fail", "end of stdin exits with 0": "warn"
    };
    // The declarations.
    fails_on_duplicate_tools_and_warns_on_missing_descriptions: "duplicate-tools", probe "10s", tools [] => exit 1 {
        "tool descriptors": "fail", "tool descriptions": "warn"
    };
    fails_on_descriptors_the_core_cannot_read: "bad-descriptor", probe "10s", tools [] => exit 1 {
        "tool descriptors": "fail"
    };
    warns_on_a_name_llm_apis_refuse: "bad-name", probe "10s", tools ["read file"] => exit 0 {
        "tool names": "warn"
    };
    warns_on_a_schema_without_a_type: "loose-schema", probe "10s", tools ["lookup"] => exit 0 {
        "input schemas": "warn"
    };
    // Nothing but initialize answered: two failures, the rest skipped.
    one_cause_one_failure_when_only_initialize_is_answered: "silent", probe "2s", tools [] => exit 1 {
        "tools/list": "fail", "call echo": "fail", "call now": "skip",
        "largest Core id echoed": "skip", "string id echoed": "skip",
        "id beyond 2^53 echoed": "skip", "id beyond i64 echoed": "skip",
        "notification not answered": "skip", "unknown method": "skip",
        "malformed line": "skip", "answers after a malformed line": "skip",
        "invalid request (method not a string)": "skip",
        "invalid request (jsonrpc not \"2.0\")": "skip", "unknown tool": "skip",
        "missing required input": "skip", "request before initialize": "warn",
        "batch request": "warn"
    };
}

#[test]
fn the_reasons_name_the_fault() {
    if !python3("the_reasons_name_the_fault") {
        return;
    }
    let (_, rows) = check_fault("string-id", "10s");
    let (_, detail) = row(&rows, "call echo");
    assert!(detail.contains(r#"the reply has id "3""#), "{detail}");
    assert!(
        detail.contains(r#"input {"text":"dhara-check"}"#),
        "{detail}"
    );
    let (_, rows) = check_fault("crash-on-tool", "10s");
    let (_, detail) = row(&rows, "call echo");
    assert!(detail.contains("exited with code 3"), "{detail}");
    let (_, rows) = check_fault("bad-descriptor", "10s");
    let (_, detail) = row(&rows, "tool descriptors");
    assert!(
        detail.contains("tool `numeric` (tools[2])")
            && detail.contains("tool `stringy` (tools[3])"),
        "{detail}"
    );
    let (_, rows) = check_fault("bad-name", "10s");
    assert!(row(&rows, "tool names").1.contains(r#""read file""#));
    let (_, rows) = check_fault("loose-schema", "10s");
    assert!(row(&rows, "input schemas").1.contains("pattern (lookup)"));
    let (_, rows) = check_fault("no-newline", "2s");
    let (_, detail) = row(&rows, "call echo");
    assert!(
        detail.contains("byte(s) came without a newline (missing newline or flush?)"),
        "{detail}"
    );
    assert!(
        row(&rows, "call now")
            .1
            .contains("the call of echo got no reply")
    );
    let (_, rows) = check_fault("no-flush", "2s");
    let (_, detail) = row(&rows, "call echo");
    assert!(
        detail.contains("the reply came only at the end of stdin (stdout not flushed?)"),
        "{detail}"
    );
    let (_, rows) = check_fault("crash-on-malformed", "10s");
    let (_, detail) = row(&rows, "answers after a malformed line");
    assert!(detail.contains("exited on the malformed line"), "{detail}");
}

#[test]
fn an_extension_that_answers_only_initialize_is_judged_in_under_a_minute() {
    if !python3("an_extension_that_answers_only_initialize_is_judged_in_under_a_minute") {
        return;
    }
    let started = Instant::now();
    let script = faulty_ext();
    let output = dhara(&["check", "--", "python3", &script, "silent"]);
    let took = started.elapsed();
    assert_eq!(output.status.code(), Some(1));
    assert!(took < Duration::from_secs(60), "took {took:?}");
}

#[test]
fn rows_print_as_they_are_decided() {
    if !python3("rows_print_as_they_are_decided") {
        return;
    }
    let script = faulty_ext();
    let child = Command::new(DHARA)
        .args([
            "check",
            "--probe-timeout",
            "3s",
            "--",
            "python3",
            &script,
            "silent",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => panic!("cannot run {DHARA}: {e}"),
    };
    let Some(stdout) = child.stdout.take() else {
        panic!("stdout is piped");
    };
    let mut lines = BufReader::new(stdout).lines();
    let first_row = lines
        .by_ref()
        .map_while(Result::ok)
        .find(|l| l.contains("initialize"));
    assert!(
        first_row.is_some_and(|l| l.trim_start().starts_with("PASS")),
        "the initialize row comes first"
    );
    // The silent extension makes the rest take seconds: the row came before them.
    assert!(
        matches!(child.try_wait(), Ok(None)),
        "the check was still running when its first row was printed"
    );
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert!(rest.iter().any(|l| l.contains("skipped")), "{rest:?}");
    let _ = child.wait();
}

#[test]
fn strict_turns_warnings_into_failures() {
    if !python3("strict_turns_warnings_into_failures") {
        return;
    }
    let (code, rows) = check_fault_with(
        "numeric-ids",
        &["--strict", "--probe-timeout", "10s", "--grace", "1s"],
    );
    assert_eq!(code, Some(1));
    let (status, detail) = row(&rows, "string id echoed");
    assert_eq!(status, "fail");
    assert!(detail.starts_with("(--strict)"), "{detail}");
    let (code, _) = check_fault_with("none", &["--strict", "--probe-timeout", "10s"]);
    assert_eq!(code, Some(0), "nothing to make strict about");
}

#[test]
fn no_calls_calls_no_tool() {
    if !python3("no_calls_calls_no_tool") {
        return;
    }
    let (code, rows) = check_fault_with("crash-on-tool", &["--no-calls", "--probe-timeout", "10s"]);
    assert_eq!(code, Some(0), "{rows:?}");
    assert_eq!(row(&rows, "tool calls").0, "skip");
    assert!(!rows.iter().any(|(name, _, _)| name.starts_with("call ")));
}

#[test]
fn call_supplies_the_inputs() {
    if !python3("call_supplies_the_inputs") {
        return;
    }
    let (code, rows) = check_fault_with(
        "none",
        &[
            "--probe-timeout",
            "10s",
            "--call",
            "echo",
            r#"{"text":"from the command line"}"#,
            "--call",
            "nosuch",
            "{}",
            "--call",
            "echo",
            r#"{"text":7}"#,
        ],
    );
    assert_eq!(code, Some(0), "{rows:?}");
    let calls: Vec<(&str, &str, &str)> = rows
        .iter()
        .filter(|(name, _, _)| name.starts_with("call "))
        .map(|(n, s, d)| (n.as_str(), s.as_str(), d.as_str()))
        .collect();
    assert_eq!(calls.len(), 3, "{calls:?}");
    assert_eq!(calls[0].1, "pass");
    assert!(calls[0].2.contains("from the command line"), "{calls:?}");
    assert_eq!((calls[1].0, calls[1].1), ("call nosuch", "skip"));
    // Input the Core would refuse is not sent.
    assert_eq!(calls[2].1, "skip");
    assert!(
        calls[2].2.contains("fails the tool's inputSchema"),
        "{calls:?}"
    );
}

#[test]
fn fails_when_initialize_is_never_answered() {
    if !python3("fails_when_initialize_is_never_answered") {
        return;
    }
    let (code, rows) = check_fault_with("silent-initialize", &["--timeout", "2s"]);
    assert_eq!(code, Some(1));
    let (status, detail) = row(&rows, "initialize");
    assert_eq!(status, "fail");
    assert!(detail.contains("no reply within 2s"), "{detail}");
    for (name, status, detail) in rows.iter().skip(1) {
        assert_eq!(status, "skip", "{name}: {detail}");
        assert!(detail.contains("initialize failed"), "{name}: {detail}");
    }
    assert_eq!(row(&rows, "tool calls").0, "skip");
}

#[test]
fn calls_the_example_extensions_tools_and_fails_the_one_that_hangs() {
    let (code, rows) = check_json(
        &["--timeout", "10s", "--probe-timeout", "3s"],
        &[DHARA, "example-extension"],
    );
    for tool in ["echo", "add", "sleep", "read_file", "image", "fail"] {
        assert_eq!(row(&rows, &format!("call {tool}")).0, "pass", "{rows:?}");
    }
    // `hang` never answers, by design: a Core's call of it times out.
    let (status, detail) = row(&rows, "call hang");
    assert_eq!(status, "fail");
    assert!(detail.contains("no reply within 3s"), "{detail}");
    let failed: Vec<&str> = rows
        .iter()
        .filter(|(_, status, _)| status != "pass")
        .map(|(name, _, _)| name.as_str())
        .collect();
    assert_eq!(failed, ["call hang"], "{rows:?}");
    assert_eq!(code, Some(1));

    let (code, rows) = check_json(
        &["--timeout", "10s", "--call", "echo", r#"{"text":"hi"}"#],
        &[DHARA, "example-extension"],
    );
    assert!(
        rows.iter().all(|(_, status, _)| status == "pass"),
        "{rows:?}"
    );
    assert_eq!(code, Some(0));
}

#[test]
fn passes_on_the_python_interop_extension() {
    if !python3("passes_on_the_python_interop_extension") {
        return;
    }
    let script = tests_dir().join("interop/ext.py");
    let (code, rows) = check_json(
        &["--timeout", "20s", "--probe-timeout", "10s"],
        &["python3", &script.to_string_lossy()],
    );
    let not_passed: Vec<_> = rows
        .iter()
        .filter(|(_, status, _)| status != "pass")
        .collect();
    assert!(not_passed.is_empty(), "rows not passed: {not_passed:?}");
    assert_eq!(code, Some(0));
}

/// The Node.js extension on npm `json-rpc-2.0` serves its tools correctly: it exits
/// 0, and its only warnings are JSON-RPC strictness the Core never exercises.
#[test]
fn passes_on_a_node_extension_on_json_rpc_2_0() {
    const TEST: &str = "passes_on_a_node_extension_on_json_rpc_2_0";
    if !available("node", TEST) {
        return;
    }
    let dir = tests_dir().join("interop/node");
    if !dir.join("node_modules/json-rpc-2.0").is_dir() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{TEST}: tests/interop/node/node_modules is missing, and CI is set \
             (run `npm ci --prefix tests/interop/node`)"
        );
        eprintln!(
            "skipping {TEST}: run `npm ci --prefix tests/interop/node` to install json-rpc-2.0"
        );
        return;
    }
    let script = dir.join("ext.js");
    let (code, rows) = check_json(
        &["--timeout", "20s", "--probe-timeout", "10s"],
        &["node", &script.to_string_lossy()],
    );
    let mut warned: Vec<&str> = rows
        .iter()
        .filter(|(_, status, _)| status != "pass")
        .map(|(name, status, _)| {
            assert_eq!(status, "warn", "{name}: {rows:?}");
            name.as_str()
        })
        .collect();
    warned.sort_unstable();
    assert_eq!(
        warned,
        [
            "id beyond 2^53 echoed",
            "id beyond i64 echoed",
            "invalid request (method not a string)"
        ],
        "{rows:?}"
    );
    for tool in ["greet", "add", "count"] {
        assert_eq!(row(&rows, &format!("call {tool}")).0, "pass");
    }
    assert_eq!(code, Some(0));
}

#[test]
fn prints_a_table_that_says_tools_are_called() {
    if !python3("prints_a_table_that_says_tools_are_called") {
        return;
    }
    let script = faulty_ext();
    let output = dhara(&["check", "--", "python3", &script, "other-id"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stdout.contains("each tool (the first 16) is called"),
        "{stdout}"
    );
    let line = stdout
        .lines()
        .find(|l| l.contains("call echo"))
        .unwrap_or_default();
    assert!(line.trim_start().starts_with("FAIL"), "{stdout}");
    assert!(
        line.contains("sent id 3, the reply has id 1003"),
        "{stdout}"
    );
    assert!(
        stdout.contains("23 passed, 2 failed, 0 warnings, 0 skipped"),
        "{stdout}"
    );
}

#[test]
fn help_documents_every_row_and_the_exit_codes() {
    let output = dhara(&["check", "--help"]);
    assert_eq!(output.status.code(), Some(0));
    let help = String::from_utf8_lossy(&output.stdout);
    for name in FAULTY_ROWS {
        let name = name.strip_suffix(" echo").map_or(name, |_| "call TOOL");
        if name == "call now" {
            continue;
        }
        let line = help.lines().find(|l| l.trim_start().starts_with(name));
        assert!(
            line.is_some_and(|l| l.contains("FAIL") || l.contains("WARN")),
            "the help gives {name:?} its severity: {help}"
        );
    }
    for words in [
        "CALLS EACH OF ITS TOOLS",
        "--no-calls",
        "--call TOOL JSON",
        "--strict",
        "--probe-timeout",
        "0 no FAIL",
        "1 a FAIL",
        "2 usage error",
        "5 the command cannot be started",
    ] {
        assert!(help.contains(words), "{words:?} in {help}");
    }
}

#[test]
fn trace_shows_every_line_with_its_direction() {
    if !python3("trace_shows_every_line_with_its_direction") {
        return;
    }
    let script = faulty_ext();
    let output = dhara(&["check", "--trace", "--", "python3", &script]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(r#"-> {"jsonrpc":"2.0","id":1,"method":"initialize""#),
        "{stderr}"
    );
    assert!(
        stderr.contains(r#"<- {"jsonrpc":"2.0","id":1,"result":"#),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            r#"-> {"jsonrpc":"2.0","id":3,"method":"tools/execute","params":{"toolName":"echo""#
        ),
        "{stderr}"
    );
}

#[test]
fn usage_mistakes_exit_with_2() {
    for args in [
        &["check"][..],
        &["check", "--"],
        &["check", "--bogus", "--", "x"],
        &["check", "--call", "echo", "{", "--", "x"],
        &["check", "--probe-timeout", "soon", "--", "x"],
    ] {
        let output = dhara(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&output.stderr).contains("usage: dhara check"));
    }
}

#[test]
fn a_command_that_cannot_start_exits_with_5() {
    let output = dhara(&["check", "--", "/nonexistent/dhara-check-extension"]);
    assert_eq!(output.status.code(), Some(5));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot start `/nonexistent/dhara-check-extension`"),
        "{stderr}"
    );
}

#[test]
fn cwd_is_where_the_extension_runs() {
    if !python3("cwd_is_where_the_extension_runs") {
        return;
    }
    let dir = tests_dir().join("broken");
    let (code, rows) = check_json(
        &["--probe-timeout", "10s", "--cwd", &dir.to_string_lossy()],
        &["python3", "faulty_ext.py"],
    );
    assert_rows(&rows, &[], &[]);
    assert_eq!(code, Some(0));
    let output = dhara(&["check", "--cwd", "/nonexistent/dir", "--", "python3"]);
    assert_eq!(output.status.code(), Some(2));
}
