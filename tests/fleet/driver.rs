//! The fleet's std driver over real child processes (the built `dhara
//! example-extension`): one registry over two extensions, qualified names, the
//! restart of an extension killed after a timeout, and one that cannot start.

use std::process::Command;
use std::time::Duration;

use dhara_protocol::driver::{FleetError, FleetProcesses, Stderr};
use dhara_protocol::fleet::{
    CallError, Config, Event, ExtensionConfig, RestartPolicy, Status, Stop, UsageError,
};
use dhara_protocol::host;
use dhara_protocol::json::{self, Value};
use dhara_protocol::message::Content;

const DHARA: &str = env!("CARGO_BIN_EXE_dhara");

fn example() -> Command {
    let mut command = Command::new(DHARA);
    command.arg("example-extension");
    command
}

fn input(text: &str) -> Value {
    json::parse(text.as_bytes()).expect("test input is JSON")
}

fn text(result: &dhara_protocol::message::ToolResult) -> String {
    match result.content.first() {
        Some(Content::Text { text }) => text.to_string(),
        other => panic!("expected text, got {other:?}"),
    }
}

#[test]
fn two_extensions_one_registry_and_a_restart_after_a_timeout() {
    let quick = host::Config::default()
        .timeout(Duration::from_millis(400))
        .grace(Duration::from_millis(200));
    let mut fleet = FleetProcesses::new(Config::default(), Stderr::Discard);
    let a = fleet
        .add("a", ExtensionConfig::default(), Box::new(example))
        .expect("add a");
    let b = fleet
        .add(
            "b",
            ExtensionConfig::default().host(quick),
            Box::new(example),
        )
        .expect("add b");
    assert!(fleet.wait_ready(Duration::from_secs(20)), "both ready");

    // The same seven tools twice: every bare name is ambiguous.
    assert_eq!(fleet.fleet().tools().count(), 14);
    assert!(fleet.fleet().tools().all(|t| t.offered == t.qualified));
    let refused = fleet.call("echo", input(r#"{"text":"hi"}"#), |_| {});
    let Err(FleetError::Usage(UsageError::AmbiguousTool { candidates, .. })) = refused else {
        panic!("not refused: {refused:?}");
    };
    assert_eq!(candidates, ["a__echo", "b__echo"]);
    let echoed = fleet
        .call("a__echo", input(r#"{"text":"hi"}"#), |_| {})
        .expect("a__echo");
    assert_eq!(text(&echoed), "hi");

    // `b` hangs and ignores shutdown: the call times out, `b` is killed and started
    // again, and serves the next call from a new process.
    let first_pid = fleet.pid(b).expect("b runs");
    let hung = fleet.call("b__hang", input("{}"), |_| {});
    assert!(
        matches!(
            hung,
            Err(FleetError::Call(CallError::Host(
                host::CallError::Timeout { .. }
            )))
        ),
        "{hung:?}"
    );
    let echoed = fleet
        .call("b__echo", input(r#"{"text":"again"}"#), |_| {})
        .expect("served after the restart");
    assert_eq!(text(&echoed), "again");
    let second_pid = fleet.pid(b).expect("b runs again");
    assert_ne!(first_pid, second_pid);
    assert_eq!(fleet.fleet().process(b).map(|p| p.start()), Some(2));
    assert_eq!(fleet.fleet().process(a).map(|p| p.start()), Some(1));

    let mut stopped = Vec::new();
    while let Some(event) = fleet.next_event_timeout(Duration::ZERO) {
        if let Event::Stopped { process, how, .. } = event {
            stopped.push((process.extension(), how));
        }
    }
    assert_eq!(stopped, [(b, Stop::Killed)]);
    fleet.shutdown();
    assert!(fleet.is_closed());
}

#[test]
fn an_extension_that_cannot_start_is_failed_by_the_breaker() {
    let policy = RestartPolicy::default()
        .max_exits(3)
        .backoff(Duration::from_millis(10), Duration::from_millis(40));
    let mut fleet = FleetProcesses::new(Config::default(), Stderr::Discard);
    let missing = fleet
        .add(
            "missing",
            ExtensionConfig::default().restart(policy),
            Box::new(|| Command::new("/nonexistent/dhara-extension")),
        )
        .expect("add");
    fleet
        .add("ok", ExtensionConfig::default(), Box::new(example))
        .expect("add");
    assert!(!fleet.wait_ready(Duration::from_secs(20)));
    let Some(Status::Failed(failure)) = fleet.fleet().status(missing) else {
        panic!("not failed: {:?}", fleet.fleet().status(missing));
    };
    assert_eq!(failure.exits, 3);
    assert!(matches!(failure.last, Stop::StartFailed { .. }));
    // The other one serves.
    let added = fleet.call("add", input(r#"{"a":2,"b":3}"#), |_| {});
    assert_eq!(added.map(|r| text(&r)), Ok("5".to_string()));
    fleet.shutdown();
}
