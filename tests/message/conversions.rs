//! Conversions of the Dhara messages to and from `json::Value`: the published
//! examples, leniency where the protocol is silent, and every field error with its path.

use dhara_protocol::json::{Number, Object, Value, json};
use dhara_protocol::message::{
    Content, ExecuteParams, FieldError, InitializeParams, InitializeResult, PROTOCOL_VERSION,
    Progress, Tool, ToolList, ToolResult,
};
use dhara_protocol::rpc::Id;

fn num(text: &str) -> Value {
    Value::Number(Number::from_text(text).expect("a JSON number"))
}

fn object(v: Value) -> Object {
    match v {
        Value::Object(o) => o,
        other => panic!("not an object: {other:?}"),
    }
}

fn fetch_url_schema() -> Value {
    json!({
        "type": "object",
        "properties": { "url": { "type": "string" } },
        "required": ["url"]
    })
}

// --- The published examples -------------------------------------------------------

#[test]
fn initialize_params_example() {
    let v = json!({ "version": "0.1.0", "cwd": "/home/user/project" });
    assert_eq!(
        InitializeParams::from_value(&v.clone()),
        Ok(InitializeParams::new("/home/user/project"))
    );
    assert_eq!(Value::from(InitializeParams::new("/home/user/project")), v);
    assert_eq!(InitializeParams::new("x").version, PROTOCOL_VERSION);
}

#[test]
fn initialize_result_example() {
    let v = json!({
        "name": "web-tools",
        "version": "1.0.0",
        "tools": [{
            "name": "fetch_url",
            "description": "Fetch a URL and extract readable content",
            "inputSchema": (fetch_url_schema())
        }]
    });
    let expected = InitializeResult {
        name: "web-tools".into(),
        version: "1.0.0".into(),
        tools: vec![Tool::new(
            "fetch_url",
            "Fetch a URL and extract readable content",
            fetch_url_schema(),
        )],
    };
    assert_eq!(
        InitializeResult::from_value(&v.clone()),
        Ok(expected.clone())
    );
    assert_eq!(Value::from(expected.clone()), v);
    assert_eq!(Value::from(expected), v);
}

#[test]
fn execute_example() {
    let v = json!({ "toolName": "fetch_url", "input": { "url": "https://example.com" } });
    let expected = ExecuteParams::new("fetch_url", json!({ "url": "https://example.com" }));
    assert_eq!(ExecuteParams::from_value(&v.clone()), Ok(expected.clone()));
    assert_eq!(Value::from(expected.clone()), v);

    let v = json!({ "toolName": "read", "input": { "path": "foo.ts" } });
    assert_eq!(
        ExecuteParams::from_value(&v),
        Ok(ExecuteParams::new("read", json!({ "path": "foo.ts" })))
    );
}

#[test]
fn tool_result_example() {
    let text = "# Example Domain\n\nThis domain is for documentation...";
    let v = json!({ "content": [{ "type": "text", "text": text }], "isError": false });
    assert_eq!(
        ToolResult::from_value(&v.clone()),
        Ok(ToolResult::text(text))
    );
    assert_eq!(Value::from(ToolResult::text(text)), v);
    let failed = json!({ "content": [{ "type": "text", "text": "boom" }], "isError": true });
    assert_eq!(Value::from(ToolResult::error_text("boom")), failed);
}

#[test]
fn progress_examples() {
    for message in ["Downloading... 50%", "Parsing HTML...", "Done"] {
        let v = json!({ "message": message });
        assert_eq!(Progress::from_value(&v.clone()), Ok(Progress::new(message)));
        assert_eq!(Value::from(Progress::new(message)), v);
    }
}

