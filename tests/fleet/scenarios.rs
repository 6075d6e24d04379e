//! Scenarios of the fleet: routing, ambiguity, aliases, registry events, restarts
//! after a timeout and a crash, backoff, the crash-loop breaker, the wait queue and
//! the limits. Every one runs on the checking driver of `fleet_support`, so the
//! fleet's invariants hold throughout each.

use crate::fleet_support;

use core::time::Duration;

use dhara_protocol::fleet::{
    CallError, Config, Event, ExtensionConfig, Fleet, Next, ProcessKey, RestartPolicy, RestartWhen,
    Status, Stop, UsageError, alias,
};
use dhara_protocol::host;
use dhara_protocol::json::Value;
use dhara_protocol::time::Instant;
use fleet_support::{Script, Shape, Sim};

type Result = std::result::Result<(), String>;

fn script(tools: &[&str]) -> Script {
    Script {
        tools: tools.iter().map(|t| t.to_string()).collect(),
        answers_initialize: true,
        answers_calls: true,
        obeys_shutdown: true,
    }
}

/// `web` offers fetch and search, `files` read, search and `files.list`.
fn two_extensions(config: ExtensionConfig, fleet: Config) -> Sim {
    let mut sim = Sim::new(
        Fleet::new(fleet),
        Box::new(|_, name| match name {
            "web" => script(&["fetch", "search"]),
            _ => script(&["read", "search", "files.list"]),
        }),
    );
    sim.add("web", config.clone());
    sim.add("files", config);
    sim
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

fn host_config(timeout: u64, grace: u64) -> host::Config {
    host::Config::default()
        .timeout(secs(timeout))
        .grace(secs(grace))
}

/// The `toolName` of every `tools/execute` a process was sent.
fn executed(sim: &Sim, process: ProcessKey) -> Vec<String> {
    sim.procs[&process]
        .received
        .iter()
        .filter(|v| v.get("method").and_then(Value::as_str) == Some("tools/execute"))
        .filter_map(|v| v["params"]["toolName"].as_str().map(str::to_string))
        .collect()
}

fn result_text(sim: &Sim, call: dhara_protocol::fleet::CallHandle) -> String {
    match sim.ended.get(&call) {
        Some(Ok(text)) => text.clone(),
        other => format!("{other:?}"),
    }
}

#[test]
fn calls_route_by_bare_and_qualified_names() -> Result {
    let mut sim = two_extensions(ExtensionConfig::default(), Config::default());
    sim.poll()?;
    sim.settle()?;
    let web = sim.fleet.key("web").unwrap();
    let files = sim.fleet.key("files").unwrap();

    let fetch = sim.execute("fetch", None)?.map_err(|e| e.to_string())?;
    let read = sim.execute("read", None)?.map_err(|e| e.to_string())?;
    let search = sim
        .execute("files__search", None)?
        .map_err(|e| e.to_string())?;
    let refused = sim.execute("search", None)?;
    assert_eq!(
        refused,
        Err(UsageError::AmbiguousTool {
            name: "search".into(),
            candidates: vec!["web__search".into(), "files__search".into()],
        })
    );
    assert_eq!(
        refused.unwrap_err().to_string(),
        "tool name 'search' is ambiguous: use one of 'web__search', 'files__search'"
    );
    assert!(matches!(
        sim.execute("nothing", None)?,
        Err(UsageError::UnknownTool { .. })
    ));
    sim.settle()?;

    let web_process = sim.fleet.process(web).unwrap();
    let files_process = sim.fleet.process(files).unwrap();
    assert_eq!(executed(&sim, web_process), ["fetch"]);
    assert_eq!(executed(&sim, files_process), ["read", "search"]);
    for call in [fetch, read, search] {
        assert!(result_text(&sim, call).starts_with("tag="), "{call:?}");
    }
    sim.finish()
}

#[test]
fn a_name_llm_apis_reject_is_offered_by_alias_and_sent_by_its_real_name() -> Result {
    let mut sim = two_extensions(ExtensionConfig::default(), Config::default());
    sim.poll()?;
    sim.settle()?;
    let files = sim.fleet.key("files").unwrap();
    let listed = sim
        .fleet
        .tools()
        .find(|t| t.tool.name == "files.list")
        .map(|t| (t.offered.to_string(), t.qualified.to_string()))
        .unwrap();
    assert_eq!(listed.0, alias("files.list"));
    assert!(listed.0.starts_with("files_list_"));
    assert_eq!(listed.1, alias("files__files.list"));
    assert!(listed.1.starts_with("files__files_list_"));

    let by_alias = sim.execute(&listed.0, None)?.map_err(|e| e.to_string())?;
    let by_qualified = sim.execute(&listed.1, None)?.map_err(|e| e.to_string())?;
    sim.settle()?;
    let process = sim.fleet.process(files).unwrap();
    assert_eq!(executed(&sim, process), ["files.list", "files.list"]);
    assert!(result_text(&sim, by_alias).starts_with("tag="));
    assert!(result_text(&sim, by_qualified).starts_with("tag="));
    sim.finish()
}

#[test]
fn every_registry_change_comes_with_an_event() -> Result {
    let mut sim = two_extensions(ExtensionConfig::default(), Config::default());
    sim.poll()?;
    sim.settle()?;
    let web = sim.fleet.key("web").unwrap();
    let files = sim.fleet.key("files").unwrap();
    assert_eq!(sim.fleet.resolve("read").map(|t| t.extension), Ok(files));

    // `web` announces a `read` of its own: `files`' read loses its bare name.
    let before = sim.events.len();
    sim.current(web)
        .unwrap()
        .announce(vec!["fetch".into(), "read".into()]);
    sim.settle()?;
    let changes: Vec<&Event> = sim.events[before..]
        .iter()
        .filter(|e| matches!(e, Event::ToolsChanged { .. }))
        .collect();
    assert_eq!(
        changes,
        [
            &Event::ToolsChanged {
                extension: web,
                added: vec!["web__read".into()],
                removed: vec!["web__search".into()],
                changed: vec![],
            },
            &Event::ToolsChanged {
                extension: files,
                added: vec![],
                removed: vec![],
                // `search` is bare again, `read` no longer.
                changed: vec!["files__read".into(), "files__search".into()],
            },
        ]
    );
    assert!(matches!(
        sim.fleet.resolve("read"),
        Err(UsageError::AmbiguousTool { .. })
    ));
    assert_eq!(sim.fleet.resolve("search").map(|t| t.extension), Ok(files));
    sim.finish()
}

#[test]
fn a_timeout_kills_the_process_and_the_next_call_is_served_by_a_new_one() -> Result {
    let config = ExtensionConfig::default().host(host_config(10, 2));
    let mut sim = Sim::new(
        Fleet::new(Config::default()),
        Box::new(|process, _| Script {
            // The first process hangs on calls and ignores `shutdown`.
            answers_calls: process.start() > 1,
            obeys_shutdown: process.start() > 1,
            ..script(&["slow"])
        }),
    );
    let ext = sim.add("slow-ext", config);
    sim.poll()?;
    sim.settle()?;
    let first = sim.fleet.process(ext).unwrap();
    let hung = sim.execute("slow", None)?.map_err(|e| e.to_string())?;
    sim.settle()?;

    sim.advance(secs(10))?;
    assert_eq!(
        sim.ended.get(&hung),
        Some(&Err(CallError::Host(host::CallError::Timeout {
            unfinished_line: None
        })))
    );
    sim.settle()?;
    assert!(sim.kills_due.is_empty() && sim.procs[&first].running);
    // A late reply the old process prints goes nowhere.
    let id = sim.procs[&first].pending[0].0;
    let late = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"stale"}}]}}}}"#
    );
    sim.current(ext)
        .unwrap()
        .stdout
        .extend_from_slice(late.as_bytes());

    sim.advance(secs(2))?; // the grace ends: kill
    sim.settle()?;
    assert!(sim.procs[&first].killed);
    let stopped = sim.events.iter().find_map(|e| match e {
        Event::Stopped { process, how, next } if *process == first => Some((how, next)),
        _ => None,
    });
    assert_eq!(stopped, Some((&Stop::Killed, &Next::RestartAt(sim.now))));

    let second = sim.fleet.process(ext).unwrap();
    assert_eq!(second.start(), 2);
    // The old process's bytes, handed in late under its own key, are ignored.
    sim.stale(first, late.as_bytes())?;
    let served = sim.execute("slow", None)?.map_err(|e| e.to_string())?;
    sim.settle()?;
    assert!(result_text(&sim, served).ends_with("start=2"));
    // Each process's Core numbers its requests from 1; the handles never repeat.
    let first_ids: Vec<u64> = sim.procs[&second]
        .received
        .iter()
        .filter_map(|v| v.get("id").and_then(Value::as_u64))
        .collect();
    assert_eq!(first_ids, [1, 2]);
    assert_ne!(hung, served);
    sim.finish()
}

