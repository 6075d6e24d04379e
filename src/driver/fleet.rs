//! [`FleetProcesses`]: a [`Fleet`] driven over child processes, one wait loop over
//! all of them.

use std::boxed::Box;
use std::collections::{BTreeMap, VecDeque};
use std::io::{self, Write};
use std::process::{Child, Command, ExitStatus};
use std::string::{String, ToString};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::thread;
use std::time::Duration;
use std::vec::Vec;

use super::process::{
    CHANNEL_CHUNKS, EXIT_POLL, FromChild, LineBuffer, STDOUT_DRAIN, Stderr, kill_group,
    spawn_piped, start_threads,
};
use crate::fleet::{
    CallError, CallHandle, Config, Event, ExtensionConfig, ExtensionKey, Fleet, Input, Output,
    ProcessKey, Status, UsageError,
};
use crate::host::{self, CallOptions};
use crate::json::Value;
use crate::message::{Progress, ToolResult};
use crate::time::{Clock, Instant};

/// How many events the blocking conveniences set aside for
/// [`FleetProcesses::next_event`] (call endings and `Closed` are always kept).
const DEFERRED_MAX: usize = 1024;

/// How a process is started, each time the fleet asks for one.
pub type MakeCommand = Box<dyn FnMut() -> Command + Send>;

/// Why a blocking call of [`FleetProcesses`] has no result.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum FleetError {
    /// The fleet refused the call (an unknown or ambiguous name, a failed extension,
    /// a full queue...).
    Usage(UsageError),
    /// The call ended without a result.
    Call(CallError),
    /// The fleet has closed.
    Closed,
}

impl core::fmt::Display for FleetError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            FleetError::Usage(e) => write!(f, "{e}"),
            FleetError::Call(e) => write!(f, "{e}"),
            FleetError::Closed => f.write_str("the fleet is closed"),
        }
    }
}

impl std::error::Error for FleetError {}

/// One running child.
struct Running {
    child: Child,
    group: Option<u32>,
    /// Bytes for its stdin writer thread.
    stdin: Option<Sender<Vec<u8>>>,
    stdout_open: bool,
    /// When it was seen to have exited, before the exit is reported.
    exit_seen: Option<(Instant, ExitStatus)>,
}

/// What each extension's stderr has left: the unfinished line, the captured bytes.
#[derive(Default)]
struct StderrOf {
    line: LineBuffer,
    captured: VecDeque<u8>,
}

/// A [`Fleet`] over child processes: it starts, restarts and kills them as the fleet
/// says, with one loop.
///
/// The loop is [`next_event`](FleetProcesses::next_event): poll the fleet, do what it
/// says (start a process, write to one, kill one, hand out an event), otherwise
/// wait for any child's output until the fleet's deadline. Each child has the
/// threads [`ExtensionProcess`](super::ExtensionProcess) gives one (stdout and
/// stderr readers, a stdin writer), in its own process group, and a forwarding
/// thread that tags its output with its [`ProcessKey`] into the one channel the
/// loop waits on. Output of a process that has ended still comes tagged with its
/// own key, and the fleet ignores it.
///
/// ```no_run
/// use dhara_protocol::driver::{FleetProcesses, Stderr};
/// use dhara_protocol::fleet::{Config, ExtensionConfig};
/// use dhara_protocol::json::Value;
/// use std::process::Command;
///
/// let mut fleet = FleetProcesses::new(Config::default(), Stderr::Discard);
/// fleet.add("web", ExtensionConfig::default(), Box::new(|| Command::new("web-tools")))?;
/// fleet.add("files", ExtensionConfig::default(), Box::new(|| {
///     let mut command = Command::new("python3");
///     command.arg("files.py");
///     command
/// }))?;
/// fleet.wait_ready(std::time::Duration::from_secs(10));
/// for tool in fleet.fleet().tools() {
///     println!("{} ({})", tool.offered, tool.extension_name);
/// }
/// let result = fleet.call("files__read", Value::Null, |p| eprintln!("{}", p.message))?;
/// println!("{result:?}");
/// fleet.shutdown();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct FleetProcesses {
    fleet: Fleet,
    clock: Clock,
    commands: Vec<MakeCommand>,
    children: BTreeMap<ProcessKey, Running>,
    from_children: Receiver<(ProcessKey, FromChild)>,
    to_loop: SyncSender<(ProcessKey, FromChild)>,
    stderr: Stderr,
    stderr_of: Vec<StderrOf>,
    deferred: VecDeque<Event>,
    closed: bool,
}

