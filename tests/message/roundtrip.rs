//! Property tests: every Dhara message reads back what it writes
//! (`from_value(to_value(x)) == x`), writes the same text with `write_json` as with
//! `to_value`, and reading never panics on arbitrary values.

use dhara_protocol::json::{self, Number, Object, Value};
use dhara_protocol::message::{
    Content, ExecuteParams, InitializeParams, InitializeResult, Progress, Tool, ToolList,
    ToolResult,
};
use dhara_protocol::rpc::Id;
use proptest::prelude::*;

fn number() -> impl Strategy<Value = Number> {
    prop_oneof![
        any::<i64>().prop_map(Number::from),
        any::<u64>().prop_map(Number::from),
        "-?(0|[1-9][0-9]{0,30})(\\.[0-9]{1,10})?([eE][+-]?[0-9]{1,4})?"
            .prop_map(|t| Number::from_text(&t).expect("generated from the grammar")),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![".{0,12}", "[a-z/._-]{0,8}"]
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number().prop_map(Value::Number),
        text().prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            // Names from a small set, so repeated names occur.
            prop::collection::vec(("[a-d]|type|text|path|size|data|mimeType", inner), 0..6)
                .prop_map(|m| Value::Object(Object::from_iter(m))),
        ]
    })
}

fn object_value() -> impl Strategy<Value = Object> {
    value().prop_map(|v| match v {
        Value::Object(o) => o,
        other => Object::from_iter([("x", other)]),
    })
}

fn tool() -> impl Strategy<Value = Tool> {
    let schema = prop_oneof![
        Just(None),
        any::<bool>().prop_map(|b| Some(Value::Bool(b))),
        object_value().prop_map(|o| Some(Value::Object(o))),
    ];
    (text(), proptest::option::of(text()), schema).prop_map(|(name, description, input_schema)| {
        Tool {
            name,
            description,
            input_schema,
        }
    })
}

fn id() -> impl Strategy<Value = Id> {
    prop_oneof![
        Just(Id::Null),
        text().prop_map(Id::String),
        any::<i64>().prop_map(|n| Id::Number(Number::from(n))),
        "-?[1-9][0-9]{19,40}".prop_map(|t| Id::Number(Number::from_text(&t).expect("integer"))),
    ]
}

/// Objects that are not typed content: an unknown `type`, no `type`, or a known type
/// whose members do not fit.
fn unknown_content() -> impl Strategy<Value = Object> {
    let kind = prop_oneof![
        Just(None),
        "audio|resource|link|[A-Z]{1,4}".prop_map(|k| Some(Value::from(k))),
        Just(Some(Value::from(3))),
    ];
    (kind, object_value()).prop_map(|(kind, mut o)| {
        o.remove("type");
        if let Some(kind) = kind {
            o.push("type", kind);
        }
        o
    })
}

