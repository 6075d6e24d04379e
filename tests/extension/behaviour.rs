//! The Extension endpoint, one behaviour per test: automatic answers, the author's
//! answers, progress, the tool registry, batches, shutdown and end of input.

use crate::extension_support;

use dhara_protocol::extension::{
    Config, Event, Excerpt, Extension, Input, Output, PeerError, RequestHandle, SHUTTING_DOWN,
    ServerInfo, TOO_MANY_PENDING, UsageError,
};
use dhara_protocol::json::Value;
use dhara_protocol::message::{InitializeParams, NOT_INITIALIZED, Text, Tool, ToolResult};
use dhara_protocol::rpc::{ErrorCode, ErrorObject, Id};
use extension_support::{
    INITIALIZE, drain, extension_with, initialized, initialized_with, send, value, web_tools,
};

fn execute(id: u64, tool: &str, input: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/execute","params":{{"toolName":"{tool}","input":{input}}}}}"#
    )
}

/// The only `Execute` event of a run, as (request, tool, input).
fn the_execute(events: &[Event]) -> (RequestHandle, Text, Value) {
    let executes: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::Execute {
                request,
                tool_name,
                input,
            } => Some((*request, tool_name.clone(), input.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(executes.len(), 1, "events: {events:?}");
    executes.into_iter().next().unwrap()
}

fn error_code(reply: &Value) -> i64 {
    reply["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error reply: {reply}"))
}

// ---- initialize and the registry ---------------------------------------------------

#[test]
fn initialize_is_answered_from_the_registry_and_reported() {
    let mut ext = extension_with(Config::default());
    let run = send(&mut ext, INITIALIZE);
    let reply = run.line();
    assert_eq!(reply["jsonrpc"], Value::from("2.0"));
    assert_eq!(reply["id"], Value::from(0));
    assert_eq!(reply["result"]["name"], Value::from("web-tools"));
    assert_eq!(reply["result"]["version"], Value::from("1.0.0"));
    let tools = reply["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[0]["name"], Value::from("fetch_url"));
    assert_eq!(tools[0]["inputSchema"]["required"][0], Value::from("url"));
    assert_eq!(
        run.events,
        vec![Event::Initialized {
            params: InitializeParams {
                version: "0.1.0".into(),
                cwd: "/home/user/project".into()
            }
        }]
    );
    assert!(ext.is_initialized());
}

#[test]
fn a_second_initialize_is_an_invalid_request() {
    let mut ext = initialized();
    let run = send(&mut ext, &INITIALIZE.replace(r#""id":0"#, r#""id":1"#));
    let reply = run.line();
    assert_eq!(reply["id"], Value::from(1));
    assert_eq!(error_code(&reply), -32600);
    assert_eq!(
        reply["error"]["message"],
        Value::from("Already initialized")
    );
    assert!(run.events.is_empty());
}

#[test]
fn initialize_with_bad_params_is_invalid_params_and_leaves_it_uninitialized() {
    let mut ext = extension_with(Config::default());
    let reply = send(
        &mut ext,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"version":"0.1.0"}}"#,
    )
    .line();
    assert_eq!(error_code(&reply), -32602);
    assert_eq!(reply["error"]["data"]["path"], Value::from("cwd"));
    assert!(!ext.is_initialized());
    let reply = send(
        &mut ext,
        r#"{"jsonrpc":"2.0","id":2,"method":"initialize"}"#,
    )
    .line();
    assert_eq!(error_code(&reply), -32602);
    assert_eq!(
        send(&mut ext, INITIALIZE).line()["result"]["name"],
        Value::from("web-tools")
    );
}

#[test]
fn tools_list_request_gives_the_tools() {
    let mut ext = initialized();
    let reply = send(
        &mut ext,
        r#"{"jsonrpc":"2.0","id":"t","method":"tools/list"}"#,
    )
    .line();
    assert_eq!(reply["id"], Value::from("t"));
    let tools = reply["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[1]["name"], Value::from("add"));
    assert_eq!(tools[1]["description"], Value::from("Add two numbers"));
}

#[test]
fn set_tools_before_initialize_is_silent_and_after_it_is_announced() {
    let mut ext = extension_with(Config::default());
    ext.set_tools(vec![Tool::new(
        "only",
        "The only tool",
        value(r#"{"type":"object"}"#),
    )]);
    assert!(drain(&mut ext).written.is_empty());
    let reply = send(&mut ext, INITIALIZE).line();
    assert_eq!(reply["result"]["tools"].as_array().unwrap().len(), 1);
    assert_eq!(reply["result"]["tools"][0]["name"], Value::from("only"));

    ext.set_tools(web_tools());
    let note = drain(&mut ext).line();
    assert_eq!(note["method"], Value::from("tools/list"));
    assert!(note.get("id").is_none(), "a notification has no id");
    let names: Vec<_> = note["params"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(names, vec![Value::from("fetch_url"), Value::from("add")]);
    assert_eq!(ext.tools().len(), 2);
    let run = send(&mut ext, &execute(5, "add", r#"{"a":1,"b":2}"#));
    assert_eq!(the_execute(&run.events).1, "add");
}

// ---- automatic answers ---------------------------------------------------------------

#[test]
fn a_line_that_is_not_json_is_a_parse_error_with_id_null_and_the_session_goes_on() {
    let mut ext = initialized();
    let run = send(&mut ext, r#"{"jsonrpc":"2.0","id":3,"method":"tools/list""#);
    let reply = run.line();
    assert_eq!(reply["id"], Value::Null);
    assert_eq!(error_code(&reply), -32700);
    assert!(matches!(
        &run.events[..],
        [Event::Protocol(PeerError::NotJson { line, error })]
            if error.error_object().code == ErrorCode::PARSE_ERROR
                && line.start == br#"{"jsonrpc":"2.0","id":3,"method":"tools/list""#
    ));
    for garbage in ["hello", "[1,", "\u{1}", "{}}", "nul"] {
        assert_eq!(
            error_code(&send(&mut ext, garbage).line()),
            -32700,
            "{garbage}"
        );
    }
    ext.handle_input(Input::Stdin(b"\xff\xfe\n"));
    assert_eq!(error_code(&drain(&mut ext).line()), -32700);
    let reply = send(
        &mut ext,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#,
    )
    .line();
    assert_eq!(reply["id"], Value::from(4));
    assert!(reply["result"]["tools"].as_array().is_some());
}

#[test]
fn an_invalid_request_keeps_its_id_when_it_can() {
    let mut ext = initialized();
    let reply = send(
        &mut ext,
        r#"{"jsonrpc":"2.0","id":"a","method":"tools/list","params":5}"#,
    )
    .line();
    assert_eq!(reply["id"], Value::from("a"));
    assert_eq!(error_code(&reply), -32600);

    let reply = send(
        &mut ext,
        r#"{"jsonrpc":"1.0","id":9,"method":"tools/list"}"#,
    )
    .line();
    assert_eq!(reply["id"], Value::from(9));
    assert_eq!(error_code(&reply), -32600);

    let run = send(&mut ext, r#"{"jsonrpc":"2.0","method":1,"params":"bar"}"#);
    assert_eq!(run.line()["id"], Value::Null);
    assert_eq!(error_code(&run.line()), -32600);
    assert!(matches!(
        &run.events[..],
        [Event::Protocol(PeerError::InvalidMessage { error })] if error.id.is_none()
    ));

    for text in [
        "42",
        r#""text""#,
        "null",
        "[]",
        r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#,
    ] {
        assert_eq!(error_code(&send(&mut ext, text).line()), -32600, "{text}");
    }
}

#[test]
fn an_unknown_method_is_method_not_found_with_its_name() {
    let mut ext = initialized();
    let reply = send(
        &mut ext,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/frobnicate"}"#,
    )
    .line();
    assert_eq!(reply["id"], Value::from(1));
    assert_eq!(error_code(&reply), -32601);
    assert_eq!(reply["error"]["message"], Value::from("Method not found"));
    assert_eq!(
        reply["error"]["data"]["method"],
        Value::from("tools/frobnicate")
    );
    // `progress` exists, but only from the extension to the Core.
    let reply = send(
        &mut ext,
        r#"{"jsonrpc":"2.0","id":2,"method":"progress","params":{"message":"x"}}"#,
    )
    .line();
    assert_eq!(error_code(&reply), -32601);
}

#[test]
fn a_request_before_initialize_is_not_initialized() {
    let mut ext = extension_with(Config::default());
    for (id, line) in [
        (
            1,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.to_string(),
        ),
        (
            2,
            execute(2, "fetch_url", r#"{"url":"https://example.com"}"#),
        ),
        (
            3,
            r#"{"jsonrpc":"2.0","id":3,"method":"no/such/method"}"#.to_string(),
        ),
    ] {
        let run = send(&mut ext, &line);
        let reply = run.line();
        assert_eq!(reply["id"], Value::from(id));
        assert_eq!(error_code(&reply), NOT_INITIALIZED);
        assert_eq!(error_code(&reply), -32002);
        assert!(run.events.is_empty());
    }
    // Notifications before initialize are delivered, never answered.
    let run = send(&mut ext, r#"{"jsonrpc":"2.0","method":"hello"}"#);
    assert!(run.written.is_empty());
    assert_eq!(
        run.events,
        vec![Event::Notification {
            method: "hello".into(),
            params: None
        }]
    );
}

#[test]
fn execute_with_missing_or_mistyped_params_is_invalid_params() {
    let mut ext = initialized();
    let cases = [
        (r#"{"jsonrpc":"2.0","id":1,"method":"tools/execute"}"#, ""),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/execute","params":{"input":{}}}"#,
            "toolName",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/execute","params":{"toolName":7,"input":{}}}"#,
            "toolName",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/execute","params":{"toolName":"add"}}"#,
            "input",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/execute","params":["add",{}]}"#,
            "",
        ),
    ];
    for (line, path) in cases {
        let run = send(&mut ext, line);
        let reply = run.line();
        assert_eq!(reply["id"], Value::from(1), "{line}");
        assert_eq!(error_code(&reply), -32602, "{line}");
        assert_eq!(reply["error"]["data"]["path"], Value::from(path), "{line}");
        assert!(run.events.is_empty(), "{line}");
    }
}

#[test]
fn execute_of_an_unknown_tool_names_it() {
    let mut ext = initialized();
    let reply = send(&mut ext, &execute(8, "nope", "{}")).line();
    assert_eq!(reply["id"], Value::from(8));
    assert_eq!(error_code(&reply), -32602);
    assert_eq!(
        reply["error"]["message"],
        Value::from("Unknown tool 'nope'")
    );
    assert_eq!(reply["error"]["data"]["toolName"], Value::from("nope"));
}

#[test]
fn input_failing_the_schema_is_invalid_params_with_the_validators_message() {
    let mut ext = initialized();
    let reply = send(&mut ext, &execute(1, "fetch_url", "{}")).line();
    assert_eq!(
        reply,
        value(
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Missing required parameter 'url'","data":{"toolName":"fetch_url","path":"$"}}}"#
        )
    );
    let reply = send(&mut ext, &execute(2, "fetch_url", r#"{"url":7}"#)).line();
    assert_eq!(error_code(&reply), -32602);
    assert_eq!(reply["error"]["data"]["path"], Value::from("$.url"));
    assert_eq!(reply["error"]["data"]["toolName"], Value::from("fetch_url"));
    let reply = send(&mut ext, &execute(3, "add", r#"{"a":1,"b":2,"c":3}"#)).line();
    assert_eq!(error_code(&reply), -32602);
    let run = send(&mut ext, &execute(4, "add", r#"{"a":1,"b":2.5}"#));
    assert!(run.written.is_empty());
    assert_eq!(the_execute(&run.events).2, value(r#"{"a":1,"b":2.5}"#));
}

#[test]
fn with_validation_off_the_author_sees_every_input() {
    let mut ext = initialized_with(Config::default().validate_input(false));
    let run = send(&mut ext, &execute(1, "fetch_url", "{}"));
    assert!(run.written.is_empty());
    let (request, tool, input) = the_execute(&run.events);
    assert_eq!((tool.as_str(), input), ("fetch_url", value("{}")));
    assert_eq!(ext.rpc_id(request), Some(&Id::from(1)));
}

#[test]
fn notifications_are_never_answered() {
    let mut ext = initialized();
    for (line, method) in [
        (
            r#"{"jsonrpc":"2.0","method":"tools/execute","params":{"toolName":"nope","input":{}}}"#,
            "tools/execute",
        ),
        (
            r#"{"jsonrpc":"2.0","method":"no/such/method","params":[1]}"#,
            "no/such/method",
        ),
        (r#"{"jsonrpc":"2.0","method":"initialize"}"#, "initialize"),
        (
            r#"{"jsonrpc":"2.0","method":"progress","params":{"message":"hi"}}"#,
            "progress",
        ),
    ] {
        let run = send(&mut ext, line);
        assert!(run.written.is_empty(), "{line}");
        assert!(
            matches!(&run.events[..], [Event::Notification { method: m, .. }] if m == method),
            "{line}: {:?}",
            run.events
        );
    }
}

#[test]
fn a_response_is_reported_and_never_answered() {
    let mut ext = initialized();
    let run = send(&mut ext, r#"{"jsonrpc":"2.0","id":5,"result":{}}"#);
    assert!(run.written.is_empty());
    assert_eq!(
        run.events,
        vec![Event::Protocol(PeerError::UnexpectedResponse {
            id: Id::from(5)
        })]
    );
    let run = send(
        &mut ext,
        r#"{"jsonrpc":"2.0","id":6,"error":{"code":-1,"message":"x"}}"#,
    );
    assert!(run.written.is_empty());
    assert_eq!(run.events.len(), 1);
    // Shaped like a response but invalid (both result and error): not answered either.
    let run = send(
        &mut ext,
        r#"{"jsonrpc":"2.0","id":7,"result":1,"error":{"code":1,"message":"x"}}"#,
    );
    assert!(run.written.is_empty());
    assert_eq!(
        run.events,
        vec![Event::Protocol(PeerError::UnexpectedResponse {
            id: Id::from(7)
        })]
    );
}

#[test]
fn ids_are_echoed_exactly() {
    let mut ext = initialized();
    for id in [
        r#""abc""#,
        r#""""#,
        "12345678901234567890123456789",
        "-3",
        "0",
        "null",
        r#""\u00e9\n""#,
    ] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#);
        let run = send(&mut ext, &line);
        assert_eq!(run.line()["id"], value(id), "{id}");
        let text = String::from_utf8(run.written).unwrap();
        assert!(text.contains(&format!(r#""id":{}"#, value(id))), "{text}");
    }
}

// ---- oversized and truncated lines ---------------------------------------------------

#[test]
fn a_line_over_the_limit_fails_its_request_at_once_when_the_id_is_readable() {
    let mut ext = initialized_with(Config::default().max_line_bytes(256));
    let big = "x".repeat(1000);
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":"big","method":"tools/execute","params":{{"toolName":"fetch_url","input":{{"url":"{big}"}}}}}}"#
    );
    let run = send(&mut ext, &line);
    let reply = run.line();
    assert_eq!(reply["id"], Value::from("big"));
    assert_eq!(error_code(&reply), -32600);
    assert!(matches!(
        &run.events[..],
        [Event::Protocol(PeerError::LineTooLong { line: excerpt, id: Some(Id::String(s)) })]
            if excerpt.len == line.len() as u64 && line.as_bytes().starts_with(&excerpt.start) && s == "big"
    ));

    // No id at the start, or a notification: reported, not answered.
    let line = format!(r#"{{"jsonrpc":"2.0","method":"x","params":{{"a":"{big}"}},"id":1}}"#);
    let run = send(&mut ext, &line);
    assert!(run.written.is_empty());
    assert!(matches!(
        &run.events[..],
        [Event::Protocol(PeerError::LineTooLong { id: None, .. })]
    ));

    // The stream is still in sync.
    assert_eq!(
        send(
            &mut ext,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#
        )
        .line()["id"],
        Value::from(2)
    );
}

#[test]
fn end_of_input_in_the_middle_of_a_line_is_reported() {
    let mut ext = initialized();
    ext.handle_input(Input::Stdin(br#"{"jsonrpc":"2.0","id":1,"meth"#));
    assert!(drain(&mut ext).written.is_empty());
    ext.handle_input(Input::StdinClosed);
    let run = drain(&mut ext);
    assert!(run.written.is_empty());
    assert_eq!(
        run.events,
        vec![
            Event::Protocol(PeerError::Truncated {
                line: Excerpt {
                    start: br#"{"jsonrpc":"2.0","id":1,"meth"#.to_vec(),
                    len: 29
                }
            }),
            Event::Shutdown
        ]
    );
    assert_eq!(run.exit, Some(0));
}

// ---- the author's answers ------------------------------------------------------------

#[test]
fn answers_may_come_in_any_order() {
    let mut ext = initialized();
    let mut requests = Vec::new();
    for id in 1..=3 {
        let run = send(
            &mut ext,
            &execute(
                id,
                "fetch_url",
                &format!(r#"{{"url":"https://example.com/{id}"}}"#),
            ),
        );
        assert!(run.written.is_empty());
        let (request, _, input) = the_execute(&run.events);
        assert_eq!(
            input["url"],
            Value::from(format!("https://example.com/{id}"))
        );
        assert_eq!(ext.rpc_id(request), Some(&Id::from(id)));
        requests.push(request);
    }
    assert_eq!(ext.pending_requests(), 3);
    ext.respond(requests[2], ToolResult::text("three")).unwrap();
    ext.respond_error(requests[0], ErrorObject::new(-32050, "backend down"))
        .unwrap();
    ext.respond(requests[1], ToolResult::error_text("404"))
        .unwrap();
    let lines = drain(&mut ext).lines();
    assert_eq!(
        lines,
        vec![
            value(
                r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"three"}],"isError":false}}"#
            ),
            value(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32050,"message":"backend down"}}"#),
            value(
                r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"404"}],"isError":true}}"#
            ),
        ]
    );
    assert_eq!(ext.pending_requests(), 0);
}

#[test]
fn answering_twice_or_an_unknown_request_is_a_usage_error_and_sends_nothing() {
    let mut ext = initialized();
    let (request, ..) = the_execute(&send(&mut ext, &execute(1, "add", r#"{"a":1,"b":2}"#)).events);
    ext.respond(request, ToolResult::text("3")).unwrap();
    assert_eq!(drain(&mut ext).lines().len(), 1);

    assert_eq!(
        ext.respond(request, ToolResult::text("3")),
        Err(UsageError::AlreadyAnswered(request))
    );
    assert_eq!(
        ext.respond_error(request, ErrorObject::new(-32000, "x")),
        Err(UsageError::AlreadyAnswered(request))
    );
    assert_eq!(
        ext.progress(request, "late"),
        Err(UsageError::AlreadyAnswered(request))
    );
    assert_eq!(ext.rpc_id(request), None);

    // A handle this endpoint never gave out.
    let mut other = initialized();
    send(&mut other, &execute(1, "add", r#"{"a":1,"b":2}"#));
    let (foreign, ..) =
        the_execute(&send(&mut other, &execute(2, "add", r#"{"a":1,"b":2}"#)).events);
    assert_eq!(
        ext.respond_value(foreign, Ok(Value::Null)),
        Err(UsageError::UnknownRequest(foreign))
    );
    assert!(drain(&mut ext).written.is_empty());
    assert!(!UsageError::UnknownRequest(foreign).to_string().is_empty());
}

#[test]
fn progress_carries_the_requests_id() {
    let mut ext = initialized();
    let line = r#"{"jsonrpc":"2.0","id":"call-7","method":"tools/execute","params":{"toolName":"fetch_url","input":{"url":"u"}}}"#;
    let (request, ..) = the_execute(&send(&mut ext, line).events);
    ext.progress(request, "Downloading... 50%").unwrap();
    ext.progress(request, "Parsing HTML...").unwrap();
    let lines = drain(&mut ext).lines();
    assert_eq!(
        lines,
        vec![
            value(
                r#"{"jsonrpc":"2.0","method":"progress","params":{"message":"Downloading... 50%","id":"call-7"}}"#
            ),
            value(
                r#"{"jsonrpc":"2.0","method":"progress","params":{"message":"Parsing HTML...","id":"call-7"}}"#
            ),
        ]
    );
    ext.respond(request, ToolResult::text("done")).unwrap();
    assert_eq!(drain(&mut ext).line()["id"], Value::from("call-7"));
}

#[test]
fn past_max_pending_a_request_gets_a_server_error() {
    let mut ext = initialized_with(Config::default().max_pending(2));
    let first = the_execute(&send(&mut ext, &execute(1, "add", r#"{"a":1,"b":2}"#)).events).0;
    send(&mut ext, &execute(2, "add", r#"{"a":1,"b":2}"#));
    let run = send(&mut ext, &execute(3, "add", r#"{"a":1,"b":2}"#));
    let reply = run.line();
    assert_eq!(reply["id"], Value::from(3));
    assert_eq!(error_code(&reply), TOO_MANY_PENDING);
    assert!(run.events.is_empty());
    ext.respond(first, ToolResult::text("3")).unwrap();
    drain(&mut ext);
    let run = send(&mut ext, &execute(4, "add", r#"{"a":1,"b":2}"#));
    assert!(run.written.is_empty());
    assert_eq!(the_execute(&run.events).1, "add");
}

#[test]
fn custom_methods_are_delivered_as_events_when_asked_for() {
    let mut ext = initialized_with(Config::default().custom_methods(true));
    let run = send(
        &mut ext,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"n":1}}"#,
    );
    assert!(run.written.is_empty());
    let [
        Event::Request {
            request,
            method,
            params,
        },
    ] = &run.events[..]
    else {
        panic!("{:?}", run.events)
    };
    assert_eq!(
        (method.as_str(), params),
        ("ping", &Some(value(r#"{"n":1}"#)))
    );
    ext.respond_value(*request, Ok(Value::from("pong")))
        .unwrap();
    assert_eq!(
        drain(&mut ext).line(),
        value(r#"{"jsonrpc":"2.0","id":1,"result":"pong"}"#)
    );
    // Methods the protocol defines are still handled by the endpoint.
    assert_eq!(
        error_code(&send(&mut ext, &execute(2, "nope", "{}")).line()),
        -32602
    );
}

// ---- shutdown and end of input -------------------------------------------------------

#[test]
fn shutdown_gives_one_event_then_exit_zero() {
    let mut ext = initialized();
    let run = send(&mut ext, r#"{"jsonrpc":"2.0","method":"shutdown"}"#);
    assert!(run.written.is_empty());
    assert_eq!(run.events, vec![Event::Shutdown]);
    assert_eq!(run.exit, Some(0));
    assert!(ext.is_shutting_down());
    // Nothing after the exit.
    let run = send(
        &mut ext,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    );
    assert!(run.written.is_empty() && run.events.is_empty() && run.exit.is_none());
    ext.handle_input(Input::StdinClosed);
    assert_eq!(ext.poll_output(), Output::Wait);
}

#[test]
fn exit_waits_for_pending_requests_and_new_requests_are_not_started() {
    let mut ext = initialized();
    let (request, ..) = the_execute(&send(&mut ext, &execute(1, "add", r#"{"a":1,"b":2}"#)).events);
    let run = send(&mut ext, r#"{"jsonrpc":"2.0","method":"shutdown"}"#);
    assert_eq!(run.events, vec![Event::Shutdown]);
    assert_eq!(run.exit, None, "a request is pending");

    let run = send(&mut ext, &execute(2, "add", r#"{"a":1,"b":2}"#));
    let reply = run.line();
    assert_eq!(reply["id"], Value::from(2));
    assert_eq!(error_code(&reply), SHUTTING_DOWN);
    assert!(run.events.is_empty());
    // A second shutdown changes nothing.
    let run = send(&mut ext, r#"{"jsonrpc":"2.0","method":"shutdown"}"#);
    assert!(run.events.is_empty() && run.exit.is_none());

    ext.progress(request, "finishing").unwrap();
    ext.respond(request, ToolResult::text("3")).unwrap();
    let run = drain(&mut ext);
    assert_eq!(run.lines().len(), 2);
    assert_eq!(run.exit, Some(0));
}

#[test]
fn end_of_input_means_shutdown_after_the_lines_before_it() {
    let mut ext = initialized();
    ext.handle_input(Input::Stdin(
        execute(1, "add", r#"{"a":1,"b":2}"#).as_bytes(),
    ));
    ext.handle_input(Input::Stdin(b"\n"));
    ext.handle_input(Input::StdinClosed);
    let run = drain(&mut ext);
    assert!(run.written.is_empty());
    let [Event::Execute { request, .. }, Event::Shutdown] = &run.events[..] else {
        panic!("{:?}", run.events)
    };
    assert_eq!(run.exit, None);
    ext.respond(*request, ToolResult::text("3")).unwrap();
    let run = drain(&mut ext);
    assert_eq!(run.line()["id"], Value::from(1));
    assert_eq!(run.exit, Some(0));
}

#[test]
fn shutdown_before_initialize_and_as_a_request() {
    let mut ext = extension_with(Config::default());
    ext.handle_input(Input::StdinClosed);
    let run = drain(&mut ext);
    assert_eq!((run.events, run.exit), (vec![Event::Shutdown], Some(0)));

    let mut ext = initialized();
    let run = send(&mut ext, r#"{"jsonrpc":"2.0","id":9,"method":"shutdown"}"#);
    assert_eq!(
        run.line(),
        value(r#"{"jsonrpc":"2.0","id":9,"result":null}"#)
    );
    assert_eq!((run.events, run.exit), (vec![Event::Shutdown], Some(0)));
}

#[test]
fn a_shutdown_request_before_initialize_is_refused_and_ends_nothing() {
    let mut ext = extension_with(Config::default());
    let run = send(&mut ext, r#"{"jsonrpc":"2.0","id":9,"method":"shutdown"}"#);
    assert_eq!(run.line()["id"], Value::from(9));
    assert_eq!(error_code(&run.line()), -32002);
    assert_eq!((run.events, run.exit), (vec![], None));
    // The session goes on: initialize is answered.
    let run = send(
        &mut ext,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"version":"0.1.0","cwd":"/"}}"#,
    );
    assert!(run.line().get("result").is_some());
}

#[test]
fn a_request_over_the_limit_gets_what_any_request_gets_in_that_state() {
    let big = "x".repeat(1000);
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"tools/execute","params":{{"toolName":"fetch_url","input":{{"url":"{big}"}}}}}}"#
    );
    // Before initialize: -32002, as for any request.
    let mut ext = extension_with(Config::default().max_line_bytes(256));
    let run = send(&mut ext, &line);
    assert_eq!(error_code(&run.line()), -32002);
    // After shutdown: -32000.
    let mut ext = initialized_with(Config::default().max_line_bytes(256));
    let mut input = String::from(r#"{"jsonrpc":"2.0","method":"shutdown"}"#);
    input.push('\n');
    input.push_str(&line);
    let run = send(&mut ext, &input);
    assert_eq!(run.line()["id"], Value::from(5));
    assert_eq!(error_code(&run.line()), -32000);
}

// ---- batches -------------------------------------------------------------------------

#[test]
fn a_batch_is_answered_in_one_line_once_its_last_reply_is_known() {
    let mut ext = initialized();
    let batch = concat!(
        "[",
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/execute","params":{"toolName":"add","input":{"a":1,"b":2}}},"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"},"#,
        r#"{"jsonrpc":"2.0","method":"note"},"#,
        r#"{"foo":"boo"},"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/execute","params":{"toolName":"fetch_url","input":{"url":"u"}}},"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"missing"}"#,
        "]"
    );
    let run = send(&mut ext, batch);
    assert!(
        run.written.is_empty(),
        "two requests are left to the author"
    );
    let executes: Vec<RequestHandle> = run
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Execute { request, .. } => Some(*request),
            _ => None,
        })
        .collect();
    assert_eq!(executes.len(), 2);
    assert!(
        run.events
            .iter()
            .any(|e| matches!(e, Event::Notification { method, .. } if method == "note"))
    );
    assert!(
        run.events
            .iter()
            .any(|e| matches!(e, Event::Protocol(PeerError::InvalidMessage { .. })))
    );

    ext.progress(executes[1], "working").unwrap();
    ext.respond(executes[1], ToolResult::text("page")).unwrap();
    let run = drain(&mut ext);
    assert_eq!(
        run.line()["method"],
        Value::from("progress"),
        "only the progress goes out"
    );

    ext.respond(executes[0], ToolResult::text("3")).unwrap();
    let reply = drain(&mut ext).line();
    let replies = reply.as_array().expect("one array line");
    assert_eq!(replies.len(), 5);
    let id_of = |r: &Value| r["id"].clone();
    let mut ids: Vec<String> = replies.iter().map(|r| id_of(r).to_string()).collect();
    ids.sort();
    assert_eq!(ids, vec!["1", "2", "3", "4", "null"]);
    for r in replies {
        match r["id"].as_i64() {
            Some(1) => assert_eq!(r["result"]["content"][0]["text"], Value::from("3")),
            Some(2) => assert!(r["result"]["tools"].as_array().is_some()),
            Some(3) => assert_eq!(r["result"]["content"][0]["text"], Value::from("page")),
            Some(4) => assert_eq!(error_code(r), -32601),
            _ => assert_eq!(error_code(r), -32600),
        }
    }
}

#[test]
fn a_batch_of_notifications_gets_nothing_and_automatic_batches_go_out_at_once() {
    let mut ext = initialized();
    let run = send(
        &mut ext,
        r#"[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b","params":[1]}]"#,
    );
    assert!(run.written.is_empty());
    assert_eq!(run.events.len(), 2);

    let run = send(
        &mut ext,
        r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"x"}]"#,
    );
    assert_eq!(run.line().as_array().map(Vec::len), Some(2));

    let run = send(&mut ext, "[1,2]");
    assert_eq!(run.line().as_array().map(Vec::len), Some(2));
    let run = send(&mut ext, "[]");
    assert_eq!(error_code(&run.line()), -32600);
    // A batch holding only a response: reported, nothing sent.
    let run = send(&mut ext, r#"[{"jsonrpc":"2.0","id":1,"result":1}]"#);
    assert!(run.written.is_empty());
    assert_eq!(run.events.len(), 1);
}

#[test]
fn requests_in_a_batch_after_shutdown_are_refused_inside_the_batch() {
    let mut ext = initialized();
    let run = send(
        &mut ext,
        r#"[{"jsonrpc":"2.0","method":"shutdown"},{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#,
    );
    let reply = run.line();
    assert_eq!(error_code(&reply[0]), SHUTTING_DOWN);
    assert_eq!(run.events, vec![Event::Shutdown]);
    assert_eq!(run.exit, Some(0));
}

// ---- the loop itself -----------------------------------------------------------------

#[test]
fn input_is_decoded_lazily_one_line_at_a_time() {
    let mut ext = initialized();
    let mut input = String::new();
    for id in 1..=1000 {
        input.push_str(&execute(id, "add", r#"{"a":1,"b":2}"#));
        input.push('\n');
    }
    ext.handle_input(Input::Stdin(input.as_bytes()));
    // Each poll hands out one event; the next line is read only after it.
    for id in 1..=1000u64 {
        let Output::Event(Event::Execute { request, .. }) = ext.poll_output() else {
            panic!("event {id}")
        };
        assert_eq!(ext.pending_requests() as u64, id);
        assert_eq!(ext.rpc_id(request), Some(&Id::from(id)));
    }
    assert_eq!(ext.poll_output(), Output::Wait);
}

#[test]
fn the_output_buffer_is_handed_out_whole_and_reused() {
    let mut ext = initialized();
    let mut requests = Vec::new();
    for id in 1..=3 {
        requests
            .push(the_execute(&send(&mut ext, &execute(id, "add", r#"{"a":1,"b":2}"#)).events).0);
    }
    for request in &requests {
        ext.respond(*request, ToolResult::text("3")).unwrap();
    }
    // Replies written between polls go out together, then the buffer starts empty.
    let Output::Transmit(bytes) = ext.poll_output() else {
        panic!("transmit")
    };
    assert_eq!(bytes.iter().filter(|&&b| b == b'\n').count(), 3);
    assert_eq!(ext.poll_output(), Output::Wait);
    assert_eq!(ext.poll_output(), Output::Wait);
}

#[test]
fn a_byte_order_mark_crlf_and_blank_lines_are_accepted() {
    let mut ext = Extension::new(ServerInfo::new("t", "1"), Vec::new());
    let mut input = vec![0xEF, 0xBB, 0xBF];
    input.extend_from_slice(INITIALIZE.as_bytes());
    input.extend_from_slice(b"\r\n\n   \n");
    input.extend_from_slice(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    input.extend_from_slice(b"\r\n");
    for byte in &input {
        ext.handle_input(Input::Stdin(std::slice::from_ref(byte)));
    }
    let lines = drain(&mut ext).lines();
    assert_eq!(lines.len(), 2);
    assert_eq!(
        lines[1],
        value(r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#)
    );
}
