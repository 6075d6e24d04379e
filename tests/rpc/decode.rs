//! Every JSON-RPC 2.0 validation rule of `rpc::decode`, with the code to answer with
//! and the id recovered into the error; and the error-code mapping.

use dhara_protocol::json::{self, Number, Object, ParseOptions, Value};
use dhara_protocol::rpc::{
    DecodeError, DecodeErrorKind, DecodeOptions, ErrorCode, ErrorObject, Id, Incoming, LinePrefix,
    Message, Notification, Request, Response, decode,
};
use proptest::prelude::*;

fn single(line: &str) -> Result<Message, DecodeError> {
    match decode(line.as_bytes(), DecodeOptions::DEFAULT) {
        Incoming::Single(entry) => entry,
        Incoming::Batch(entries) => panic!("expected a single entry for {line}, got {entries:?}"),
    }
}

fn ok(line: &str) -> Message {
    single(line).unwrap_or_else(|e| panic!("expected {line} to decode, got {e}"))
}

fn err(line: &str) -> DecodeError {
    match single(line) {
        Ok(m) => panic!("expected {line} to fail, got {m:?}"),
        Err(e) => e,
    }
}

fn num(text: &str) -> Id {
    Id::Number(Number::from_text(text).expect("number text"))
}

/// Asserts an Invalid Request with the given reason and recovered id.
fn invalid(line: &str, kind: DecodeErrorKind, id: Option<Id>) {
    let e = err(line);
    assert_eq!(e.kind(), &kind, "{line}");
    assert_eq!(e.id, id, "{line}");
    assert_eq!(e.error_object().code, ErrorCode::INVALID_REQUEST, "{line}");
    assert_eq!(e.error_object().code.code(), -32600);
    assert_eq!(e.to_response().id, id.unwrap_or(Id::Null), "{line}");
}

fn assert_parse_error(line: &[u8]) {
    match decode(line, DecodeOptions::DEFAULT) {
        Incoming::Single(Err(e)) => {
            assert!(matches!(e.kind(), DecodeErrorKind::Json(_)), "{e}");
            assert!(e.is_parse_error());
            assert_eq!(e.id, None);
            assert_eq!(e.error_object().code, ErrorCode::PARSE_ERROR);
            assert_eq!(e.error_object().code.code(), -32700);
            assert!(e.error_object().message.starts_with("Parse error"));
            assert_eq!(e.to_response().id, Id::Null);
            assert!(!e.is_response_like());
        }
        other => panic!(
            "expected a parse error for {:?}, got {other:?}",
            String::from_utf8_lossy(line)
        ),
    }
}

fn params(text: &str) -> Option<Value> {
    Some(json::parse(text.as_bytes()).expect("valid JSON"))
}

// ---- Not JSON: -32700 for the whole line ----

