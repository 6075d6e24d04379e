//! The examples of the JSON-RPC 2.0 specification (section 7), run through a small
//! server built from this crate's layers: `frame` to cut the input into lines and
//! frame the replies, `rpc` to decode requests and write responses, `json` for
//! values.
//!
//! The data is `../shared/conformance/jsonrpc-2.0-examples.jsonl` (see the README
//! beside it). Responses are compared as parsed values, with object members in any
//! order and the elements of a batch response as a multiset. Our error messages
//! extend the specification's standard ones with the reason (`Invalid Request:
//! params must be an array or an object`), so the expected message must be a prefix
//! of ours; codes, ids, results and everything else must be equal.

use crate::shared_data;

use dhara_protocol::frame::{self, Frame, LineDecoder};
use dhara_protocol::json::{self, Object, Value};
use dhara_protocol::rpc::{
    self, DecodeError, DecodeOptions, ErrorCode, ErrorObject, Incoming, Message, Request, Response,
};

/// A server with the methods the examples call.
#[derive(Default)]
struct ExampleServer {
    /// The notifications received, by method name, in order.
    notified: Vec<String>,
}

impl ExampleServer {
    /// Handles a whole input stream; returns what the server writes.
    fn serve(&mut self, input: &[u8]) -> Vec<u8> {
        let mut decoder = LineDecoder::new();
        decoder.push(input);
        decoder.end();
        let mut out = Vec::new();
        while let Some(frame) = decoder.next_frame() {
            match frame {
                Frame::Line(line) => self.handle_line(line, &mut out),
                other => panic!("the examples are complete lines, got {other}"),
            }
        }
        out
    }

    /// Handles one line; appends the reply line, if there is one, to `out`.
    fn handle_line(&mut self, line: &[u8], out: &mut Vec<u8>) {
        match rpc::decode(line, DecodeOptions::DEFAULT) {
            Incoming::Single(entry) => {
                if let Some(response) = self.answer(entry) {
                    frame::write_line(out, |buf| rpc::write_message(&response.into(), buf));
                }
            }
            Incoming::Batch(entries) => {
                let responses: Vec<Message> = entries
                    .into_iter()
                    .filter_map(|entry| self.answer(entry))
                    .map(Message::from)
                    .collect();
                // A batch of notifications gets no reply at all, not even `[]`.
                if !responses.is_empty() {
                    frame::write_line(out, |buf| rpc::write_batch(&responses, buf));
                }
            }
        }
    }

    fn answer(&mut self, entry: Result<Message, DecodeError>) -> Option<Response> {
        match entry {
            Err(error) => Some(error.to_response()),
            Ok(Message::Request(request)) => Some(self.call(request)),
            Ok(Message::Notification(notification)) => {
                self.notified.push(notification.method);
                None
            }
            Ok(Message::Response(_)) => None,
        }
    }

    fn call(&mut self, request: Request) -> Response {
        let params = request.params.as_ref();
        let outcome = match request.method.as_str() {
            "subtract" => subtract(params),
            "sum" => sum(params),
            "get_data" => Ok(Value::Array(vec![Value::from("hello"), Value::from(5u64)])),
            _ => Err(ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                "Method not found",
            )),
        };
        Response {
            id: request.id,
            outcome,
        }
    }
}

fn invalid_params(why: &str) -> ErrorObject {
    ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("Invalid params: {why}"))
}

/// `subtract(minuend, subtrahend)`, positional or named.
fn subtract(params: Option<&Value>) -> Result<Value, ErrorObject> {
    let (minuend, subtrahend) = match params {
        Some(Value::Array(args)) if args.len() == 2 => (&args[0], &args[1]),
        Some(Value::Object(args)) => (&args["minuend"], &args["subtrahend"]),
        _ => return Err(invalid_params("expected [minuend, subtrahend]")),
    };
    match (minuend.as_i64(), subtrahend.as_i64()) {
        (Some(a), Some(b)) => a
            .checked_sub(b)
            .map(Value::from)
            .ok_or_else(|| invalid_params("the difference overflows")),
        _ => Err(invalid_params("minuend and subtrahend must be integers")),
    }
}

/// `sum(numbers...)`.
fn sum(params: Option<&Value>) -> Result<Value, ErrorObject> {
    let Some(Value::Array(args)) = params else {
        return Err(invalid_params("expected an array of integers"));
    };
    args.iter()
        .try_fold(0i64, |total, n| {
            n.as_i64().and_then(|n| total.checked_add(n))
        })
        .map(Value::from)
        .ok_or_else(|| invalid_params("expected integers with an integer sum"))
}

/// Sorts object members by name, recursively, so member order does not matter.
fn canonical(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        Value::Object(members) => {
            let mut sorted: Vec<_> = members
                .iter()
                .map(|(name, v)| (name.clone(), canonical(v)))
                .collect();
            sorted.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(Object::from(sorted))
        }
        other => other.clone(),
    }
}

/// Whether one response object matches the expected one.
fn response_matches(expected: &Value, actual: &Value) -> bool {
    let mut actual = actual.clone();
    let expected_message = expected["error"]["message"].as_str();
    if let (Some(expected_message), Some(error)) = (
        expected_message,
        actual.as_object_mut().and_then(|o| o.get_mut("error")),
    ) {
        if let Some(message) = error.as_object_mut().and_then(|o| o.get_mut("message")) {
            if message
                .as_str()
                .is_some_and(|m| m.starts_with(expected_message))
            {
                *message = Value::from(expected_message);
            }
        }
    }
    canonical(expected) == canonical(&actual)
}

