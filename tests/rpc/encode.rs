//! The exact bytes `rpc` writes: compact, members in the order `jsonrpc`, `id`,
//! `method`, `params` / `result` / `error`, no newline, appended to the buffer.

use dhara_protocol::json::{self, Number, Value};
use dhara_protocol::rpc::{
    Envelope, ErrorCode, ErrorObject, Id, Message, Notification, Request, Response, write_batch,
    write_message, write_with,
};

fn text(out: &[u8]) -> &str {
    std::str::from_utf8(out).expect("UTF-8 output")
}

fn value(text: &str) -> Value {
    json::parse(text.as_bytes()).expect("valid JSON")
}

fn request(id: Id, method: &str, params: Option<Value>) -> Message {
    let method = method.into();
    Message::Request(Request { id, method, params })
}

fn notification(method: &str, params: Option<Value>) -> Message {
    let method = method.into();
    Message::Notification(Notification { method, params })
}

#[test]
fn requests_and_notifications() {
    let mut out = Vec::new();
    let params = Some(value("[42, 23]"));
    write_message(&request(Id::from(1u64), "subtract", params), &mut out);
    assert_eq!(
        text(&out),
        r#"{"jsonrpc":"2.0","id":1,"method":"subtract","params":[42,23]}"#
    );

    out.clear();
    write_message(&request(Id::Null, "m", None), &mut out);
    assert_eq!(text(&out), r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#);

    out.clear();
    let params = Some(value(r#"{"b": 1, "a": [true]}"#));
    write_message(&notification("update", params), &mut out);
    assert_eq!(
        text(&out),
        r#"{"jsonrpc":"2.0","method":"update","params":{"b":1,"a":[true]}}"#
    );

    out.clear();
    write_message(&notification("shutdown", None), &mut out);
    assert_eq!(text(&out), r#"{"jsonrpc":"2.0","method":"shutdown"}"#);
}

#[test]
fn responses() {
    let mut out = Vec::new();
    write_message(
        &Response::result(Id::from("1"), value(r#"["hello", 5]"#)).into(),
        &mut out,
    );
    assert_eq!(
        text(&out),
        r#"{"jsonrpc":"2.0","id":"1","result":["hello",5]}"#
    );

    out.clear();
    let error = ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "Method not found");
    write_message(&Response::error(Id::from(3u64), error).into(), &mut out);
    assert_eq!(
        text(&out),
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found"}}"#
    );

    out.clear();
    let error = ErrorObject::new(-32602, "Missing required parameter 'url'")
        .with_data(value(r#"{"toolName":"fetch"}"#));
    write_message(&Response::error(Id::Null, error).into(), &mut out);
    assert_eq!(
        text(&out),
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"Missing required parameter 'url'","data":{"toolName":"fetch"}}}"#
    );
}

#[test]
fn ids_and_strings_are_written_exactly() {
    let huge = Id::Number(Number::from_text("123456789012345678901234567890").expect("number"));
    let mut out = Vec::new();
    write_message(&request(huge.clone(), "m", None), &mut out);
    assert_eq!(
        text(&out),
        r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"m"}"#
    );
    assert_eq!(huge.to_string(), "123456789012345678901234567890");

    out.clear();
    write_message(
        &request(Id::from("a\"b\\c\nd"), "tools/\u{e9}\u{1}", None),
        &mut out,
    );
    assert_eq!(
        out.iter().filter(|&&b| b < 0x20).count(),
        0,
        "no raw control character"
    );
    assert_eq!(
        json::parse(&out).expect("valid JSON")["id"],
        Value::from("a\"b\\c\nd")
    );
    assert_eq!(
        json::parse(&out).expect("valid JSON")["method"],
        Value::from("tools/\u{e9}\u{1}")
    );
    assert_eq!(Id::from("q\"").to_string(), r#""q\"""#);
    assert_eq!(Id::Null.to_string(), "null");
}

#[test]
fn error_objects_write_every_code() {
    for code in [i64::MIN, -32768, -32700, -32000, 0, 42, i64::MAX] {
        let mut out = Vec::new();
        let response = Response::error(Id::Null, ErrorObject::new(code, "x"));
        write_message(&response.into(), &mut out);
        let expected =
            format!(r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":{code},"message":"x"}}}}"#);
        assert_eq!(text(&out), expected);
    }
}

#[test]
fn writing_appends_to_the_buffer_without_a_newline() {
    let mut out = b"prefix:".to_vec();
    let message = Message::Notification(Notification {
        method: "a".into(),
        params: None,
    });
    write_message(&message, &mut out);
    assert_eq!(text(&out), r#"prefix:{"jsonrpc":"2.0","method":"a"}"#);
    assert!(!out.ends_with(b"\n"));
}

#[test]
fn batches() {
    let messages = [
        Message::Request(Request {
            id: Id::from(1u64),
            method: "sum".into(),
            params: Some(value("[1,2]")),
        }),
        Message::Notification(Notification {
            method: "n".into(),
            params: None,
        }),
        Message::Response(Response::result(Id::from("r"), Value::Null)),
    ];
    let mut out = Vec::new();
    write_batch(&messages, &mut out);
    assert_eq!(
        text(&out),
        r#"[{"jsonrpc":"2.0","id":1,"method":"sum","params":[1,2]},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":"r","result":null}]"#
    );

    out.clear();
    let responses = [
        Response::result(Id::from(1u64), Value::from(7u64)).into(),
        Response::error(
            Id::Null,
            ErrorObject::new(ErrorCode::INVALID_REQUEST, "Invalid Request"),
        )
        .into(),
    ];
    write_batch(&responses, &mut out);
    assert_eq!(
        text(&out),
        r#"[{"jsonrpc":"2.0","id":1,"result":7},{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}]"#
    );
}

#[test]
fn a_payload_written_by_a_closure_gives_the_bytes_of_the_whole_message() {
    let params = value(r#"{"toolName":"grep","input":{"q":"a\"b"}}"#);
    let id = Id::from(41u64);
    for (envelope, whole) in [
        (
            Envelope::Request {
                id: &id,
                method: "tools/execute",
            },
            request(id.clone(), "tools/execute", Some(params.clone())),
        ),
        (
            Envelope::Notification { method: "progress" },
            notification("progress", Some(params.clone())),
        ),
        (
            Envelope::Result { id: &id },
            Response::result(id.clone(), params.clone()).into(),
        ),
    ] {
        let mut streamed = Vec::new();
        write_with(
            envelope,
            |out| json::write_value(&params, out),
            &mut streamed,
        );
        let mut built = Vec::new();
        write_message(&whole, &mut built);
        assert_eq!(text(&streamed), text(&built));
    }
}
