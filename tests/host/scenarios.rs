//! One scenario per path of the Core's lifecycle, as the published protocol and
//! `decisions.md` describe it. Each drives a `Core` the way a driver does, with the
//! extension's bytes written out by hand.

use core::time::Duration;

use dhara_protocol::host::{
    CallError, CallId, CallOptions, Config, Core, EndReason, Event, Excerpt, Input, Output,
    PeerError, Reply, ShutdownReason, State, TimerReason, UsageError,
};
use dhara_protocol::json::{self, Object, Value};
use dhara_protocol::message::{Content, ExecuteParams, InitializeParams};
use dhara_protocol::rpc::{ErrorCode, Id};
use dhara_protocol::time::Instant;

const INIT_REPLY: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"name":"web-tools","version":"1.0.0","tools":[{"name":"fetch_url","description":"Fetch a URL","inputSchema":{"type":"object","properties":{"url":{"type":"string"}},"required":["url"]}},{"name":"free","description":"Anything goes"}]}}"#;

/// A Core with a driver's bookkeeping: what it wrote, what it said, how often it
/// asked for a kill.
struct Session {
    core: Core,
    now: Instant,
    written: Vec<u8>,
    events: Vec<Event>,
    kills: usize,
    stdin_closes: usize,
    wait: Option<Instant>,
}

fn secs(s: u64) -> Instant {
    Instant::from_millis(s * 1000)
}

fn ms(n: u64) -> Instant {
    Instant::from_millis(n)
}

fn url(u: &str) -> Value {
    Value::Object(Object::from_iter([("url", Value::from(u))]))
}

impl Session {
    fn new(config: Config) -> Session {
        Session {
            core: Core::new(config),
            now: Instant::ZERO,
            written: Vec::new(),
            events: Vec::new(),
            kills: 0,
            stdin_closes: 0,
            wait: None,
        }
    }

    /// A session whose `initialize` was answered with [`INIT_REPLY`].
    fn ready(config: Config) -> Session {
        let mut s = Session::new(config);
        let call = s
            .core
            .initialize(s.now, InitializeParams::new("/p"))
            .unwrap();
        assert_eq!(call.get(), 1);
        s.poll();
        s.feed_line(INIT_REPLY);
        let events = s.take_events();
        assert!(matches!(
            events.as_slice(),
            [Event::CallEnded {
                result: Ok(Reply::Initialized(_)),
                ..
            }]
        ));
        s.written.clear();
        s
    }

    /// Polls until `Wait`, recording everything.
    fn poll(&mut self) {
        loop {
            match self.core.poll_output() {
                Output::Transmit(bytes) => self.written.extend_from_slice(bytes),
                Output::Event(event) => self.events.push(event),
                Output::Kill => self.kills += 1,
                Output::CloseStdin => self.stdin_closes += 1,
                Output::Wait(deadline) => {
                    if let Some(deadline) = deadline {
                        assert!(deadline > self.now, "a deadline in the past");
                    }
                    self.wait = deadline;
                    return;
                }
            }
        }
    }

    fn input(&mut self, input: Input<'_>) {
        self.core.handle_input(self.now, input);
        self.poll();
    }

    fn feed(&mut self, bytes: &[u8]) {
        self.input(Input::Stdout(bytes));
    }

    fn feed_line(&mut self, line: &str) {
        self.feed(format!("{line}\n").as_bytes());
    }

    fn at(&mut self, now: Instant) {
        self.now = now;
        self.input(Input::Timeout);
    }

    fn execute(&mut self, input: Value) -> CallId {
        let call = self.core.execute(self.now, "fetch_url", input).unwrap();
        self.poll();
        self.written.clear();
        call
    }

    fn take_events(&mut self) -> Vec<Event> {
        core::mem::take(&mut self.events)
    }

    fn take_written(&mut self) -> String {
        String::from_utf8(core::mem::take(&mut self.written)).unwrap()
    }

    fn exit(&mut self, code: Option<i32>) {
        self.input(Input::StdoutClosed);
        self.input(Input::Exited { code });
    }
}

fn reply(id: u64, text: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{text}"}}],"isError":false}}}}"#
    )
}

fn ended(call: CallId, result: Result<Reply, CallError>) -> Event {
    Event::CallEnded { call, result }
}

fn protocol(error: PeerError) -> Event {
    Event::Protocol(error)
}

#[test]
fn normal_session() {
    let mut s = Session::new(Config::default());
    assert_eq!(s.core.state(), State::NotStarted);
    let init = s
        .core
        .initialize(s.now, InitializeParams::new("/home/user/project"))
        .unwrap();
    s.poll();
    assert_eq!(
        s.take_written(),
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"version\":\"0.1.0\",\"cwd\":\"/home/user/project\"}}\n"
    );
    assert_eq!(s.core.state(), State::Initializing);
    assert_eq!(s.wait, Some(secs(30)));

    s.now = secs(1);
    s.feed_line(INIT_REPLY);
    let events = s.take_events();
    let [
        Event::CallEnded {
            call,
            result: Ok(Reply::Initialized(info)),
        },
    ] = events.as_slice()
    else {
        panic!("{events:?}");
    };
    assert_eq!(*call, init);
    assert_eq!(info.name, "web-tools");
    assert_eq!(s.core.state(), State::Ready);
    assert_eq!(s.core.server_info(), Some(("web-tools", "1.0.0")));
    assert_eq!(s.core.tools().len(), 2);
    assert_eq!(s.wait, None);

    let call = s
        .core
        .execute(s.now, "fetch_url", url("https://example.com"))
        .unwrap();
    s.poll();
    assert_eq!(call.get(), 2);
    assert_eq!(
        s.take_written(),
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/execute\",\"params\":{\"toolName\":\"fetch_url\",\"input\":{\"url\":\"https://example.com\"}}}\n"
    );
    assert_eq!(s.wait, Some(secs(31)));
    s.feed_line(&reply(2, "# Example Domain"));
    let events = s.take_events();
    let [
        Event::CallEnded {
            call: ended_call,
            result: Ok(Reply::Executed(result)),
        },
    ] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    assert_eq!(*ended_call, call);
    assert!(!result.is_error);
    assert_eq!(
        result.content,
        vec![Content::Text {
            text: "# Example Domain".into()
        }]
    );

    s.core.shutdown(s.now).unwrap();
    s.poll();
    assert_eq!(
        s.take_written(),
        "{\"jsonrpc\":\"2.0\",\"method\":\"shutdown\"}\n"
    );
    assert_eq!(
        s.take_events(),
        vec![Event::ShuttingDown {
            reason: ShutdownReason::Requested
        }]
    );
    assert_eq!(s.core.state(), State::ShuttingDown);
    assert_eq!(s.wait, Some(secs(6)));

    s.now = secs(2);
    s.exit(Some(0));
    assert_eq!(s.take_events(), vec![Event::Closed { code: Some(0) }]);
    assert_eq!(s.core.state(), State::Closed);
    assert_eq!(s.kills, 0);
    assert_eq!(s.wait, None);
}

