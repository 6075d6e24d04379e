//! Shared helpers for the Extension endpoint's tests: drive an endpoint until it
//! waits, and look at what it wrote.
#![allow(dead_code)]

use dhara_protocol::extension::{Config, Event, Extension, Input, Output, ServerInfo};
use dhara_protocol::json::{self, Value};
use dhara_protocol::message::Tool;

/// The `initialize` request a Core sends first (id 0).
pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"version":"0.1.0","cwd":"/home/user/project"}}"#;

/// What one run of the poll loop gave.
#[derive(Debug, Default)]
pub struct Drained {
    /// Every byte transmitted, in order.
    pub written: Vec<u8>,
    /// Every event, in order.
    pub events: Vec<Event>,
    /// The exit code, if the endpoint decided to exit.
    pub exit: Option<i32>,
}

impl Drained {
    /// The written lines, each parsed as JSON.
    pub fn lines(&self) -> Vec<Value> {
        lines(&self.written)
    }

    /// The only line written; panics unless exactly one was.
    pub fn line(&self) -> Value {
        let mut lines = self.lines();
        assert_eq!(
            lines.len(),
            1,
            "expected one line, got {:?}",
            String::from_utf8_lossy(&self.written)
        );
        lines.remove(0)
    }
}

/// Polls until the endpoint waits (or has exited and waits), collecting everything.
pub fn drain(extension: &mut Extension) -> Drained {
    let mut drained = Drained::default();
    for _ in 0..1_000_000 {
        match extension.poll_output() {
            Output::Transmit(bytes) => {
                assert!(!bytes.is_empty(), "an empty transmit");
                assert_eq!(bytes.last(), Some(&b'\n'), "output ends with a newline");
                drained.written.extend_from_slice(bytes);
            }
            Output::Event(event) => drained.events.push(event),
            Output::Exit { code } => {
                assert!(drained.exit.is_none(), "exit given twice");
                drained.exit = Some(code);
            }
            Output::Wait => return drained,
        }
    }
    panic!("the endpoint never waited");
}

/// Feeds one line (a newline is added) and drains.
pub fn send(extension: &mut Extension, line: &str) -> Drained {
    extension.handle_input(Input::Stdin(line.as_bytes()));
    extension.handle_input(Input::Stdin(b"\n"));
    drain(extension)
}

/// Every line of `bytes` parsed as JSON; panics on a line that is not.
pub fn lines(bytes: &[u8]) -> Vec<Value> {
    bytes
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| {
            json::parse(line).unwrap_or_else(|e| {
                panic!(
                    "output is not JSON ({e}): {:?}",
                    String::from_utf8_lossy(line)
                )
            })
        })
        .collect()
}

/// Parses JSON text written in a test.
pub fn value(text: &str) -> Value {
    json::parse(text.as_bytes()).unwrap_or_else(|e| panic!("bad test JSON ({e}): {text}"))
}

/// The spec's `fetch_url` tool (`url` required) and an `add` tool with numbers.
pub fn web_tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "fetch_url",
            "Fetch a URL and extract readable content",
            value(r#"{"type":"object","properties":{"url":{"type":"string"}},"required":["url"]}"#),
        ),
        Tool::new(
            "add",
            "Add two numbers",
            value(
                r#"{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"],"additionalProperties":false}"#,
            ),
        ),
    ]
}

/// A `web-tools` endpoint with `config`, not yet initialized.
pub fn extension_with(config: Config) -> Extension {
    Extension::with_config(ServerInfo::new("web-tools", "1.0.0"), web_tools(), config)
}

/// A `web-tools` endpoint with `config`, already past `initialize` (its reply and
/// event drained).
pub fn initialized_with(config: Config) -> Extension {
    let mut extension = extension_with(config);
    let drained = send(&mut extension, INITIALIZE);
    assert_eq!(drained.line()["id"], Value::from(0));
    extension
}

/// A `web-tools` endpoint with the default config, already past `initialize`.
pub fn initialized() -> Extension {
    initialized_with(Config::default())
}
