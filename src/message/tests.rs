//! The one reader of each hot type against the general grammar: a payload read in
//! place must give what reading it with `json::parse` and picking its members out of
//! the tree gives, whatever the spelling (member order, escapes, whitespace, repeated
//! or unknown members, text that is not JSON).

use alloc::string::String;
use alloc::vec::Vec;
use alloc::{format, vec};
use core::fmt;

use proptest::prelude::*;

use super::fields::Read;
use super::{Content, ExecuteParams, Progress, Text, ToolResult};
use crate::json::{self, ParseOptions, RawValue, Reader, Value};
use crate::rpc::Id;

fn content(text: &str) -> Content {
    let raw = RawValue::from_text(text, &ParseOptions::DEFAULT);
    match raw.map(Content::from_raw) {
        Ok(Ok(content)) => content,
        other => panic!("{text}: {other:?}"),
    }
}

// ---- The reference: the tree `json::parse` builds, its members picked out --------

/// What the reference makes of a payload: not JSON, a member that does not fit, or
/// the message.
#[derive(Debug, PartialEq)]
enum Expected<T> {
    NotJson,
    Unfit,
    Read(T),
}

fn string(value: Option<&Value>) -> Option<String> {
    value.and_then(Value::as_str).map(String::from)
}

fn execute_params(value: &Value) -> Option<ExecuteParams> {
    Some(ExecuteParams {
        tool_name: Text::from(value.as_object()?.get("toolName")?.as_str()?),
        input: value.as_object()?.get("input")?.clone(),
    })
}

fn progress(value: &Value) -> Option<Progress> {
    let object = value.as_object()?;
    let id = match object.get("id") {
        None => None,
        Some(Value::Null) => Some(Id::Null),
        Some(Value::String(s)) => Some(Id::String(String::from(s.as_str()))),
        Some(Value::Number(n)) if n.is_integer() => Some(Id::Number(n.clone())),
        Some(_) => return None,
    };
    Some(Progress {
        message: string(object.get("message"))?,
        id,
    })
}

fn tool_result(value: &Value) -> Option<ToolResult> {
    let object = value.as_object()?;
    let is_error = match object.get("isError") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return None,
    };
    let content = object.get("content")?.as_array()?;
    let content = content.iter().map(item).collect::<Option<Vec<_>>>()?;
    Some(ToolResult { content, is_error })
}

/// A content item: a text item picked out here, any other object kept whole (the
/// generated payloads hold no other known type).
fn item(value: &Value) -> Option<Content> {
    let object = value.as_object()?;
    match (object.get("type"), object.get("text")) {
        (Some(Value::String(kind)), Some(Value::String(text))) if kind == "text" => {
            Some(Content::text(text.as_str()))
        }
        _ => Some(Content::Unknown(object.clone())),
    }
}

/// Reads `text` with the type's one reader and with the reference, and compares.
fn read_alike<T: PartialEq + fmt::Debug>(
    text: &[u8],
    options: &ParseOptions,
    read: fn(&mut Reader<'_>) -> Read<T>,
    reference: fn(&Value) -> Option<T>,
) -> Result<(), TestCaseError> {
    let mut r = Reader::new(text, options);
    let read = match read(&mut r).and_then(|field| r.finish().map(|()| field)) {
        Err(_) => Expected::NotJson,
        Ok(Err(_)) => Expected::Unfit,
        Ok(Ok(message)) => Expected::Read(message),
    };
    let expected = match json::parse_with(text, options) {
        Err(_) => Expected::NotJson,
        Ok(value) => reference(&value).map_or(Expected::Unfit, Expected::Read),
    };
    prop_assert_eq!(read, expected, "{}", String::from_utf8_lossy(text));
    Ok(())
}

// ---- Payloads in every spelling ---------------------------------------------------

/// A string member's value: plain ASCII of any length, escapes, non-ASCII, lone
/// surrogates, or not a string at all.
fn text_value() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ./]{0,40}".prop_map(|t| format!("\"{t}\"")),
        r#"[a-z]{0,8}(\\n|\\"|\\u00e9|\\ud83d\\ude00|é|\\ud800)[a-z]{0,30}"#
            .prop_map(|t| format!("\"{t}\"")),
        prop::sample::select(vec!["5", "null", "true", "[]", "{}", "\"a", "\"\\x\""])
            .prop_map(String::from),
    ]
}

