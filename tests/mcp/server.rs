//! `mcp::Server` without processes: a scripted MCP client on one side, a Dhara
//! `Extension` endpoint (the extension process, in memory) on the other, behind the
//! server's `Core`.

use core::time::Duration;

use dhara_protocol::extension::{self, Extension, ServerInfo};
use dhara_protocol::host;
use dhara_protocol::json::{self, Value, json};
use dhara_protocol::mcp::{Server, ServerConfig, ServerEvent, ServerInput, ServerOutput};
use dhara_protocol::message::{Content, Tool, ToolResult};
use dhara_protocol::time::Instant;

/// How the in-memory extension behaves.
#[derive(Clone, Copy, PartialEq)]
enum Exits {
    /// On `shutdown`, as a good extension does.
    OnShutdown,
    /// Never by itself: only the kill ends it.
    Never,
}

struct Session {
    server: Server,
    extension: Extension,
    exits: Exits,
    extension_exited: bool,
    now: Instant,
    /// Every message the server wrote to the MCP client.
    to_client: Vec<Value>,
    events: Vec<ServerEvent>,
    kills: usize,
    exit: Option<i32>,
    wait: Option<Instant>,
}

fn schema() -> Value {
    json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
}

impl Session {
    fn new(exits: Exits) -> Session {
        let tools = vec![
            Tool::new("echo", "Say it back", schema()),
            Tool::new("slow", "Never answers", json!({"type": "object"})),
            Tool::new("files", "Gives files", json!({"type": "object"})),
            Tool {
                name: "bare".into(),
                description: None,
                input_schema: None,
            },
        ];
        Session {
            server: Server::new(ServerConfig::new("/work")),
            extension: Extension::new(ServerInfo::new("echo-tools", "3.0.0"), tools),
            exits,
            extension_exited: false,
            now: Instant::ZERO,
            to_client: Vec::new(),
            events: Vec::new(),
            kills: 0,
            exit: None,
            wait: None,
        }
    }

    /// The client sends these messages, then the bytes settle.
    fn send(&mut self, messages: &[Value]) {
        let mut bytes = Vec::new();
        for message in messages {
            bytes.extend_from_slice(&json::to_vec(message));
            bytes.push(b'\n');
        }
        self.server.handle_input(self.now, ServerInput::Mcp(&bytes));
        self.run();
    }

    fn extension_exits(&mut self) {
        if !self.extension_exited {
            self.extension_exited = true;
            self.server
                .handle_input(self.now, ServerInput::Extension(host::Input::StdoutClosed));
            self.server.handle_input(
                self.now,
                ServerInput::Extension(host::Input::Exited { code: Some(0) }),
            );
        }
    }

