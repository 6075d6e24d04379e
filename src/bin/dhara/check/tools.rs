//! The tools: what the extension declares (read as the Core reads it, one descriptor
//! at a time), and what a real call to each of them gives back.

use std::time::{Duration, Instant};

use dhara_protocol::json::{self, ParseOptions, RawValue, Value};
use dhara_protocol::message::{
    Content, ExecuteParams, FieldError, InitializeResult, Progress, Tool, ToolList, ToolResult,
    method,
};
use dhara_protocol::rpc::Id;
use dhara_protocol::schema::unchecked_keywords;

use super::checks::{describe_error, not_answered};
use super::harness::{Process, Reply, id_text, shown};
use super::{Row, Status};

/// The most tools called.
pub(super) const MAX_CALLED_TOOLS: usize = 16;
/// How long a call that got no reply is given to answer once its stdin is closed.
const AT_EXIT_WAIT: Duration = Duration::from_secs(1);
/// The longest tool name LLM APIs accept.
const MAX_NAME_LEN: usize = 64;

/// The `initialize` result, read as the Core reads it.
pub(super) struct Declared {
    /// The extension's name and version.
    pub name: String,
    /// Its version.
    pub version: String,
    /// The tools the Core can read, in declaration order.
    pub tools: Vec<Tool>,
    /// Why each descriptor the Core cannot read is left out.
    pub unreadable: Vec<String>,
}

/// Reads an `initialize` result as the Core reads it
/// ([`InitializeResult::from_raw_keeping_good_tools`]): `name`, `version` and
/// `tools` must be there, and a tool descriptor that does not fit is left out, with
/// why.
pub(super) fn read_initialize(result: &Value) -> Result<Declared, String> {
    let (result, rejected) = with_raw(result, InitializeResult::from_raw_keeping_good_tools)?;
    Ok(Declared {
        name: result.name,
        version: result.version,
        tools: result.tools,
        unreadable: rejected.iter().map(ToString::to_string).collect(),
    })
}

/// Reads a `tools/list` result as the Core reads it: the tools, and why each
/// descriptor left out does not fit.
pub(super) fn read_tool_list(result: &Value) -> Result<(Vec<Tool>, Vec<String>), String> {
    let (list, rejected) = with_raw(result, ToolList::from_raw_keeping_good_tools)?;
    let rejected = rejected.iter().map(ToString::to_string).collect();
    Ok((list.tools, rejected))
}