impl FleetProcesses {
    /// A fleet with no extensions yet; `stderr` says what becomes of the children's
    /// stderr (with [`Stderr::Prefixed`], each line is printed after the prefix and
    /// `[<extension>] `).
    pub fn new(config: Config, stderr: Stderr) -> FleetProcesses {
        let (to_loop, from_children) = mpsc::sync_channel(CHANNEL_CHUNKS);
        FleetProcesses {
            fleet: Fleet::new(config),
            clock: Clock::new(),
            commands: Vec::new(),
            children: BTreeMap::new(),
            from_children,
            to_loop,
            stderr,
            stderr_of: Vec::new(),
            deferred: VecDeque::new(),
            closed: false,
        }
    }

    /// Adds an extension; `command` makes the command of each of its processes.
    /// The first is started by the next run of the loop.
    pub fn add(
        &mut self,
        name: &str,
        config: ExtensionConfig,
        command: MakeCommand,
    ) -> Result<ExtensionKey, UsageError> {
        let key = self.fleet.add(name, config)?;
        self.commands.push(command);
        self.stderr_of.push(StderrOf::default());
        Ok(key)
    }

    /// The fleet, to read its registry and the state of each extension.
    pub fn fleet(&self) -> &Fleet {
        &self.fleet
    }

    /// The fleet, to issue commands directly; [`now`](FleetProcesses::now) gives the
    /// time to pass. Events then come from [`next_event`](FleetProcesses::next_event).
    pub fn fleet_mut(&mut self) -> &mut Fleet {
        &mut self.fleet
    }

    /// The current time on this driver's clock.
    pub fn now(&self) -> Instant {
        self.clock.now()
    }

