//! A driver for a [`Fleet`] over scripted extension processes, with the fleet's
//! invariants checked after every poll. Used by the fleet scenarios and the fleet
//! simulation.
//!
//! Each scripted process reads the lines the fleet's Cores write, checks them, and
//! answers when told (or at once, as its script says). A `tools/execute` result
//! carries the `tag` of the call's input and the process's start number, so the
//! driver can tell that every result reached the call it answers.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};

use core::time::Duration;

use dhara_protocol::fleet::{
    CallError, CallHandle, Event, ExtensionKey, Fleet, Input, Next, Output, ProcessKey,
    RestartPolicy, Stop, UsageError, alias, is_offerable,
};
use dhara_protocol::host::{self, CallOptions};
use dhara_protocol::json::{self, Object, Value};
use dhara_protocol::message::Content;
use dhara_protocol::time::Instant;

/// How one process of an extension behaves.
#[derive(Clone, Debug)]
pub struct Script {
    /// The tools it declares.
    pub tools: Vec<String>,
    /// It answers `initialize` as soon as it reads it.
    pub answers_initialize: bool,
    /// It answers `tools/execute` as soon as it reads it.
    pub answers_calls: bool,
    /// It exits once it reads `shutdown`.
    pub obeys_shutdown: bool,
}

/// How a scripted process answers one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Good,
    ToolError,
    RpcError,
}

/// One scripted process.
#[derive(Debug)]
pub struct Process {
    pub key: ProcessKey,
    pub name: String,
    pub script: Script,
    /// Every tool it declared in this process's life.
    pub offered: BTreeSet<String>,
    partial: Vec<u8>,
    pub stdout: Vec<u8>,
    /// Every line it read, parsed.
    pub received: Vec<Value>,
    /// Requests not answered yet: id, method, params.
    pub pending: Vec<(u64, String, Value)>,
    pub shutdown_seen: bool,
    pub running: bool,
    /// Its exit was reported to the fleet.
    pub exited: bool,
    /// The fleet asked for its stdin to be closed.
    pub stdin_closed: bool,
    pub killed: bool,
}

impl Process {
    fn new(key: ProcessKey, name: &str, script: Script) -> Process {
        Process {
            key,
            name: name.to_string(),
            offered: script.tools.iter().cloned().collect(),
            script,
            partial: Vec::new(),
            stdout: Vec::new(),
            received: Vec::new(),
            pending: Vec::new(),
            shutdown_seen: false,
            running: true,
            exited: false,
            stdin_closed: false,
            killed: false,
        }
    }