/// Reads `value` from its JSON text, as the Core reads what it receives.
fn with_raw<T>(
    value: &Value,
    read: impl FnOnce(RawValue<'_>) -> Result<T, FieldError>,
) -> Result<T, String> {
    let text = String::from_utf8_lossy(&json::to_vec(value)).into_owned();
    let raw = RawValue::from_text(&text, &ParseOptions::DEFAULT).map_err(|e| e.to_string())?;
    read(raw).map_err(|e| format!("the Core cannot read the result: {e}"))
}

/// The four rows about the declarations: `tool descriptors` (FAIL: a tool the Core
/// cannot call), `tool names`, `tool descriptions` and `input schemas` (WARN: what
/// LLM APIs and models need, which the Core does not).
pub(super) fn declaration_rows(declared: &Declared) -> Vec<Row> {
    let tools = &declared.tools;
    let mut problems = Vec::new();
    if !declared.unreadable.is_empty() {
        problems.push(format!(
            "{}: the Core leaves these tools out",
            declared.unreadable.join("; ")
        ));
    }
    for (i, tool) in tools.iter().enumerate() {
        if tools.iter().take(i).any(|t| t.name == tool.name) {
            problems.push(format!(
                "the name {:?} is used twice: the Core calls only the first",
                tool.name
            ));
        }
    }
    let descriptors = if !problems.is_empty() {
        Row::new("tool descriptors", Status::Fail, problems.join("; "))
    } else if tools.is_empty() {
        Row::new(
            "tool descriptors",
            Status::Warn,
            "the extension offers no tools",
        )
    } else {
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        Row::new("tool descriptors", Status::Pass, names.join(", "))
    };

    let bad_names: Vec<String> = tools
        .iter()
        .filter(|t| !is_portable_name(&t.name))
        .map(|t| format!("{:?}", t.name))
        .collect();
    let names = if bad_names.is_empty() {
        Row::new(
            "tool names",
            Status::Pass,
            "all match ^[a-zA-Z0-9_-]{1,64}$",
        )
    } else {
        let detail = format!(
            "{} not matching ^[a-zA-Z0-9_-]{{1,64}}$: LLM APIs refuse such names",
            bad_names.join(", ")
        );
        Row::new("tool names", Status::Warn, detail)
    };

    let undescribed: Vec<String> = tools
        .iter()
        .filter(|t| t.description.as_deref().is_none_or(|d| d.trim().is_empty()))
        .map(|t| format!("{:?}", t.name))
        .collect();
    let descriptions = if undescribed.is_empty() {
        Row::new("tool descriptions", Status::Pass, "every tool has one")
    } else {
        let detail = format!(
            "none for {}: the model chooses tools by their description",
            undescribed.join(", ")
        );
        Row::new("tool descriptions", Status::Warn, detail)
    };

    vec![descriptors, names, descriptions, schema_row(tools)]
}

/// Each `inputSchema` an object schema (`"type": "object"`), and the keywords the
/// Core's validator does not check.
fn schema_row(tools: &[Tool]) -> Row {
    let mut problems = Vec::new();
    let mut unchecked: Vec<String> = Vec::new();
    for tool in tools {
        let name = &tool.name;
        match &tool.input_schema {
            None => problems.push(format!("{name:?} has no inputSchema")),
            Some(Value::Bool(b)) => problems.push(format!("{name:?} has the inputSchema {b}")),
            Some(schema) => {
                match schema.get("type") {
                    Some(Value::String(t)) if t.as_str() == "object" => {}
                    Some(other) => problems.push(format!(
                        "{name:?} has an inputSchema of type {}",
                        shown(&json::to_vec(other))
                    )),
                    None => problems.push(format!("{name:?} has an inputSchema without a type")),
                }
                for keyword in unchecked_keywords(schema) {
                    unchecked.push(format!("{keyword} ({name})"));
                }
            }
        }
    }
    let unchecked = if unchecked.is_empty() {
        String::new()
    } else {
        format!(
            "; not checked by the Core's validator: {}",
            unchecked.join(", ")
        )
    };
    if problems.is_empty() {
        let detail = format!("every tool has an object schema{unchecked}");
        Row::new("input schemas", Status::Pass, detail)
    } else {
        let detail = format!(
            "{}: LLM APIs want {{\"type\": \"object\", ...}}{unchecked}",
            problems.join("; ")
        );
        Row::new("input schemas", Status::Warn, detail)
    }
}

/// Whether LLM APIs accept `name` as a tool name: `^[a-zA-Z0-9_-]{1,64}$`.
pub(super) fn is_portable_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// How a call ended, for what the checks do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CallEnd {
    /// A reply with exactly the id sent came (a result or an error).
    Answered,
    /// A reply came with another id, or a line that is not a valid reply.
    Misanswered,
    /// Nothing came within the wait.
    TimedOut,
    /// The extension exited (or closed its stdout) before it answered.
    Exited,
}

