//! Throughput of every layer on protocol-shaped traffic, against a plain byte scan.
//!
//! Run with `cargo bench --bench throughput` (set `DHARA_BENCH_MB=2` for a quick run;
//! `DHARA_BENCH_TSV=1` prints tab-separated rows, which `benches/compare.sh` reads).
//! Seven shapes of traffic are generated in-process, the same bytes on every run
//! (`throughput/traffic.rs`). For each shape, after a warm-up, the median of several
//! repetitions is printed as a markdown table, for:
//!
//! - `floor`: every byte read once, a word at a time (rotate-and-XOR folding `u64`s), the
//!   speed of a plain scalar pass over the bytes on this machine, in this run;
//! - (a) `json::Parser::parse`: each line to an owned [`json::Value`], with one
//!   parser (and so its scratch space) for all the lines;
//! - (b) `rpc::decode_view`: each line as an endpoint decodes it
//!   (`rpc::decode_view`, expecting the protocol's methods): the envelope
//!   (`jsonrpc`, `id`, `method`) read without building a tree, the whole line
//!   validated, `params` / `result` / `error.data` left as `json::RawValue`s (checked
//!   slices of the line); and, for comparison, `rpc::decode`, the same decoder
//!   building those payloads as owned `Value`s;
//! - (c) `json::write_value` of the values from (a), and `rpc::write_message` of
//!   the messages from (b), each into one reused buffer;
//! - (d) `frame::LineDecoder` fed the stream in 64 KiB chunks;
//! - (e) `tools/execute` round trips: `host::Core` writes the request, the bytes go
//!   into `extension::Extension`, which hands out the call, gets the answer (with a
//!   `progress` first where the shape has one) and writes the response, and those
//!   bytes go back into the Core until it reports `CallEnded`. Messages/s there are
//!   calls/s; MB/s counts the bytes both endpoints wrote.
//!
//! Every row is also given as a ratio to the floor (measured right before each
//! repetition), so runs on noisy machines stay comparable, and (a), (b), (c) and (e)
//! with the heap allocations per message. Times are the thread's CPU time where the
//! system gives it. `docs/performance.md` explains the figures.

// A counting global allocator and the process's CPU time need unsafe code; the
// helpers are `pub` to be shared by this benchmark's modules, not exported.
#![allow(unsafe_code, unreachable_pub)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use dhara_protocol::extension::{self, Extension, ServerInfo};
use dhara_protocol::frame::{Frame, LineDecoder};
use dhara_protocol::host::{self, CallId, Core, Reply};
use dhara_protocol::json::{self, Object, Value};
use dhara_protocol::message::{InitializeParams, Progress, Tool, ToolResult, method};
use dhara_protocol::rpc::{self, DecodeOptions, Incoming, IncomingView, Message};
use dhara_protocol::time;

#[path = "throughput/traffic.rs"]
mod traffic;

use traffic::Traffic;

// ---- Counting allocations --------------------------------------------------------

/// The system allocator, counting how often it is asked for memory.
///
/// This and the clock below are the only `unsafe` code in the project, and they are
/// in this benchmark binary, not in the library (which forbids it). `GlobalAlloc` is an unsafe trait; these
/// methods only forward to `System` with the caller's own arguments, so they keep
/// exactly `System`'s guarantees.
struct CountingAllocator;

/// Calls to `alloc`, `alloc_zeroed` and `realloc` (each is a trip to the allocator).
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

