//! `dhara check` against extensions that follow the protocol (the example extension,
//! the Python interop extension) and against ones that break it on purpose
//! (`tests/broken/faulty_ext.py`, one fault at a time): each fault must fail exactly
//! the rows it breaks, and nothing else.

use std::path::PathBuf;
use std::process::{Command, Output};

use dhara_protocol::json::{self, Value};

const DHARA: &str = env!("CARGO_BIN_EXE_dhara");

/// Every row a full run prints, when initialize succeeds.
const ALL_ROWS: [&str; 18] = [
    "initialize",
    "tool list",
    "unknown method",
    "malformed line",
    "answers after a malformed line",
    "invalid request (method not a string)",
    "invalid request (jsonrpc not \"2.0\")",
    "unknown tool",
    "missing required input",
    "string id echoed",
    "id beyond 2^53 echoed",
    "id beyond i64 echoed",
    "notification not answered",
    "only JSON-RPC on stdout",
    "shutdown exits with 0",
    "request before initialize",
    "end of stdin exits with 0",
    "batch request",
];

fn tests_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// `true` when `python3` runs; otherwise says why the test is skipped.
fn python3(test: &str) -> bool {
    let found = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("skipping {test}: python3 is not installed");
    }
    found
}

fn dhara(args: &[&str]) -> Output {
    match Command::new(DHARA).args(args).output() {
        Ok(output) => output,
        Err(e) => panic!("cannot run {DHARA}: {e}"),
    }
}

/// Runs `dhara check --json` with `options` against `command`; returns the exit code
/// and the report's rows as (check, status, detail).
fn check_json(options: &[&str], command: &[&str]) -> (Option<i32>, Vec<(String, String, String)>) {
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

/// The faulty extension with `fault`. `timeout` is short where the fault makes the
/// checker wait it out, and generous elsewhere so a loaded machine cannot fail a row.
fn check_fault(fault: &str, timeout: &str) -> (Option<i32>, Vec<(String, String, String)>) {
    let script = tests_dir().join("broken/faulty_ext.py");
    let script = script.to_string_lossy();
    check_json(
        &["--timeout", timeout, "--grace", "1s"],
        &["python3", &script, fault],
    )
}

/// Asserts that exactly the rows in `failing` have status `status` and every other
/// row of a full run passes.
fn assert_rows(rows: &[(String, String, String)], status: &str, failing: &[&str]) {
    let names: Vec<&str> = rows.iter().map(|(name, _, _)| name.as_str()).collect();
    assert_eq!(names, ALL_ROWS, "every check runs, in order");
    for (name, got, detail) in rows {
        let want = if failing.contains(&name.as_str()) {
            status
        } else {
            "pass"
        };
        assert_eq!(got, want, "row {name:?}: {detail}");
    }
}

#[test]
fn passes_on_the_example_extension() {
    let (code, rows) = check_json(&["--timeout", "10s"], &[DHARA, "example-extension"]);
    let failed: Vec<_> = rows
        .iter()
        .filter(|(_, status, _)| status == "fail")
        .collect();
    assert!(failed.is_empty(), "failed rows: {failed:?}");
    assert_eq!(code, Some(0));
    assert_rows(&rows, "fail", &[]);
}

#[test]
fn passes_on_the_python_interop_extension() {
    if !python3("passes_on_the_python_interop_extension") {
        return;
    }
    let script = tests_dir().join("interop/ext.py");
    let (code, rows) = check_json(
        &["--timeout", "10s"],
        &["python3", &script.to_string_lossy()],
    );
    let failed: Vec<_> = rows
        .iter()
        .filter(|(_, status, _)| status == "fail")
        .collect();
    assert!(failed.is_empty(), "failed rows: {failed:?}");
    assert_eq!(code, Some(0));
}

#[test]
fn passes_on_the_faulty_extension_without_a_fault() {
    if !python3("passes_on_the_faulty_extension_without_a_fault") {
        return;
    }
    let (code, rows) = check_fault("none", "10s");
    assert_rows(&rows, "fail", &[]);
    assert_eq!(code, Some(0));
}

/// One test per fault: the faulty extension fails exactly the rows it breaks.
macro_rules! fault_fails {
    ($($test:ident: $fault:literal, $timeout:literal => $($row:literal),+;)*) => {$(
        #[test]
        fn $test() {
            if !python3(stringify!($test)) {
                return;
            }
            let (code, rows) = check_fault($fault, $timeout);
            assert_rows(&rows, "fail", &[$($row),+]);
            assert_eq!(code, Some(1), "a failed check makes the exit code 1");
        }
    )*};
}

fault_fails! {
    fails_when_malformed_lines_get_no_reply: "ignores-malformed", "3s" => "malformed line";
    fails_when_string_ids_come_back_as_numbers: "numeric-ids", "10s" => "string id echoed";
    fails_when_large_ids_lose_precision: "float-ids", "10s" => "id beyond 2^53 echoed", "id beyond i64 echoed";
    fails_when_notifications_are_answered: "answers-notifications", "10s" => "notification not answered";
    fails_when_shutdown_exits_with_1: "exit-1-on-shutdown", "10s" => "shutdown exits with 0";
    fails_when_shutdown_is_ignored: "ignores-shutdown", "10s" => "shutdown exits with 0";
    fails_on_duplicate_tools_and_missing_descriptions: "duplicate-tools", "10s" => "tool list";
    fails_when_required_input_is_not_checked: "skips-validation", "10s" => "missing required input";
}

#[test]
fn fails_when_initialize_is_never_answered() {
    if !python3("fails_when_initialize_is_never_answered") {
        return;
    }
    let (code, rows) = check_fault("silent-initialize", "2s");
    assert_eq!(code, Some(1));
    let row = |name: &str| {
        rows.iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, s, d)| (s.as_str(), d.as_str()))
    };
    let Some(("fail", detail)) = row("initialize") else {
        panic!("initialize must fail: {rows:?}");
    };
    assert!(detail.contains("no reply within 2s"), "{detail}");
    assert_eq!(row("other checks").map(|(s, _)| s), Some("warn"));
    assert!(
        row("unknown method").is_none(),
        "nothing else runs without initialize"
    );
}