fn content() -> impl Strategy<Value = Content> {
    prop_oneof![
        text().prop_map(|text| Content::Text { text: text.into() }),
        (text(), text()).prop_map(|(mime_type, data)| Content::ImageData { mime_type, data }),
        (text(), proptest::option::of(text()))
            .prop_map(|(path, mime_type)| Content::ImagePath { path, mime_type }),
        (
            text(),
            proptest::option::of(any::<u64>()),
            proptest::option::of(text())
        )
            .prop_map(|(path, size, mime_type)| Content::File {
                path,
                size,
                mime_type
            }),
        unknown_content().prop_map(Content::Unknown),
        text().prop_map(|t| Content::Unknown(Object::from_iter([
            ("type", Value::from("text")),
            ("text", Value::from(vec![t])),
        ]))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn initialize_params(version in text(), cwd in text()) {
        let x = InitializeParams { version, cwd };
        prop_assert_eq!(InitializeParams::from_value(&Value::from(x.clone())), Ok(x));
    }

    #[test]
    fn initialize_result(name in text(), version in text(), tools in prop::collection::vec(tool(), 0..4)) {
        let x = InitializeResult { name, version, tools };
        prop_assert_eq!(InitializeResult::from_value(&Value::from(x.clone())), Ok(x));
    }

    #[test]
    fn tool_list(tools in prop::collection::vec(tool(), 0..4)) {
        let x = ToolList { tools };
        prop_assert_eq!(ToolList::from_value(&Value::from(x.clone())), Ok(x));
    }

    #[test]
    fn tool_descriptor(x in tool()) {
        prop_assert_eq!(Tool::from_value(&Value::from(x.clone())), Ok(x));
    }

    #[test]
    fn execute_params(tool_name in text(), input in value()) {
        let x = ExecuteParams { tool_name: tool_name.into(), input };
        prop_assert_eq!(ExecuteParams::from_value(&Value::from(x.clone())), Ok(x));
    }

    #[test]
    fn tool_result(content in prop::collection::vec(content(), 0..5), is_error in any::<bool>()) {
        let x = ToolResult { content, is_error };
        prop_assert_eq!(ToolResult::from_value(&Value::from(x.clone())), Ok(x));
    }

    #[test]
    fn content_item(x in content()) {
        prop_assert_eq!(Content::from_value(&Value::from(x.clone())), Ok(x));
    }

    #[test]
    fn progress(message in text(), id in proptest::option::of(id())) {
        let x = Progress { message, id };
        prop_assert_eq!(Progress::from_value(&Value::from(x.clone())), Ok(x));
    }

    /// Written to bytes and parsed again, a message reads back the same.
    #[test]
    fn through_json_text(
        result in (prop::collection::vec(content(), 0..4), any::<bool>()),
        tools in prop::collection::vec(tool(), 0..3),
        progress in (text(), proptest::option::of(id())),
    ) {
        let wire = |v: Value| json::parse(&json::to_vec(&v)).expect("written JSON parses");
        let result = ToolResult { content: result.0, is_error: result.1 };
        prop_assert_eq!(ToolResult::from_value(&wire(Value::from(result.clone()))), Ok(result));
        let list = ToolList { tools };
        prop_assert_eq!(ToolList::from_value(&wire(Value::from(list.clone()))), Ok(list));
        let progress = Progress { message: progress.0, id: progress.1 };
        prop_assert_eq!(Progress::from_value(&wire(Value::from(progress.clone()))), Ok(progress));
    }

    /// Read straight from JSON text (as the endpoints read), every type reads as it
    /// does from the value, errors and their paths included.
    #[test]
    fn reading_the_text_agrees_with_reading_the_value(v in value()) {
        let text = String::from_utf8(json::to_vec(&v)).expect("written JSON is UTF-8");
        let spaced = format!(" \n{text}\t ");
        let raw = json::RawValue::from_text(&spaced, &json::ParseOptions::DEFAULT)
            .expect("written JSON is one value");
        prop_assert_eq!(raw.as_str(), text.as_str());
        macro_rules! check {
            ($($t:ident),*) => {$(
                prop_assert_eq!($t::from_raw(raw), $t::from_value(&v.clone()));
            )*};
        }
        check!(InitializeParams, InitializeResult, Tool, ToolList, ExecuteParams, ToolResult, Content, Progress);
    }

    /// Any value reads as a message or as an error, without panicking; whatever is
    /// accepted reads the same after being written back.
    #[test]
    fn reading_never_panics(v in value()) {
        macro_rules! check {
            ($($t:ident),*) => {$(
                if let Ok(x) = $t::from_value(&v.clone()) {
                    prop_assert_eq!($t::from_value(&Value::from(x.clone())), Ok(x));
                }
            )*};
        }
        check!(InitializeParams, InitializeResult, Tool, ToolList, ExecuteParams, ToolResult, Content, Progress);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// `write_json` writes exactly the text of `to_value`: one wire format per type.
    #[test]
    fn write_json_matches_to_value(
        init in (text(), text()),
        result in (prop::collection::vec(content(), 0..4), any::<bool>()),
        tools in (text(), text(), prop::collection::vec(tool(), 0..3)),
        execute in (text(), value()),
        progress in (text(), proptest::option::of(id())),
    ) {
        macro_rules! check {
            ($($x:expr),*) => {$(
                let x = $x;
                let mut written = b"[".to_vec();
                x.write_json(&mut written);
                prop_assert_eq!(&written[1..], &json::to_vec(&Value::from(x.clone()))[..]);
            )*};
        }
        let (name, version, tools) = tools;
        for t in &tools {
            check!(t.clone());
        }
        for c in &result.0 {
            check!(c.clone());
        }
        check!(
            InitializeParams { version: init.0, cwd: init.1 },
            InitializeResult { name, version, tools: tools.clone() },
            ToolList { tools },
            ExecuteParams { tool_name: execute.0.into(), input: execute.1 },
            ToolResult { content: result.0, is_error: result.1 },
            Progress { message: progress.0, id: progress.1 }
        );
    }
}
