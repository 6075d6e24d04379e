//! The MCP side's decoding does not depend on how the bytes are chunked: the same
//! messages from `mcp::Decoder`, and the same output and events from an `Adapter`
//! reading an MCP server's stdout, whatever the chunk boundaries.

use dhara_protocol::host;
use dhara_protocol::mcp::{
    Adapter, AdapterConfig, AdapterInput, AdapterOutput, Decoder, Server, ServerConfig,
    ServerInput, ServerOutput,
};
use dhara_protocol::time::Instant;
use proptest::prelude::*;

const LINES: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":"é"}}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":0.5}}"#,
    r#"{"jsonrpc":"2.0","id":"a","result":{"content":[]}}"#,
    r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}}"#,
    r#"[{"jsonrpc":"2.0","method":"ping","id":9},{"jsonrpc":"2.0","method":"x"},5]"#,
    r#"[]"#,
    "Server listening on stdio",
    r#"{"jsonrpc":"1.0","id":1,"method":"x"}"#,
    "   ",
    "",
];

/// Splits `bytes` at the given fractions of its length.
fn chunks(bytes: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    points.sort_unstable();
    let mut out = Vec::new();
    let mut start = 0;
    for point in points {
        out.push(bytes[start..point].to_vec());
        start = point;
    }
    out.push(bytes[start..].to_vec());
    out
}

fn decode_all(pieces: &[Vec<u8>]) -> Vec<dhara_protocol::mcp::Received> {
    let mut decoder = Decoder::new(256);
    let mut received = Vec::new();
    for piece in pieces {
        decoder.push(piece);
        received.extend(decoder.by_ref());
    }
    decoder.end();
    received.extend(decoder.by_ref());
    received
}

/// An MCP server's whole stdout for the adapter's handshake, with what servers also
/// write: logs, a ping, a line that is not JSON, a changed tool list.
const SERVER_OUTPUT: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"starting"}}"#,
    "\r\n",
    r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"2"}}"#,
    "\n",
    "Server listening on stdio\n",
    r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"b","description":"B","inputSchema":{"type":"object"}}]}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":4,"result":{"tools":[{"name":"c","inputSchema":{"type":"object"}}]}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}"#,
    "\n",
);

const CORE_INPUT: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"version":"0.1.0","cwd":"/"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    "\n",
);

/// What the adapter writes to each side, and its events, for the server's output
/// handed in these pieces.
fn adapt(pieces: &[Vec<u8>]) -> (Vec<u8>, Vec<u8>, Vec<String>) {
    let mut adapter = Adapter::new(AdapterConfig::default());
    adapter.handle_input(AdapterInput::Dhara(CORE_INPUT.as_bytes()));
    let (mut to_mcp, mut to_dhara, mut events) = (Vec::new(), Vec::new(), Vec::new());
    let mut drain = |adapter: &mut Adapter| loop {
        match adapter.poll_output() {
            AdapterOutput::ToMcp(bytes) => to_mcp.extend_from_slice(bytes),
            AdapterOutput::ToDhara(bytes) => to_dhara.extend_from_slice(bytes),
            AdapterOutput::Event(event) => events.push(format!("{event:?}")),
            AdapterOutput::Wait => break,
            other => panic!("unexpected {other:?}"),
        }
    };
    drain(&mut adapter);
    for piece in pieces {
        adapter.handle_input(AdapterInput::Mcp(piece));
        drain(&mut adapter);
    }
    (to_mcp, to_dhara, events)
}

/// What an MCP client sends `mcp serve`: the handshake, then requests of each kind,
/// a line that is not JSON, and a cancellation for a request never made.
const CLIENT_INPUT: &str = concat!(
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"é"},"_meta":{"progressToken":"t"}}}"#,
    "\r\n",
    "not json\n",
    r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope"}}"#,
    "\n",
);

/// A scripted Dhara extension: its answer to one line of its stdin.
fn extension(line: &[u8]) -> &'static [u8] {
    let line = std::str::from_utf8(line).unwrap_or("");
    if line.contains(r#""method":"initialize""#) {
        concat!(
            r#"{"jsonrpc":"2.0","id":1,"result":{"name":"e","version":"1","tools":[{"name":"echo","description":"Echo","inputSchema":{"type":"object"}}]}}"#,
            "\n",
        )
        .as_bytes()
    } else if line.contains(r#""method":"tools/execute""#) {
        concat!(
            r#"{"jsonrpc":"2.0","method":"progress","params":{"message":"working","id":2}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"é"}],"isError":false}}"#,
            "\n",
        )
        .as_bytes()
    } else {
        b""
    }
}