#[test]
fn warns_on_log_lines_on_stdout() {
    if !python3("warns_on_log_lines_on_stdout") {
        return;
    }
    let (code, rows) = check_fault("logs-to-stdout", "10s");
    assert_rows(&rows, "warn", &["only JSON-RPC on stdout"]);
    assert_eq!(code, Some(0), "warnings alone do not fail the check");
}

#[test]
fn prints_a_table_with_the_reason() {
    if !python3("prints_a_table_with_the_reason") {
        return;
    }
    let script = tests_dir().join("broken/faulty_ext.py");
    let output = dhara(&[
        "check",
        "--",
        "python3",
        &script.to_string_lossy(),
        "numeric-ids",
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1));
    let line = stdout
        .lines()
        .find(|l| l.contains("string id echoed"))
        .unwrap_or_default();
    assert!(line.trim_start().starts_with("FAIL"), "{stdout}");
    assert!(line.contains(r#"sent "17", got 17"#), "{stdout}");
    assert!(
        stdout.contains("17 passed, 1 failed, 0 warnings"),
        "{stdout}"
    );
}

#[test]
fn trace_shows_every_line_with_its_direction() {
    if !python3("trace_shows_every_line_with_its_direction") {
        return;
    }
    let script = tests_dir().join("broken/faulty_ext.py");
    let output = dhara(&[
        "check",
        "--trace",
        "--",
        "python3",
        &script.to_string_lossy(),
    ]);
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
        stderr.contains(r#"-> {"jsonrpc":"2.0","id":3,"method":"tools/list""#),
        "{stderr}"
    );
}

#[test]
fn usage_mistakes_exit_with_2() {
    for args in [
        &["check"][..],
        &["check", "--"],
        &["check", "--bogus", "--", "x"],
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
        &["--timeout", "10s", "--cwd", &dir.to_string_lossy()],
        &["python3", "faulty_ext.py"],
    );
    assert_rows(&rows, "fail", &[]);
    assert_eq!(code, Some(0));
    let output = dhara(&["check", "--cwd", "/nonexistent/dir", "--", "python3"]);
    assert_eq!(output.status.code(), Some(2));
}