/// Counts one allocation. The benchmark is single-threaded, so a plain load and
/// store (no locked read-modify-write) is exact and keeps the counter cheap.
fn count_allocation() {
    ALLOCATIONS.store(ALLOCATIONS.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
}

unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_allocation();
        // SAFETY: forwarded unchanged; the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_allocation();
        // SAFETY: forwarded unchanged; the caller upholds `alloc_zeroed`'s contract.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_allocation();
        // SAFETY: forwarded unchanged; `ptr` came from this allocator, i.e. `System`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged; `ptr` came from this allocator, i.e. `System`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

// ---- Measuring -----------------------------------------------------------------------

/// One timed repetition of a pass.
#[derive(Clone, Copy)]
struct Sample {
    elapsed: Duration,
    /// Allocations during the timed part.
    allocations: u64,
    /// Bytes the pass went through (read, or written for serialization).
    bytes: usize,
    /// Messages (lines), or calls for round trips.
    messages: usize,
}

/// The start of the timed part of a pass.
struct Mark {
    started: Instant,
    cpu: Option<Duration>,
    allocations: u64,
}

impl Mark {
    fn now() -> Mark {
        let (started, cpu) = (Instant::now(), thread_cpu_time());
        Mark {
            started,
            cpu,
            allocations: ALLOCATIONS.load(Ordering::Relaxed),
        }
    }

    /// The time since the mark: time on the CPU where the system tells it, so that
    /// other processes sharing the cores do not count; else wall-clock time.
    fn sample(self, bytes: usize, messages: usize) -> Sample {
        let allocations = ALLOCATIONS.load(Ordering::Relaxed) - self.allocations;
        let elapsed = match (self.cpu, thread_cpu_time()) {
            (Some(start), Some(end)) => end.saturating_sub(start),
            _ => self.started.elapsed(),
        };
        Sample {
            elapsed,
            allocations,
            bytes,
            messages,
        }
    }
}

/// The time this thread has spent on a CPU (`CLOCK_THREAD_CPUTIME_ID`), on 64-bit
/// Linux; `None` elsewhere, where wall-clock time is used.
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
fn thread_cpu_time() -> Option<Duration> {
    /// `struct timespec` on 64-bit Linux.
    #[repr(C)]
    struct Timespec {
        seconds: i64,
        nanoseconds: i64,
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    unsafe extern "C" {
        /// From the C library std already links.
        fn clock_gettime(clock: i32, time: *mut Timespec) -> i32;
    }
    let mut time = Timespec {
        seconds: 0,
        nanoseconds: 0,
    };
    // SAFETY: `time` is a valid, writable `struct timespec` for the whole call.
    if unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut time) } != 0 {
        return None;
    }
    Some(Duration::new(
        u64::try_from(time.seconds).ok()?,
        u32::try_from(time.nanoseconds).ok()?,
    ))
}

#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
fn thread_cpu_time() -> Option<Duration> {
    None
}

/// A pass's median repetition, and its median speed as a ratio to the floor.
#[derive(Clone, Copy)]
struct Measured {
    sample: Sample,
    ratio_to_floor: f64,
}

/// Runs `pass` once to warm up, then `repetitions` times, each right after a run of
/// the floor on the same bytes, so a busy machine slows both alike; the median
/// repetition by time, and the median of the per-repetition ratios.
fn measure(t: &Traffic, repetitions: usize, mut pass: impl FnMut() -> Sample) -> Measured {
    black_box(pass());
    let mut samples = Vec::with_capacity(repetitions);
    let mut ratios = Vec::with_capacity(repetitions);
    for _ in 0..repetitions {
        let floor = floor(t);
        let sample = pass();
        ratios.push(megabytes_per_second(&sample) / megabytes_per_second(&floor));
        samples.push(sample);
    }
    samples.sort_by_key(|s| s.elapsed);
    ratios.sort_by(f64::total_cmp);
    Measured {
        sample: samples[repetitions / 2],
        ratio_to_floor: ratios[repetitions / 2],
    }
}

// ---- The passes ---------------------------------------------------------------------

/// The read size a runtime would typically use on a pipe.
const CHUNK_BYTES: usize = 64 * 1024;

