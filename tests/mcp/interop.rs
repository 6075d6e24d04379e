//! The MCP bridges as processes, against peers nobody here wrote: the official MCP
//! TypeScript SDK's `Client` and `McpServer`, and the published
//! `@modelcontextprotocol/server-filesystem`, all from `tests/mcp-interop/` (installed
//! by `npm ci --prefix tests/mcp-interop`). The tests that need Node skip, with a
//! message, where `node` or those packages are absent, and fail instead when the
//! environment variable `CI` is set.
//!
//! The chain of the two bridges to the example extension needs nothing but the
//! binary, and always runs.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use dhara_protocol::driver::{Error, ExtensionProcess, Options, Stderr};
use dhara_protocol::host::{CallError, Config, Event};
use dhara_protocol::json::{Object, Value, json};
use dhara_protocol::message::Content;
use dhara_protocol::rpc::ErrorCode;

const DHARA: &str = env!("CARGO_BIN_EXE_dhara");

fn interop_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp-interop")
}

/// Whether Node and the installed packages are there; a skip says why, and in CI
/// their absence is a failure.
fn have_node_packages() -> bool {
    let node = Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let packages = interop_dir()
        .join("node_modules/@modelcontextprotocol/sdk/package.json")
        .is_file()
        && interop_dir()
            .join("node_modules/@modelcontextprotocol/server-filesystem/package.json")
            .is_file();
    let missing = match (node, packages) {
        (true, true) => return true,
        (false, _) => "node is not installed",
        (true, false) => {
            "tests/mcp-interop/node_modules is missing (run `npm ci --prefix tests/mcp-interop`)"
        }
    };
    assert!(
        std::env::var_os("CI").is_none(),
        "CI is set, and {missing}: the MCP interop tests must run"
    );
    eprintln!("skipped: {missing}, so the MCP interop tests cannot run");
    false
}

fn run(program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .current_dir(interop_dir())
        .stdin(Stdio::null())
        .output()
        .expect("the command starts")
}

fn text(output: &[u8]) -> String {
    String::from_utf8_lossy(output).into_owned()
}

/// `node sdk-client.mjs MODE -- COMMAND...`, which prints `ok: N checks` last.
fn sdk_client(mode: &str, command: &[&str], checks: usize) {
    let mut args = vec!["sdk-client.mjs", mode, "--"];
    args.extend_from_slice(command);
    let output = run("node", &args);
    let stdout = text(&output.stdout);
    assert!(
        output.status.success(),
        "the SDK client failed:\n{stdout}\n{}",
        text(&output.stderr)
    );
    assert_eq!(
        stdout.lines().last(),
        Some(format!("ok: {checks} checks").as_str()),
        "{stdout}"
    );
}