#[test]
fn lines_may_come_in_any_chunking() {
    let whole = format!("{}\n{}\r\n", reply(2, "a"), reply(3, "b"));
    let mut expected = None;
    for size in [1, 2, 3, 7, 64, whole.len()] {
        let mut s = Session::ready(Config::default());
        s.execute(url("a"));
        s.execute(url("b"));
        for chunk in whole.as_bytes().chunks(size) {
            s.feed(chunk);
        }
        let events = s.take_events();
        assert_eq!(events.len(), 2);
        match &expected {
            None => expected = Some(events),
            Some(e) => assert_eq!(&events, e, "chunks of {size}"),
        }
    }
}

#[test]
fn progress_is_attributed_by_its_id_member() {
    let mut s = Session::ready(Config::default());
    let a = s.execute(url("a"));
    let b = s.execute(url("b"));
    s.feed_line(&format!(
        r#"{{"jsonrpc":"2.0","method":"progress","params":{{"message":"half","id":{}}}}}"#,
        b.get()
    ));
    let events = s.take_events();
    let [Event::Progress { call, progress }] = events.as_slice() else {
        panic!("{events:?}")
    };
    assert_eq!(*call, Some(b));
    assert_eq!(progress.message, "half");
    assert_ne!(Some(a), *call);
}

#[test]
fn progress_without_id_goes_to_the_single_call() {
    let mut s = Session::ready(Config::default());
    let a = s.execute(url("a"));
    s.feed_line(
        r#"{"jsonrpc":"2.0","method":"progress","params":{"message":"Downloading... 50%"}}"#,
    );
    let events = s.take_events();
    assert!(matches!(events.as_slice(), [Event::Progress { call: Some(c), .. }] if *c == a));
}

#[test]
fn progress_with_several_calls_and_no_id_is_unattributed() {
    let mut s = Session::ready(Config::default());
    s.execute(url("a"));
    s.execute(url("b"));
    s.feed_line(r#"{"jsonrpc":"2.0","method":"progress","params":{"message":"Parsing HTML..."}}"#);
    // An id member naming no call in flight, or of the wrong type, is unattributed too.
    s.feed_line(r#"{"jsonrpc":"2.0","method":"progress","params":{"message":"x","id":"2"}}"#);
    s.feed_line(r#"{"jsonrpc":"2.0","method":"progress","params":{"message":"x","id":77}}"#);
    // Progress whose params do not fit is reported.
    s.feed_line(r#"{"jsonrpc":"2.0","method":"progress","params":{"text":"no message"}}"#);
    let events = s.take_events();
    assert!(matches!(events[0], Event::Progress { call: None, .. }));
    assert!(matches!(events[1], Event::Progress { call: None, .. }));
    assert!(matches!(events[2], Event::Progress { call: None, .. }));
    assert!(
        matches!(&events[3], Event::Protocol(PeerError::InvalidParams { method, .. }) if method == "progress")
    );
    assert_eq!(events.len(), 4);
}

#[test]
fn a_tool_error_is_a_reply() {
    let mut s = Session::ready(Config::default());
    let call = s.execute(url("a"));
    s.feed_line(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"content":[{{"type":"text","text":"404"}}],"isError":true}}}}"#,
        call.get()
    ));
    let events = s.take_events();
    let [
        Event::CallEnded {
            result: Ok(Reply::Executed(result)),
            ..
        },
    ] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    assert!(result.is_error);
}

#[test]
fn a_jsonrpc_error_ends_the_call() {
    let mut s = Session::ready(Config::default());
    let call = s.execute(url("a"));
    s.feed_line(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32602,"message":"Missing required parameter 'url'","data":{{"toolName":"fetch_url"}}}}}}"#,
        call.get()
    ));
    let events = s.take_events();
    let [
        Event::CallEnded {
            result: Err(CallError::Rpc(error)),
            ..
        },
    ] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(error.message, "Missing required parameter 'url'");
    assert_eq!(
        error
            .data
            .as_ref()
            .and_then(|d| d.get("toolName"))
            .and_then(Value::as_str),
        Some("fetch_url")
    );
    assert_eq!(s.core.state(), State::Ready);
}

#[test]
fn a_result_of_the_wrong_shape_is_an_invalid_result() {
    let mut s = Session::ready(Config::default());
    let call = s.execute(url("a"));
    s.feed_line(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"isError":false}}}}"#,
        call.get()
    ));
    let events = s.take_events();
    assert!(matches!(
        events.as_slice(),
        [Event::CallEnded {
            result: Err(CallError::InvalidResult(_)),
            ..
        }]
    ));
}

