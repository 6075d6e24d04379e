//! A Core endpoint and an Extension endpoint back to back, in memory, on the shared
//! `Pair`: the bytes each writes are fed to the other in random chunks. One whole
//! session: initialize, calls answered out of order with progress, a tool error,
//! invalid params, shutdown, and exit code 0.

use std::collections::BTreeMap;

use dhara_protocol::extension::{self, Extension, RequestId, ServerInfo};
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
    slow: Vec<(RequestId, u64)>,
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