    /// Takes what a Core wrote to its stdin.
    fn stdin(&mut self, bytes: &[u8]) -> Result<(), String> {
        if self.exited || self.stdin_closed {
            return Err(format!(
                "bytes written to {:?} after its exit or the end of its stdin",
                self.key
            ));
        }
        if !self.running {
            return Ok(()); // a write to a process that is going away: lost
        }
        self.partial.extend_from_slice(bytes);
        while let Some(end) = self.partial.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            let value = json::parse(&line[..end]).map_err(|e| format!("bad JSON written: {e}"))?;
            self.received.push(value.clone());
            let method = value
                .get("method")
                .and_then(Value::as_str)
                .map(str::to_string);
            match (method.as_deref(), value.get("id").and_then(Value::as_u64)) {
                (Some("shutdown"), None) => self.shutdown_seen = true,
                (Some(method), Some(id)) => {
                    let params = value.get("params").cloned().unwrap_or(Value::Null);
                    if method == "tools/execute" {
                        let tool = params.get("toolName").and_then(Value::as_str).unwrap_or("");
                        // A call may cross a `tools/list` announcement on its way.
                        if !self.offered.contains(tool) {
                            return Err(format!(
                                "{} ({:?}) was sent tool '{tool}', which it does not offer",
                                self.name, self.key
                            ));
                        }
                    }
                    self.pending.push((id, method.to_string(), params));
                    let auto = match method {
                        "initialize" => self.script.answers_initialize,
                        "tools/execute" => self.script.answers_calls,
                        _ => true,
                    };
                    if auto {
                        self.answer(self.pending.len() - 1, Shape::Good);
                    }
                }
                _ => return Err(format!("unexpected line written: {value:?}")),
            }
        }
        Ok(())
    }

    /// Answers pending request `k` (modulo their number).
    pub fn answer(&mut self, k: usize, shape: Shape) {
        if self.pending.is_empty() || !self.running {
            return;
        }
        let (id, method, params) = self.pending.remove(k % self.pending.len());
        let result = match (method.as_str(), shape) {
            (_, Shape::RpcError) => {
                let line = format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32000,"message":"boom"}}}}"#
                );
                return self.line(&line);
            }
            ("initialize", _) => format!(
                r#"{{"name":"{}","version":"1","tools":{}}}"#,
                self.name,
                tools_json(&self.script.tools)
            ),
            ("tools/execute", shape) => {
                let tag = params
                    .get("input")
                    .and_then(|i| i.get("tag"))
                    .and_then(Value::as_u64)
                    .unwrap_or(u64::MAX);
                format!(
                    r#"{{"content":[{{"type":"text","text":"tag={tag} start={}"}}],"isError":{}}}"#,
                    self.key.start(),
                    shape == Shape::ToolError
                )
            }
            _ => r#"{"tools":[]}"#.to_string(),
        };
        self.line(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#
        ));
    }

    /// Announces a new tool set with a `tools/list` notification.
    pub fn announce(&mut self, tools: Vec<String>) {
        let line = format!(
            r#"{{"jsonrpc":"2.0","method":"tools/list","params":{{"tools":{}}}}}"#,
            tools_json(&tools)
        );
        self.offered.extend(tools.iter().cloned());
        self.script.tools = tools;
        self.line(&line);
    }

    fn line(&mut self, text: &str) {
        if self.running {
            self.stdout.extend_from_slice(text.as_bytes());
            self.stdout.push(b'\n');
        }
    }
}

fn tools_json(tools: &[String]) -> String {
    let items: Vec<String> = tools
        .iter()
        .map(|t| {
            format!(
                r#"{{"name":{},"description":"d","inputSchema":{{"type":"object"}}}}"#,
                String::from_utf8(json::to_vec(&Value::from(t.as_str()))).unwrap_or_default()
            )
        })
        .collect();
    format!("[{}]", items.join(","))
}

/// What gives each new process of an extension its script.
pub type Scripts = Box<dyn FnMut(ProcessKey, &str) -> Script>;

/// A call the driver started.
#[derive(Debug, Clone)]
pub struct Started {
    pub tag: u64,
    pub at: Instant,
    pub timeout: Duration,
    pub extension: ExtensionKey,
}

/// The policy and limits the driver checks the fleet against, per extension.
#[derive(Clone, Debug)]
pub struct Limits {
    pub restart: RestartPolicy,
    pub grace: Duration,
    pub timeout: Duration,
    pub max_in_flight: usize,
}

/// The driver: the fleet, the clock, the processes, and what has been seen.
pub struct Sim {
    pub fleet: Fleet,
    pub now: Instant,
    pub procs: BTreeMap<ProcessKey, Process>,
    /// Starts asked for and not answered yet.
    pub starting: Vec<ProcessKey>,
    /// The script each new process of an extension gets.
    pub next_script: Scripts,
    pub limits: BTreeMap<ExtensionKey, Limits>,
    pub max_in_flight: usize,
    pub max_queued: usize,
    /// Every event, in order.
    pub events: Vec<Event>,
    pub calls: BTreeMap<CallHandle, Started>,
    pub ended: BTreeMap<CallHandle, Result<String, CallError>>,
    pub next_tag: u64,
    pub kills_due: Vec<ProcessKey>,
    pub wait: Option<Instant>,
    /// When each process's Core started its shutdown.
    shutdown_at: BTreeMap<ProcessKey, Instant>,
    /// Each extension's stops (exits and failed starts), for the restart checks.
    stops: BTreeMap<ExtensionKey, Vec<Instant>>,
    /// The earliest a next start may come, per extension; `None`: never (failed).
    earliest_start: BTreeMap<ExtensionKey, Option<Instant>>,
    /// The registry as the `ToolsChanged` events tell it: qualified names.
    model: BTreeMap<ExtensionKey, BTreeSet<String>>,
    pub closed: bool,
    pub polls: usize,
}

