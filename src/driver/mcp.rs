//! Blocking drivers for the MCP bridges: [`run_adapter`] (`dhara mcp adapt`) and
//! [`run_server`] (`dhara mcp serve`), each over this process's stdio and one child.
//!
//! One loop per bridge, as for [`ExtensionProcess`](super::ExtensionProcess): threads
//! read this process's stdin and the child's stdout and stderr into one channel, a
//! thread writes the child's stdin, and the loop polls the bridge and does what it
//! says. The child runs in its own process group (on Unix), which is killed as a
//! whole.

use std::format;
use std::io::{self, Write};
use std::process::{Child, Command, ExitStatus};
use std::string::String;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread;
use std::time::Duration;
use std::vec::Vec;

use super::process::{
    CHANNEL_CHUNKS, EXIT_POLL, STDOUT_DRAIN, kill_group, missing_pipe, spawn_piped, spawn_reader,
    spawn_writer,
};
use crate::host;
use crate::mcp::{
    Adapter, AdapterConfig, AdapterEvent, AdapterInput, AdapterOutput, Server, ServerConfig,
    ServerEvent, ServerInput, ServerOutput,
};
use crate::time::{Clock, Instant};

/// How a bridge driver runs its child.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BridgeOptions {
    /// For [`run_adapter`]: how long the MCP server has to exit once its stdin is
    /// closed before it is killed. Default 5 s. (For [`run_server`] the grace is the
    /// Core's, in [`ServerConfig::core`].)
    pub grace: Duration,
    /// Each line the child writes to stderr goes to this process's stderr after this
    /// prefix.
    pub stderr_prefix: String,
    /// Write every line that crosses either side to stderr too.
    pub trace: bool,
}

impl BridgeOptions {
    /// The defaults, with the prefix of the child's stderr lines.
    pub fn new(stderr_prefix: impl Into<String>) -> BridgeOptions {
        BridgeOptions {
            grace: Duration::from_secs(5),
            stderr_prefix: stderr_prefix.into(),
            trace: false,
        }
    }
}

/// What the threads tell the loop.
enum Wake {
    Stdin(Vec<u8>),
    StdinClosed,
    ChildOut(Vec<u8>),
    ChildOutClosed,
    ChildErr(Vec<u8>),
}

/// The child, its stdin writer, and the channel every reader feeds.
struct Peer {
    child: Child,
    group: Option<u32>,
    stdin: Option<Sender<Vec<u8>>>,
    wakes: Receiver<Wake>,
    stdout_open: bool,
    exit: Option<ExitStatus>,
    /// When the exit was first seen while stdout was still open.
    exit_seen_at: Option<std::time::Instant>,
    stderr_prefix: String,
    stderr_line: Vec<u8>,
    trace: bool,
}

