//! Many extensions behind one tool registry, with restarts: the layer above
//! [`host`].
//!
//! A [`Fleet`] holds several extensions, each by name. Each process of an extension
//! gets its own [`host::Core`]; the fleet routes calls by tool name to the extension
//! that offers it, keeps the one registry of every extension's tools, and starts an
//! extension again when its process ends. Like the Core it is a pure state machine:
//! time and inputs in, outputs out. It never spawns, never reads a clock: starting a
//! process, killing one and waiting are outputs the driver carries out.
//!
//! The module's parts:
//!
//! | file | what it holds |
//! |---|---|
//! | `mod.rs` | [`Fleet`], its commands and its output loop; [`Config`], [`ExtensionConfig`] |
//! | `events.rs` | the keys, [`Input`], [`Output`], [`Event`], the errors, [`Status`] |
//! | `registry.rs` | the tool registry: bare, qualified and sanitized names, resolution |
//! | `restart.rs` | [`RestartPolicy`]: when to restart, the backoff, the crash-loop breaker |
//!
//! # The rules it follows
//!
//! * **Routing.** [`execute`](Fleet::execute) resolves a tool name in the registry
//!   (see [Names](self#names) below) and sends `tools/execute` with the tool's
//!   real name to the extension that offers it. A bare name two extensions offer is
//!   refused with [`UsageError::AmbiguousTool`], listing the qualified names.
//! * **Processes.** Every start of an extension is a new [`ProcessKey`], and every
//!   process has its own Core, dropped when the process ends. Inputs name the process
//!   they are about; an input about a process that is no longer the extension's
//!   current one is ignored. So a reply from an old process never reaches a call made
//!   on the new one: the call was made on a Core that no longer exists.
//! * **Calls.** A [`CallHandle`] is the fleet's own, counted from 1 across all
//!   processes and never reused; each Core numbers its JSON-RPC ids from 1 as always,
//!   and the fleet maps one to the other per process. Every handle ends exactly once,
//!   with [`Event::CallEnded`].
//! * **Restarts.** When a process ends (its exit, a kill after a timeout, a failed
//!   start, a failed `initialize`), its calls in flight end as the Core ends them
//!   ([`host::CallError::ExtensionExited`] and the like), and its tools stay in the
//!   registry. [`Event::Stopped`] tells what comes next, by the extension's
//!   [`RestartPolicy`]: a new [`Output::Start`] at once or on the next call, after a
//!   backoff; or, when the crash-loop breaker trips, the extension is failed and its
//!   tools are refused with [`UsageError::ExtensionFailed`], which says why and since
//!   when. A new process is initialized again; calls that waited for it are sent once
//!   it is ready. The first start of every extension is at once.
//! * **Bounded.** At most [`ExtensionConfig::max_in_flight`] calls are in flight per
//!   extension and [`Config::max_in_flight`] in all. A call that cannot be sent now
//!   (the limits, or its extension is starting, restarting or initializing) waits, in
//!   the order calls came, in one queue of at most [`Config::max_queued`] calls; past
//!   that, `execute` is refused with [`UsageError::QueueFull`]. A call waits at most
//!   its timeout, then ends with [`CallError::QueueTimeout`] (it was never sent, so
//!   no extension is shut down for it); once sent, it has its full timeout again.
//! * **Time.** As for the Core: every command and input carries `now`, timers (the
//!   Cores', the backoff, the queue's) fire in `poll_output` once their instant is
//!   reached, never before, and [`Output::Wait`] names the earliest.
//! * **Output.** [`Output::Transmit`] bytes are copied once from the process's Core
//!   into the fleet's own buffer, which the next `poll_output` reuses.
//!
//! # Names
//!
//! Every tool is addressable as `<extension>__<tool>`, its qualified name, and by
//! its bare name while no other extension offers the same. A name that LLM APIs
//! reject (not `^[a-zA-Z0-9_-]{1,64}$`) is offered under the alias [`alias`] gives;
//! `tools/execute` still carries the real name. Extension names follow
//! [`valid_extension_name`]. [`Fleet::tools`] lists every tool with its names, and
//! [`Event::ToolsChanged`] tells every change of the registry.

mod events;
mod registry;
mod restart;

use alloc::boxed::Box;
use alloc::collections::{BTreeMap, VecDeque};
use alloc::string::String;
use alloc::vec::Vec;

use crate::host::{self, CallId, CallOptions, Core, Reply, State};
use crate::json::Value;
use crate::message::{InitializeParams, Tool};
use crate::time::Instant;

pub use events::{
    CallError, CallHandle, Event, ExtensionKey, Failure, Input, Next, Output, ProcessKey, Status,
    Stop, UsageError,
};
pub use registry::{MAX_NAME_BYTES, alias, is_offerable, valid_extension_name};
use registry::{Registry, Unresolved};
use restart::{After, History};
pub use restart::{RestartPolicy, RestartWhen};

/// Settings of a [`Fleet`] as a whole.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Config {
    /// The most calls in flight over all extensions. Default 1024.
    pub max_in_flight: usize,
    /// The most calls waiting to be sent; past it `execute` is refused with
    /// [`UsageError::QueueFull`]. Default 256.
    pub max_queued: usize,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            max_in_flight: 1024,
            max_queued: 256,
        }
    }
}

