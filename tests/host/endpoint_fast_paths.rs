//! Both endpoints read `tools/execute` params, `tools/execute` results and `progress`
//! params in one pass over the line when the envelope's members come before the
//! payload, as JSON-RPC libraries write them; a line whose members come in another
//! order is decoded first and read after. Both ways give the same replies and the
//! same events, for payloads that fit and payloads that do not.

use crate::extension_support;

use dhara_protocol::host::{self, Config, Core, Output};
use dhara_protocol::json::Value;
use dhara_protocol::message::InitializeParams;
use dhara_protocol::time::Instant;
use extension_support::{initialized, send};
use proptest::prelude::*;

fn input() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        r#"{"url":"https://example.com"}"#,
        r#"{"url":"caf\u00e9 \"q\"\n"}"#,
        r#"{"a":1,"b":2.5e3}"#,
        r#"{"a":1}"#,
        r#"{"a":1,"b":2,"c":3}"#,
        r#"{"url":7}"#,
        r#"{}"#,
        r#"[]"#,
        r#""text""#,
        r#"null"#,
        r#"{"url":"x","nested":[{"deep":[[[]]]},{"k":true}]}"#,
    ])
}

/// `tools/execute` params: well formed, or with missing or mistyped fields. (Lines
/// that are not JSON are reported with their text, which differs with the order.)
fn execute_params() -> impl Strategy<Value = String> {
    let tool = prop::sample::select(vec!["fetch_url", "add", "nope", "a\\u0064d"]);
    prop_oneof![
        (tool.clone(), input()).prop_map(|(t, i)| format!(r#"{{"toolName":"{t}","input":{i}}}"#)),
        (tool.clone(), input())
            .prop_map(|(t, i)| format!(r#"{{"input":{i},"x":[1],"toolName":"{t}"}}"#)),
        input().prop_map(|i| format!(r#"{{"input":{i}}}"#)),
        tool.prop_map(|t| format!(r#"{{"toolName":"{t}"}}"#)),
        input().prop_map(|i| format!(r#"{{"toolName":5,"input":{i}}}"#)),
        Just(r#"["add",{}]"#.to_string()),
    ]
}

fn id() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u64..1 << 53).prop_map(|n| n.to_string()),
        Just(r#""a\"b""#.to_string()),
        Just(r#""req-1""#.to_string()),
        Just("null".to_string()),
    ]
}

/// `tools/execute` results: well formed, or not.
fn tool_result() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        r#"{"content":[{"type":"text","text":"hi"}],"isError":false}"#,
        r#"{"content":[]}"#,
        r#"{"isError":true,"content":[{"type":"text","text":"caf\u00e9\n"}]}"#,
        r#"{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"},{"type":"x","y":1}],"isError":null}"#,
        r#"{"content":[{"type":"file","path":"/a","size":-1}]}"#,
        r#"{"content":5}"#,
        r#"{"content":[],"isError":"yes"}"#,
        r#"{"content":[7]}"#,
        r#"[]"#,
        r#"null"#,
    ])
}

/// `progress` params: well formed, or not.
fn progress_params() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        r#"{"message":"Reading… 42%"}"#,
        r#"{"message":"m","id":2}"#,
        r#"{"id":"2","message":"m"}"#,
        r#"{"message":"m","id":1.5}"#,
        r#"{"message":"m","id":null}"#,
        r#"{"message":5}"#,
        r#"{}"#,
        r#"[]"#,
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn the_extension_reads_execute_requests_alike_in_any_member_order(
        id in id(),
        params in execute_params(),
    ) {
        let envelope_first =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/execute","params":{params}}}"#);
        let params_first =
            format!(r#"{{"params":{params},"method":"tools/execute","id":{id},"jsonrpc":"2.0"}}"#);
        let (mut one, mut other) = (initialized(), initialized());
        let (one, other) = (send(&mut one, &envelope_first), send(&mut other, &params_first));
        prop_assert_eq!(
            String::from_utf8_lossy(&one.written),
            String::from_utf8_lossy(&other.written)
        );
        prop_assert_eq!(format!("{:?}", one.events), format!("{:?}", other.events));
    }

    #[test]
    fn the_core_reads_results_alike_in_any_member_order(result in tool_result()) {
        let envelope_first = format!(r#"{{"jsonrpc":"2.0","id":2,"result":{result}}}"#);
        let result_first = format!(r#"{{"result":{result},"jsonrpc":"2.0","id":2}}"#);
        let (one, other) = (core_given(&envelope_first), core_given(&result_first));
        prop_assert_eq!(one, other);
    }

    #[test]
    fn the_core_reads_progress_alike_in_any_member_order(params in progress_params()) {
        let envelope_first = format!(r#"{{"jsonrpc":"2.0","method":"progress","params":{params}}}"#);
        let params_first = format!(r#"{{"params":{params},"jsonrpc":"2.0","method":"progress"}}"#);
        let (one, other) = (core_given(&envelope_first), core_given(&params_first));
        prop_assert_eq!(one, other);
    }
}

/// What a Core with call 2 (`tools/execute`) in flight writes and reports, as
/// text, when it reads `line`.
fn core_given(line: &str) -> String {
    let now = Instant::ZERO;
    let mut core = Core::new(Config::default());
    core.initialize(now, InitializeParams::new("/"))
        .expect("a new Core initializes");
    drain(&mut core);
    let initialized = concat!(
        r#"{"jsonrpc":"2.0","id":1,"result":{"name":"x","version":"1","#,
        r#""tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}"#,
        "\n"
    );
    core.handle_input(now, host::Input::Stdout(initialized.as_bytes()));
    drain(&mut core);
    let call = core.execute(now, "echo", Value::Object(Default::default()));
    assert_eq!(call.map(|c| c.get()), Ok(2));
    drain(&mut core);
    core.handle_input(now, host::Input::Stdout(line.as_bytes()));
    core.handle_input(now, host::Input::Stdout(b"\n"));
    drain(&mut core)
}

/// Polls the Core until it waits: what it wrote and the events, as text.
fn drain(core: &mut Core) -> String {
    let mut seen = String::new();
    loop {
        match core.poll_output() {
            Output::Transmit(bytes) => seen.push_str(&String::from_utf8_lossy(bytes)),
            Output::Event(event) => seen.push_str(&format!("{event:?}\n")),
            Output::Wait(_) => return seen,
            Output::Kill => seen.push_str("kill\n"),
            Output::CloseStdin => seen.push_str("close stdin\n"),
        }
    }
}
