//! The two bridges chained without processes: a scripted MCP client, `mcp::Server`
//! (and its Core), `mcp::Adapter` (and its Extension endpoint), a scripted MCP
//! server. What the client sees is what the server said, through Dhara and back.

use dhara_protocol::host;
use dhara_protocol::json::{self, Value, json};
use dhara_protocol::mcp::{
    Adapter, AdapterConfig, AdapterInput, AdapterOutput, Server, ServerConfig, ServerInput,
    ServerOutput,
};
use dhara_protocol::time::Instant;

/// The MCP server at the far end: its answer to each message.
type FarServer = Box<dyn FnMut(&Value) -> Vec<Value>>;

struct Chain {
    server: Server,
    adapter: Adapter,
    far: FarServer,
    to_client: Vec<Value>,
    to_far: Vec<Value>,
    adapter_exit: Option<i32>,
    server_exit: Option<i32>,
}

fn lines(bytes: &[u8]) -> Vec<Value> {
    bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| json::parse(l).expect("JSON lines"))
        .collect()
}

fn bytes_of(values: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for value in values {
        out.extend_from_slice(&json::to_vec(value));
        out.push(b'\n');
    }
    out
}

impl Chain {
    fn new(far: impl FnMut(&Value) -> Vec<Value> + 'static) -> Chain {
        Chain {
            server: Server::new(ServerConfig::new("/")),
            adapter: Adapter::new(AdapterConfig::default()),
            far: Box::new(far),
            to_client: Vec::new(),
            to_far: Vec::new(),
            adapter_exit: None,
            server_exit: None,
        }
    }

    fn send(&mut self, messages: &[Value]) {
        self.server
            .handle_input(Instant::ZERO, ServerInput::Mcp(&bytes_of(messages)));
        self.run();
    }

    fn run(&mut self) {
        for _ in 0..10_000 {
            let mut moved = false;
            loop {
                match self.server.poll_output() {
                    ServerOutput::ToMcp(bytes) => self.to_client.extend(lines(bytes)),
                    ServerOutput::ToExtension(bytes) => {
                        let bytes = bytes.to_vec();
                        self.adapter.handle_input(AdapterInput::Dhara(&bytes));
                        moved = true;
                    }
                    ServerOutput::Exit { code } => {
                        self.server_exit = Some(code);
                        break;
                    }
                    ServerOutput::CloseExtensionStdin => {
                        self.adapter.handle_input(AdapterInput::DharaClosed);
                        moved = true;
                    }
                    ServerOutput::Kill => panic!("the adapter exits by itself"),
                    ServerOutput::Event(_) => {}
                    _ => break,
                }
            }
            loop {
                match self.adapter.poll_output() {
                    AdapterOutput::ToDhara(bytes) => {
                        let bytes = bytes.to_vec();
                        let input = ServerInput::Extension(host::Input::Stdout(&bytes));
                        self.server.handle_input(Instant::ZERO, input);
                        moved = true;
                    }
                    AdapterOutput::ToMcp(bytes) => {
                        let sent = lines(bytes);
                        let answers: Vec<Value> = sent.iter().flat_map(&mut self.far).collect();
                        self.to_far.extend(sent);
                        if !answers.is_empty() {
                            self.adapter
                                .handle_input(AdapterInput::Mcp(&bytes_of(&answers)));
                        }
                        moved = true;
                    }
                    AdapterOutput::CloseMcp => self.adapter.handle_input(AdapterInput::McpClosed),
                    AdapterOutput::Exit { code } => {
                        self.adapter_exit = Some(code);
                        for input in [
                            host::Input::StdoutClosed,
                            host::Input::Exited { code: Some(code) },
                        ] {
                            self.server
                                .handle_input(Instant::ZERO, ServerInput::Extension(input));
                        }
                        moved = true;
                        break;
                    }
                    AdapterOutput::Event(_) => {}
                    _ => break,
                }
            }
            if !moved {
                return;
            }
        }
        panic!("the chain did not settle");
    }

    fn answer(&self, id: i64) -> &Value {
        self.to_client
            .iter()
            .find(|m| m["id"] == Value::from(id) && m.get("method").is_none())
            .expect("answered")
    }
}

fn result(request: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": (request["id"].clone()), "result": result})
}