/// Compares a reply with the expected one: batches as multisets.
fn reply_matches(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Array(expected), Value::Array(actual)) => {
            let mut left: Vec<&Value> = actual.iter().collect();
            expected.len() == actual.len()
                && expected
                    .iter()
                    .all(|e| match left.iter().position(|a| response_matches(e, a)) {
                        Some(i) => {
                            left.swap_remove(i);
                            true
                        }
                        None => false,
                    })
        }
        (expected, actual) => response_matches(expected, actual),
    }
}

fn show(value: &Value) -> String {
    String::from_utf8_lossy(&json::to_vec(value)).into_owned()
}

/// Runs one example; `Err` says what went wrong.
fn run_example(example: &Value) -> Result<(), String> {
    let request = example["request"].as_str().ok_or("no request text")?;
    let mut server = ExampleServer::default();
    let out = server.serve(format!("{request}\n").as_bytes());

    match &example["response"] {
        Value::Null => {
            if out.is_empty() {
                Ok(())
            } else {
                Err(format!(
                    "expected no reply, got {}",
                    String::from_utf8_lossy(&out)
                ))
            }
        }
        Value::String(expected) => {
            let expected = json::parse(expected.as_bytes()).map_err(|e| e.to_string())?;
            let line = out
                .strip_suffix(b"\n")
                .ok_or_else(|| format!("expected one reply line, got {out:?}"))?;
            if line.contains(&b'\n') {
                return Err("the reply is more than one line".into());
            }
            let actual = json::parse(line).map_err(|e| format!("reply is not JSON: {e}"))?;
            if reply_matches(&expected, &actual) {
                Ok(())
            } else {
                Err(format!(
                    "expected {}, got {}",
                    show(&expected),
                    show(&actual)
                ))
            }
        }
        other => Err(format!("unexpected response field {}", show(other))),
    }
}

#[test]
fn specification_examples() {
    let Some(path) = shared_data::conformance("jsonrpc-2.0-examples.jsonl") else {
        return;
    };
    let text = std::fs::read(&path).expect("the examples file is readable");
    let mut passed = 0;
    let mut failures = Vec::new();
    for line in text
        .split(|&b| b == b'\n')
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
    {
        let example = json::parse(line).expect("each line of the examples file is JSON");
        let name = example["name"].as_str().unwrap_or("(unnamed)").to_string();
        match run_example(&example) {
            Ok(()) => passed += 1,
            Err(why) => failures.push(format!("{name}: {why}")),
        }
    }
    let total = passed + failures.len();
    println!("JSON-RPC 2.0 specification examples: {passed} of {total} passed");
    assert!(
        failures.is_empty(),
        "failed examples:\n{}",
        failures.join("\n")
    );
    assert_eq!(
        total, 15,
        "the examples file holds the 15 examples of the specification"
    );
}

#[test]
fn notifications_reach_the_server_without_a_reply() {
    let mut server = ExampleServer::default();
    let mut input = br#"[{"jsonrpc":"2.0","method":"notify_sum","params":[1,2,4]},{"jsonrpc":"2.0","method":"notify_hello","params":[7]}]"#.to_vec();
    input.extend_from_slice(b"\r\n\n");
    input.extend_from_slice(br#"{"jsonrpc":"2.0","method":"update","params":[1,2,3,4,5]}"#);
    input.extend_from_slice(b"\n");
    assert!(server.serve(&input).is_empty());
    assert_eq!(server.notified, ["notify_sum", "notify_hello", "update"]);
}

#[test]
fn one_reply_line_per_request_line() {
    let mut server = ExampleServer::default();
    let mut input = br#"{"jsonrpc":"2.0","method":"sum","params":[1,2],"id":1}"#.to_vec();
    input.extend_from_slice(b"\n");
    input.extend_from_slice(br#"{"jsonrpc":"2.0","method":"get_data","id":2}"#);
    input.extend_from_slice(b"\n");
    let out = server.serve(&input);
    assert_eq!(
        out,
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":3}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":[\"hello\",5]}\n"
    );
}

#[test]
fn the_comparison_tells_different_replies_apart() {
    let expected = json::parse(
        br#"[{"jsonrpc":"2.0","result":7,"id":"1"},{"jsonrpc":"2.0","result":19,"id":"2"}]"#,
    )
    .expect("JSON");
    let reordered = json::parse(
        br#"[{"id":"2","jsonrpc":"2.0","result":19},{"jsonrpc":"2.0","id":"1","result":7}]"#,
    )
    .expect("JSON");
    let wrong = json::parse(
        br#"[{"jsonrpc":"2.0","result":7,"id":"1"},{"jsonrpc":"2.0","result":19,"id":2}]"#,
    )
    .expect("JSON");
    let doubled = json::parse(
        br#"[{"jsonrpc":"2.0","result":7,"id":"1"},{"jsonrpc":"2.0","result":7,"id":"1"}]"#,
    )
    .expect("JSON");
    assert!(reply_matches(&expected, &reordered));
    assert!(!reply_matches(&expected, &wrong));
    assert!(!reply_matches(&expected, &doubled));
    let error = json::parse(
        br#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":null}"#,
    )
    .expect("JSON");
    let detailed = json::parse(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: a batch must not be empty"}}"#)
        .expect("JSON");
    let other_code = json::parse(
        br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Invalid Request"}}"#,
    )
    .expect("JSON");
    assert!(reply_matches(&error, &detailed));
    assert!(!reply_matches(&error, &other_code));
}
