//! A deterministic simulation of a fleet of scripted extensions.
//!
//! Three extensions whose tool sets overlap (so bare names clash, and a restart or a
//! `tools/list` notification changes what clashes), one with a name LLM APIs reject.
//! proptest draws the limits and restart policies, how each process behaves (it
//! answers `initialize` or hangs, answers calls at once or when told, obeys
//! `shutdown` or must be killed), and a run of steps: calls by bare, qualified,
//! aliased, ambiguous and unknown names; answers of each kind; crashes (also during
//! a restart's `initialize`); failed starts; `tools/list` announcements; bytes handed
//! over in random chunks; bytes of an old process handed in under its key; restarts
//! asked for; and time passing by random steps or exactly to the fleet's deadline.
//!
//! After every poll, `fleet_support` checks:
//!
//! * every call ends exactly once, and a result is the one its own call's input
//!   asked for (the scripted result echoes the call's tag): no reply crosses calls
//!   or processes;
//! * no timer fires early: no timeout before the call's timeout, no kill before the
//!   grace after `shutdown`, no start before the backoff the policy gives, none
//!   after the breaker tripped; every deadline asked for is in the future;
//! * the breaker trips exactly when the policy says;
//! * the calls in flight and waiting stay within their limits, and add up to the
//!   calls not yet ended;
//! * the registry is what its `ToolsChanged` events said, every name offered is
//!   accepted by LLM APIs, unique, and resolves to its own tool;
//! * a process is only sent calls for tools it offers, nothing is written after its
//!   exit, and at the end, after `shutdown`, every call has ended and `Closed` came.
//!
//! The seed is fixed so CI runs the same cases every time; set `PROPTEST_RNG_SEED` to
//! explore others.

use crate::fleet_support;

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use core::time::Duration;

use dhara_protocol::fleet::{
    CallError, Config, Event, ExtensionConfig, ExtensionKey, Fleet, Next, RestartPolicy,
    RestartWhen, UsageError, alias,
};
use dhara_protocol::host;
use fleet_support::{Script, Shape, Sim};
use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, FileFailurePersistence, RngSeed};

const CASES: u32 = 256;

const NAMES: [&str; 3] = ["alpha", "beta", "gamma"];

/// Each extension's tool sets: a process declares one of them.
fn variants(ext: usize) -> &'static [&'static [&'static str]] {
    match ext {
        0 => &[&["read", "search", "my.tool"], &["read", "search"], &[]],
        1 => &[&["search", "write"], &["search", "write", "extra"]],
        _ => &[&["files.read", "write"], &["write"]],
    }
}

/// The names calls are made by.
fn call_names() -> Vec<String> {
    let mut names: Vec<String> = [
        "read",
        "search",
        "alpha__search",
        "beta__search",
        "my.tool",
        "write",
        "gamma__write",
        "beta__write",
        "extra",
        "files.read",
        "nothing",
        "alpha__write",
    ]
    .map(String::from)
    .to_vec();
    names.push(alias("my.tool"));
    names.push(alias("gamma__files.read"));
    names
}

/// What the cases exercised, summed over the run.
struct Tally {
    results: AtomicUsize,
    timeouts: AtomicUsize,
    exited: AtomicUsize,
    not_sent: AtomicUsize,
    refused: AtomicUsize,
    restarts: AtomicUsize,
    failed: AtomicUsize,
    kills: AtomicUsize,
    revived: AtomicUsize,
}

static TALLY: Tally = Tally {
    results: AtomicUsize::new(0),
    timeouts: AtomicUsize::new(0),
    exited: AtomicUsize::new(0),
    not_sent: AtomicUsize::new(0),
    refused: AtomicUsize::new(0),
    restarts: AtomicUsize::new(0),
    failed: AtomicUsize::new(0),
    kills: AtomicUsize::new(0),
    revived: AtomicUsize::new(0),
};