impl Peer {
    fn spawn(mut command: Command, options: &BridgeOptions) -> io::Result<Peer> {
        let (mut child, group) = spawn_piped(&mut command)?;
        let (to_loop, wakes) = mpsc::sync_channel(CHANNEL_CHUNKS);
        let started = (|| {
            let stdout = child.stdout.take().ok_or_else(|| missing_pipe("stdout"))?;
            let stderr = child.stderr.take().ok_or_else(|| missing_pipe("stderr"))?;
            let stdin = child.stdin.take().ok_or_else(|| missing_pipe("stdin"))?;
            spawn_reader(
                stdout,
                to_loop.clone(),
                Wake::ChildOut,
                Some(Wake::ChildOutClosed),
            )?;
            spawn_reader(stderr, to_loop.clone(), Wake::ChildErr, None)?;
            spawn_reader(io::stdin(), to_loop, Wake::Stdin, Some(Wake::StdinClosed))?;
            spawn_writer(stdin)
        })();
        match started {
            Ok(stdin) => Ok(Peer {
                child,
                group,
                stdin: Some(stdin),
                wakes,
                stdout_open: true,
                exit: None,
                exit_seen_at: None,
                stderr_prefix: options.stderr_prefix.clone(),
                stderr_line: Vec::new(),
                trace: options.trace,
            }),
            Err(e) => {
                kill_group(&mut child, group);
                let _ = child.wait();
                Err(e)
            }
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        if self.trace {
            trace("->", bytes);
        }
        if let Some(stdin) = &self.stdin {
            // A child that is gone: its exit is reported by the loop.
            let _ = stdin.send(bytes.to_vec());
        }
    }

    /// Closes the child's stdin (once the writer has written what it holds).
    fn close_stdin(&mut self) {
        self.stdin = None;
    }

    fn kill(&mut self) {
        kill_group(&mut self.child, self.group);
    }

    /// Waits for the next wake until `until` (or [`EXIT_POLL`]); `None` when none came.
    fn next_wake(&mut self, until: Option<std::time::Instant>) -> Option<Wake> {
        let mut wait = EXIT_POLL;
        if let Some(until) = until {
            wait = wait.min(until.saturating_duration_since(std::time::Instant::now()));
        }
        match self.wakes.recv_timeout(wait) {
            Ok(Wake::ChildErr(bytes)) => {
                self.stderr_lines(&bytes);
                None
            }
            Ok(Wake::ChildOut(bytes)) => {
                if self.trace {
                    trace("<-", &bytes);
                }
                Some(Wake::ChildOut(bytes))
            }
            Ok(Wake::ChildOutClosed) => {
                self.stdout_open = false;
                Some(Wake::ChildOutClosed)
            }
            Ok(wake) => Some(wake),
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => None,
        }
    }

    /// The child's exit, once it exited and its stdout ended (or did not end within
    /// [`STDOUT_DRAIN`] of the exit: a grandchild may hold it open).
    fn exited(&mut self) -> Option<ExitStatus> {
        if self.exit.is_none() {
            self.exit = self.child.try_wait().ok().flatten();
        }
        let exit = self.exit?;
        if self.stdout_open {
            let seen = *self
                .exit_seen_at
                .get_or_insert_with(std::time::Instant::now);
            if seen.elapsed() < STDOUT_DRAIN {
                return None;
            }
            self.stdout_open = false;
        }
        Some(exit)
    }

    /// Copies whole stderr lines to this process's stderr, after the prefix.
    fn stderr_lines(&mut self, bytes: &[u8]) {
        self.stderr_line.extend_from_slice(bytes);
        while let Some(end) = self.stderr_line.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.stderr_line.drain(..=end).collect();
            let mut err = io::stderr().lock();
            let _ = err.write_all(self.stderr_prefix.as_bytes());
            let _ = err.write_all(&line);
        }
        if self.stderr_line.len() > 64 * 1024 {
            self.stderr_line.clear();
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        if self.exit.is_none() && self.child.try_wait().ok().flatten().is_none() {
            self.kill();
            let _ = self.child.wait();
        }
    }
}

fn trace(direction: &str, bytes: &[u8]) {
    for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        std::eprintln!("[trace] {direction} {}", String::from_utf8_lossy(line));
    }
}

/// Writes to this process's stdout and flushes; a closed stdout is ignored (the peer
/// is gone, and its end of our stdin will say so).
fn write_stdout(bytes: &[u8], trace_on: bool) {
    if trace_on {
        trace("=>", bytes);
    }
    let mut out = io::stdout().lock();
    let _ = out.write_all(bytes).and_then(|()| out.flush());
}

/// Runs `command`, an MCP server, as a Dhara extension on this process's stdin and
/// stdout: `dhara mcp adapt`. Returns the exit code.
pub fn run_adapter(
    command: Command,
    config: AdapterConfig,
    options: &BridgeOptions,
) -> io::Result<i32> {
    let mut peer = Peer::spawn(command, options)?;
    let mut adapter = Adapter::new(config);
    let mut mcp_closed = false;
    loop {
        match adapter.poll_output() {
            AdapterOutput::ToDhara(bytes) => write_stdout(bytes, options.trace),
            AdapterOutput::ToMcp(bytes) => peer.send(bytes),
            AdapterOutput::Event(event) => log_adapter_event(&event),
            AdapterOutput::CloseMcp => {
                // MCP's stdio shutdown: close stdin, wait, then kill.
                peer.close_stdin();
                let give_up = std::time::Instant::now() + options.grace;
                while peer.child.try_wait().ok().flatten().is_none() {
                    if std::time::Instant::now() >= give_up {
                        peer.kill();
                        break;
                    }
                    thread::sleep(Duration::from_millis(20));
                }
                peer.exit = peer.child.wait().ok();
            }
            AdapterOutput::Exit { code } => return Ok(code),
            _ => match peer.next_wake(None) {
                Some(Wake::Stdin(bytes)) => adapter.handle_input(AdapterInput::Dhara(&bytes)),
                Some(Wake::StdinClosed) => adapter.handle_input(AdapterInput::DharaClosed),
                Some(Wake::ChildOut(bytes)) => adapter.handle_input(AdapterInput::Mcp(&bytes)),
                Some(Wake::ChildOutClosed) => {
                    mcp_closed = true;
                    adapter.handle_input(AdapterInput::McpClosed);
                }
                Some(Wake::ChildErr(_)) => {}
                None => {
                    if !mcp_closed && peer.exited().is_some() {
                        mcp_closed = true;
                        adapter.handle_input(AdapterInput::McpClosed);
                    }
                }
            },
        }
    }
}