#[test]
fn content_type_examples() {
    let cases = [
        (
            json!({ "type": "text", "text": "Plain text content" }),
            Content::text("Plain text content"),
        ),
        (
            json!({ "type": "image", "mimeType": "image/png", "data": "base64-encoded-data..." }),
            Content::ImageData {
                mime_type: "image/png".into(),
                data: "base64-encoded-data...".into(),
            },
        ),
        (
            json!({ "type": "image", "path": "/tmp/screenshot.png" }),
            Content::ImagePath {
                path: "/tmp/screenshot.png".into(),
                mime_type: None,
            },
        ),
        (
            json!({ "type": "file", "path": "/tmp/output.csv", "size": 12345, "mimeType": "text/csv" }),
            Content::File {
                path: "/tmp/output.csv".into(),
                size: Some(12345),
                mime_type: Some("text/csv".into()),
            },
        ),
    ];
    for (v, expected) in cases {
        assert_eq!(Content::from_value(&v.clone()), Ok(expected.clone()));
        assert_eq!(
            Value::from(expected.clone()),
            v,
            "written back member for member, in order"
        );
    }
}

// --- Leniency --------------------------------------------------------------------

#[test]
fn unknown_members_are_ignored() {
    let v = json!({ "version": "0.1.0", "cwd": "/p", "extra": [1, 2], "capabilities": {} });
    assert_eq!(
        InitializeParams::from_value(&v),
        Ok(InitializeParams::new("/p"))
    );
    let v = json!({ "type": "text", "text": "hi", "annotations": { "audience": ["user"] } });
    assert_eq!(Content::from_value(&v), Ok(Content::text("hi")));
}

#[test]
fn repeated_member_last_wins() {
    let mut o = Object::new();
    o.push("toolName", json!("first"));
    o.push("input", json!(1));
    o.push("toolName", json!("second"));
    let p = ExecuteParams::from_value(&Value::Object(o)).unwrap();
    assert_eq!(p.tool_name, "second");
    assert_eq!(p.input, json!(1));
}

#[test]
fn is_error_absent_or_null_means_false() {
    let v = json!({ "content": [] });
    assert_eq!(
        ToolResult::from_value(&v),
        Ok(ToolResult {
            content: vec![],
            is_error: false
        })
    );
    let v = json!({ "content": [], "isError": null });
    assert_eq!(ToolResult::from_value(&v).map(|r| r.is_error), Ok(false));
    let v = json!({ "content": [], "isError": true });
    assert_eq!(ToolResult::from_value(&v).map(|r| r.is_error), Ok(true));
}

#[test]
fn null_optional_members_read_as_absent() {
    let v = json!({ "name": "t", "description": null, "inputSchema": null });
    assert_eq!(
        Tool::from_value(&v),
        Ok(Tool {
            name: "t".into(),
            description: None,
            input_schema: None
        })
    );
    let v = json!({ "type": "file", "path": "/f", "size": null, "mimeType": null });
    assert_eq!(
        Content::from_value(&v),
        Ok(Content::File {
            path: "/f".into(),
            size: None,
            mime_type: None
        })
    );
}

#[test]
fn absent_optional_members_are_not_written() {
    let tool = Tool {
        name: "t".into(),
        description: None,
        input_schema: None,
    };
    assert_eq!(Value::from(tool.clone()), json!({ "name": "t" }));
    let image = Content::ImagePath {
        path: "/i.png".into(),
        mime_type: None,
    };
    assert_eq!(
        Value::from(image.clone()),
        json!({ "type": "image", "path": "/i.png" })
    );
    let file = Content::File {
        path: "/f".into(),
        size: None,
        mime_type: None,
    };
    assert_eq!(
        Value::from(file.clone()),
        json!({ "type": "file", "path": "/f" })
    );
}

#[test]
fn boolean_input_schema_is_accepted() {
    let v = json!({ "name": "t", "inputSchema": true });
    assert_eq!(
        Tool::from_value(&v).map(|t| t.input_schema),
        Ok(Some(Value::Bool(true)))
    );
}

#[test]
fn execute_input_may_be_any_value() {
    for input in [json!(null), json!([1, 2]), json!("text"), json!({})] {
        let v = json!({ "toolName": "t", "input": (input.clone()) });
        assert_eq!(
            ExecuteParams::from_value(&v),
            Ok(ExecuteParams::new("t", input))
        );
    }
}

