//! A simulated Core and Extension, back to back: a [`Pair`] owns a `host::Core`, the
//! extension process (a [`Process`]: an `Extension` endpoint behind its pipes), a
//! simulated clock, and the bytes in flight between them, handed over in chunks.
//! [`Pair::drive`] runs both until neither has anything to do, recording what each
//! endpoint reports; the test looks at the record and acts.
//!
//! The pair plays the Core's driver as the std driver does: it gives the Core
//! `Input::Timeout` once the clock reaches the deadline the Core asked for, and when
//! the process exits (by itself, or killed on `Output::Kill`) it hands the Core the
//! rest of the process's stdout, then `StdoutClosed` and `Exited`. Handing bytes and
//! events over allocates nothing once the pipes and queues have room, so
//! `alloc_counts` counts on it too.
#![allow(dead_code)]

use std::collections::VecDeque;

use core::time::Duration;

use dhara_protocol::extension::{self, Extension};
use dhara_protocol::host::{self, CallError, CallId, Core, Reply};
use dhara_protocol::time::Instant;

/// Bytes written by one side and not yet read by the other. The reader takes them in
/// chunks whose sizes cycle through `sizes`.
#[derive(Debug)]
pub struct Pipe {
    /// The bytes in flight, oldest first.
    pub bytes: Vec<u8>,
    sizes: Vec<usize>,
    next: usize,
    /// The writer closed its end: the reader sees the end once `bytes` are read.
    pub closed: bool,
}

impl Pipe {
    /// A pipe read in chunks of these sizes, in turn (an empty list or `usize::MAX`:
    /// all that is in flight at once).
    pub fn new(sizes: Vec<usize>) -> Pipe {
        Pipe {
            bytes: Vec::new(),
            sizes,
            next: 0,
            closed: false,
        }
    }

    /// A pipe read in one piece, everything in flight at once.
    pub fn whole() -> Pipe {
        Pipe::new(vec![usize::MAX])
    }

    /// The size of the next chunk (at least one byte, at most what is in flight).
    fn next_size(&mut self) -> usize {
        let size = match self.sizes.len() {
            0 => usize::MAX,
            n => self.sizes[self.next % n],
        };
        self.next += 1;
        size.clamp(1, self.bytes.len().max(1))
    }

    /// Hands up to `max` bytes (at least one) to `read` and drops them from the pipe;
    /// `false` when nothing is in flight. Allocates nothing.
    pub fn read(&mut self, max: usize, read: impl FnOnce(&[u8])) -> bool {
        if self.bytes.is_empty() {
            return false;
        }
        let n = max.clamp(1, self.bytes.len());
        read(&self.bytes[..n]);
        self.bytes.drain(..n);
        true
    }

    /// Hands the next chunk to `read`; `false` when nothing is in flight.
    pub fn read_chunk(&mut self, read: impl FnOnce(&[u8])) -> bool {
        if self.bytes.is_empty() {
            return false;
        }
        let n = self.next_size();
        self.read(n, read)
    }
}

/// The extension process: an `Extension` endpoint, its stdin and stdout, and what it
/// reported. Once it has exited or been killed it reads and writes nothing more.
pub struct Process {
    /// The endpoint.
    pub ext: Extension,
    /// What the Core wrote, not yet read by the endpoint.
    pub stdin: Pipe,
    /// What the endpoint wrote, not yet read by the Core's driver.
    pub stdout: Pipe,
    /// The endpoint's events, oldest first, for the test (the tool author) to take.
    pub events: VecDeque<extension::Event>,
    /// Every `Output::Exit` code, in order (there should be at most one).
    pub exits: Vec<i32>,
    /// The process is alive: it was neither stopped nor killed.
    pub running: bool,
    /// `StdinClosed` was handed to the endpoint.
    end_read: bool,
}

impl Process {
    /// The process of `ext`, its stdin and stdout read in chunks of these sizes.
    pub fn new(ext: Extension, stdin: Pipe, stdout: Pipe) -> Process {
        Process {
            ext,
            stdin,
            stdout,
            events: VecDeque::new(),
            exits: Vec::new(),
            running: true,
            end_read: false,
        }
    }

