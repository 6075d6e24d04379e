//! A Core endpoint and an Extension endpoint back to back, in memory, on the shared
//! `Pair`: the bytes each writes are fed to the other in random chunks. One whole
//! session: initialize, calls answered out of order with progress, a tool error,
//! invalid params, shutdown, and exit code 0. And on the pair's clock, a call its
//! author never answers: the timeout, then the kill when the grace ends.

use std::collections::BTreeMap;

use core::time::Duration;

use dhara_protocol::extension::{self, Extension, RequestHandle, ServerInfo};
use dhara_protocol::host::{self, CallError, CallId, Core, Reply, ShutdownReason};
use dhara_protocol::json::{self, Value};
use dhara_protocol::message::{InitializeParams, Progress, Tool, ToolResult};
use dhara_protocol::rpc::ErrorCode;
use proptest::prelude::*;

use crate::pair::{Pair, Pipe};

fn schema(text: &str) -> Value {
    json::parse(text.as_bytes()).expect("test schema")
}

fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "echo",
            "Repeat the text",
            schema(
                r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#,
            ),
        ),
        Tool::new(
            "slow",
            "Report progress, then finish",
            schema(r#"{"type":"object","properties":{"steps":{"type":"integer","minimum":1}}}"#),
        ),
        Tool::new("fail", "Always fails", schema(r#"{"type":"object"}"#)),
    ]
}

/// The extension's author: answers `echo` and `fail` at once, and `slow` only when
/// told to, after reporting progress.
#[derive(Default)]
struct Author {
    slow: Vec<(RequestHandle, u64)>,
    shutdown_seen: bool,
}

impl Author {
    fn handle(&mut self, ext: &mut Extension, event: extension::Event) {
        match event {
            extension::Event::Execute {
                request,
                tool_name,
                input,
            } => match tool_name.as_str() {
                "echo" => {
                    let text = input["text"].as_str().unwrap_or_default().to_string();
                    ext.respond(request, ToolResult::text(text)).unwrap();
                }
                "fail" => ext
                    .respond(request, ToolResult::error_text("it failed"))
                    .unwrap(),
                "slow" => {
                    let steps = input["steps"].as_u64().unwrap_or(1);
                    for step in 1..=steps {
                        ext.progress(request, &format!("step {step} of {steps}"))
                            .unwrap();
                    }
                    self.slow.push((request, steps));
                }
                other => panic!("the registry let {other} through"),
            },
            extension::Event::Shutdown => self.shutdown_seen = true,
            extension::Event::Initialized { params } => assert_eq!(params.cwd, "/work"),
            other => panic!("unexpected extension event {other:?}"),
        }
    }

    fn finish_slow_calls(&mut self, ext: &mut Extension) {
        for (request, steps) in self.slow.drain(..) {
            ext.respond(request, ToolResult::text(format!("{steps} steps done")))
                .unwrap();
        }
    }
}

/// The pair, its tool author, and what the Core reported.
struct Session {
    pair: Pair,
    author: Author,
    ended: BTreeMap<CallId, Result<Reply, CallError>>,
    progress: Vec<(Option<CallId>, Progress)>,
    shutting_down: Option<ShutdownReason>,
    closed: Option<Option<i32>>,
}

impl Session {
    fn new(to_ext: Vec<usize>, to_core: Vec<usize>) -> Session {
        Session {
            pair: Pair::with_pipes(
                Core::new(host::Config::default().validate_input(false)),
                Extension::new(ServerInfo::new("e2e-tools", "2.0.0"), tools()),
                Pipe::new(to_ext),
                Pipe::new(to_core),
            ),
            author: Author::default(),
            ended: BTreeMap::new(),
            progress: Vec::new(),
            shutting_down: None,
            closed: None,
        }
    }

    /// Runs both endpoints, the author answering as it is asked, until neither has
    /// anything to do and no byte is in flight.
    fn settle(&mut self) {
        loop {
            self.pair.drive();
            assert_eq!(self.pair.kills, 0, "the extension exits by itself: no kill");
            assert!(self.pair.process.exits.len() <= 1, "exit given twice");
            for event in self.pair.take_core_events() {
                match event {
                    host::Event::CallEnded { call, result } => {
                        assert!(
                            self.ended.insert(call, result).is_none(),
                            "{call:?} ended twice"
                        );
                    }
                    host::Event::Progress { call, progress } => {
                        self.progress.push((call, progress))
                    }
                    host::Event::ShuttingDown { reason } => self.shutting_down = Some(reason),
                    host::Event::Closed { code } => self.closed = Some(code),
                    other => panic!("unexpected Core event {other:?}"),
                }
            }
            let events = self.pair.process.take_events();
            if events.is_empty() {
                return;
            }
            for event in events {
                self.author.handle(&mut self.pair.process.ext, event);
            }
        }
    }

    fn result(&self, call: CallId) -> &Result<Reply, CallError> {
        self.ended
            .get(&call)
            .unwrap_or_else(|| panic!("{call:?} has not ended"))
    }
}

fn whole_lifecycle(to_ext: Vec<usize>, to_core: Vec<usize>) {
    let mut s = Session::new(to_ext, to_core);

    // initialize: the tools come from the extension's registry.
    let init = s
        .pair
        .core
        .initialize(s.pair.now, InitializeParams::new("/work"))
        .unwrap();
    s.settle();
    let Ok(Reply::Initialized(result)) = s.result(init) else {
        panic!("{:?}", s.result(init))
    };
    assert_eq!(
        (result.name.as_str(), result.version.as_str()),
        ("e2e-tools", "2.0.0")
    );
    assert_eq!(s.pair.core.tools(), &tools()[..]);

    // Four calls at once; `slow` reports progress and is answered last.
    let slow = s
        .pair
        .core
        .execute(s.pair.now, "slow", schema(r#"{"steps":3}"#))
        .unwrap();
    let echo = s
        .pair
        .core
        .execute(
            s.pair.now,
            "echo",
            schema(r#"{"text":"héllo \"world\"\n"}"#),
        )
        .unwrap();
    let fail = s
        .pair
        .core
        .execute(s.pair.now, "fail", schema("{}"))
        .unwrap();
    let invalid = s
        .pair
        .core
        .execute(s.pair.now, "echo", schema(r#"{"txt":"typo"}"#))
        .unwrap();
    s.settle();
    assert!(!s.ended.contains_key(&slow), "slow is still running");
    assert_eq!(
        s.result(echo),
        &Ok(Reply::Executed(ToolResult::text("héllo \"world\"\n")))
    );
    assert_eq!(
        s.result(fail),
        &Ok(Reply::Executed(ToolResult::error_text("it failed")))
    );
    let Err(CallError::Rpc(error)) = s.result(invalid) else {
        panic!("{:?}", s.result(invalid))
    };
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(error.message, "Missing required parameter 'text'");
    assert_eq!(
        error.data.as_ref().map(|d| d["toolName"].clone()),
        Some(Value::from("echo"))
    );

    // Progress is attributed to its call by the id member the extension sends.
    let messages: Vec<_> = s
        .progress
        .iter()
        .map(|(call, p)| (*call, p.message.as_str()))
        .collect();
    assert_eq!(
        messages,
        vec![
            (Some(slow), "step 1 of 3"),
            (Some(slow), "step 2 of 3"),
            (Some(slow), "step 3 of 3")
        ]
    );
    s.author.finish_slow_calls(&mut s.pair.process.ext);
    s.settle();
    assert_eq!(
        s.result(slow),
        &Ok(Reply::Executed(ToolResult::text("3 steps done")))
    );

    // shutdown: the extension is told, exits with 0, and the Core closes.
    s.pair.core.shutdown(s.pair.now).unwrap();
    s.settle();
    assert_eq!(s.shutting_down, Some(ShutdownReason::Requested));
    assert!(s.author.shutdown_seen);
    assert_eq!(s.pair.process.exits, [0]);
    // The process exits with it: the Core reads its stdout's end, then the exit.
    assert_eq!(s.closed, Some(Some(0)));
    assert_eq!(s.ended.len(), 5, "every call ended exactly once");
}

/// An author who never answers: the call times out at its deadline and the Core asks
/// the extension to shut down; the request still pending there, the extension cannot
/// exit, so the Core kills it when the grace ends, and then closes.
#[test]
fn an_unanswered_call_times_out_and_the_extension_is_killed_after_the_grace() {
    let (timeout, grace) = (Duration::from_secs(2), Duration::from_secs(1));
    let mut pair = Pair::new(
        Core::new(host::Config::default().timeout(timeout).grace(grace)),
        Extension::new(ServerInfo::new("e2e-tools", "2.0.0"), tools()),
    );
    let init = pair
        .core
        .initialize(pair.now, InitializeParams::new("/work"))
        .unwrap();
    pair.drive();
    assert!(matches!(pair.ended(init), Some(Ok(Reply::Initialized(_)))));
    pair.take_core_events();

    let sent = pair.now;
    let call = pair
        .core
        .execute(pair.now, "slow", schema(r#"{"steps":1}"#))
        .unwrap();
    pair.drive();
    let events = pair.process.take_events();
    assert!(
        matches!(
            &events[..],
            [
                extension::Event::Initialized { .. },
                extension::Event::Execute { .. }
            ]
        ),
        "{events:?}"
    );
    assert_eq!(pair.ended(call), None);

    assert!(pair.advance_to_deadline());
    assert!(pair.now >= sent + timeout);
    assert!(
        matches!(pair.ended(call), Some(Err(CallError::Timeout { .. }))),
        "{:?}",
        pair.core_events
    );
    assert!(pair.core_events.contains(&host::Event::ShuttingDown {
        reason: ShutdownReason::Timeout { call }
    }));
    assert_eq!(
        pair.process.take_events(),
        [extension::Event::Shutdown],
        "the extension is told"
    );
    assert_eq!(pair.stdin_closes, 1);
    assert_eq!(pair.process.exits, [], "a request is still pending");
    assert_eq!(pair.kills, 0);

    let shutdown_at = pair.now;
    assert!(pair.advance_to_deadline());
    assert_eq!(pair.kills, 1);
    assert!(
        pair.now >= shutdown_at + grace,
        "never killed before the grace ends"
    );
    assert!(pair.exit_reported);
    assert_eq!(
        pair.core_events.last(),
        Some(&host::Event::Closed { code: None })
    );
    assert!(!pair.advance_to_deadline(), "no deadline after Closed");
}

#[test]
fn whole_lifecycle_in_one_piece() {
    whole_lifecycle(vec![usize::MAX], vec![usize::MAX]);
}

#[test]
fn whole_lifecycle_one_byte_at_a_time() {
    whole_lifecycle(vec![1], vec![1]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn whole_lifecycle_in_random_chunks(
        to_ext in prop::collection::vec(1usize..200, 1..16),
        to_core in prop::collection::vec(1usize..200, 1..16),
    ) {
        whole_lifecycle(to_ext, to_core);
    }
}