impl Config {
    /// Sets [`max_in_flight`](Config::max_in_flight).
    #[must_use]
    pub fn max_in_flight(mut self, max_in_flight: usize) -> Config {
        self.max_in_flight = max_in_flight;
        self
    }

    /// Sets [`max_queued`](Config::max_queued).
    #[must_use]
    pub fn max_queued(mut self, max_queued: usize) -> Config {
        self.max_queued = max_queued;
        self
    }
}

/// Settings of one extension.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExtensionConfig {
    /// Its Cores' configuration: timeouts, grace, line limit, input validation. Its
    /// `max_in_flight` is set from [`max_in_flight`](ExtensionConfig::max_in_flight).
    pub host: host::Config,
    /// When and how it is restarted.
    pub restart: RestartPolicy,
    /// The most calls in flight to it at once. Default 64.
    pub max_in_flight: usize,
    /// The `cwd` sent in `initialize`. Default `"."`.
    pub cwd: String,
}

impl Default for ExtensionConfig {
    fn default() -> ExtensionConfig {
        ExtensionConfig {
            host: host::Config::default(),
            restart: RestartPolicy::default(),
            max_in_flight: 64,
            cwd: String::from("."),
        }
    }
}

impl ExtensionConfig {
    /// Sets [`host`](ExtensionConfig::host).
    #[must_use]
    pub fn host(mut self, host: host::Config) -> ExtensionConfig {
        self.host = host;
        self
    }

    /// Sets [`restart`](ExtensionConfig::restart).
    #[must_use]
    pub fn restart(mut self, restart: RestartPolicy) -> ExtensionConfig {
        self.restart = restart;
        self
    }

    /// Sets [`max_in_flight`](ExtensionConfig::max_in_flight).
    #[must_use]
    pub fn max_in_flight(mut self, max_in_flight: usize) -> ExtensionConfig {
        self.max_in_flight = max_in_flight;
        self
    }

    /// Sets [`cwd`](ExtensionConfig::cwd).
    #[must_use]
    pub fn cwd(mut self, cwd: impl Into<String>) -> ExtensionConfig {
        self.cwd = cwd.into();
        self
    }
}

/// One tool in the registry, from [`Fleet::tools`] or [`Fleet::resolve`].
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct RegisteredTool<'a> {
    /// The extension that offers it.
    pub extension: ExtensionKey,
    /// That extension's name.
    pub extension_name: &'a str,
    /// The tool as the extension declared it; `tool.name` is its real name, the one
    /// on the wire.
    pub tool: &'a Tool,
    /// `<extension>__<tool>`, made offerable by [`alias`].
    pub qualified: &'a str,
    /// The name to offer it under: its bare name ([`alias`] of the real name) while
    /// that is unique, else its qualified name.
    pub offered: &'a str,
}

/// Many extensions behind one tool registry, with restarts.
///
/// A driver is one loop, as for the Core: give the fleet what happened with
/// [`handle_input`](Fleet::handle_input), then call [`poll_output`](Fleet::poll_output)
/// until it says [`Output::Wait`]; start and kill processes when told, write what it
/// transmits, and report each process's stdout and exit with its [`ProcessKey`].
/// Here two extensions offer `search`, so the bare name is ambiguous, and the first
/// one crashes and is started again:
///
/// ```
/// use dhara_protocol::fleet::{Config, Event, ExtensionConfig, Fleet, Input, Output, UsageError};
/// use dhara_protocol::host;
/// use dhara_protocol::json::Value;
/// use dhara_protocol::time::Instant;
///
/// /// A scripted extension: what it prints in answer to one line of its stdin.
/// fn answer(name: &str, line: &str) -> String {
///     let id = line.split(r#""id":"#).nth(1).and_then(|s| s.split(',').next()).unwrap_or("0");
///     if line.contains(r#""method":"initialize""#) {
///         format!(
///             r#"{{"jsonrpc":"2.0","id":{id},"result":{{"name":"{name}","version":"1","tools":[{{"name":"search"}}]}}}}
/// "#
///         )
///     } else if line.contains("tools/execute") {
///         format!(
///             r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{name}"}}]}}}}
/// "#
///         )
///     } else {
///         String::new()
///     }
/// }
///
/// let mut fleet = Fleet::new(Config::default());
/// let web = fleet.add("web", ExtensionConfig::default())?;
/// fleet.add("files", ExtensionConfig::default())?;
/// let now = Instant::ZERO;
///
/// let mut stdout = Vec::new(); // (process, bytes) printed, not yet read
/// let mut crashed = false;
/// let mut answers = Vec::new();
/// loop {
///     match fleet.poll_output() {
///         Output::Start(process) => {
///             stdout.push((process, None)); // spawn `fleet.name(process.extension())` here
///         }
///         Output::Transmit { process, bytes } => {
///             let line = String::from_utf8_lossy(bytes).into_owned();
///             let name = fleet.name(process.extension()).unwrap_or_default().to_owned();
///             stdout.push((process, Some(answer(&name, &line))));
///         }
///         Output::Event(Event::Ready { process, .. }) if process.extension() == web => {
///             if crashed {
///                 // The new process serves the next call.
///                 fleet.execute(now, "web__search", Value::Null)?;
///             }
///         }
///         Output::Event(Event::Ready { .. }) => {
///             let refused = fleet.execute(now, "search", Value::Null).unwrap_err();
///             assert!(matches!(refused, UsageError::AmbiguousTool { .. }));
///             assert_eq!(
///                 refused.to_string(),
///                 "tool name 'search' is ambiguous: use one of 'web__search', 'files__search'"
///             );
///             fleet.execute(now, "files__search", Value::Null)?;
///         }
///         Output::Event(Event::CallEnded { result, .. }) => {
///             answers.push(result.map(|r| format!("{:?}", r.content[0])));
///             if !crashed {
///                 crashed = true; // `web` crashes: its exit is reported
///                 let process = fleet.process(web).unwrap();
///                 fleet.handle_input(now, Input::Process { process, input: host::Input::StdoutClosed });
///                 fleet.handle_input(now, Input::Process { process, input: host::Input::Exited { code: Some(1) } });
///             } else {
///                 break;
///             }
///         }
///         Output::Event(_) | Output::Kill { .. } => {}
///         Output::Wait(_) => {
///             // Hand in what the processes printed, or that they started.
///             for (process, bytes) in std::mem::take(&mut stdout) {
///                 match bytes {
///                     None => fleet.handle_input(now, Input::Started(process)),
///                     Some(b) => fleet.handle_input(now, Input::Process { process, input: host::Input::Stdout(b.as_bytes()) }),
///                 }
///             }
///         }
///         _ => {}
///     }
/// }
/// assert_eq!(answers.len(), 2);
/// assert!(answers[0].as_ref().unwrap().contains("files"));
/// assert!(answers[1].as_ref().unwrap().contains("web"));
/// assert_eq!(fleet.process(web).map(|p| p.start()), Some(2));
/// # Ok::<(), UsageError>(())
/// ```
#[derive(Debug)]
pub struct Fleet {
    config: Config,
    now: Instant,
    members: Vec<Member>,
    registry: Registry,
    calls: BTreeMap<CallHandle, Call>,
    /// The calls waiting to be sent, in the order they came.
    queue: VecDeque<CallHandle>,
    /// How many calls are in flight, over all extensions.
    in_flight: usize,
    next_handle: u64,
    events: VecDeque<Event>,
    starts: VecDeque<ProcessKey>,
    kills: VecDeque<ProcessKey>,
    /// The bytes of the last [`Output::Transmit`].
    out: Vec<u8>,
    shutting_down: bool,
    closed: bool,
}