#[test]
fn progress_ids() {
    let cases = [
        (json!("abc"), Id::from("abc")),
        (json!(7), Id::from(7u64)),
        (json!(null), Id::Null),
        (Value::from(-3), Id::Number(Number::from(-3))),
        (
            num("123456789012345678901234567890"),
            Id::Number(Number::from_text("123456789012345678901234567890").unwrap()),
        ),
    ];
    for (id, expected) in cases {
        let v = json!({ "message": "m", "id": (id.clone()) });
        assert_eq!(
            Progress::from_value(&v.clone()),
            Ok(Progress::for_request(expected.clone(), "m"))
        );
        assert_eq!(Value::from(Progress::for_request(expected, "m")), v);
    }
}

// --- Content kept whole -------------------------------------------------------------

#[test]
fn unknown_content_type_is_kept_whole() {
    let v = json!({ "type": "audio", "data": "UklGRg==", "mimeType": "audio/wav", "extra": [1, { "a": null }] });
    let content = Content::from_value(&v.clone()).unwrap();
    assert_eq!(content, Content::Unknown(object(v.clone())));
    assert_eq!(content.kind(), Some("audio"));
    assert_eq!(Value::from(content.clone()), v);
}

#[test]
fn content_whose_members_do_not_fit_is_kept_whole() {
    let misfits = [
        json!({ "text": "no type" }),
        json!({ "type": 3, "text": "type not a string" }),
        json!({ "type": "text" }),
        json!({ "type": "text", "text": 5 }),
        json!({ "type": "image", "data": "AAAA" }),
        json!({ "type": "image", "data": "AAAA", "mimeType": 1 }),
        json!({ "type": "image", "data": 1, "mimeType": "image/png" }),
        json!({ "type": "image" }),
        json!({ "type": "image", "path": "/p", "mimeType": false }),
        json!({ "type": "file" }),
        json!({ "type": "file", "path": "/f", "size": (-1) }),
        json!({ "type": "file", "path": "/f", "size": (num("1.5")) }),
        json!({ "type": "file", "path": "/f", "size": "12" }),
        json!({ "type": "file", "path": "/f", "size": (num("18446744073709551616")) }),
        json!({ "type": "file", "path": "/f", "mimeType": [] }),
    ];
    for v in misfits {
        let content = Content::from_value(&v.clone()).unwrap();
        assert_eq!(content, Content::Unknown(object(v.clone())), "{v:?}");
        assert_eq!(Value::from(content.clone()), v);
    }
}

#[test]
fn image_with_data_ignores_path() {
    let v = json!({ "type": "image", "path": "/p.png", "data": "AAAA", "mimeType": "image/png" });
    assert_eq!(
        Content::from_value(&v),
        Ok(Content::ImageData {
            mime_type: "image/png".into(),
            data: "AAAA".into()
        })
    );
}

#[test]
fn content_kinds() {
    assert_eq!(Content::text("a").kind(), Some("text"));
    assert_eq!(
        Content::ImagePath {
            path: "p".into(),
            mime_type: None
        }
        .kind(),
        Some("image")
    );
    assert_eq!(Content::Unknown(Object::new()).kind(), None);
}

// --- Field errors -----------------------------------------------------------------

/// Asserts the error's path, expectation and finding.
#[track_caller]
fn assert_error<T: std::fmt::Debug>(
    r: Result<T, FieldError>,
    path: &str,
    expected: &str,
    found: &str,
) {
    let e = r.expect_err("a field error");
    assert_eq!(
        (e.path(), e.expected(), e.found()),
        (path, expected, found),
        "{e}"
    );
    assert_eq!(e.is_missing(), found == "missing");
}