/// The floor: every byte read once, a word at a time. Each word is folded into a
/// running hash (rotate, then XOR), a serial chain the compiler cannot turn into
/// SIMD, so this is the speed of a plain scalar pass over the bytes.
#[inline(never)] // kept whole, so a profiler finds each pass by name
fn floor(t: &Traffic) -> Sample {
    let mark = Mark::now();
    let mut words = t.bytes.chunks_exact(8);
    let mut fold = 0u64;
    for word in &mut words {
        let mut w = [0; 8];
        w.copy_from_slice(word);
        fold = fold.rotate_left(5) ^ u64::from_le_bytes(w);
    }
    for &b in words.remainder() {
        fold ^= u64::from(b);
    }
    black_box(fold);
    mark.sample(t.bytes.len(), t.lines.len())
}

/// (a) Each line to an owned `Value` (and dropped), by one parser, made before the
/// timer starts as an endpoint makes its own once.
#[inline(never)] // kept whole, so a profiler finds each pass by name
fn parse(t: &Traffic) -> Sample {
    let mut parser = json::Parser::new();
    let mark = Mark::now();
    for line in t.lines() {
        match parser.parse(line) {
            Ok(value) => drop(black_box(value)),
            Err(e) => panic!("{}: a generated line does not parse: {e}", t.name),
        }
    }
    mark.sample(t.bytes.len(), t.lines.len())
}

/// (b) Each line as an endpoint decodes it (and dropped): the envelope checked and
/// read, the method matched against the protocol's, the payloads checked and left
/// as slices of the line.
#[inline(never)] // kept whole, so a profiler finds each pass by name
fn decode_view(t: &Traffic) -> Sample {
    let mark = Mark::now();
    for line in t.lines() {
        match rpc::decode_view(line, DecodeOptions::DEFAULT.expecting(method::ALL)) {
            IncomingView::Single(Ok(message)) => drop(black_box(message)),
            other => panic!("{}: a generated line is not a message: {other:?}", t.name),
        }
    }
    mark.sample(t.bytes.len(), t.lines.len())
}

/// (b) Each line to an owned message, payloads built as `Value`s (and dropped).
#[inline(never)] // kept whole, so a profiler finds each pass by name
fn decode(t: &Traffic) -> Sample {
    let mark = Mark::now();
    for line in t.lines() {
        match rpc::decode(line, DecodeOptions::DEFAULT) {
            Incoming::Single(Ok(message)) => drop(black_box(message)),
            other => panic!("{}: a generated line is not a message: {other:?}", t.name),
        }
    }
    mark.sample(t.bytes.len(), t.lines.len())
}

/// (c) `json::write_value` of each value into one reused buffer.
#[inline(never)] // kept whole, so a profiler finds each pass by name
fn write_values(values: &[Value], out: &mut Vec<u8>) -> Sample {
    let mark = Mark::now();
    let mut bytes = 0;
    for value in values {
        out.clear();
        json::write_value(value, out);
        bytes += black_box(&*out).len();
    }
    mark.sample(bytes, values.len())
}

/// (c) `rpc::write_message` of each message into one reused buffer.
#[inline(never)] // kept whole, so a profiler finds each pass by name
fn write_messages(messages: &[Message], out: &mut Vec<u8>) -> Sample {
    let mark = Mark::now();
    let mut bytes = 0;
    for message in messages {
        out.clear();
        rpc::write_message(message, out);
        bytes += black_box(&*out).len();
    }
    mark.sample(bytes, messages.len())
}

/// (d) The stream framed from 64 KiB reads, each drained at once.
#[inline(never)] // kept whole, so a profiler finds each pass by name
fn frame(t: &Traffic) -> Sample {
    let mark = Mark::now();
    let mut decoder = LineDecoder::new();
    let mut lines = 0;
    for chunk in t.bytes.chunks(CHUNK_BYTES) {
        decoder.push(chunk);
        while let Some(frame) = decoder.next_frame() {
            match frame {
                Frame::Line(line) => {
                    black_box(line);
                    lines += 1;
                }
                other => panic!("{}: unexpected frame {other:?}", t.name),
            }
        }
    }
    decoder.end();
    assert_eq!(decoder.next_frame(), None, "the stream ends with a newline");
    assert_eq!(lines, t.lines.len());
    mark.sample(t.bytes.len(), lines)
}

