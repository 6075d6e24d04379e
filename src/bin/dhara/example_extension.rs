//! `dhara example-extension`: a reference extension on the Extension endpoint and the
//! std driver, with one tool for each thing the protocol can show.

use std::path::Path;
use std::thread;
use std::time::Duration;

use dhara_protocol::driver::{RunningCall, StdioExtension};
use dhara_protocol::json::{Object, Value};
use dhara_protocol::message::{Content, Tool, ToolResult};
use dhara_protocol::rpc::ErrorObject;

use crate::png;

/// The name the extension reports in `initialize`.
pub(crate) const NAME: &str = "dhara-example";
/// The longest `sleep` accepted, in milliseconds.
const MAX_SLEEP_MS: u64 = 10 * 60 * 1000;
/// How often `sleep` reports progress.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);
/// The largest file `read_file` returns as text; larger or binary files are described.
const MAX_TEXT_BYTES: u64 = 1024 * 1024;

/// Serves the example extension on stdin/stdout; returns the exit code.
pub(crate) fn run() -> i32 {
    StdioExtension::new(NAME, env!("CARGO_PKG_VERSION"))
        .tool(
            tool("echo", "Return the text it is given", &[("text", "string")]),
            |input, _| Ok(ToolResult::text(string(&input, "text"))),
        )
        .tool(
            tool(
                "add",
                "Add two numbers",
                &[("a", "number"), ("b", "number")],
            ),
            |input, _| Ok(add(&input["a"], &input["b"])),
        )
        .tool(
            tool(
                "sleep",
                "Wait `ms` milliseconds, reporting progress every 100 ms",
                &[("ms", "integer")],
            ),
            |input, call| Ok(sleep(input["ms"].as_u64(), call)),
        )
        .tool(
            tool(
                "read_file",
                "Read a file: text as text, anything else described as a file",
                &[("path", "string")],
            ),
            |input, _| Ok(read_file(Path::new(&string(&input, "path")))),
        )
        .tool(
            tool("image", "Return a small generated PNG image", &[]),
            |_, _| Ok(image()),
        )
        .tool(
            tool("fail", "Always fail with a tool error (isError: true)", &[]),
            |_, _| {
                Ok(ToolResult::error_text(
                    "This tool always fails: a tool-level error the model sees.",
                ))
            },
        )
        .tool(
            tool(
                "hang",
                "Never answer, and ignore shutdown (to show the kill)",
                &[],
            ),
            |_, _| hang(),
        )
        .serve()
}

/// A tool whose input is an object with these required members and JSON types.
fn tool(name: &str, description: &str, members: &[(&str, &str)]) -> Tool {
    let properties: Object = members
        .iter()
        .map(|&(member, kind)| {
            (
                member,
                Value::Object(Object::from_iter([("type", Value::from(kind))])),
            )
        })
        .collect();
    let required: Vec<Value> = members
        .iter()
        .map(|&(member, _)| Value::from(member))
        .collect();
    let mut schema = Object::from_iter([
        ("type", Value::from("object")),
        ("properties", Value::Object(properties)),
    ]);
    if !required.is_empty() {
        schema.push("required", Value::Array(required));
    }
    Tool::new(name, description, Value::Object(schema))
}

/// The string member `name` of the input (checked against the schema already).
fn string(input: &Value, name: &str) -> String {
    input[name].as_str().unwrap_or_default().to_string()
}

/// `a + b`: exact for integers that fit 64 bits, floating point otherwise.
fn add(a: &Value, b: &Value) -> ToolResult {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        if let Some(sum) = x.checked_add(y) {
            return ToolResult::text(sum.to_string());
        }
    }
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) if (x + y).is_finite() => ToolResult::text((x + y).to_string()),
        _ => ToolResult::error_text("The sum is not a finite number."),
    }
}

/// Waits `ms` milliseconds, reporting progress every 100 ms.
fn sleep(ms: Option<u64>, call: &RunningCall) -> ToolResult {
    let Some(ms) = ms.filter(|&ms| ms <= MAX_SLEEP_MS) else {
        return ToolResult::error_text(format!(
            "`ms` must be a whole number of milliseconds from 0 to {MAX_SLEEP_MS}."
        ));
    };
    let total = Duration::from_millis(ms);
    let mut slept = Duration::ZERO;
    while slept < total {
        let step = PROGRESS_EVERY.min(total - slept);
        thread::sleep(step);
        slept += step;
        call.progress(&format!("slept {} of {ms} ms", slept.as_millis()));
    }
    ToolResult::text(format!("Slept {ms} ms."))
}

