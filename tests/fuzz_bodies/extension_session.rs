//! `extension_session`: an Extension driven by an arbitrary stdin and an arbitrary
//! tool author.
//!
//! The fuzz bytes choose each step: bytes from the Core (raw, or lines shaped like
//! requests, notifications, responses, batches, oversized lines, in random chunks),
//! the end of stdin, and the author's answers, errors, progress and tool changes.
//! The run reads the same stdin with the lower layers (framing, JSON-RPC decoding)
//! to know what each id is owed, and checks the endpoint's promises:
//!
//! * every request gets at most one reply, and exactly one once the author has
//!   answered what was handed to it; notifications and responses get none;
//! * what it writes is valid JSON-RPC: replies, and `progress` and `tools/list`
//!   notifications only when the author asked for them;
//! * the author's mistakes are refused and send nothing;
//! * `Exit` comes once, after `Shutdown`, with nothing pending, and nothing follows it;
//! * at most `max_pending` requests wait for the author.

use std::collections::BTreeMap;

use dhara_protocol::extension::{
    Config, Event, Extension, Input, Output, RequestHandle, ServerInfo, UsageError,
};
use dhara_protocol::frame::{DEFAULT_MAX_LINE_BYTES, Frame, LineDecoder};
use dhara_protocol::json::{self, Value};
use dhara_protocol::message::{Tool, ToolResult, method};
use dhara_protocol::rpc::{self, DecodeError, ErrorObject, Id, Incoming, Message};

use crate::source::{Chunks, Source};

/// The most outputs one poll loop may give before it must wait.
const MAX_OUTPUTS_PER_STEP: usize = 100_000;

const SCHEMA: &str = r#"{"type":"object","properties":{"url":{"type":"string"},"n":{"type":"integer","enum":[1,2]}},"required":["url"],"additionalProperties":false}"#;

/// The driver's and the author's record of the session.
struct Session {
    extension: Extension,
    max_pending: usize,
    /// The same stdin, read by the lower layers.
    stdin: LineDecoder,
    /// Replies owed, by the id's JSON text.
    owed: BTreeMap<Vec<u8>, usize>,
    /// Replies written, by the id's JSON text.
    replied: BTreeMap<Vec<u8>, usize>,
    /// Oversized lines: each may get one reply, if its id was found at its start.
    oversized: usize,
    /// Requests handed to the author and not answered yet.
    pending: Vec<RequestHandle>,
    answered: Vec<RequestHandle>,
    progress_asked: usize,
    progress_sent: usize,
    tools_announced: usize,
    tools_sent: usize,
    shutdown: bool,
    stdin_closed: bool,
    exited: bool,
}

pub fn run(data: &[u8]) {
    let mut source = Source::new(data);
    let mut session = Session::new(&mut source);
    let mut steps = 0;
    while !source.is_empty() && steps < 200 && !session.exited {
        steps += 1;
        session.step(&mut source);
    }
    session.finish();
}

fn value(text: &str) -> Value {
    json::parse(text.as_bytes()).unwrap_or_else(|e| panic!("bad JSON in the target ({e})"))
}