#[test]
fn timeout_then_shutdown_then_graceful_exit() {
    let mut s = Session::ready(Config::default());
    let slow = s.execute(url("slow"));
    s.now = secs(10);
    let other = s.execute(url("other"));
    assert_eq!(s.wait, Some(secs(30)));
    assert_eq!(
        s.core.next_timer().map(|t| t.reason),
        Some(TimerReason::CallDeadline(slow))
    );

    // Just before the deadline nothing happens.
    s.at(ms(29_999));
    assert!(s.take_events().is_empty());
    s.at(secs(30));
    assert_eq!(
        s.take_written(),
        "{\"jsonrpc\":\"2.0\",\"method\":\"shutdown\"}\n"
    );
    assert_eq!(
        s.take_events(),
        vec![
            ended(
                slow,
                Err(CallError::Timeout {
                    unfinished_line: None
                })
            ),
            Event::ShuttingDown {
                reason: ShutdownReason::Timeout { call: slow }
            },
        ]
    );
    assert_eq!(s.core.state(), State::ShuttingDown);
    assert_eq!(s.wait, Some(secs(35)));
    assert_eq!(
        s.core.next_timer().map(|t| t.reason),
        Some(TimerReason::GraceEnd)
    );

    // A reply to another call during the grace is delivered.
    s.now = secs(32);
    s.feed_line(&reply(other.get(), "done"));
    assert!(
        matches!(s.take_events().as_slice(), [Event::CallEnded { call, result: Ok(_) }] if *call == other)
    );
    // No new calls while shutting down.
    assert_eq!(
        s.core.execute(s.now, "fetch_url", url("x")),
        Err(UsageError::ShuttingDown)
    );

    s.now = secs(33);
    s.exit(Some(0));
    assert_eq!(s.take_events(), vec![Event::Closed { code: Some(0) }]);
    assert_eq!(s.kills, 0);
    // Time passing after the exit asks for nothing.
    s.at(secs(100));
    assert_eq!(s.kills, 0);
    assert!(s.take_events().is_empty());
}

#[test]
fn timeout_then_shutdown_then_kill() {
    let mut s = Session::ready(Config::default().grace(Duration::from_secs(5)));
    let slow = s.execute(url("slow"));
    s.now = secs(1);
    let pending = s.execute(url("pending"));
    s.at(secs(30));
    assert_eq!(s.wait, Some(secs(31)));
    // The other call times out during the grace: no second shutdown.
    s.at(secs(31));
    assert_eq!(
        s.take_written(),
        "{\"jsonrpc\":\"2.0\",\"method\":\"shutdown\"}\n"
    );
    assert_eq!(
        s.take_events(),
        vec![
            ended(
                slow,
                Err(CallError::Timeout {
                    unfinished_line: None
                })
            ),
            Event::ShuttingDown {
                reason: ShutdownReason::Timeout { call: slow }
            },
            ended(
                pending,
                Err(CallError::Timeout {
                    unfinished_line: None
                })
            ),
        ]
    );
    assert_eq!(s.wait, Some(secs(35)));
    s.at(ms(34_999));
    assert_eq!(s.kills, 0, "no kill before the grace ends");
    s.at(secs(35));
    assert_eq!(s.kills, 1);
    assert_eq!(s.wait, None);
    s.at(secs(40));
    assert_eq!(s.kills, 1, "kill is asked for once");
    s.input(Input::Exited { code: None });
    assert_eq!(s.take_events(), vec![Event::Closed { code: None }]);
}

#[test]
fn kill_after_the_grace_with_a_call_still_pending() {
    let mut s = Session::ready(Config::default());
    let call = s.execute(url("a"));
    s.core.shutdown(s.now).unwrap();
    s.poll();
    s.at(secs(5));
    assert_eq!(s.kills, 1);
    s.take_events();
    s.input(Input::Exited { code: None });
    assert_eq!(
        s.take_events(),
        vec![
            ended(
                call,
                Err(CallError::ExtensionExited {
                    unfinished_line: None
                })
            ),
            Event::Closed { code: None }
        ]
    );
}

#[test]
fn a_late_driver_still_gets_timers_in_order() {
    // One input long after every deadline fires them all, earliest first. The grace
    // counts from when `shutdown` was sent: from this input.
    let mut s = Session::ready(Config::default());
    let a = s.execute(url("a"));
    s.now = secs(2);
    let b = s.execute(url("b"));
    s.at(secs(100));
    assert_eq!(
        s.take_events(),
        vec![
            ended(
                a,
                Err(CallError::Timeout {
                    unfinished_line: None
                })
            ),
            Event::ShuttingDown {
                reason: ShutdownReason::Timeout { call: a }
            },
            ended(
                b,
                Err(CallError::Timeout {
                    unfinished_line: None
                })
            ),
        ]
    );
    assert_eq!(s.kills, 0);
    assert_eq!(s.wait, Some(secs(105)));
}

#[test]
fn exit_mid_call() {
    let mut s = Session::ready(Config::default());
    let a = s.execute(url("a"));
    let b = s.execute(url("b"));
    // The reply to `a` was read just before the exit; an unfinished line follows.
    s.feed(format!("{}\n{{\"jsonrpc\":\"2.0\",\"id\":", reply(a.get(), "ok")).as_bytes());
    assert_eq!(s.take_events().len(), 1);
    s.input(Input::Exited { code: Some(3) });
    let events = s.take_events();
    assert!(matches!(&events[0], Event::Protocol(PeerError::Truncated { line }) if line.len == 22));
    assert_eq!(
        events[1],
        ended(
            b,
            Err(CallError::ExtensionExited {
                unfinished_line: Some(Excerpt {
                    start: br#"{"jsonrpc":"2.0","id":"#.to_vec(),
                    len: 22
                })
            })
        )
    );
    assert_eq!(events[2], Event::Closed { code: Some(3) });
    assert_eq!(events.len(), 3);
    assert!(
        s.take_written().is_empty(),
        "no shutdown to a process that is gone"
    );
    assert_eq!(s.core.state(), State::Closed);
}

