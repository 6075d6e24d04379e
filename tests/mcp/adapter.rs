//! `mcp::Adapter` without processes: a Dhara `Core` on one side, a scripted MCP
//! server on the other, the bytes carried between them as a driver carries them.

use dhara_protocol::host::{self, CallError, CallId, Config, Core, Event, Reply};
use dhara_protocol::json::{self, Value, json};
use dhara_protocol::mcp::{Adapter, AdapterConfig, AdapterEvent, AdapterInput, AdapterOutput};
use dhara_protocol::message::{Content, InitializeParams, ToolResult};
use dhara_protocol::rpc::ErrorCode;
use dhara_protocol::time::Instant;

/// What the scripted MCP server answers to one message it reads (as JSON values,
/// one line each).
type Script = Box<dyn FnMut(&Value) -> Vec<Value>>;

struct Bridge {
    core: Core,
    adapter: Adapter,
    server: Script,
    /// Every message the adapter sent the MCP server.
    to_server: Vec<Value>,
    core_events: Vec<Event>,
    adapter_events: Vec<AdapterEvent>,
    closed_mcp: bool,
    exit: Option<i32>,
}

fn lines(bytes: &[u8]) -> Vec<Value> {
    bytes
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| json::parse(line).expect("the adapter writes JSON lines"))
        .collect()
}

fn line_of(values: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for value in values {
        out.extend_from_slice(&json::to_vec(value));
        out.push(b'\n');
    }
    out
}

impl Bridge {
    fn new(server: Script) -> Bridge {
        let mut core = Core::new(Config::default());
        core.initialize(Instant::ZERO, InitializeParams::new("/work"))
            .expect("a new Core initializes");
        let mut bridge = Bridge {
            core,
            adapter: Adapter::new(AdapterConfig::default()),
            server,
            to_server: Vec::new(),
            core_events: Vec::new(),
            adapter_events: Vec::new(),
            closed_mcp: false,
            exit: None,
        };
        bridge.run();
        bridge
    }

    /// Carries bytes until neither side has anything to do.
    fn run(&mut self) {
        for _ in 0..10_000 {
            let mut moved = false;
            loop {
                match self.core.poll_output() {
                    host::Output::Transmit(bytes) => {
                        let bytes = bytes.to_vec();
                        self.adapter.handle_input(AdapterInput::Dhara(&bytes));
                        moved = true;
                    }
                    host::Output::Event(event) => self.core_events.push(event),
                    host::Output::CloseStdin => {
                        self.adapter.handle_input(AdapterInput::DharaClosed);
                        moved = true;
                    }
                    host::Output::Kill => panic!("the adapter exits by itself"),
                    host::Output::Wait(_) => break,
                }
            }
            loop {
                match self.adapter.poll_output() {
                    AdapterOutput::ToDhara(bytes) => {
                        let bytes = bytes.to_vec();
                        self.core
                            .handle_input(Instant::ZERO, host::Input::Stdout(&bytes));
                        moved = true;
                    }
                    AdapterOutput::ToMcp(bytes) => {
                        let sent = lines(bytes);
                        let mut answers = Vec::new();
                        for message in &sent {
                            answers.extend((self.server)(message));
                        }
                        self.to_server.extend(sent);
                        if !answers.is_empty() {
                            self.adapter
                                .handle_input(AdapterInput::Mcp(&line_of(&answers)));
                        }
                        moved = true;
                    }
                    AdapterOutput::Event(event) => self.adapter_events.push(event),
                    AdapterOutput::CloseMcp => {
                        assert!(!self.closed_mcp, "CloseMcp comes once");
                        self.closed_mcp = true;
                        self.adapter.handle_input(AdapterInput::McpClosed);
                    }
                    AdapterOutput::Exit { code } => {
                        assert!(self.closed_mcp, "the MCP server is closed before the exit");
                        self.exit = Some(code);
                        self.core
                            .handle_input(Instant::ZERO, host::Input::StdoutClosed);
                        self.core
                            .handle_input(Instant::ZERO, host::Input::Exited { code: Some(code) });
                        moved = true;
                        break;
                    }
                    _ => break,
                }
            }
            if !moved {
                return;
            }
        }
        panic!("the bridge did not settle");
    }

    fn call(&mut self, tool: &str, input: Value) -> (CallId, Result<Reply, CallError>) {
        let call = self
            .core
            .execute(Instant::ZERO, tool, input)
            .expect("the tool is known");
        self.run();
        let result = self
            .core_events
            .iter()
            .find_map(|event| match event {
                Event::CallEnded {
                    call: ended,
                    result,
                } if *ended == call => Some(result.clone()),
                _ => None,
            })
            .expect("the call ended");
        (call, result)
    }