fn tools() -> Vec<Tool> {
    vec![
        Tool::new("fetch_url", "Fetch a URL", value(SCHEMA)),
        Tool::new("free", "Anything", value(r#"{"type":"object"}"#)),
    ]
}

fn id_text(id: &Id) -> Vec<u8> {
    id.to_string().into_bytes()
}

impl Session {
    fn new(source: &mut Source<'_>) -> Session {
        let mut config = Config::default();
        config.max_line_bytes =
            source.pick(&[DEFAULT_MAX_LINE_BYTES, DEFAULT_MAX_LINE_BYTES, 48, 500]);
        config.validate_input = source.bool();
        config.custom_methods = source.bool();
        config.max_pending = 1 + source.below(4);
        let info = ServerInfo::new("web-tools", "1.0.0");
        Session {
            stdin: LineDecoder::with_max_line_bytes(config.max_line_bytes),
            max_pending: config.max_pending,
            extension: Extension::with_config(info, tools(), config),
            owed: BTreeMap::new(),
            replied: BTreeMap::new(),
            oversized: 0,
            pending: Vec::new(),
            answered: Vec::new(),
            progress_asked: 0,
            progress_sent: 0,
            tools_announced: 0,
            tools_sent: 0,
            shutdown: false,
            stdin_closed: false,
            exited: false,
        }
    }

    fn step(&mut self, source: &mut Source<'_>) {
        match source.below(24) {
            0 => {
                let bytes = source.bytes();
                self.stdin(bytes);
            }
            1..=12 => {
                let line = core_line(source, self.extension_max_line());
                let mut chunks = Chunks::new(u64::from(source.u16()));
                let max_chunk = 1 + source.below(200);
                for chunk in chunks.split(&line, max_chunk) {
                    self.stdin(chunk);
                }
            }
            13 if source.below(8) == 0 => self.close_stdin(),
            13..=18 => {
                if let Some(&request) = self.pending.get(source.below(self.pending.len())) {
                    self.answer(request, source.below(4));
                }
            }
            19 | 20 => {
                if let Some(&request) = self.pending.get(source.below(self.pending.len())) {
                    let result = self.extension.progress(request, "working");
                    assert_eq!(result, Ok(()));
                    self.progress_asked += 1;
                    self.poll();
                }
            }
            21 => {
                // The author's mistake: answering twice. Refused, nothing sent.
                if let Some(&request) = self.answered.get(source.below(self.answered.len())) {
                    let result = self.extension.respond(request, ToolResult::text("again"));
                    assert_eq!(result, Err(UsageError::AlreadyAnswered(request)));
                    let progress = self.extension.progress(request, "late");
                    assert_eq!(progress, Err(UsageError::AlreadyAnswered(request)));
                    self.poll();
                }
            }
            22 => {
                if self.extension.is_initialized() && !self.exited {
                    self.tools_announced += 1;
                }
                self.extension.set_tools(tools());
                self.poll();
            }
            _ => {
                let line = core_line(source, self.extension_max_line());
                self.stdin(&line);
            }
        }
        assert!(self.extension.pending_requests() <= self.max_pending);
    }

    fn extension_max_line(&self) -> usize {
        // The decoder of the model is configured like the endpoint's.
        self.stdin.max_line_bytes()
    }

    fn answer(&mut self, request: RequestHandle, how: usize) {
        let id = self.extension.rpc_id(request).cloned();
        assert!(id.is_some(), "a pending request without its id");
        let result = match how {
            0 => self.extension.respond(request, ToolResult::text("done")),
            1 => self
                .extension
                .respond(request, ToolResult::error_text("failed")),
            2 => self
                .extension
                .respond_error(request, ErrorObject::new(-32050, "broken")),
            _ => self.extension.respond_value(request, Ok(Value::Null)),
        };
        assert_eq!(result, Ok(()));
        assert_eq!(self.extension.rpc_id(request), None);
        self.pending.retain(|&r| r != request);
        self.answered.push(request);
        self.poll();
    }

    fn stdin(&mut self, bytes: &[u8]) {
        if !self.exited {
            self.stdin.push(bytes);
            self.read_model();
        }
        self.extension.handle_input(Input::Stdin(bytes));
        self.poll();
    }

    fn close_stdin(&mut self) {
        if !self.exited {
            self.stdin.end();
            self.read_model();
        }
        self.stdin_closed = true;
        self.extension.handle_input(Input::StdinClosed);
        self.poll();
    }

    /// Reads the model's stdin: what each id is owed.
    fn read_model(&mut self) {
        while let Some(frame) = self.stdin.next_frame() {
            let incoming = match frame {
                Frame::Line(line) => rpc::decode(line, rpc::DecodeOptions::DEFAULT),
                Frame::TooLong { .. } => {
                    self.oversized += 1;
                    continue;
                }
                _ => continue,
            };
            let entries = match incoming {
                Incoming::Single(entry) => vec![entry],
                Incoming::Batch(entries) => entries,
            };
            for entry in entries {
                if let Some(id) = owed_reply(entry) {
                    *self.owed.entry(id_text(&id)).or_default() += 1;
                }
            }
        }
    }

    /// Polls until `Wait`, checking every output.
    fn poll(&mut self) {
        for _ in 0..MAX_OUTPUTS_PER_STEP {
            match self.extension.poll_output() {
                Output::Wait => return,
                output => {
                    assert!(!self.exited, "output after Exit: {output:?}");
                    match output {
                        Output::Transmit(bytes) => {
                            let bytes = bytes.to_vec();
                            self.transmitted(&bytes);
                        }
                        Output::Event(event) => self.event(event),
                        Output::Exit { code } => {
                            assert_eq!(code, 0);
                            assert!(self.shutdown, "Exit before Shutdown");
                            assert!(self.pending.is_empty(), "Exit with requests pending");
                            assert_eq!(self.extension.pending_requests(), 0);
                            self.exited = true;
                        }
                        other => panic!("an output this target does not know: {other:?}"),
                    }
                }
            }
        }
        panic!("poll_output never said Wait");
    }

    fn event(&mut self, event: Event) {
        match event {
            Event::Execute { request, .. } | Event::Request { request, .. } => {
                assert!(
                    !self.pending.contains(&request) && !self.answered.contains(&request),
                    "a request handed out twice"
                );
                assert!(self.extension.rpc_id(request).is_some());
                self.pending.push(request);
            }
            Event::Shutdown => {
                assert!(!self.shutdown, "Shutdown twice");
                self.shutdown = true;
            }
            _ => {}
        }
    }

    fn transmitted(&mut self, bytes: &[u8]) {
        assert!(
            !bytes.is_empty() && bytes.ends_with(b"\n"),
            "not whole lines"
        );
        for line in bytes[..bytes.len() - 1].split(|&b| b == b'\n') {
            let responses = match rpc::decode(line, rpc::DecodeOptions::DEFAULT) {
                Incoming::Single(Ok(Message::Response(response))) => vec![response],
                Incoming::Single(Ok(Message::Notification(n))) => {
                    match n.method.as_str() {
                        method::PROGRESS => self.progress_sent += 1,
                        method::TOOLS_LIST => self.tools_sent += 1,
                        other => panic!("the extension sent a notification {other}"),
                    }
                    continue;
                }
                Incoming::Batch(entries) => entries
                    .into_iter()
                    .map(|entry| match entry {
                        Ok(Message::Response(response)) => response,
                        other => panic!("the extension sent a batch entry {other:?}"),
                    })
                    .collect(),
                other => panic!(
                    "the extension wrote an invalid line {:?}: {other:?}",
                    String::from_utf8_lossy(line)
                ),
            };
            for response in responses {
                let id = id_text(&response.id);
                let replied = self.replied.entry(id.clone()).or_default();
                *replied += 1;
                let owed = self.owed.get(&id).copied().unwrap_or(0);
                assert!(
                    *replied <= owed + self.oversized,
                    "{} replies to id {} owed {owed}",
                    *replied,
                    String::from_utf8_lossy(&id)
                );
            }
        }
        assert!(self.progress_sent <= self.progress_asked);
        assert!(self.tools_sent <= self.tools_announced);
    }

    /// Ends stdin, answers everything handed out, and checks that every id got what
    /// it was owed and the endpoint exits.
    fn finish(&mut self) {
        self.close_stdin();
        while let Some(&request) = self.pending.first() {
            self.answer(request, 0);
        }
        assert!(
            self.exited,
            "no Exit after stdin ended and every request was answered"
        );
        for (id, &owed) in &self.owed {
            let replied = self.replied.get(id).copied().unwrap_or(0);
            assert!(
                replied >= owed,
                "id {} got {replied} replies, owed {owed}",
                String::from_utf8_lossy(id)
            );
        }
        assert_eq!(self.progress_sent, self.progress_asked);
        assert_eq!(self.tools_sent, self.tools_announced);
        // Nothing follows Exit.
        self.extension.handle_input(Input::Stdin(
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n",
        ));
        self.poll();
    }
}

/// The id a message is owed a reply with, if it is owed one.
fn owed_reply(entry: Result<Message, DecodeError>) -> Option<Id> {
    match entry {
        Ok(Message::Request(request)) => Some(request.id),
        Ok(_) => None,
        Err(e) if e.is_response_like() => None,
        Err(e) => Some(e.id.unwrap_or(Id::Null)),
    }
}

/// A line as a Core (or a confused peer) might write it, with its ending.
fn core_line(source: &mut Source<'_>, max_line_bytes: usize) -> Vec<u8> {
    let id = source.pick(&[
        "1",
        "2",
        "3",
        "1",
        "2",
        "\"a\"",
        "null",
        "-5",
        "1.5",
        "{}",
        "[1]",
        "true",
        "184467440737095516160",
    ]);
    let mut line = match source.below(20) {
        0 | 1 => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"initialize","params":{{"version":"0.1.0","cwd":"/p"}}}}"#
        ),
        2..=4 => {
            let (tool, input) = source.pick(&[
                ("fetch_url", r#"{"url":"https://example.com"}"#),
                ("fetch_url", r#"{"url":"x","n":3}"#),
                ("fetch_url", r#"{}"#),
                ("free", r#"{"a":[1,2,{"b":null}]}"#),
                ("nope", r#"{}"#),
            ]);
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/execute","params":{{"toolName":"{tool}","input":{input}}}}}"#
            )
        }
        5 => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/execute","params":7}}"#),
        6 => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#),
        7 => String::from(r#"{"jsonrpc":"2.0","method":"shutdown"}"#),
        8 => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"shutdown"}}"#),
        9 => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"custom/thing","params":[1]}}"#),
        10 => String::from(r#"{"jsonrpc":"2.0","method":"note","params":{"x":1}}"#),
        11 => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#),
        12 => format!(
            r#"[{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}},{{"jsonrpc":"2.0","method":"note"}},{{"jsonrpc":"2.0","id":"b","method":"tools/execute","params":{{"toolName":"free","input":{{}}}}}},5]"#
        ),
        13 => String::from(r#"[{"jsonrpc":"2.0","method":"note"},{"jsonrpc":"2.0","method":"note"}]"#),
        14 => String::from("[]"),
        15 => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"id":2,"method":"tools/list","jsonrpc":"1.0","result":1,"error":{{"code":"x"}}}}"#
        ),
        16 => {
            let filler = "y".repeat(max_line_bytes.min(2000) + source.below(50));
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/execute","params":{{"toolName":"free","input":{{"s":"{filler}"}}}}}}"#
            )
        }
        17 => String::from(r#"{"jsonrpc":"2.0","id":1,"method":"\ud800"}"#),
        18 => String::from("hello, not json"),
        _ => String::from_utf8_lossy(source.bytes()).into_owned(),
    }
    .into_bytes();
    if source.below(8) == 0 {
        line.truncate(source.below(line.len() + 1));
    }
    line.extend_from_slice(source.pick(&[&b"\n"[..], b"\r\n", b"\n\n", b""]));
    line
}