#[test]
fn not_json_is_a_parse_error_with_null_id() {
    assert_parse_error(br#"{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]"#);
    assert_parse_error(b"");
    assert_parse_error(b"   ");
    assert_parse_error(b"hello");
    assert_parse_error(b"{\"jsonrpc\":\"2.0\",\"method\":\"a\"} x");
    assert_parse_error(b"{\"jsonrpc\":\"2.0\",\"method\":\"a\"}{}");
    assert_parse_error(b"{\"jsonrpc\":\"2.0\",\"method\":\"a\"");
    assert_parse_error(b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}");
}

#[test]
fn a_parse_error_anywhere_in_a_batch_fails_the_whole_line() {
    assert_parse_error(
        br#"[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"}, {"jsonrpc": "2.0", "method"]"#,
    );
    assert_parse_error(br#"[{"jsonrpc":"2.0","method":"a"},]"#);
    assert_parse_error(br#"[1,2"#);
    assert_parse_error(br#"[1] 2"#);
}

#[test]
fn a_parse_error_wins_over_an_earlier_invalid_member() {
    // The id and the bad version are read before the syntax error is found.
    assert_parse_error(br#"{"jsonrpc":"1.0","id":1,"method":"a","params":[1,}"#);
    assert_parse_error(br#"{"jsonrpc":"2.0","id":1,"method":5,"x":tru}"#);
}

#[test]
fn nesting_beyond_max_depth_is_a_parse_error() {
    let options = ParseOptions {
        max_depth: 3,
        ..ParseOptions::DEFAULT
    };
    let shallow = br#"{"jsonrpc":"2.0","method":"a","params":[1]}"#;
    assert!(matches!(
        decode(shallow, DecodeOptions::DEFAULT.json(options)),
        Incoming::Single(Ok(_))
    ));
    let deep = br#"{"jsonrpc":"2.0","method":"a","params":[[[[[1]]]]]}"#;
    match decode(deep, DecodeOptions::DEFAULT.json(options)) {
        Incoming::Single(Err(e)) => assert!(e.is_parse_error()),
        other => panic!("{other:?}"),
    }
    let very_deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert_parse_error(very_deep.as_bytes());
}

#[test]
fn strict_surrogates_make_a_lone_surrogate_in_params_a_parse_error() {
    let line = br#"{"jsonrpc":"2.0","method":"a","params":["\ud800"]}"#;
    // Default: replaced by U+FFFD inside a string value.
    match decode(line, DecodeOptions::DEFAULT) {
        Incoming::Single(Ok(Message::Notification(n))) => {
            assert_eq!(n.params, Some(Value::Array(vec![Value::from("\u{FFFD}")])));
        }
        other => panic!("{other:?}"),
    }
    let strict = ParseOptions {
        strict_surrogates: true,
        ..ParseOptions::DEFAULT
    };
    match decode(line, DecodeOptions::DEFAULT.json(strict)) {
        Incoming::Single(Err(e)) => assert!(e.is_parse_error()),
        other => panic!("{other:?}"),
    }
}

// ---- Top level and batches ----

#[test]
fn top_level_that_is_not_an_object_or_array_is_invalid() {
    for line in ["1", "\"x\"", "null", "true", "-2.5e3"] {
        invalid(line, DecodeErrorKind::NotAnObject, None);
    }
}

#[test]
fn empty_batch_is_one_invalid_request() {
    for line in ["[]", " [ ] "] {
        invalid(line, DecodeErrorKind::EmptyBatch, None);
    }
}

#[test]
fn invalid_batch_entries_get_one_error_each() {
    let Incoming::Batch(entries) = decode(b"[1,2,3]", DecodeOptions::DEFAULT) else {
        panic!("a batch")
    };
    assert_eq!(entries.len(), 3);
    for entry in entries {
        let e = entry.expect_err("invalid entry");
        assert_eq!(e.kind(), &DecodeErrorKind::NotAnObject);
        assert_eq!(e.to_response(), Response::error(Id::Null, e.error_object()));
    }
    let Incoming::Batch(entries) = decode(b"[[]]", DecodeOptions::DEFAULT) else {
        panic!("a batch")
    };
    assert_eq!(entries.len(), 1);
    assert_eq!(
        entries[0].as_ref().map_err(DecodeError::kind),
        Err(&DecodeErrorKind::NotAnObject)
    );
}

#[test]
fn batch_entries_keep_their_order_and_ids() {
    let line = r#"[{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"1"},
        {"jsonrpc":"2.0","method":"notify_hello","params":[7]},
        {"foo":"boo"},
        {"jsonrpc":"2.0","method":"x","params":"bad","id":9},
        {"jsonrpc":"2.0","id":3,"result":true}]"#;
    let Incoming::Batch(entries) = decode(line.as_bytes(), DecodeOptions::DEFAULT) else {
        panic!("a batch")
    };
    assert_eq!(entries.len(), 5);
    assert_eq!(
        entries[0],
        Ok(Message::Request(Request {
            id: Id::from("1"),
            method: "sum".into(),
            params: params("[1,2,4]")
        }))
    );
    assert_eq!(
        entries[1],
        Ok(Message::Notification(Notification {
            method: "notify_hello".into(),
            params: params("[7]")
        }))
    );
    let e = entries[2].as_ref().expect_err("no jsonrpc");
    assert_eq!((e.kind(), &e.id), (&DecodeErrorKind::Version, &None));
    let e = entries[3].as_ref().expect_err("bad params");
    assert_eq!(
        (e.kind(), &e.id),
        (&DecodeErrorKind::ParamsNotStructured, &Some(num("9")))
    );
    assert_eq!(
        entries[4],
        Ok(Message::Response(Response::result(
            num("3"),
            Value::Bool(true)
        )))
    );
}

#[test]
fn a_single_entry_batch_is_still_a_batch() {
    let Incoming::Batch(entries) = decode(
        br#"[{"jsonrpc":"2.0","method":"a"}]"#,
        DecodeOptions::DEFAULT,
    ) else {
        panic!("a batch")
    };
    assert_eq!(entries.len(), 1);
}

// ---- jsonrpc ----

#[test]
fn jsonrpc_must_be_exactly_the_string_2_0() {
    invalid(
        r#"{"method":"a","id":1}"#,
        DecodeErrorKind::Version,
        Some(num("1")),
    );
    for version in [
        r#""1.0""#,
        "2.0",
        "2",
        r#""2.0 ""#,
        r#"" 2.0""#,
        r#""2""#,
        "null",
        r#"["2.0"]"#,
    ] {
        let line = format!(r#"{{"jsonrpc":{version},"method":"a","id":"q"}}"#);
        invalid(&line, DecodeErrorKind::Version, Some(Id::from("q")));
    }
    // Escapes that spell "2.0" are the same string.
    assert!(single(r#"{"jsonrpc":"\u0032.0","method":"a"}"#).is_ok());
}

// ---- method ----

#[test]
fn method_must_be_a_string() {
    for method in ["1", "null", "true", "[]", "{}"] {
        let line = format!(r#"{{"jsonrpc":"2.0","method":{method},"id":5}}"#);
        invalid(&line, DecodeErrorKind::MethodNotString, Some(num("5")));
    }
    // The specification's own example: no id, so the reply's id is null.
    invalid(
        r#"{"jsonrpc": "2.0", "method": 1, "params": "bar"}"#,
        DecodeErrorKind::MethodNotString,
        None,
    );
}

#[test]
fn lone_surrogate_in_method_is_invalid() {
    invalid(
        r#"{"jsonrpc":"2.0","method":"tool\ud800","id":2}"#,
        DecodeErrorKind::MethodLoneSurrogate,
        Some(num("2")),
    );
    invalid(
        r#"{"jsonrpc":"2.0","method":"\udc00x","id":2}"#,
        DecodeErrorKind::MethodLoneSurrogate,
        Some(num("2")),
    );
    // A proper pair is fine.
    assert_eq!(
        ok(r#"{"jsonrpc":"2.0","method":"\ud83d\ude00"}"#).method(),
        Some("\u{1F600}")
    );
}

// ---- params ----

#[test]
fn params_must_be_an_array_or_an_object() {
    for p in [r#""bar""#, "1", "null", "true", "false", "0.5"] {
        let line = format!(r#"{{"jsonrpc":"2.0","method":"a","params":{p},"id":"k"}}"#);
        invalid(
            &line,
            DecodeErrorKind::ParamsNotStructured,
            Some(Id::from("k")),
        );
    }
    let e = err(r#"{"jsonrpc":"2.0","method":"a","params":"bar","id":1}"#);
    assert_eq!(
        e.error_object().message,
        "Invalid Request: params must be an array or an object"
    );
    for p in ["[]", "{}", "[1,{\"a\":[null]}]", r#"{"x":{"y":[]}}"#] {
        let line = format!(r#"{{"jsonrpc":"2.0","method":"a","params":{p}}}"#);
        assert_eq!(
            ok(&line),
            Message::Notification(Notification {
                method: "a".into(),
                params: params(p)
            })
        );
    }
    assert_eq!(
        ok(r#"{"jsonrpc":"2.0","method":"a"}"#),
        Message::Notification(Notification {
            method: "a".into(),
            params: None
        })
    );
}

// ---- id ----

#[test]
fn id_may_be_a_string_an_integer_or_null() {
    let cases = [
        ("1", num("1")),
        ("0", num("0")),
        ("-7", num("-7")),
        ("-0", num("-0")),
        ("18446744073709551616", num("18446744073709551616")),
        (
            "123456789012345678901234567890123456789",
            num("123456789012345678901234567890123456789"),
        ),
        (r#""""#, Id::from("")),
        (r#""abc""#, Id::from("abc")),
        (r#""\n\u00e9""#, Id::from("\n\u{e9}")),
        ("null", Id::Null),
    ];
    for (text, id) in cases {
        let line = format!(r#"{{"jsonrpc":"2.0","method":"m","id":{text}}}"#);
        assert_eq!(
            ok(&line),
            Message::Request(Request {
                id,
                method: "m".into(),
                params: None
            }),
            "{line}"
        );
    }
}

#[test]
fn integer_ids_keep_their_exact_text() {
    let Message::Request(r) = ok(r#"{"jsonrpc":"2.0","method":"m","id":98765432109876543210}"#)
    else {
        panic!("a request")
    };
    let Id::Number(n) = &r.id else {
        panic!("a number id")
    };
    assert_eq!(n.as_str(), "98765432109876543210");
    assert_eq!(r.id.as_u64(), None);
    assert_eq!(num("42").as_u64(), Some(42));
    assert_eq!(num("-42").as_i64(), Some(-42));
    assert_eq!(Id::from("x").as_str(), Some("x"));
    assert!(Id::Null.is_null());
}

#[test]
fn other_ids_are_invalid_and_not_recovered() {
    for id in [
        "1.5",
        "1.0",
        "1e3",
        "1E+2",
        "-0.0",
        "true",
        "false",
        "[]",
        "[1]",
        "{}",
        r#"{"id":1}"#,
    ] {
        let line = format!(r#"{{"jsonrpc":"2.0","method":"m","id":{id}}}"#);
        invalid(&line, DecodeErrorKind::InvalidId, None);
        let line = format!(r#"{{"jsonrpc":"2.0","result":1,"id":{id}}}"#);
        invalid(&line, DecodeErrorKind::InvalidId, None);
    }
}

#[test]
fn lone_surrogate_in_a_string_id_is_invalid() {
    invalid(
        r#"{"jsonrpc":"2.0","method":"m","id":"a\ud800"}"#,
        DecodeErrorKind::IdLoneSurrogate,
        None,
    );
    invalid(
        r#"{"jsonrpc":"2.0","result":1,"id":"\udfff"}"#,
        DecodeErrorKind::IdLoneSurrogate,
        None,
    );
}

// ---- requests, notifications, responses ----

#[test]
fn method_with_id_is_a_request_and_without_is_a_notification() {
    assert_eq!(
        ok(r#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#),
        Message::Request(Request {
            id: num("1"),
            method: "subtract".into(),
            params: params("[42,23]")
        })
    );
    assert_eq!(
        ok(r#"{"id":null,"method":"m","jsonrpc":"2.0"}"#),
        Message::Request(Request {
            id: Id::Null,
            method: "m".into(),
            params: None
        })
    );
    assert_eq!(
        ok(r#"{"jsonrpc":"2.0","method":"update","params":[1,2,3,4,5]}"#),
        Message::Notification(Notification {
            method: "update".into(),
            params: params("[1,2,3,4,5]")
        })
    );
}

#[test]
fn responses_carry_a_result_or_an_error() {
    assert_eq!(
        ok(r#"{"jsonrpc":"2.0","result":19,"id":1}"#),
        Message::Response(Response::result(num("1"), Value::from(19u64)))
    );
    assert_eq!(
        ok(r#"{"jsonrpc":"2.0","result":null,"id":"r"}"#),
        Message::Response(Response::result(Id::from("r"), Value::Null))
    );
    assert_eq!(
        ok(r#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":"1"}"#),
        Message::Response(Response::error(
            Id::from("1"),
            ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "Method not found")
        ))
    );
    let mut data = Object::new();
    data.push("toolName", Value::from("fetch"));
    assert_eq!(
        ok(
            r#"{"jsonrpc":"2.0","id":null,"error":{"data":{"toolName":"fetch"},"message":"m","code":7,"extra":[1]}}"#
        ),
        Message::Response(Response::error(
            Id::Null,
            ErrorObject::new(7, "m").with_data(Value::Object(data))
        ))
    );
    // data may be any value, null included.
    let Message::Response(r) =
        ok(r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"","data":null}}"#)
    else {
        panic!("a response")
    };
    assert_eq!(r.outcome.expect_err("an error").data, Some(Value::Null));
}

#[test]
fn method_together_with_result_or_error_is_invalid() {
    let line = r#"{"jsonrpc":"2.0","method":"m","result":1,"id":4}"#;
    invalid(line, DecodeErrorKind::MethodWithOutcome, Some(num("4")));
    assert!(!err(line).is_response_like());
    invalid(
        r#"{"jsonrpc":"2.0","method":"m","error":{"code":1,"message":"x"}}"#,
        DecodeErrorKind::MethodWithOutcome,
        None,
    );
}

#[test]
fn a_response_has_exactly_one_of_result_and_error() {
    let line = r#"{"jsonrpc":"2.0","result":1,"error":{"code":1,"message":"x"},"id":"b"}"#;
    invalid(line, DecodeErrorKind::ResultAndError, Some(Id::from("b")));
    assert!(err(line).is_response_like());
    invalid(
        r#"{"jsonrpc":"2.0","id":1}"#,
        DecodeErrorKind::NoMethodOrOutcome,
        Some(num("1")),
    );
    invalid(
        r#"{"jsonrpc":"2.0"}"#,
        DecodeErrorKind::NoMethodOrOutcome,
        None,
    );
    invalid(r#"{}"#, DecodeErrorKind::Version, None);
}

#[test]
fn a_response_needs_an_id() {
    let line = r#"{"jsonrpc":"2.0","result":1}"#;
    invalid(line, DecodeErrorKind::ResponseWithoutId, None);
    assert!(err(line).is_response_like());
    invalid(
        r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"x"}}"#,
        DecodeErrorKind::ResponseWithoutId,
        None,
    );
}

#[test]
fn the_error_member_must_be_a_proper_error_object() {
    let cases = [
        (r#""oops""#, DecodeErrorKind::ErrorNotObject),
        ("null", DecodeErrorKind::ErrorNotObject),
        ("[]", DecodeErrorKind::ErrorNotObject),
        (r#"{"message":"x"}"#, DecodeErrorKind::ErrorCode),
        (r#"{"code":1.5,"message":"x"}"#, DecodeErrorKind::ErrorCode),
        (
            r#"{"code":-32600.0,"message":"x"}"#,
            DecodeErrorKind::ErrorCode,
        ),
        (r#"{"code":1e2,"message":"x"}"#, DecodeErrorKind::ErrorCode),
        (r#"{"code":"1","message":"x"}"#, DecodeErrorKind::ErrorCode),
        (
            r#"{"code":9223372036854775808,"message":"x"}"#,
            DecodeErrorKind::ErrorCode,
        ),
        (
            r#"{"code":-9223372036854775809,"message":"x"}"#,
            DecodeErrorKind::ErrorCode,
        ),
        (r#"{"code":1}"#, DecodeErrorKind::ErrorMessage),
        (
            r#"{"code":1,"message":null}"#,
            DecodeErrorKind::ErrorMessage,
        ),
        (
            r#"{"code":1,"message":["x"]}"#,
            DecodeErrorKind::ErrorMessage,
        ),
        (
            r#"{"code":1,"code":1,"message":"x"}"#,
            DecodeErrorKind::DuplicateMember("error.code"),
        ),
        (
            r#"{"code":1,"message":"x","message":"y"}"#,
            DecodeErrorKind::DuplicateMember("error.message"),
        ),
        (
            r#"{"code":1,"message":"x","data":1,"data":1}"#,
            DecodeErrorKind::DuplicateMember("error.data"),
        ),
    ];
    for (error, kind) in cases {
        let line = format!(r#"{{"jsonrpc":"2.0","id":"e","error":{error}}}"#);
        invalid(&line, kind, Some(Id::from("e")));
        assert!(err(&line).is_response_like(), "{line}");
    }
    // The extremes of i64 are fine.
    for code in [i64::MIN, i64::MAX] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":{code},"message":"x"}}}}"#);
        let Message::Response(r) = ok(&line) else {
            panic!("a response")
        };
        assert_eq!(r.outcome.expect_err("an error").code.code(), code);
    }
}

// ---- duplicates and unknown members ----

#[test]
fn a_duplicated_envelope_member_is_invalid() {
    let cases = [
        (
            r#"{"jsonrpc":"2.0","jsonrpc":"2.0","method":"m","id":1}"#,
            "jsonrpc",
        ),
        (
            r#"{"jsonrpc":"2.0","method":"m","method":"m","id":1}"#,
            "method",
        ),
        (
            r#"{"jsonrpc":"2.0","method":"m","params":[],"params":[],"id":1}"#,
            "params",
        ),
        (
            r#"{"jsonrpc":"2.0","result":1,"result":1,"id":1}"#,
            "result",
        ),
        (
            r#"{"jsonrpc":"2.0","error":{"code":1,"message":"x"},"error":{"code":1,"message":"x"},"id":1}"#,
            "error",
        ),
    ];
    for (line, name) in cases {
        invalid(line, DecodeErrorKind::DuplicateMember(name), Some(num("1")));
    }
    let e = err(r#"{"jsonrpc":"2.0","method":"m","method":"n"}"#);
    assert_eq!(
        e.error_object().message,
        "Invalid Request: duplicated member \"method\""
    );
}

#[test]
fn a_duplicated_id_is_never_recovered() {
    invalid(
        r#"{"jsonrpc":"2.0","method":"m","id":1,"id":2}"#,
        DecodeErrorKind::DuplicateMember("id"),
        None,
    );
    invalid(
        r#"{"jsonrpc":"2.0","method":"m","id":1,"id":1}"#,
        DecodeErrorKind::DuplicateMember("id"),
        None,
    );
    invalid(
        r#"{"jsonrpc":"2.0","result":0,"id":"a","id":true}"#,
        DecodeErrorKind::DuplicateMember("id"),
        None,
    );
}

#[test]
fn unknown_members_are_ignored() {
    assert_eq!(
        ok(r#"{"x":[1,{"y":"\ud800"}],"jsonrpc":"2.0","ID":9,"Method":1,"method":"m","x":null}"#),
        Message::Notification(Notification {
            method: "m".into(),
            params: None
        })
    );
}

#[test]
fn the_id_is_recovered_whatever_else_is_wrong() {
    // The id comes before or after the problem, and alongside several problems.
    invalid(
        r#"{"id":"z","jsonrpc":"1.0","method":3,"params":1}"#,
        DecodeErrorKind::Version,
        Some(Id::from("z")),
    );
    invalid(
        r#"{"jsonrpc":"2.0","params":1,"method":3,"id":77}"#,
        DecodeErrorKind::ParamsNotStructured,
        Some(num("77")),
    );
    invalid(
        r#"{"jsonrpc":"2.0","method":"m","method":"m","id":null}"#,
        DecodeErrorKind::DuplicateMember("method"),
        Some(Id::Null),
    );
}

#[test]
fn whitespace_around_tokens_is_allowed() {
    assert_eq!(
        ok(" \t{ \"jsonrpc\" : \"2.0\" ,\r\n \"method\" : \"m\" , \"id\" : 1 } \r\n"),
        Message::Request(Request {
            id: num("1"),
            method: "m".into(),
            params: None
        })
    );
}

#[test]
fn errors_display_their_reason_and_id() {
    let e = err(r#"{"jsonrpc":"2.0","method":"m","params":1,"id":"x"}"#);
    assert_eq!(
        e.to_string(),
        r#"Invalid Request: params must be an array or an object (id "x")"#
    );
    #[cfg(feature = "std")]
    {
        let boxed: Box<dyn std::error::Error> = Box::new(e);
        assert!(boxed.to_string().starts_with("Invalid Request"));
    }
    let e = err(r#"{"jsonrpc":"2.0","method":"m","params":1}"#);
    assert_eq!(
        e.to_string(),
        "Invalid Request: params must be an array or an object"
    );
}

#[test]
fn every_invalid_request_message_names_its_reason() {
    let kinds = [
        DecodeErrorKind::NotAnObject,
        DecodeErrorKind::EmptyBatch,
        DecodeErrorKind::Version,
        DecodeErrorKind::DuplicateMember("id"),
        DecodeErrorKind::MethodNotString,
        DecodeErrorKind::MethodLoneSurrogate,
        DecodeErrorKind::ParamsNotStructured,
        DecodeErrorKind::InvalidId,
        DecodeErrorKind::IdLoneSurrogate,
        DecodeErrorKind::MethodWithOutcome,
        DecodeErrorKind::NoMethodOrOutcome,
        DecodeErrorKind::ResultAndError,
        DecodeErrorKind::ResponseWithoutId,
        DecodeErrorKind::ErrorNotObject,
        DecodeErrorKind::ErrorCode,
        DecodeErrorKind::ErrorMessage,
    ];
    let mut messages: Vec<String> = kinds.iter().map(ToString::to_string).collect();
    for (kind, message) in kinds.iter().zip(&messages) {
        assert_eq!(kind.code(), ErrorCode::INVALID_REQUEST);
        assert!(message.starts_with("Invalid Request: "), "{message}");
    }
    messages.sort();
    messages.dedup();
    assert_eq!(
        messages.len(),
        kinds.len(),
        "each reason has its own message"
    );
}

// ---- error codes ----

#[test]
fn named_error_codes() {
    let named = [
        (-32700, ErrorCode::PARSE_ERROR, "Parse error"),
        (-32600, ErrorCode::INVALID_REQUEST, "Invalid Request"),
        (-32601, ErrorCode::METHOD_NOT_FOUND, "Method not found"),
        (-32602, ErrorCode::INVALID_PARAMS, "Invalid params"),
        (-32603, ErrorCode::INTERNAL_ERROR, "Internal error"),
    ];
    for (code, variant, name) in named {
        assert_eq!(ErrorCode::from(code), variant);
        assert_eq!(i64::from(variant), code);
        assert_eq!(variant.name(), Some(name));
        assert_eq!(variant.to_string(), format!("{code} ({name})"));
    }
}

#[test]
fn error_code_range_boundaries() {
    // (code, server error, reserved)
    let cases = [
        (-32768, false, true),
        (-32769, false, false),
        (-32000, true, true),
        (-31999, false, false),
        (-32099, true, true),
        (-32100, false, true),
        (-32002, true, true),
        (-32604, false, true),
        (-32699, false, true),
        (-32701, false, true),
        (0, false, false),
        (i64::MIN, false, false),
        (i64::MAX, false, false),
    ];
    for (code, server, reserved) in cases {
        let c = ErrorCode::new(code);
        assert_eq!(c.code(), code);
        assert_eq!(c.is_server_error(), server, "{code}");
        assert_eq!(c.is_reserved(), reserved, "{code}");
        assert_eq!(c.name() == Some("Server error"), server, "{code}");
    }
    assert_eq!(ErrorCode::new(-32001).to_string(), "-32001 (Server error)");
    assert_eq!(ErrorCode::new(5).to_string(), "5");
    assert_eq!(
        ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "Method not found").to_string(),
        "Method not found (code -32601)"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// Equality follows the wire value: a code equals another exactly when both write
    /// the same integer, and a code read back from an error response equals the one
    /// written.
    #[test]
    fn error_codes_compare_by_their_wire_value(a in prop_oneof![
        any::<i64>(),
        -32800i64..=-31900,
    ], b in -32800i64..=-31900) {
        prop_assert_eq!(ErrorCode::new(a) == ErrorCode::new(b), a == b);
        prop_assert_eq!(ErrorCode::from(a), ErrorCode::new(a));
        let response = Response::error(Id::from(1u64), ErrorObject::new(a, "x"));
        let mut line = Vec::new();
        dhara_protocol::rpc::write_message(&response.into(), &mut line);
        let Incoming::Single(Ok(Message::Response(back))) = decode(&line, DecodeOptions::DEFAULT) else {
            panic!("an error response decodes");
        };
        let Err(error) = back.outcome else { panic!("an error outcome") };
        prop_assert_eq!(error.code, ErrorCode::new(a));
        prop_assert_eq!(error.code.code(), a);
    }
}

// ---- the first bytes of a line too long to decode ----

#[test]
fn scan_prefix_finds_the_id_of_a_cut_line() {
    let line = br#"{"jsonrpc":"2.0","id":"call-7","method":"tools/execute","params":{"input":"xxxxxxxx"}}"#;
    for cut in 0..=line.len() {
        let prefix = LinePrefix::scan(&line[..cut]);
        // The id is known once its closing quote and the next byte are in.
        let id_end = r#"{"jsonrpc":"2.0","id":"call-7""#.len();
        let expected = if cut > id_end {
            Some(Id::from("call-7"))
        } else {
            None
        };
        assert_eq!(prefix.id, expected, "cut at {cut}");
        assert!(!prefix.has_outcome);
    }
    let prefix = LinePrefix::scan(br#"{"result":{"content":[{"type":"text","text":"aaa"#);
    assert_eq!(
        prefix,
        LinePrefix {
            id: None,
            has_method: false,
            has_outcome: true
        }
    );
    let prefix = LinePrefix::scan(
        br#"{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"aaa"#,
    );
    assert_eq!(
        prefix,
        LinePrefix {
            id: Some(num("12")),
            has_method: false,
            has_outcome: true
        }
    );
}

#[test]
fn scan_prefix_never_takes_a_cut_or_doubtful_id() {
    // An integer id cut short could be a different id.
    assert_eq!(LinePrefix::scan(br#"{"jsonrpc":"2.0","id":12"#).id, None);
    assert_eq!(
        LinePrefix::scan(br#"{"jsonrpc":"2.0","id":12 "#).id,
        Some(num("12"))
    );
    assert_eq!(LinePrefix::scan(br#"{"jsonrpc":"2.0","id":"ab"#).id, None);
    // Two ids: which one is meant is unknown.
    assert_eq!(
        LinePrefix::scan(br#"{"id":1,"id":2,"method":"m","params":[1"#).id,
        None
    );
    assert_eq!(
        LinePrefix::scan(br#"{"id":1,"method":"m","id":1,"params":[1"#).id,
        None
    );
    // Invalid ids are not taken, but the scan goes on.
    let prefix = LinePrefix::scan(br#"{"id":1.5,"method":"m","params":[1"#);
    assert_eq!(
        prefix,
        LinePrefix {
            id: None,
            has_method: true,
            has_outcome: false
        }
    );
    assert_eq!(
        LinePrefix::scan(br#"{"id":"\ud800","method":"m","params":[1"#).id,
        None
    );
    // Not an object.
    assert_eq!(
        LinePrefix::scan(br#"[{"id":1,"method":"m","params":[1"#),
        LinePrefix::default()
    );
    assert_eq!(LinePrefix::scan(b""), LinePrefix::default());
    assert_eq!(LinePrefix::scan(b"\xff\xfe"), LinePrefix::default());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn scan_prefix_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..128)) {
        let _ = LinePrefix::scan(&bytes);
    }
}