impl Sim {
    pub fn new(fleet: Fleet, next_script: Scripts) -> Sim {
        let max_in_flight = fleet.config().max_in_flight;
        let max_queued = fleet.config().max_queued;
        Sim {
            fleet,
            now: Instant::ZERO,
            procs: BTreeMap::new(),
            starting: Vec::new(),
            next_script,
            limits: BTreeMap::new(),
            max_in_flight,
            max_queued,
            events: Vec::new(),
            calls: BTreeMap::new(),
            ended: BTreeMap::new(),
            next_tag: 1,
            kills_due: Vec::new(),
            wait: None,
            shutdown_at: BTreeMap::new(),
            stops: BTreeMap::new(),
            earliest_start: BTreeMap::new(),
            model: BTreeMap::new(),
            closed: false,
            polls: 0,
        }
    }

    /// Adds an extension, noting its limits for the checks.
    pub fn add(
        &mut self,
        name: &str,
        config: dhara_protocol::fleet::ExtensionConfig,
    ) -> ExtensionKey {
        let limits = Limits {
            restart: config.restart,
            grace: config.host.grace,
            timeout: config.host.timeout,
            max_in_flight: config.max_in_flight,
        };
        let key = self.fleet.add(name, config).expect("a valid extension");
        self.limits.insert(key, limits);
        self.earliest_start.insert(key, Some(self.now));
        key
    }

    /// Polls until the fleet waits, checking every output.
    pub fn poll(&mut self) -> Result<(), String> {
        for _ in 0..100_000 {
            self.polls += 1;
            match self.fleet.poll_output() {
                Output::Start(process) => {
                    let ext = process.extension();
                    match self.earliest_start.get(&ext) {
                        Some(Some(at)) if self.now >= *at => {}
                        other => {
                            return Err(format!(
                                "{process:?} started at {:?}, earliest allowed {other:?}",
                                self.now
                            ));
                        }
                    }
                    if self
                        .procs
                        .values()
                        .any(|p| p.key.extension() == ext && p.running)
                        || self.starting.iter().any(|s| s.extension() == ext)
                    {
                        return Err(format!("{process:?} asked for while another runs"));
                    }
                    self.earliest_start.insert(ext, None);
                    self.starting.push(process);
                }
                Output::Transmit { process, bytes } => {
                    let bytes = bytes.to_vec();
                    let proc = self
                        .procs
                        .get_mut(&process)
                        .ok_or_else(|| format!("bytes for {process:?}, never started"))?;
                    proc.stdin(&bytes)?;
                }
                Output::CloseStdin { process } => {
                    let proc = self
                        .procs
                        .get_mut(&process)
                        .ok_or_else(|| format!("stdin of {process:?} closed, never started"))?;
                    if proc.stdin_closed {
                        return Err(format!("stdin of {process:?} closed twice"));
                    }
                    // The end of its input means `shutdown` to an extension.
                    proc.stdin_closed = true;
                    proc.shutdown_seen = true;
                }
                Output::Kill { process } => {
                    let proc = self
                        .procs
                        .get(&process)
                        .ok_or_else(|| format!("kill of {process:?}, never started"))?;
                    if proc.exited || proc.killed {
                        return Err(format!("kill of {process:?} after its exit or twice"));
                    }
                    let shutdown_at = self
                        .shutdown_at
                        .get(&process)
                        .ok_or_else(|| format!("kill of {process:?} without shutdown"))?;
                    let grace = self.limits[&process.extension()].grace;
                    if self.now < *shutdown_at + grace {
                        return Err(format!("kill of {process:?} before the grace ended"));
                    }
                    self.kills_due.push(process);
                }
                Output::Event(event) => self.event(event)?,
                Output::Wait(deadline) => {
                    if let Some(at) = deadline {
                        if at <= self.now {
                            return Err(format!("a deadline not in the future: {at:?}"));
                        }
                    }
                    self.wait = deadline;
                    return self.check_state();
                }
            }
        }
        Err("poll_output never said Wait".into())
    }