/// A JSON value for an `input`: nested or not, and some that are not JSON.
fn input_value() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            r#"{"path":"src/lib.rs","pattern":"fn \"main\"\\s+{","limit":12,"recursive":true}"#,
            r#"{}"#,
            r#"[]"#,
            r#"[[[[{"a":[[[]]]}]]]]"#,
            r#"{"a":{"b":{"c":{"d":1.5e3}}}}"#,
            r#"null"#,
            r#"-0"#,
            r#""caf\u00e9""#,
            r#"{"a":1,}"#,
            r#"{"a" 1}"#,
            r#"[1,2"#,
        ])
        .prop_map(String::from),
        text_value(),
    ]
}

/// A member name as written: as it is, with its first letter escaped, or a name
/// the type does not know that begins the same.
fn name(name: &'static str) -> impl Strategy<Value = String> {
    prop_oneof![
        4 => Just(format!("\"{name}\"")),
        1 => Just(format!("\"\\u{:04x}{}\"", u32::from(name.as_bytes()[0]), &name[1..])),
        1 => Just(format!("\"{name}s\"")),
        1 => Just(format!("\"{}\"", &name[..name.len() - 1])),
    ]
}

/// An object of `members` (name and value), in any order, with or without
/// whitespace around the names and values.
fn object(members: Vec<(String, String)>) -> impl Strategy<Value = String> {
    let count = members.len();
    (
        Just(members).prop_shuffle(),
        prop::collection::vec(
            prop::sample::select(vec!["", "", "", " ", "\n "]),
            count * 2,
        ),
    )
        .prop_map(|(members, spaces)| {
            let members: Vec<String> = members
                .into_iter()
                .zip(spaces.chunks(2))
                .map(|((name, value), space)| format!("{}{name}:{}{value}", space[0], space[1]))
                .collect();
            format!("{{{}}}", members.join(","))
        })
}

/// The text, then changed or not: a byte inserted, removed or replaced, or the text
/// cut short.
fn changed(text: String) -> impl Strategy<Value = Vec<u8>> {
    let len = text.len();
    let byte = prop::sample::select(b" \t\n,:}]{[\"\\\x0e\xc3\xff".to_vec());
    (0..5u8, 0..=len, byte).prop_map(move |(how, at, byte)| {
        let mut text = text.clone().into_bytes();
        match how {
            0 | 1 => {}
            2 => text.insert(at, byte),
            3 if at < len => _ = text.remove(at),
            3 => text.truncate(at.saturating_sub(1)),
            _ => {
                if let Some(b) = text.get_mut(at) {
                    *b = byte;
                }
            }
        }
        text
    })
}

/// Any depth limit, either surrogate rule, the default most often.
fn options() -> impl Strategy<Value = ParseOptions> {
    prop_oneof![
        3 => Just(ParseOptions::DEFAULT),
        1 => (0..6usize, any::<bool>()).prop_map(|(max_depth, strict_surrogates)| {
            ParseOptions { max_depth, strict_surrogates }
        }),
    ]
}

/// Optional extra members: none most often, an unknown one, or a repeated one.
fn extra(repeated: &'static str) -> impl Strategy<Value = Vec<(String, String)>> {
    prop::sample::select(vec![
        vec![],
        vec![],
        vec![(String::from("\"more\""), String::from("1"))],
        vec![(format!("\"{repeated}\""), String::from("\"b\""))],
    ])
}

fn execute_params_text() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![1 => usual_execute_params_text(), 2 => any_execute_params_text()]
}