/// Calls `tool` with `input` on `ext` and judges the reply: the row, and how the
/// call ended.
pub(super) fn call_row(
    ext: &mut Process,
    tool: &str,
    input: &Value,
    wait: Duration,
) -> (Row, CallEnd) {
    let check = format!("call {tool}");
    let id = ext.new_id();
    let params = Value::from(ExecuteParams::new(tool, input.clone()));
    let _ = ext.take_progress();
    let started = Instant::now();
    if let Err(e) = ext.send_request(id.clone(), method::TOOLS_EXECUTE, Some(&params)) {
        return (Row::new(check, Status::Fail, e), CallEnd::Exited);
    }
    let input_text = shown(&json::to_vec(input));
    let reply = ext.next_reply(wait);
    let ms = started.elapsed().as_millis();
    let (status, detail, end) = match reply {
        Reply::Response(response) if response.id == id => {
            let (status, detail) = match response.outcome {
                Ok(result) => judge_result(&result),
                Err(error) => (
                    Status::Pass,
                    format!(
                        "answered error {} (well formed; the input may not suit the tool: give one with --call)",
                        describe_error(&error)
                    ),
                ),
            };
            (status, detail, CallEnd::Answered)
        }
        Reply::Response(response) => (
            Status::Fail,
            format!(
                "sent id {}, the reply has id {}: the Core matches replies by id, so this call would time out",
                id_text(&id),
                id_text(&response.id)
            ),
            CallEnd::Misanswered,
        ),
        Reply::TimedOut => (Status::Fail, timed_out(ext, &id, wait), CallEnd::TimedOut),
        Reply::Closed => (
            Status::Fail,
            format!(
                "{} while running the tool",
                not_answered(&Reply::Closed, ext, wait)
            ),
            CallEnd::Exited,
        ),
        other => (
            Status::Fail,
            not_answered(&other, ext, wait),
            CallEnd::Misanswered,
        ),
    };
    let (progress, dropped) = ext.take_progress();
    let progress_problems = judge_progress(&progress, &id);
    let mut row = Row::new(
        check,
        status,
        format!("{detail} (input {input_text}, {ms} ms)"),
    );
    if !progress.is_empty() && progress_problems.is_empty() {
        row.detail += &format!("; {} progress notification(s)", progress.len() + dropped);
    }
    if !progress_problems.is_empty() {
        row.detail += &format!("; {}", progress_problems.join("; "));
        if row.status == Status::Pass {
            row.status = Status::Warn;
        }
    }
    (row, end)
}

/// Why a call got no reply. The process is done with (it may still be busy with the
/// call), so its stdin is closed first: a reply that comes only then was held in a
/// buffer that only the exit flushed.
fn timed_out(ext: &mut Process, id: &Id, wait: Duration) -> String {
    let why = not_answered(&Reply::TimedOut, ext, wait);
    if ext.pending_bytes() > 0 {
        return why;
    }
    ext.close_stdin();
    match ext.next_reply(AT_EXIT_WAIT) {
        Reply::Response(response) if response.id == *id => {
            format!("{why}; the reply came only at the end of stdin (stdout not flushed?)")
        }
        _ if ext.pending_bytes() > 0 => format!(
            "{why}; at the end of stdin {} byte(s) came without a newline (missing newline or flush?)",
            ext.pending_bytes()
        ),
        _ => why,
    }
}

/// A `tools/execute` result as the Core reads it: FAIL when it cannot read it, WARN
/// for what it reads with a default or keeps without understanding.
fn judge_result(result: &Value) -> (Status, String) {
    let read = match ToolResult::from_value(result) {
        Ok(read) => read,
        Err(e) => {
            let text = shown(&json::to_vec(result));
            return (
                Status::Fail,
                format!("the Core cannot read the result ({e}): {text}"),
            );
        }
    };
    let mut warnings = Vec::new();
    if result.get("isError").is_none_or(Value::is_null) {
        warnings.push(String::from("no isError (the Core reads false)"));
    }
    for (i, item) in read.content.iter().enumerate() {
        if let Content::Unknown(object) = item {
            let text = shown(&json::to_vec(&Value::Object(object.clone())));
            warnings.push(format!(
                "content[{i}] is not a text, image or file item the Core can read: {text}"
            ));
        }
    }
    let summary = format!(
        "{} content item(s), isError {}",
        read.content.len(),
        read.is_error
    );
    if warnings.is_empty() {
        (Status::Pass, summary)
    } else {
        (Status::Warn, format!("{summary}; {}", warnings.join("; ")))
    }
}

