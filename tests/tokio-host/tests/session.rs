//! `tokio-host` end to end: a normal session and a timeout against
//! `dhara example-extension` (built from the main crate), and the full-pipe case
//! against a Python extension that stops reading its stdin.
//!
//! The Python tests skip, saying so, when `python3` cannot be run; with `CI` set
//! they fail instead.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use dhara_protocol::json::{self, Value};

const TOKIO_HOST: &str = env!("CARGO_BIN_EXE_tokio-host");

/// The main crate's `dhara` binary, built once (quick when `cargo test` built it).
fn dhara() -> &'static Path {
    static DHARA: OnceLock<PathBuf> = OnceLock::new();
    DHARA.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| String::from("cargo"));
        let status = Command::new(cargo)
            .args(["build", "--bin", "dhara", "--manifest-path"])
            .arg(root.join("Cargo.toml"))
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building dhara failed");
        root.join("target/debug/dhara")
    })
}

/// Runs `tokio-host ARGS` with `input` on its stdin.
fn tokio_host(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(TOKIO_HOST)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tokio-host starts");
    let mut stdin = child.stdin.take().expect("piped");
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("tokio-host runs");
    writer.join().expect("the writer ends");
    out
}

fn lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| json::parse(l.as_bytes()).expect("a JSON line"))
        .collect()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn line_numbered(lines: &[Value], n: u64) -> &Value {
    lines
        .iter()
        .find(|l| l["line"].as_u64() == Some(n))
        .unwrap_or_else(|| panic!("no output line for input line {n}: {lines:?}"))
}

/// `python3` can be run; otherwise says why the test is skipped (or fails in CI).
fn python_available() -> bool {
    let ok = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "python3 is required in CI"
        );
        eprintln!("SKIPPED: python3 cannot be run");
    }
    ok
}

fn script(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/scripts")
        .join(name);
    path.display().to_string()
}

#[test]
fn a_session_runs_calls_concurrently_and_prints_one_line_each() {
    let dhara = dhara().display().to_string();
    let input = concat!(
        r#"{"tool": "sleep", "input": {"ms": 300}}"#,
        "\n",
        r#"{"tool": "echo", "input": {"text": "quick"}}"#,
        "\n",
        "\n",
        r#"{"tool": "fail"}"#,
        "\n",
        "not json\n",
    );
    let out = tokio_host(&["--", &dhara, "example-extension"], input.as_bytes());
    // The worst outcome: line 5 is a usage error (2), above the tool error (1).
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let lines = lines(&out);
    assert_eq!(lines.len(), 4, "{lines:?}");
    // The sleep started first and ended last: the calls overlapped.
    assert_eq!(lines[3]["line"], Value::from(1));
    let sleep = &lines[3]["result"]["content"][0]["text"];
    assert_eq!(sleep, &Value::from("Slept 300 ms."));
    let echo = line_numbered(&lines, 2);
    assert_eq!(echo["tool"], Value::from("echo"));
    assert_eq!(echo["result"]["content"][0]["text"], Value::from("quick"));
    assert_eq!(echo["result"]["isError"], Value::Bool(false));
    assert_eq!(
        line_numbered(&lines, 4)["result"]["isError"],
        Value::Bool(true)
    );
    let bad = line_numbered(&lines, 5);
    assert_eq!(bad["error"]["kind"], Value::from("usage"));
    assert!(stderr(&out).contains("progress (line 1): slept 100 of 300 ms"));
}

#[test]
fn a_session_without_calls_shuts_down_and_exits_0() {
    let dhara = dhara().display().to_string();
    let out = tokio_host(&["--", &dhara, "example-extension"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
}

#[test]
fn a_call_past_its_deadline_times_out_and_the_extension_is_killed_after_the_grace() {
    let dhara = dhara().display().to_string();
    let input = concat!(r#"{"tool": "hang"}"#, "\n");
    let started = Instant::now();
    let args = [
        "--timeout",
        "300ms",
        "--grace",
        "200ms",
        "--",
        &dhara,
        "example-extension",
    ];
    let out = tokio_host(&args, input.as_bytes());
    let elapsed = started.elapsed();
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let lines = lines(&out);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["tool"], Value::from("hang"));
    assert_eq!(lines[0]["error"]["kind"], Value::from("timeout"));
    let message = lines[0]["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("no reply within 300ms"), "{message}");
    // `hang` ignores shutdown: the grace ran out and the host killed it.
    assert!(stderr(&out).contains("was killed"), "{}", stderr(&out));
    assert!(elapsed >= Duration::from_millis(500), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
}

#[test]
fn a_request_stuck_in_a_full_pipe_still_times_out_and_the_group_is_killed() {
    if !python_available() {
        return;
    }
    // 2 MB of input: far more than a pipe holds, and the extension reads none of it.
    let big = "x".repeat(2_000_000);
    let input = format!("{{\"tool\": \"sink\", \"input\": {{\"data\": \"{big}\"}}}}\n");
    let started = Instant::now();
    let stuck = script("stops_reading.py");
    let args = ["--timeout", "1s", "--grace", "1s", "--", "python3", &stuck];
    let out = tokio_host(&args, input.as_bytes());
    let elapsed = started.elapsed();

    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let lines = lines(&out);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["error"]["kind"], Value::from("timeout"));
    let stderr = stderr(&out);
    assert!(stderr.contains("was killed"), "{stderr}");
    // Timeout at 1 s, kill at 2 s: the stuck write held nothing up.
    assert!(elapsed >= Duration::from_secs(2), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");

    // The grandchild was in the extension's process group: it is gone too.
    let pid = stderr
        .lines()
        .find_map(|l| l.strip_prefix("[extension] grandchild "))
        .unwrap_or_else(|| panic!("no grandchild pid in: {stderr}"));
    if cfg!(target_os = "linux") {
        assert!(
            !is_running(pid.trim()),
            "grandchild {pid} survived the kill"
        );
    }
}

#[test]
fn stdin_is_closed_after_shutdown_and_the_real_exit_code_is_reported() {
    if !python_available() {
        return;
    }
    // It ignores `shutdown` and exits with code 7 only at the end of its stdin.
    let ext = script("exits_with_7.py");
    let input = concat!(r#"{"tool": "echo", "input": {"n": 1}}"#, "\n");
    let started = Instant::now();
    let out = tokio_host(&["--grace", "5s", "--", "python3", &ext], input.as_bytes());
    // Well within the grace: stdin was closed, so it was not left to be killed.
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("killed"), "{}", stderr(&out));
    let lines = lines(&out);
    assert_eq!(
        lines[0]["result"]["content"][0]["text"],
        Value::from(r#"{"n": 1}"#)
    );
    assert!(
        stderr(&out).contains("the extension exited with code 7"),
        "{}",
        stderr(&out)
    );
}

/// Whether a process with this pid runs (a zombie does not count), read from `/proc`.
fn is_running(pid: &str) -> bool {
    // Give the reaper a moment: the kill is sent, the exit is asynchronous.
    for _ in 0..20 {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return false,
            Ok(stat)
                if stat
                    .rsplit(')')
                    .next()
                    .is_some_and(|s| s.trim_start().starts_with('Z')) =>
            {
                return false;
            }
            Ok(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
    true
}
