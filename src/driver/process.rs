//! [`ExtensionProcess`]: a [`Core`] driven over a child process, with threads and a
//! channel.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::string::String;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::thread;
use std::time::Duration;
use std::vec::Vec;
use std::{boxed::Box, format};

use crate::host::{
    CallError, CallId, CallOptions, Config, Core, Event, Input, Output, Reply, UsageError,
};
use crate::json::Value;
use crate::message::{
    ExecuteParams, InitializeParams, InitializeResult, Progress, Tool, ToolResult,
};
use crate::time::{Clock, Instant};

/// The size of one read from the child's stdout or stderr.
const READ_CHUNK: usize = 8 * 1024;
/// How many chunks may wait in the channel before the reader threads pause (and with
/// them the child, on a full pipe): at most 512 KiB in flight.
pub(crate) const CHANNEL_CHUNKS: usize = 64;
/// How often the loop checks whether the child has exited while it waits.
pub(crate) const EXIT_POLL: Duration = Duration::from_millis(50);
/// After the child has exited, how long a driver waits for the end of its stdout
/// before it reports the exit anyway: 200 ms.
///
/// A driver reports [`Input::StdoutClosed`] before [`Input::Exited`], so that a reply
/// written just before the exit is read. Usually stdout ends with the exit; but a
/// process the extension started may hold the pipe open after the extension itself
/// has exited, and then the end of stdout never comes. Past this wait the driver
/// reports the exit all the same. It is also how long the end of stderr is waited
/// for after the session has closed.
pub const STDOUT_DRAIN: Duration = Duration::from_millis(200);
/// The longest stderr or stdout line kept whole for tracing and prefixing.
const LINE_MAX: usize = 64 * 1024;
/// How many events the blocking conveniences set aside for [`ExtensionProcess::next_event`]
/// (call endings and the final `Closed` are always kept).
const DEFERRED_MAX: usize = 1024;

/// What to do with the extension's stderr. It is never mixed into the protocol.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stderr {
    /// Copy each line to this process's stderr after the prefix (such as `"[ext] "`).
    Prefixed(String),
    /// Keep the last `limit` bytes, for [`ExtensionProcess::captured_stderr`].
    Captured {
        /// How many bytes to keep.
        limit: usize,
    },
    /// Read and drop it.
    Discard,
}

/// How to start and drive an extension.
///
/// ```
/// use dhara_protocol::driver::{Options, Stderr};
/// use dhara_protocol::host::Config;
/// use std::time::Duration;
///
/// let mut options = Options::default();
/// options.config = Config::default().timeout(Duration::from_secs(10));
/// options.stderr = Stderr::Discard;
/// assert!(options.end_process_group);
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Options {
    /// The Core's configuration: timeouts, grace, limits.
    pub config: Config,
    /// What to do with the extension's stderr.
    pub stderr: Stderr,
    /// When the extension exits on its own, kill whatever is left in its process group
    /// (processes it started and did not end), so that nothing outlives the session.
    /// Default `true`. Off, such processes are left running; a process still holding
    /// the extension's stdout then delays the report of its exit by [`STDOUT_DRAIN`](crate::driver::STDOUT_DRAIN).
    /// (After [`Output::Kill`] the whole group is killed in any case.)
    ///
    /// The group is killed by its id (the extension's pid) *after* the extension
    /// itself was reaped. While anything is left in the group, that id cannot be
    /// given to another process. When nothing is left, there is a short window
    /// between the reap and the kill in which the system may reuse the pid: a new
    /// process with that pid that leads its own process group would be killed. The
    /// window is small (the kill follows the reap at once); closing it would need a
    /// wait that does not reap, which `std::process::Child` does not offer.
    pub end_process_group: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            config: Config::default(),
            stderr: Stderr::Prefixed(String::from("[extension] ")),
            end_process_group: true,
        }
    }
}

