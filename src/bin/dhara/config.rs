//! The config file of named extensions, `--config FILE`, read with the crate's own
//! JSON parser:
//!
//! ```json
//! {"extensions": {
//!    "web":  {"command": ["node", "web.js"], "cwd": ".", "env": {"TOKEN": "..."},
//!             "timeout": "30s", "grace": "5s"},
//!    "files": {"command": ["python3", "files.py"],
//!              "restart": {"when": "on-next-call", "maxExits": 3}}
//! }}
//! ```
//!
//! Each extension's name follows the fleet's rule (letters, digits, `-` and `_`, no
//! `__`, no `_` at either end). Its fields: `command` (required: the program and its
//! arguments), `cwd`, `env` (strings), `timeout` and `grace` (durations as on the
//! command line: `250ms`, `2s`, `1m`), and `restart`: `when` (`"at-once"` or
//! `"on-next-call"`), `backoff`, `backoffCap`, `window` (durations) and `maxExits`
//! (an integer; 0 turns the breaker off). An unknown field, a wrong type, a repeated
//! name or a missing `command` is an error that names its JSON path, such as
//! `extensions.web.timeout`.
//!
//! How the file and the command line combine, for each extension:
//!
//! * `timeout`, `grace`: the file's field, else `--timeout` / `--grace`, else the
//!   defaults (30 s, 5 s);
//! * `cwd`: the file's field (relative to the file's directory), else `--cwd`, else
//!   the current directory;
//! * `env`: the environment `dhara` runs in, then each `--env KEY=VALUE`, then the
//!   file's `env`: where a key is set twice, the later wins, so the file does.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use dhara_protocol::fleet::{self, RestartPolicy, RestartWhen};
use dhara_protocol::host;
use dhara_protocol::json::{self, Object, Value};

use crate::args::{self, Options};

/// One extension of the file.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ExtensionSpec {
    pub name: String,
    /// The program and its arguments.
    pub command: Vec<String>,
    /// Relative to the file's directory once loaded.
    pub cwd: Option<PathBuf>,
    pub env: Vec<(String, String)>,
    pub timeout: Option<Duration>,
    pub grace: Option<Duration>,
    pub restart: RestartPolicy,
}

/// A mistake in the file, at a JSON path (empty: the file as a whole).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ConfigError {
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.path.as_str() {
            "" => f.write_str(&self.message),
            path => write!(f, "{path}: {}", self.message),
        }
    }
}

fn error(path: &str, message: impl Into<String>) -> ConfigError {
    ConfigError {
        path: path.to_string(),
        message: message.into(),
    }
}

fn wrong_type(path: &str, expected: &str, found: &Value) -> ConfigError {
    error(
        path,
        format!("expected {expected}, found {}", found.type_name()),
    )
}

/// Reads the file at `path`; a relative `cwd` in it is taken from the file's
/// directory.
pub(crate) fn load(path: &Path) -> Result<Vec<ExtensionSpec>, ConfigError> {
    let text = std::fs::read(path).map_err(|e| error("", format!("cannot read it: {e}")))?;
    let mut specs = parse(&text)?;
    let dir = path.parent().unwrap_or(Path::new(""));
    for spec in &mut specs {
        if let Some(cwd) = &spec.cwd {
            spec.cwd = Some(dir.join(cwd));
        }
    }
    Ok(specs)
}

/// Reads a config file's text.
pub(crate) fn parse(text: &[u8]) -> Result<Vec<ExtensionSpec>, ConfigError> {
    let value = json::parse(text).map_err(|e| error("", format!("not JSON: {e}")))?;
    let top = object(&value, "", "an object with an `extensions` member")?;
    let mut extensions = None;
    for (name, value) in top.iter() {
        match &**name {
            "extensions" => extensions = Some(value),
            other => return Err(unknown(other, &["extensions"])),
        }
    }
    let extensions = extensions.ok_or_else(|| error("extensions", "missing"))?;
    let members = object(extensions, "extensions", "an object of named extensions")?;
    if members.is_empty() {
        return Err(error("extensions", "no extensions"));
    }
    let mut specs: Vec<ExtensionSpec> = Vec::new();
    for (name, value) in members.iter() {
        let path = format!("extensions.{name}");
        if !fleet::valid_extension_name(name) {
            return Err(error(
                &path,
                "not an extension name: 1 to 64 letters, digits, '-' and '_', no '__', no '_' at either end",
            ));
        }
        if specs.iter().any(|s| s.name == **name) {
            return Err(error(&path, "appears twice"));
        }
        specs.push(extension(name, value, &path)?);
    }
    Ok(specs)
}