/// What is wrong with the `progress` notifications sent during the call with `id`.
fn judge_progress(progress: &[Value], id: &Id) -> Vec<String> {
    let mut problems = Vec::new();
    for params in progress {
        match Progress::from_value(params) {
            Err(e) => problems.push(format!(
                "a progress notification the Core cannot read ({e}): {}",
                shown(&json::to_vec(params))
            )),
            Ok(Progress {
                id: Some(named), ..
            }) if named != *id => problems.push(format!(
                "a progress notification names id {}, the call has id {}",
                id_text(&named),
                id_text(id)
            )),
            Ok(_) => {}
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use dhara_protocol::json;

    fn value(text: &str) -> Value {
        match json::parse(text.as_bytes()) {
            Ok(v) => v,
            Err(e) => panic!("bad test JSON {text}: {e}"),
        }
    }

    #[test]
    fn portable_names() {
        for good in ["echo", "fetch_url", "a-b", "A9", &"x".repeat(64)] {
            assert!(is_portable_name(good), "{good}");
        }
        for bad in ["", "read file", "fs.read", "ünï", "a/b", &"x".repeat(65)] {
            assert!(!is_portable_name(bad), "{bad}");
        }
    }

    #[test]
    fn one_bad_descriptor_leaves_only_that_tool_out() {
        let declared = read_initialize(&value(
            r#"{"name":"x","version":"1","tools":[
                {"name":"good","description":"d","inputSchema":{"type":"object"}},
                {"name":"numeric","description":5},
                {"name":"stringy","inputSchema":"object"},
                7
            ]}"#,
        ));
        let Ok(declared) = declared else {
            panic!("a result with good and bad tools is read");
        };
        assert_eq!(declared.tools.len(), 1);
        assert_eq!(declared.unreadable.len(), 3);
        assert!(
            declared.unreadable[0].starts_with("tool `numeric` (tools[1]): "),
            "{:?}",
            declared.unreadable
        );
        let rows = declaration_rows(&declared);
        assert_eq!(rows[0].status, Status::Fail);
        assert!(rows[0].detail.contains("stringy"), "{}", rows[0].detail);
        assert!(read_initialize(&value(r#"{"name":"x","tools":[]}"#)).is_err());
        assert!(read_initialize(&value(r#"{"name":"x","version":"1","tools":{}}"#)).is_err());
    }

    #[test]
    fn declarations_warn_on_what_llm_apis_need() {
        let declared = read_initialize(&value(
            r#"{"name":"x","version":"1","tools":[
                {"name":"read file","description":"d","inputSchema":{"type":"object","properties":{"p":{"type":"string","pattern":"^(?!/)"}}}},
                {"name":"plain","inputSchema":true}
            ]}"#,
        ));
        let Ok(declared) = declared else {
            panic!("readable tools are read");
        };
        let rows = declaration_rows(&declared);
        let status: Vec<Status> = rows.iter().map(|r| r.status).collect();
        assert_eq!(
            status,
            [Status::Pass, Status::Warn, Status::Warn, Status::Warn]
        );
        assert!(rows[1].detail.contains(r#""read file""#));
        assert!(rows[2].detail.contains(r#""plain""#));
        assert!(
            rows[3].detail.contains("pattern (read file)"),
            "{}",
            rows[3].detail
        );
    }

    #[test]
    fn results_are_judged_as_the_core_reads_them() {
        let ok = judge_result(&value(
            r#"{"content":[{"type":"text","text":"hi"}],"isError":false}"#,
        ));
        assert_eq!(ok.0, Status::Pass);
        let no_flag = judge_result(&value(r#"{"content":[]}"#));
        assert_eq!(no_flag.0, Status::Warn);
        let odd_item = judge_result(&value(
            r#"{"content":[{"type":"text","text":5}],"isError":true}"#,
        ));
        assert_eq!(odd_item.0, Status::Warn);
        for bad in [
            r#"{"content":"hi","isError":false}"#,
            r#"{"content":[1],"isError":false}"#,
            r#"{"content":[],"isError":"no"}"#,
            r#""hi""#,
        ] {
            assert_eq!(judge_result(&value(bad)).0, Status::Fail, "{bad}");
        }
    }

    #[test]
    fn progress_must_be_readable_and_name_its_call() {
        let id = Id::from(4u64);
        assert!(
            judge_progress(
                &[
                    value(r#"{"message":"half"}"#),
                    value(r#"{"message":"x","id":4}"#)
                ],
                &id
            )
            .is_empty()
        );
        assert_eq!(judge_progress(&[value(r#"{"text":"half"}"#)], &id).len(), 1);
        assert_eq!(
            judge_progress(&[value(r#"{"message":"x","id":5}"#)], &id).len(),
            1
        );
        assert_eq!(judge_progress(&[Value::Null], &id).len(), 1);
    }
}
