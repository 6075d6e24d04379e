//! Properties of the Extension endpoint under any input, in any chunking:
//! no panic, every request answered exactly once with its own id, notifications
//! never, and the same output whatever the chunking.

use crate::extension_support;

use std::collections::BTreeMap;

use dhara_protocol::extension::{Config, Event, Extension, Input, Output, ServerInfo};
use dhara_protocol::json::Value;
use dhara_protocol::message::ToolResult;
use extension_support::{lines, web_tools};
use proptest::prelude::*;

/// One message of a generated stream; `id` names a request uniquely.
fn entry(kind: u8, id: &str) -> String {
    let call = |method: &str, params: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}"{params}}}"#)
    };
    match kind % 16 {
        0 => call("initialize", r#","params":{"version":"0.1.0","cwd":"/"}"#),
        1 => call("tools/list", ""),
        2 | 3 => call(
            "tools/execute",
            r#","params":{"toolName":"add","input":{"a":1,"b":2}}"#,
        ),
        4 => call(
            "tools/execute",
            r#","params":{"toolName":"fetch_url","input":{}}"#,
        ),
        5 => call(
            "tools/execute",
            r#","params":{"toolName":"nope","input":{}}"#,
        ),
        6 => call("tools/execute", r#","params":{"input":{}}"#),
        7 => call("custom/method", r#","params":[1,2]"#),
        8 => format!(r#"{{"jsonrpc":"1.0","id":{id},"method":"tools/list"}}"#),
        9 => call("tools/list", r#","params":5"#),
        10 => r#"{"jsonrpc":"2.0","method":"note","params":{"x":1}}"#.to_string(),
        11 => r#"{"jsonrpc":"2.0","method":"progress","params":{"message":"m"}}"#.to_string(),
        12 => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#),
        13 => "this is a log line, not JSON".to_string(),
        14 => r#"{"foo":"boo"}"#.to_string(),
        _ => call("progress", ""),
    }
}

/// Kinds that are requests with a readable id, each owed exactly one reply.
fn is_request(kind: u8) -> bool {
    !matches!(kind % 16, 10..=14)
}

/// A generated stream: lines of one message, or batches of several. Returns the
/// text and the ids of the requests in it (as they appear in replies).
fn stream(lines_of_kinds: &[Vec<(u8, bool)>]) -> (String, Vec<Value>) {
    let mut text = String::new();
    let mut requests = Vec::new();
    let mut n = 0;
    for line in lines_of_kinds {
        let mut entries = Vec::new();
        for &(kind, string_id) in line {
            n += 1;
            let id = if string_id {
                format!(r#""r{n}""#)
            } else {
                n.to_string()
            };
            // A lone entry that is not JSON makes the whole batch a parse error.
            if kind % 16 == 13 && line.len() > 1 {
                entries.push(r#"{"jsonrpc":"2.0","method":"note"}"#.to_string());
                continue;
            }
            if is_request(kind) {
                requests.push(extension_support::value(&id));
            }
            entries.push(entry(kind, &id));
        }
        match entries.len() {
            1 => text.push_str(&entries[0]),
            _ => text.push_str(&format!("[{}]", entries.join(","))),
        }
        text.push('\n');
    }
    (text, requests)
}

fn lines_strategy() -> impl Strategy<Value = Vec<Vec<(u8, bool)>>> {
    prop::collection::vec(
        prop::collection::vec((any::<u8>(), any::<bool>()), 1..4),
        0..24,
    )
}

/// Splits `bytes` at the given cut points.
fn chunks<'a>(bytes: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    points.sort_unstable();
    let mut out = Vec::new();
    let mut start = 0;
    for p in points {
        out.push(&bytes[start..p]);
        start = p;
    }
    out.push(&bytes[start..]);
    out
}

fn new_extension(custom_methods: bool, max_line_bytes: usize) -> Extension {
    let config = Config::default()
        .custom_methods(custom_methods)
        .max_line_bytes(max_line_bytes);
    Extension::with_config(ServerInfo::new("props", "0.0.1"), web_tools(), config)
}

/// What a session gave, with every request answered as soon as it is delivered.
#[derive(Debug, Default, PartialEq)]
struct Transcript {
    written: Vec<u8>,
    events: Vec<Event>,
    exit: Option<i32>,
}

/// Drives the endpoint over the chunks, then the end of input. When `answer_late`,
/// requests are answered only at chunk boundaries, newest first; otherwise at once.
fn session(extension: &mut Extension, chunks: &[&[u8]], answer_late: bool) -> Transcript {
    let mut t = Transcript::default();
    let mut waiting = Vec::new();
    let poll = |extension: &mut Extension, t: &mut Transcript, waiting: &mut Vec<_>| {
        for _ in 0..100_000 {
            match extension.poll_output() {
                Output::Transmit(bytes) => t.written.extend_from_slice(bytes),
                Output::Event(event) => {
                    if let Event::Execute { request, .. } | Event::Request { request, .. } = &event
                    {
                        if answer_late {
                            waiting.push(*request);
                        } else {
                            extension.respond(*request, ToolResult::text("ok")).unwrap();
                        }
                    }
                    t.events.push(event);
                }
                Output::Exit { code } => {
                    assert_eq!(t.exit, None, "exit given twice");
                    t.exit = Some(code);
                }
                Output::Wait => return,
            }
        }
        panic!("the endpoint never waited");
    };
    for chunk in chunks {
        extension.handle_input(Input::Stdin(chunk));
        poll(extension, &mut t, &mut waiting);
        while let Some(request) = waiting.pop() {
            extension
                .respond_value(request, Ok(Value::from("late")))
                .unwrap();
        }
        poll(extension, &mut t, &mut waiting);
    }
    extension.handle_input(Input::StdinClosed);
    poll(extension, &mut t, &mut waiting);
    t
}

/// Every reply line, batches flattened.
fn replies(written: &[u8]) -> Vec<Value> {
    lines(written)
        .into_iter()
        .flat_map(|line| match line {
            Value::Array(batch) => batch,
            single => vec![single],
        })
        .filter(|message| message.get("method").is_none())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn no_panic_on_arbitrary_bytes_in_arbitrary_chunks(
        pieces in prop::collection::vec(
            prop_oneof![
                prop::collection::vec(any::<u8>(), 0..64),
                (any::<u8>(), any::<bool>()).prop_map(|(k, s)| {
                    let mut line = entry(k, if s { "\"x\"" } else { "7" }).into_bytes();
                    line.push(b'\n');
                    line
                }),
                Just(b"\n".to_vec()),
                Just(br#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"},"#.to_vec()),
            ],
            0..32,
        ),
        cuts in prop::collection::vec(any::<usize>(), 0..16),
        custom_methods in any::<bool>(),
        max_line_bytes in prop_oneof![Just(64usize), Just(1 << 20)],
    ) {
        let bytes = pieces.concat();
        let mut extension = new_extension(custom_methods, max_line_bytes);
        let t = session(&mut extension, &chunks(&bytes, &cuts), false);
        // Everything written is JSON, one value per line; the session ends with exit 0.
        let _ = lines(&t.written);
        prop_assert_eq!(t.exit, Some(0));
        prop_assert_eq!(t.events.iter().filter(|e| **e == Event::Shutdown).count(), 1);
        prop_assert_eq!(extension.poll_output(), Output::Wait);
    }

    #[test]
    fn every_request_gets_exactly_one_reply_with_its_id(
        kinds in lines_strategy(),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
        custom_methods in any::<bool>(),
    ) {
        let (text, requests) = stream(&kinds);
        let mut extension = new_extension(custom_methods, 1 << 20);
        let t = session(&mut extension, &chunks(text.as_bytes(), &cuts), true);
        let mut count: BTreeMap<String, usize> = BTreeMap::new();
        for reply in replies(&t.written) {
            let id = reply.get("id").cloned().unwrap_or(Value::String("<missing>".into()));
            if !id.is_null() {
                *count.entry(id.to_string()).or_default() += 1;
            }
        }
        let expected: BTreeMap<String, usize> = requests.iter().map(|id| (id.to_string(), 1)).collect();
        prop_assert_eq!(count, expected, "stream:\n{}", text);
        prop_assert_eq!(t.exit, Some(0));
    }

    #[test]
    fn the_same_output_for_any_chunking(
        kinds in lines_strategy(),
        cuts in prop::collection::vec(any::<usize>(), 0..16),
        custom_methods in any::<bool>(),
    ) {
        let (text, _) = stream(&kinds);
        let whole = session(&mut new_extension(custom_methods, 1 << 20), &[text.as_bytes()], false);
        let chunked = session(
            &mut new_extension(custom_methods, 1 << 20),
            &chunks(text.as_bytes(), &cuts),
            false,
        );
        prop_assert_eq!(whole, chunked);
        let bytes_one_at_a_time: Vec<&[u8]> = text.as_bytes().chunks(1).collect();
        let single = session(&mut new_extension(custom_methods, 1 << 20), &bytes_one_at_a_time, false);
        let whole = session(&mut new_extension(custom_methods, 1 << 20), &[text.as_bytes()], false);
        prop_assert_eq!(whole, single);
    }
}