    fn event(&mut self, event: Event) -> Result<(), String> {
        if self.closed {
            return Err(format!("event after Closed: {event:?}"));
        }
        match &event {
            Event::CallEnded { call, result } => {
                let started = self
                    .calls
                    .get(call)
                    .ok_or_else(|| format!("an unknown call ended: {call:?}"))?;
                let text = match result {
                    Ok(result) => {
                        let Some(Content::Text { text }) = result.content.first() else {
                            return Err(format!("a result without text: {result:?}"));
                        };
                        let want = format!("tag={} ", started.tag);
                        if !text.starts_with(&want) {
                            return Err(format!(
                                "call {call:?} (tag {}) got another call's result: {text}",
                                started.tag
                            ));
                        }
                        Ok(text.to_string())
                    }
                    Err(error) => {
                        let earliest = started.at + started.timeout;
                        let timed_out = matches!(
                            error,
                            CallError::QueueTimeout
                                | CallError::Host(host::CallError::Timeout { .. })
                        );
                        if timed_out && self.now < earliest {
                            return Err(format!("{call:?} timed out early: {error:?}"));
                        }
                        Err(error.clone())
                    }
                };
                if self.ended.insert(*call, text).is_some() {
                    return Err(format!("a call ended twice: {call:?}"));
                }
            }
            Event::ShuttingDown { process, .. }
                if self.shutdown_at.insert(*process, self.now).is_some() =>
            {
                return Err(format!("{process:?} shut down twice"));
            }
            Event::ToolsChanged {
                extension,
                added,
                removed,
                changed,
            } => {
                let model = self.model.entry(*extension).or_default();
                for name in removed {
                    if !model.remove(name) {
                        return Err(format!("removed {name}, which was not there"));
                    }
                }
                for name in added {
                    if !model.insert(name.clone()) {
                        return Err(format!("added {name}, which was there"));
                    }
                }
                for name in changed {
                    if !model.contains(name) {
                        return Err(format!("changed {name}, which is not there"));
                    }
                }
            }
            Event::Stopped { process, how, next } => {
                let ext = process.extension();
                let limits = self.limits[&ext].clone();
                let stops = self.stops.entry(ext).or_default();
                let window = limits.restart.window;
                let recent = stops
                    .iter()
                    .filter(|&&t| self.now.saturating_duration_since(t) <= window)
                    .count();
                stops.push(self.now);
                let max = limits.restart.max_exits;
                let trips = max > 0 && recent + 1 >= max;
                match next {
                    Next::Failed(failure) => {
                        if !trips {
                            return Err(format!("failed after {} exits: {next:?}", recent + 1));
                        }
                        if failure.since != self.now || failure.last != *how {
                            return Err(format!("a wrong failure: {failure:?}"));
                        }
                        self.earliest_start.insert(ext, None);
                    }
                    Next::RestartAt(at) | Next::RestartOnNextCall(at) => {
                        if trips {
                            return Err(format!("no failure after {} exits", recent + 1));
                        }
                        let delay = match recent {
                            0 => Duration::ZERO,
                            k => {
                                let factor = 1u32.checked_shl((k - 1) as u32).unwrap_or(0);
                                match limits.restart.backoff_initial.checked_mul(factor) {
                                    Some(d) if factor > 0 => d.min(limits.restart.backoff_cap),
                                    _ => limits.restart.backoff_cap,
                                }
                            }
                        };
                        if *at != self.now + delay {
                            return Err(format!(
                                "restart at {at:?}, expected {:?}",
                                self.now + delay
                            ));
                        }
                        self.earliest_start.insert(ext, Some(*at));
                    }
                    Next::Nothing => {
                        self.earliest_start.insert(ext, None);
                    }
                    _ => {}
                }
                if let Stop::Exited { .. } | Stop::Killed = how {
                    let proc = self.procs.get(process);
                    if proc.is_none_or(|p| p.running) {
                        return Err(format!("{process:?} stopped before its exit was reported"));
                    }
                }
            }
            Event::Closed => self.closed = true,
            _ => {}
        }
        self.events.push(event);
        Ok(())
    }