#[derive(Clone, Debug)]
struct ExtSettings {
    timeout_ms: u64,
    grace_ms: u64,
    max_in_flight: usize,
    on_next_call: bool,
    backoff_ms: u64,
    cap_ms: u64,
    max_exits: usize,
    window_ms: u64,
}

fn ext_settings() -> impl Strategy<Value = ExtSettings> {
    (
        (500u64..6000, 0u64..2000, 1usize..4, any::<bool>()),
        (
            1u64..2000,
            0u64..8000,
            prop_oneof![Just(0usize), 2usize..7],
            1000u64..30_000,
        ),
    )
        .prop_map(
            |(
                (timeout_ms, grace_ms, max_in_flight, on_next_call),
                (backoff_ms, cap_ms, max_exits, window_ms),
            )| ExtSettings {
                timeout_ms,
                grace_ms,
                max_in_flight,
                on_next_call,
                backoff_ms,
                cap_ms,
                max_exits,
                window_ms,
            },
        )
}

/// How one process behaves.
#[derive(Clone, Debug)]
struct Behaviour {
    answers_initialize: bool,
    answers_calls: bool,
    obeys_shutdown: bool,
    variant: usize,
}

fn behaviour() -> impl Strategy<Value = Behaviour> {
    (
        proptest::bool::weighted(0.85),
        proptest::bool::weighted(0.4),
        proptest::bool::weighted(0.7),
        0usize..3,
    )
        .prop_map(
            |(answers_initialize, answers_calls, obeys_shutdown, variant)| Behaviour {
                answers_initialize,
                answers_calls,
                obeys_shutdown,
                variant,
            },
        )
}

#[derive(Clone, Debug)]
enum Step {
    Execute {
        name: usize,
        timeout_ms: Option<u16>,
    },
    Cancel(usize),
    Answer {
        ext: usize,
        request: usize,
        shape: Shape,
    },
    Crash {
        ext: usize,
        code: Option<i32>,
        close_stdout_first: bool,
    },
    StartAnswer(bool),
    Announce {
        ext: usize,
        variant: usize,
    },
    Deliver {
        ext: usize,
        chunks: Vec<u16>,
    },
    /// Bytes of an old process, handed in under its key.
    Stale {
        ext: usize,
    },
    Restart {
        ext: usize,
    },
    /// Everything that can happen without time passing: starts answered, bytes
    /// handed over.
    Settle,
    Advance(u16),
    ToDeadline,
    Tick,
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        4 => Just(Shape::Good),
        1 => Just(Shape::ToolError),
        1 => Just(Shape::RpcError),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    let ext = 0usize..3;
    prop_oneof![
        8 => (any::<usize>(), proptest::option::weighted(0.2, 1u16..4000))
            .prop_map(|(name, timeout_ms)| Step::Execute { name, timeout_ms }),
        1 => any::<usize>().prop_map(Step::Cancel),
        6 => (ext.clone(), any::<usize>(), shape())
            .prop_map(|(ext, request, shape)| Step::Answer { ext, request, shape }),
        2 => (ext.clone(), proptest::option::of(-1i32..3), any::<bool>())
            .prop_map(|(ext, code, close_stdout_first)| Step::Crash { ext, code, close_stdout_first }),
        5 => proptest::bool::weighted(0.8).prop_map(Step::StartAnswer),
        1 => (ext.clone(), 0usize..3).prop_map(|(ext, variant)| Step::Announce { ext, variant }),
        6 => (ext.clone(), proptest::collection::vec(0u16..300, 1..5))
            .prop_map(|(ext, chunks)| Step::Deliver { ext, chunks }),
        1 => ext.clone().prop_map(|ext| Step::Stale { ext }),
        1 => ext.prop_map(|ext| Step::Restart { ext }),
        4 => Just(Step::Settle),
        3 => (0u16..3000).prop_map(Step::Advance),
        3 => Just(Step::ToDeadline),
        1 => Just(Step::Tick),
    ]
}