/// Params as the Core writes them, `{"toolName":…,"input":…}`, or near it: what the
/// reader takes in place.
fn usual_execute_params_text() -> impl Strategy<Value = Vec<u8>> {
    let end = prop::sample::select(vec![
        "}",
        "}",
        r#","input":{}}"#,
        r#","toolName":"b"}"#,
        r#","more":1}"#,
        " }",
        "",
    ]);
    (text_value(), any::<bool>(), input_value(), end)
        .prop_map(|(tool_name, with_input, input, end)| {
            let input = if with_input {
                format!(r#","input":{input}"#)
            } else {
                String::new()
            };
            format!(r#"{{"toolName":{tool_name}{input}{end}"#)
        })
        .prop_flat_map(changed)
}

fn any_execute_params_text() -> impl Strategy<Value = Vec<u8>> {
    (
        name("toolName"),
        text_value(),
        name("input"),
        input_value(),
        extra("toolName"),
    )
        .prop_flat_map(|(tool_name, text, input, value, mut members)| {
            members.extend([(tool_name, text), (input, value)]);
            object(members)
        })
        .prop_flat_map(changed)
}

fn progress_text() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![1 => usual_progress_text(), 2 => any_progress_text()]
}

/// Progress as extensions write it, `{"message":…}` with an `id` after it or not,
/// or near it: what the reader takes in place.
fn usual_progress_text() -> impl Strategy<Value = Vec<u8>> {
    let id = prop::sample::select(vec![
        "",
        r#","id":7"#,
        r#","id":"r-1""#,
        r#","id":1.5"#,
        r#","id":null"#,
        r#","id":7,"id":8"#,
        r#","message":"again""#,
        r#","more":[1]"#,
    ]);
    let end = prop::sample::select(vec!["}", "}", " }", "", "}}"]);
    (text_value(), id, end)
        .prop_map(|(message, id, end)| format!(r#"{{"message":{message}{id}{end}"#))
        .prop_flat_map(changed)
}

fn any_progress_text() -> impl Strategy<Value = Vec<u8>> {
    let id = prop::sample::select(vec![
        None,
        None,
        Some("7"),
        Some("\"r-1\""),
        Some("null"),
        Some("1.5"),
        Some("true"),
        Some("\"\\ud800\""),
    ]);
    (
        name("message"),
        text_value(),
        name("id"),
        id,
        extra("message"),
    )
        .prop_flat_map(|(message, text, id_name, id, mut members)| {
            members.push((message, text));
            members.extend(id.map(|id| (id_name, String::from(id))));
            object(members)
        })
        .prop_flat_map(changed)
}

fn tool_result_text() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![1 => usual_tool_result_text(), 2 => any_tool_result_text()]
}

/// A result as writers spell it, one text item and `isError`, or near it: what the
/// reader takes in place.
fn usual_tool_result_text() -> impl Strategy<Value = Vec<u8>> {
    let end = prop::sample::select(vec![
        r#"}],"isError":false}"#,
        r#"}],"isError":true}"#,
        r#"}],"isError":null}"#,
        r#"}]}"#,
        r#"},{"type":"text","text":"b"}],"isError":false}"#,
        r#","more":1}],"isError":true}"#,
        r#"}],"isError":false,"isError":true}"#,
    ]);
    (text_value(), end)
        .prop_map(|(text, end)| format!(r#"{{"content":[{{"type":"text","text":{text}{end}"#))
        .prop_flat_map(changed)
}

fn any_tool_result_text() -> impl Strategy<Value = Vec<u8>> {
    let is_error = prop::sample::select(vec![None, Some("false"), Some("true"), Some("null")]);
    let item = (name("type"), name("text"), text_value()).prop_flat_map(|(kind, text, value)| {
        object(vec![(kind, String::from("\"text\"")), (text, value)])
    });
    (
        name("content"),
        prop::collection::vec(item, 0..3),
        name("isError"),
        is_error,
        extra("isError"),
    )
        .prop_flat_map(|(content, items, is_error_name, is_error, mut members)| {
            members.push((content, format!("[{}]", items.join(","))));
            members.extend(is_error.map(|flag| (is_error_name, String::from(flag))));
            object(members)
        })
        .prop_flat_map(changed)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn execute_params_read_as_the_general_grammar_reads_them(
        text in execute_params_text(),
        options in options(),
    ) {
        read_alike(&text, &options, ExecuteParams::read, execute_params)?;
    }

    #[test]
    fn a_tool_result_reads_as_the_general_grammar_reads_it(
        text in tool_result_text(),
        options in options(),
    ) {
        read_alike(&text, &options, ToolResult::read, tool_result)?;
    }

    #[test]
    fn progress_params_read_as_the_general_grammar_reads_them(
        text in progress_text(),
        options in options(),
    ) {
        read_alike(&text, &options, Progress::read, progress)?;
    }
}

#[test]
fn what_the_endpoints_write_reads_back() {
    fn raw(text: &[u8]) -> RawValue<'_> {
        let text = core::str::from_utf8(text).expect("written JSON is UTF-8");
        RawValue::from_text(text, &ParseOptions::DEFAULT).expect("written JSON is JSON")
    }
    let mut text = Vec::new();
    let result = ToolResult::text("caf\u{e9} \"ok\"");
    result.write_json(&mut text);
    assert_eq!(ToolResult::from_raw(raw(&text)), Ok(result));
    let input = json::parse(br#"{"path":"a","n":[1,2]}"#).expect("JSON");
    let params = ExecuteParams::new("grep", input);
    text.clear();
    params.write_json(&mut text);
    assert_eq!(ExecuteParams::from_raw(raw(&text)), Ok(params));
}

#[test]
fn texts_read_the_same_at_every_length_ascii_or_not() {
    for len in 0..64 {
        for piece in ["abcdefghij", "a\u{e9}\"\\\n", "\u{1F600}z"] {
            let text: String = piece.chars().cycle().take(len).collect();
            let mut quoted = Vec::new();
            json::write_string(&text, &mut quoted);
            let quoted = String::from_utf8(quoted).expect("written JSON is UTF-8");
            let item = content(&format!(r#"{{"type":"text","text":{quoted}}}"#));
            assert_eq!(item, Content::text(text.as_str()), "{quoted}");
            let item = content(&format!(r#"{{"type":"file","path":{quoted}}}"#));
            assert!(
                matches!(&item, Content::File { path, .. } if *path == text),
                "{quoted}"
            );
        }
    }
}

#[test]
fn a_type_reads_the_same_spelled_out_or_escaped() {
    let text = Content::text("a");
    assert_eq!(content(r#"{"type":"text","text":"a"}"#), text);
    assert_eq!(content(r#"{"type":"te\u0078t","text":"a"}"#), text);
    assert_eq!(content(r#"{ "type" : "text" , "text":"a"}"#), text);
    assert_eq!(content(r#"{"text":"a","type":"text"}"#), text);
    let path = |kind: &str| content(&format!(r#"{{"type":"{kind}","path":"p"}}"#));
    assert!(matches!(path("image"), Content::ImagePath { .. }));
    assert!(matches!(path("im\\u0061ge"), Content::ImagePath { .. }));
    assert!(matches!(path("file"), Content::File { .. }));
    for other in ["texts", "tex", "fil", "files", "Text"] {
        let item = content(&format!(r#"{{"type":"{other}","text":"a","path":"p"}}"#));
        assert_eq!(item.kind(), Some(other), "{other}");
    }
}

#[test]
fn an_unknown_item_is_kept_whole() {
    let item = content(r#"{"type":"audio","data":"AAAA"}"#);
    let expected = json::parse(br#"{"type":"audio","data":"AAAA"}"#).unwrap();
    assert_eq!(
        Some(item),
        expected.as_object().cloned().map(Content::Unknown)
    );
}