#[test]
fn root_must_be_an_object() {
    assert_error(
        InitializeParams::from_value(&json!([])),
        "",
        "an object",
        "array",
    );
    assert_error(
        InitializeResult::from_value(&json!(null)),
        "",
        "an object",
        "null",
    );
    assert_error(Tool::from_value(&json!("t")), "", "an object", "string");
    assert_error(ToolList::from_value(&json!(1)), "", "an object", "number");
    assert_error(
        ExecuteParams::from_value(&json!(true)),
        "",
        "an object",
        "boolean",
    );
    assert_error(ToolResult::from_value(&json!([])), "", "an object", "array");
    assert_error(
        Content::from_value(&json!("text")),
        "",
        "an object",
        "string",
    );
    assert_error(Progress::from_value(&json!(null)), "", "an object", "null");
}

#[test]
fn initialize_params_errors() {
    assert_error(
        InitializeParams::from_value(&json!({ "cwd": "/" })),
        "version",
        "a string",
        "missing",
    );
    assert_error(
        InitializeParams::from_value(&json!({ "version": 1, "cwd": "/" })),
        "version",
        "a string",
        "number",
    );
    assert_error(
        InitializeParams::from_value(&json!({ "version": "0.1.0" })),
        "cwd",
        "a string",
        "missing",
    );
    assert_error(
        InitializeParams::from_value(&json!({ "version": "0.1.0", "cwd": null })),
        "cwd",
        "a string",
        "null",
    );
}

#[test]
fn initialize_result_errors() {
    let r = |v| InitializeResult::from_value(&v);
    assert_error(
        r(json!({ "version": "1", "tools": [] })),
        "name",
        "a string",
        "missing",
    );
    assert_error(
        r(json!({ "name": "n", "version": [], "tools": [] })),
        "version",
        "a string",
        "array",
    );
    assert_error(
        r(json!({ "name": "n", "version": "1" })),
        "tools",
        "an array",
        "missing",
    );
    assert_error(
        r(json!({ "name": "n", "version": "1", "tools": {} })),
        "tools",
        "an array",
        "object",
    );
    let t = json!({ "name": "ok" });
    assert_error(
        r(json!({ "name": "n", "version": "1", "tools": [(t.clone()), "x"] })),
        "tools[1]",
        "an object",
        "string",
    );
    assert_error(
        r(
            json!({ "name": "n", "version": "1", "tools": [(t.clone()), (t.clone()), { "inputSchema": {} }] }),
        ),
        "tools[2].name",
        "a string",
        "missing",
    );
    assert_error(
        r(
            json!({ "name": "n", "version": "1", "tools": [(t.clone()), (t.clone()), { "name": "x", "inputSchema": "object" }] }),
        ),
        "tools[2].inputSchema",
        "a JSON Schema (an object or a boolean)",
        "string",
    );
    assert_error(
        r(json!({ "name": "n", "version": "1", "tools": [{ "name": "x", "description": 5 }] })),
        "tools[0].description",
        "a string",
        "number",
    );
}

#[test]
fn tool_list_errors() {
    assert_error(
        ToolList::from_value(&json!({})),
        "tools",
        "an array",
        "missing",
    );
    assert_error(
        ToolList::from_value(&json!({ "tools": [{ "name": 1 }] })),
        "tools[0].name",
        "a string",
        "number",
    );
    assert_error(
        ToolList::from_value(&json!({ "tools": [{ "name": "a", "inputSchema": 1 }] })),
        "tools[0].inputSchema",
        "a JSON Schema (an object or a boolean)",
        "number",
    );
}

#[test]
fn execute_params_errors() {
    assert_error(
        ExecuteParams::from_value(&json!({ "input": {} })),
        "toolName",
        "a string",
        "missing",
    );
    assert_error(
        ExecuteParams::from_value(&json!({ "toolName": 3, "input": {} })),
        "toolName",
        "a string",
        "number",
    );
    assert_error(
        ExecuteParams::from_value(&json!({ "toolName": "t" })),
        "input",
        "a JSON value",
        "missing",
    );
}

