//! Heap use of one complete `tools/execute` round trip on each endpoint, counted by a
//! global allocator that wraps the system one.
//!
//! The Core and the Extension are wired back to back in memory, on the shared `Pair`
//! (`tests/support/pair.rs`). After a warm-up round trip (so the output buffers, the
//! line decoders and the queues have grown), one more round trip is counted, each
//! endpoint on its own:
//!
//! * Core: `execute` -> `Transmit` -> the reply's bytes in -> `CallEnded` -> `Wait`.
//! * Extension: the request's bytes in -> `Execute` -> `respond` -> `Transmit` -> `Wait`.
//!
//! What the test does around the endpoints (building the tool input and the result,
//! copying bytes between them into buffers with room) does not allocate, or is done
//! outside the counted parts. Run `cargo test --test alloc_counts -- --nocapture` to
//! see the counts.

// Helpers are `pub` to be shared by this binary's modules, not exported.
#![allow(unreachable_pub)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use dhara_protocol::extension::{self, Extension, ServerInfo};
use dhara_protocol::host::{self, Core, Reply};
use dhara_protocol::json::{self, Object, Value};
use dhara_protocol::message::{Content, InitializeParams, Tool, ToolResult};

#[path = "support/pair.rs"]
mod pair;
use pair::Pair;

// ---- The counting allocator ------------------------------------------------------

thread_local! {
    /// Allocations and reallocations made by this thread, and the bytes asked for.
    /// Per thread, so the test harness's own threads do not disturb the counts. A
    /// `const` thread-local with no destructor never allocates itself.
    static COUNTS: Cell<Counts> = const { Cell::new(Counts::ZERO) };
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Counts {
    allocs: usize,
    reallocs: usize,
    bytes: usize,
}

impl Counts {
    const ZERO: Counts = Counts {
        allocs: 0,
        reallocs: 0,
        bytes: 0,
    };

    fn since(self, start: Counts) -> Counts {
        Counts {
            allocs: self.allocs - start.allocs,
            reallocs: self.reallocs - start.reallocs,
            bytes: self.bytes - start.bytes,
        }
    }

    fn add(self, other: Counts) -> Counts {
        Counts {
            allocs: self.allocs + other.allocs,
            reallocs: self.reallocs + other.reallocs,
            bytes: self.bytes + other.bytes,
        }
    }
}

fn record(realloc: bool, bytes: usize) {
    // `try_with`: during thread teardown the slot may be gone; those are not counted.
    let _ = COUNTS.try_with(|counts| {
        let mut c = counts.get();
        if realloc {
            c.reallocs += 1;
        } else {
            c.allocs += 1;
        }
        c.bytes += bytes;
        counts.set(c);
    });
}

/// The system allocator, counting.
struct Counting;

// SAFETY: every method passes its arguments unchanged to `System` and returns what
// it returns, so `System`'s guarantees are this allocator's. Counting touches only a
// thread-local `Cell` and never allocates.
#[allow(unsafe_code)] // a global allocator is unsafe to implement; it only counts
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record(false, layout.size());
        // SAFETY: the caller's contract for `alloc` is `System.alloc`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        record(false, layout.size());
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        record(true, new_size);
        // SAFETY: `ptr` and `layout` came from this allocator, that is from `System`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` and `layout` came from this allocator, that is from `System`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Runs `f` and returns what it allocated on this thread.
fn counted<R>(f: impl FnOnce() -> R) -> (R, Counts) {
    let start = COUNTS.with(Cell::get);
    let r = f();
    (r, COUNTS.with(Cell::get).since(start))
}

// ---- The two endpoints, back to back ---------------------------------------------

fn echo_tool() -> Tool {
    let schema = json::parse(
        br#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#,
    );
    Tool::new(
        "echo",
        "Return the text",
        schema.expect("the schema is JSON"),
    )
}

fn echo_input() -> Value {
    Value::Object(Object::from_iter([("text", Value::from("hello"))]))
}

/// What one round trip allocated, in its four parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RoundTrip {
    /// Core: `execute` -> `Transmit`.
    core_send: Counts,
    /// Core: the reply's bytes in -> `CallEnded` -> `Wait`.
    core_receive: Counts,
    /// Extension: the request's bytes in -> `Execute`.
    ext_receive: Counts,
    /// Extension: `respond` -> `Transmit` -> `Wait`.
    ext_send: Counts,
}

impl RoundTrip {
    fn core(&self) -> Counts {
        self.core_send.add(self.core_receive)
    }

    fn ext(&self) -> Counts {
        self.ext_receive.add(self.ext_send)
    }
}

/// The shared pair past `initialize`, with room made up front in its pipes and
/// event queues, so that handing bytes and events over never allocates.
fn initialized() -> Pair {
    let mut pair = Pair::new(
        Core::new(host::Config::default()),
        Extension::new(ServerInfo::new("alloc-counts", "1.0.0"), vec![echo_tool()]),
    );
    pair.process.stdin.bytes.reserve(4096);
    pair.process.stdout.bytes.reserve(4096);
    pair.process.events.reserve(16);
    pair.core_events.reserve(16);
    pair.core
        .initialize(pair.now, InitializeParams::new("/work"))
        .expect("initialize is sent");
    pair.drive();
    match pair.process.events.pop_front() {
        Some(extension::Event::Initialized { .. }) => {}
        other => panic!("expected the Initialized event, got {other:?}"),
    }
    assert!(pair.process.events.is_empty());
    match pair.core_events.pop() {
        Some(host::Event::CallEnded {
            result: Ok(Reply::Initialized(_)),
            ..
        }) => {}
        other => panic!("expected the initialize reply, got {other:?}"),
    }
    assert!(pair.core_events.is_empty());
    pair
}