fn log_adapter_event(event: &AdapterEvent) {
    match event {
        AdapterEvent::Log(log) => {
            let logger = log
                .logger
                .as_deref()
                .map(|l| format!(" {l}"))
                .unwrap_or_default();
            let data = match log.data.as_str() {
                Some(text) => String::from(text),
                None => format!("{}", log.data),
            };
            std::eprintln!("[mcp {}{logger}] {data}", log.level);
        }
        AdapterEvent::HandshakeFailed { reason } => {
            std::eprintln!("dhara mcp adapt: the MCP server did not start: {reason}")
        }
        AdapterEvent::McpProtocol { problem } => {
            std::eprintln!("dhara mcp adapt: from the MCP server: {problem}")
        }
        AdapterEvent::DharaInputDropped { bytes } => std::eprintln!(
            "dhara mcp adapt: {bytes} bytes from the Dhara Core dropped: over the limit before the MCP server was ready"
        ),
        AdapterEvent::DharaProtocol(problem) => {
            std::eprintln!("dhara mcp adapt: from the Dhara Core: {problem}")
        }
        // Ready, ToolsChanged, other notifications, the server's end: not news.
        _ => {}
    }
}

/// Runs `command`, a Dhara extension, as an MCP server on this process's stdin and
/// stdout: `dhara mcp serve`. Returns the exit code.
pub fn run_server(
    command: Command,
    config: ServerConfig,
    options: &BridgeOptions,
) -> io::Result<i32> {
    let mut peer = Peer::spawn(command, options)?;
    let clock = Clock::new();
    let mut server = Server::new(config);
    let mut exit_reported = false;
    loop {
        match server.poll_output() {
            ServerOutput::ToMcp(bytes) => write_stdout(bytes, options.trace),
            ServerOutput::ToExtension(bytes) => peer.send(bytes),
            ServerOutput::CloseExtensionStdin => peer.close_stdin(),
            ServerOutput::Kill => peer.kill(),
            ServerOutput::Event(event) => log_server_event(&event),
            ServerOutput::Exit { code } => return Ok(code),
            ServerOutput::Wait(deadline) => {
                let until = deadline.map(|at: Instant| clock.to_std(at));
                let wake = peer.next_wake(until);
                let now = clock.now();
                match wake {
                    Some(Wake::Stdin(bytes)) => server.handle_input(now, ServerInput::Mcp(&bytes)),
                    Some(Wake::StdinClosed) => server.handle_input(now, ServerInput::McpClosed),
                    Some(Wake::ChildOut(bytes)) => server
                        .handle_input(now, ServerInput::Extension(host::Input::Stdout(&bytes))),
                    Some(Wake::ChildOutClosed) => {
                        server.handle_input(now, ServerInput::Extension(host::Input::StdoutClosed))
                    }
                    Some(Wake::ChildErr(_)) | None => {}
                }
                if !exit_reported {
                    if let Some(status) = peer.exited() {
                        exit_reported = true;
                        let now = clock.now();
                        server.handle_input(now, ServerInput::Extension(host::Input::StdoutClosed));
                        let code = status.code();
                        server.handle_input(
                            now,
                            ServerInput::Extension(host::Input::Exited { code }),
                        );
                    }
                }
                if deadline.is_some_and(|at| clock.now() >= at) {
                    server.handle_input(clock.now(), ServerInput::Extension(host::Input::Timeout));
                }
            }
        }
    }
}

fn log_server_event(event: &ServerEvent) {
    match event {
        ServerEvent::McpProtocol { problem } => {
            std::eprintln!("dhara mcp serve: from the MCP client: {problem}")
        }
        // The reply to a call the client cancelled: expected.
        ServerEvent::Extension(host::Event::Protocol(host::PeerError::LateResponse {
            ended: Some(host::EndReason::Cancelled),
            ..
        })) => {}
        ServerEvent::Extension(host::Event::Protocol(problem)) => {
            std::eprintln!("dhara mcp serve: from the extension: {problem}")
        }
        ServerEvent::Extension(host::Event::ShuttingDown { reason })
            if *reason != host::ShutdownReason::Requested =>
        {
            std::eprintln!("dhara mcp serve: shutting the extension down ({reason:?})")
        }
        _ => {}
    }
}