const FIELDS: [&str; 6] = ["command", "cwd", "env", "timeout", "grace", "restart"];
const RESTART_FIELDS: [&str; 5] = ["when", "backoff", "backoffCap", "maxExits", "window"];

fn extension(name: &str, value: &Value, path: &str) -> Result<ExtensionSpec, ConfigError> {
    let fields = object(value, path, "an object with a `command`")?;
    once(fields, path)?;
    let mut spec = ExtensionSpec {
        name: name.to_string(),
        command: Vec::new(),
        cwd: None,
        env: Vec::new(),
        timeout: None,
        grace: None,
        restart: RestartPolicy::default(),
    };
    let mut command = None;
    for (field, value) in fields.iter() {
        let path = format!("{path}.{field}");
        match &**field {
            "command" => command = Some(strings(value, &path)?),
            "cwd" => spec.cwd = Some(PathBuf::from(string(value, &path)?)),
            "env" => {
                let env = object(value, &path, "an object of strings")?;
                once(env, &path)?;
                for (key, value) in env.iter() {
                    let value = string(value, &format!("{path}.{key}"))?;
                    spec.env.push((key.to_string(), value.to_string()));
                }
            }
            "timeout" => spec.timeout = Some(duration(value, &path)?),
            "grace" => spec.grace = Some(duration(value, &path)?),
            "restart" => spec.restart = restart(value, &path)?,
            _ => return Err(unknown(&path, &FIELDS)),
        }
    }
    let command_path = format!("{path}.command");
    spec.command = command.ok_or_else(|| {
        error(
            &command_path,
            r#"missing: every extension needs a command, such as ["node", "web.js"]"#,
        )
    })?;
    if spec.command.is_empty() {
        return Err(error(&command_path, "empty: it needs at least the program"));
    }
    Ok(spec)
}

fn restart(value: &Value, path: &str) -> Result<RestartPolicy, ConfigError> {
    let fields = object(value, path, "an object")?;
    once(fields, path)?;
    let mut policy = RestartPolicy::default();
    for (field, value) in fields.iter() {
        let path = format!("{path}.{field}");
        match &**field {
            "when" => {
                policy.when = match string(value, &path)? {
                    "at-once" => RestartWhen::AtOnce,
                    "on-next-call" => RestartWhen::OnNextCall,
                    other => {
                        return Err(error(
                            &path,
                            format!(r#"expected "at-once" or "on-next-call", found "{other}""#),
                        ));
                    }
                }
            }
            "backoff" => policy.backoff_initial = duration(value, &path)?,
            "backoffCap" => policy.backoff_cap = duration(value, &path)?,
            "window" => policy.window = duration(value, &path)?,
            "maxExits" => {
                let n = value
                    .as_u64()
                    .ok_or_else(|| wrong_type(&path, "a whole number", value))?;
                policy.max_exits = usize::try_from(n).unwrap_or(usize::MAX);
            }
            _ => return Err(unknown(&path, &RESTART_FIELDS)),
        }
    }
    Ok(policy)
}

fn unknown(path: &str, known: &[&str]) -> ConfigError {
    error(path, format!("unknown field (known: {})", known.join(", ")))
}

/// Every member of `fields` once: JSON allows a repeated name, which would leave one
/// of two settings unseen.
fn once(fields: &Object, path: &str) -> Result<(), ConfigError> {
    for (i, (name, _)) in fields.iter().enumerate() {
        if fields.iter().take(i).any(|(earlier, _)| earlier == name) {
            return Err(error(&format!("{path}.{name}"), "appears twice"));
        }
    }
    Ok(())
}

fn object<'a>(value: &'a Value, path: &str, expected: &str) -> Result<&'a Object, ConfigError> {
    value
        .as_object()
        .ok_or_else(|| wrong_type(path, expected, value))
}

fn string<'a>(value: &'a Value, path: &str) -> Result<&'a str, ConfigError> {
    value
        .as_str()
        .ok_or_else(|| wrong_type(path, "a string", value))
}

