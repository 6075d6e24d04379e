//! `tokio-host`: the Dhara Core driven on tokio, written to be read.
//!
//! ```text
//! tokio-host [--timeout DUR] [--grace DUR] -- COMMAND [ARGS...]
//! ```
//!
//! The same interface as `dhara session`: one call per line on stdin,
//! `{"tool": "...", "input": {...}}`, run concurrently; one JSON line per finished
//! call on stdout; the same exit status (the worst call's).
//!
//! The shape of the driver, in one picture:
//!
//! ```text
//!   our stdin ──(thread)──► lines ──┐
//!   child stdout ──────────────────►│   the loop: poll the Core until Wait,   ──► outbox ──► writer task ──► child stdin
//!   child exit ────────────────────►│   then select! on whatever comes first
//!   the Core's deadline (sleep) ───►┘
//!   child stderr ──(task)──► our stderr
//! ```
//!
//! The one rule that shapes it: **the loop never awaits a write.** A child that stops
//! reading its stdin fills the pipe, and a write to it never finishes; a loop that
//! awaited that write would stop firing deadlines, and the timeout, the shutdown, the
//! grace and the kill would never come. So bytes to write go to a queue (`outbox`),
//! and a writer task owns the child's stdin; the loop hands it one message at a time
//! through a bounded channel, as one more branch of its `select!`. See
//! `docs/driving.md` in the repository for the whole story.

mod session;

use std::collections::VecDeque;
use std::process::{ExitCode, Stdio};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;
use tokio::time::{Instant as TokioInstant, sleep_until};

// STDOUT_DRAIN: after the child has exited, how long to wait for the end of its
// stdout before reporting the exit anyway (a grandchild may hold the pipe open).
use dhara_protocol::driver::{STDOUT_DRAIN, kill_process_group};
use dhara_protocol::host::{Config, Core, Event, Input, Output};
use dhara_protocol::time::Instant;

use session::{Session, Status};

/// How many messages may wait in the channel to the writer task.
const WRITER_QUEUE: usize = 16;
/// How many messages may wait in the outbox before the loop stops reading new call
/// lines (the back pressure that keeps memory bounded when the child is slow).
const OUTBOX_MAX: usize = 64;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (options, command) = match session::parse_args(&args) {
        Ok(parsed) => parsed,
        Err(message) => {
            eprintln!("tokio-host: {message}");
            eprintln!("usage: tokio-host [--timeout DUR] [--grace DUR] -- COMMAND [ARGS...]");
            return ExitCode::from(Status::Usage as u8);
        }
    };
    // One thread is enough: nothing in the loop blocks.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    let status = match runtime {
        Ok(runtime) => runtime.block_on(run(options, command)),
        Err(e) => {
            eprintln!("tokio-host: cannot start the runtime: {e}");
            Status::Exited
        }
    };
    ExitCode::from(status as u8)
}

/// Starts the extension and runs the session to its end.
async fn run(options: session::Options, command: Vec<String>) -> Status {
    let mut child = match spawn(&command) {
        Ok(child) => child,
        Err(failure) => return failure.report_alone(),
    };
    let config = Config::default()
        .timeout(options.timeout)
        .grace(options.grace)
        // The extension's own answer to bad input, as `dhara session` gives it.
        .validate_input(false);
    let mut core = Core::new(config);
    let mut session = Session::new(options, session::read_stdin_lines());
    let driven = drive(&mut child, &mut core, &mut session).await;
    session.finish(&mut core, driven).await
}

/// Spawns the command with three pipes, as the leader of its own process group, so
/// that the kill reaches whatever it starts too (`npx`, shell wrappers).
fn spawn(command: &[String]) -> Result<Child, session::Failure> {
    let Some((program, args)) = command.split_first() else {
        return Err(session::Failure::usage(
            "missing the extension command: put it after `--`".into(),
        ));
    };
    let mut process = Command::new(program);
    process
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Should the driver end early (a panic), the child does not outlive it.
        .kill_on_drop(true);
    #[cfg(unix)]
    process.process_group(0);
    process
        .spawn()
        .map_err(|e| session::Failure::spawn(program, &e))
}

/// How the driver ended: the exit code reported to the Core (`None`: a signal),
/// whether the driver killed the process, and when.
pub struct Driven {
    /// The exit code from [`Event::Closed`].
    pub code: Option<i32>,
    /// `true` when the Core asked for the kill and the driver carried it out.
    pub killed: bool,
    /// The time of the end, on the Core's clock.
    pub at: Instant,
}