#[derive(Clone, Debug)]
struct Case {
    max_in_flight: usize,
    max_queued: usize,
    exts: Vec<ExtSettings>,
    behaviours: Vec<Behaviour>,
    steps: Vec<Step>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        1usize..8,
        0usize..6,
        proptest::collection::vec(ext_settings(), 3),
        proptest::collection::vec(behaviour(), 1..8),
        proptest::collection::vec(step(), 0..150),
    )
        .prop_map(
            |(max_in_flight, max_queued, exts, behaviours, steps)| Case {
                max_in_flight,
                max_queued,
                exts,
                behaviours,
                steps,
            },
        )
}

fn extension_config(s: &ExtSettings) -> ExtensionConfig {
    let when = match s.on_next_call {
        true => RestartWhen::OnNextCall,
        false => RestartWhen::AtOnce,
    };
    let policy = RestartPolicy::default()
        .when(when)
        .backoff(
            Duration::from_millis(s.backoff_ms),
            Duration::from_millis(s.cap_ms),
        )
        .max_exits(s.max_exits)
        .window(Duration::from_millis(s.window_ms));
    let host = host::Config::default()
        .timeout(Duration::from_millis(s.timeout_ms))
        .grace(Duration::from_millis(s.grace_ms));
    ExtensionConfig::default()
        .host(host)
        .restart(policy)
        .max_in_flight(s.max_in_flight)
}

fn run(case: &Case) -> Result<(), String> {
    let fleet = Fleet::new(
        Config::default()
            .max_in_flight(case.max_in_flight)
            .max_queued(case.max_queued),
    );
    let behaviours = case.behaviours.clone();
    let scripts = Box::new(
        move |process: dhara_protocol::fleet::ProcessKey, name: &str| {
            let ext = NAMES.iter().position(|n| *n == name).unwrap_or(0);
            let n = process.start() as usize * 3 + ext;
            let b = &behaviours[n % behaviours.len()];
            let variants = variants(ext);
            Script {
                tools: variants[b.variant % variants.len()]
                    .iter()
                    .map(|t| t.to_string())
                    .collect(),
                answers_initialize: b.answers_initialize,
                answers_calls: b.answers_calls,
                obeys_shutdown: b.obeys_shutdown,
            }
        },
    );
    let mut sim = Sim::new(fleet, scripts);
    let keys: Vec<ExtensionKey> = NAMES
        .iter()
        .zip(&case.exts)
        .map(|(name, s)| sim.add(name, extension_config(s)))
        .collect();
    let names = call_names();
    sim.poll()?;
    for step in &case.steps {
        match step {
            Step::Execute { name, timeout_ms } => {
                let name = &names[name % names.len()];
                let timeout = timeout_ms.map(|t| Duration::from_millis(t.into()));
                if let Err(UsageError::Refused(_)) = sim.execute(name, timeout)? {
                    TALLY.refused.fetch_add(1, Relaxed);
                }
            }
            Step::Cancel(k) => {
                let open: Vec<_> = sim
                    .calls
                    .keys()
                    .filter(|c| !sim.ended.contains_key(c))
                    .copied()
                    .collect();
                if let Some(&call) = open.get(k % open.len().max(1)) {
                    sim.fleet
                        .cancel(sim.now, call)
                        .map_err(|e| format!("an open call could not be cancelled: {e}"))?;
                    sim.poll()?;
                }
            }
            Step::Answer {
                ext,
                request,
                shape,
            } => {
                if let Some(process) = sim.current(keys[*ext]) {
                    process.answer(*request, *shape);
                }
            }
            Step::Crash {
                ext,
                code,
                close_stdout_first,
            } => {
                if let Some(process) = sim.current(keys[*ext]).map(|p| p.key) {
                    sim.exit(process, *code, *close_stdout_first)?;
                }
            }
            Step::StartAnswer(ok) => sim.answer_start(*ok)?,
            Step::Announce { ext, variant } => {
                let variants = variants(*ext);
                let tools = variants[variant % variants.len()]
                    .iter()
                    .map(|t| t.to_string())
                    .collect();
                if let Some(process) = sim.current(keys[*ext]) {
                    process.announce(tools);
                }
            }
            Step::Deliver { ext, chunks } => sim.deliver(keys[*ext], chunks)?,
            Step::Stale { ext } => {
                let old = sim
                    .procs
                    .values()
                    .rev()
                    .find(|p| p.key.extension() == keys[*ext] && p.exited)
                    .map(|p| p.key);
                if let Some(old) = old {
                    // Answers to the ids its successor uses, with a tag no call has.
                    for id in 1..4 {
                        let line = format!(
                            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"tag=0 stale\"}}]}}}}\n"
                        );
                        sim.stale(old, line.as_bytes())?;
                    }
                }
            }
            Step::Restart { ext } => {
                let restarted = sim.restart(keys[*ext])?;
                if restarted.is_ok() {
                    TALLY.revived.fetch_add(1, Relaxed);
                }
            }
            Step::Settle => sim.settle()?,
            Step::Advance(ms) => sim.advance(Duration::from_millis((*ms).into()))?,
            Step::ToDeadline => sim.until_deadline()?,
            Step::Tick => sim.advance(Duration::ZERO)?,
        }
        sim.after_step()?;
    }
    sim.finish()?;
    tally(&sim);
    Ok(())
}

