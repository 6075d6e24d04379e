//! A raw harness around one extension process.
//!
//! The checker must send what a well-behaved Core never sends (lines that are not
//! JSON, invalid requests, string ids), so it does not go through the Core endpoint:
//! it writes lines itself and reads the replies line by line. The process is driven
//! the way every driver must drive one: stderr drained by its own thread (a full
//! stderr pipe blocks the child), stdout read by another thread into a channel, so
//! every wait here is bounded.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use dhara_protocol::driver::kill_group;
use dhara_protocol::frame::{self, Frame, LineDecoder};
use dhara_protocol::json::Value;
use dhara_protocol::message::method;
use dhara_protocol::rpc::{self, DecodeError, Id, Incoming, Message, Notification, Response};

use super::live::Live;

/// How many of the extension's last stderr lines are kept for the report.
const STDERR_TAIL_LINES: usize = 12;
/// How many characters of a line are shown in a report or a trace.
const SHOWN_CHARS: usize = 200;
/// How many stdout lines may wait in the channel; past it, the reader thread (and
/// then the extension's writes) wait, so a flood of output cannot grow memory.
const STDOUT_QUEUE_LINES: usize = 256;
/// How often a waiting exit is polled.
const EXIT_POLL: Duration = Duration::from_millis(10);
/// How many `progress` notifications are kept between two looks at them; the rest
/// are only counted.
const KEPT_PROGRESS: usize = 64;

/// Prints every line, with its direction and the time since the check began, to
/// stderr (`--trace`).
#[derive(Clone)]
pub(super) struct Trace {
    start: Instant,
    enabled: bool,
}

impl Trace {
    /// A trace that prints only when `enabled`.
    pub(super) fn new(enabled: bool) -> Trace {
        Trace {
            start: Instant::now(),
            enabled,
        }
    }

    /// Prints one line: `process`, `direction` (`->` sent, `<-` received, `!!` the
    /// extension's stderr, `..` what happened to the process) and the text.
    fn line(&self, process: usize, direction: &str, text: &[u8]) {
        if self.enabled {
            let t = self.start.elapsed().as_secs_f64();
            eprintln!(
                "{t:9.3}s [{process}] {direction} {}",
                String::from_utf8_lossy(text)
            );
        }
    }
}

/// What the stdout thread hands over.
enum StdoutItem {
    /// One complete line, without its ending.
    Line(Vec<u8>),
    /// A framing error (an oversized line, a truncated last line).
    Error(String),
    /// Stdout ended (or could not be read any more).
    Closed,
}

/// What a wait for a reply ended with.
pub(super) enum Reply {
    /// A single response.
    Response(Response),
    /// A line holding an array: the replies to a batch.
    Batch(Vec<Result<Message, DecodeError>>),
    /// A line that should have been a response but is not a valid one.
    Invalid(String),
    /// Nothing arrived in time.
    TimedOut,
    /// Stdout ended: the extension can no longer answer.
    Closed,
}

/// How a wait for the process to exit ended.
pub(super) enum Exit {
    /// It exited, with this code (`None`: killed by a signal).
    Exited(Option<i32>),
    /// It was still running when the wait ended.
    Running,
}

/// A count of unexpected lines, with the first one as an example.
#[derive(Default)]
pub(super) struct Unexpected {
    /// How many there were.
    pub count: usize,
    /// The first, as shown in the report.
    pub first: Option<String>,
}

impl Unexpected {
    fn record(&mut self, what: String) {
        self.count += 1;
        self.first.get_or_insert(what);
    }
}

/// One running extension process.
pub(super) struct Process {
    number: usize,
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Receiver<StdoutItem>,
    stdout_open: bool,
    /// How many bytes of stdout wait for their newline, as the reader thread saw.
    pending: Arc<AtomicUsize>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    trace: Trace,
    /// Ids of the requests sent before the latest one: a reply carrying one of them
    /// is late (or a duplicate), never the answer to the latest request.
    earlier_ids: Vec<Id>,
    latest_id: Option<Id>,
    exit: Option<Option<i32>>,
    /// The id the next request gets.
    next_id: u64,
    /// What the latest request asked for, for the status line.
    awaited: String,
    live: Live,
    /// The params of the `progress` notifications received since the last
    /// [`take_progress`](Self::take_progress), the first [`KEPT_PROGRESS`] of them.
    progress: Vec<Value>,
    /// How many `progress` notifications were received past those kept.
    progress_dropped: usize,
    /// What came on stdout besides the replies waited for and notifications: lines
    /// that are not JSON-RPC (logs, garbage), late replies, requests.
    pub unexpected: Unexpected,
}