/// One thing the trace hook is told about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Traced<'a> {
    /// A line written to the extension's stdin (without its newline).
    Sent(&'a [u8]),
    /// A line read from the extension's stdout (without its newline; cut at 64 KiB).
    Received(&'a [u8]),
    /// The extension's stdin was closed, after `shutdown`.
    StdinClosed,
    /// A line the extension wrote to stderr.
    Stderr(&'a [u8]),
    /// The extension's stdout ended.
    StdoutClosed,
    /// The process group was killed.
    Killed,
    /// The process exited with this code (`None`: ended by a signal).
    Exited(Option<i32>),
}

/// The trace hook: told everything that crosses the pipes, with the time since spawn.
pub type TraceHook = Box<dyn FnMut(Duration, Traced<'_>) + Send>;

/// Why a blocking convenience ([`ExtensionProcess::call`] and the like) has no result.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// The Core refused the command (for example: not initialized, shutting down).
    Usage(UsageError),
    /// The call ended without a result: a JSON-RPC error, a timeout, the exit...
    Call(CallError),
    /// The reply was of another kind than the request asked for.
    UnexpectedReply,
    /// The session is over: the Core reported `Closed`.
    Closed,
}

impl core::fmt::Display for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Error::Usage(e) => write!(f, "{e}"),
            Error::Call(e) => write!(f, "{e}"),
            Error::UnexpectedReply => f.write_str("the reply does not match the request"),
            Error::Closed => f.write_str("the session is closed"),
        }
    }
}

impl std::error::Error for Error {}

/// What the reader threads send to the loop.
pub(crate) enum FromChild {
    Stdout(Vec<u8>),
    StdoutClosed,
    Stderr(Vec<u8>),
    StderrClosed,
}

/// A [`Core`] running over a child process.
///
/// The loop is [`next_event`](ExtensionProcess::next_event): it polls the Core and does
/// what it says (write, hand out an event, kill, or wait for input until the Core's
/// deadline). Two threads read the child's stdout and stderr into one channel, and a
/// third writes to its stdin, so the loop never blocks on a pipe.
///
/// ```no_run
/// use dhara_protocol::driver::ExtensionProcess;
/// use dhara_protocol::json::Value;
/// use std::process::Command;
///
/// let mut ext = ExtensionProcess::spawn(Command::new("my-extension"), Default::default())?;
/// let info = ext.initialize(".")?;
/// println!("{} offers {} tools", info.name, info.tools.len());
/// let result = ext.call("echo", Value::Null, |p| eprintln!("{}", p.message))?;
/// println!("{result:?}");
/// ext.shutdown()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ExtensionProcess {
    core: Core,
    clock: Clock,
    child: Child,
    /// The group to kill: the child's pid, when it leads its own group.
    process_group: Option<u32>,
    /// Bytes for the stdin writer thread; `None` once stdin is closed.
    stdin: Option<Sender<Vec<u8>>>,
    from_child: Receiver<FromChild>,
    /// Keeps the channel connected after both readers have finished.
    _keep_open: SyncSender<FromChild>,
    stdout_open: bool,
    stderr_open: bool,
    /// When the child was seen to have exited, and its status, before it is reported.
    exit_seen: Option<(Instant, ExitStatus)>,
    exit_reported: bool,
    /// The exit status reported to the Core, kept for after [`Event::Closed`].
    exit_status: Option<ExitStatus>,
    end_process_group: bool,
    /// The process was killed on the Core's decision.
    killed: bool,
    closed: bool,
    stderr: Stderr,
    stderr_line: LineBuffer,
    captured: VecDeque<u8>,
    trace: Option<TraceHook>,
    stdout_line: LineBuffer,
    deferred: VecDeque<Event>,
}