/// One extension.
#[derive(Debug)]
struct Member {
    name: String,
    config: ExtensionConfig,
    /// How many processes were asked for.
    starts: u64,
    phase: Phase,
    history: History,
    /// How many of its calls wait in the queue.
    queued: usize,
    /// Start it even if its policy waits for a call: the first start, and a
    /// [`Fleet::restart`].
    start_anyway: bool,
}

#[derive(Debug)]
enum Phase {
    /// No process; the next may be asked for from `not_before`.
    Stopped {
        not_before: Instant,
    },
    /// [`Output::Start`] was given; the answer has not come.
    Starting(ProcessKey),
    Running(Box<Process>),
    Failed(Failure),
    /// The fleet shut down.
    Finished,
}

/// A running process and its Core.
#[derive(Debug)]
struct Process {
    key: ProcessKey,
    core: Core,
    /// The `initialize` call, while it is in flight.
    initialize: Option<CallId>,
    ready: bool,
    /// The fleet's calls in flight on this process, by the Core's id, in the order
    /// they were sent.
    sent: Vec<(CallId, CallHandle)>,
    /// The Core said `Wait` and nothing has happened to it since.
    idle: bool,
    /// The Core asked for this process to be killed (the grace after `shutdown`
    /// ran out).
    kill_asked: bool,
}

/// One call the fleet accepted.
#[derive(Debug)]
struct Call {
    extension: ExtensionKey,
    /// The tool's real name.
    tool: String,
    state: CallState,
}

#[derive(Debug)]
enum CallState {
    Waiting {
        input: Value,
        options: CallOptions,
        until: Instant,
    },
    Sent {
        process: ProcessKey,
    },
}

/// What one poll of a Core gave, owned.
enum Polled {
    Transmit(ProcessKey),
    Event(usize, host::Event),
    Kill(ProcessKey),
    CloseStdin(ProcessKey),
}

impl Fleet {
    /// A fleet of no extensions yet.
    pub fn new(config: Config) -> Fleet {
        Fleet {
            config,
            now: Instant::ZERO,
            members: Vec::new(),
            registry: Registry::default(),
            calls: BTreeMap::new(),
            queue: VecDeque::new(),
            in_flight: 0,
            next_handle: 1,
            events: VecDeque::new(),
            starts: VecDeque::new(),
            kills: VecDeque::new(),
            out: Vec::new(),
            shutting_down: false,
            closed: false,
        }
    }

    // ---- Commands -----------------------------------------------------------------
    //
    // Each checks everything first and changes nothing when it returns an error.

    /// Adds an extension named `name` (see [`valid_extension_name`]); its first
    /// process is asked for with the next poll.
    pub fn add(&mut self, name: &str, config: ExtensionConfig) -> Result<ExtensionKey, UsageError> {
        if self.shutting_down {
            return Err(UsageError::ShuttingDown);
        }
        if !valid_extension_name(name) || self.key(name).is_some() {
            return Err(UsageError::BadExtensionName {
                name: String::from(name),
            });
        }
        let key = ExtensionKey::new(self.members.len());
        self.members.push(Member {
            name: String::from(name),
            config,
            starts: 0,
            phase: Phase::Stopped {
                not_before: Instant::ZERO,
            },
            history: History::default(),
            queued: 0,
            start_anyway: true,
        });
        Ok(key)
    }

