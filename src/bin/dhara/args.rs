//! Command-line arguments, parsed by hand: options, `--` and the extension command,
//! and durations.

use std::path::PathBuf;
use std::time::Duration;

/// The options shared by the commands that start an extension.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Options {
    /// `--timeout DUR`: how long one call may take (default 30 s).
    pub timeout: Duration,
    /// `--grace DUR`: how long the extension has to exit after `shutdown` (default 5 s).
    pub grace: Duration,
    /// `--cwd DIR`: the extension's working directory, also sent in `initialize`.
    pub cwd: Option<PathBuf>,
    /// `--json`: machine-readable output.
    pub json: bool,
    /// `--trace`: every message, with direction and time, to stderr.
    pub trace: bool,
    /// `--config FILE`: the extensions are named in this file.
    pub config: Option<PathBuf>,
    /// Each `--env KEY=VALUE`, in order: set in the extensions' environment.
    pub env: Vec<(String, String)>,
    /// `--probe-timeout DUR` (check): the wait for every reply but `initialize`'s.
    pub probe_timeout: Option<Duration>,
    /// Each `--call TOOL INPUT` (check), the input as it was written.
    pub calls: Vec<(String, String)>,
    /// `--no-calls` (check): no tool is called.
    pub no_calls: bool,
    /// `--strict` (check): warnings fail too.
    pub strict: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            timeout: Duration::from_secs(30),
            grace: Duration::from_secs(5),
            cwd: None,
            json: false,
            trace: false,
            config: None,
            env: Vec::new(),
            probe_timeout: None,
            calls: Vec::new(),
            no_calls: false,
            strict: false,
        }
    }
}

/// A command line split into its parts.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Invocation {
    /// The arguments before `--` that are not options, in order.
    pub positional: Vec<String>,
    /// The options.
    pub options: Options,
    /// Everything after `--`: the extension command and its arguments.
    pub command: Vec<String>,
    /// `-h` or `--help` was given.
    pub help: bool,
}

/// A mistake on the command line, worded for the person who made it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Which options a command accepts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Accepts {
    /// `--timeout`, `--grace` and `--cwd`.
    pub process: bool,
    /// `--json`.
    pub json: bool,
    /// `--trace`.
    pub trace: bool,
    /// `--config` and `--env`.
    pub config: bool,
    /// `check`'s own: `--probe-timeout`, `--call`, `--no-calls` and `--strict`.
    pub check: bool,
}

impl Accepts {
    /// Only `-h`/`--help`; the others are turned on field by field.
    pub(crate) const NONE: Accepts = Accepts {
        process: false,
        json: false,
        trace: false,
        config: false,
        check: false,
    };
}

/// Splits `args` (the words after the subcommand) into positionals, options and the
/// command after `--`. Options may come anywhere before `--`, as `--name VALUE` or
/// `--name=VALUE` (`--call TOOL INPUT` takes two words). This is the one parser of
/// every command's options.
pub(crate) fn parse(args: &[String], accepts: Accepts) -> Result<Invocation, UsageError> {
    let mut invocation = Invocation::default();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if word == "--" {
            invocation.command = words.by_ref().cloned().collect();
            break;
        }
        if word == "-h" || word == "--help" {
            invocation.help = true;
            continue;
        }
        let Some(option) = word.strip_prefix("--") else {
            if word.len() > 1 && word.starts_with('-') && !is_number(word) {
                return Err(unknown_option(word));
            }
            invocation.positional.push(word.clone());
            continue;
        };
        let (name, inline_value) = match option.split_once('=') {
            Some((name, value)) => (name, Some(value.to_string())),
            None => (option, None),
        };
        let mut value = || match inline_value.clone() {
            Some(value) => Ok(value),
            None => words
                .next()
                .cloned()
                .ok_or_else(|| UsageError(format!("--{name} needs a value"))),
        };
        let options = &mut invocation.options;
        match name {
            "timeout" if accepts.process => options.timeout = parse_duration(&value()?)?,
            "grace" if accepts.process => options.grace = parse_duration(&value()?)?,
            "cwd" if accepts.process => options.cwd = Some(PathBuf::from(value()?)),
            "json" if accepts.json && inline_value.is_none() => options.json = true,
            "trace" if accepts.trace && inline_value.is_none() => options.trace = true,
            "config" if accepts.config && options.config.is_some() => {
                return Err(UsageError(String::from("--config is given twice")));
            }
            "config" if accepts.config => options.config = Some(PathBuf::from(value()?)),
            "env" if accepts.config => {
                let pair = value()?;
                let Some((key, value)) = pair.split_once('=').filter(|(k, _)| !k.is_empty()) else {
                    return Err(UsageError(format!(
                        "--env {pair}: write KEY=VALUE, as in --env TOKEN=abc"
                    )));
                };
                options.env.push((key.to_string(), value.to_string()));
            }
            "probe-timeout" if accepts.check => {
                options.probe_timeout = Some(parse_duration(&value()?)?);
            }
            "call" if accepts.check => {
                let needs =
                    || UsageError(String::from("--call needs a tool name and a JSON input"));
                let tool = value().map_err(|_| needs())?;
                let input = words.next().cloned().ok_or_else(needs)?;
                options.calls.push((tool, input));
            }
            "no-calls" if accepts.check && inline_value.is_none() => options.no_calls = true,
            "strict" if accepts.check && inline_value.is_none() => options.strict = true,
            _ => return Err(unknown_option(word)),
        }
    }
    if invocation.options.no_calls && !invocation.options.calls.is_empty() {
        return Err(UsageError(String::from(
            "--call and --no-calls exclude each other",
        )));
    }
    Ok(invocation)
}