#[test]
fn lines_handed_in_before_the_exit_are_decoded_first() {
    let mut s = Session::ready(Config::default());
    let a = s.execute(url("a"));
    // The driver hands in the last bytes and the exit without polling in between.
    let last = format!(
        "{}\n{}\n",
        reply(a.get(), "last"),
        r#"{"jsonrpc":"2.0","id":9,"method":"ask"}"#
    );
    s.core.handle_input(s.now, Input::Stdout(last.as_bytes()));
    s.core.handle_input(s.now, Input::Exited { code: Some(0) });
    s.poll();
    let events = s.take_events();
    assert!(matches!(&events[0], Event::CallEnded { result: Ok(_), .. }));
    assert!(matches!(
        &events[1],
        Event::Protocol(PeerError::UnexpectedRequest { .. })
    ));
    assert_eq!(events[2], Event::Closed { code: Some(0) });
    assert!(
        s.take_written().is_empty(),
        "nothing is written to a process that is gone"
    );
    // Bytes reported after the exit are ignored.
    s.feed_line(&reply(a.get(), "again"));
    assert!(s.take_events().is_empty());
}

#[test]
fn nothing_after_closed() {
    let mut s = Session::ready(Config::default());
    s.exit(Some(0));
    assert_eq!(
        s.take_events(),
        vec![
            Event::ShuttingDown {
                reason: ShutdownReason::StdoutClosed
            },
            Event::Closed { code: Some(0) },
        ]
    );
    s.take_written();
    assert_eq!(
        s.core.execute(s.now, "fetch_url", url("a")),
        Err(UsageError::Closed)
    );
    assert_eq!(s.core.list_tools(s.now), Err(UsageError::Closed));
    assert_eq!(s.core.shutdown(s.now), Err(UsageError::Closed));
    assert_eq!(
        s.core.initialize(s.now, InitializeParams::new("/")),
        Err(UsageError::Closed)
    );
    assert!(s.core.cancel(s.now, s.core_call_one()).is_err());
    s.feed_line(&reply(1, "x"));
    s.input(Input::StdoutClosed);
    s.input(Input::Exited { code: Some(1) });
    s.at(secs(1000));
    assert!(s.take_events().is_empty());
    assert!(s.take_written().is_empty());
    assert_eq!(s.kills, 0);
}

impl Session {
    /// The id of the `initialize` call of a ready session.
    fn core_call_one(&self) -> CallId {
        // Only the Core makes CallIds; the first call of any session is 1.
        let mut other = Core::new(Config::default());
        other
            .initialize(Instant::ZERO, InitializeParams::new("/"))
            .unwrap()
    }
}

#[test]
fn a_late_reply_after_a_timeout_is_harmless() {
    let mut s = Session::ready(Config::default());
    let slow = s.execute(url("slow"));
    s.at(secs(30));
    s.take_events();
    s.feed_line(&reply(slow.get(), "finally"));
    assert_eq!(
        s.take_events(),
        vec![protocol(PeerError::LateResponse {
            call: slow,
            ended: Some(EndReason::TimedOut)
        })]
    );
    assert!(s.take_written().contains("shutdown"));
}