    /// Calls a tool by name with its extension's configured timeout.
    pub fn execute(
        &mut self,
        now: Instant,
        tool_name: &str,
        input: Value,
    ) -> Result<CallHandle, UsageError> {
        self.execute_with(now, tool_name, input, CallOptions::default())
    }

    /// Calls a tool by name with per-call options: sent at once when its extension is
    /// ready and the limits allow, otherwise queued (its input checked against the
    /// tool's schema first, when the extension's Cores check inputs).
    pub fn execute_with(
        &mut self,
        now: Instant,
        tool_name: &str,
        input: Value,
        options: CallOptions,
    ) -> Result<CallHandle, UsageError> {
        if self.shutting_down {
            return Err(UsageError::ShuttingDown);
        }
        let entry = self.registry.resolve(tool_name).map_err(|e| match e {
            Unresolved::Unknown => UsageError::UnknownTool {
                name: String::from(tool_name),
            },
            Unresolved::Ambiguous(candidates) => UsageError::AmbiguousTool {
                name: String::from(tool_name),
                candidates,
            },
        })?;
        let extension = entry.extension;
        let tool = entry.tool.name.clone();
        let Some(member) = self.members.get(extension.index()) else {
            debug_assert!(false, "a registry entry of no extension");
            return Err(UsageError::UnknownExtension);
        };
        if let Phase::Failed(failure) = &member.phase {
            return Err(UsageError::ExtensionFailed {
                extension: member.name.clone(),
                failure: failure.clone(),
            });
        }
        let (validate, timeout) = (
            member.config.host.validate_input,
            member.config.host.timeout,
        );
        let now = self.now.max(now);
        let handle = CallHandle::new(self.next_handle);
        if self.can_send(extension) {
            if let Some(sent) = self.send(now, extension, handle, &tool, &input, options) {
                sent.map_err(UsageError::Refused)?;
                self.observe(now);
                self.next_handle += 1;
                return Ok(handle);
            }
        }
        if validate {
            let declared = self
                .registry
                .entries()
                .iter()
                .find(|e| e.extension == extension && e.tool.name == tool);
            if let Some(Err(error)) = declared.map(|e| e.tool.check_input(&input)) {
                return Err(UsageError::Refused(host::UsageError::InvalidInput {
                    tool,
                    error,
                }));
            }
        }
        if self.queue.len() >= self.config.max_queued {
            return Err(UsageError::QueueFull {
                limit: self.config.max_queued,
            });
        }
        self.observe(now);
        if let Some(member) = self.members.get_mut(extension.index()) {
            member.queued += 1;
        }
        self.next_handle += 1;
        self.queue.push_back(handle);
        let state = CallState::Waiting {
            input,
            options,
            until: now + options.timeout.unwrap_or(timeout),
        };
        self.calls.insert(
            handle,
            Call {
                extension,
                tool,
                state,
            },
        );
        Ok(handle)
    }

    /// Ends a call: one waiting ends with [`CallError::Cancelled`], one in flight as
    /// its Core cancels it (a reply that comes later is reported as late). Its
    /// `CallEnded` event comes from the next `poll_output`.
    pub fn cancel(&mut self, now: Instant, call: CallHandle) -> Result<(), UsageError> {
        let Some(state) = self.calls.get(&call).map(|c| &c.state) else {
            return Err(UsageError::UnknownCall { call });
        };
        let sent_on = match state {
            CallState::Waiting { .. } => None,
            CallState::Sent { process } => Some(*process),
        };
        self.observe(now);
        match sent_on {
            None => self.end(call, Err(CallError::Cancelled)),
            Some(process) => {
                let found = self.process_mut(process).and_then(|p| {
                    p.idle = false;
                    let id = p.sent.iter().find(|(_, h)| *h == call).map(|(id, _)| *id)?;
                    Some(p.core.cancel(now, id))
                });
                debug_assert!(matches!(found, Some(Ok(()))), "a sent call its Core lost");
                if !matches!(found, Some(Ok(()))) {
                    self.end(call, Err(CallError::Host(host::CallError::Cancelled)));
                }
            }
        }
        Ok(())
    }

    /// Asks for a new process of an extension that is failed or stopped, at once and
    /// whatever its policy, with its exits forgotten.
    pub fn restart(&mut self, now: Instant, extension: ExtensionKey) -> Result<(), UsageError> {
        if self.shutting_down {
            return Err(UsageError::ShuttingDown);
        }
        let member = self
            .members
            .get_mut(extension.index())
            .ok_or(UsageError::UnknownExtension)?;
        match member.phase {
            Phase::Failed(_) | Phase::Stopped { .. } => {}
            _ => return Err(UsageError::AlreadyRunning),
        }
        member.history.clear();
        member.start_anyway = true;
        member.phase = Phase::Stopped { not_before: now };
        self.observe(now);
        Ok(())
    }