    fn executed(&mut self, tool: &str, input: Value) -> ToolResult {
        match self.call(tool, input).1 {
            Ok(Reply::Executed(result)) => result,
            other => panic!("expected a result, got {other:?}"),
        }
    }

    fn sent(&self, method: &str) -> Vec<&Value> {
        self.to_server
            .iter()
            .filter(|m| m["method"].as_str() == Some(method))
            .collect()
    }
}

fn reply(request: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": (request["id"].clone()), "result": result})
}

fn tool(name: &str) -> Value {
    json!({"name": name, "description": (format!("the {name} tool")), "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}})
}

/// A server that answers the handshake with two pages of tools, then `call` for
/// each `tools/call`.
fn server_with(mut call: impl FnMut(&Value) -> Vec<Value> + 'static) -> Script {
    Box::new(move |message| {
        let method = message["method"].as_str().unwrap_or("");
        match method {
            "initialize" => vec![reply(
                message,
                json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {"listChanged": true}}, "serverInfo": {"name": "files", "version": "2.1.0"}}),
            )],
            "tools/list" => match message["params"]["cursor"].as_str() {
                None => vec![reply(
                    message,
                    json!({"tools": [(tool("read"))], "nextCursor": "page-2"}),
                )],
                Some("page-2") => vec![reply(message, json!({"tools": [(tool("write"))]}))],
                Some(other) => panic!("a cursor never given: {other}"),
            },
            "tools/call" => call(message),
            _ => Vec::new(),
        }
    })
}

fn initialized(bridge: &Bridge) -> dhara_protocol::message::InitializeResult {
    bridge
        .core_events
        .iter()
        .find_map(|event| match event {
            Event::CallEnded {
                result: Ok(Reply::Initialized(info)),
                ..
            } => Some(info.clone()),
            _ => None,
        })
        .expect("initialize answered")
}

#[test]
fn the_handshake_follows_the_cursor_to_the_end() {
    let bridge = Bridge::new(server_with(|_| Vec::new()));
    let info = initialized(&bridge);
    assert_eq!(
        (info.name.as_str(), info.version.as_str()),
        ("files", "2.1.0")
    );
    let names: Vec<&str> = info.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["read", "write"]);
    assert_eq!(info.tools[0].description.as_deref(), Some("the read tool"));
    assert_eq!(
        info.tools[1]
            .input_schema
            .as_ref()
            .map(|s| &s["properties"]["path"]["type"]),
        Some(&Value::from("string"))
    );

    // initialize, then initialized, then the two pages, in this order.
    let methods: Vec<&str> = bridge
        .to_server
        .iter()
        .filter_map(|m| m["method"].as_str())
        .collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/list"
        ]
    );
    let init = &bridge.to_server[0]["params"];
    assert_eq!(init["protocolVersion"], Value::from("2025-06-18"));
    assert_eq!(init["clientInfo"]["name"], Value::from("dhara"));
    assert!(init["capabilities"].as_object().is_some());
    assert_eq!(
        bridge.sent("tools/list")[1]["params"]["cursor"],
        Value::from("page-2")
    );
    assert!(matches!(
        &bridge.adapter_events[..],
        [AdapterEvent::Ready { tools: 2, protocol_version, .. }] if protocol_version == "2025-06-18"
    ));
}

#[test]
fn an_older_protocol_version_is_accepted_and_an_unknown_one_fails_the_handshake() {
    for (version, ok) in [
        ("2024-11-05", true),
        ("2025-03-26", true),
        ("1999-01-01", false),
    ] {
        let mut bridge = Bridge::new(Box::new(move |message| match message["method"].as_str() {
            Some("initialize") => vec![reply(
                message,
                json!({"protocolVersion": version, "capabilities": {}, "serverInfo": {"name": "old", "version": "1"}}),
            )],
            Some("tools/list") => vec![reply(message, json!({"tools": []}))],
            _ => Vec::new(),
        }));
        if ok {
            assert_eq!(initialized(&bridge).name, "old");
            assert_eq!(bridge.exit, None);
        } else {
            assert!(bridge.adapter_events.iter().any(|e| matches!(
                e,
                AdapterEvent::HandshakeFailed { reason } if reason.contains("1999-01-01")
            )));
            assert_eq!(bridge.exit, Some(1));
            assert!(bridge.closed_mcp);
            // The Core's initialize ends: the extension exited before answering.
            bridge.run();
            assert!(bridge.core_events.iter().any(|e| matches!(
                e,
                Event::CallEnded {
                    result: Err(CallError::ExtensionExited { .. }),
                    ..
                }
            )));
        }
    }
}

