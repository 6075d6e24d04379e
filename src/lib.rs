//! # dhara-protocol
//!
//! A sans-IO implementation of the Dhara extension protocol: JSON-RPC 2.0 messages,
//! one per line, between the Dhara *Core* and an *Extension* process over its
//! stdin/stdout.
//!
//! The crate is a set of pure state machines. They take bytes and the current time
//! in, and give typed events, bytes to write, the next deadline and the decision to
//! kill out. They never read a clock, never spawn, never block: a runtime (threads,
//! tokio, a WASM host, a microcontroller) drives them.
//!
//! ## Write an extension
//!
//! With the `std` feature (the default), [`StdioExtension`](driver::StdioExtension)
//! serves tools on this process's stdin and stdout, each call on its own thread.
//! Write to stderr, never stdout, inside a tool: stdout is the protocol.
//!
//! ```no_run
//! use dhara_protocol::driver::StdioExtension;
//! use dhara_protocol::json::json;
//! use dhara_protocol::message::{Tool, ToolResult};
//!
//! fn main() {
//!     let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
//!     let code = StdioExtension::new("greeter", "1.0.0")
//!         .tool(Tool::new("greet", "Greet someone by name", schema), |input, call| {
//!             call.progress("looking up the name"); // a `progress` notification with this call's id
//!             eprintln!("greeting {}", input["name"]); // logs: stderr
//!             Ok(ToolResult::text(format!("Hello, {}!", input["name"].as_str().unwrap_or("?"))))
//!         })
//!         .serve();
//!     std::process::exit(code);
//! }
//! ```
//!
//! ## Drive the Core from a runtime
//!
//! One loop: hand the [`Core`](host::Core) what happened, then poll until it says
//! [`Wait`](host::Output::Wait). Here the extension's stdout is scripted; a real
//! driver writes `Transmit` bytes to the child's stdin (never blocking the loop on
//! that write), sleeps until the deadline, and kills on `Kill`. `docs/driving.md` in
//! the repository is the guide.
//!
//! ```
//! use core::time::Duration;
//! use dhara_protocol::host::{Config, Core, Event, Input, Output, Reply};
//! use dhara_protocol::json::json;
//! use dhara_protocol::message::InitializeParams;
//! use dhara_protocol::time::Instant;
//!
//! let mut replies = [
//!     concat!(r#"{"jsonrpc":"2.0","id":1,"result":{"name":"demo","version":"1.0.0","tools":[{"name":"echo"}]}}"#, "\n"),
//!     concat!(r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hi"}]}}"#, "\n"),
//! ]
//! .into_iter();
//! let mut core = Core::new(Config::default());
//! let mut now = Instant::ZERO;
//! let mut to_stdin = Vec::new();
//! core.initialize(now, InitializeParams::new("/tmp"))?;
//! let code = 'session: loop {
//!     let _deadline = loop {
//!         match core.poll_output() {
//!             // Borrowed until the next poll: copy (or write) it first.
//!             Output::Transmit(bytes) => to_stdin.extend_from_slice(bytes),
//!             Output::Event(Event::CallEnded { result: Ok(Reply::Initialized(_)), .. }) => {
//!                 core.execute(now, "echo", json!({"text": "hi"}))?;
//!             }
//!             Output::Event(Event::CallEnded { result: Ok(Reply::Executed(result)), .. }) => {
//!                 assert_eq!(result.content[0], dhara_protocol::message::Content::text("hi"));
//!                 core.shutdown(now)?;
//!             }
//!             Output::Event(Event::Closed { code }) => break 'session code,
//!             Output::Event(_) => {}
//!             Output::CloseStdin => {} // right after `shutdown`: close the child's stdin
//!             Output::Kill => unreachable!("it exits in time"),
//!             Output::Wait(deadline) => break deadline, // sleep until it, at most
//!         }
//!     };
//!     now = now + Duration::from_millis(5);
//!     match replies.next() {
//!         Some(line) => core.handle_input(now, Input::Stdout(line.as_bytes())),
//!         None => {
//!             // After `shutdown` the extension exits: stdout ends, then the exit.
//!             core.handle_input(now, Input::StdoutClosed);
//!             core.handle_input(now, Input::Exited { code: Some(0) });
//!         }
//!     }
//! };
//! assert_eq!(code, Some(0));
//! assert!(to_stdin.ends_with(b"{\"jsonrpc\":\"2.0\",\"method\":\"shutdown\"}\n"));
//! # Ok::<(), dhara_protocol::host::UsageError>(())
//! ```
//!
//! ## Serve many extensions
//!
//! A [`Fleet`](fleet::Fleet) holds several extensions by name behind one tool
//! registry: a call by tool name goes to the extension that offers it (bare names
//! while unique, `<extension>__<tool>` always), each process gets its own Core, and an
//! extension whose process ends (a crash, or the kill after a timeout) is started
//! again by its [`RestartPolicy`](fleet::RestartPolicy): at once or on the next call,
//! with a backoff and a crash-loop breaker. Starting a process is an output like
//! writing to one; [`FleetProcesses`](driver::FleetProcesses) is the std driver over
//! child processes, and `dhara tools|call|session --config FILE` the command line.
//!
//! ## Embed without std
//!
//! Without default features the crate needs only `core` and `alloc`
//! (`dhara-protocol = { version = "0.1", default-features = false }`). An extension
//! on a microcontroller, fed bytes from a serial line, with no clock and no threads:
//!
//! ```
//! extern crate alloc;
//! use alloc::{format, vec::Vec};
//! use dhara_protocol::extension::{Event, Extension, Input, Output, ServerInfo};
//! use dhara_protocol::json::json;
//! use dhara_protocol::message::{Tool, ToolResult};
//!
//! /// Handles bytes from the serial line; appends the reply bytes to `tx`, and returns
//! /// `Some(code)` when the Core has said `shutdown`.
//! fn on_serial(ext: &mut Extension, rx: &[u8], tx: &mut Vec<u8>) -> Option<i32> {
//!     ext.handle_input(Input::Stdin(rx));
//!     loop {
//!         match ext.poll_output() {
//!             Output::Transmit(bytes) => tx.extend_from_slice(bytes),
//!             Output::Event(Event::Execute { request, .. }) => {
//!                 let celsius = 21; // read the sensor
//!                 let _ = ext.respond(request, ToolResult::text(format!("{celsius} °C")));
//!             }
//!             Output::Exit { code } => return Some(code),
//!             Output::Wait => return None,
//!             _ => {}
//!         }
//!     }
//! }
//!
//! let tool = Tool::new("temperature", "Read the sensor", json!({"type": "object"}));
//! let mut ext = Extension::new(ServerInfo::new("sensor", "1.0.0"), alloc::vec![tool]);
//! let mut tx = Vec::new();
//! let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"version":"0.1.0","cwd":"/"}}"#;
//! assert_eq!(on_serial(&mut ext, init, &mut tx), None); // no newline yet: nothing decoded
//! assert_eq!(on_serial(&mut ext, b"\n", &mut tx), None);
//! let call = br#"{"jsonrpc":"2.0","id":2,"method":"tools/execute","params":{"toolName":"temperature","input":{}}}"#;
//! on_serial(&mut ext, call, &mut tx);
//! assert_eq!(on_serial(&mut ext, b"\n{\"jsonrpc\":\"2.0\",\"method\":\"shutdown\"}\n", &mut tx), Some(0));
//! let tx = core::str::from_utf8(&tx).unwrap_or_default();
//! assert!(tx.contains(r#""id":2,"result":{"content":[{"type":"text","text":"21 °C"}],"isError":false}"#));
//! ```
//!
//! ## The layers
//!
//! Each layer imports only from the ones above it in this list:
//!
//! | module | what it does |
//! |---|---|
//! | [`json`] | strict RFC 8259 JSON: parse, write, an ordered [`json::Value`] |
//! | [`frame`] | newline framing: an incremental line decoder and the line encoder |
//! | [`rpc`] | the JSON-RPC 2.0 message model, its validation and its error codes; borrowed views of a line |
//! | [`time`] | the clock-free time type the endpoints are driven with |
//! | [`message`], [`schema`] | the Dhara methods' typed params and results; input-schema validation |
//! | [`host`] | the Core endpoint: the side that starts extensions and calls tools |
//! | [`extension`] | the Extension endpoint: the side a tool author embeds |
//! | [`mcp`] | MCP both ways, on the endpoints: an MCP server as a Dhara extension, a Dhara extension as an MCP server |
//! | [`fleet`] | many extensions behind one tool registry, with restarts (above `host`) |
//! | `driver` (feature `std`) | blocking reference drivers over child processes and stdio |
//!
//! The two endpoints never import each other.
//!
//! ## What may grow
//!
//! Input and Output enums are exhaustive, so a new variant breaks every driver (a
//! driver must act on each one); events, errors, reasons, states, statuses and
//! configs are `#[non_exhaustive]`, so a new one can be ignored or defaulted.
#![no_std]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod frame;
pub mod json;
pub mod message;
pub mod rpc;
pub mod schema;
pub mod time;

pub mod extension;
pub mod host;

pub mod fleet;
pub mod mcp;

#[cfg(feature = "std")]
pub mod driver;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
