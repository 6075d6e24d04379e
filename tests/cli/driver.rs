//! The std driver's library API, over the built `dhara example-extension`: the blocking
//! conveniences, overlapping calls through the event loop, the trace hook, captured
//! stderr, and the kill.

use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dhara_protocol::driver::{self, ExtensionProcess, Stderr, Traced};
use dhara_protocol::host::{CallError, CallOptions, Config, Event, Reply, UsageError};
use dhara_protocol::json::{self, Value};
use dhara_protocol::message::{Content, ExecuteParams};

const DHARA: &str = env!("CARGO_BIN_EXE_dhara");

fn example(config: Config, stderr: Stderr) -> ExtensionProcess {
    let mut command = Command::new(DHARA);
    command.arg("example-extension");
    let mut options = driver::Options::default();
    options.config = config;
    options.stderr = stderr;
    ExtensionProcess::spawn(command, options).expect("spawn")
}

fn input(text: &str) -> Value {
    json::parse(text.as_bytes()).expect("test input is JSON")
}

fn text(content: &[Content]) -> &str {
    match content.first() {
        Some(Content::Text { text }) => text,
        other => panic!("expected text, got {other:?}"),
    }
}

#[test]
fn initialize_call_and_shutdown() {
    let mut ext = example(Config::default(), Stderr::Discard);
    let info = ext.initialize("/").expect("initialize");
    assert_eq!(info.name, "dhara-example");
    assert_eq!(info.tools.len(), 7);
    assert_eq!(ext.core().tools().len(), 7);
    assert_eq!(ext.list_tools().expect("tools/list").len(), 7);

    let result = ext
        .call("echo", input(r#"{"text":"hi"}"#), |_| {})
        .expect("echo");
    assert_eq!(text(&result.content), "hi");

    let mut progress = Vec::new();
    let result = ext
        .call("sleep", input(r#"{"ms":250}"#), |p| {
            progress.push(p.message.clone())
        })
        .expect("sleep");
    assert_eq!(text(&result.content), "Slept 250 ms.");
    assert_eq!(
        progress,
        [
            "slept 100 of 250 ms",
            "slept 200 of 250 ms",
            "slept 250 of 250 ms"
        ]
    );

    // The Core checks input against the tool's schema before sending it.
    match ext.call("echo", input("{}"), |_| {}) {
        Err(driver::Error::Usage(UsageError::InvalidInput { tool, .. })) => {
            assert_eq!(tool, "echo")
        }
        other => panic!("expected the Core to refuse the input, got {other:?}"),
    }
    assert_eq!(ext.shutdown(), Ok(Some(0)));
    assert!(!ext.killed(), "it exited on its own");
    assert!(ext.is_closed());
    assert!(ext.next_event().is_none());
}

#[test]
fn the_extension_answers_bad_input_when_the_core_does_not_check() {
    let mut ext = example(Config::default().validate_input(false), Stderr::Discard);
    ext.initialize("/").expect("initialize");
    match ext.call("echo", input("{}"), |_| {}) {
        Err(driver::Error::Call(CallError::Rpc(error))) => {
            assert_eq!(error.code.code(), -32602);
            assert_eq!(error.message, "Missing required parameter 'text'");
        }
        other => panic!("expected -32602, got {other:?}"),
    }
    assert_eq!(ext.shutdown(), Ok(Some(0)));
    assert!(ext.is_closed());
    assert!(ext.next_event().is_none());
}

#[test]
fn overlapping_calls_end_in_their_own_order() {
    let mut ext = example(Config::default(), Stderr::Discard);
    ext.initialize("/").expect("initialize");
    let slow = ext
        .start_call("sleep", input(r#"{"ms":300}"#))
        .expect("start sleep");
    let fast = ext
        .start_call("add", input(r#"{"a":1,"b":2}"#))
        .expect("start add");
    let mut ended = Vec::new();
    let mut slow_progress = 0;
    while ended.len() < 2 {
        match ext.next_event().expect("events until both end") {
            Event::CallEnded { call, result } => {
                let Ok(Reply::Executed(result)) = result else {
                    panic!("call {call:?} failed: {result:?}");
                };
                ended.push((call, text(&result.content).to_string()));
            }
            Event::Progress { call, .. } => {
                assert_eq!(call, Some(slow), "progress names its call");
                slow_progress += 1;
            }
            _ => {}
        }
    }
    assert_eq!(
        ended,
        [
            (fast, String::from("3")),
            (slow, String::from("Slept 300 ms."))
        ]
    );
    assert_eq!(slow_progress, 3);
    assert_eq!(ext.shutdown(), Ok(Some(0)));
}

#[test]
fn timeout_then_kill_after_the_grace() {
    let config = Config::default().grace(Duration::from_millis(200));
    let mut ext = example(config, Stderr::Discard);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    ext.set_trace(Box::new(move |elapsed, traced| {
        let entry = match traced {
            Traced::Sent(line) => format!("-> {}", String::from_utf8_lossy(line)),
            Traced::Received(line) => format!("<- {}", String::from_utf8_lossy(line)),
            Traced::Killed => String::from("killed"),
            Traced::Exited(code) => format!("exited {code:?}"),
            _ => return,
        };
        log.lock().expect("trace log").push((elapsed, entry));
    }));
    ext.initialize("/").expect("initialize");

    let started = Instant::now();
    let options = CallOptions {
        timeout: Some(Duration::from_millis(200)),
        ..CallOptions::default()
    };
    let params = ExecuteParams::new("hang", input("{}"));
    let outcome = ext.call_with(params, options, &mut |_| {});
    assert_eq!(
        outcome,
        Err(driver::Error::Call(CallError::Timeout {
            unfinished_line: None
        }))
    );
    let timed_out = started.elapsed();
    assert!(timed_out >= Duration::from_millis(200), "{timed_out:?}");

    // `hang` ignores shutdown: the Core kills after the grace, and the code is a signal's.
    assert_eq!(ext.shutdown(), Ok(None));
    assert!(ext.killed(), "the driver killed it on the Core's decision");
    assert!(started.elapsed() >= Duration::from_millis(400));
    let seen = seen.lock().expect("trace log");
    let entries: Vec<&str> = seen.iter().map(|(_, e)| e.as_str()).collect();
    assert!(
        entries.contains(&r#"-> {"jsonrpc":"2.0","method":"shutdown"}"#),
        "{entries:?}"
    );
    assert!(entries.contains(&"killed"), "{entries:?}");
    assert_eq!(entries.last(), Some(&"exited None"));
    assert!(
        seen.windows(2).all(|w| w[0].0 <= w[1].0),
        "trace times only grow"
    );
}

#[test]
fn stderr_is_captured_apart_from_the_protocol() {
    let script = format!("echo 'one' >&2; echo 'two' >&2; exec {DHARA} example-extension");
    let mut command = Command::new("sh");
    command.args(["-c", &script]);
    let mut options = driver::Options::default();
    options.stderr = Stderr::Captured { limit: 6 };
    let mut ext = ExtensionProcess::spawn(command, options).expect("spawn");
    ext.initialize("/")
        .expect("initialize despite the stderr lines");
    assert_eq!(ext.shutdown(), Ok(Some(0)));
    // Only the last 6 bytes are kept.
    assert_eq!(ext.captured_stderr(), "e\ntwo\n");
}

#[test]
fn spawn_failure_is_an_io_error() {
    let command = Command::new("dhara-no-such-command-anywhere");
    let error =
        ExtensionProcess::spawn(command, driver::Options::default()).expect_err("no such command");
    assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
}

#[test]
fn dropping_the_driver_kills_the_extension() {
    let mut ext = example(Config::default(), Stderr::Discard);
    ext.initialize("/").expect("initialize");
    let pid = ext.id();
    drop(ext);
    let stat = format!("/proc/{pid}/stat");
    if std::path::Path::new("/proc/self").exists() {
        let alive = std::fs::read_to_string(&stat).is_ok_and(|s| !s.contains(") Z "));
        assert!(!alive, "the extension {pid} outlived its driver");
    }
}