#[test]
fn a_reply_with_an_unknown_id_is_reported() {
    let mut s = Session::ready(Config::default());
    let call = s.execute(url("a"));
    s.feed_line(&reply(99, "?"));
    s.feed_line(&reply(0, "?"));
    s.feed_line(r#"{"jsonrpc":"2.0","id":-2,"result":{}}"#);
    s.feed_line(r#"{"jsonrpc":"2.0","id":null,"result":{}}"#);
    assert_eq!(
        s.take_events(),
        vec![
            protocol(PeerError::UnknownId { id: Id::from(99) }),
            protocol(PeerError::UnknownId { id: Id::from(0) }),
            protocol(PeerError::UnknownId {
                id: Id::Number(json::Number::from(-2i64))
            }),
            protocol(PeerError::UnknownId { id: Id::Null }),
        ]
    );
    assert_eq!(s.core.calls_in_flight(), 1);
    s.feed_line(&reply(call.get(), "ok"));
    assert!(matches!(
        s.take_events().as_slice(),
        [Event::CallEnded { result: Ok(_), .. }]
    ));
    assert!(s.take_written().is_empty(), "responses are never answered");
}

#[test]
fn a_duplicate_reply_is_a_late_response() {
    let mut s = Session::ready(Config::default());
    let call = s.execute(url("a"));
    s.feed_line(&reply(call.get(), "one"));
    s.feed_line(&reply(call.get(), "two"));
    let events = s.take_events();
    assert!(matches!(events[0], Event::CallEnded { result: Ok(_), .. }));
    assert_eq!(
        events[1],
        protocol(PeerError::LateResponse {
            call,
            ended: Some(EndReason::Answered)
        })
    );
}

#[test]
fn a_reply_with_the_wrong_id_type_matches_nothing() {
    let mut s = Session::ready(Config::default());
    let call = s.execute(url("a"));
    s.feed_line(&format!(
        r#"{{"jsonrpc":"2.0","id":"{}","result":{{"content":[]}}}}"#,
        call.get()
    ));
    assert_eq!(
        s.take_events(),
        vec![protocol(PeerError::UnknownId {
            id: Id::from(call.get().to_string())
        })]
    );
    assert_eq!(s.core.calls_in_flight(), 1);
    // A null id with an error: the extension could not read one of our lines.
    s.feed_line(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#);
    let events = s.take_events();
    assert!(
        matches!(&events[..], [Event::Protocol(PeerError::ErrorWithoutId { error })] if error.code == ErrorCode::PARSE_ERROR)
    );
    assert!(s.take_written().is_empty());
}

#[test]
fn a_request_from_the_extension_is_answered_method_not_found() {
    let mut s = Session::ready(Config::default());
    s.feed_line(r#"{"jsonrpc":"2.0","id":"q1","method":"sampling/create","params":{}}"#);
    assert_eq!(
        s.take_written(),
        "{\"jsonrpc\":\"2.0\",\"id\":\"q1\",\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}\n"
    );
    assert_eq!(
        s.take_events(),
        vec![protocol(PeerError::UnexpectedRequest {
            id: Id::from("q1"),
            method: "sampling/create".into()
        })]
    );
}

#[test]
fn an_oversized_reply_fails_its_call_at_once() {
    let config = Config::default().max_line_bytes(300);
    let mut s = Session::ready(config);
    let big = s.execute(url("big"));
    let small = s.execute(url("small"));
    let long = reply(big.get(), &"x".repeat(1000));
    s.feed_line(&long);
    assert_eq!(
        s.take_events(),
        vec![ended(
            big,
            Err(CallError::TooLarge {
                len: long.len() as u64
            })
        )]
    );
    // The stream stays in sync.
    s.feed_line(&reply(small.get(), "fine"));
    assert!(
        matches!(s.take_events().as_slice(), [Event::CallEnded { call, result: Ok(_) }] if *call == small)
    );
    // An oversized line that names no call in flight is reported, its excerpt bounded.
    s.feed_line(&reply(big.get(), &"y".repeat(1000)));
    let events = s.take_events();
    let [Event::Protocol(PeerError::LineTooLong { line, id })] = events.as_slice() else {
        panic!("{events:?}")
    };
    assert_eq!(*id, Some(Id::from(big.get())));
    assert!(line.start.len() <= 200);
    assert!(line.len > 1000);
    assert!(s.take_written().is_empty());
}

#[test]
fn malformed_lines_are_reported_and_skipped() {
    let mut s = Session::ready(Config::default());
    let call = s.execute(url("a"));
    s.feed(b"Starting web-tools v1.0.0 on port 8080\n");
    s.feed(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":\n");
    s.feed(format!("{}\n", "#".repeat(5000)).as_bytes());
    s.feed(b"\xff\xfe binary\n");
    // Invalid replies naming no call in flight (one naming a call ends it at once:
    // see tests/host/bad_input.rs).
    s.feed_line(r#"{"jsonrpc":"1.0","id":99,"result":{}}"#);
    s.feed_line(r#"{"jsonrpc":"2.0","id":99,"result":{},"error":{"code":1,"message":"m"}}"#);
    s.feed_line("42");
    s.feed_line("[]");
    s.feed(b"   \n\n");
    let events = s.take_events();
    assert_eq!(events.len(), 8, "{events:?}");
    let Event::Protocol(PeerError::NotJson { line, .. }) = &events[0] else {
        panic!("{:?}", events[0])
    };
    assert_eq!(line.to_string(), "Starting web-tools v1.0.0 on port 8080");
    assert!(matches!(
        &events[1],
        Event::Protocol(PeerError::NotJson { .. })
    ));
    let Event::Protocol(PeerError::NotJson { line, .. }) = &events[2] else {
        panic!()
    };
    assert_eq!((line.start.len(), line.len), (200, 5000));
    assert!(line.to_string().ends_with('…'));
    assert!(matches!(
        &events[3],
        Event::Protocol(PeerError::NotJson { .. })
    ));
    for event in &events[4..] {
        assert!(
            matches!(event, Event::Protocol(PeerError::InvalidMessage { .. })),
            "{event:?}"
        );
    }
    // Nothing was answered, and the call is still waiting for its reply.
    assert!(s.take_written().is_empty());
    s.feed_line(&reply(call.get(), "ok"));
    assert!(matches!(
        s.take_events().as_slice(),
        [Event::CallEnded { result: Ok(_), .. }]
    ));
}

#[test]
fn a_batch_reply_is_handled_entry_by_entry() {
    let mut s = Session::ready(Config::default());
    let a = s.execute(url("a"));
    let b = s.execute(url("b"));
    s.feed_line(&format!(
        r#"[{},{{"jsonrpc":"2.0","method":"progress","params":{{"message":"m"}}}},{},{{"bad":1}},{{"jsonrpc":"2.0","id":7,"method":"ping"}}]"#,
        reply(b.get(), "B"),
        reply(a.get(), "A"),
    ));
    let events = s.take_events();
    assert!(matches!(&events[0], Event::CallEnded { call, result: Ok(_) } if *call == b));
    // After `b` ended, `a` is the one call in flight.
    assert!(matches!(&events[1], Event::Progress { call: Some(c), .. } if *c == a));
    assert!(matches!(&events[2], Event::CallEnded { call, result: Ok(_) } if *call == a));
    assert!(matches!(
        &events[3],
        Event::Protocol(PeerError::InvalidMessage { .. })
    ));
    assert!(matches!(
        &events[4],
        Event::Protocol(PeerError::UnexpectedRequest { .. })
    ));
    assert_eq!(events.len(), 5);
    // The request in the batch is answered in a batch.
    assert_eq!(
        s.take_written(),
        "[{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}]\n"
    );
}

#[test]
fn stdout_closed_while_running_ends_calls_and_shuts_down() {
    let mut s = Session::ready(Config::default());
    let a = s.execute(url("a"));
    s.now = secs(3);
    s.core.handle_input(s.now, Input::StdoutClosed);
    // Refused at once, before the next poll.
    assert_eq!(
        s.core.execute(s.now, "fetch_url", url("b")),
        Err(UsageError::ShuttingDown)
    );
    s.poll();
    assert_eq!(
        s.take_events(),
        vec![
            ended(
                a,
                Err(CallError::ExtensionExited {
                    unfinished_line: None
                })
            ),
            Event::ShuttingDown {
                reason: ShutdownReason::StdoutClosed
            },
        ]
    );
    assert_eq!(
        s.take_written(),
        "{\"jsonrpc\":\"2.0\",\"method\":\"shutdown\"}\n"
    );
    assert_eq!(
        s.core.execute(s.now, "fetch_url", url("b")),
        Err(UsageError::ShuttingDown)
    );
    assert_eq!(s.wait, Some(secs(8)));
    s.at(secs(8));
    assert_eq!(s.kills, 1);
    s.input(Input::Exited { code: None });
    assert_eq!(s.take_events(), vec![Event::Closed { code: None }]);
}

#[test]
fn cancel_ends_the_call_and_sends_nothing() {
    let mut s = Session::ready(Config::default());
    let a = s.execute(url("a"));
    let b = s.execute(url("b"));
    s.take_written();
    s.core.cancel(s.now, a).unwrap();
    s.poll();
    assert_eq!(s.take_events(), vec![ended(a, Err(CallError::Cancelled))]);
    assert!(s.take_written().is_empty());
    assert_eq!(
        s.core.cancel(s.now, a),
        Err(UsageError::UnknownCall { call: a })
    );
    s.feed_line(&reply(a.get(), "late"));
    assert_eq!(
        s.take_events(),
        vec![protocol(PeerError::LateResponse {
            call: a,
            ended: Some(EndReason::Cancelled)
        })]
    );
    // The cancelled call's deadline is gone; the other one remains.
    assert_eq!(
        s.core.next_timer().map(|t| t.reason),
        Some(TimerReason::CallDeadline(b))
    );
}

#[test]
fn a_call_may_have_its_own_timeout() {
    let mut s = Session::ready(Config::default());
    let options = CallOptions {
        timeout: Some(Duration::from_secs(2)),
        ..CallOptions::default()
    };
    let quick = s
        .core
        .execute_with(s.now, ExecuteParams::new("fetch_url", url("q")), options)
        .unwrap();
    let normal = s.execute(url("n"));
    s.poll();
    assert_eq!(s.wait, Some(secs(2)));
    s.at(secs(2));
    let events = s.take_events();
    assert_eq!(
        events[0],
        ended(
            quick,
            Err(CallError::Timeout {
                unfinished_line: None
            })
        )
    );
    assert_eq!(s.core.calls_in_flight(), 1);
    s.feed_line(&reply(normal.get(), "ok"));
    assert!(matches!(
        s.take_events().as_slice(),
        [Event::CallEnded { result: Ok(_), .. }]
    ));
}

#[test]
fn progress_extends_the_deadline_up_to_the_cap() {
    let config = Config::default()
        .timeout(Duration::from_secs(10))
        .progress_extends_deadline(true, Some(Duration::from_secs(25)));
    let mut s = Session::ready(config);
    let call = s.execute(url("a"));
    assert_eq!(s.wait, Some(secs(10)));
    let progress = r#"{"jsonrpc":"2.0","method":"progress","params":{"message":"still here"}}"#;
    s.now = secs(8);
    s.feed_line(progress);
    assert_eq!(s.wait, Some(secs(18)));
    s.now = secs(17);
    s.feed_line(progress);
    assert_eq!(s.wait, Some(secs(25)), "capped at 25 s in total");
    s.now = secs(24);
    s.feed_line(progress);
    assert_eq!(s.wait, Some(secs(25)));
    s.at(secs(25));
    assert!(s.take_events().contains(&ended(
        call,
        Err(CallError::Timeout {
            unfinished_line: None
        })
    )));

    // Off by default, and per call.
    let mut s = Session::ready(Config::default());
    s.execute(url("a"));
    s.now = secs(20);
    s.feed_line(progress);
    assert_eq!(s.wait, Some(secs(30)));
    let options = CallOptions {
        progress_extends_deadline: Some(true),
        ..CallOptions::default()
    };
    let mut s = Session::ready(Config::default());
    s.core
        .execute_with(s.now, ExecuteParams::new("fetch_url", url("a")), options)
        .unwrap();
    s.now = secs(20);
    s.feed_line(progress);
    assert_eq!(s.wait, Some(secs(50)));
}

#[test]
fn calls_in_flight_are_capped() {
    let mut s = Session::ready(Config::default().max_in_flight(2));
    s.execute(url("a"));
    let b = s.execute(url("b"));
    assert_eq!(
        s.core.execute(s.now, "fetch_url", url("c")),
        Err(UsageError::TooManyCalls { limit: 2 })
    );
    assert_eq!(
        s.core.list_tools(s.now),
        Err(UsageError::TooManyCalls { limit: 2 })
    );
    s.feed_line(&reply(b.get(), "ok"));
    assert_eq!(
        s.core
            .execute(s.now, "fetch_url", url("c"))
            .map(|c| c.get()),
        Ok(4)
    );
}

#[test]
fn usage_errors_change_nothing() {
    let mut s = Session::new(Config::default());
    assert_eq!(
        s.core.execute(s.now, "fetch_url", url("a")),
        Err(UsageError::NotReady)
    );
    assert_eq!(s.core.list_tools(s.now), Err(UsageError::NotReady));
    s.core
        .initialize(s.now, InitializeParams::new("/p"))
        .unwrap();
    assert_eq!(
        s.core.initialize(s.now, InitializeParams::new("/p")),
        Err(UsageError::AlreadyInitialized)
    );
    assert_eq!(
        s.core.execute(s.now, "fetch_url", url("a")),
        Err(UsageError::NotReady)
    );
    s.poll();
    s.feed_line(INIT_REPLY);
    s.take_events();
    s.take_written();

    let wait = s.wait;
    let mut refused = vec![
        s.core.execute(s.now, "nope", url("a")).unwrap_err(),
        s.core
            .execute(s.now, "fetch_url", Value::Object(Object::new()))
            .unwrap_err(),
        s.core.cancel(s.now, s.core_call_one()).unwrap_err(),
    ];
    refused.push(
        s.core
            .initialize(secs(9), InitializeParams::new("/p"))
            .unwrap_err(),
    );
    assert_eq!(
        refused[0],
        UsageError::UnknownTool {
            name: "nope".into()
        }
    );
    let UsageError::InvalidInput { tool, error } = &refused[1] else {
        panic!("{:?}", refused[1])
    };
    assert_eq!(tool, "fetch_url");
    assert!(error.to_string().contains("url"), "{error}");
    assert!(matches!(refused[2], UsageError::UnknownCall { .. }));
    assert_eq!(refused[3], UsageError::AlreadyInitialized);
    s.poll();
    assert!(s.take_events().is_empty());
    assert!(s.take_written().is_empty());
    assert_eq!(s.wait, wait);
    assert_eq!(s.core.state(), State::Ready);
    // The next id was not used up by the refused calls.
    assert_eq!(s.execute(url("a")).get(), 2);
    // Without validation, the input goes out as it is.
    let mut s = Session::ready(Config::default().validate_input(false));
    assert_eq!(s.execute(Value::Object(Object::new())).get(), 2);
    // A tool without an inputSchema takes anything.
    assert!(s.core.execute(s.now, "free", Value::from(3u64)).is_ok());
}

#[test]
fn shutdown_twice_is_refused() {
    let mut s = Session::ready(Config::default());
    s.core.shutdown(s.now).unwrap();
    assert_eq!(s.core.shutdown(s.now), Err(UsageError::ShuttingDown));
    s.poll();
    assert_eq!(s.take_written().matches("shutdown").count(), 1);
}

#[test]
fn ids_are_never_reused_and_stay_below_2_53() {
    let mut s = Session::ready(Config::default().recent_ids(4));
    let mut last = 1;
    for round in 0..50u64 {
        let call = s.execute(url("a"));
        assert!(call.get() > last && call.get() < 1 << 53);
        last = call.get();
        match round % 3 {
            0 => s.core.cancel(s.now, call).unwrap(),
            1 => s.feed_line(&reply(call.get(), "ok")),
            _ => s.feed_line(&format!(
                r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":1,"message":"m"}}}}"#,
                call.get()
            )),
        }
        s.poll();
        assert!(s.core.remembered_ids() <= 4);
    }
    assert_eq!(last, 51);
    let events = s.take_events();
    let mut ended: Vec<u64> = events
        .iter()
        .filter_map(|e| match e {
            Event::CallEnded { call, .. } => Some(call.get()),
            _ => None,
        })
        .collect();
    let n = ended.len();
    ended.dedup();
    assert_eq!(ended.len(), n);
    assert_eq!(n, 50);
    // A reply for an id forgotten long ago is still known to be late.
    s.feed_line(&reply(2, "very late"));
    assert!(matches!(
        s.take_events().as_slice(),
        [Event::Protocol(PeerError::LateResponse { ended: None, .. })]
    ));
}

#[test]
fn tools_list_both_ways() {
    let mut s = Session::ready(Config::default());
    let call = s.core.list_tools(s.now).unwrap();
    s.poll();
    assert_eq!(
        s.take_written(),
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"tools/list\"}}\n",
            call.get()
        )
    );
    s.feed_line(&format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"tools":[{{"name":"only","description":"d"}}]}}}}"#,
        call.get()
    ));
    assert!(
        matches!(s.take_events().as_slice(), [Event::CallEnded { result: Ok(Reply::Tools(list)), .. }] if list.tools.len() == 1)
    );
    assert_eq!(s.core.tools().len(), 1);

    s.feed_line(r#"{"jsonrpc":"2.0","method":"tools/list","params":{"tools":[{"name":"a","description":"A"},{"name":"b","description":"B"}]}}"#);
    let events = s.take_events();
    assert!(matches!(events.as_slice(), [Event::ToolsChanged { tools }] if tools.len() == 2));
    assert_eq!(s.core.tools()[1].name, "b");
    assert_eq!(
        s.core.execute(s.now, "only", url("x")),
        Err(UsageError::UnknownTool {
            name: "only".into()
        })
    );
    assert!(
        s.take_written().is_empty(),
        "notifications are not answered"
    );
}

#[test]
fn unknown_notifications_are_passed_on() {
    let mut s = Session::ready(Config::default());
    s.feed_line(r#"{"jsonrpc":"2.0","method":"log","params":{"level":"info"}}"#);
    let events = s.take_events();
    let [Event::Notification { method, params }] = events.as_slice() else {
        panic!("{events:?}")
    };
    assert_eq!(method, "log");
    assert_eq!(
        params
            .as_ref()
            .and_then(|p| p.get("level"))
            .and_then(Value::as_str),
        Some("info")
    );
}

#[test]
fn a_failed_initialize_can_be_retried() {
    let mut s = Session::new(Config::default());
    s.core
        .initialize(s.now, InitializeParams::new("/p"))
        .unwrap();
    s.poll();
    s.feed_line(
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"unsupported version"}}"#,
    );
    assert!(matches!(
        s.take_events().as_slice(),
        [Event::CallEnded {
            result: Err(CallError::Rpc(_)),
            ..
        }]
    ));
    assert_eq!(s.core.state(), State::NotStarted);
    let again = s
        .core
        .initialize(s.now, InitializeParams::new("/p"))
        .unwrap();
    assert_eq!(again.get(), 2);
    s.poll();
    s.feed_line(&INIT_REPLY.replace("\"id\":1", "\"id\":2"));
    assert_eq!(s.core.state(), State::Ready);
}