    /// The checks made whenever the fleet waits.
    fn check_state(&self) -> Result<(), String> {
        let fleet = &self.fleet;
        if fleet.calls_waiting() > self.max_queued {
            return Err(format!("{} calls waiting", fleet.calls_waiting()));
        }
        if fleet.calls_in_flight() > self.max_in_flight {
            return Err(format!("{} calls in flight", fleet.calls_in_flight()));
        }
        for (ext, limits) in &self.limits {
            if fleet.calls_in_flight_to(*ext) > limits.max_in_flight {
                return Err(format!("{ext:?}: too many calls in flight"));
            }
        }
        let pending = self.calls.len() - self.ended.len();
        if fleet.calls_in_flight() + fleet.calls_waiting() != pending {
            return Err(format!(
                "{pending} calls pending, the fleet holds {} + {}",
                fleet.calls_in_flight(),
                fleet.calls_waiting()
            ));
        }
        // The registry is what its events said, and every name it offers leads back
        // to its own tool.
        let mut offered = BTreeSet::new();
        let mut seen: BTreeMap<ExtensionKey, BTreeSet<String>> = BTreeMap::new();
        for tool in fleet.tools() {
            seen.entry(tool.extension)
                .or_default()
                .insert(tool.qualified.to_string());
            if !is_offerable(tool.offered) || !is_offerable(tool.qualified) {
                return Err(format!("a name LLM APIs reject: {tool:?}"));
            }
            if !offered.insert(tool.offered.to_string()) {
                return Err(format!("offered twice: {}", tool.offered));
            }
            let want = format!("{}__{}", tool.extension_name, tool.tool.name);
            if tool.qualified != alias(&want) {
                return Err(format!("a wrong qualified name: {tool:?}"));
            }
            for name in [tool.offered, tool.qualified] {
                let found = fleet.resolve(name).map_err(|e| format!("{name}: {e}"))?;
                if found.extension != tool.extension || found.tool.name != tool.tool.name {
                    return Err(format!("{name} resolves to another tool"));
                }
            }
        }
        for ext in self.limits.keys() {
            let empty = BTreeSet::new();
            let model = self.model.get(ext).unwrap_or(&empty);
            let seen = seen.get(ext).unwrap_or(&empty);
            if model != seen {
                return Err(format!(
                    "{ext:?}: the events say {model:?}, the registry {seen:?}"
                ));
            }
        }
        Ok(())
    }

    /// Calls a tool; the input carries a tag the result must echo.
    pub fn execute(
        &mut self,
        name: &str,
        timeout: Option<Duration>,
    ) -> Result<Result<CallHandle, UsageError>, String> {
        let tag = self.next_tag;
        self.next_tag += 1;
        let input = Value::Object(Object::from_iter([("tag", Value::from(tag))]));
        let options = CallOptions {
            timeout,
            ..CallOptions::default()
        };
        let waiting = self.fleet.calls_waiting();
        let result = self.fleet.execute_with(self.now, name, input, options);
        match &result {
            Ok(call) => {
                let extension = self
                    .fleet
                    .resolve(name)
                    .map_err(|e| format!("accepted, yet unresolved: {e}"))?
                    .extension;
                let timeout = timeout.unwrap_or(self.limits[&extension].timeout);
                let started = Started {
                    tag,
                    at: self.now,
                    timeout,
                    extension,
                };
                if self.calls.insert(*call, started).is_some() {
                    return Err(format!("a handle given twice: {call:?}"));
                }
            }
            Err(UsageError::QueueFull { limit }) => {
                if waiting < *limit {
                    return Err(format!("queue full with {waiting} of {limit}"));
                }
            }
            Err(_) => {
                if self.fleet.calls_waiting() != waiting {
                    return Err("a refused call changed the queue".into());
                }
            }
        }
        self.poll()?;
        Ok(result)
    }