    /// Shuts every extension down: calls waiting end with [`CallError::ShuttingDown`],
    /// calls in flight go on until their processes exit, and nothing is started
    /// again. [`Event::Closed`] comes when all is over.
    pub fn shutdown(&mut self, now: Instant) -> Result<(), UsageError> {
        if self.shutting_down {
            return Err(UsageError::ShuttingDown);
        }
        self.observe(now);
        self.shutting_down = true;
        while let Some(&call) = self.queue.front() {
            self.end(call, Err(CallError::ShuttingDown));
        }
        for member in &mut self.members {
            match &mut member.phase {
                Phase::Running(process) => {
                    process.idle = false;
                    // An error only says it is on its way already.
                    let _ = process.core.shutdown(now);
                }
                Phase::Starting(_) => {}
                Phase::Stopped { .. } | Phase::Failed(_) | Phase::Finished => {
                    member.phase = Phase::Finished;
                }
            }
        }
        Ok(())
    }

    // ---- Input --------------------------------------------------------------------

    /// Tells the fleet what happened at `now`. Then poll until [`Output::Wait`].
    pub fn handle_input(&mut self, now: Instant, input: Input<'_>) {
        self.observe(now);
        match input {
            Input::Started(key) => self.started(key),
            Input::StartFailed { process, reason } => {
                if self.is_starting(process) {
                    let how = Stop::StartFailed {
                        reason: String::from(reason),
                    };
                    self.stopped(process, how);
                }
            }
            Input::Process { process, input } => {
                if let Some(p) = self.process_mut(process) {
                    p.core.handle_input(now, input);
                    p.idle = false;
                }
            }
            Input::Timeout => {}
        }
    }

    fn started(&mut self, key: ProcessKey) {
        if !self.is_starting(key) {
            return;
        }
        let now = self.now;
        let shutting_down = self.shutting_down;
        let Some(member) = self.members.get_mut(key.extension().index()) else {
            return;
        };
        let max_in_flight = member.config.max_in_flight.saturating_add(1);
        let mut core = Core::new(member.config.host.clone().max_in_flight(max_in_flight));
        let initialize = match shutting_down {
            // Started as the fleet shut down: it is stopped at once.
            true => {
                let _ = core.shutdown(now);
                None
            }
            false => core
                .initialize(now, InitializeParams::new(member.config.cwd.clone()))
                .ok(),
        };
        member.phase = Phase::Running(Box::new(Process {
            key,
            core,
            initialize,
            ready: false,
            sent: Vec::new(),
            idle: false,
            kill_asked: false,
        }));
    }

    // ---- Output -------------------------------------------------------------------