#[test]
fn initialize_times_out_like_any_call() {
    let mut s = Session::new(Config::default());
    let init = s
        .core
        .initialize(s.now, InitializeParams::new("/p"))
        .unwrap();
    s.poll();
    s.at(secs(30));
    assert_eq!(
        s.take_events(),
        vec![
            ended(
                init,
                Err(CallError::Timeout {
                    unfinished_line: None
                })
            ),
            Event::ShuttingDown {
                reason: ShutdownReason::Timeout { call: init }
            },
        ]
    );
    assert_eq!(s.core.state(), State::ShuttingDown);
}

#[test]
fn an_initialize_result_of_the_wrong_shape_is_refused() {
    let mut s = Session::new(Config::default());
    s.core
        .initialize(s.now, InitializeParams::new("/p"))
        .unwrap();
    s.poll();
    s.feed_line(r#"{"jsonrpc":"2.0","id":1,"result":{"name":"x","tools":[]}}"#);
    assert!(matches!(
        s.take_events().as_slice(),
        [Event::CallEnded {
            result: Err(CallError::InvalidResult(_)),
            ..
        }]
    ));
    assert_eq!(s.core.state(), State::NotStarted);
    assert!(s.core.tools().is_empty());
}

#[test]
fn time_never_goes_backwards() {
    let mut s = Session::ready(Config::default());
    s.now = secs(10);
    s.execute(url("a"));
    assert_eq!(s.wait, Some(secs(40)));
    // An earlier `now` counts as the latest one seen.
    s.now = secs(5);
    s.input(Input::Timeout);
    assert_eq!(s.wait, Some(secs(40)));
}

// ---- tool descriptors that do not fit ------------------------------------------------

#[test]
fn a_malformed_tool_is_left_out_with_a_warning_and_the_rest_stay_callable() {
    let mut s = Session::new(Config::default());
    s.core
        .initialize(s.now, InitializeParams::new("/p"))
        .unwrap();
    s.poll();
    s.feed_line(concat!(
        r#"{"jsonrpc":"2.0","id":1,"result":{"name":"x","version":"1","tools":["#,
        r#"{"name":"counted","description":7},"#,
        r#"{"name":"good","description":"Works","inputSchema":{"type":"object"}},"#,
        r#"{"name":"stringly","inputSchema":"{\"type\":\"object\"}"},"#,
        r#"42]}}"#
    ));
    let events = s.take_events();
    let rejected: Vec<(usize, Option<String>, String)> = events
        .iter()
        .filter_map(|e| match e {
            Event::Protocol(PeerError::InvalidTool { tool }) => {
                Some((tool.index, tool.name.clone(), tool.error.to_string()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        rejected,
        [
            (
                0,
                Some(String::from("counted")),
                String::from("description: expected a string, found number")
            ),
            (
                2,
                Some(String::from("stringly")),
                String::from(
                    "inputSchema: expected a JSON Schema (an object or a boolean), found string"
                )
            ),
            (3, None, String::from("expected an object, found number")),
        ]
    );
    let Some(Event::CallEnded {
        result: Ok(Reply::Initialized(info)),
        ..
    }) = events.last()
    else {
        panic!("initialize succeeds: {events:?}");
    };
    assert_eq!(info.tools.len(), 1);
    assert_eq!(s.core.tools()[0].name, "good");
    assert_eq!(s.core.state(), State::Ready);
    assert!(
        s.core
            .execute(s.now, "good", Value::Object(Object::new()))
            .is_ok()
    );
    assert!(matches!(
        s.core.execute(s.now, "counted", Value::Null),
        Err(UsageError::UnknownTool { .. })
    ));
    let shown = events
        .iter()
        .find_map(|e| match e {
            Event::Protocol(p @ PeerError::InvalidTool { .. }) => Some(p.to_string()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        shown,
        "left out tool `counted` (tools[0]): description: expected a string, found number"
    );
}

#[test]
fn a_tools_list_notification_keeps_its_good_tools_too() {
    let mut s = Session::ready(Config::default());
    s.feed_line(
        r#"{"jsonrpc":"2.0","method":"tools/list","params":{"tools":[{"name":"a"},{"name":1}]}}"#,
    );
    let events = s.take_events();
    assert!(
        matches!(
            &events[..],
            [
                Event::Protocol(PeerError::InvalidTool { tool }),
                Event::ToolsChanged { tools },
            ] if tool.index == 1 && tool.name.is_none() && tools.len() == 1 && tools[0].name == "a"
        ),
        "{events:?}"
    );
}

// ---- closing stdin, and bytes left without a newline ---------------------------------

#[test]
fn stdin_is_closed_once_right_after_shutdown_whatever_started_it() {
    // Asked for.
    let mut s = Session::ready(Config::default());
    s.core.shutdown(s.now).unwrap();
    s.poll();
    assert_eq!(
        s.take_written(),
        "{\"jsonrpc\":\"2.0\",\"method\":\"shutdown\"}\n"
    );
    assert_eq!(s.stdin_closes, 1);
    // A request from the extension now gets no answer: its stdin is closed.
    s.feed_line(r#"{"jsonrpc":"2.0","id":"x","method":"ask"}"#);
    assert_eq!(s.take_written(), "");
    assert!(
        s.take_events()
            .iter()
            .any(|e| matches!(e, Event::Protocol(PeerError::UnexpectedRequest { .. })))
    );

    // A timeout.
    let mut s = Session::ready(Config::default().timeout(Duration::from_secs(2)));
    s.execute(url("a"));
    s.at(secs(2));
    assert!(
        s.take_written()
            .ends_with("{\"jsonrpc\":\"2.0\",\"method\":\"shutdown\"}\n")
    );
    assert_eq!(s.stdin_closes, 1);
    s.at(secs(7));
    assert_eq!((s.kills, s.stdin_closes), (1, 1));

    // The end of stdout, then the exit: one close, none after the exit.
    let mut s = Session::ready(Config::default());
    s.input(Input::StdoutClosed);
    assert_eq!(s.stdin_closes, 1);
    s.exit(Some(0));
    assert_eq!(s.stdin_closes, 1);

    // Exited before shutdown was ever sent: nothing to close.
    let mut s = Session::ready(Config::default());
    s.core.handle_input(s.now, Input::Exited { code: Some(1) });
    s.poll();
    assert_eq!(s.stdin_closes, 0);
}

#[test]
fn a_timeout_names_the_bytes_left_without_a_newline() {
    let mut s = Session::ready(Config::default().timeout(Duration::from_secs(2)));
    let call = s.execute(url("a"));
    let unterminated = reply(call.get(), "ok");
    s.feed(unterminated.as_bytes()); // no newline: never a line
    assert_eq!(s.take_events(), []);
    s.at(secs(2));
    let events = s.take_events();
    let Event::CallEnded {
        result:
            Err(
                error @ CallError::Timeout {
                    unfinished_line: Some(line),
                },
            ),
        ..
    } = &events[0]
    else {
        panic!("a timeout naming the bytes: {events:?}");
    };
    assert_eq!(line.len, unterminated.len() as u64);
    assert_eq!(line.start, unterminated.as_bytes()[..line.start.len()]);
    assert!(
        error.to_string().contains(&format!(
            "; {} bytes without a newline are pending: {{\"jsonrpc\"",
            unterminated.len()
        )),
        "{error}"
    );
    assert!(error.to_string().ends_with("(a missing newline or flush?)"));

    // A line that did end, followed by nothing: nothing to name.
    let mut s = Session::ready(Config::default().timeout(Duration::from_secs(2)));
    s.execute(url("a"));
    s.feed(b"a log line\n   ");
    s.at(secs(2));
    assert!(s.take_events().iter().any(|e| matches!(
        e,
        Event::CallEnded {
            result: Err(CallError::Timeout {
                unfinished_line: None
            }),
            ..
        }
    )));
}