    /// Asks for a restart of a stopped or failed extension, its exits forgotten.
    pub fn restart(&mut self, ext: ExtensionKey) -> Result<Result<(), UsageError>, String> {
        let result = self.fleet.restart(self.now, ext);
        if result.is_ok() {
            self.stops.remove(&ext);
            self.earliest_start.insert(ext, Some(self.now));
        }
        self.poll()?;
        Ok(result)
    }

    /// Answers the oldest start asked for.
    pub fn answer_start(&mut self, ok: bool) -> Result<(), String> {
        if self.starting.is_empty() {
            return Ok(());
        }
        let process = self.starting.remove(0);
        if ok {
            let name = self
                .fleet
                .name(process.extension())
                .unwrap_or_default()
                .to_string();
            let script = (self.next_script)(process, &name);
            self.procs
                .insert(process, Process::new(process, &name, script));
            self.fleet.handle_input(self.now, Input::Started(process));
        } else {
            let reason = "no such file";
            self.fleet
                .handle_input(self.now, Input::StartFailed { process, reason });
        }
        self.poll()
    }

    /// Runs until nothing moves without time passing: starts answered, stdout
    /// delivered, kills and obedient exits carried out.
    pub fn settle(&mut self) -> Result<(), String> {
        for _ in 0..100 {
            let before = (self.polls, self.starting.len());
            while !self.starting.is_empty() {
                self.answer_start(true)?;
            }
            self.deliver_all()?;
            self.after_step()?;
            if (self.polls, self.starting.len()) == before {
                return Ok(());
            }
        }
        Err("never settled".into())
    }

    /// The current process of an extension, if one runs.
    pub fn current(&mut self, ext: ExtensionKey) -> Option<&mut Process> {
        self.procs
            .values_mut()
            .rev()
            .find(|p| p.key.extension() == ext && p.running)
    }

    /// Hands an extension's stdout to the fleet in chunks of these sizes.
    pub fn deliver(&mut self, ext: ExtensionKey, chunks: &[u16]) -> Result<(), String> {
        for &size in chunks {
            let Some(proc) = self.current(ext) else {
                return Ok(());
            };
            if proc.stdout.is_empty() {
                return Ok(());
            }
            let n = usize::from(size.max(1)).min(proc.stdout.len());
            let chunk: Vec<u8> = proc.stdout.drain(..n).collect();
            let process = proc.key;
            self.fleet.handle_input(
                self.now,
                Input::Process {
                    process,
                    input: host::Input::Stdout(&chunk),
                },
            );
            self.poll()?;
        }
        Ok(())
    }

    /// Hands every running process's stdout to the fleet.
    pub fn deliver_all(&mut self) -> Result<(), String> {
        let exts: Vec<ExtensionKey> = self.limits.keys().copied().collect();
        for _ in 0..100 {
            let mut any = false;
            for &ext in &exts {
                if self.current(ext).is_some_and(|p| !p.stdout.is_empty()) {
                    any = true;
                    self.deliver(ext, &[u16::MAX])?;
                }
            }
            if !any {
                return Ok(());
            }
        }
        Err("stdout never ran dry".into())
    }

