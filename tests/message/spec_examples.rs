//! The JSON examples of the published protocol text, verbatim: each parses into the
//! expected typed message, and the typed message writes back the same JSON, byte for
//! byte (compact, members in the published order).

use dhara_protocol::json::{self, Value};
use dhara_protocol::message::{
    Content, ExecuteParams, FieldError, InitializeParams, InitializeResult, Progress, Tool,
    ToolResult,
};
use dhara_protocol::schema;

fn parse(text: &str) -> Value {
    json::parse(text.as_bytes()).expect("the published example is JSON")
}

/// The member `name` of a published message.
fn member(message: &str, name: &str) -> Value {
    parse(message)
        .get(name)
        .cloned()
        .expect("the member is there")
}

/// Reads `value` as `T` and compares it with `expected`; writes `expected` and
/// compares the bytes with `value`'s.
#[track_caller]
fn example<T>(value: Value, read: fn(&Value) -> Result<T, FieldError>, expected: T)
where
    T: std::fmt::Debug + PartialEq + Clone + Into<Value>,
{
    assert_eq!(read(&value), Ok(expected.clone()));
    let written = json::to_vec(&expected.into());
    assert_eq!(
        String::from_utf8_lossy(&written),
        String::from_utf8_lossy(&json::to_vec(&value))
    );
}

const FETCH_URL_SCHEMA: &str = r#"{
          "type": "object",
          "properties": {
            "url": { "type": "string" }
          },
          "required": ["url"]
        }"#;

fn fetch_url_tool() -> Tool {
    Tool::new(
        "fetch_url",
        "Fetch a URL and extract readable content",
        parse(FETCH_URL_SCHEMA),
    )
}

#[test]
fn request_and_response_lines() {
    let request = r#"{"jsonrpc":"2.0","id":1,"method":"tools/execute","params":{"toolName":"read","input":{"path":"foo.ts"}}}"#;
    let response = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"..."}],"isError":false}}"#;
    example(
        member(request, "params"),
        ExecuteParams::from_value,
        ExecuteParams::new("read", parse(r#"{"path":"foo.ts"}"#)),
    );
    example(
        member(response, "result"),
        ToolResult::from_value,
        ToolResult::text("..."),
    );
}

#[test]
fn initialize() {
    let request = r#"{
  "method": "initialize",
  "params": {
    "version": "0.1.0",
    "cwd": "/home/user/project"
  }
}"#;
    let response = r#"{
  "result": {
    "name": "web-tools",
    "version": "1.0.0",
    "tools": [
      {
        "name": "fetch_url",
        "description": "Fetch a URL and extract readable content",
        "inputSchema": {
          "type": "object",
          "properties": {
            "url": { "type": "string" }
          },
          "required": ["url"]
        }
      }
    ]
  }
}"#;
    example(
        member(request, "params"),
        InitializeParams::from_value,
        InitializeParams::new("/home/user/project"),
    );
    example(
        member(response, "result"),
        InitializeResult::from_value,
        InitializeResult {
            name: "web-tools".into(),
            version: "1.0.0".into(),
            tools: vec![fetch_url_tool()],
        },
    );
}

#[test]
fn tools_execute() {
    let request = r#"{
  "method": "tools/execute",
  "params": {
    "toolName": "fetch_url",
    "input": {
      "url": "https://example.com"
    }
  }
}"#;
    let response = r##"{
  "result": {
    "content": [
      {
        "type": "text",
        "text": "# Example Domain\n\nThis domain is for documentation..."
      }
    ],
    "isError": false
  }
}"##;
    let params = member(request, "params");
    example(
        params.clone(),
        ExecuteParams::from_value,
        ExecuteParams::new("fetch_url", parse(r#"{"url": "https://example.com"}"#)),
    );
    example(
        member(response, "result"),
        ToolResult::from_value,
        ToolResult::text("# Example Domain\n\nThis domain is for documentation..."),
    );
    // The input fits the tool's declared schema.
    assert_eq!(
        schema::validate(&parse(FETCH_URL_SCHEMA), &params["input"]),
        Ok(())
    );
}

#[test]
fn error_response_message() {
    let response = r#"{
  "jsonrpc": "2.0",
  "id": 1,
  "error": {
    "code": -32602,
    "message": "Missing required parameter 'url'",
    "data": {
      "toolName": "fetch_url"
    }
  }
}"#;
    let error = member(response, "error");
    let refused = schema::validate(&parse(FETCH_URL_SCHEMA), &parse("{}")).unwrap_err();
    assert_eq!(Some(refused.message()), error["message"].as_str());
}

#[test]
fn progress() {
    let lines = [
        (
            r#"{"jsonrpc":"2.0","method":"progress","params":{"message":"Downloading... 50%"}}"#,
            "Downloading... 50%",
        ),
        (
            r#"{"jsonrpc":"2.0","method":"progress","params":{"message":"Parsing HTML..."}}"#,
            "Parsing HTML...",
        ),
        (
            r#"{"jsonrpc":"2.0","method":"progress","params":{"message":"Done"}}"#,
            "Done",
        ),
    ];
    for (line, message) in lines {
        example(
            member(line, "params"),
            Progress::from_value,
            Progress::new(message),
        );
    }
}

#[test]
fn content_types() {
    let examples = [
        (
            r#"{ "type": "text", "text": "Plain text content" }"#,
            Content::text("Plain text content"),
        ),
        (
            r#"{
  "type": "image",
  "mimeType": "image/png",
  "data": "base64-encoded-data..."
}"#,
            Content::ImageData {
                mime_type: "image/png".into(),
                data: "base64-encoded-data...".into(),
            },
        ),
        (
            r#"{
  "type": "image",
  "path": "/tmp/screenshot.png"
}"#,
            Content::ImagePath {
                path: "/tmp/screenshot.png".into(),
                mime_type: None,
            },
        ),
        (
            r#"{
  "type": "file",
  "path": "/tmp/output.csv",
  "size": 12345,
  "mimeType": "text/csv"
}"#,
            Content::File {
                path: "/tmp/output.csv".into(),
                size: Some(12345),
                mime_type: Some("text/csv".into()),
            },
        ),
    ];
    for (text, expected) in examples {
        example(parse(text), Content::from_value, expected);
    }
}