/// One `tools/execute` round trip of `echo`, counting each side's allocations. The
/// input and the result are built before the counted parts: they are the
/// application's values, moved into the endpoints.
fn round_trip(pair: &mut Pair) -> RoundTrip {
    let input = echo_input();
    let result = ToolResult::text("hello");

    // Core: execute -> Transmit.
    let (_, core_send) = counted(|| {
        pair.core
            .execute(pair.now, "echo", input)
            .expect("echo is a tool");
        assert!(pair.poll_core(), "expected the Core to transmit");
    });
    assert!(
        !pair.process.stdin.bytes.is_empty(),
        "the request is written"
    );
    assert!(pair.core_events.is_empty());

    // Extension: request in -> Execute.
    let (event, ext_receive) = counted(|| {
        assert!(pair.process.read_stdin(usize::MAX));
        pair.process.poll();
        pair.process.events.pop_front()
    });
    let Some(extension::Event::Execute {
        request, tool_name, ..
    }) = &event
    else {
        panic!("expected the Execute event, got {event:?}");
    };
    assert_eq!(tool_name, "echo");
    assert!(pair.process.events.is_empty());
    assert!(pair.process.stdout.bytes.is_empty());

    // Extension: respond -> Transmit -> Wait.
    let request = *request;
    let (_, ext_send) = counted(|| {
        pair.process
            .ext
            .respond(request, result)
            .expect("the request is pending");
        assert!(pair.process.poll(), "expected the Extension to transmit");
    });
    assert!(
        !pair.process.stdout.bytes.is_empty(),
        "the reply is written"
    );
    assert!(pair.process.events.is_empty());

    // Core: reply in -> CallEnded -> Wait.
    let (ended, core_receive) = counted(|| {
        assert!(pair.core_reads());
        pair.poll_core();
        pair.core_events.pop()
    });
    assert!(pair.core_events.is_empty());
    assert!(
        pair.process.stdin.bytes.is_empty(),
        "the Core wrote nothing"
    );
    match &ended {
        Some(host::Event::CallEnded {
            result: Ok(Reply::Executed(result)),
            ..
        }) => assert_eq!(
            result.content,
            vec![Content::Text {
                text: "hello".into()
            }]
        ),
        other => panic!("expected the echo result, got {other:?}"),
    }
    drop(ended);

    RoundTrip {
        core_send,
        core_receive,
        ext_receive,
        ext_send,
    }
}

/// The bounds: exactly what was measured when this test was written (in the test
/// profile), with a small margin on the bytes only. Allocations are counted with
/// `alloc` and `alloc_zeroed`; growing a buffer would show as a `realloc`.
///
/// Core, sending (0): the request is written from the caller's tool name and input
/// straight into the output buffer, the input checked against the schema in place.
/// Core, receiving (1): the response is decoded as a view of the line and the
/// `ToolResult` read straight from its text: the content list (1; the text of its
/// one item, `"hello"`, is kept inline).
const CORE_MAX: Counts = Counts {
    allocs: 1,
    reallocs: 0,
    bytes: 64 + 64,
};

/// Extension, receiving (1): the request is decoded as a view of the line and the
/// `ExecuteParams` read straight from its text: the input handed to the tool as a
/// `Value`: its object's member list (1; the member's name and its short string are
/// kept inline, as is the tool name handed out in `Event::Execute`).
/// Extension, sending (0): the `ToolResult` is written straight into the output
/// buffer.
const EXTENSION_MAX: Counts = Counts {
    allocs: 1,
    reallocs: 0,
    bytes: 56 + 64,
};

fn within(counts: Counts, max: Counts) -> bool {
    counts.allocs <= max.allocs && counts.reallocs <= max.reallocs && counts.bytes <= max.bytes
}

#[test]
fn one_execute_round_trip_allocates_a_bounded_amount_on_each_side() {
    // One test function, so nothing else runs during the count (the counts are per
    // thread as well).
    let mut pair = initialized();
    let warm_up = round_trip(&mut pair);
    let counted = round_trip(&mut pair);
    let next = round_trip(&mut pair);

    println!("one tools/execute round trip, after a warm-up one:");
    println!(
        "  Core:      {:?} (send {:?}, receive {:?})",
        counted.core(),
        counted.core_send,
        counted.core_receive
    );
    println!(
        "  Extension: {:?} (receive {:?}, send {:?})",
        counted.ext(),
        counted.ext_receive,
        counted.ext_send
    );
    println!(
        "  (warm-up: Core {:?}, Extension {:?})",
        warm_up.core(),
        warm_up.ext()
    );

    // Steady state: once the buffers have grown, every round trip costs the same and
    // grows nothing.
    assert_eq!(counted, next, "round trips after the warm-up differ");
    assert!(
        within(counted.core(), CORE_MAX),
        "Core: {:?} is over {CORE_MAX:?}",
        counted.core()
    );
    assert!(
        within(counted.ext(), EXTENSION_MAX),
        "Extension: {:?} is over {EXTENSION_MAX:?}",
        counted.ext()
    );
}