/// What the server writes to the client, and its events, for the client's input in
/// these pieces.
fn serve(pieces: &[Vec<u8>]) -> (Vec<u8>, Vec<String>) {
    let mut server = Server::new(ServerConfig::new("/"));
    let (mut to_client, mut events) = (Vec::new(), Vec::new());
    let mut drain = |server: &mut Server| loop {
        let mut answer = Vec::new();
        match server.poll_output() {
            ServerOutput::ToMcp(bytes) => to_client.extend_from_slice(bytes),
            ServerOutput::ToExtension(bytes) => {
                for line in bytes.split_inclusive(|&b| b == b'\n') {
                    answer.extend_from_slice(extension(line));
                }
            }
            ServerOutput::Event(event) => events.push(format!("{event:?}")),
            ServerOutput::CloseExtensionStdin => events.push(String::from("stdin closed")),
            ServerOutput::Wait(_) => break,
            other => panic!("unexpected {other:?}"),
        }
        if !answer.is_empty() {
            server.handle_input(
                Instant::ZERO,
                ServerInput::Extension(host::Input::Stdout(&answer)),
            );
        }
    };
    for piece in pieces {
        server.handle_input(Instant::ZERO, ServerInput::Mcp(piece));
        drain(&mut server);
    }
    (to_client, events)
}

proptest! {
    #[test]
    fn the_server_does_the_same_in_any_chunking_of_the_client_input(
        cuts in prop::collection::vec(any::<usize>(), 0..24),
    ) {
        let whole = serve(&[CLIENT_INPUT.as_bytes().to_vec()]);
        prop_assert_eq!(serve(&chunks(CLIENT_INPUT.as_bytes(), &cuts)), whole);
    }

    #[test]
    fn the_decoder_gives_the_same_messages_in_any_chunking(
        picks in prop::collection::vec(0..LINES.len(), 0..12),
        crlf in any::<bool>(),
        tail in any::<bool>(),
        cuts in prop::collection::vec(any::<usize>(), 0..16),
    ) {
        let mut bytes = Vec::new();
        for &pick in &picks {
            bytes.extend_from_slice(LINES[pick].as_bytes());
            bytes.extend_from_slice(if crlf { b"\r\n" } else { b"\n" });
        }
        if tail {
            bytes.extend_from_slice(br#"{"jsonrpc":"2.0","#); // cut off by the end
        }
        let whole = decode_all(&[bytes.clone()]);
        prop_assert_eq!(decode_all(&chunks(&bytes, &cuts)), whole);
    }

    #[test]
    fn the_adapter_does_the_same_in_any_chunking_of_the_server_output(
        cuts in prop::collection::vec(any::<usize>(), 0..24),
    ) {
        let whole = adapt(&[SERVER_OUTPUT.as_bytes().to_vec()]);
        prop_assert_eq!(adapt(&chunks(SERVER_OUTPUT.as_bytes(), &cuts)), whole);
    }
}

/// What the comparisons above compare is the real work: the whole run lists the
/// tools of both pages, answers the ping, and reports the line that is not JSON.
#[test]
fn the_reference_run_does_the_handshake() {
    let (to_mcp, to_dhara, events) = adapt(&[SERVER_OUTPUT.as_bytes().to_vec()]);
    let to_mcp = String::from_utf8(to_mcp).unwrap();
    let to_dhara = String::from_utf8(to_dhara).unwrap();
    assert!(
        to_mcp.contains(r#"{"jsonrpc":"2.0","id":"p","result":{}}"#),
        "{to_mcp}"
    );
    assert!(to_mcp.contains(r#""id":3,"method":"tools/list","params":{"cursor":"2"}"#));
    assert!(to_mcp.contains(r#""id":4,"method":"tools/list""#));
    let lines: Vec<&str> = to_dhara.lines().collect();
    assert_eq!(lines.len(), 3, "{to_dhara}");
    assert!(lines[0].starts_with(
        r#"{"jsonrpc":"2.0","id":1,"result":{"name":"s","version":"1","tools":[{"name":"a""#
    ));
    assert!(lines[0].contains(r#"{"name":"b","description":"B""#));
    assert!(lines[1].starts_with(r#"{"jsonrpc":"2.0","id":2,"result":{"tools":"#));
    assert!(
        lines[2].starts_with(
            r#"{"jsonrpc":"2.0","method":"tools/list","params":{"tools":[{"name":"c""#
        )
    );
    assert!(events.iter().any(|e| e.contains("McpProtocol")));
    assert!(events.iter().any(|e| e.contains("starting")));
}

/// The server's reference run answers every request in order, with the progress.
#[test]
fn the_reference_server_run_answers_everything() {
    let (to_client, events) = serve(&[CLIENT_INPUT.as_bytes().to_vec()]);
    let to_client = String::from_utf8(to_client).unwrap();
    let lines: Vec<&str> = to_client.lines().collect();
    assert_eq!(lines.len(), 7, "{to_client}");
    assert!(lines[0].contains(r#""id":0,"result":{"protocolVersion":"2025-03-26""#));
    assert_eq!(lines[1], r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    assert!(lines[2].contains(r#""id":2,"result":{"tools":[{"name":"echo""#));
    assert_eq!(
        lines[3],
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1,"message":"working"}}"#
    );
    assert_eq!(
        lines[4],
        r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"é"}],"isError":false}}"#
    );
    assert!(lines[5].contains(r#""id":null,"error":{"code":-32700"#));
    assert!(lines[6].contains(r#""id":4,"error":{"code":-32602"#));
    assert!(events.iter().any(|e| e.contains("Initialized")));
}