/// The file as text when it is UTF-8 and at most 1 MiB; otherwise a `file` item.
fn read_file(path: &Path) -> ToolResult {
    let failed =
        |e: std::io::Error| ToolResult::error_text(format!("Cannot read {}: {e}", path.display()));
    let size = match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => meta.len(),
        Ok(_) => return ToolResult::error_text(format!("{} is not a file.", path.display())),
        Err(e) => return failed(e),
    };
    if size <= MAX_TEXT_BYTES {
        match std::fs::read(path) {
            Ok(bytes) => {
                if let Ok(text) = String::from_utf8(bytes) {
                    return ToolResult::text(text);
                }
            }
            Err(e) => return failed(e),
        }
    }
    let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    ToolResult {
        content: vec![Content::File {
            path: absolute.display().to_string(),
            size: Some(size),
            mime_type: Some(mime_type(path).to_string()),
        }],
        is_error: false,
    }
}

/// A MIME type guessed from the file name's extension.
fn mime_type(path: &Path) -> &'static str {
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default();
    match extension.to_ascii_lowercase().as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "gz" => "application/gzip",
        "csv" => "text/csv",
        "json" => "application/json",
        "txt" | "md" => "text/plain",
        _ => "application/octet-stream",
    }
}

/// The side of the generated image, in pixels.
const IMAGE_SIDE: u32 = 32;

/// A 32×32 PNG: a colour gradient with a ring, as base64 image content.
fn image() -> ToolResult {
    let side = IMAGE_SIDE as usize;
    let mut pixels = Vec::with_capacity(side * side * 3);
    for y in 0..side {
        for x in 0..side {
            let (dx, dy) = (x as i64 * 2 - 31, y as i64 * 2 - 31);
            let r2 = dx * dx + dy * dy;
            let on_ring = (400..=676).contains(&r2);
            let shade = |v: usize| (v * 255 / (side - 1)) as u8;
            if on_ring {
                pixels.extend_from_slice(&[255, 255, 255]);
            } else {
                pixels.extend_from_slice(&[shade(x), shade(y), 160]);
            }
        }
    }
    match png::encode_rgb(IMAGE_SIDE, IMAGE_SIDE, &pixels) {
        Some(bytes) => ToolResult {
            content: vec![
                Content::ImageData {
                    mime_type: String::from("image/png"),
                    data: png::base64(&bytes),
                },
                Content::text(format!(
                    "A {IMAGE_SIDE}x{IMAGE_SIDE} PNG, {} bytes.",
                    bytes.len()
                )),
            ],
            is_error: false,
        },
        None => ToolResult::error_text("Could not encode the image."),
    }
}

/// Never returns: the call stays pending, so the extension does not exit on
/// `shutdown` and the host has to kill it after the grace period.
fn hang() -> Result<ToolResult, ErrorObject> {
    loop {
        thread::park();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(text: &str) -> Value {
        Value::Number(dhara_protocol::json::Number::from_text(text).unwrap())
    }

    fn text_of(result: &ToolResult) -> &str {
        match result.content.first() {
            Some(Content::Text { text }) => text,
            other => panic!("not text: {other:?}"),
        }
    }

    #[test]
    fn add_is_exact_for_integers_and_falls_back_to_floats() {
        assert_eq!(text_of(&add(&n("2"), &n("3"))), "5");
        assert_eq!(
            text_of(&add(&n("9007199254740993"), &n("1"))),
            "9007199254740994"
        );
        assert_eq!(text_of(&add(&n("1.5"), &n("2"))), "3.5");
        assert!(add(&n("1e308"), &n("1e308")).is_error);
    }

    #[test]
    fn schemas_list_required_members() {
        let echo = tool("echo", "Echo", &[("text", "string")]);
        let schema = echo.input_schema.unwrap();
        assert_eq!(schema["type"], Value::from("object"));
        assert_eq!(schema["properties"]["text"]["type"], Value::from("string"));
        assert_eq!(schema["required"][0], Value::from("text"));
        let image = tool("image", "Image", &[]);
        assert!(image.input_schema.unwrap().get("required").is_none());
    }

    #[test]
    fn read_file_gives_text_or_a_file_item() {
        let dir = std::env::temp_dir().join(format!("dhara-read-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let text = dir.join("note.txt");
        std::fs::write(&text, "hello\n").unwrap();
        assert_eq!(text_of(&read_file(&text)), "hello\n");
        let binary = dir.join("blob.png");
        std::fs::write(&binary, [0x89, 0xff, 0x00, 0x01]).unwrap();
        match &read_file(&binary).content[..] {
            [
                Content::File {
                    size, mime_type, ..
                },
            ] => {
                assert_eq!(*size, Some(4));
                assert_eq!(mime_type.as_deref(), Some("image/png"));
            }
            other => panic!("expected a file item, got {other:?}"),
        }
        assert!(read_file(&dir.join("missing")).is_error);
        assert!(read_file(&dir).is_error);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn image_is_a_png() {
        let result = image();
        match &result.content[0] {
            Content::ImageData { mime_type, data } => {
                assert_eq!(mime_type, "image/png");
                assert!(
                    data.starts_with("iVBORw0KGgo"),
                    "base64 of the PNG signature"
                );
            }
            other => panic!("expected image data, got {other:?}"),
        }
    }
}