#[test]
fn restarts_back_off_from_at_once_doubling_to_the_cap() -> Result {
    let policy = RestartPolicy::default()
        .backoff(secs(1), secs(3))
        .max_exits(0);
    let mut sim = Sim::new(
        Fleet::new(Config::default()),
        Box::new(|_, _| script(&["t"])),
    );
    let ext = sim.add("crashy", ExtensionConfig::default().restart(policy));
    sim.poll()?;
    let mut starts = Vec::new();
    for _ in 0..5 {
        // Answer the start, then crash at once; note when the next start comes.
        sim.settle()?;
        let process = sim.fleet.process(ext).unwrap();
        starts.push(sim.now);
        sim.exit(process, Some(1), true)?;
        // Never early: just before the deadline nothing is asked for.
        if let Some(at) = sim.wait {
            sim.advance(at.saturating_duration_since(sim.now) - Duration::from_millis(1))?;
            assert!(sim.starting.is_empty());
            sim.until_deadline()?;
        }
        assert_eq!(sim.starting.len(), 1);
    }
    let gaps: Vec<u64> = starts
        .windows(2)
        .map(|w| (w[1] - w[0]).as_millis() as u64)
        .collect();
    assert_eq!(gaps, [0, 1000, 2000, 3000]);
    sim.finish()
}