    /// The Core's driver writes `bytes` to the process's stdin (lost once it is gone).
    pub fn write_stdin(&mut self, bytes: &[u8]) {
        if self.running {
            self.stdin.bytes.extend_from_slice(bytes);
        }
    }

    /// The Core's driver closes the process's stdin.
    pub fn close_stdin(&mut self) {
        self.stdin.closed = true;
    }

    /// The process is gone: what was in flight to it is lost.
    pub fn stop(&mut self) {
        self.running = false;
        self.stdin.bytes.clear();
    }

    /// Runs the endpoint's loop until it waits, recording what it reports. Returns
    /// whether it had anything to do.
    ///
    /// # Panics
    ///
    /// If the endpoint never waits.
    pub fn poll(&mut self) -> bool {
        let mut busy = false;
        for _ in 0..100_000 {
            match self.ext.poll_output() {
                extension::Output::Transmit(bytes) => {
                    if self.running {
                        self.stdout.bytes.extend_from_slice(bytes);
                    }
                }
                extension::Output::Event(event) => self.events.push_back(event),
                extension::Output::Exit { code } => self.exits.push(code),
                extension::Output::Wait => return busy,
            }
            busy = true;
        }
        panic!("the extension never waited");
    }

    /// The endpoint reads up to `max` bytes of its stdin (at least one). Returns
    /// whether it read any.
    pub fn read_stdin(&mut self, max: usize) -> bool {
        let ext = &mut self.ext;
        self.running
            && self.stdin.read(max, |chunk| {
                ext.handle_input(extension::Input::Stdin(chunk))
            })
    }

    /// The endpoint reads its stdin's next chunk. Returns whether it read any.
    pub fn read_stdin_chunk(&mut self) -> bool {
        let ext = &mut self.ext;
        self.running
            && self
                .stdin
                .read_chunk(|chunk| ext.handle_input(extension::Input::Stdin(chunk)))
    }

    /// Once stdin is closed and read to its end, the endpoint reads the end of its
    /// input (once). Returns whether it did.
    pub fn read_stdin_end(&mut self) -> bool {
        if self.running && self.stdin.closed && self.stdin.bytes.is_empty() && !self.end_read {
            self.end_read = true;
            self.ext.handle_input(extension::Input::StdinClosed);
            true
        } else {
            false
        }
    }

    /// Takes the endpoint's events, oldest first.
    pub fn take_events(&mut self) -> Vec<extension::Event> {
        self.events.drain(..).collect()
    }
}

/// A Core, its extension process, the clock, and what the Core reported.
pub struct Pair {
    /// The Core endpoint.
    pub core: Core,
    /// The extension process on the other side.
    pub process: Process,
    /// The simulated clock, handed to the Core with every input.
    pub now: Instant,
    /// How far the clock moves for each round of [`Pair::drive`] that did something.
    pub tick: Duration,
    /// The deadline the Core last asked for.
    pub deadline: Option<Instant>,
    /// The Core's events, oldest first, for the test to look at or take.
    pub core_events: Vec<host::Event>,
    /// How many times the Core said `Kill`.
    pub kills: usize,
    /// How many times the Core said `CloseStdin`.
    pub stdin_closes: usize,
    /// The exit of the process was handed to the Core (`StdoutClosed`, `Exited`).
    pub exit_reported: bool,
    /// The process was killed.
    killed: bool,
}

impl Pair {
    /// `core` and `ext` back to back, every byte handed over as soon as it is written.
    pub fn new(core: Core, ext: Extension) -> Pair {
        Pair::with_pipes(core, ext, Pipe::whole(), Pipe::whole())
    }

    /// `core` and `ext` back to back, the bytes to the extension and to the Core
    /// handed over in chunks as these pipes say.
    pub fn with_pipes(core: Core, ext: Extension, to_ext: Pipe, to_core: Pipe) -> Pair {
        Pair {
            core,
            process: Process::new(ext, to_ext, to_core),
            now: Instant::ZERO,
            tick: Duration::from_millis(1),
            deadline: None,
            core_events: Vec::new(),
            kills: 0,
            stdin_closes: 0,
            exit_reported: false,
            killed: false,
        }
    }

