//! A bare-metal program that drives the Extension endpoint through a whole session:
//! initialize, a call answered with progress, an unknown method, shutdown and the
//! exit. Its input comes through `black_box`, so the optimizer keeps every path a
//! real program has.
#![no_std]
#![no_main]

use core::hint::black_box;

use dhara_nostd_size as _;
use dhara_protocol::extension::{Event, Extension, Input, Output, ServerInfo};
use dhara_protocol::json::{Object, Value};
use dhara_protocol::message::{Tool, ToolResult};

/// What the Core writes, as a real one would.
const STDIN: &[u8] = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"version":"0.1.0","cwd":"/"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/execute","params":{"toolName":"echo","input":{"text":"hi"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":3,"method":"nope"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"shutdown"}"#,
    "\n",
)
.as_bytes();

#[unsafe(no_mangle)]
pub extern "C" fn _start() -> ! {
    let schema = Value::Object(Object::from_iter([
        ("type", Value::from("object")),
        ("required", Value::Array([Value::from("text")].into())),
    ]));
    let tools = [Tool::new(black_box("echo"), "Says it back", schema)].into();
    let mut ext = Extension::new(ServerInfo::new(black_box("demo"), "1.0.0"), tools);
    ext.handle_input(Input::Stdin(black_box(STDIN)));
    loop {
        match ext.poll_output() {
            Output::Transmit(bytes) => {
                black_box(bytes);
            }
            Output::Event(Event::Execute { request, input, .. }) => {
                let _ = ext.progress(request, black_box("working"));
                let text = input["text"].as_str().unwrap_or_default();
                let _ = ext.respond(request, ToolResult::text(text));
            }
            Output::Event(event) => {
                black_box(event);
            }
            Output::Exit { code } => {
                black_box(code);
            }
            Output::Wait => break,
        }
    }
    loop {
        core::hint::spin_loop();
    }
}