#[test]
fn an_initialize_error_fails_the_handshake() {
    let bridge = Bridge::new(Box::new(|message| {
        vec![
            json!({"jsonrpc": "2.0", "id": (message["id"].clone()), "error": {"code": (-32603), "message": "no config"}}),
        ]
    }));
    assert_eq!(bridge.exit, Some(1));
    assert!(bridge.adapter_events.iter().any(|e| matches!(
        e,
        AdapterEvent::HandshakeFailed { reason } if reason.contains("no config")
    )));
}

#[test]
fn tools_execute_becomes_tools_call_and_content_is_mapped_item_by_item() {
    let mut bridge = Bridge::new(server_with(|message| {
        let token = message["params"]["_meta"]["progressToken"].clone();
        vec![
            json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": (token.clone()), "progress": 1, "total": 4}}),
            json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": (token.clone()), "progress": 2, "message": "halfway"}}),
            // Another request's token: not this call's progress.
            json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "elsewhere", "progress": 1}}),
            reply(
                message,
                json!({"content": [
                {"type": "text", "text": "hello", "annotations": {"priority": 1}},
                {"type": "image", "data": "iVBORw0K", "mimeType": "image/png"},
                {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
                {"type": "resource_link", "uri": "file:///tmp/out.csv", "name": "out.csv", "mimeType": "text/csv", "size": 12},
                {"type": "resource_link", "uri": "https://example.com/a", "name": "a"},
                {"type": "resource", "resource": {"uri": "file:///notes.md", "mimeType": "text/markdown", "text": "# Notes"}},
                {"type": "resource", "resource": {"uri": "mem://pic", "mimeType": "image/gif", "blob": "R0lGOD"}},
                {"type": "resource", "resource": {"uri": "mem://bin", "blob": "AAAA"}},
                {"type": "chart", "points": [1, 2]}
            ], "isError": false}),
            ),
        ]
    }));
    let (call, result) = bridge.call("read", json!({"path": "/tmp/x"}));
    let Ok(Reply::Executed(result)) = result else {
        panic!("a result: {result:?}");
    };

    let sent = bridge.sent("tools/call");
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["params"]["name"], Value::from("read"));
    assert_eq!(sent[0]["params"]["arguments"], json!({"path": "/tmp/x"}));

    let object = |v: Value| match v {
        Value::Object(o) => o,
        _ => panic!("an object"),
    };
    assert!(!result.is_error);
    assert_eq!(
        result.content,
        vec![
            Content::text("hello"),
            Content::ImageData {
                mime_type: "image/png".into(),
                data: "iVBORw0K".into()
            },
            Content::Unknown(object(
                json!({"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"})
            )),
            Content::File {
                path: "/tmp/out.csv".into(),
                size: Some(12),
                mime_type: Some("text/csv".into())
            },
            Content::Unknown(object(
                json!({"type": "resource_link", "uri": "https://example.com/a", "name": "a"})
            )),
            Content::text("# Notes"),
            Content::ImageData {
                mime_type: "image/gif".into(),
                data: "R0lGOD".into()
            },
            Content::Unknown(object(
                json!({"type": "resource", "resource": {"uri": "mem://bin", "blob": "AAAA"}})
            )),
            Content::Unknown(object(json!({"type": "chart", "points": [1, 2]}))),
        ]
    );

    // The call's own progress, with the call's id; the other token's is not there.
    let progress: Vec<(Option<CallId>, &str)> = bridge
        .core_events
        .iter()
        .filter_map(|event| match event {
            Event::Progress { call, progress } => Some((*call, progress.message.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(progress, [(Some(call), "1/4"), (Some(call), "halfway")]);
}

#[test]
fn is_error_and_json_rpc_errors_stay_apart() {
    let mut bridge = Bridge::new(server_with(|message| {
        match message["params"]["name"].as_str() {
            Some("read") => vec![reply(
                message,
                json!({"content": [{"type": "text", "text": "no such file"}], "isError": true}),
            )],
            _ => vec![
                json!({"jsonrpc": "2.0", "id": (message["id"].clone()), "error": {"code": (-32602), "message": "bad path", "data": {"path": "x"}}}),
            ],
        }
    }));
    let result = bridge.executed("read", json!({}));
    assert!(result.is_error);
    assert_eq!(result.content, vec![Content::text("no such file")]);

    let Err(CallError::Rpc(error)) = bridge.call("write", json!({})).1 else {
        panic!("a JSON-RPC error");
    };
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(error.message, "bad path");
    assert_eq!(error.data, Some(json!({"path": "x"})));
}

#[test]
fn a_result_with_only_structured_content_is_one_text_item_of_json() {
    let mut bridge = Bridge::new(server_with(|message| {
        vec![reply(message, json!({"structuredContent": {"n": 3}}))]
    }));
    let result = bridge.executed("read", json!({}));
    assert_eq!(result.content, vec![Content::text(r#"{"n":3}"#)]);
}

#[test]
fn a_result_that_does_not_fit_is_an_internal_error() {
    let mut bridge = Bridge::new(server_with(|message| {
        vec![reply(message, json!({"content": "not a list"}))]
    }));
    let Err(CallError::Rpc(error)) = bridge.call("read", json!({})).1 else {
        panic!("a JSON-RPC error");
    };
    assert_eq!(error.code, ErrorCode::INTERNAL_ERROR);
    assert!(error.message.contains("content"), "{}", error.message);
}

#[test]
fn list_changed_lists_again_and_tells_the_core() {
    let mut listed = 0;
    let mut bridge = Bridge::new(Box::new(move |message| match message["method"].as_str() {
        Some("initialize") => vec![reply(
            message,
            json!({"protocolVersion": "2025-03-26", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}),
        )],
        Some("tools/list") => {
            listed += 1;
            let tools = if listed == 1 {
                json!([(tool("a"))])
            } else {
                json!([(tool("a")), (tool("b"))])
            };
            vec![reply(message, json!({"tools": tools}))]
        }
        Some("tools/call") => vec![
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
            reply(message, json!({"content": []})),
        ],
        _ => Vec::new(),
    }));
    assert_eq!(bridge.core.tools().len(), 1);
    bridge.executed("a", json!({}));
    bridge.run();
    let changed: Vec<usize> = bridge
        .core_events
        .iter()
        .filter_map(|e| match e {
            Event::ToolsChanged { tools } => Some(tools.len()),
            _ => None,
        })
        .collect();
    assert_eq!(changed, [2]);
    assert_eq!(bridge.core.tools()[1].name, "b");
    assert!(
        bridge
            .adapter_events
            .contains(&AdapterEvent::ToolsChanged { tools: 2 })
    );
}

#[test]
fn logs_are_events_and_server_requests_get_answers() {
    let mut bridge = Bridge::new(server_with(|message| {
        if message["method"].as_str() == Some("tools/call") {
            return vec![
                json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "warning", "logger": "fs", "data": "disk almost full"}}),
                json!({"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": {}}),
                json!({"jsonrpc": "2.0", "id": "s2", "method": "ping"}),
                reply(message, json!({"content": []})),
            ];
        }
        Vec::new()
    }));
    bridge.executed("read", json!({}));
    let log = bridge
        .adapter_events
        .iter()
        .find_map(|e| match e {
            AdapterEvent::Log(log) => Some(log.clone()),
            _ => None,
        })
        .expect("a log event");
    assert_eq!(log.level, "warning");
    assert_eq!(log.logger.as_deref(), Some("fs"));
    assert_eq!(log.data, Value::from("disk almost full"));

    let answer = |id: &str| {
        bridge
            .to_server
            .iter()
            .find(|m| m["id"] == Value::from(id) && m.get("method").is_none())
            .cloned()
            .expect("answered")
    };
    assert_eq!(answer("s1")["error"]["code"], Value::from(-32601));
    assert_eq!(answer("s2")["result"], json!({}));
}

#[test]
fn shutdown_closes_the_mcp_server_and_exits_zero() {
    let mut bridge = Bridge::new(server_with(|_| Vec::new()));
    bridge
        .core
        .shutdown(Instant::ZERO)
        .expect("a running session");
    bridge.run();
    assert!(bridge.closed_mcp);
    assert_eq!(bridge.exit, Some(0));
    assert!(
        bridge
            .core_events
            .iter()
            .any(|e| matches!(e, Event::Closed { code: Some(0) }))
    );
}

#[test]
fn the_end_of_input_closes_the_mcp_server_and_exits_zero() {
    let mut bridge = Bridge::new(server_with(|_| Vec::new()));
    bridge.adapter.handle_input(AdapterInput::DharaClosed);
    bridge.run();
    assert_eq!(bridge.exit, Some(0));
}

#[test]
fn a_call_in_flight_when_the_server_exits_gets_an_error_and_the_adapter_exits_one() {
    let mut bridge = Bridge::new(server_with(|_| Vec::new()));
    let call = bridge
        .core
        .execute(Instant::ZERO, "read", json!({}))
        .expect("known");
    bridge.run();
    assert_eq!(bridge.adapter.requests_in_flight(), 1);
    // The server's output ends by itself; the driver still reaps it (CloseMcp).
    bridge.adapter.handle_input(AdapterInput::McpClosed);
    bridge.run();
    assert!(bridge.closed_mcp);
    let result = bridge.core_events.iter().find_map(|e| match e {
        Event::CallEnded { call: c, result } if *c == call => Some(result.clone()),
        _ => None,
    });
    let Some(Err(CallError::Rpc(error))) = result else {
        panic!("an error: {result:?}");
    };
    assert_eq!(error.code.code(), -32000);
    assert_eq!(bridge.exit, Some(1));
}

#[test]
fn lines_that_are_not_json_from_the_server_are_reported_never_answered() {
    let mut bridge = Bridge::new(server_with(|message| {
        vec![
            json!("not an object"),
            reply(
                message,
                json!({"content": [{"type": "text", "text": "ok"}]}),
            ),
        ]
    }));
    bridge
        .adapter
        .handle_input(AdapterInput::Mcp(b"Listening on stdio\n"));
    bridge.run();
    let before = bridge.to_server.len();
    assert_eq!(
        bridge.executed("read", json!({})).content,
        vec![Content::text("ok")]
    );
    // tools/call went out, and nothing else: no answer to the bad lines.
    assert_eq!(bridge.to_server.len(), before + 1);
    let problems = bridge
        .adapter_events
        .iter()
        .filter(|e| matches!(e, AdapterEvent::McpProtocol { .. }))
        .count();
    assert_eq!(problems, 2);
}

#[test]
fn the_end_of_input_before_anything_was_asked_does_not_wait_for_the_handshake() {
    let mut adapter = Adapter::new(AdapterConfig::default());
    adapter.handle_input(AdapterInput::DharaClosed);
    assert!(matches!(adapter.poll_output(), AdapterOutput::ToMcp(_)));
    assert_eq!(adapter.poll_output(), AdapterOutput::CloseMcp);
    assert_eq!(adapter.poll_output(), AdapterOutput::Exit { code: 0 });
    assert_eq!(adapter.poll_output(), AdapterOutput::Wait);
}

#[test]
fn what_the_core_sends_before_the_handshake_is_answered_after_it() {
    // The Core's initialize and a tools/list come, then its end, all before the MCP
    // server has answered anything.
    let mut adapter = Adapter::new(AdapterConfig::default());
    adapter.handle_input(AdapterInput::Dhara(
        concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"version":"0.1.0","cwd":"/"}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            "\n",
        )
        .as_bytes(),
    ));
    adapter.handle_input(AdapterInput::DharaClosed);
    let mut to_dhara = Vec::new();
    let mut script = server_with(|_| Vec::new());
    let mut exit = None;
    for _ in 0..100 {
        let mut answers = Vec::new();
        match adapter.poll_output() {
            AdapterOutput::ToMcp(bytes) => {
                for message in lines(bytes) {
                    answers.extend(script(&message));
                }
            }
            AdapterOutput::ToDhara(bytes) => to_dhara.extend(lines(bytes)),
            AdapterOutput::Exit { code } => {
                exit = Some(code);
                break;
            }
            AdapterOutput::Wait => panic!("waits with the answers owed"),
            _ => {}
        }
        if !answers.is_empty() {
            adapter.handle_input(AdapterInput::Mcp(&line_of(&answers)));
        }
    }
    assert_eq!(exit, Some(0));
    assert_eq!(to_dhara.len(), 2);
    assert_eq!(to_dhara[0]["result"]["name"], Value::from("files"));
    assert_eq!(
        to_dhara[1]["result"]["tools"][1]["name"],
        Value::from("write")
    );
}

#[test]
fn input_held_before_the_handshake_is_bounded() {
    let mut config = AdapterConfig::default();
    config.extension = config.extension.max_line_bytes(100);
    let mut adapter = Adapter::new(config);
    adapter.handle_input(AdapterInput::Dhara(&[b' '; 60]));
    adapter.handle_input(AdapterInput::Dhara(&[b' '; 60]));
    let mut dropped = Vec::new();
    loop {
        match adapter.poll_output() {
            AdapterOutput::Event(AdapterEvent::DharaInputDropped { bytes }) => dropped.push(bytes),
            AdapterOutput::Wait => break,
            _ => {}
        }
    }
    assert_eq!(dropped, [20]);
}