fn unknown_option(word: &str) -> UsageError {
    UsageError(format!(
        "unknown option {word} (options go before `--`; see `dhara --help`)"
    ))
}

fn is_number(word: &str) -> bool {
    word.parse::<f64>().is_ok()
}

/// Parses a duration: `250ms`, `2s`, `1m`, or a bare number of seconds. Decimals are
/// allowed (`1.5s`).
pub(crate) fn parse_duration(text: &str) -> Result<Duration, UsageError> {
    let bad = || {
        UsageError(format!(
            "`{text}` is not a duration: write 250ms, 2s, 1m, or a number of seconds"
        ))
    };
    let (number, unit_secs) = if let Some(n) = text.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = text.strip_suffix('m') {
        (n, 60.0)
    } else {
        (text, 1.0)
    };
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return Err(bad());
    }
    let value: f64 = number.parse().map_err(|_| bad())?;
    Duration::try_from_secs_f64(value * unit_secs).map_err(|_| bad())
}

/// A duration as a person writes it: `250ms`, `2s`, `1.5s`, `2m`.
pub(crate) fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms % 60_000 == 0 {
        format!("{}m", ms / 60_000)
    } else if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: Accepts = Accepts {
        process: true,
        json: true,
        trace: true,
        config: true,
        check: true,
    };

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("1m"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_duration("7"), Ok(Duration::from_secs(7)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        for bad in ["", "s", "ms", "-1s", "2h", "abc", "1e3", "1..2s", " 2s"] {
            assert!(parse_duration(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn durations_print_as_written() {
        assert_eq!(format_duration(Duration::from_millis(250)), "250ms");
        assert_eq!(format_duration(Duration::from_secs(2)), "2s");
        assert_eq!(format_duration(Duration::from_secs(120)), "2m");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1.5s");
    }

    #[test]
    fn options_positionals_and_command() {
        let inv = parse(
            &words("echo {} --timeout 2s --json --grace=250ms --cwd /tmp -- prog --timeout x"),
            ALL,
        )
        .unwrap();
        assert_eq!(inv.positional, ["echo", "{}"]);
        assert_eq!(inv.options.timeout, Duration::from_secs(2));
        assert_eq!(inv.options.grace, Duration::from_millis(250));
        assert_eq!(inv.options.cwd, Some(PathBuf::from("/tmp")));
        assert!(inv.options.json && !inv.options.trace);
        assert_eq!(inv.command, ["prog", "--timeout", "x"]);
    }

    #[test]
    fn config_env_and_the_check_options() {
        let inv = parse(
            &words(
                "--config fleet.json --timeout 2s --env A=1 --env=B=x=y --json -- cmd --env C=3",
            ),
            ALL,
        )
        .expect("valid");
        assert_eq!(inv.options.config, Some(PathBuf::from("fleet.json")));
        assert_eq!(
            inv.options.env,
            [("A".into(), "1".into()), ("B".into(), "x=y".into())]
        );
        assert_eq!(inv.options.timeout, Duration::from_secs(2));
        assert_eq!(inv.command, words("cmd --env C=3"));
        for bad in [
            "--env novalue",
            "--env =v",
            "--config a --config b",
            "--config",
        ] {
            assert!(parse(&words(bad), ALL).is_err(), "{bad}");
        }
        let no_config = Accepts {
            process: true,
            ..Accepts::NONE
        };
        assert!(parse(&words("--config f.json"), no_config).is_err());
        assert!(parse(&words("--env A=1"), no_config).is_err());

        let inv = parse(
            &words("--strict --probe-timeout=2s --call echo {} --call add {\"a\":1} -- x"),
            ALL,
        )
        .expect("valid");
        assert!(inv.options.strict && !inv.options.no_calls);
        assert_eq!(inv.options.probe_timeout, Some(Duration::from_secs(2)));
        assert_eq!(
            inv.options.calls,
            [
                ("echo".into(), "{}".into()),
                ("add".into(), "{\"a\":1}".into())
            ]
        );
        assert!(parse(&words("--call echo"), ALL).is_err());
        assert!(parse(&words("--call echo {} --no-calls"), ALL).is_err());
        assert!(parse(&words("--strict"), no_config).is_err());
    }

    #[test]
    fn defaults() {
        let inv = parse(&[], ALL).unwrap();
        assert_eq!(inv.options, Options::default());
        assert!(inv.command.is_empty() && !inv.help);
    }

    #[test]
    fn mistakes_are_explained() {
        let only_trace = Accepts {
            trace: true,
            ..Accepts::NONE
        };
        assert!(
            parse(&words("--timeout"), ALL)
                .unwrap_err()
                .0
                .contains("needs a value")
        );
        assert!(
            parse(&words("--frobnicate"), ALL)
                .unwrap_err()
                .0
                .contains("unknown option")
        );
        assert!(parse(&words("-x"), ALL).is_err());
        assert!(parse(&words("--json"), only_trace).is_err());
        assert!(parse(&words("--json=1"), ALL).is_err());
        assert!(
            parse(&words("--timeout soon"), ALL)
                .unwrap_err()
                .0
                .contains("not a duration")
        );
        assert!(parse(&words("--trace"), only_trace).unwrap().options.trace);
        assert!(parse(&words("-h"), only_trace).unwrap().help);
        // A negative number is a positional (an input value), not an option.
        assert_eq!(parse(&words("-5"), ALL).unwrap().positional, ["-5"]);
    }
}