fn tally(sim: &Sim) {
    for result in sim.ended.values() {
        let counter = match result {
            Ok(_) => &TALLY.results,
            Err(CallError::Host(host::CallError::Timeout { .. })) => &TALLY.timeouts,
            Err(CallError::Host(host::CallError::ExtensionExited { .. })) => &TALLY.exited,
            Err(CallError::Refused(_)) => &TALLY.refused,
            Err(_) => &TALLY.not_sent,
        };
        counter.fetch_add(1, Relaxed);
    }
    for event in &sim.events {
        match event {
            Event::Stopped {
                next: Next::Failed(_),
                ..
            } => TALLY.failed.fetch_add(1, Relaxed),
            Event::Stopped { .. } => TALLY.restarts.fetch_add(1, Relaxed),
            _ => 0,
        };
    }
    let kills = sim.procs.values().filter(|p| p.killed).count();
    TALLY.kills.fetch_add(kills, Relaxed);
}

fn proptest_config() -> ProptestConfig {
    let mut config = ProptestConfig {
        cases: CASES,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "tests/fleet/simulation.proptest-regressions",
        ))),
        ..ProptestConfig::default()
    };
    if config.rng_seed == RngSeed::Random {
        config.rng_seed = RngSeed::Fixed(0x0F1E_E700);
    }
    config
}

#[test]
fn the_fleet_keeps_its_invariants_through_crashes_hangs_and_restarts() {
    println!("fleet simulation: {CASES} cases of three extensions");
    proptest!(proptest_config(), |(case in case())| {
        run(&case).map_err(TestCaseError::fail)?;
    });
    let n = |c: &AtomicUsize| c.load(Relaxed);
    println!(
        "calls ended by result {}, timeout {}, exit {}, before being sent {}, refused {}; \
         {} stops, {} breakers tripped, {} kills",
        n(&TALLY.results),
        n(&TALLY.timeouts),
        n(&TALLY.exited),
        n(&TALLY.not_sent),
        n(&TALLY.refused),
        n(&TALLY.restarts),
        n(&TALLY.failed),
        n(&TALLY.kills),
    );
    // The cases reach every kind of end, restarts and the breaker.
    for counter in [
        &TALLY.results,
        &TALLY.timeouts,
        &TALLY.exited,
        &TALLY.not_sent,
        &TALLY.restarts,
        &TALLY.failed,
        &TALLY.kills,
    ] {
        assert!(n(counter) > 0, "a kind of case never happened");
    }
}