    /// The last bytes of an extension's stderr, with [`Stderr::Captured`] (lossy
    /// UTF-8), over all its processes.
    pub fn captured_stderr(&self, extension: ExtensionKey) -> String {
        let Some(of) = self.stderr_of.get(extension.index()) else {
            return String::new();
        };
        let bytes: Vec<u8> = of.captured.iter().copied().collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// The pid of an extension's running process.
    pub fn pid(&self, extension: ExtensionKey) -> Option<u32> {
        let process = self.fleet.process(extension)?;
        self.children.get(&process).map(|c| c.child.id())
    }

    /// The next event, running the loop until there is one; `None` after
    /// [`Event::Closed`].
    pub fn next_event(&mut self) -> Option<Event> {
        match self.deferred.pop_front() {
            Some(event) => Some(event),
            None => self.run_until_event(None),
        }
    }

    /// Like [`next_event`](FleetProcesses::next_event), but waits at most `max_wait`
    /// (zero: only what is ready now). `None` when nothing happened, or after
    /// `Closed`.
    pub fn next_event_timeout(&mut self, max_wait: Duration) -> Option<Event> {
        match self.deferred.pop_front() {
            Some(event) => Some(event),
            None => {
                let give_up = self.clock.now().saturating_add(max_wait);
                self.run_until_event(Some(give_up))
            }
        }
    }

    /// `true` once the fleet reported [`Event::Closed`].
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Runs the loop until every extension is ready or failed, or `max_wait` has
    /// passed; the events meanwhile are kept for
    /// [`next_event`](FleetProcesses::next_event). Returns `true` when all are ready.
    pub fn wait_ready(&mut self, max_wait: Duration) -> bool {
        let give_up = self.clock.now().saturating_add(max_wait);
        let mut set_aside = VecDeque::new();
        let all_ready = loop {
            let settled = self.fleet.extensions().all(|e| {
                matches!(
                    self.fleet.status(e),
                    Some(Status::Running { ready: true, .. } | Status::Failed(_))
                )
            });
            if settled {
                break self
                    .fleet
                    .extensions()
                    .all(|e| !matches!(self.fleet.status(e), Some(Status::Failed(_))));
            }
            match self.run_until_event(Some(give_up)) {
                Some(event) => keep(&mut set_aside, self.deferred.len(), event),
                None => break false,
            }
        };
        self.deferred.append(&mut set_aside);
        all_ready
    }

    /// Calls a tool by name and waits for its result, handing its progress to
    /// `on_progress`. Other events meanwhile are kept for `next_event`.
    pub fn call(
        &mut self,
        tool_name: &str,
        input: Value,
        on_progress: impl FnMut(&Progress),
    ) -> Result<ToolResult, FleetError> {
        self.call_with(tool_name, input, CallOptions::default(), on_progress)
    }

    /// [`call`](FleetProcesses::call) with per-call options.
    pub fn call_with(
        &mut self,
        tool_name: &str,
        input: Value,
        options: CallOptions,
        mut on_progress: impl FnMut(&Progress),
    ) -> Result<ToolResult, FleetError> {
        let now = self.now();
        let call = self
            .fleet
            .execute_with(now, tool_name, input, options)
            .map_err(FleetError::Usage)?;
        self.wait_for(call, &mut on_progress)
    }

    /// Runs the loop until `call` ends.
    pub fn wait_for(
        &mut self,
        call: CallHandle,
        on_progress: &mut dyn FnMut(&Progress),
    ) -> Result<ToolResult, FleetError> {
        let mut set_aside = VecDeque::new();
        let outcome = loop {
            let Some(event) = self.run_until_event(None) else {
                break Err(FleetError::Closed);
            };
            match event {
                Event::CallEnded { call: c, result } if c == call => {
                    break result.map_err(FleetError::Call);
                }
                Event::Progress {
                    call: Some(c),
                    progress,
                    ..
                } if c == call => on_progress(&progress),
                event => keep(&mut set_aside, self.deferred.len(), event),
            }
        };
        self.deferred.append(&mut set_aside);
        outcome
    }

    /// Shuts every extension down and runs until the fleet has closed.
    pub fn shutdown(&mut self) {
        let now = self.now();
        // An error only says it is on its way already.
        let _ = self.fleet.shutdown(now);
        while self.next_event().is_some() {}
    }

    /// The loop: poll the fleet and do what it says until it gives an event, or
    /// `give_up` passes.
    fn run_until_event(&mut self, give_up: Option<Instant>) -> Option<Event> {
        loop {
            match self.fleet.poll_output() {
                Output::Start(process) => self.start(process),
                Output::Transmit { process, bytes } => {
                    if let Some(stdin) = self.children.get(&process).and_then(|c| c.stdin.as_ref())
                    {
                        // A failed write means the child is gone; its exit will come.
                        let _ = stdin.send(bytes.to_vec());
                    }
                }
                Output::CloseStdin { process } => {
                    // The writer thread writes what it was sent, then drops the pipe.
                    if let Some(running) = self.children.get_mut(&process) {
                        running.stdin = None;
                    }
                }
                Output::Kill { process } => self.kill(process),
                Output::Event(event) => {
                    if event == Event::Closed {
                        self.closed = true;
                    }
                    return Some(event);
                }
                Output::Wait(deadline) => {
                    if self.closed || !self.wait(deadline, give_up) {
                        return None;
                    }
                }
            }
        }
    }

    /// Starts a process as the fleet asked, and reports how that went.
    fn start(&mut self, process: ProcessKey) {
        let spawned = match self.commands.get_mut(process.extension().index()) {
            Some(make) => spawn(make(), process, &self.to_loop),
            None => Err(io::Error::other("no command for this extension")),
        };
        let now = self.clock.now();
        match spawned {
            Ok(running) => {
                self.children.insert(process, running);
                self.fleet.handle_input(now, Input::Started(process));
            }
            Err(error) => {
                let reason = error.to_string();
                let input = Input::StartFailed {
                    process,
                    reason: &reason,
                };
                self.fleet.handle_input(now, input);
            }
        }
    }

    /// Waits for any child's output until `deadline`, and feeds what happened to the
    /// fleet. `true` after feeding one input, `false` when `give_up` passed first.
    fn wait(&mut self, deadline: Option<Instant>, give_up: Option<Instant>) -> bool {
        loop {
            let now = self.clock.now();
            if deadline.is_some_and(|d| now >= d) {
                self.fleet.handle_input(now, Input::Timeout);
                return true;
            }
            if self.check_exits(now) {
                return true;
            }
            if give_up.is_some_and(|g| now >= g) {
                return false;
            }
            let wake_at = [deadline, give_up].into_iter().flatten().min();
            let until = wake_at.map_or(EXIT_POLL, |t| t.saturating_duration_since(now));
            match self.from_children.recv_timeout(until.min(EXIT_POLL)) {
                Ok((process, FromChild::Stdout(bytes))) => {
                    let now = self.clock.now();
                    let input = host::Input::Stdout(&bytes);
                    self.fleet
                        .handle_input(now, Input::Process { process, input });
                    return true;
                }
                Ok((process, FromChild::StdoutClosed)) => {
                    if let Some(running) = self.children.get_mut(&process) {
                        running.stdout_open = false;
                    }
                    let now = self.clock.now();
                    let input = host::Input::StdoutClosed;
                    self.fleet
                        .handle_input(now, Input::Process { process, input });
                    return true;
                }
                Ok((process, FromChild::Stderr(bytes))) => self.handle_stderr(process, &bytes),
                Ok((process, FromChild::StderrClosed)) => self.finish_stderr(process),
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {}
            }
        }
    }

    /// Notices the exits of children and reports one whose stdout has ended or has
    /// had [`STDOUT_DRAIN`] to end. `true` when it fed the fleet.
    fn check_exits(&mut self, now: Instant) -> bool {
        let mut exited = None;
        for (process, running) in &mut self.children {
            if running.exit_seen.is_none() {
                if let Ok(Some(status)) = running.child.try_wait() {
                    running.exit_seen = Some((now, status));
                }
            }
            if let Some((seen, status)) = running.exit_seen {
                if !running.stdout_open || now.saturating_duration_since(seen) >= STDOUT_DRAIN {
                    exited = Some((*process, status.code()));
                    break;
                }
            }
        }
        match exited {
            Some((process, code)) => {
                self.report_exit(process, code);
                true
            }
            None => false,
        }
    }

    fn report_exit(&mut self, process: ProcessKey, code: Option<i32>) {
        // Dropping the stdin sender ends its writer thread.
        self.children.remove(&process);
        let now = self.clock.now();
        let input = host::Input::Exited { code };
        self.fleet
            .handle_input(now, Input::Process { process, input });
    }

    /// Kills a child's process group, waits for it, and reports the exit.
    fn kill(&mut self, process: ProcessKey) {
        let Some(running) = self.children.get_mut(&process) else {
            return;
        };
        kill_group(&mut running.child, running.group);
        let code = match running.exit_seen {
            Some((_, status)) => status.code(),
            None => running.child.wait().ok().and_then(|s| s.code()),
        };
        self.report_exit(process, code);
    }

    fn handle_stderr(&mut self, process: ProcessKey, bytes: &[u8]) {
        let extension = process.extension();
        let (Some(name), Some(of)) = (
            self.fleet.name(extension),
            self.stderr_of.get_mut(extension.index()),
        ) else {
            debug_assert!(false, "stderr of an extension the fleet does not know");
            return;
        };
        match &self.stderr {
            Stderr::Prefixed(prefix) => {
                of.line
                    .push(bytes, &mut |line| print_stderr(prefix, name, line));
            }
            Stderr::Captured { limit } => {
                of.captured.extend(bytes);
                let excess = of.captured.len().saturating_sub(*limit);
                of.captured.drain(..excess);
            }
            _ => {}
        }
    }

    fn finish_stderr(&mut self, process: ProcessKey) {
        let extension = process.extension();
        let name = self.fleet.name(extension);
        debug_assert!(
            name.is_some(),
            "stderr of an extension the fleet does not know"
        );
        if let (Some(name), Some(of), Stderr::Prefixed(prefix)) = (
            name,
            self.stderr_of.get_mut(extension.index()),
            &self.stderr,
        ) {
            of.line.finish(&mut |line| print_stderr(prefix, name, line));
        }
    }
}

/// Keeps an event set aside, within [`DEFERRED_MAX`] (call endings and `Closed`
/// always).
fn keep(set_aside: &mut VecDeque<Event>, deferred: usize, event: Event) {
    let essential = matches!(event, Event::CallEnded { .. } | Event::Closed);
    if essential || set_aside.len() + deferred < DEFERRED_MAX {
        set_aside.push_back(event);
    }
}

fn print_stderr(prefix: &str, extension: &str, line: &[u8]) {
    let mut out = io::stderr().lock();
    let _ = write!(out, "{prefix}[{extension}] ");
    let _ = out.write_all(line);
    let _ = out.write_all(b"\n");
}

/// Starts `command` with piped stdio in its own process group, its pipe threads,
/// and the thread that forwards its output, tagged, to the loop.
fn spawn(
    mut command: Command,
    process: ProcessKey,
    to_loop: &SyncSender<(ProcessKey, FromChild)>,
) -> io::Result<Running> {
    let (mut child, group) = spawn_piped(&mut command)?;
    let (to_forwarder, from_child) = mpsc::sync_channel(CHANNEL_CHUNKS);
    let threads = start_threads(&mut child, &to_forwarder).and_then(|stdin| {
        // The readers hold the only senders now: the forwarder ends with them.
        drop(to_forwarder);
        let to_loop = to_loop.clone();
        thread::Builder::new()
            .name(String::from("dhara-forwarder"))
            .spawn(move || {
                for message in from_child {
                    if to_loop.send((process, message)).is_err() {
                        return;
                    }
                }
            })?;
        Ok(stdin)
    });
    match threads {
        Ok(stdin) => Ok(Running {
            child,
            group,
            stdin: Some(stdin),
            stdout_open: true,
            exit_seen: None,
        }),
        Err(e) => {
            // No threads, no driver: leave no process behind either.
            kill_group(&mut child, group);
            let _ = child.wait();
            Err(e)
        }
    }
}

impl Drop for FleetProcesses {
    /// Children still running when the driver is dropped are killed with their
    /// groups, so no process is left behind.
    fn drop(&mut self) {
        for running in self.children.values_mut() {
            running.stdin = None;
            if let Ok(None) = running.child.try_wait() {
                kill_group(&mut running.child, running.group);
            }
            let _ = running.child.wait();
        }
    }
}

impl core::fmt::Debug for FleetProcesses {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FleetProcesses")
            .field("children", &self.children.len())
            .field("closed", &self.closed)
            .finish_non_exhaustive()
    }
}
