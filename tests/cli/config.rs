//! `dhara tools --config FILE`, run as a built binary: every tool of every
//! extension with its extension and qualified name, the mistakes in the file
//! (exit 2, naming the JSON path), and an extension that cannot start (exit 5).

use std::path::PathBuf;
use std::process::{Command, Output};

use dhara_protocol::json::{self, Value};

const DHARA: &str = env!("CARGO_BIN_EXE_dhara");

/// Writes a config file for this test and returns its path.
fn config_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dhara-cli-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, text).expect("the config file is written");
    path
}

fn example(name: &str, extra: &str) -> String {
    let dhara = json::to_vec(&Value::from(DHARA));
    let dhara = String::from_utf8_lossy(&dhara);
    format!(r#""{name}": {{"command": [{dhara}, "example-extension"]{extra}}}"#)
}

fn tools(path: &PathBuf, extra: &[&str]) -> Output {
    Command::new(DHARA)
        .arg("tools")
        .arg("--config")
        .arg(path)
        .args(extra)
        .output()
        .expect("dhara runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn every_tool_is_listed_with_its_extension_and_qualified_name() {
    let path = config_file(
        "two",
        &format!(
            r#"{{"extensions": {{{}, {}}}}}"#,
            example("web", r#", "timeout": "10s""#),
            example("files", r#", "cwd": ".", "env": {"TOKEN": "x"}"#)
        ),
    );
    let output = tools(&path, &[]);
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(stdout.starts_with("web (dhara-example "), "{stdout}");
    assert!(stdout.contains("\nfiles (dhara-example "), "{stdout}");
    assert!(stdout.contains(
        "  web__echo\n    extension web, qualified name web__echo; the bare name echo is ambiguous\n"
    ));
    assert!(stdout.contains("  files__hang\n    extension files, qualified name files__hang"));

    let output = tools(&path, &["--json"]);
    assert_eq!(output.status.code(), Some(0));
    let listed = json::parse(&output.stdout).expect("one JSON value");
    let tools = listed["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), 14);
    assert_eq!(tools[0]["name"], Value::from("web__echo"));
    assert_eq!(tools[0]["qualifiedName"], Value::from("web__echo"));
    assert_eq!(tools[0]["realName"], Value::from("echo"));
    assert_eq!(tools[7]["extension"], Value::from("files"));
    assert_eq!(listed["extensions"][1]["name"], Value::from("files"));
}

#[test]
fn a_mistake_in_the_file_is_a_usage_error_naming_its_path() {
    let cases = [
        (
            r#"{"extensions": {"web": {"comand": ["x"]}}}"#,
            "extensions.web.comand: unknown field",
        ),
        (
            r#"{"extensions": {"web": {"cwd": "."}}}"#,
            "extensions.web.command: missing",
        ),
        (
            r#"{"extensions": {"web": {"command": ["x"], "timeout": 5}}}"#,
            "extensions.web.timeout: expected a duration",
        ),
        (r#"{"extensions": {"web": {"command": ["x"]}}"#, "not JSON"),
    ];
    for (i, (body, message)) in cases.iter().enumerate() {
        let path = config_file(&format!("bad{i}"), body);
        let output = tools(&path, &[]);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{body}: {stderr}");
        assert!(
            stderr.starts_with(&format!("dhara: {}: {message}", path.display())),
            "{stderr}"
        );
    }
    let missing = std::env::temp_dir().join("dhara-no-such-config.json");
    assert_eq!(tools(&missing, &[]).status.code(), Some(2));
    let path = config_file(
        "extra",
        &format!(r#"{{"extensions": {{{}}}}}"#, example("web", "")),
    );
    assert_eq!(tools(&path, &["--", "x"]).status.code(), Some(2));
    assert_eq!(tools(&path, &["--env", "NOEQUALS"]).status.code(), Some(2));
}

#[test]
fn an_extension_that_cannot_start_is_reported_and_the_others_listed() {
    let path = config_file(
        "broken",
        &format!(
            r#"{{"extensions": {{"gone": {{"command": ["/nonexistent/ext"]}}, {}}}}}"#,
            example("web", "")
        ),
    );
    let output = tools(&path, &[]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains("dhara: extension 'gone': the extension could not be started"),
        "{stderr}"
    );
    // Alone, its tools are offered by their bare names.
    assert!(text(&output.stdout).contains("  echo\n    extension web, qualified name web__echo\n"));
}

#[test]
fn call_routes_by_qualified_name_and_refuses_an_ambiguous_one() {
    let path = config_file(
        "call",
        &format!(
            r#"{{"extensions": {{{}, {}}}}}"#,
            example("a", ""),
            example("b", "")
        ),
    );
    let call = |args: &[&str]| {
        Command::new(DHARA)
            .args(["call", "--config"])
            .arg(&path)
            .args(args)
            .output()
            .expect("dhara runs")
    };
    let output = call(&["b__echo", r#"{"text":"hi"}"#]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "hi\n");

    let output = call(&["echo", r#"{"text":"hi"}"#]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("use one of 'a__echo', 'b__echo'"),
        "{}",
        text(&output.stderr)
    );
    let output = call(&["nothing"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("known tools: a__echo, a__add"));
}

#[test]
fn a_session_survives_a_kill_and_the_next_call_is_served_by_a_new_process() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;

    let path = config_file(
        "session",
        &format!(
            r#"{{"extensions": {{{}, {}}}}}"#,
            example("slow", r#", "timeout": "300ms", "grace": "200ms""#),
            example("other", "")
        ),
    );
    let mut child = Command::new(DHARA)
        .args(["session", "--config"])
        .arg(&path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("dhara runs");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    writeln!(stdin, r#"{{"tool":"slow__hang"}}"#).expect("written");
    let mut first = String::new();
    stdout.read_line(&mut first).expect("a line");
    let first = json::parse(first.trim().as_bytes()).expect("JSON");
    assert_eq!(first["line"], Value::from(1));
    assert_eq!(first["error"]["kind"], Value::from("timeout"));

    // By now the hung process is being shut down and killed; the call that comes
    // later is served by its successor.
    writeln!(
        stdin,
        r#"{{"tool":"slow__echo","input":{{"text":"again"}}}}"#
    )
    .expect("written");
    drop(stdin);
    let mut second = String::new();
    stdout.read_line(&mut second).expect("a line");
    let second = json::parse(second.trim().as_bytes()).expect("JSON");
    assert_eq!(second["line"], Value::from(2));
    assert_eq!(second["tool"], Value::from("slow__echo"));
    assert_eq!(second["result"]["content"][0]["text"], Value::from("again"));
    let output = child.wait_with_output().expect("dhara ends");
    assert_eq!(
        output.status.code(),
        Some(4),
        "the worst outcome: a timeout"
    );
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains(
            "extension 'slow' was killed when its shutdown grace ran out; it will be started again"
        ),
        "{stderr}"
    );
}

#[test]
fn check_runs_on_one_extension_of_the_file() {
    // `web` starts only when the file's env reached it.
    let dhara = json::to_vec(&Value::from(format!(
        r#"test "$DHARA_TEST" = 1 && exec "{DHARA}" example-extension"#
    )));
    let web = format!(
        r#""web": {{"command": ["sh", "-c", {}], "timeout": "5s", "env": {{"DHARA_TEST": "1"}}}}"#,
        String::from_utf8_lossy(&dhara)
    );
    let path = config_file(
        "check",
        &format!(r#"{{"extensions": {{{web}, {}}}}}"#, example("files", "")),
    );
    let check = |args: &[&str]| {
        Command::new(DHARA)
            .args(["check", "--config"])
            .arg(&path)
            .args(args)
            .output()
            .expect("dhara runs")
    };
    // `hang` fails its row on purpose: only `echo` is called, with an input of ours
    // (check's own options pass through).
    let output = check(&["web", "--call", "echo", r#"{"text":"hi"}"#, "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let report = json::parse(&output.stdout).expect("one JSON value");
    assert_eq!(report["passed"], Value::from(true));
    // The file's command as it is: its env is set on the process, not put in front.
    assert_eq!(report["command"][0], Value::from("sh"));
    assert_eq!(report["command"].as_array().map(|a| a.len()), Some(3));

    let output = check(&["nothing"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("no extension `nothing` in the file; it names web, files")
    );
    assert_eq!(check(&[]).status.code(), Some(2));
    assert_eq!(check(&["web", "--", "x"]).status.code(), Some(2));
}
