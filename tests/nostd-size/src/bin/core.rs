//! A bare-metal program that drives the Core endpoint through a whole session:
//! initialize, a call answered with progress, a call that times out, the kill and the
//! exit. Its input comes through `black_box`, so the optimizer keeps every path a
//! real program has.
#![no_std]
#![no_main]

use core::hint::black_box;

use dhara_nostd_size as _;
use dhara_protocol::host::{Config, Core, Input, Output};
use dhara_protocol::json::{Object, Value};
use dhara_protocol::message::InitializeParams;
use dhara_protocol::time::Instant;

/// What the extension prints, as a real one would.
const STDOUT: &[u8] = concat!(
    r#"{"jsonrpc":"2.0","id":1,"result":{"name":"demo","version":"1.0.0","tools":[{"name":"echo","#,
    r#""description":"Says it back","inputSchema":{"type":"object","required":["text"]}}]}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"progress","params":{"message":"working","id":2}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hi"}],"isError":false}}"#,
    "\n",
)
.as_bytes();

/// Polls until the Core waits; returns its deadline.
fn drain(core: &mut Core) -> Option<Instant> {
    loop {
        match core.poll_output() {
            Output::Transmit(bytes) => {
                black_box(bytes);
            }
            Output::Event(event) => {
                black_box(event);
            }
            Output::CloseStdin => {
                black_box(());
            }
            Output::Kill => {
                black_box(());
            }
            Output::Wait(deadline) => return deadline,
        }
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn _start() -> ! {
    let mut now = Instant::from_millis(black_box(0));
    let mut core = Core::new(black_box(Config::default()));
    let _ = core.initialize(now, InitializeParams::new(black_box("/")));
    drain(&mut core);
    core.handle_input(now, Input::Stdout(black_box(STDOUT)));
    drain(&mut core);
    let input = Value::Object(Object::from_iter([("text", Value::from(black_box("hi")))]));
    let _ = core.execute(now, black_box("echo"), input);
    while let Some(deadline) = drain(&mut core) {
        now = deadline;
        core.handle_input(now, Input::Timeout);
    }
    core.handle_input(now, Input::StdoutClosed);
    core.handle_input(now, Input::Exited { code: None });
    drain(&mut core);
    loop {
        core::hint::spin_loop();
    }
}
