//! Interop with another language: a Python extension served through `dhara call`,
//! `dhara tools` and `dhara session`, a Python Core driving `dhara example-extension`,
//! and Python's zlib checking the example extension's PNG. Skipped, with a message,
//! where `python3` is missing.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use dhara_protocol::json::{self, Value};

const DHARA: &str = env!("CARGO_BIN_EXE_dhara");

fn script(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/interop")
        .join(name);
    path.display().to_string()
}

fn have_python() -> bool {
    let found = Command::new("python3")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        eprintln!("skipped: python3 is not installed, so the interop tests cannot run");
    }
    found
}

fn run(program: &str, args: &[&str], stdin: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the program starts");
    let mut input = child.stdin.take().expect("piped stdin");
    input.write_all(stdin.as_bytes()).expect("stdin written");
    drop(input);
    child.wait_with_output().expect("the program finishes")
}

/// `dhara ARGS -- python3 tests/interop/ext.py`
fn with_python_extension(args: &[&str], stdin: &str) -> Output {
    let ext = script("ext.py");
    let mut all = args.to_vec();
    all.extend(["--", "python3", &ext]);
    run(DHARA, &all, stdin)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn python_extension_serves_dhara_call() {
    if !have_python() {
        return;
    }
    let out = with_python_extension(&["call", "greet", r#"{"name": "Ada"}"#], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Hello, Ada!\n");

    let out = with_python_extension(&["call", "count", r#"{"to": 3}"#, "--json"], "");
    assert_eq!(out.status.code(), Some(0));
    let result = json::parse(text(&out.stdout).trim_end().as_bytes()).expect("one JSON line");
    assert_eq!(result["content"][0]["text"], Value::from("counted to 3"));
    let err = text(&out.stderr);
    assert!(
        err.contains("progress: step 1 of 3") && err.contains("progress: step 3 of 3"),
        "{err}"
    );

    let out = with_python_extension(&["call", "shout", r#"{"text": ""}"#], "");
    assert_eq!(out.status.code(), Some(1));
    let out = with_python_extension(&["call", "greet", "{}", "--json"], "");
    assert_eq!(out.status.code(), Some(3));
    assert!(text(&out.stdout).contains("Missing required parameter 'name'"));
    let out = with_python_extension(&["call", "nope"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("known tools: greet, reverse, count, shout"));
}

#[test]
fn python_extension_serves_dhara_tools_and_session() {
    if !have_python() {
        return;
    }
    let out = with_python_extension(&["tools", "--json"], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let info = json::parse(text(&out.stdout).trim_end().as_bytes()).expect("one JSON line");
    assert_eq!(info["name"], Value::from("python-interop"));
    let names: Vec<&str> = info["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["greet", "reverse", "count", "shout"]);

    let input = concat!(
        r#"{"tool": "reverse", "input": {"text": "abc"}}"#,
        "\n",
        r#"{"tool": "greet", "input": {"name": "Grace"}}"#,
        "\n",
    );
    let out = with_python_extension(&["session"], input);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains(r#"{"line":1,"tool":"reverse","result":{"content":[{"type":"text","text":"cba"}],"isError":false}}"#), "{stdout}");
    assert!(stdout.contains(r#""text":"Hello, Grace!""#), "{stdout}");
}

#[test]
fn python_core_drives_the_example_extension() {
    if !have_python() {
        return;
    }
    let core = script("core.py");
    let out = run("python3", &[&core, DHARA, "example-extension"], "");
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("initialized dhara-example"), "{stdout}");
    assert!(stdout.contains("echo: hello from Python"), "{stdout}");
    assert!(
        stdout.contains("progress notifications, then 'Slept 300 ms.'"),
        "{stdout}"
    );
    assert!(stdout.contains("shutdown: exit code 0"), "{stdout}");
}

#[test]
fn python_reads_the_example_png() {
    if !have_python() {
        return;
    }
    let out = run(
        DHARA,
        &["call", "image", "--json", "--", DHARA, "example-extension"],
        "",
    );
    assert_eq!(out.status.code(), Some(0));
    let result = json::parse(text(&out.stdout).trim_end().as_bytes()).expect("one JSON line");
    let data = result["content"][0]["data"]
        .as_str()
        .expect("base64 data")
        .to_string();
    // Decode with Python's base64 and zlib, check every chunk's CRC and the pixels' size.
    let check = r#"
import base64, struct, sys, zlib
png = base64.b64decode(sys.stdin.read(), validate=True)
assert png[:8] == b"\x89PNG\r\n\x1a\n", "signature"
at, chunks = 8, {}
while at < len(png):
    (length,) = struct.unpack(">I", png[at:at + 4])
    kind, body = png[at + 4:at + 8], png[at + 8:at + 8 + length]
    (crc,) = struct.unpack(">I", png[at + 8 + length:at + 12 + length])
    assert zlib.crc32(kind + body) == crc, "crc of " + kind.decode()
    chunks[kind] = body
    at += 12 + length
width, height, depth, colour = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
pixels = zlib.decompress(chunks[b"IDAT"])
assert len(pixels) == height * (1 + width * 3), "pixel bytes"
print(width, height, depth, colour)
"#;
    let out = run("python3", &["-c", check], &data);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "32 32 8 2\n");
}