#[test]
fn five_exits_in_three_minutes_fail_the_extension_with_a_clear_error() -> Result {
    let mut sim = Sim::new(
        Fleet::new(Config::default()),
        Box::new(|_, _| Script {
            answers_initialize: false, // it never gets ready: calls wait
            ..script(&["t"])
        }),
    );
    let ext = sim.add(
        "flaky",
        ExtensionConfig::default().host(host_config(600, 1)),
    );
    sim.poll()?;
    // The first process announces its tools, so the call can be routed, then dies.
    sim.answer_start(true)?;
    let process = sim.fleet.process(ext).unwrap();
    sim.current(ext).unwrap().answer(0, Shape::Good);
    sim.deliver_all()?;
    let waiting = {
        sim.exit(process, Some(1), true)?;
        sim.execute("t", None)?.map_err(|e| e.to_string())?
    };
    for _ in 0..4 {
        if sim.starting.is_empty() {
            sim.until_deadline()?; // the backoff
        }
        sim.answer_start(true)?;
        let process = sim.fleet.process(ext).unwrap();
        sim.advance(secs(2))?;
        sim.exit(process, Some(3), true)?;
    }
    let Some(Status::Failed(failure)) = sim.fleet.status(ext) else {
        return Err(format!("not failed: {:?}", sim.fleet.status(ext)));
    };
    assert_eq!(failure.exits, 5);
    assert_eq!(failure.last, Stop::Exited { code: Some(3) });
    assert_eq!(
        sim.ended.get(&waiting),
        Some(&Err(CallError::ExtensionFailed(failure.clone())))
    );
    let refused = sim.execute("t", None)?.unwrap_err();
    assert_eq!(
        refused.to_string(),
        format!(
            "extension 'flaky' failed since {:.3}s: 5 exits within 180s, the last one exited with code 3",
            failure.since.since_origin().as_secs_f64()
        )
    );
    // Nothing is started again, however long one waits...
    assert_eq!(sim.wait, None);
    sim.advance(secs(3600))?;
    assert!(sim.starting.is_empty());
    // ...until asked.
    sim.restart(ext)?.map_err(|e| e.to_string())?;
    assert_eq!(sim.starting.len(), 1);
    assert_eq!(sim.restart(ext)?, Err(UsageError::AlreadyRunning));
    sim.finish()
}

#[test]
fn on_next_call_waits_for_a_call_before_starting_again() -> Result {
    let policy = RestartPolicy::default().when(RestartWhen::OnNextCall);
    let mut sim = Sim::new(
        Fleet::new(Config::default()),
        Box::new(|_, _| script(&["t"])),
    );
    let ext = sim.add("lazy", ExtensionConfig::default().restart(policy));
    sim.poll()?;
    sim.settle()?;
    let first = sim.fleet.process(ext).unwrap();
    sim.exit(first, Some(0), true)?;
    assert!(matches!(
        sim.events.last(),
        Some(Event::Stopped {
            next: Next::RestartOnNextCall(_),
            ..
        })
    ));
    sim.advance(secs(600))?;
    assert!(sim.starting.is_empty());
    assert_eq!(sim.fleet.tools().count(), 1, "its tools stay listed");

    let call = sim.execute("t", None)?.map_err(|e| e.to_string())?;
    assert_eq!(sim.fleet.calls_waiting(), 1);
    assert_eq!(sim.starting.len(), 1);
    sim.settle()?;
    assert!(result_text(&sim, call).ends_with("start=2"));
    sim.finish()
}