    fn run(&mut self) {
        for _ in 0..10_000 {
            let mut moved = false;
            loop {
                match self.server.poll_output() {
                    ServerOutput::ToMcp(bytes) => {
                        for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                            self.to_client.push(json::parse(line).expect("JSON lines"));
                        }
                    }
                    ServerOutput::ToExtension(bytes) => {
                        if !self.extension_exited {
                            let bytes = bytes.to_vec();
                            self.extension.handle_input(extension::Input::Stdin(&bytes));
                            moved = true;
                        }
                    }
                    ServerOutput::CloseExtensionStdin => {
                        if !self.extension_exited {
                            self.extension.handle_input(extension::Input::StdinClosed);
                            moved = true;
                        }
                    }
                    ServerOutput::Kill => {
                        self.kills += 1;
                        self.extension_exits();
                        moved = true;
                    }
                    ServerOutput::Event(event) => self.events.push(event),
                    ServerOutput::Exit { code } => {
                        assert_eq!(self.exit, None, "Exit comes once");
                        self.exit = Some(code);
                    }
                    ServerOutput::Wait(deadline) => {
                        self.wait = deadline;
                        break;
                    }
                }
            }
            if !self.extension_exited {
                loop {
                    match self.extension.poll_output() {
                        extension::Output::Transmit(bytes) => {
                            let bytes = bytes.to_vec();
                            self.server.handle_input(
                                self.now,
                                ServerInput::Extension(host::Input::Stdout(&bytes)),
                            );
                            moved = true;
                        }
                        extension::Output::Event(extension::Event::Execute {
                            request,
                            tool_name,
                            input,
                        }) => match tool_name.as_str() {
                            "echo" => {
                                self.extension.progress(request, "echoing").unwrap();
                                self.extension.progress(request, "almost").unwrap();
                                let text = input["text"].as_str().unwrap_or("").to_string();
                                let result = if text == "fail" {
                                    ToolResult::error_text("it failed")
                                } else {
                                    ToolResult::text(text)
                                };
                                self.extension.respond(request, result).unwrap();
                            }
                            "files" => {
                                let result = ToolResult {
                                    content: vec![
                                        Content::ImageData {
                                            mime_type: "image/png".into(),
                                            data: "iVBORw0K".into(),
                                        },
                                        Content::ImagePath {
                                            path: "/tmp/shot one.png".into(),
                                            mime_type: Some("image/png".into()),
                                        },
                                        Content::File {
                                            path: "/tmp/out.csv".into(),
                                            size: Some(7),
                                            mime_type: None,
                                        },
                                    ],
                                    is_error: false,
                                };
                                self.extension.respond(request, result).unwrap();
                            }
                            _ => {} // `slow`: never answered
                        },
                        extension::Output::Event(_) => {}
                        extension::Output::Exit { .. } => {
                            if self.exits == Exits::OnShutdown {
                                self.extension_exits();
                                moved = true;
                            }
                            break;
                        }
                        _ => break,
                    }
                }
            }
            if !moved {
                return;
            }
        }
        panic!("the session did not settle");
    }

    /// Time passes to `at`, and the server is told.
    fn advance(&mut self, at: Instant) {
        self.now = at;
        self.server
            .handle_input(at, ServerInput::Extension(host::Input::Timeout));
        self.run();
    }

    fn answer(&self, id: i64) -> Option<&Value> {
        self.to_client
            .iter()
            .find(|m| m["id"] == Value::from(id) && m.get("method").is_none())
    }

    fn notifications(&self, method: &str) -> Vec<&Value> {
        self.to_client
            .iter()
            .filter(|m| m["method"].as_str() == Some(method) && m.get("id").is_none())
            .collect()
    }

    fn initialize(&mut self, version: &str) -> Value {
        self.send(&[json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "test-client", "version": "0.0.1"}}})]);
        self.send(&[json!({"jsonrpc": "2.0", "method": "notifications/initialized"})]);
        self.answer(0).expect("initialize answered").clone()
    }
}

fn request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[test]
fn initialize_negotiates_the_version_and_names_the_extension() {
    for (asked, answered) in [
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2024-11-05"),
        ("2099-01-01", "2025-06-18"),
    ] {
        let mut session = Session::new(Exits::OnShutdown);
        let answer = session.initialize(asked);
        let result = &answer["result"];
        assert_eq!(
            result["protocolVersion"],
            Value::from(answered),
            "asked {asked}"
        );
        assert_eq!(
            result["serverInfo"],
            json!({"name": "echo-tools", "version": "3.0.0"})
        );
        assert_eq!(
            result["capabilities"]["tools"]["listChanged"],
            Value::Bool(true)
        );
        assert!(session.events.iter().any(|e| matches!(
            e,
            ServerEvent::Initialized { client_info, .. } if client_info.name == "test-client"
        )));
    }
}

#[test]
fn ping_is_answered_always_and_other_requests_wait_for_initialize() {
    let mut session = Session::new(Exits::OnShutdown);
    session.send(&[
        json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        request(2, "tools/list", json!({})),
    ]);
    assert_eq!(session.answer(1).unwrap()["result"], json!({}));
    assert_eq!(
        session.answer(2).unwrap()["error"]["code"],
        Value::from(-32002)
    );
    session.initialize("2025-06-18");
    session.send(&[json!({"jsonrpc": "2.0", "id": 3, "method": "ping"})]);
    assert_eq!(session.answer(3).unwrap()["result"], json!({}));
    session.send(&[request(4, "resources/list", json!({}))]);
    assert_eq!(
        session.answer(4).unwrap()["error"]["code"],
        Value::from(-32601)
    );
}