impl ExtensionProcess {
    /// Starts `command` with piped stdin, stdout and stderr, in its own process group
    /// on Unix, and the reader and writer threads.
    pub fn spawn(mut command: Command, options: Options) -> io::Result<ExtensionProcess> {
        let (mut child, process_group) = spawn_piped(&mut command)?;
        let clock = Clock::new();
        let (to_loop, from_child) = mpsc::sync_channel(CHANNEL_CHUNKS);
        let stdin = match start_threads(&mut child, &to_loop) {
            Ok(stdin) => stdin,
            Err(e) => {
                // No thread, no driver: leave no process behind either.
                kill_group(&mut child, process_group);
                let _ = child.wait();
                return Err(e);
            }
        };

        Ok(ExtensionProcess {
            core: Core::new(options.config),
            clock,
            child,
            process_group,
            stdin: Some(stdin),
            from_child,
            _keep_open: to_loop,
            stdout_open: true,
            stderr_open: true,
            exit_seen: None,
            exit_reported: false,
            exit_status: None,
            end_process_group: options.end_process_group,
            killed: false,
            closed: false,
            stderr: options.stderr,
            stderr_line: LineBuffer::default(),
            captured: VecDeque::new(),
            trace: None,
            stdout_line: LineBuffer::default(),
            deferred: VecDeque::new(),
        })
    }