    /// The process exits: its stdout read to the end first, or with no poll between
    /// its last bytes and its exit.
    pub fn exit(
        &mut self,
        process: ProcessKey,
        code: Option<i32>,
        close_stdout_first: bool,
    ) -> Result<(), String> {
        let Some(proc) = self.procs.get_mut(&process) else {
            return Ok(());
        };
        if proc.exited {
            return Ok(());
        }
        let rest = std::mem::take(&mut proc.stdout);
        proc.running = false;
        let now = self.now;
        let input = |input| Input::Process { process, input };
        self.fleet
            .handle_input(now, input(host::Input::Stdout(&rest)));
        if close_stdout_first {
            self.poll()?;
            self.fleet
                .handle_input(now, input(host::Input::StdoutClosed));
            self.poll()?;
        }
        if let Some(proc) = self.procs.get_mut(&process) {
            proc.exited = true;
        }
        self.fleet
            .handle_input(now, input(host::Input::Exited { code }));
        self.poll()
    }

    /// Carries out the kills asked for, and the exits of processes that obey
    /// `shutdown`.
    pub fn after_step(&mut self) -> Result<(), String> {
        for process in std::mem::take(&mut self.kills_due) {
            if let Some(p) = self.procs.get_mut(&process) {
                p.killed = true;
                p.running = false;
            }
            self.exit(process, None, true)?;
        }
        let obeying: Vec<ProcessKey> = self
            .procs
            .values()
            .filter(|p| p.running && p.shutdown_seen && p.script.obeys_shutdown)
            .map(|p| p.key)
            .collect();
        for process in obeying {
            self.exit(process, Some(0), true)?;
        }
        Ok(())
    }

    pub fn advance(&mut self, by: Duration) -> Result<(), String> {
        self.now = self.now + by;
        self.fleet.handle_input(self.now, Input::Timeout);
        self.poll()
    }

    pub fn until_deadline(&mut self) -> Result<(), String> {
        if let Some(at) = self.wait {
            self.now = self.now.max(at);
            self.fleet.handle_input(self.now, Input::Timeout);
            self.poll()?;
        }
        Ok(())
    }

    /// Shuts the fleet down and runs it to its end: starts answered, processes
    /// exiting or killed. Then every call must have ended.
    pub fn finish(&mut self) -> Result<(), String> {
        match self.fleet.shutdown(self.now) {
            Ok(()) | Err(UsageError::ShuttingDown) => {}
            Err(e) => return Err(format!("shutdown refused: {e}")),
        }
        self.poll()?;
        for _ in 0..1000 {
            if self.closed {
                break;
            }
            while !self.starting.is_empty() {
                self.answer_start(true)?;
            }
            self.deliver_all()?;
            self.after_step()?;
            if self.closed {
                break;
            }
            match self.wait {
                Some(_) => self.until_deadline()?,
                None => {
                    // Nothing pending but the processes that ignore `shutdown` and
                    // whose Cores gave up the grace already: they are killed.
                    let running: Vec<ProcessKey> = self
                        .procs
                        .values()
                        .filter(|p| p.running)
                        .map(|p| p.key)
                        .collect();
                    if running.is_empty() && self.starting.is_empty() && !self.closed {
                        return Err("nothing runs, yet the fleet is not closed".into());
                    }
                    for process in running {
                        self.exit(process, Some(0), true)?;
                    }
                }
            }
        }
        if !self.closed {
            return Err("the fleet never closed".into());
        }
        let open: Vec<&CallHandle> = self
            .calls
            .keys()
            .filter(|c| !self.ended.contains_key(c))
            .collect();
        if !open.is_empty() {
            return Err(format!("calls that never ended: {open:?}"));
        }
        if self.procs.values().any(|p| p.running) {
            return Err("a process still runs after Closed".into());
        }
        Ok(())
    }

    /// Hands a line to the fleet as if an old process printed it.
    pub fn stale(&mut self, process: ProcessKey, line: &[u8]) -> Result<(), String> {
        self.fleet.handle_input(
            self.now,
            Input::Process {
                process,
                input: host::Input::Stdout(line),
            },
        );
        self.poll()
    }
}