// ---- Round trips ------------------------------------------------------------------

/// One `tools/execute` call of a round-trip run: what the Core sends, and what the
/// extension answers.
#[derive(Clone)]
struct Call {
    /// One of the traffic's tool names: a copy made for each call before the timer
    /// starts costs nothing to drop inside it.
    tool_name: &'static str,
    input: Value,
    progress: Option<String>,
    result: ToolResult,
}

/// The tools both endpoints know; every generated request calls one of them.
fn tools() -> Vec<Tool> {
    let schema = json::parse(
        br#"{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}"#,
    )
    .expect("the schema is JSON");
    traffic::TOOL_NAMES
        .iter()
        .map(|name| Tool::new(*name, "A tool of the benchmark", schema.clone()))
        .collect()
}

/// The calls a shape's lines describe: its requests, progress and results, in order.
/// A call starts at each request, or at a progress or result line that has no call
/// to join; it carries at most one progress line (a request's further ones are left
/// out), and a call without a result line gets a short `ok` answer.
fn calls_of(messages: &[Message]) -> Vec<Call> {
    let new_call = || Call {
        tool_name: traffic::TOOL_NAMES[0],
        input: Value::Object(Object::from_iter([("path", Value::from("src/lib.rs"))])),
        progress: None,
        result: ToolResult::text("ok"),
    };
    // The last call, and whether it has been given its progress line and its result.
    let mut open: Option<(Call, bool, bool)> = None;
    let mut from_request = false;
    let mut calls = Vec::new();
    for message in messages {
        match message {
            Message::Request(request) if request.method == "tools/execute" => {
                calls.extend(open.take().map(|(call, ..)| call));
                let params = request.params.clone().unwrap_or_default();
                let mut call = new_call();
                let name = params["toolName"].as_str().unwrap_or_default();
                call.tool_name = traffic::TOOL_NAMES
                    .iter()
                    .find(|known| **known == name)
                    .expect("the traffic calls its own tools");
                call.input = params["input"].clone();
                open = Some((call, false, false));
                from_request = true;
            }
            Message::Notification(n) if n.method == "progress" => {
                if from_request && open.as_ref().is_some_and(|(_, _, has_result)| !has_result) {
                    continue;
                }
                if open
                    .as_ref()
                    .is_none_or(|(_, has_progress, _)| *has_progress)
                {
                    calls.extend(open.take().map(|(call, ..)| call));
                    open = Some((new_call(), false, false));
                }
                if let Some((call, has_progress, _)) = &mut open {
                    let progress = Progress::from_value(&n.params.clone().unwrap_or_default());
                    call.progress = progress.ok().map(|p| p.message);
                    *has_progress = true;
                }
            }
            Message::Response(response) => {
                let Ok(result) =
                    ToolResult::from_value(&response.outcome.clone().unwrap_or_default())
                else {
                    continue; // not a tools/execute result (the initialize result)
                };
                if open.as_ref().is_none_or(|(_, _, has_result)| *has_result) {
                    calls.extend(open.take().map(|(call, ..)| call));
                    open = Some((new_call(), false, false));
                    from_request = false;
                }
                if let Some((call, _, has_result)) = &mut open {
                    call.result = result;
                    *has_result = true;
                }
            }
            _ => {}
        }
    }
    calls.extend(open.map(|(call, ..)| call));
    calls
}

/// Both endpoints, initialized with each other.
fn connected_pair() -> (Core, Extension) {
    let now = time::Instant::ZERO;
    let mut core = Core::new(host::Config::default());
    let mut ext = Extension::new(ServerInfo::new("bench", "1.0"), tools());
    core.initialize(now, InitializeParams::new("/bench"))
        .expect("a new Core initializes");
    let mut wire = Wire::default();
    wire.core_to_extension(&mut core, &mut ext, now);
    assert!(matches!(
        wire.extension_events.first(),
        Some(extension::Event::Initialized { .. })
    ));
    wire.extension_to_core(&mut core, &mut ext, now);
    assert!(matches!(
        wire.core_events.first(),
        Some(host::Event::CallEnded {
            result: Ok(Reply::Initialized(_)),
            ..
        })
    ));
    (core, ext)
}