    /// The events, one by one, as [`next_event`](ExtensionProcess::next_event) gives
    /// them: `for event in extension.events() { ... }` runs the session to its end.
    pub fn events(&mut self) -> impl Iterator<Item = Event> + '_ {
        core::iter::from_fn(move || self.next_event())
    }

    /// Sets the hook told about every line in either direction, stderr lines, and the
    /// process's end (for `--trace`).
    pub fn set_trace(&mut self, hook: TraceHook) {
        self.trace = Some(hook);
    }

    /// The Core, to read its state and tools.
    pub fn core(&self) -> &Core {
        &self.core
    }

    /// The Core, to issue commands directly; [`now`](ExtensionProcess::now) gives the
    /// time to pass. Events then come from [`next_event`](ExtensionProcess::next_event).
    pub fn core_mut(&mut self) -> &mut Core {
        &mut self.core
    }

    /// The current time on this driver's clock.
    pub fn now(&self) -> Instant {
        self.clock.now()
    }

    /// The child's process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// The last bytes of stderr, with [`Stderr::Captured`] (lossy UTF-8).
    pub fn captured_stderr(&self) -> String {
        let (a, b) = self.captured.as_slices();
        let mut bytes = Vec::with_capacity(a.len() + b.len());
        bytes.extend_from_slice(a);
        bytes.extend_from_slice(b);
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// Starts a `tools/execute` call with the Core's default options; its end comes
    /// from [`next_event`](ExtensionProcess::next_event) as [`Event::CallEnded`].
    pub fn start_call(&mut self, tool_name: &str, input: Value) -> Result<CallId, UsageError> {
        let now = self.now();
        self.core.execute(now, tool_name, input)
    }

    /// The next event, running the loop until there is one; `None` after
    /// [`Event::Closed`] has been handed out.
    ///
    /// This is the whole driver: poll the Core; write what it transmits; kill when it
    /// says so; otherwise wait for the child's output until its deadline, and feed
    /// back what happened (bytes, end of stdout, exit, or the deadline passing).
    pub fn next_event(&mut self) -> Option<Event> {
        match self.deferred.pop_front() {
            Some(event) => Some(event),
            None => self.run_until_event(None),
        }
    }

    /// Like [`next_event`](ExtensionProcess::next_event), but waits at most `max_wait`
    /// for something to happen (zero: only what is ready now). `None` when nothing did,
    /// or after the session has closed ([`is_closed`](ExtensionProcess::is_closed)).
    /// For loops that also watch something else, such as their own input.
    pub fn next_event_timeout(&mut self, max_wait: Duration) -> Option<Event> {
        match self.deferred.pop_front() {
            Some(event) => Some(event),
            None => {
                let give_up = self.clock.now().saturating_add(max_wait);
                self.run_until_event(Some(give_up))
            }
        }
    }

    /// `true` once the Core has reported [`Event::Closed`]: the process has ended and
    /// no more events will come from the loop.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// How the process ended, once its exit was reported to the Core: kept after
    /// [`Event::Closed`] has been handed out, so the status is known however the
    /// events were consumed. `None` while it runs, or where it could not be waited
    /// for.
    pub fn exit_status(&self) -> Option<ExitStatus> {
        self.exit_status
    }

    /// The exit code, once the exit was reported (`None` as well when the process
    /// was ended by a signal: see [`exit_status`](ExtensionProcess::exit_status)).
    pub fn exit_code(&self) -> Option<i32> {
        self.exit_status.and_then(|status| status.code())
    }

    /// `true` once this driver has killed the process on the Core's decision
    /// ([`Output::Kill`](crate::host::Output::Kill)), as opposed to the process ending
    /// on its own, with or without an exit code.
    pub fn killed(&self) -> bool {
        self.killed
    }

    /// The loop: poll the Core and do what it says until it hands out an event, or
    /// until `give_up` passes while waiting.
    fn run_until_event(&mut self, give_up: Option<Instant>) -> Option<Event> {
        while !self.closed {
            match self.core.poll_output() {
                Output::Transmit(bytes) => {
                    if let Some(hook) = self.trace.as_mut() {
                        let elapsed = self.clock.now().since_origin();
                        for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                            hook(elapsed, Traced::Sent(line));
                        }
                    }
                    // A send fails only when the writer has stopped (the child closed
                    // its stdin); the exit or the end of stdout will follow.
                    if let Some(stdin) = &self.stdin {
                        let _ = stdin.send(bytes.to_vec());
                    }
                }
                Output::Event(event) => {
                    if matches!(event, Event::Closed { .. }) {
                        self.closed = true;
                        self.stdin = None;
                        self.drain_stderr();
                    }
                    return Some(event);
                }
                Output::CloseStdin => {
                    // The writer thread writes what it was sent, then drops the pipe.
                    self.stdin = None;
                    if let Some(hook) = self.trace.as_mut() {
                        hook(self.clock.now().since_origin(), Traced::StdinClosed);
                    }
                }
                Output::Kill => self.kill(),
                Output::Wait(deadline) => {
                    if !self.wait(deadline, give_up) {
                        return None;
                    }
                }
            }
        }
        None
    }

    /// Sends `initialize` with the working directory `cwd` and waits for its result.
    pub fn initialize(&mut self, cwd: &str) -> Result<InitializeResult, Error> {
        let now = self.now();
        let call = self
            .core
            .initialize(now, InitializeParams::new(cwd))
            .map_err(Error::Usage)?;
        match self.wait_for(call, &mut |_| {})? {
            Reply::Initialized(result) => Ok(result),
            _ => Err(Error::UnexpectedReply),
        }
    }

    /// Sends a `tools/list` request and waits for the tools.
    pub fn list_tools(&mut self) -> Result<Vec<Tool>, Error> {
        let now = self.now();
        let call = self.core.list_tools(now).map_err(Error::Usage)?;
        match self.wait_for(call, &mut |_| {})? {
            Reply::Tools(list) => Ok(list.tools),
            _ => Err(Error::UnexpectedReply),
        }
    }

    /// Calls a tool and waits for its result, handing its progress to `on_progress`.
    /// Other events meanwhile are kept for [`next_event`](ExtensionProcess::next_event).
    pub fn call(
        &mut self,
        tool_name: &str,
        input: Value,
        mut on_progress: impl FnMut(&Progress),
    ) -> Result<ToolResult, Error> {
        self.call_with(
            ExecuteParams::new(tool_name, input),
            CallOptions::default(),
            &mut on_progress,
        )
    }

    /// [`call`](ExtensionProcess::call) with per-call options (timeout, progress
    /// extending the deadline).
    pub fn call_with(
        &mut self,
        params: ExecuteParams,
        options: CallOptions,
        on_progress: &mut dyn FnMut(&Progress),
    ) -> Result<ToolResult, Error> {
        let now = self.now();
        let call = self
            .core
            .execute_with(now, params, options)
            .map_err(Error::Usage)?;
        match self.wait_for(call, on_progress)? {
            Reply::Executed(result) => Ok(result),
            _ => Err(Error::UnexpectedReply),
        }
    }

    /// Sends `shutdown` and runs until the session is closed: the extension exited, or
    /// was killed after the grace. Returns its exit code (`None`: ended by a signal,
    /// see [`exit_status`](ExtensionProcess::exit_status)), also when the session had
    /// already closed. The events that come meanwhile are handed to `on_event`.
    pub fn shutdown_with(&mut self, mut on_event: impl FnMut(Event)) -> Result<Option<i32>, Error> {
        let now = self.now();
        match self.core.shutdown(now) {
            // Already on its way (after a timeout, say), or over: wait for the end.
            Ok(()) | Err(UsageError::ShuttingDown | UsageError::Closed) => {}
            Err(e) => return Err(Error::Usage(e)),
        }
        while let Some(event) = self.next_event() {
            on_event(event);
        }
        Ok(self.exit_code())
    }

    /// [`shutdown_with`](ExtensionProcess::shutdown_with), the events dropped.
    pub fn shutdown(&mut self) -> Result<Option<i32>, Error> {
        self.shutdown_with(|_| {})
    }

    /// Runs the loop until `call` ends; its progress goes to `on_progress`, every other
    /// event is set aside for `next_event`.
    fn wait_for(
        &mut self,
        call: CallId,
        on_progress: &mut dyn FnMut(&Progress),
    ) -> Result<Reply, Error> {
        let mut set_aside = VecDeque::new();
        let outcome = loop {
            let Some(event) = self.run_until_event(None) else {
                break Err(Error::Closed);
            };
            match event {
                Event::CallEnded { call: c, result } if c == call => {
                    break result.map_err(Error::Call);
                }
                Event::Progress {
                    call: Some(c),
                    progress,
                } if c == call => on_progress(&progress),
                event => {
                    let essential = matches!(event, Event::CallEnded { .. } | Event::Closed { .. });
                    if essential || set_aside.len() + self.deferred.len() < DEFERRED_MAX {
                        set_aside.push_back(event);
                    }
                }
            }
        };
        self.deferred.append(&mut set_aside);
        outcome
    }

    /// Waits for the child's output until `deadline`, and feeds what happened to the
    /// Core. Returns `true` after feeding one input, `false` when `give_up` passed first.
    fn wait(&mut self, deadline: Option<Instant>, give_up: Option<Instant>) -> bool {
        loop {
            let now = self.clock.now();
            if deadline.is_some_and(|d| now >= d) {
                self.core.handle_input(now, Input::Timeout);
                return true;
            }
            if self.check_exit(now) {
                return true;
            }
            if give_up.is_some_and(|g| now >= g) {
                return false;
            }
            let wake_at = [deadline, give_up].into_iter().flatten().min();
            let until = wake_at.map_or(EXIT_POLL, |t| t.saturating_duration_since(now));
            match self.from_child.recv_timeout(until.min(EXIT_POLL)) {
                Ok(FromChild::Stdout(bytes)) => {
                    self.trace_received(&bytes);
                    let now = self.clock.now();
                    self.core.handle_input(now, Input::Stdout(&bytes));
                    return true;
                }
                Ok(FromChild::StdoutClosed) => {
                    self.stdout_open = false;
                    let now = self.clock.now();
                    if let Some(hook) = self.trace.as_mut() {
                        hook(now.since_origin(), Traced::StdoutClosed);
                    }
                    self.core.handle_input(now, Input::StdoutClosed);
                    return true;
                }
                Ok(FromChild::Stderr(bytes)) => self.handle_stderr(&bytes),
                Ok(FromChild::StderrClosed) => self.stderr_open = false,
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {}
            }
        }
    }

    /// Notices the child's exit and reports it, once stdout has ended or has had
    /// [`STDOUT_DRAIN`] to end. Returns `true` when it fed the Core.
    fn check_exit(&mut self, now: Instant) -> bool {
        if self.exit_reported {
            return false;
        }
        if self.exit_seen.is_none() {
            if let Ok(Some(status)) = self.child.try_wait() {
                self.exit_seen = Some((now, status));
            }
        }
        match self.exit_seen {
            Some((seen, status))
                if !self.stdout_open || now.saturating_duration_since(seen) >= STDOUT_DRAIN =>
            {
                self.report_exit(status);
                true
            }
            _ => false,
        }
    }

    fn report_exit(&mut self, status: ExitStatus) {
        self.exit_reported = true;
        self.exit_status = Some(status);
        if self.end_process_group && !self.killed {
            // What the extension started and left behind ends with it.
            if let Some(group) = self.process_group {
                kill_process_group(group);
            }
        }
        let now = self.clock.now();
        if let Some(hook) = self.trace.as_mut() {
            hook(now.since_origin(), Traced::Exited(status.code()));
        }
        self.core.handle_input(
            now,
            Input::Exited {
                code: status.code(),
            },
        );
    }

    /// Kills the child's process group (or the child alone where there is none), waits
    /// for it, and reports the exit.
    fn kill(&mut self) {
        self.killed = true;
        if let Some(hook) = self.trace.as_mut() {
            hook(self.clock.now().since_origin(), Traced::Killed);
        }
        kill_group(&mut self.child, self.process_group);
        let status = match self.exit_seen {
            Some((_, status)) => Ok(status),
            None => self.child.wait(),
        };
        self.exit_seen = None;
        match status {
            Ok(status) => self.report_exit(status),
            // The child cannot be waited for (already reaped): report an exit without code.
            Err(_) => {
                self.exit_reported = true;
                let now = self.clock.now();
                self.core.handle_input(now, Input::Exited { code: None });
            }
        }
    }

    /// After the end: handles the stderr still in the pipe (the last words of an
    /// extension that failed matter most), for at most [`STDOUT_DRAIN`].
    fn drain_stderr(&mut self) {
        let give_up = std::time::Instant::now() + STDOUT_DRAIN;
        while self.stderr_open {
            let left = give_up.saturating_duration_since(std::time::Instant::now());
            match self.from_child.recv_timeout(left) {
                Ok(FromChild::Stderr(bytes)) => self.handle_stderr(&bytes),
                Ok(FromChild::StderrClosed) => self.stderr_open = false,
                Ok(FromChild::Stdout(_) | FromChild::StdoutClosed) => {}
                Err(_) => break,
            }
        }
        let elapsed = self.clock.now().since_origin();
        let (trace, stderr) = (&mut self.trace, &self.stderr);
        self.stderr_line
            .finish(&mut |line| stderr_line(trace, stderr, elapsed, line));
    }

    fn trace_received(&mut self, bytes: &[u8]) {
        let Some(hook) = self.trace.as_mut() else {
            return;
        };
        let elapsed = self.clock.now().since_origin();
        self.stdout_line
            .push(bytes, &mut |line| hook(elapsed, Traced::Received(line)));
    }

    fn handle_stderr(&mut self, bytes: &[u8]) {
        let elapsed = self.clock.now().since_origin();
        let (trace, stderr) = (&mut self.trace, &self.stderr);
        self.stderr_line
            .push(bytes, &mut |line| stderr_line(trace, stderr, elapsed, line));
        if let Stderr::Captured { limit } = self.stderr {
            self.captured.extend(bytes);
            let excess = self.captured.len().saturating_sub(limit);
            self.captured.drain(..excess);
        }
    }
}