impl Process {
    /// Starts `command` in `cwd`, with `env` added to its environment and all three
    /// standard streams piped.
    pub(super) fn spawn(
        number: usize,
        command: &[String],
        cwd: &Path,
        env: &[(String, String)],
        trace: &Trace,
        live: &Live,
    ) -> Result<Process, String> {
        let (program, args) = command.split_first().ok_or("no command given")?;
        let mut process = Command::new(program);
        process
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Its own process group, so a kill reaches what a launcher started under it.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut process, 0);
        let mut child = process.spawn().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                format!("cannot start `{program}`: command not found")
            }
            _ => format!("cannot start `{program}`: {e}"),
        })?;
        trace.line(
            number,
            "..",
            format!("started {}", command.join(" ")).as_bytes(),
        );

        let (tx, stdout) = mpsc::sync_channel(STDOUT_QUEUE_LINES);
        let pending = Arc::new(AtomicUsize::new(0));
        if let Some(out) = child.stdout.take() {
            let pending = Arc::clone(&pending);
            thread::spawn(move || read_stdout(out, tx, &pending));
        }
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        if let Some(err) = child.stderr.take() {
            let tail = Arc::clone(&stderr_tail);
            let trace = trace.clone();
            thread::spawn(move || drain_stderr(err, number, &trace, &tail));
        }
        Ok(Process {
            number,
            stdin: child.stdin.take(),
            child,
            stdout,
            stdout_open: true,
            pending,
            stderr_tail,
            trace: trace.clone(),
            earlier_ids: Vec::new(),
            latest_id: None,
            exit: None,
            next_id: 1,
            awaited: String::new(),
            live: live.clone(),
            progress: Vec::new(),
            progress_dropped: 0,
            unexpected: Unexpected::default(),
        })
    }

    /// The number of this process in the check (1 for the first started).
    pub(super) fn number(&self) -> usize {
        self.number
    }

    /// A request id not used before on this process: 1, 2, 3, ...
    pub(super) fn new_id(&mut self) -> Id {
        let id = self.next_id;
        self.next_id += 1;
        Id::from(id)
    }

    /// Whether the process can still answer: it has not exited and its stdout is
    /// open.
    pub(super) fn is_alive(&mut self) -> bool {
        self.stdout_open && self.poll_exit().is_none()
    }

    /// How the process ended, once it has: `exited with code 1`, `was killed by a
    /// signal`; `None` while it runs.
    pub(super) fn ended(&mut self) -> Option<String> {
        if self.stdout_open {
            // Its exit may take a moment to follow the end of its stdout.
            return None;
        }
        let _ = self.wait_exit(Duration::from_millis(200));
        Some(match self.poll_exit() {
            Some(Some(code)) => format!("exited with code {code}"),
            Some(None) => String::from("was killed by a signal"),
            None => String::from("closed its stdout"),
        })
    }

    /// How many bytes the extension wrote after its last complete line: a reply
    /// without its newline, or one cut by a missing flush.
    pub(super) fn pending_bytes(&self) -> usize {
        self.pending.load(Ordering::Relaxed)
    }

    /// The `progress` params received since the last look, and how many more came
    /// beyond those kept.
    pub(super) fn take_progress(&mut self) -> (Vec<Value>, usize) {
        let dropped = std::mem::take(&mut self.progress_dropped);
        (std::mem::take(&mut self.progress), dropped)
    }

    /// Writes one line as is (it may be anything, valid or not), then a newline.
    /// `id` is the request id the line carries, if it carries one.
    pub(super) fn send_line(&mut self, line: &[u8], id: Option<Id>) -> Result<(), String> {
        if let Some(id) = id {
            self.awaited = format!("a reply to id {}, process {}", id_text(&id), self.number);
            self.earlier_ids.extend(self.latest_id.replace(id));
        }
        self.trace.line(self.number, "->", line);
        let mut bytes = Vec::with_capacity(line.len() + 1);
        frame::write_line(&mut bytes, |out| out.extend_from_slice(line));
        let stdin = self.stdin.as_mut().ok_or("stdin is already closed")?;
        stdin
            .write_all(&bytes)
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("cannot write to the extension: {e}"))
    }

    /// Sends a request.
    pub(super) fn send_request(
        &mut self,
        id: Id,
        method: &str,
        params: Option<&Value>,
    ) -> Result<(), String> {
        let mut line = Vec::new();
        let shown_id = id_text(&id);
        let request = rpc::Request {
            id: id.clone(),
            method: method.into(),
            params: params.cloned(),
        };
        rpc::write_message(&request.into(), &mut line);
        self.send_line(&line, Some(id))?;
        self.awaited = format!(
            "the reply to {method} (id {shown_id}), process {}",
            self.number
        );
        Ok(())
    }

    /// Sends a notification.
    pub(super) fn send_notification(
        &mut self,
        method: &str,
        params: Option<&Value>,
    ) -> Result<(), String> {
        let mut line = Vec::new();
        let notification = rpc::Notification {
            method: method.into(),
            params: params.cloned(),
        };
        rpc::write_message(&notification.into(), &mut line);
        self.send_line(&line, None)
    }

    /// Closes the extension's stdin: end of input.
    pub(super) fn close_stdin(&mut self) {
        if self.stdin.take().is_some() {
            self.trace.line(self.number, "..", b"closed stdin");
        }
    }

    /// Waits up to `wait` for the next reply that is not a late reply to an earlier
    /// request. Notifications from the extension are skipped; anything else that is
    /// not a reply is counted in [`unexpected`](Self::unexpected).
    pub(super) fn next_reply(&mut self, wait: Duration) -> Reply {
        self.live.waiting(self.awaited.clone(), wait);
        let reply = self.wait_reply(wait);
        self.live.done();
        reply
    }

    fn wait_reply(&mut self, wait: Duration) -> Reply {
        let deadline = deadline_after(wait);
        loop {
            let Some(line) = self.next_line(deadline) else {
                return if self.stdout_open {
                    Reply::TimedOut
                } else {
                    Reply::Closed
                };
            };
            match rpc::decode(&line, rpc::DecodeOptions::DEFAULT) {
                Incoming::Single(Ok(Message::Response(response))) => {
                    if self.earlier_ids.contains(&response.id) {
                        self.unexpected
                            .record(format!("late reply to id {}", id_text(&response.id)));
                    } else {
                        return Reply::Response(response);
                    }
                }
                Incoming::Single(Ok(Message::Notification(notification))) => {
                    self.notified(notification)
                }
                Incoming::Single(Ok(Message::Request(request))) => {
                    self.unexpected
                        .record(format!("a request from the extension: {}", request.method));
                }
                Incoming::Single(Err(e)) if e.is_response_like() => {
                    return Reply::Invalid(format!("{e}: {}", shown(&line)));
                }
                Incoming::Single(Err(_)) => self.unexpected.record(shown(&line)),
                Incoming::Batch(entries) => return Reply::Batch(entries),
            }
        }
    }

    /// Waits up to `wait` for the process to exit, reading (and counting as unexpected)
    /// whatever it still writes meanwhile.
    pub(super) fn wait_exit(&mut self, wait: Duration) -> Exit {
        self.live
            .waiting(format!("process {} to exit", self.number), wait);
        let exit = self.wait_for_exit(wait);
        self.live.done();
        exit
    }

    fn wait_for_exit(&mut self, wait: Duration) -> Exit {
        let deadline = deadline_after(wait);
        loop {
            if let Some(code) = self.poll_exit() {
                return Exit::Exited(code);
            }
            let now = Instant::now();
            if now >= deadline {
                return Exit::Running;
            }
            let slice = (now + EXIT_POLL).min(deadline);
            while let Some(line) = self.next_line(slice) {
                match rpc::decode(&line, rpc::DecodeOptions::DEFAULT) {
                    Incoming::Single(Ok(Message::Notification(_))) => {}
                    Incoming::Single(Err(e)) if !e.is_response_like() => {
                        self.unexpected.record(shown(&line))
                    }
                    _ => self
                        .unexpected
                        .record(format!("after shutdown: {}", shown(&line))),
                }
            }
        }
    }

    /// Kills the process and its group (if it still runs) and waits for it.
    pub(super) fn kill(&mut self) {
        if self.poll_exit().is_none() {
            let group = cfg!(unix).then(|| self.child.id());
            kill_group(&mut self.child, group);
            let status = self.child.wait().ok().map(|s| s.code());
            self.exit = Some(status.flatten());
            self.trace.line(self.number, "..", b"killed");
        }
    }

    /// The last lines the extension wrote on stderr.
    pub(super) fn stderr_tail(&self) -> Vec<String> {
        match self.stderr_tail.lock() {
            Ok(tail) => tail.iter().cloned().collect(),
            Err(_) => Vec::new(),
        }
    }

    /// Keeps the params of a `progress` notification; others are skipped.
    fn notified(&mut self, notification: Notification) {
        if notification.method != method::PROGRESS {
            return;
        }
        if self.progress.len() < KEPT_PROGRESS {
            self.progress
                .push(notification.params.unwrap_or(Value::Null));
        } else {
            self.progress_dropped += 1;
        }
    }

    /// The exit code, if the process has exited (`Some(None)`: killed by a signal).
    fn poll_exit(&mut self) -> Option<Option<i32>> {
        if self.exit.is_none() {
            if let Ok(Some(status)) = self.child.try_wait() {
                self.exit = Some(status.code());
                let text = match status.code() {
                    Some(code) => format!("exited with code {code}"),
                    None => String::from("killed by a signal"),
                };
                self.trace.line(self.number, "..", text.as_bytes());
            }
        }
        self.exit
    }

    /// The next complete line from stdout, waiting until `deadline` at most.
    fn next_line(&mut self, deadline: Instant) -> Option<Vec<u8>> {
        while self.stdout_open {
            // Checked before each line, so a flood of output cannot hold a wait open.
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            match self.stdout.recv_timeout(deadline - now) {
                Ok(StdoutItem::Line(line)) => {
                    self.trace.line(self.number, "<-", &line);
                    return Some(line);
                }
                Ok(StdoutItem::Error(e)) => {
                    self.trace.line(self.number, "..", e.as_bytes());
                    self.unexpected.record(e);
                }
                Ok(StdoutItem::Closed) | Err(RecvTimeoutError::Disconnected) => {
                    self.trace.line(self.number, "..", b"stdout closed");
                    self.stdout_open = false;
                }
                Err(RecvTimeoutError::Timeout) => return None,
            }
        }
        None
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The stdout thread: frames the bytes into lines and hands them over.
fn read_stdout(mut out: impl Read, tx: SyncSender<StdoutItem>, pending: &AtomicUsize) {
    let mut decoder = LineDecoder::new();
    let mut buf = [0u8; 8192];
    // The bytes after the last newline: an unfinished line.
    let mut unfinished = 0usize;
    loop {
        let ended = match out.read(&mut buf) {
            Ok(0) | Err(_) => {
                decoder.end();
                true
            }
            Ok(n) => {
                let chunk = buf.get(..n).unwrap_or_default();
                unfinished = match chunk.iter().rposition(|&b| b == b'\n') {
                    Some(at) => n - at - 1,
                    None => unfinished.saturating_add(n),
                };
                decoder.push(chunk);
                false
            }
        };
        while let Some(frame) = decoder.next_frame() {
            let item = match frame {
                Frame::Line(line) => StdoutItem::Line(line.to_vec()),
                other => StdoutItem::Error(other.to_string()),
            };
            if tx.send(item).is_err() {
                return;
            }
        }
        pending.store(unfinished, Ordering::Relaxed);
        if ended {
            let _ = tx.send(StdoutItem::Closed);
            return;
        }
    }
}

/// The stderr thread: keeps the last lines, and traces each one.
fn drain_stderr(err: impl Read, number: usize, trace: &Trace, tail: &Mutex<VecDeque<String>>) {
    use std::io::BufRead;
    let mut reader = std::io::BufReader::new(err);
    let mut line = Vec::new();
    loop {
        line.clear();
        // Each read is bounded by the take, so one endless line cannot grow memory.
        match reader.by_ref().take(64 * 1024).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end();
        trace.line(number, "!!", text.as_bytes());
        if let Ok(mut tail) = tail.lock() {
            if tail.len() == STDERR_TAIL_LINES {
                tail.pop_front();
            }
            tail.push_back(shown(text.as_bytes()));
        }
    }
}

/// The instant `wait` from now (or a year from now, for a wait too long to add).
fn deadline_after(wait: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(wait)
        .unwrap_or_else(|| now + Duration::from_secs(365 * 24 * 3600))
}

/// An id as it appears on the wire: `17`, `"17"` or `null`.
pub(super) fn id_text(id: &Id) -> String {
    shown(id.to_string().as_bytes())
}

/// A line as it is shown in a report: lossy UTF-8, cut to a readable length.
pub(super) fn shown(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((cut, _)) => format!("{}...", text.get(..cut).unwrap_or_default()),
        None => text.into_owned(),
    }
}