#[test]
fn tool_result_errors() {
    assert_error(
        ToolResult::from_value(&json!({ "isError": false })),
        "content",
        "an array",
        "missing",
    );
    assert_error(
        ToolResult::from_value(&json!({ "content": "text" })),
        "content",
        "an array",
        "string",
    );
    assert_error(
        ToolResult::from_value(&json!({ "content": [{ "type": "text", "text": "a" }, "b"] })),
        "content[1]",
        "an object",
        "string",
    );
    assert_error(
        ToolResult::from_value(&json!({ "content": [], "isError": "yes" })),
        "isError",
        "a boolean",
        "string",
    );
    assert_error(
        ToolResult::from_value(&json!({ "content": [], "isError": 0 })),
        "isError",
        "a boolean",
        "number",
    );
}

#[test]
fn progress_errors() {
    let any_id = "a string, an integer or null";
    assert_error(
        Progress::from_value(&json!({})),
        "message",
        "a string",
        "missing",
    );
    assert_error(
        Progress::from_value(&json!({ "message": null })),
        "message",
        "a string",
        "null",
    );
    assert_error(
        Progress::from_value(&json!({ "message": "m", "id": (num("1.5")) })),
        "id",
        any_id,
        "number",
    );
    assert_error(
        Progress::from_value(&json!({ "message": "m", "id": (num("1e2")) })),
        "id",
        any_id,
        "number",
    );
    assert_error(
        Progress::from_value(&json!({ "message": "m", "id": true })),
        "id",
        any_id,
        "boolean",
    );
    assert_error(
        Progress::from_value(&json!({ "message": "m", "id": [1] })),
        "id",
        any_id,
        "array",
    );
}

#[test]
fn field_error_display() {
    let e = InitializeResult::from_value(
        &json!({ "name": "n", "version": "1", "tools": [{ "name": "a", "inputSchema": "x" }] }),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "tools[0].inputSchema: expected a JSON Schema (an object or a boolean), found string"
    );
    let e = ExecuteParams::from_value(&json!({ "input": 1 })).unwrap_err();
    assert_eq!(e.to_string(), "toolName: missing, expected a string");
    let e = Progress::from_value(&json!([])).unwrap_err();
    assert_eq!(e.to_string(), "expected an object, found array");
    let boxed: Box<dyn std::error::Error> = Box::new(e);
    assert_eq!(boxed.to_string(), "expected an object, found array");
}

#[test]
fn standard_conversions() {
    let v = json!({ "toolName": "t", "input": {} });
    let p = ExecuteParams::try_from(&v).unwrap();
    assert_eq!(Value::from(p), v);
    let bad: Result<ToolList, _> = (&json!({})).try_into();
    assert!(bad.unwrap_err().is_missing());
}

#[test]
fn tool_input_is_checked_against_its_schema() {
    let tool = Tool::new("fetch_url", "Fetch", fetch_url_schema());
    assert_eq!(
        tool.check_input(&json!({ "url": "https://example.com" })),
        Ok(())
    );
    let e = tool.check_input(&json!({ "url": 1 })).unwrap_err();
    assert_eq!(
        (e.path(), e.message()),
        ("$.url", "Expected string, found number at $.url")
    );
    let schemaless = Tool {
        name: "any".into(),
        description: None,
        input_schema: None,
    };
    assert_eq!(schemaless.check_input(&json!([1, "x"])), Ok(()));
}

#[test]
fn tool_result_error_is_a_tool_level_failure_with_the_items_given() {
    let items = [
        Content::text("not found: a.txt"),
        Content::text("searched: ./, ./docs"),
    ];
    let result = ToolResult::error(items.clone());
    assert!(result.is_error);
    assert_eq!(result.content, items);
    let value = Value::from(result.clone());
    assert_eq!(value["isError"], Value::Bool(true));
    assert_eq!(
        value["content"][1]["text"],
        Value::from("searched: ./, ./docs")
    );
    // Read back, it is the same failure; with one text item it is `error_text`.
    assert_eq!(ToolResult::from_value(&value), Ok(result));
    assert_eq!(
        ToolResult::error([Content::text("x")]),
        ToolResult::error_text("x")
    );
    assert!(ToolResult::error([]).content.is_empty());
}