    /// Runs the Core's loop until it waits, recording what it reports and carrying out
    /// its decisions. Returns whether it had anything to do.
    ///
    /// # Panics
    ///
    /// If the Core never waits.
    pub fn poll_core(&mut self) -> bool {
        let mut busy = false;
        for _ in 0..100_000 {
            match self.core.poll_output() {
                host::Output::Transmit(bytes) => self.process.write_stdin(bytes),
                host::Output::Event(event) => self.core_events.push(event),
                host::Output::CloseStdin => {
                    self.stdin_closes += 1;
                    self.process.close_stdin();
                }
                host::Output::Kill => {
                    self.kills += 1;
                    self.killed = true;
                    self.process.stop();
                }
                host::Output::Wait(deadline) => {
                    self.deadline = deadline;
                    return busy;
                }
            }
            busy = true;
        }
        panic!("the Core never waited");
    }

    /// The Core reads the next chunk of the process's stdout, or, once the process is
    /// gone and its stdout read, the end and the exit (once). Returns whether it read
    /// anything.
    pub fn core_reads(&mut self) -> bool {
        let (core, now) = (&mut self.core, self.now);
        let read = self
            .process
            .stdout
            .read_chunk(|chunk| core.handle_input(now, host::Input::Stdout(chunk)));
        if read {
            return true;
        }
        let exited = !self.process.exits.is_empty() || self.killed;
        if exited && !self.exit_reported {
            self.exit_reported = true;
            self.process.stop();
            let code = match self.killed {
                true => None,
                false => self.process.exits.first().copied(),
            };
            self.core.handle_input(self.now, host::Input::StdoutClosed);
            self.core
                .handle_input(self.now, host::Input::Exited { code });
            return true;
        }
        false
    }

    /// One round: both endpoints polled, a chunk handed each way, and the Core's timer
    /// fired if the clock has reached its deadline. Returns whether anything happened.
    pub fn step(&mut self) -> bool {
        let mut busy = self.poll_core();
        busy |= self.process.poll();
        if !self.process.exits.is_empty() && self.process.running {
            // The process has exited: it reads nothing more.
            self.process.stop();
        }
        busy |= self.process.read_stdin_chunk() || self.process.read_stdin_end();
        busy |= self.core_reads();
        if self.deadline.is_some_and(|deadline| self.now >= deadline) {
            self.deadline = None;
            self.core.handle_input(self.now, host::Input::Timeout);
            busy = true;
        }
        busy
    }

    /// Runs both endpoints until neither has anything to do and no byte is in flight;
    /// the clock moves by `tick` for every round that did something.
    ///
    /// # Panics
    ///
    /// If they never settle.
    pub fn drive(&mut self) {
        for _ in 0..100_000 {
            if !self.step() {
                return;
            }
            self.now = self.now + self.tick;
        }
        panic!("the pair never settled");
    }

    /// Moves the clock by `by`, then drives.
    pub fn advance(&mut self, by: Duration) {
        self.now = self.now + by;
        self.drive();
    }

    /// Moves the clock to the deadline the Core asked for, if any, then drives.
    /// Returns whether there was one.
    pub fn advance_to_deadline(&mut self) -> bool {
        match self.deadline {
            Some(deadline) => {
                self.now = self.now.max(deadline);
                self.drive();
                true
            }
            None => false,
        }
    }

    /// Takes the Core's events, oldest first.
    pub fn take_core_events(&mut self) -> Vec<host::Event> {
        self.core_events.drain(..).collect()
    }

    /// How `call` ended, if the Core has reported it (and not yet been taken).
    pub fn ended(&self, call: CallId) -> Option<&Result<Reply, CallError>> {
        self.core_events.iter().find_map(|event| match event {
            host::Event::CallEnded { call: c, result } if *c == call => Some(result),
            _ => None,
        })
    }
}
