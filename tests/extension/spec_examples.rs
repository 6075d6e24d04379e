//! Every example of section 7 of the JSON-RPC 2.0 specification, sent to an Extension
//! endpoint with custom methods on. A small harness plays the server's methods
//! (`subtract`, `sum`, `get_data`) and ignores the notifications; everything else
//! (parse errors, invalid requests, unknown methods, batches) is the endpoint's own
//! doing.
//!
//! Comparison rules (from the data's README): responses are compared as parsed
//! values; a batch response as a multiset; `response: null` means nothing may be
//! written. Where the specification lets the server say more, the endpoint may: an
//! error's `message` must start with the example's message (ours add the reason,
//! such as `Invalid Request: a message must be a JSON object`), and an error may carry
//! `data` (ours name the unknown method).

use crate::shared_data;

use crate::extension_support;

use dhara_protocol::extension::{Config, Event, Extension, ServerInfo};
use dhara_protocol::json::{self, Value};
use dhara_protocol::rpc::ErrorObject;
use extension_support::{INITIALIZE, drain, send};

/// The methods the examples call, as the specification describes them.
fn serve(method: &str, params: Option<&Value>) -> Result<Value, ErrorObject> {
    let number = |v: &Value| {
        v.as_i64()
            .ok_or_else(|| ErrorObject::new(-32602, "Invalid params"))
    };
    match (method, params) {
        ("subtract", Some(Value::Array(args))) if args.len() == 2 => {
            Ok(Value::from(number(&args[0])? - number(&args[1])?))
        }
        ("subtract", Some(named @ Value::Object(_))) => Ok(Value::from(
            number(&named["minuend"])? - number(&named["subtrahend"])?,
        )),
        ("sum", Some(Value::Array(args))) => {
            let mut total = 0;
            for arg in args {
                total += number(arg)?;
            }
            Ok(Value::from(total))
        }
        ("get_data", None) => Ok(json::parse(br#"["hello", 5]"#)
            .map_err(|_| ErrorObject::new(-32603, "Internal error"))?),
        _ => Err(ErrorObject::new(-32601, "Method not found")),
    }
}

/// Sends one example's request text and plays the server; returns what was written.
fn run_example(request: &str) -> Vec<u8> {
    let config = Config::default().custom_methods(true);
    let mut extension =
        Extension::with_config(ServerInfo::new("spec", "1.0.0"), Vec::new(), config);
    send(&mut extension, INITIALIZE);

    let mut run = send(&mut extension, request);
    let mut written = Vec::new();
    loop {
        written.append(&mut run.written);
        let mut answered = false;
        for event in run.events.drain(..) {
            if let Event::Request {
                request,
                method,
                params,
            } = event
            {
                let outcome = serve(&method, params.as_ref());
                extension
                    .respond_value(request, outcome)
                    .expect("a pending request");
                answered = true;
            }
        }
        if !answered {
            return written;
        }
        run = drain(&mut extension);
    }
}

/// `actual` says what `expected` says, allowing the additions the specification
/// leaves to the server (see the module docs).
fn response_matches(expected: &Value, actual: &Value) -> bool {
    let (Some(e), Some(a)) = (expected.as_object(), actual.as_object()) else {
        return false;
    };
    let same_keys = e.keys().all(|k| a.contains_key(k)) && a.keys().all(|k| e.contains_key(k));
    if !same_keys
        || e.get("jsonrpc") != a.get("jsonrpc")
        || e.get("id") != a.get("id")
        || e.get("result") != a.get("result")
    {
        return false;
    }
    match (e.get("error"), a.get("error")) {
        (None, None) => true,
        (Some(e), Some(a)) => {
            let message = |v: &Value| v["message"].as_str().map(String::from);
            e["code"] == a["code"]
                && matches!((message(e), message(a)), (Some(em), Some(am)) if am.starts_with(&em))
                && (e.get("data").is_none() || e.get("data") == a.get("data"))
        }
        _ => false,
    }
}

/// Whether `written` is exactly the expected reply (`None`: nothing at all).
fn check(expected: Option<&str>, written: &[u8]) -> Result<(), String> {
    let text = String::from_utf8_lossy(written);
    let Some(expected) = expected else {
        return if written.is_empty() {
            Ok(())
        } else {
            Err(format!("expected nothing, got {text}"))
        };
    };
    let expected =
        json::parse(expected.as_bytes()).map_err(|e| format!("bad expected JSON: {e}"))?;
    let lines = extension_support::lines(written);
    let [actual] = &lines[..] else {
        return Err(format!("expected one line, got {text}"));
    };
    match (&expected, actual) {
        (Value::Array(expected), Value::Array(actual)) => {
            if expected.len() != actual.len() {
                return Err(format!(
                    "batch of {} replies, expected {}: {text}",
                    actual.len(),
                    expected.len()
                ));
            }
            // A multiset match: each expected reply takes a distinct actual one.
            let mut left: Vec<&Value> = actual.iter().collect();
            for e in expected {
                match left.iter().position(|a| response_matches(e, a)) {
                    Some(i) => {
                        left.swap_remove(i);
                    }
                    None => return Err(format!("no reply matches {e} in {text}")),
                }
            }
            Ok(())
        }
        (expected, actual) if response_matches(expected, actual) => Ok(()),
        _ => Err(format!("expected {expected}, got {text}")),
    }
}

#[test]
fn every_json_rpc_2_0_specification_example() {
    let Some(path) = shared_data::conformance("jsonrpc-2.0-examples.jsonl") else {
        return;
    };
    let data = std::fs::read_to_string(&path).expect("the examples file is readable");
    let mut passed = 0;
    let mut failures = Vec::new();
    for line in data.lines().filter(|l| !l.trim().is_empty()) {
        let example = json::parse(line.as_bytes()).expect("each example is a JSON object");
        let name = example["name"].as_str().unwrap_or("?").to_string();
        let request = example["request"].as_str().expect("request text");
        let expected = example["response"].as_str();
        match check(expected, &run_example(request)) {
            Ok(()) => passed += 1,
            Err(why) => failures.push(format!("{name}: {why}")),
        }
    }
    println!(
        "JSON-RPC 2.0 specification examples: {passed} of {} passed",
        passed + failures.len()
    );
    assert!(failures.is_empty(), "failed:\n{}", failures.join("\n"));
    assert_eq!(passed, 15, "the data holds 15 examples");
}

#[test]
fn the_comparison_rejects_wrong_replies() {
    let expected = Some(r#"{"jsonrpc": "2.0", "result": 19, "id": 1}"#);
    assert!(check(expected, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":19}\n").is_ok());
    assert!(check(expected, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":-19}\n").is_err());
    assert!(
        check(
            expected,
            b"{\"jsonrpc\":\"2.0\",\"id\":\"1\",\"result\":19}\n"
        )
        .is_err()
    );
    assert!(check(None, b"{}\n").is_err());
    let batch = Some(
        r#"[{"jsonrpc": "2.0", "result": 7, "id": "1"}, {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}]"#,
    );
    let reordered = br#"[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: x"}},{"jsonrpc":"2.0","id":"1","result":7}]"#;
    assert!(check(batch, &[&reordered[..], b"\n"].concat()).is_ok());
    let wrong_code = br#"[{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"Invalid Request"}},{"jsonrpc":"2.0","id":"1","result":7}]"#;
    assert!(check(batch, &[&wrong_code[..], b"\n"].concat()).is_err());
}
