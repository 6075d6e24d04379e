//! A Core endpoint and an Extension endpoint back to back, in memory: the bytes each
//! writes are fed to the other in random chunks. One whole session: initialize,
//! calls answered out of order with progress, a tool error, invalid params,
//! shutdown, and exit code 0.

use std::collections::BTreeMap;

use dhara_protocol::extension::{self, Extension, RequestId, ServerInfo};
use dhara_protocol::host::{self, CallError, CallId, Core, Reply, ShutdownReason};
use dhara_protocol::json::{self, Value};
use dhara_protocol::message::{InitializeParams, Progress, Tool, ToolResult};
use dhara_protocol::rpc::ErrorCode;
use dhara_protocol::time::Instant;
use proptest::prelude::*;

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

/// Bytes in flight from one endpoint to the other, delivered in chunks whose sizes
/// come from the test's input.
struct Pipe {
    bytes: Vec<u8>,
    sizes: Vec<usize>,
    next: usize,
    /// The writer closed it: the reader sees the end once `bytes` are read.
    closed: bool,
}

impl Pipe {
    fn new(sizes: Vec<usize>) -> Pipe {
        Pipe {
            bytes: Vec::new(),
            sizes,
            next: 0,
            closed: false,
        }
    }

    /// The next chunk to deliver (at least one byte), if any bytes are in flight.
    fn take_chunk(&mut self) -> Option<Vec<u8>> {
        if self.bytes.is_empty() {
            return None;
        }
        let size = self
            .sizes
            .get(self.next % self.sizes.len().max(1))
            .copied()
            .unwrap_or(usize::MAX);
        self.next += 1;
        let n = size.clamp(1, self.bytes.len());
        Some(self.bytes.drain(..n).collect())
    }
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

/// Both endpoints and the pipes between them.
struct Session {
    core: Core,
    ext: Extension,
    to_ext: Pipe,
    to_core: Pipe,
    now: Instant,
    author: Author,
    ended: BTreeMap<CallId, Result<Reply, CallError>>,
    progress: Vec<(Option<CallId>, Progress)>,
    shutting_down: Option<ShutdownReason>,
    ext_exit: Option<i32>,
    closed: Option<Option<i32>>,
}

impl Session {
    fn new(to_ext: Vec<usize>, to_core: Vec<usize>) -> Session {
        Session {
            core: Core::new(host::Config::default().validate_input(false)),
            ext: Extension::new(ServerInfo::new("e2e-tools", "2.0.0"), tools()),
            to_ext: Pipe::new(to_ext),
            to_core: Pipe::new(to_core),
            now: Instant::ZERO,
            author: Author::default(),
            ended: BTreeMap::new(),
            progress: Vec::new(),
            shutting_down: None,
            ext_exit: None,
            closed: None,
        }
    }

    /// Runs both endpoints until neither has anything to do and no byte is in flight.
    fn settle(&mut self) {
        for _ in 0..100_000 {
            let mut busy = self.poll_core();
            busy |= self.poll_extension();
            if let Some(chunk) = self.to_ext.take_chunk() {
                if self.ext_exit.is_none() {
                    self.ext.handle_input(extension::Input::Stdin(&chunk));
                }
                busy = true;
            } else if core::mem::take(&mut self.to_ext.closed) {
                self.ext.handle_input(extension::Input::StdinClosed);
                busy = true;
            }
            if let Some(chunk) = self.to_core.take_chunk() {
                self.core
                    .handle_input(self.now, host::Input::Stdout(&chunk));
                busy = true;
            }
            if !busy {
                return;
            }
            self.now = self.now + core::time::Duration::from_millis(1);
        }
        panic!("the session never settled");
    }

    fn poll_core(&mut self) -> bool {
        let mut busy = false;
        loop {
            match self.core.poll_output() {
                host::Output::Transmit(bytes) => self.to_ext.bytes.extend_from_slice(bytes),
                host::Output::Event(event) => match event {
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
                },
                host::Output::Kill => panic!("the extension exits by itself: no kill"),
                host::Output::CloseStdin => self.to_ext.closed = true,
                host::Output::Wait(_) => return busy,
            }
            busy = true;
        }
    }

    fn poll_extension(&mut self) -> bool {
        let mut busy = false;
        loop {
            match self.ext.poll_output() {
                extension::Output::Transmit(bytes) => self.to_core.bytes.extend_from_slice(bytes),
                extension::Output::Event(event) => self.author.handle(&mut self.ext, event),
                extension::Output::Exit { code } => {
                    assert_eq!(self.ext_exit, None, "exit given twice");
                    self.ext_exit = Some(code);
                }
                extension::Output::Wait => return busy,
                other => panic!("unexpected extension output {other:?}"),
            }
            busy = true;
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
        .core
        .initialize(s.now, InitializeParams::new("/work"))
        .unwrap();
    s.settle();
    let Ok(Reply::Initialized(result)) = s.result(init) else {
        panic!("{:?}", s.result(init))
    };
    assert_eq!(
        (result.name.as_str(), result.version.as_str()),
        ("e2e-tools", "2.0.0")
    );
    assert_eq!(s.core.tools(), &tools()[..]);

    // Four calls at once; `slow` reports progress and is answered last.
    let slow = s
        .core
        .execute(s.now, "slow", schema(r#"{"steps":3}"#))
        .unwrap();
    let echo = s
        .core
        .execute(s.now, "echo", schema(r#"{"text":"héllo \"world\"\n"}"#))
        .unwrap();
    let fail = s.core.execute(s.now, "fail", schema("{}")).unwrap();
    let invalid = s
        .core
        .execute(s.now, "echo", schema(r#"{"txt":"typo"}"#))
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
    s.author.finish_slow_calls(&mut s.ext);
    s.settle();
    assert_eq!(
        s.result(slow),
        &Ok(Reply::Executed(ToolResult::text("3 steps done")))
    );

    // shutdown: the extension is told, exits with 0, and the Core closes.
    s.core.shutdown(s.now).unwrap();
    s.settle();
    assert_eq!(s.shutting_down, Some(ShutdownReason::Requested));
    assert!(s.author.shutdown_seen);
    assert_eq!(s.ext_exit, Some(0));
    s.core.handle_input(s.now, host::Input::StdoutClosed);
    s.core
        .handle_input(s.now, host::Input::Exited { code: s.ext_exit });
    s.settle();
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