#[test]
fn the_two_bridges_chain_to_the_example_extension() {
    let chain = [
        DHARA,
        "mcp",
        "adapt",
        "--",
        DHARA,
        "mcp",
        "serve",
        "--",
        DHARA,
        "example-extension",
    ];
    let mut args = vec!["tools", "--"];
    args.extend_from_slice(&chain);
    let tools = run(DHARA, &args);
    assert!(tools.status.success(), "{}", text(&tools.stderr));
    assert!(text(&tools.stdout).starts_with("dhara-example 0.1.0: 7 tools"));

    let mut args = vec!["call", "sleep", r#"{"ms":250}"#, "--"];
    args.extend_from_slice(&chain);
    let call = run(DHARA, &args);
    assert!(call.status.success(), "{}", text(&call.stderr));
    assert_eq!(text(&call.stdout).trim(), "Slept 250 ms.");
    assert!(text(&call.stderr).contains("progress: slept 100 of 250 ms"));

    let mut args = vec!["call", "fail", "--"];
    args.extend_from_slice(&chain);
    assert_eq!(run(DHARA, &args).status.code(), Some(1), "isError: exit 1");

    // The example's `hang` tool never answers, on purpose: only `echo` is called.
    let mut args = vec!["check", "--call", "echo", r#"{"text":"hi"}"#, "--"];
    args.extend_from_slice(&chain);
    let check = run(DHARA, &args);
    let report = text(&check.stdout);
    assert!(check.status.success(), "{report}");
    assert!(!report.contains("FAIL"), "{report}");
}

#[test]
fn the_sdk_client_lists_and_calls_through_mcp_serve() {
    if !have_node_packages() {
        return;
    }
    sdk_client(
        "example",
        &[DHARA, "mcp", "serve", "--", DHARA, "example-extension"],
        9,
    );
}

#[test]
fn the_sdk_client_reaches_the_sdk_server_through_both_bridges() {
    if !have_node_packages() {
        return;
    }
    let chain = [
        DHARA,
        "mcp",
        "serve",
        "--",
        DHARA,
        "mcp",
        "adapt",
        "--",
        "node",
        "sdk-server.mjs",
    ];
    sdk_client("chain", &chain, 10);
}

#[test]
fn the_sdk_server_is_a_dhara_extension_through_mcp_adapt() {
    if !have_node_packages() {
        return;
    }
    let mut command = Command::new(DHARA);
    command
        .args(["mcp", "adapt", "--", "node", "sdk-server.mjs"])
        .current_dir(interop_dir());
    let mut options = Options::default();
    // The Core sends input as it is, so the adapter's own check answers it.
    options.config = Config::default().validate_input(false);
    options.stderr = Stderr::Captured { limit: 64 * 1024 };
    let mut extension = ExtensionProcess::spawn(command, options).expect("spawns");
    let info = extension.initialize("/").expect("initialized");
    assert_eq!(
        (info.name.as_str(), info.version.as_str()),
        ("sdk-test-server", "4.5.6")
    );
    assert_eq!(info.tools.len(), 7);
    let greet = info
        .tools
        .iter()
        .find(|t| t.name == "greet")
        .expect("greet");
    assert_eq!(
        greet.input_schema.as_ref().map(|s| &s["required"]),
        Some(&json!(["name"]))
    );

    let mut progress = Vec::new();
    let counted = extension
        .call("count", json!({"n": 3}), |p| {
            progress.push(p.message.clone())
        })
        .expect("a result");
    assert_eq!(counted.content, vec![Content::text("3")]);
    assert_eq!(progress, ["counted 1", "counted 2", "counted 3"]);

    let media = extension
        .call("media", json!({}), |_| {})
        .expect("a result");
    let Value::Object(audio) =
        json!({"type": "audio", "data": "UklGRiQAAABXQVZF", "mimeType": "audio/wav"})
    else {
        panic!("an object");
    };
    assert_eq!(
        media.content,
        vec![
            Content::text("media follows"),
            Content::ImageData {
                mime_type: "image/png".into(),
                data: "iVBORw0KGgo=".into()
            },
            Content::Unknown(audio),
            Content::File {
                path: "/tmp/report.csv".into(),
                size: None,
                mime_type: Some("text/csv".into())
            },
            Content::text("an embedded note"),
        ]
    );
    assert!(
        extension
            .call("refuse", json!({}), |_| {})
            .expect("a result")
            .is_error
    );

    // Input the schema refuses: -32602 from the Dhara side, as for any extension.
    let refused = extension.call("greet", Value::Object(Object::new()), |_| {});
    let Err(Error::Call(CallError::Rpc(error))) = refused else {
        panic!("a JSON-RPC error: {refused:?}");
    };
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(error.message, "Missing required parameter 'name'");

    extension.call("grow", json!({}), |_| {}).expect("a result");
    let mut changed = None;
    for _ in 0..100 {
        if let Some(Event::ToolsChanged { tools }) =
            extension.next_event_timeout(Duration::from_millis(50))
        {
            changed = Some(tools);
            break;
        }
    }
    let tools = changed.expect("a tools/list notification");
    assert!(tools.iter().any(|t| t.name == "extra"));
    assert_eq!(
        extension
            .call("extra", json!({}), |_| {})
            .expect("a result")
            .content,
        vec![Content::text("extra here")]
    );

    assert_eq!(extension.shutdown().expect("shut down"), Some(0));
    assert!(
        extension
            .captured_stderr()
            .contains("[mcp info count] counted to 3")
    );
}

#[test]
fn server_filesystem_through_tools_call_and_check() {
    if !have_node_packages() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("dhara-mcp-fs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory");
    let dir = std::fs::canonicalize(&dir).expect("canonical");
    std::fs::write(dir.join("note.txt"), "hello from the filesystem\n").expect("written");
    let dir_text = dir.display().to_string();
    let server = "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js";
    let adapt = [
        DHARA,
        "mcp",
        "adapt",
        "--",
        "node",
        server,
        dir_text.as_str(),
    ];

    let mut args = vec!["tools", "--"];
    args.extend_from_slice(&adapt);
    let tools = run(DHARA, &args);
    let listing = text(&tools.stdout);
    assert!(tools.status.success(), "{listing}{}", text(&tools.stderr));
    assert!(listing.starts_with("secure-filesystem-server"), "{listing}");
    assert!(listing.contains("\n  read_text_file\n"), "{listing}");

    let note = dir.join("note.txt").display().to_string();
    let input = format!(r#"{{"path":{}}}"#, Value::from(note.as_str()));
    let mut args = vec!["call", "read_text_file", input.as_str(), "--"];
    args.extend_from_slice(&adapt);
    let call = run(DHARA, &args);
    assert!(call.status.success(), "{}", text(&call.stderr));
    assert_eq!(text(&call.stdout).trim(), "hello from the filesystem");

    // Outside the allowed directory: the server's own tool error, isError, exit 1.
    let mut args = vec![
        "call",
        "read_text_file",
        r#"{"path":"/etc/hostname"}"#,
        "--",
    ];
    args.extend_from_slice(&adapt);
    let denied = run(DHARA, &args);
    assert_eq!(denied.status.code(), Some(1), "{}", text(&denied.stdout));
    assert!(text(&denied.stdout).contains("Access denied"));

    // `dhara check`: the rows the bridge answers for (its handshake, the lines it
    // writes, its exit) pass; the rest is the server's.
    let mut args = vec!["check", "--"];
    args.extend_from_slice(&adapt);
    let check = run(DHARA, &args);
    let report = text(&check.stdout);
    assert!(
        report
            .lines()
            .any(|l| l.trim_start().starts_with("PASS") && l.contains("initialize")),
        "{report}"
    );
    for line in report
        .lines()
        .filter(|l| l.trim_start().starts_with("FAIL"))
    {
        for bridge_row in [
            "initialize",
            "stdout",
            "exit",
            "malformed",
            "invalid request",
        ] {
            assert!(
                !line.contains(bridge_row),
                "a FAIL of the bridge: {line}\n{report}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn dhara_mcp_usage_errors() {
    for (args, code, says) in [
        (&["mcp"][..], 2, "dhara mcp adapt"),
        (&["mcp", "frob"][..], 2, "the commands are adapt and serve"),
        (&["mcp", "adapt"][..], 2, "missing the command"),
        (
            &["mcp", "serve", "--json", "--", "x"][..],
            2,
            "unknown option --json",
        ),
        (
            &["mcp", "serve", "extra", "--", "x"][..],
            2,
            "takes no argument",
        ),
        (
            &["mcp", "adapt", "--", "/nonexistent/dhara-mcp-server"][..],
            5,
            "command not found",
        ),
    ] {
        let out = run(DHARA, args);
        assert_eq!(out.status.code(), Some(code), "{args:?}");
        assert!(
            text(&out.stderr).contains(says),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    let help = run(DHARA, &["mcp", "--help"]);
    assert!(help.status.success());
    assert!(text(&help.stdout).contains("dhara mcp serve"));
    assert!(text(&run(DHARA, &["--help"]).stdout).contains("mcp adapt"));
}