#[test]
fn the_wait_queue_is_bounded_and_waits_at_most_the_timeout() -> Result {
    let mut sim = Sim::new(
        Fleet::new(Config::default().max_queued(2)),
        Box::new(|_, _| script(&["t"])),
    );
    let ext = sim.add("ext", ExtensionConfig::default().host(host_config(5, 1)));
    sim.poll()?;
    sim.settle()?;
    // Down, and its restart not answered: calls wait.
    let process = sim.fleet.process(ext).unwrap();
    sim.exit(process, Some(1), true)?;
    let a = sim.execute("t", None)?.map_err(|e| e.to_string())?;
    sim.advance(secs(1))?;
    let b = sim
        .execute("t", Some(secs(2)))?
        .map_err(|e| e.to_string())?;
    let refused = sim.execute("t", None)?;
    assert_eq!(refused, Err(UsageError::QueueFull { limit: 2 }));
    assert_eq!(
        refused.unwrap_err().to_string(),
        "2 calls are already waiting to be sent"
    );
    // `b` waits until 1 s + 2 s, `a` until 5 s: not a moment before.
    assert_eq!(sim.wait, Some(Instant::from_millis(3000)));
    sim.until_deadline()?;
    assert_eq!(sim.ended.get(&b), Some(&Err(CallError::QueueTimeout)));
    assert!(!sim.ended.contains_key(&a));
    sim.until_deadline()?;
    assert_eq!(sim.now, Instant::from_millis(5000));
    assert_eq!(sim.ended.get(&a), Some(&Err(CallError::QueueTimeout)));
    sim.finish()
}

#[test]
fn calls_past_the_limits_wait_their_turn_in_order() -> Result {
    let config = ExtensionConfig::default().max_in_flight(1);
    let mut sim = Sim::new(
        Fleet::new(Config::default().max_in_flight(2)),
        Box::new(|_, name| Script {
            answers_calls: false,
            ..script(&[if name == "a" { "ta" } else { "tb" }])
        }),
    );
    let a = sim.add("a", config.clone());
    let b = sim.add("b", config.clone());
    let c = sim.add("c", config);
    sim.poll()?;
    sim.settle()?;
    let a1 = sim.execute("ta", None)?.map_err(|e| e.to_string())?;
    let a2 = sim.execute("ta", None)?.map_err(|e| e.to_string())?;
    let b1 = sim.execute("b__tb", None)?.map_err(|e| e.to_string())?;
    let c1 = sim.execute("c__tb", None)?.map_err(|e| e.to_string())?;
    assert_eq!(sim.fleet.calls_in_flight_to(a), 1);
    assert_eq!(sim.fleet.calls_in_flight_to(b), 1);
    assert_eq!(sim.fleet.calls_in_flight_to(c), 0, "the total limit");
    assert_eq!(sim.fleet.calls_waiting(), 2);

    // `a` answers its first: its second goes, ahead of `c`'s, which came later.
    sim.current(a).unwrap().answer(0, Shape::Good);
    sim.deliver_all()?;
    assert!(sim.ended.contains_key(&a1));
    assert_eq!(sim.fleet.calls_in_flight_to(a), 1);
    assert_eq!(sim.fleet.calls_in_flight_to(c), 0);
    sim.current(b).unwrap().answer(0, Shape::ToolError);
    sim.deliver_all()?;
    assert!(sim.ended.contains_key(&b1));
    assert_eq!(sim.fleet.calls_in_flight_to(c), 1);
    assert_eq!(sim.fleet.calls_waiting(), 0);
    for ext in [a, c] {
        sim.current(ext).unwrap().answer(0, Shape::Good);
    }
    sim.deliver_all()?;
    assert!(sim.ended.contains_key(&a2) && sim.ended.contains_key(&c1));
    sim.finish()
}

#[test]
fn a_failed_start_and_a_failed_initialize_count_as_exits() -> Result {
    let mut sim = Sim::new(
        Fleet::new(Config::default()),
        Box::new(|_, _| Script {
            answers_initialize: false,
            ..script(&["t"])
        }),
    );
    let ext = sim.add("ext", ExtensionConfig::default());
    sim.poll()?;
    let first = sim.starting[0];
    sim.answer_start(false)?;
    assert_eq!(
        sim.events.last(),
        Some(&Event::Stopped {
            process: first,
            how: Stop::StartFailed {
                reason: "no such file".into()
            },
            next: Next::RestartAt(sim.now),
        })
    );
    // The second start is at once; it answers initialize with an error.
    sim.answer_start(true)?;
    sim.current(ext).unwrap().answer(0, Shape::RpcError);
    sim.deliver_all()?;
    sim.after_step()?;
    assert!(sim.events.iter().any(|e| matches!(
        e,
        Event::InitializeFailed {
            error: host::CallError::Rpc(_),
            ..
        }
    )));
    // It was told to shut down, obeyed, and the third start waits 1 s.
    assert!(matches!(
        sim.events.last(),
        Some(Event::Stopped {
            next: Next::RestartAt(at),
            ..
        }) if *at == sim.now + secs(1)
    ));
    sim.finish()
}
