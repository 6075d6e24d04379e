//! The `dhara` command, run as a built binary: every subcommand this file covers
//! (demo, tools, call, session, example-extension) and every exit code.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use dhara_protocol::json::{self, Value};

const DHARA: &str = env!("CARGO_BIN_EXE_dhara");

/// Runs `dhara ARGS` with `stdin` as its input. The input is written from a thread
/// while the output is read: `dhara session` reads its input only as calls end, so
/// writing it all first could leave both sides waiting on a full pipe.
fn dhara_with_input(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(DHARA)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the dhara binary starts");
    let mut input = child.stdin.take().expect("piped stdin");
    let stdin = stdin.to_string();
    let writer = std::thread::spawn(move || input.write_all(stdin.as_bytes()));
    let output = child.wait_with_output().expect("dhara finishes");
    writer
        .join()
        .expect("the writer thread")
        .expect("stdin written");
    output
}

fn dhara(args: &[&str]) -> Output {
    dhara_with_input(args, "")
}

/// `dhara ARGS -- dhara example-extension`
fn with_example(args: &[&str]) -> Output {
    let mut all = args.to_vec();
    all.extend(["--", DHARA, "example-extension"]);
    dhara(&all)
}

fn code(output: &Output) -> i32 {
    output.status.code().expect("dhara exits with a code")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The stdout of `--json` mode: exactly one line, which is JSON.
fn json_line(output: &Output) -> Value {
    let text = stdout(output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "exactly one line on stdout, got {text:?}");
    json::parse(lines[0].as_bytes()).expect("the line is JSON")
}

/// A directory of its own for one test.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dhara-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// An extension written as a shell script that answers `initialize` (request 1) with
/// one tool `t`, then runs `after` (shell commands; the Core's ids start at 1).
fn scripted_extension(after: &str) -> Vec<String> {
    let init = r#"{"jsonrpc":"2.0","id":1,"result":{"name":"scripted","version":"1","tools":[{"name":"t","description":"a tool","inputSchema":{"type":"object"}}]}}"#;
    let script = format!("read line; echo '{init}'; {after}");
    vec![String::from("sh"), String::from("-c"), script]
}

fn call_scripted(after: &str, extra: &[&str]) -> Output {
    let script = scripted_extension(after);
    let mut args = vec!["call", "t"];
    args.extend_from_slice(extra);
    args.push("--");
    args.extend(script.iter().map(String::as_str));
    dhara(&args)
}

// ---- usage ------------------------------------------------------------------------

#[test]
fn no_arguments_prints_usage_and_exits_2() {
    let out = dhara(&[]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("USAGE"));
}

#[test]
fn help_prints_usage_and_exits_0() {
    for flag in ["--help", "-h", "help"] {
        let out = dhara(&[flag]);
        assert_eq!(code(&out), 0, "{flag}");
        let text = stdout(&out);
        for command in [
            "demo",
            "tools",
            "call",
            "session",
            "check",
            "example-extension",
            "--timeout",
            "--grace",
        ] {
            assert!(text.contains(command), "usage mentions {command}");
        }
    }
}

#[test]
fn unknown_command_exits_2() {
    let out = dhara(&["frobnicate"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("unknown command `frobnicate`"));
}

#[test]
fn usage_mistakes_exit_2_with_a_reason() {
    let cases: &[(&[&str], &str)] = &[
        (&["call"], "needs a tool name"),
        (&["call", "echo"], "missing the extension command"),
        (&["call", "echo", "--"], "missing the extension command"),
        (
            &["call", "echo", "--timeout", "soon", "--", "x"],
            "not a duration",
        ),
        (&["call", "echo", "--grace"], "needs a value"),
        (
            &["call", "echo", "--bogus", "--", "x"],
            "unknown option --bogus",
        ),
        (
            &["call", "echo", "{}", "extra", "--", "x"],
            "unexpected argument `extra`",
        ),
        (&["tools", "extra", "--", "x"], "takes no arguments"),
        (&["session", "extra", "--", "x"], "takes no arguments"),
        (&["demo", "--json"], "unknown option --json"),
        (&["demo", "extra"], "takes no arguments"),
        (&["example-extension", "extra"], "takes no arguments"),
        (
            &["tools", "--cwd", "/nonexistent/dhara", "--", "x"],
            "not a directory",
        ),
    ];
    for (args, reason) in cases {
        let out = dhara(args);
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(reason),
            "{args:?}: expected {reason:?} in {:?}",
            stderr(&out)
        );
    }
}

#[test]
fn input_that_is_not_json_exits_2() {
    let out = with_example(&["call", "echo", "{text: hi}"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("INPUT_JSON is not JSON"),
        "{}",
        stderr(&out)
    );
    let out = with_example(&["call", "echo", "{text: hi}", "--json"]);
    assert_eq!(code(&out), 2);
    assert_eq!(json_line(&out)["error"]["kind"], Value::from("usage"));
}

#[test]
fn unknown_tool_exits_2_and_lists_the_known_ones() {
    let out = with_example(&["call", "nope"]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(err.contains("unknown tool `nope`"), "{err}");
    assert!(
        err.contains("echo, add, sleep, read_file, image, fail, hang"),
        "{err}"
    );
}

// ---- call: one exit code each --------------------------------------------------------

#[test]
fn call_prints_text_and_exits_0() {
    let out = with_example(&["call", "echo", r#"{"text": "hello, world"}"#]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "hello, world\n");
}

#[test]
fn call_json_prints_the_result_as_one_line() {
    let out = with_example(&["call", "add", r#"{"a": 2, "b": 40}"#, "--json"]);
    assert_eq!(code(&out), 0);
    let result = json_line(&out);
    assert_eq!(result["content"][0]["text"], Value::from("42"));
    assert_eq!(result["isError"], Value::from(false));
}

#[test]
fn tool_error_exits_1() {
    let out = with_example(&["call", "fail"]);
    assert_eq!(code(&out), 1);
    assert!(stdout(&out).contains("always fails"));
    assert!(stderr(&out).contains("isError: true"));
    let out = with_example(&["call", "fail", "--json"]);
    assert_eq!(code(&out), 1);
    assert_eq!(json_line(&out)["isError"], Value::from(true));
}

#[test]
fn json_rpc_error_exits_3() {
    let out = with_example(&["call", "echo"]);
    assert_eq!(code(&out), 3);
    assert!(
        stderr(&out).contains("-32602: Missing required parameter 'text'"),
        "{}",
        stderr(&out)
    );
    let out = with_example(&["call", "echo", "{}", "--json"]);
    assert_eq!(code(&out), 3);
    let line = json_line(&out);
    assert_eq!(line["error"]["code"], Value::from(-32602));
    assert_eq!(line["error"]["data"]["toolName"], Value::from("echo"));
}

#[test]
fn invalid_result_is_a_protocol_violation_exit_3() {
    let out = call_scripted(
        r#"read line; echo '{"jsonrpc":"2.0","id":2,"result":{"content":5}}'; read line"#,
        &["--json"],
    );
    assert_eq!(code(&out), 3, "{}", stderr(&out));
    assert_eq!(
        json_line(&out)["error"]["kind"],
        Value::from("invalid_result")
    );
}

#[test]
fn timeout_exits_4_after_shutdown_and_kill() {
    let started = Instant::now();
    let out = with_example(&[
        "call",
        "hang",
        "--timeout",
        "300ms",
        "--grace",
        "300ms",
        "--json",
    ]);
    assert_eq!(code(&out), 4);
    assert_eq!(json_line(&out)["error"]["kind"], Value::from("timeout"));
    let err = stderr(&out);
    assert!(err.contains("no reply within 300ms"), "{err}");
    assert!(
        err.contains("did not exit within the grace period (300ms) and was killed"),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn the_kill_reaches_grandchildren() {
    if !Path::new("/proc/self").exists() {
        eprintln!("skipped: no /proc to look for the grandchild");
        return;
    }
    let dir = temp_dir("grandchild");
    let pid_file = dir.join("pid");
    // A launcher that stays as the parent, as npx does: the extension is a grandchild.
    // (A background job's stdin is /dev/null unless given explicitly, hence fd 3.)
    let script = format!(
        "exec 3<&0; {DHARA} example-extension <&3 & echo $! > {}; wait",
        pid_file.display()
    );
    let out = dhara(&[
        "call",
        "hang",
        "--timeout",
        "300ms",
        "--grace",
        "200ms",
        "--",
        "sh",
        "-c",
        &script,
    ]);
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    let pid = std::fs::read_to_string(&pid_file).expect("the launcher wrote the pid");
    // Alive: listed in /proc and not a zombie waiting to be reaped by init.
    let stat = PathBuf::from(format!("/proc/{}/stat", pid.trim()));
    let alive = || std::fs::read_to_string(&stat).is_ok_and(|s| !s.contains(") Z "));
    // Well within the 5 s an orphaned extension allows itself after its stdin closes.
    let deadline = Instant::now() + Duration::from_secs(2);
    while alive() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(), "the grandchild {} survived the kill", pid.trim());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn command_not_found_exits_5() {
    let out = dhara(&["call", "echo", "--", "dhara-no-such-command-anywhere"]);
    assert_eq!(code(&out), 5);
    assert!(stderr(&out).contains("command not found: `dhara-no-such-command-anywhere`"));
    let out = dhara(&["tools", "--json", "--", "dhara-no-such-command-anywhere"]);
    assert_eq!(code(&out), 5);
    assert_eq!(json_line(&out)["error"]["kind"], Value::from("spawn"));
}

#[test]
fn extension_exiting_exits_5() {
    // Before answering initialize.
    let out = dhara(&["call", "echo", "--", "sh", "-c", "exit 3"]);
    assert_eq!(code(&out), 5, "{}", stderr(&out));
    assert!(stderr(&out).contains("exited"), "{}", stderr(&out));
    // In the middle of a call.
    let out = call_scripted("read line; exit 0", &["--json"]);
    assert_eq!(code(&out), 5, "{}", stderr(&out));
    assert_eq!(json_line(&out)["error"]["kind"], Value::from("exited"));
}

// ---- call: content, progress, options -------------------------------------------------

#[test]
fn progress_goes_to_stderr() {
    let out = with_example(&["call", "sleep", r#"{"ms": 250}"#]);
    assert_eq!(code(&out), 0);
    assert_eq!(stdout(&out), "Slept 250 ms.\n");
    let err = stderr(&out);
    assert!(err.contains("progress: slept 100 of 250 ms"), "{err}");
    assert!(err.contains("progress: slept 250 of 250 ms"), "{err}");
}

#[test]
fn images_and_files_are_described() {
    let out = with_example(&["call", "image"]);
    assert_eq!(code(&out), 0);
    assert!(
        stdout(&out).starts_with("[image: image/png, "),
        "{}",
        stdout(&out)
    );

    let dir = temp_dir("files");
    std::fs::write(dir.join("note.txt"), "a note\n").unwrap();
    std::fs::write(dir.join("blob.bin"), [0u8, 159, 146, 150]).unwrap();
    let cwd = dir.to_str().unwrap();
    // --cwd sets the extension's working directory: relative paths resolve there.
    let out = with_example(&["call", "read_file", r#"{"path": "note.txt"}"#, "--cwd", cwd]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "a note\n");
    let out = with_example(&["call", "read_file", r#"{"path": "blob.bin"}"#, "--cwd", cwd]);
    assert_eq!(code(&out), 0);
    let text = stdout(&out);
    assert!(
        text.starts_with("[file: ")
            && text.contains("blob.bin, 4 bytes, application/octet-stream]"),
        "{text}"
    );
    let out = with_example(&["call", "read_file", r#"{"path": "missing"}"#, "--cwd", cwd]);
    assert_eq!(code(&out), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn trace_shows_every_message_with_direction_and_time() {
    let out = with_example(&["call", "echo", r#"{"text": "traced"}"#, "--trace"]);
    assert_eq!(code(&out), 0);
    let err = stderr(&out);
    assert!(
        err.contains(r#"s] -> {"jsonrpc":"2.0","id":1,"method":"initialize""#),
        "{err}"
    );
    assert!(
        err.contains(r#"s] <- {"jsonrpc":"2.0","id":2,"result""#),
        "{err}"
    );
    assert!(
        err.contains(r#"s] -> {"jsonrpc":"2.0","method":"shutdown"}"#),
        "{err}"
    );
    assert!(err.contains("exited with code 0"), "{err}");
    // The protocol stays on stderr: stdout has only the result.
    assert_eq!(stdout(&out), "traced\n");
}

#[test]
fn extension_stderr_is_passed_through_with_a_prefix() {
    let script = format!("echo 'starting up' >&2; exec {DHARA} example-extension");
    let out = dhara(&[
        "call",
        "echo",
        r#"{"text": "x"}"#,
        "--",
        "sh",
        "-c",
        &script,
    ]);
    assert_eq!(code(&out), 0);
    assert!(
        stderr(&out).contains("[extension] starting up"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stdout(&out), "x\n");
}

// ---- tools ---------------------------------------------------------------------------

#[test]
fn tools_lists_names_descriptions_and_schemas() {
    let out = with_example(&["tools"]);
    assert_eq!(code(&out), 0);
    let text = stdout(&out);
    assert!(text.starts_with("dhara-example "), "{text}");
    assert!(text.contains("7 tools"));
    for name in ["echo", "add", "sleep", "read_file", "image", "fail", "hang"] {
        assert!(text.contains(&format!("\n  {name}\n")), "{name} listed");
    }
    assert!(text.contains(
        r#"input: {"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#
    ));
}

#[test]
fn tools_json_is_the_initialize_result() {
    let out = with_example(&["tools", "--json"]);
    assert_eq!(code(&out), 0);
    let info = json_line(&out);
    assert_eq!(info["name"], Value::from("dhara-example"));
    assert_eq!(info["tools"].as_array().map(Vec::len), Some(7));
    assert_eq!(
        info["tools"][2]["inputSchema"]["properties"]["ms"]["type"],
        Value::from("integer")
    );
}

// ---- session -------------------------------------------------------------------------

#[test]
fn session_runs_calls_concurrently_and_reports_line_numbers() {
    let input = concat!(
        r#"{"tool": "sleep", "input": {"ms": 400}}"#,
        "\n",
        r#"{"tool": "echo", "input": {"text": "quick"}}"#,
        "\n",
        "\n",
        r#"{"tool": "add", "input": {"a": 1, "b": 2}}"#,
        "\n",
    );
    let started = Instant::now();
    let out = dhara_with_input(&["session", "--", DHARA, "example-extension"], input);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| json::parse(l.as_bytes()).expect("JSON line"))
        .collect();
    assert_eq!(lines.len(), 3);
    // The sleep started first but ends last: the calls overlapped.
    assert_eq!(lines[2]["line"], Value::from(1));
    assert_eq!(
        lines[2]["result"]["content"][0]["text"],
        Value::from("Slept 400 ms.")
    );
    let quick = lines
        .iter()
        .find(|l| l["line"] == Value::from(2))
        .expect("line 2");
    assert_eq!(quick["tool"], Value::from("echo"));
    assert_eq!(quick["result"]["content"][0]["text"], Value::from("quick"));
    let sum = lines
        .iter()
        .find(|l| l["line"] == Value::from(4))
        .expect("line 4");
    assert_eq!(sum["result"]["content"][0]["text"], Value::from("3"));
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn session_exit_code_is_the_worst_call() {
    let input = concat!(
        r#"{"tool": "echo", "input": {"text": "fine"}}"#,
        "\n",
        r#"{"tool": "fail"}"#,
        "\n",
    );
    let out = dhara_with_input(&["session", "--", DHARA, "example-extension"], input);
    assert_eq!(code(&out), 1, "{}", stderr(&out));

    let input = concat!(
        r#"{"tool": "fail"}"#,
        "\n",
        r#"{"tool": "echo", "input": {}}"#,
        "\n",
    );
    let out = dhara_with_input(&["session", "--", DHARA, "example-extension"], input);
    assert_eq!(code(&out), 3, "{}", stderr(&out));

    let input = concat!(
        "not json\n",
        r#"{"input": {}}"#,
        "\n",
        r#"{"tool": "nope"}"#,
        "\n"
    );
    let out = dhara_with_input(&["session", "--", DHARA, "example-extension"], input);
    assert_eq!(code(&out), 2);
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 3, "{text}");
    assert!(
        text.contains(r#"{"line":1,"error":{"kind":"usage","message":"line 1 is not JSON"#),
        "{text}"
    );
    assert!(text.contains(r#""kind":"unknown_tool""#), "{text}");
}

#[test]
fn session_with_a_timeout_exits_4() {
    let input = concat!(r#"{"tool": "hang"}"#, "\n");
    let out = dhara_with_input(
        &[
            "session",
            "--timeout",
            "300ms",
            "--grace",
            "200ms",
            "--",
            DHARA,
            "example-extension",
        ],
        input,
    );
    assert_eq!(code(&out), 4, "{}", stderr(&out));
    assert!(stdout(&out).contains(r#""kind":"timeout""#));
}

#[test]
fn session_with_no_input_shuts_down_cleanly() {
    let out = dhara_with_input(&["session", "--", DHARA, "example-extension"], "");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
}

// ---- example-extension, spoken to directly ---------------------------------------------

#[test]
fn example_extension_speaks_the_protocol_on_stdio() {
    let input = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"version":"0.1.0","cwd":"/"}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":"a","method":"tools/execute","params":{"toolName":"add","input":{"a":1.5,"b":2}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"shutdown"}"#,
        "\n",
    );
    let out = dhara_with_input(&["example-extension"], input);
    assert_eq!(code(&out), 0);
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| json::parse(l.as_bytes()).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{}", stdout(&out));
    assert_eq!(lines[0]["result"]["name"], Value::from("dhara-example"));
    assert_eq!(lines[1]["id"], Value::from("a"));
    assert_eq!(lines[1]["result"]["content"][0]["text"], Value::from("3.5"));
}

#[test]
fn example_extension_exits_0_when_stdin_closes() {
    let out = dhara_with_input(&["example-extension"], "");
    assert_eq!(code(&out), 0);
    assert_eq!(stdout(&out), "");
}

#[test]
fn example_extension_does_not_outlive_its_host() {
    // A call that never ends is pending when stdin closes: the host is gone, so the
    // extension exits after a 5 s allowance instead of lingering.
    let input = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"version":"0.1.0","cwd":"/"}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/execute","params":{"toolName":"hang","input":{}}}"#,
        "\n",
    );
    let started = Instant::now();
    let out = dhara_with_input(&["example-extension"], input);
    let took = started.elapsed();
    assert_eq!(code(&out), 0);
    assert!(
        took >= Duration::from_secs(5) && took < Duration::from_secs(15),
        "{took:?}"
    );
}

// ---- demo ----------------------------------------------------------------------------

#[test]
fn demo_runs_to_the_end() {
    let started = Instant::now();
    let out = dhara(&["demo"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    for expected in [
        "dhara-example 0.1.0 offers 7 tools",
        "result: Hello from the Core",
        "result: 42",
        "   progress: slept 800 of 800 ms",
        "result: Slept 800 ms.",
        "result: [image: image/png, ",
        "tool error: This tool always fails",
        "JSON-RPC error -32602: Missing required parameter 'text'",
        "the call ends now with a timeout error",
        "the Core sends `shutdown` and allows 1s of grace",
        "the Core killed the process group",
        "14 tools; both offer every name, so each is listed by its qualified name:",
        "call echo: refused: tool name 'echo' is ambiguous: use one of 'left__echo', 'right__echo'",
        "`right` was killed when its shutdown grace ran out; the fleet starts it again",
        "`right` is ready again: start 2, pid ",
        "call right__echo: result: served by the new process",
        "Done in ",
    ] {
        assert!(
            text.contains(expected),
            "the transcript has {expected:?}:\n{text}"
        );
    }
    // Not a terminal: progress as plain lines, no carriage returns.
    assert!(!text.contains('\r'));
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn demo_trace_shows_the_messages() {
    let out = dhara(&["demo", "--trace"]);
    assert_eq!(code(&out), 0);
    let err = stderr(&out);
    assert!(
        err.contains(r#"-> {"jsonrpc":"2.0","id":1,"method":"initialize""#),
        "{err}"
    );
    assert!(
        err.contains(r#"<- {"jsonrpc":"2.0","method":"progress""#),
        "{err}"
    );
    assert!(err.contains("killed the process group"), "{err}");
}

#[test]
fn session_lets_calls_past_the_limit_wait_and_ends_every_one() {
    // 20,000 calls, far past the 1,024 that may be in flight at once: each waits for
    // a slot (stdin is read no faster than calls end) and ends with its result.
    const CALLS: usize = 20_000;
    let input: String = (0..CALLS)
        .map(|n| format!("{{\"tool\": \"add\", \"input\": {{\"a\": {n}, \"b\": 1}}}}\n"))
        .collect();
    let out = dhara_with_input(&["session", "--", DHARA, "example-extension"], &input);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let mut seen = vec![false; CALLS];
    for line in stdout(&out).lines() {
        let line = json::parse(line.as_bytes()).expect("JSON line");
        let number = line["line"].as_u64().expect("a line number") as usize;
        let text = line["result"]["content"][0]["text"].as_str();
        assert_eq!(text, Some(number.to_string().as_str()), "{line}");
        assert!(
            !std::mem::replace(&mut seen[number - 1], true),
            "line {number} twice"
        );
    }
    assert!(seen.iter().all(|&s| s), "every call ends with a result");
    assert!(!stderr(&out).contains("in flight"), "{}", stderr(&out));
}