/// What crossed between the endpoints.
#[derive(Default)]
struct Wire {
    bytes: usize,
    core_events: Vec<host::Event>,
    extension_events: Vec<extension::Event>,
}

impl Wire {
    /// Everything the Core writes goes to the extension, until the Core waits; then
    /// the extension's events are collected until it waits.
    fn core_to_extension(&mut self, core: &mut Core, ext: &mut Extension, now: time::Instant) {
        self.core_events.clear();
        loop {
            match core.poll_output() {
                host::Output::Transmit(bytes) => {
                    self.bytes += bytes.len();
                    ext.handle_input(extension::Input::Stdin(bytes));
                }
                host::Output::Event(event) => self.core_events.push(event),
                host::Output::Wait(_) => break,
                host::Output::Kill => panic!("the Core kills a healthy extension"),
                host::Output::CloseStdin => {}
            }
        }
        self.extension_to_core(core, ext, now);
    }

    /// Everything the extension writes goes to the Core, and the Core's events are
    /// collected until it waits.
    fn extension_to_core(&mut self, core: &mut Core, ext: &mut Extension, now: time::Instant) {
        self.extension_events.clear();
        loop {
            match ext.poll_output() {
                extension::Output::Transmit(bytes) => {
                    self.bytes += bytes.len();
                    core.handle_input(now, host::Input::Stdout(bytes));
                }
                extension::Output::Event(event) => self.extension_events.push(event),
                extension::Output::Wait => break,
                _ => panic!("the extension exits in the middle of a session"),
            }
        }
        loop {
            match core.poll_output() {
                host::Output::Event(event) => self.core_events.push(event),
                host::Output::Wait(_) => break,
                _ => panic!("the Core writes or kills while only reading"),
            }
        }
    }
}

/// (e) Every call of `calls` through both endpoints.
#[inline(never)] // kept whole, so a profiler finds each pass by name
fn round_trips(calls: &[Call]) -> Sample {
    let (mut core, mut ext) = connected_pair();
    // Each call's input and result move into the endpoints: copies made before timing.
    let mut work: Vec<Call> = calls.to_vec();
    let mut wire = Wire {
        core_events: Vec::with_capacity(4),
        extension_events: Vec::with_capacity(4),
        ..Wire::default()
    };
    let now = time::Instant::ZERO;
    let mark = Mark::now();
    for call in work.drain(..) {
        let id = core
            .execute(now, call.tool_name, call.input)
            .expect("the Core accepts the call");
        wire.core_to_extension(&mut core, &mut ext, now);
        let Some(extension::Event::Execute { request, .. }) = wire.extension_events.pop() else {
            panic!("the extension did not hand out the call");
        };
        if let Some(message) = &call.progress {
            ext.progress(request, message)
                .expect("the request is pending");
        }
        ext.respond(request, call.result)
            .expect("the request is pending");
        wire.extension_to_core(&mut core, &mut ext, now);
        check_ended(&wire.core_events, id);
    }
    mark.sample(wire.bytes, calls.len())
}

fn check_ended(events: &[host::Event], id: CallId) {
    match events.last() {
        Some(host::Event::CallEnded {
            call,
            result: Ok(Reply::Executed(_)),
        }) if *call == id => {}
        other => panic!("the call did not end with its result: {other:?}"),
    }
}

// ---- The table ----------------------------------------------------------------------

fn megabytes_per_second(s: &Sample) -> f64 {
    s.bytes as f64 / 1e6 / s.elapsed.as_secs_f64()
}

