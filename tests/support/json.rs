//! Shared helpers for the JSON tests: a writer plain enough to compare the crate's
//! writer with, and the strategies that generate values.
#![allow(dead_code)]

use dhara_protocol::json::{Number, Object, Value};
use proptest::prelude::*;

/// `s` as a JSON string, one character at a time: `"`, `\` and the controls
/// escaped, `\n \r \t \b \f` in their short forms.
pub fn write_plain_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Number texts of every shape the grammar allows.
pub fn any_number() -> impl Strategy<Value = Number> {
    prop_oneof![
        any::<i64>().prop_map(Number::from),
        any::<u64>().prop_map(Number::from),
        any::<f64>().prop_filter_map("finite", Number::from_f64),
        "-?(0|[1-9][0-9]{0,30})(\\.[0-9]{1,30})?([eE][+-]?[0-9]{1,4})?"
            .prop_map(|t| Number::from_text(&t).expect("grammar")),
    ]
}

/// Values up to six levels deep, their strings from `text` and their member names
/// from `name`.
pub fn any_value_of(
    text: impl Strategy<Value = String> + 'static,
    name: BoxedStrategy<String>,
) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any_number().prop_map(Value::Number),
        text.prop_map(Value::from),
    ];
    leaf.prop_recursive(6, 64, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((name.clone(), inner), 0..6)
                .prop_map(|members| Value::Object(Object::from_iter(members))),
        ]
    })
}
