//! Blocking reference drivers (feature `std`): a Core over a child process, a
//! [`Fleet`](crate::fleet::Fleet) over several, an Extension over this process's
//! stdio.
//!
//! The endpoints in [`host`](crate::host) and [`extension`](crate::extension) do no I/O.
//! This module is the smallest complete runtime for them, written to be read: it is
//! the reference for anyone writing a driver on tokio, async-std, a GUI event loop or
//! anything else. The loops to read are behind [`ExtensionProcess::next_event`] (the
//! Core side) and [`StdioExtension::serve_on`] (the extension side) in the source;
//! everything else is convenience around them. `docs/driving.md` in the repository is
//! the guide for any runtime, and `tests/tokio-host/` a complete driver on tokio.
//!
//! An extension served over any byte streams, here a script of what a Core sends:
//!
//! ```
//! use dhara_protocol::driver::StdioExtension;
//! use dhara_protocol::json::json;
//! use dhara_protocol::message::{Tool, ToolResult};
//!
//! let upper = Tool::new("upper", "Upper-case a text", json!({"type": "object"}));
//! let extension = StdioExtension::new("text-tools", "1.0.0").tool(upper, |input, _call| {
//!     Ok(ToolResult::text(input["text"].as_str().unwrap_or("").to_uppercase()))
//! });
//! let stdin = concat!(
//!     r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"version":"0.1.0","cwd":"/"}}"#, "\n",
//!     r#"{"jsonrpc":"2.0","id":2,"method":"tools/execute","params":{"toolName":"upper","input":{"text":"hi"}}}"#, "\n",
//!     r#"{"jsonrpc":"2.0","method":"shutdown"}"#, "\n",
//! );
//! let mut stdout = Vec::new();
//! assert_eq!(extension.serve_on(stdin.as_bytes(), &mut stdout), 0); // the exit code
//! let stdout = String::from_utf8(stdout)?;
//! assert!(stdout.ends_with(concat!(
//!     r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"HI"}],"isError":false}}"#, "\n"
//! )));
//! # Ok::<(), std::string::FromUtf8Error>(())
//! ```
//!
//! # A driver's duties
//!
//! - **Poll until the endpoint waits.** After every input and every command, call
//!   `poll_output` until it returns `Wait` (or, for an extension, `Exit`): lines are
//!   decoded and timers fire only there.
//! - **Write each `Transmit` before polling again.** The bytes borrow the endpoint's
//!   one output buffer, which the next poll clears. Copy them out (here: to the writer
//!   thread) or write them whole first.
//! - **Flush after each write.** A message sitting in a buffer is a call that times out.
//! - **Ignore a write that fails because the peer is gone.** The Core may still send
//!   `shutdown` to a process whose stdout has closed; its exit will be reported.
//! - **Drain stderr concurrently.** A child that fills its stderr pipe blocks, and then
//!   stops answering. Read stderr on its own thread (or task) for the whole session,
//!   and never mix it into the protocol.
//! - **Never block reading while writing.** A large request written to a child that is
//!   itself blocked writing a large response deadlocks both. Here a writer thread owns
//!   the child's stdin and reader threads own its stdout and stderr; the loop only
//!   waits on one channel.
//! - **Give the Core the time and wait no longer than its deadline.** Wait for input
//!   until the instant in [`Output::Wait`](crate::host::Output::Wait), then report
//!   [`Input::Timeout`](crate::host::Input::Timeout).
//! - **Kill when told, once.** On [`Output::Kill`](crate::host::Output::Kill), kill
//!   the child and report its exit. Put the child in its own process group and kill
//!   the group: launchers such as `npx` or shell wrappers leave grandchildren behind
//!   when only the child is killed. On Unix the child is started with
//!   `process_group(0)` and killed with `kill -s KILL -- -<pgid>` (the `kill`
//!   program, or the shell's), which needs no `libc`.
//! - **Report the end of stdout, then the exit.** Read stdout to its end, report
//!   `StdoutClosed`, then `Exited` with the code (after a short wait, in case a
//!   grandchild holds the pipe open).
//! - **On the extension side, exit when the host's end of stdin closes.** The host may
//!   be gone; an extension must not linger. Report
//!   [`Input::StdinClosed`](crate::extension::Input::StdinClosed) and exit on
//!   [`Output::Exit`](crate::extension::Output::Exit), or after a grace period if
//!   tools are still running.

mod fleet;
mod mcp;
mod process;
mod serve;

pub use fleet::{FleetError, FleetProcesses, MakeCommand};
pub use mcp::{BridgeOptions, run_adapter, run_server};
pub use process::{
    Error, ExtensionProcess, Options, STDOUT_DRAIN, Stderr, TraceHook, Traced, kill_group,
    kill_process_group,
};
pub use serve::{RunningCall, StdioExtension, ToolHandler};