/// One line of the extension's stderr: to the trace hook, and copied with its prefix.
pub(crate) fn stderr_line(
    trace: &mut Option<TraceHook>,
    stderr: &Stderr,
    elapsed: Duration,
    line: &[u8],
) {
    if let Some(hook) = trace.as_mut() {
        hook(elapsed, Traced::Stderr(line));
    }
    if let Stderr::Prefixed(prefix) = stderr {
        let mut out = io::stderr().lock();
        let _ = out.write_all(prefix.as_bytes());
        let _ = out.write_all(line);
        let _ = out.write_all(b"\n");
    }
}

impl Drop for ExtensionProcess {
    /// A child still running when the driver is dropped is killed with its group, so no
    /// process is left behind.
    fn drop(&mut self) {
        self.stdin = None;
        if !self.exit_reported && self.exit_seen.is_none() {
            if let Ok(None) = self.child.try_wait() {
                kill_group(&mut self.child, self.process_group);
            }
            let _ = self.child.wait();
        }
    }
}

impl core::fmt::Debug for ExtensionProcess {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ExtensionProcess")
            .field("pid", &self.child.id())
            .field("closed", &self.closed)
            .finish_non_exhaustive()
    }
}

/// Kills the process group `group` and then the child itself, so that a wait that
/// follows ends even where the group kill did not work. `group` is the child's pid
/// when it was spawned as the leader of its own group (`process_group(0)` on Unix);
/// `None` kills only the child. See [`kill_process_group`].
pub fn kill_group(child: &mut Child, group: Option<u32>) {
    if let Some(pgid) = group {
        kill_process_group(pgid);
    }
    let _ = child.kill();
}