#[test]
fn tools_list_gives_every_tool_with_an_object_schema() {
    let mut session = Session::new(Exits::OnShutdown);
    session.initialize("2025-06-18");
    session.send(&[request(1, "tools/list", json!({}))]);
    let result = &session.answer(1).unwrap()["result"];
    let tools = result["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["echo", "slow", "files", "bare"]);
    assert_eq!(tools[0]["inputSchema"], schema());
    assert_eq!(tools[0]["description"], Value::from("Say it back"));
    assert_eq!(tools[3]["inputSchema"], json!({"type": "object"}));
    assert!(result.get("nextCursor").is_none());

    session.send(&[request(2, "tools/list", json!({"cursor": "x"}))]);
    assert_eq!(
        session.answer(2).unwrap()["error"]["code"],
        Value::from(-32602)
    );
}

#[test]
fn tools_call_runs_the_tool_with_progress_for_the_token() {
    let mut session = Session::new(Exits::OnShutdown);
    session.initialize("2025-06-18");
    session.send(&[request(
        5,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}, "_meta": {"progressToken": "tok-5"}}),
    )]);
    assert_eq!(
        session.answer(5).unwrap()["result"],
        json!({"content": [{"type": "text", "text": "hi"}], "isError": false})
    );
    let progress = session.notifications("notifications/progress");
    assert_eq!(progress.len(), 2);
    assert_eq!(
        progress[0]["params"],
        json!({"progressToken": "tok-5", "progress": 1, "message": "echoing"})
    );
    assert_eq!(
        progress[1]["params"],
        json!({"progressToken": "tok-5", "progress": 2, "message": "almost"})
    );
    // The progress came before the answer.
    let position = |v: &Value| session.to_client.iter().position(|m| m == v).unwrap();
    assert!(position(progress[1]) < position(session.answer(5).unwrap()));

    // Without a token, no progress goes out.
    session.send(&[request(
        6,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "fail"}}),
    )]);
    assert_eq!(
        session.answer(6).unwrap()["result"],
        json!({"content": [{"type": "text", "text": "it failed"}], "isError": true})
    );
    assert_eq!(session.notifications("notifications/progress").len(), 2);
}

#[test]
fn dhara_images_and_files_become_mcp_blocks() {
    let mut session = Session::new(Exits::OnShutdown);
    session.initialize("2025-06-18");
    session.send(&[request(
        1,
        "tools/call",
        json!({"name": "files", "arguments": {}}),
    )]);
    assert_eq!(
        session.answer(1).unwrap()["result"]["content"],
        json!([
            {"type": "image", "data": "iVBORw0K", "mimeType": "image/png"},
            {"type": "resource_link", "uri": "file:///tmp/shot%20one.png", "name": "shot one.png", "mimeType": "image/png"},
            {"type": "resource_link", "uri": "file:///tmp/out.csv", "name": "out.csv", "size": 7}
        ])
    );
}

#[test]
fn unknown_tools_and_bad_input_are_invalid_params() {
    let mut session = Session::new(Exits::OnShutdown);
    session.initialize("2025-06-18");
    session.send(&[
        request(1, "tools/call", json!({"name": "nope", "arguments": {}})),
        request(2, "tools/call", json!({"name": "echo", "arguments": {}})),
        request(3, "tools/call", json!({"arguments": {}})),
    ]);
    for id in [1, 2, 3] {
        assert_eq!(
            session.answer(id).unwrap()["error"]["code"],
            Value::from(-32602),
            "id {id}"
        );
    }
    assert!(
        session.answer(1).unwrap()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("nope")
    );
    assert_eq!(
        session.answer(2).unwrap()["error"]["message"],
        Value::from("Missing required parameter 'text'")
    );
}

#[test]
fn cancellation_ends_the_call_on_our_side_and_sends_no_answer() {
    let mut session = Session::new(Exits::OnShutdown);
    session.initialize("2025-06-18");
    session.send(&[request(
        9,
        "tools/call",
        json!({"name": "slow", "arguments": {}}),
    )]);
    assert_eq!(session.server.core().calls_in_flight(), 1);
    session.send(&[json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9, "reason": "user"}})]);
    assert_eq!(session.server.core().calls_in_flight(), 0);
    assert!(session.answer(9).is_none());
    // A cancellation for a request that is not in flight changes nothing.
    session.send(&[
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 77}}),
    ]);
    assert_eq!(session.exit, None);
}