fn strings(value: &Value, path: &str) -> Result<Vec<String>, ConfigError> {
    let items = value
        .as_array()
        .ok_or_else(|| wrong_type(path, "an array of strings", value))?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| string(item, &format!("{path}[{i}]")).map(str::to_string))
        .collect()
}

fn duration(value: &Value, path: &str) -> Result<Duration, ConfigError> {
    let text = value
        .as_str()
        .ok_or_else(|| wrong_type(path, r#"a duration such as "30s""#, value))?;
    args::parse_duration(text).map_err(|e| error(path, e.0))
}

/// Whether the words before `--` name a config file.
pub(crate) fn wanted(words: &[String]) -> bool {
    words
        .iter()
        .take_while(|w| *w != "--")
        .any(|w| w == "--config" || w.starts_with("--config="))
}

/// The fleet's settings for one extension, by the rule in the module docs.
pub(crate) fn extension_config(spec: &ExtensionSpec, options: &Options) -> fleet::ExtensionConfig {
    let host = host::Config::default()
        .timeout(spec.timeout.unwrap_or(options.timeout))
        .grace(spec.grace.unwrap_or(options.grace));
    let cwd = spec.cwd.as_ref().or(options.cwd.as_ref());
    let session_cwd = match cwd {
        Some(cwd) => std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.clone()),
        None => std::env::current_dir().unwrap_or_default(),
    };
    fleet::ExtensionConfig::default()
        .host(host)
        .restart(spec.restart)
        .cwd(session_cwd.display().to_string())
}

/// The command of one of the extension's processes, by the rule in the module docs.
pub(crate) fn command(
    spec: &ExtensionSpec,
    options: &Options,
    env: &[(String, String)],
) -> Command {
    let mut command = Command::new(spec.command.first().map_or("", String::as_str));
    command.args(spec.command.iter().skip(1));
    if let Some(cwd) = spec.cwd.as_ref().or(options.cwd.as_ref()) {
        command.current_dir(cwd);
    }
    command.envs(env.iter().map(|(k, v)| (k, v)));
    command.envs(spec.env.iter().map(|(k, v)| (k, v)));
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fails(text: &str) -> ConfigError {
        parse(text.as_bytes()).expect_err("should be refused")
    }

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn the_issue_example_is_read_whole() {
        let specs = parse(
            br#"{"extensions": {
                "web":  {"command": ["node", "web.js"], "cwd": ".", "env": {"TOKEN": "t"},
                         "timeout": "30s", "grace": "5s"},
                "files": {"command": ["python3", "files.py"],
                          "restart": {"when": "on-next-call", "maxExits": 3, "backoff": "250ms",
                                      "backoffCap": "2s", "window": "1m"}}
            }}"#,
        )
        .expect("valid");
        assert_eq!(specs.len(), 2);
        let web = &specs[0];
        assert_eq!(web.name, "web");
        assert_eq!(web.command, ["node", "web.js"]);
        assert_eq!(web.cwd, Some(PathBuf::from(".")));
        assert_eq!(web.env, [("TOKEN".to_string(), "t".to_string())]);
        assert_eq!(web.timeout, Some(Duration::from_secs(30)));
        assert_eq!(web.grace, Some(Duration::from_secs(5)));
        assert_eq!(web.restart, RestartPolicy::default());
        let files = &specs[1];
        assert_eq!(
            (files.timeout, files.grace, &files.cwd),
            (None, None, &None)
        );
        let want = RestartPolicy::default()
            .when(RestartWhen::OnNextCall)
            .max_exits(3)
            .backoff(Duration::from_millis(250), Duration::from_secs(2))
            .window(Duration::from_secs(60));
        assert_eq!(files.restart, want);
    }

    #[test]
    fn mistakes_name_their_json_path() {
        let cases = [
            (
                r#"{"extensions":{"web":{"comand":["x"]}}}"#,
                "extensions.web.comand",
            ),
            (r#"{"extensions":{"web":{}}}"#, "extensions.web.command"),
            (
                r#"{"extensions":{"web":{"command":"node web.js"}}}"#,
                "extensions.web.command",
            ),
            (
                r#"{"extensions":{"web":{"command":["node",1]}}}"#,
                "extensions.web.command[1]",
            ),
            (
                r#"{"extensions":{"web":{"command":[]}}}"#,
                "extensions.web.command",
            ),
            (
                r#"{"extensions":{"web":{"command":["x"],"timeout":30}}}"#,
                "extensions.web.timeout",
            ),
            (
                r#"{"extensions":{"web":{"command":["x"],"grace":"soon"}}}"#,
                "extensions.web.grace",
            ),
            (
                r#"{"extensions":{"web":{"command":["x"],"env":{"A":1}}}}"#,
                "extensions.web.env.A",
            ),
            (
                r#"{"extensions":{"web":{"command":["x"],"cwd":["."]}}}"#,
                "extensions.web.cwd",
            ),
            (
                r#"{"extensions":{"web":{"command":["x"],"restart":{"when":"later"}}}}"#,
                "extensions.web.restart.when",
            ),
            (
                r#"{"extensions":{"web":{"command":["x"],"restart":{"maxExits":-1}}}}"#,
                "extensions.web.restart.maxExits",
            ),
            (
                r#"{"extensions":{"web":{"command":["x"],"restart":{"tries":1}}}}"#,
                "extensions.web.restart.tries",
            ),
            (
                r#"{"extensions":{"web":{"command":["x"],"command":["y"]}}}"#,
                "extensions.web.command",
            ),
            (
                r#"{"extensions":{"web":{"command":["x"]},"web":{"command":["y"]}}}"#,
                "extensions.web",
            ),
            (
                r#"{"extensions":{"my__ext":{"command":["x"]}}}"#,
                "extensions.my__ext",
            ),
            (r#"{"extensions":{"web":[]}}"#, "extensions.web"),
            (r#"{"extensions":{}}"#, "extensions"),
            (r#"{"extensions":[]}"#, "extensions"),
            (r#"{"extension":{}}"#, "extension"),
            (r#"{}"#, "extensions"),
            (r#"[]"#, ""),
            (r#"{"extensions":"#, ""),
        ];
        for (text, path) in cases {
            assert_eq!(fails(text).path, path, "{text}");
        }
        assert_eq!(
            fails(r#"{"extensions":{"web":{"timeout":"1s"}}}"#).to_string(),
            r#"extensions.web.command: missing: every extension needs a command, such as ["node", "web.js"]"#
        );
        assert_eq!(
            fails(r#"{"extensions":{"web":{"command":["x"],"timeout":30}}}"#).to_string(),
            r#"extensions.web.timeout: expected a duration such as "30s", found number"#
        );
        assert_eq!(
            fails(r#"{"extensions":{"web":{"comand":["x"]}}}"#).to_string(),
            "extensions.web.comand: unknown field (known: command, cwd, env, timeout, grace, restart)"
        );
    }

    #[test]
    fn a_config_file_is_wanted_before_the_command_only() {
        assert!(wanted(&words("tools --config=f.json")));
        assert!(wanted(&words("--config f.json")));
        assert!(!wanted(&words("-- ext --config f.json")));
    }

    #[test]
    fn the_file_wins_over_the_command_line_which_wins_over_the_defaults() {
        let specs = parse(
            br#"{"extensions":{"a":{"command":["x"],"timeout":"3s","env":{"K":"file"}},"b":{"command":["y"]}}}"#,
        )
        .expect("valid");
        let options = Options {
            timeout: Duration::from_secs(7),
            grace: Duration::from_secs(1),
            ..Options::default()
        };
        let a = extension_config(&specs[0], &options);
        let b = extension_config(&specs[1], &options);
        assert_eq!(
            (a.host.timeout, a.host.grace),
            (Duration::from_secs(3), Duration::from_secs(1))
        );
        assert_eq!(b.host.timeout, Duration::from_secs(7));

        let cli_env = [
            ("K".to_string(), "cli".to_string()),
            ("L".to_string(), "cli".to_string()),
        ];
        let command = command(&specs[0], &options, &cli_env);
        let envs: Vec<(String, String)> = command
            .get_envs()
            .map(|(k, v)| {
                let v = v
                    .map(|v| v.to_string_lossy().into_owned())
                    .unwrap_or_default();
                (k.to_string_lossy().into_owned(), v)
            })
            .collect();
        assert_eq!(
            envs,
            [
                ("K".to_string(), "file".to_string()),
                ("L".to_string(), "cli".to_string())
            ]
        );
        assert_eq!(command.get_program(), "x");
    }
}