fn per_second(s: &Sample) -> f64 {
    s.messages as f64 / s.elapsed.as_secs_f64()
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let megabytes = env_usize("DHARA_BENCH_MB", 16);
    let repetitions = env_usize("DHARA_BENCH_REPS", 5).max(1);
    let shape_filter = std::env::var("DHARA_BENCH_SHAPE").unwrap_or_default();
    let pass_filter = std::env::var("DHARA_BENCH_PASS").unwrap_or_default();
    let clock = match thread_cpu_time() {
        Some(_) => "this thread's time on the CPU (CLOCK_THREAD_CPUTIME_ID)",
        None => "wall-clock time",
    };
    // Tab-separated rows for scripts (benches/compare.sh), with the exact counts.
    let tsv = std::env::var_os("DHARA_BENCH_TSV").is_some_and(|v| v != "0");
    if tsv {
        println!("shape\tpass\tbytes\tmessages\tseconds\tallocations\tratio_to_floor");
    } else {
        println!("Timed by {clock}.");
        println!(
            "{megabytes} MB per shape, median of {repetitions} after a warm-up \
             (set DHARA_BENCH_MB, DHARA_BENCH_REPS; DHARA_BENCH_SHAPE and DHARA_BENCH_PASS \
             keep the rows whose names contain them; DHARA_BENCH_TSV=1 for tab-separated \
             rows)\n"
        );
        println!("| shape | pass | MB/s | messages/s | × floor | allocations/message |");
        println!("|---|---|---:|---:|---:|---:|");
    }
    for &name in traffic::SHAPES {
        if !name.contains(shape_filter.as_str()) {
            continue;
        }
        let t = traffic::generate(name, megabytes * 1_000_000);
        let values: Vec<Value> = t.lines().map(|l| json::parse(l).expect("JSON")).collect();
        let messages: Vec<Message> = t
            .lines()
            .map(|l| match rpc::decode(l, DecodeOptions::DEFAULT) {
                Incoming::Single(Ok(m)) => m,
                other => panic!("not a message: {other:?}"),
            })
            .collect();
        let calls = calls_of(&messages);
        // Output buffers with room for the longest line, as an endpoint's would have.
        let longest = t.lines.iter().map(|r| r.len()).max().unwrap_or(0) + 64;
        let (mut out, mut out_messages) =
            (Vec::with_capacity(longest), Vec::with_capacity(longest));

        // Each pass: its name, whether its allocations are printed, and the pass.
        let passes: [(&str, bool, &mut dyn FnMut() -> Sample); 8] = [
            ("floor (word-at-a-time scan)", false, &mut || floor(&t)),
            ("(a) json::Parser::parse", true, &mut || parse(&t)),
            ("(b) rpc::decode_view", true, &mut || decode_view(&t)),
            ("(b) rpc::decode, owned payloads", true, &mut || decode(&t)),
            ("(c) json::write_value", true, &mut || {
                write_values(&values, &mut out)
            }),
            ("(c) rpc::write_message", true, &mut || {
                write_messages(&messages, &mut out_messages)
            }),
            ("(d) frame::LineDecoder, 64 KiB", false, &mut || frame(&t)),
            ("(e) tools/execute round trip", true, &mut || {
                round_trips(&calls)
            }),
        ];
        for (what, allocations, pass) in passes {
            if !what.contains(pass_filter.as_str()) || (what.starts_with("(e)") && calls.is_empty())
            {
                continue;
            }
            let measured = measure(&t, repetitions, pass);
            let sample = &measured.sample;
            if tsv {
                println!(
                    "{name}\t{what}\t{}\t{}\t{:.9}\t{}\t{:.4}",
                    sample.bytes,
                    sample.messages,
                    sample.elapsed.as_secs_f64(),
                    if allocations {
                        sample.allocations.to_string()
                    } else {
                        String::new()
                    },
                    measured.ratio_to_floor,
                );
                continue;
            }
            let allocations = if allocations {
                format!("{:.1}", sample.allocations as f64 / sample.messages as f64)
            } else {
                String::new()
            };
            println!(
                "| {name} | {what} | {:.0} | {:.0} | {:.3} | {allocations} |",
                megabytes_per_second(sample),
                per_second(sample),
                measured.ratio_to_floor,
            );
        }
    }
}