    /// What to do next. Call it until it returns [`Output::Wait`].
    pub fn poll_output(&mut self) -> Output<'_> {
        loop {
            if let Some(event) = self.events.pop_front() {
                return Output::Event(event);
            }
            if let Some(process) = self.kills.pop_front() {
                return Output::Kill { process };
            }
            if let Some(process) = self.starts.pop_front() {
                return Output::Start(process);
            }
            if self.step() {
                continue;
            }
            match self.poll_cores() {
                Some(Polled::Transmit(process)) => {
                    return Output::Transmit {
                        process,
                        bytes: &self.out,
                    };
                }
                Some(Polled::Event(index, event)) => self.handle_core_event(index, event),
                Some(Polled::Kill(process)) => return Output::Kill { process },
                Some(Polled::CloseStdin(process)) => return Output::CloseStdin { process },
                None => return Output::Wait(self.next_timer()),
            }
        }
    }

    /// Does the fleet's own next piece of work, if any: a call that waited too long,
    /// a process to ask for, or the end after shutdown.
    fn step(&mut self) -> bool {
        let now = self.now;
        let expired = self.queue.iter().copied().find(|handle| {
            matches!(
                self.calls.get(handle).map(|c| &c.state),
                Some(CallState::Waiting { until, .. }) if *until <= now
            )
        });
        if let Some(call) = expired {
            self.end(call, Err(CallError::QueueTimeout));
            return true;
        }
        if !self.shutting_down {
            let due = self.members.iter().position(|m| {
                matches!(m.phase, Phase::Stopped { not_before } if not_before <= now)
                    && m.wants_start()
            });
            if let Some(index) = due {
                self.start(index);
                return true;
            }
        } else if !self.closed && self.calls.is_empty() && self.members.iter().all(Member::is_over)
        {
            self.closed = true;
            self.events.push_back(Event::Closed);
            return true;
        }
        false
    }

    fn start(&mut self, index: usize) {
        let Some(member) = self.members.get_mut(index) else {
            return;
        };
        member.starts += 1;
        member.start_anyway = false;
        let key = ProcessKey::new(ExtensionKey::new(index), member.starts);
        member.phase = Phase::Starting(key);
        self.starts.push_back(key);
    }

    /// Polls the Cores that may have something to say, in order, until one does.
    /// Those that wait for a timer already due get `Timeout` first.
    fn poll_cores(&mut self) -> Option<Polled> {
        let now = self.now;
        let out = &mut self.out;
        for (index, member) in self.members.iter_mut().enumerate() {
            let Phase::Running(process) = &mut member.phase else {
                continue;
            };
            if process.idle {
                match process.core.next_timer() {
                    Some(timer) if timer.at <= now => {
                        process.core.handle_input(now, host::Input::Timeout);
                        process.idle = false;
                    }
                    _ => continue,
                }
            }
            loop {
                match process.core.poll_output() {
                    host::Output::Transmit(bytes) => {
                        out.clear();
                        out.extend_from_slice(bytes);
                        return Some(Polled::Transmit(process.key));
                    }
                    host::Output::Event(event) => return Some(Polled::Event(index, event)),
                    host::Output::Kill => {
                        process.kill_asked = true;
                        return Some(Polled::Kill(process.key));
                    }
                    host::Output::CloseStdin => return Some(Polled::CloseStdin(process.key)),
                    host::Output::Wait(Some(at)) if at <= now => {
                        process.core.handle_input(now, host::Input::Timeout);
                    }
                    host::Output::Wait(_) => {
                        process.idle = true;
                        break;
                    }
                }
            }
        }
        None
    }

    /// The earliest timer: a Core's, a restart's backoff, or a waiting call's limit.
    fn next_timer(&self) -> Option<Instant> {
        let cores = self.members.iter().filter_map(|m| match &m.phase {
            Phase::Running(p) => p.core.next_timer().map(|t| t.at),
            Phase::Stopped { not_before } if !self.shutting_down && m.wants_start() => {
                Some(*not_before)
            }
            _ => None,
        });
        let waiting = self
            .queue
            .iter()
            .filter_map(|h| match self.calls.get(h).map(|c| &c.state) {
                Some(CallState::Waiting { until, .. }) => Some(*until),
                _ => None,
            });
        cores.chain(waiting).min()
    }

    fn handle_core_event(&mut self, index: usize, event: host::Event) {
        let Some(Phase::Running(process)) = self.members.get_mut(index).map(|m| &mut m.phase)
        else {
            return;
        };
        let key = process.key;
        match event {
            host::Event::CallEnded { call, result } if process.initialize == Some(call) => {
                process.initialize = None;
                self.initialized(index, result);
            }
            host::Event::CallEnded { call, result } => {
                let Some(at) = process.sent.iter().position(|(id, _)| *id == call) else {
                    return;
                };
                let (_, handle) = process.sent.remove(at);
                let result = match result {
                    Ok(Reply::Executed(result)) => Ok(result),
                    Ok(_) => {
                        debug_assert!(false, "tools/execute answered as another method");
                        Err(CallError::Host(host::CallError::ExtensionExited {
                            unfinished_line: None,
                        }))
                    }
                    Err(error) => Err(CallError::Host(error)),
                };
                self.end(handle, result);
                self.dispatch();
            }
            host::Event::Progress { call, progress } => {
                let call = call.and_then(|c| {
                    process
                        .sent
                        .iter()
                        .find(|(id, _)| *id == c)
                        .map(|(_, h)| *h)
                });
                self.events.push_back(Event::Progress {
                    process: key,
                    call,
                    progress,
                });
            }
            host::Event::ToolsChanged { tools } => self.set_tools(index, &tools),
            host::Event::Notification { method, params } => {
                self.events.push_back(Event::Notification {
                    process: key,
                    method,
                    params,
                });
            }
            host::Event::Protocol(error) => {
                self.events.push_back(Event::Protocol {
                    process: key,
                    error,
                });
            }
            host::Event::ShuttingDown { reason } => {
                self.events.push_back(Event::ShuttingDown {
                    process: key,
                    reason,
                });
            }
            host::Event::Closed { code: None } if process.kill_asked => {
                self.stopped(key, Stop::Killed);
            }
            host::Event::Closed { code } => self.stopped(key, Stop::Exited { code }),
        }
    }

    /// The end of a process's `initialize`: it is ready, or it is shut down.
    fn initialized(&mut self, index: usize, result: Result<Reply, host::CallError>) {
        let now = self.now;
        let Some(Phase::Running(process)) = self.members.get_mut(index).map(|m| &mut m.phase)
        else {
            return;
        };
        let key = process.key;
        match result {
            Ok(Reply::Initialized(info)) => {
                process.ready = true;
                self.set_tools(index, &info.tools);
                self.events.push_back(Event::Ready {
                    process: key,
                    server: (info.name, info.version),
                });
                self.dispatch();
            }
            other => {
                let error = match other {
                    Err(error) => error,
                    Ok(_) => {
                        debug_assert!(false, "initialize answered as another method");
                        host::CallError::ExtensionExited {
                            unfinished_line: None,
                        }
                    }
                };
                if process.core.state() != State::Closed {
                    let _ = process.core.shutdown(now);
                }
                self.events.push_back(Event::InitializeFailed {
                    process: key,
                    error,
                });
            }
        }
    }

    fn set_tools(&mut self, index: usize, tools: &[Tool]) {
        let Some(member) = self.members.get(index) else {
            return;
        };
        let changes = self
            .registry
            .replace(ExtensionKey::new(index), &member.name, tools);
        for (extension, change) in changes {
            self.events.push_back(Event::ToolsChanged {
                extension,
                added: change.added,
                removed: change.removed,
                changed: change.changed,
            });
        }
    }

    /// A process ended, or could not be started: what follows, by the policy.
    fn stopped(&mut self, key: ProcessKey, how: Stop) {
        let now = self.now;
        let index = key.extension().index();
        let Some(member) = self.members.get_mut(index) else {
            return;
        };
        let old = core::mem::replace(&mut member.phase, Phase::Finished);
        let next = if self.shutting_down {
            Next::Nothing
        } else {
            match member.history.exit(now, &member.config.restart) {
                After::Failed { exits } => {
                    let failure = Failure {
                        since: now,
                        exits,
                        window: member.config.restart.window,
                        last: how.clone(),
                    };
                    member.phase = Phase::Failed(failure.clone());
                    Next::Failed(failure)
                }
                After::Restart { not_before } => {
                    member.phase = Phase::Stopped { not_before };
                    match member.config.restart.when {
                        RestartWhen::OnNextCall if member.queued == 0 => {
                            Next::RestartOnNextCall(not_before)
                        }
                        _ => Next::RestartAt(not_before),
                    }
                }
            }
        };
        // The Core ended its calls before `Closed`; any left end here all the same.
        if let Phase::Running(process) = old {
            for (_, handle) in process.sent {
                self.end(
                    handle,
                    Err(CallError::Host(host::CallError::ExtensionExited {
                        unfinished_line: None,
                    })),
                );
            }
        }
        if let Next::Failed(failure) = &next {
            let waiting: Vec<CallHandle> = self
                .queue
                .iter()
                .copied()
                .filter(|h| {
                    self.calls
                        .get(h)
                        .is_some_and(|c| c.extension == key.extension())
                })
                .collect();
            for call in waiting {
                self.end(call, Err(CallError::ExtensionFailed(failure.clone())));
            }
        }
        self.events.push_back(Event::Stopped {
            process: key,
            how,
            next,
        });
        self.dispatch();
    }

    // ---- Calls --------------------------------------------------------------------

    /// Whether a new call for `extension` can be sent now: it is ready, both limits
    /// allow, and none of its calls is waiting before it.
    fn can_send(&self, extension: ExtensionKey) -> bool {
        self.can_send_queued(extension)
            && self
                .members
                .get(extension.index())
                .is_some_and(|m| m.queued == 0)
    }

    /// Sends `tools/execute` on the extension's process for `handle`. `None` when
    /// its Core cannot take calls now (it is shutting down, or out of ids), so the
    /// call should wait for the next process; otherwise the Core's answer.
    fn send(
        &mut self,
        now: Instant,
        extension: ExtensionKey,
        handle: CallHandle,
        tool: &str,
        input: &Value,
        options: CallOptions,
    ) -> Option<Result<(), host::UsageError>> {
        let Some(Phase::Running(process)) = self
            .members
            .get_mut(extension.index())
            .map(|m| &mut m.phase)
        else {
            return None;
        };
        match process.core.start_execute(now, tool, input, options) {
            Ok(id) => {
                process.sent.push((id, handle));
                process.idle = false;
                let key = process.key;
                self.in_flight += 1;
                let state = CallState::Sent { process: key };
                let tool = String::from(tool);
                self.calls.insert(
                    handle,
                    Call {
                        extension,
                        tool,
                        state,
                    },
                );
                Some(Ok(()))
            }
            Err(
                host::UsageError::NotReady
                | host::UsageError::ShuttingDown
                | host::UsageError::Closed
                | host::UsageError::TooManyCalls { .. }
                | host::UsageError::IdsExhausted,
            ) => None,
            Err(error) => Some(Err(error)),
        }
    }

    /// Sends the waiting calls whose turn has come, in the order they came.
    fn dispatch(&mut self) {
        let mut at = 0;
        while at < self.queue.len() && self.in_flight < self.config.max_in_flight {
            let Some(&handle) = self.queue.get(at) else {
                break;
            };
            let Some(extension) = self.calls.get(&handle).map(|c| c.extension) else {
                debug_assert!(false, "a queued call of no record");
                self.queue.remove(at);
                continue;
            };
            if !self.can_send_queued(extension) {
                at += 1;
                continue;
            }
            let Some(call) = self.calls.remove(&handle) else {
                continue;
            };
            let CallState::Waiting { input, options, .. } = &call.state else {
                debug_assert!(false, "a queued call that was sent");
                self.queue.remove(at);
                continue;
            };
            match self.send(self.now, extension, handle, &call.tool, input, *options) {
                Some(Ok(())) => {
                    self.queue.remove(at);
                    if let Some(member) = self.members.get_mut(extension.index()) {
                        member.left_queue();
                    }
                }
                Some(Err(error)) => {
                    self.calls.insert(handle, call);
                    self.end(handle, Err(CallError::Refused(error)));
                }
                None => {
                    self.calls.insert(handle, call);
                    at += 1;
                }
            }
        }
    }

    /// Whether a call already at its turn in the queue can be sent: [`can_send`]
    /// but for its own place.
    ///
    /// [`can_send`]: Fleet::can_send
    fn can_send_queued(&self, extension: ExtensionKey) -> bool {
        let Some(member) = self.members.get(extension.index()) else {
            return false;
        };
        let Phase::Running(process) = &member.phase else {
            return false;
        };
        !self.shutting_down
            && process.ready
            && process.core.state() == State::Ready
            && process.sent.len() < member.config.max_in_flight
            && self.in_flight < self.config.max_in_flight
    }

    /// Ends a call once (one already ended is left alone) and queues its event.
    fn end(&mut self, handle: CallHandle, result: Result<crate::message::ToolResult, CallError>) {
        let Some(call) = self.calls.remove(&handle) else {
            return;
        };
        match call.state {
            CallState::Waiting { .. } => {
                self.queue.retain(|h| *h != handle);
                if let Some(member) = self.members.get_mut(call.extension.index()) {
                    member.left_queue();
                }
            }
            CallState::Sent { process } => {
                debug_assert!(self.in_flight > 0, "a call in flight not counted");
                self.in_flight = self.in_flight.saturating_sub(1);
                if let Some(p) = self.process_mut(process) {
                    p.sent.retain(|(_, h)| *h != handle);
                }
            }
        }
        self.events.push_back(Event::CallEnded {
            call: handle,
            result,
        });
    }

    // ---- What the driver may look at ----------------------------------------------

    /// Every tool in the registry, grouped by extension in the order they were added.
    pub fn tools(&self) -> impl Iterator<Item = RegisteredTool<'_>> + '_ {
        self.registry.entries().iter().map(|e| self.registered(e))
    }

    /// The tool a name addresses, as [`execute`](Fleet::execute) resolves it.
    pub fn resolve(&self, tool_name: &str) -> Result<RegisteredTool<'_>, UsageError> {
        match self.registry.resolve(tool_name) {
            Ok(entry) => Ok(self.registered(entry)),
            Err(Unresolved::Unknown) => Err(UsageError::UnknownTool {
                name: String::from(tool_name),
            }),
            Err(Unresolved::Ambiguous(candidates)) => Err(UsageError::AmbiguousTool {
                name: String::from(tool_name),
                candidates,
            }),
        }
    }

    fn registered<'a>(&'a self, entry: &'a registry::Entry) -> RegisteredTool<'a> {
        RegisteredTool {
            extension: entry.extension,
            extension_name: self.name(entry.extension).unwrap_or_else(|| {
                debug_assert!(false, "a registry entry of no extension");
                ""
            }),
            tool: &entry.tool,
            qualified: &entry.qualified,
            offered: &entry.offered,
        }
    }

    /// An extension's name.
    pub fn name(&self, extension: ExtensionKey) -> Option<&str> {
        self.members.get(extension.index()).map(|m| m.name.as_str())
    }

    /// The extension of that name.
    pub fn key(&self, name: &str) -> Option<ExtensionKey> {
        let index = self.members.iter().position(|m| m.name == name)?;
        Some(ExtensionKey::new(index))
    }

    /// Every extension, in the order they were added.
    pub fn extensions(&self) -> impl Iterator<Item = ExtensionKey> + '_ {
        (0..self.members.len()).map(ExtensionKey::new)
    }

    /// Where an extension is.
    pub fn status(&self, extension: ExtensionKey) -> Option<Status> {
        let member = self.members.get(extension.index())?;
        Some(match &member.phase {
            Phase::Stopped { not_before } => Status::Stopped {
                not_before: *not_before,
            },
            Phase::Starting(key) => Status::Starting(*key),
            Phase::Running(p) => Status::Running {
                process: p.key,
                ready: p.ready,
            },
            Phase::Failed(failure) => Status::Failed(failure.clone()),
            Phase::Finished => Status::Finished,
        })
    }

    /// The extension's running process, if one runs.
    pub fn process(&self, extension: ExtensionKey) -> Option<ProcessKey> {
        match &self.members.get(extension.index())?.phase {
            Phase::Running(p) => Some(p.key),
            _ => None,
        }
    }

    /// The Core of a running process, to read its state and tools.
    pub fn core(&self, process: ProcessKey) -> Option<&Core> {
        match &self.members.get(process.extension().index())?.phase {
            Phase::Running(p) if p.key == process => Some(&p.core),
            _ => None,
        }
    }

    /// How many calls are in flight, over all extensions (at most
    /// [`Config::max_in_flight`]).
    pub fn calls_in_flight(&self) -> usize {
        self.in_flight
    }

    /// How many calls of one extension are in flight (at most its
    /// [`ExtensionConfig::max_in_flight`]).
    pub fn calls_in_flight_to(&self, extension: ExtensionKey) -> usize {
        match self.members.get(extension.index()).map(|m| &m.phase) {
            Some(Phase::Running(p)) => p.sent.len(),
            _ => 0,
        }
    }

    /// How many calls wait to be sent (at most [`Config::max_queued`]).
    pub fn calls_waiting(&self) -> usize {
        self.queue.len()
    }

    /// `true` once [`Event::Closed`] was queued: nothing more happens.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    // ---- Shared steps -------------------------------------------------------------

    fn observe(&mut self, now: Instant) {
        self.now = self.now.max(now);
    }

    fn is_starting(&self, key: ProcessKey) -> bool {
        matches!(
            self.members.get(key.extension().index()).map(|m| &m.phase),
            Some(Phase::Starting(k)) if *k == key
        )
    }

    /// The running process `key`, if it is its extension's current one.
    fn process_mut(&mut self, key: ProcessKey) -> Option<&mut Process> {
        match &mut self.members.get_mut(key.extension().index())?.phase {
            Phase::Running(p) if p.key == key => Some(p),
            _ => None,
        }
    }
}

impl Member {
    /// One of its calls left the queue.
    fn left_queue(&mut self) {
        debug_assert!(self.queued > 0, "a waiting call not counted");
        self.queued = self.queued.saturating_sub(1);
    }

    /// Whether a stopped extension should be started once its backoff is over.
    fn wants_start(&self) -> bool {
        self.start_anyway || self.queued > 0 || self.config.restart.when == RestartWhen::AtOnce
    }

    fn is_over(&self) -> bool {
        matches!(self.phase, Phase::Finished | Phase::Failed(_))
    }
}