/// Sends `SIGKILL` to every process in the process group `pgid`, by pid alone, for
/// drivers that hold no [`std::process::Child`] (a `tokio::process::Child`, a pid from
/// elsewhere). Returns `true` when the signal was sent. On other systems than Unix
/// there are no process groups: it does nothing and returns `false`.
///
/// It needs no `libc`: it runs `kill -s KILL -- -<pgid>`, the `kill` program, or the
/// shell's own `kill` where there is no such program (minimal container images). The
/// `--` matters: without it, procps-ng 4's `kill` reads `-<pgid>` as an option and
/// signals `-1`, every process the user may signal. A `pgid` of 0 or 1 (this
/// process's own group, or every process) is refused.
pub fn kill_process_group(pgid: u32) -> bool {
    if !cfg!(unix) || pgid <= 1 {
        return false;
    }
    let target = format!("-{pgid}");
    run_quietly(Command::new("kill").args(["-s", "KILL", "--", &target]))
        || run_quietly(Command::new("sh").args(["-c", r#"kill -s KILL -- "$0""#, &target]))
}

/// Starts `command` with piped stdin, stdout and stderr, as the leader of a process
/// group of its own on Unix; the child and that group (its pid), where there is one.
pub(crate) fn spawn_piped(command: &mut Command) -> io::Result<(Child, Option<u32>)> {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(command, 0);
    let child = command.spawn()?;
    let group = if cfg!(unix) { Some(child.id()) } else { None };
    Ok((child, group))
}

/// Runs a command with no input or output; `true` when it ran and succeeded.
fn run_quietly(command: &mut Command) -> bool {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// Starts the threads that own the child's pipes: readers for stdout and stderr
/// feeding `to_loop`, and the stdin writer, whose sender is returned.
pub(crate) fn start_threads(
    child: &mut Child,
    to_loop: &SyncSender<FromChild>,
) -> io::Result<Sender<Vec<u8>>> {
    let stdout = child.stdout.take().ok_or_else(|| missing_pipe("stdout"))?;
    let stderr = child.stderr.take().ok_or_else(|| missing_pipe("stderr"))?;
    let stdin = child.stdin.take().ok_or_else(|| missing_pipe("stdin"))?;
    let stdout_end = Some(FromChild::StdoutClosed);
    spawn_reader(stdout, to_loop.clone(), FromChild::Stdout, stdout_end)?;
    let stderr_end = Some(FromChild::StderrClosed);
    spawn_reader(stderr, to_loop.clone(), FromChild::Stderr, stderr_end)?;
    spawn_writer(stdin)
}

pub(crate) fn missing_pipe(name: &str) -> io::Error {
    io::Error::other(format!("the child's {name} was not piped"))
}

/// Reads `pipe` to its end on a thread, sending each chunk as `wrap(chunk)` and then
/// `end`, if any.
pub(crate) fn spawn_reader<T: Send + 'static>(
    mut pipe: impl Read + Send + 'static,
    to_loop: SyncSender<T>,
    wrap: fn(Vec<u8>) -> T,
    end: Option<T>,
) -> io::Result<()> {
    thread::Builder::new()
        .name(String::from("dhara-reader"))
        .spawn(move || {
            let mut buf = [0u8; READ_CHUNK];
            loop {
                match pipe.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        let chunk = buf[..n.min(buf.len())].to_vec();
                        if to_loop.send(wrap(chunk)).is_err() {
                            return;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            if let Some(end) = end {
                let _ = to_loop.send(end);
            }
        })?;
    Ok(())
}

/// Writes what the loop sends to the child's stdin on a thread, flushing after each
/// message; dropping the sender closes stdin.
pub(crate) fn spawn_writer(mut stdin: ChildStdin) -> io::Result<Sender<Vec<u8>>> {
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    thread::Builder::new()
        .name(String::from("dhara-writer"))
        .spawn(move || {
            for bytes in rx {
                if stdin
                    .write_all(&bytes)
                    .and_then(|()| stdin.flush())
                    .is_err()
                {
                    return;
                }
            }
        })?;
    Ok(tx)
}

/// Splits a byte stream into lines for tracing and prefixing, keeping at most
/// The bytes before the first newline and those after it, when there is one.
fn split_line(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut parts = bytes.splitn(2, |&b| b == b'\n');
    let head = parts.next()?;
    let rest = parts.next()?;
    Some((head, rest))
}

/// [`LINE_MAX`] bytes of a line (the rest of a longer line is dropped).
#[derive(Default)]
pub(crate) struct LineBuffer {
    line: Vec<u8>,
}

impl LineBuffer {
    pub(crate) fn push(&mut self, mut bytes: &[u8], emit: &mut dyn FnMut(&[u8])) {
        while let Some((head, rest)) = split_line(bytes) {
            self.keep(head);
            let line = self.line.strip_suffix(b"\r").unwrap_or(&self.line);
            emit(line);
            self.line.clear();
            bytes = rest;
        }
        self.keep(bytes);
    }

    /// Emits the last line if it had no newline.
    pub(crate) fn finish(&mut self, emit: &mut dyn FnMut(&[u8])) {
        if !self.line.is_empty() {
            emit(&self.line);
            self.line.clear();
        }
    }

    fn keep(&mut self, bytes: &[u8]) {
        let room = LINE_MAX.saturating_sub(self.line.len());
        let kept = room.min(bytes.len());
        self.line.extend_from_slice(&bytes[..kept]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_split_across_chunks_and_bounded() {
        let mut lines = LineBuffer::default();
        let mut seen = Vec::new();
        lines.push(b"ab", &mut |l| seen.push(l.to_vec()));
        lines.push(b"c\r\nde\n\nf", &mut |l| seen.push(l.to_vec()));
        assert_eq!(seen, [b"abc".to_vec(), b"de".to_vec(), Vec::new()]);
        let long = std::vec![b'x'; LINE_MAX + 10];
        seen.clear();
        lines.push(&long, &mut |l| seen.push(l.to_vec()));
        lines.push(b"\n", &mut |l| seen.push(l.to_vec()));
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].len(), LINE_MAX);
        assert_eq!(seen[0][0], b'f');
    }
}