/// The driver loop: runs until the Core reports [`Event::Closed`].
async fn drive(child: &mut Child, core: &mut Core, session: &mut Session) -> Driven {
    // The Core never reads a clock: it is told the time as a duration since an origin
    // we choose, here the start of the loop. Its deadlines come back on that scale.
    let origin = TokioInstant::now();
    let now = || Instant::from_duration(origin.elapsed());
    let pid = child.id();
    let mut stdout = child.stdout.take();
    if let Some(stderr) = child.stderr.take() {
        // Drained for the whole session: a child whose stderr pipe fills stops.
        tokio::spawn(copy_stderr(stderr));
    }
    let mut to_stdin = child.stdin.take().map(spawn_writer);
    let mut outbox: VecDeque<Vec<u8>> = VecDeque::new();
    // `Output::CloseStdin` came: close stdin once the outbox has gone to the writer.
    let mut close_stdin = false;
    let mut buf = vec![0u8; 64 * 1024];
    // The exit as `child.wait()` saw it, and when, until it is reported to the Core.
    let mut exit_seen: Option<(Option<i32>, TokioInstant)> = None;
    let mut exit_reported = false;
    let mut killed = false;

    session.start(core, now());
    loop {
        // 1. Poll until Wait. Nothing here awaits: writes are queued, events handled.
        let deadline = loop {
            match core.poll_output() {
                // The bytes borrow the Core's buffer until the next poll: copy them out.
                Output::Transmit(bytes) => outbox.push_back(bytes.to_vec()),
                Output::Event(Event::Closed { code }) => {
                    let at = now();
                    return Driven { code, killed, at };
                }
                Output::Event(event) => session.handle(core, now(), event),
                // Right after `shutdown`: the end of input means shutdown too.
                Output::CloseStdin => close_stdin = true,
                Output::Kill => {
                    // The whole group, then the child itself: the fallback where there
                    // are no process groups (Windows) or the group kill failed.
                    killed = true;
                    if let Some(pid) = pid {
                        kill_process_group(pid);
                    }
                    let _ = child.start_kill();
                }
                Output::Wait(deadline) => break deadline,
            }
        };
        // Dropping the sender closes stdin: the writer task writes what it holds, then
        // drops the pipe.
        if close_stdin && outbox.is_empty() {
            to_stdin = None;
        }

        // 2. Wait for the first of: the Core's deadline, the end of the STDOUT_DRAIN
        // wait, bytes on stdout, the exit, room in the writer's channel, a call line.
        let drain_ends = exit_seen
            .filter(|_| !exit_reported)
            .map(|(_, seen)| seen + STDOUT_DRAIN);
        let wake_at = [deadline.map(|d| origin + d.since_origin()), drain_ends]
            .into_iter()
            .flatten()
            .min();
        tokio::select! {
            () = sleep_until(wake_at.unwrap_or_else(TokioInstant::now)), if wake_at.is_some() => {
                if deadline.is_some_and(|d| now() >= d) {
                    core.handle_input(now(), Input::Timeout);
                }
            }
            // `read` is cancel-safe: if another branch wins, no bytes are lost.
            read = read_some(&mut stdout, &mut buf), if stdout.is_some() => match read {
                Some(n) => core.handle_input(now(), Input::Stdout(&buf[..n])),
                None => {
                    stdout = None;
                    core.handle_input(now(), Input::StdoutClosed);
                }
            },
            status = child.wait(), if exit_seen.is_none() => {
                let code = status.ok().and_then(|status| status.code());
                exit_seen = Some((code, TokioInstant::now()));
            }
            // A write is never awaited here: only room in the channel is, and a full
            // channel merely leaves this branch pending while the others go on.
            permit = reserve(&to_stdin), if !outbox.is_empty() && to_stdin.is_some() => {
                // `None`: the writer has ended (the child closed its stdin); the bytes
                // are dropped, and the exit will be reported.
                if let (Some(permit), Some(bytes)) = (permit, outbox.pop_front()) {
                    permit.send(bytes);
                }
            }
            line = session.next_line(), if session.wants_lines(core) && outbox.len() < OUTBOX_MAX => {
                session.handle_line(core, now(), line);
            }
        }

        // 3. Report the exit once stdout has ended, or has had STDOUT_DRAIN to end:
        // stdout first, so that a reply written just before the exit is still read.
        if let Some((code, seen)) = exit_seen
            && !exit_reported
            && (stdout.is_none() || seen.elapsed() >= STDOUT_DRAIN)
        {
            exit_reported = true;
            if !killed && let Some(pid) = pid {
                // It exited on its own: what it started and left behind ends with it.
                kill_process_group(pid);
            }
            core.handle_input(now(), Input::Exited { code });
        }
    }
}

/// Reads some bytes from the child's stdout; `None` at its end (or on an error).
async fn read_some(
    stdout: &mut Option<tokio::process::ChildStdout>,
    buf: &mut [u8],
) -> Option<usize> {
    match stdout.as_mut()?.read(buf).await {
        Ok(0) | Err(_) => None,
        Ok(n) => Some(n),
    }
}

/// Waits for room in the writer's channel; `None` once the writer has gone.
async fn reserve(to_stdin: &Option<mpsc::Sender<Vec<u8>>>) -> Option<mpsc::Permit<'_, Vec<u8>>> {
    to_stdin.as_ref()?.reserve().await.ok()
}

/// The writer task: owns the child's stdin and writes each message whole. It may wait
/// on a full pipe for as long as the child does not read; nothing else waits with it.
/// It ends when the loop drops the sender (closing stdin) or a write fails.
fn spawn_writer(mut stdin: ChildStdin) -> mpsc::Sender<Vec<u8>> {
    let (tx, mut rx) = mpsc::channel::<Vec<u8>>(WRITER_QUEUE);
    tokio::spawn(async move {
        while let Some(bytes) = rx.recv().await {
            if stdin.write_all(&bytes).await.is_err() || stdin.flush().await.is_err() {
                // The child is gone or closed its stdin; its exit will be reported.
                return;
            }
        }
    });
    tx
}

/// Copies the extension's stderr to ours, each line after `[extension] `. Lines are
/// read at most 64 KiB at a time, so a line without end costs no more memory.
async fn copy_stderr(stderr: tokio::process::ChildStderr) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut reader)
            .take(64 * 1024)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) | Err(_) => return,
            Ok(_) => eprintln!("[extension] {}", String::from_utf8_lossy(&line).trim_end()),
        }
    }
}