/// The far server: two tools; `show` sends progress and one of each block, `oops`
/// a JSON-RPC error, `slow` nothing.
fn far_server(message: &Value) -> Vec<Value> {
    match message["method"].as_str() {
        Some("initialize") => vec![result(
            message,
            json!({"protocolVersion": "2024-11-05", "capabilities": {"tools": {}}, "serverInfo": {"name": "far", "version": "9"}}),
        )],
        Some("tools/list") => vec![result(
            message,
            json!({"tools": [
                {"name": "show", "description": "Shows", "inputSchema": {"type": "object"}},
                {"name": "oops", "inputSchema": {"type": "object"}},
                {"name": "slow", "inputSchema": {"type": "object"}}
            ]}),
        )],
        Some("tools/call") => match message["params"]["name"].as_str() {
            Some("show") => vec![
                json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": (message["params"]["_meta"]["progressToken"].clone()), "progress": 5, "message": "showing"}}),
                result(
                    message,
                    json!({"content": [
                    {"type": "text", "text": "t"},
                    {"type": "image", "data": "AA==", "mimeType": "image/png"},
                    {"type": "audio", "data": "BB==", "mimeType": "audio/wav"},
                    {"type": "resource_link", "uri": "file:///tmp/f.txt", "name": "f.txt", "size": 3}
                ], "isError": true}),
                ),
            ],
            Some("oops") => vec![
                json!({"jsonrpc": "2.0", "id": (message["id"].clone()), "error": {"code": (-32050), "message": "far away"}}),
            ],
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

fn initialized() -> Chain {
    let mut chain = Chain::new(far_server);
    chain.send(&[
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "near", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]);
    chain
}

#[test]
fn the_far_server_is_seen_through_both_bridges() {
    let mut chain = initialized();
    assert_eq!(
        chain.answer(0)["result"]["serverInfo"],
        json!({"name": "far", "version": "9"})
    );
    // Each side negotiates its own version.
    assert_eq!(
        chain.answer(0)["result"]["protocolVersion"],
        Value::from("2025-06-18")
    );
    chain.send(&[json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})]);
    let names: Vec<&str> = chain.answer(1)["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["show", "oops", "slow"]);
}

#[test]
fn a_call_keeps_its_blocks_its_is_error_and_its_progress() {
    let mut chain = initialized();
    chain.send(&[json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "show", "arguments": {"x": 1}, "_meta": {"progressToken": "near-token"}}})]);
    assert_eq!(
        chain.answer(2)["result"],
        json!({"content": [
            {"type": "text", "text": "t"},
            {"type": "image", "data": "AA==", "mimeType": "image/png"},
            {"type": "audio", "data": "BB==", "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///tmp/f.txt", "name": "f.txt", "size": 3}
        ], "isError": true})
    );
    let progress: Vec<&Value> = chain
        .to_client
        .iter()
        .filter(|m| m["method"] == Value::from("notifications/progress"))
        .collect();
    assert_eq!(progress.len(), 1);
    assert_eq!(
        progress[0]["params"],
        json!({"progressToken": "near-token", "progress": 1, "message": "showing"})
    );
    let call = chain
        .to_far
        .iter()
        .find(|m| m["method"] == Value::from("tools/call"))
        .unwrap();
    assert_eq!(call["params"]["arguments"], json!({"x": 1}));
}

#[test]
fn a_json_rpc_error_comes_back_as_it_was() {
    let mut chain = initialized();
    chain.send(&[
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "oops"}}),
    ]);
    assert_eq!(
        chain.answer(3)["error"],
        json!({"code": (-32050), "message": "far away"})
    );
}

#[test]
fn a_cancelled_call_is_not_answered_and_the_end_of_input_ends_both() {
    let mut chain = initialized();
    chain.send(&[
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "slow"}}),
    ]);
    chain.send(&[
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 4}}),
    ]);
    assert_eq!(chain.server.core().calls_in_flight(), 0);
    assert!(chain.to_client.iter().all(|m| m["id"] != Value::from(4)));

    chain
        .server
        .handle_input(Instant::ZERO, ServerInput::McpClosed);
    chain.run();
    // The adapter still waits on the far server's answer to `slow`; it comes, and
    // then both ends exit with 0.
    assert_eq!(chain.adapter_exit, None);
    let call_id = chain
        .to_far
        .iter()
        .find(|m| m["params"]["name"] == Value::from("slow"))
        .map(|m| m["id"].clone())
        .unwrap();
    let late = json!({"jsonrpc": "2.0", "id": call_id, "result": {"content": []}});
    chain
        .adapter
        .handle_input(AdapterInput::Mcp(&bytes_of(&[late])));
    chain.run();
    assert_eq!(chain.adapter_exit, Some(0));
    assert_eq!(chain.server_exit, Some(0));
}