#[test]
fn a_timeout_answers_the_call_and_shuts_the_extension_down() {
    let mut session = Session::new(Exits::OnShutdown);
    session.initialize("2025-06-18");
    session.send(&[request(
        3,
        "tools/call",
        json!({"name": "slow", "arguments": {}}),
    )]);
    let deadline = session.wait.expect("the call's deadline");
    assert_eq!(deadline, Instant::ZERO + Duration::from_secs(30));
    session.advance(deadline);
    assert_eq!(
        session.answer(3).unwrap()["error"]["code"],
        Value::from(-32001)
    );
    assert!(session.events.iter().any(|e| matches!(
        e,
        ServerEvent::Extension(host::Event::ShuttingDown {
            reason: host::ShutdownReason::Timeout { .. }
        })
    )));
    // The in-memory extension still waits on its tool, so it does not exit: the
    // kill comes when the grace ends, and the server goes too, with 1.
    assert_eq!(session.exit, None);
    session.advance(deadline + Duration::from_secs(5));
    assert_eq!(session.kills, 1);
    assert_eq!(session.exit, Some(1));
}

#[test]
fn the_end_of_input_shuts_the_extension_down_and_exits_zero() {
    let mut session = Session::new(Exits::OnShutdown);
    session.initialize("2025-06-18");
    session
        .server
        .handle_input(session.now, ServerInput::McpClosed);
    session.run();
    assert!(session.extension_exited);
    assert_eq!(session.exit, Some(0));
}

#[test]
fn an_extension_that_ignores_shutdown_is_killed_after_the_grace() {
    let mut session = Session::new(Exits::Never);
    session.initialize("2025-06-18");
    session
        .server
        .handle_input(session.now, ServerInput::McpClosed);
    session.run();
    assert_eq!(session.exit, None);
    let grace_end = session.wait.expect("the grace timer");
    assert_eq!(grace_end, Instant::ZERO + Duration::from_secs(5));
    session.advance(Instant::ZERO + Duration::from_secs(4));
    assert_eq!(session.kills, 0);
    session.advance(grace_end);
    assert_eq!(session.kills, 1);
    assert_eq!(session.exit, Some(0));
}

#[test]
fn a_call_in_flight_when_the_extension_dies_gets_an_error() {
    let mut session = Session::new(Exits::OnShutdown);
    session.initialize("2025-06-18");
    session.send(&[request(
        4,
        "tools/call",
        json!({"name": "slow", "arguments": {}}),
    )]);
    session.extension_exits();
    session.run();
    assert_eq!(
        session.answer(4).unwrap()["error"]["code"],
        Value::from(-32000)
    );
    assert_eq!(session.exit, Some(1));
}

#[test]
fn a_changed_tool_list_is_announced() {
    let mut session = Session::new(Exits::OnShutdown);
    session.initialize("2025-06-18");
    session.extension.set_tools(vec![Tool::new(
        "only",
        "The one left",
        json!({"type": "object"}),
    )]);
    session.run();
    assert_eq!(
        session
            .notifications("notifications/tools/list_changed")
            .len(),
        1
    );
    session.send(&[request(1, "tools/list", json!({}))]);
    assert_eq!(
        session.answer(1).unwrap()["result"]["tools"][0]["name"],
        Value::from("only")
    );
}

#[test]
fn bad_lines_from_the_client_are_answered_as_json_rpc_says() {
    let mut session = Session::new(Exits::OnShutdown);
    session.server.handle_input(
        session.now,
        ServerInput::Mcp(b"not json\n{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}\n"),
    );
    session.run();
    assert_eq!(session.to_client.len(), 1);
    assert_eq!(session.to_client[0]["error"]["code"], Value::from(-32700));
    let problems = session
        .events
        .iter()
        .filter(|e| matches!(e, ServerEvent::McpProtocol { .. }))
        .count();
    assert_eq!(problems, 2);
}
