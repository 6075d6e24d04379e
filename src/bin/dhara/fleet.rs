//! The commands over a config file of named extensions: `dhara tools --config FILE`.

use std::collections::BTreeMap;
use std::time::Duration;

use dhara_protocol::driver::{FleetProcesses, Stderr};
use dhara_protocol::fleet::{self, Config, Event, ExtensionKey, Status as Health};
use dhara_protocol::json::{Object, Value};

use crate::args::{self, Accepts, Options};
use crate::config::{self, ExtensionSpec};
use crate::connect::print_json;
use crate::{Status, usage_error};

const ACCEPTS: Accepts = Accepts {
    process: true,
    json: true,
    trace: false,
};

/// The extensions of a command line with `--config`, and its options.
struct Setup {
    specs: Vec<ExtensionSpec>,
    env: Vec<(String, String)>,
    options: Options,
}

/// Reads `--config FILE`, `--env` and the other options; `Err` is the status of a
/// usage error, already reported.
fn setup(words: &[String], command: &str) -> Result<Setup, Status> {
    let split = config::split_args(words).map_err(|e| usage_error(&e.0))?;
    let invocation = args::parse(&split.rest, ACCEPTS).map_err(|e| usage_error(&e.0))?;
    if let Some(extra) = invocation.positional.first() {
        return Err(usage_error(&format!(
            "`dhara {command} --config FILE` takes no argument `{extra}`"
        )));
    }
    if !invocation.command.is_empty() {
        return Err(usage_error(
            "--config names the extensions: give no command after `--`",
        ));
    }
    let Some(file) = split.config else {
        return Err(usage_error("--config needs a file"));
    };
    let specs =
        config::load(&file).map_err(|e| usage_error(&format!("{}: {e}", file.display())))?;
    Ok(Setup {
        specs,
        env: split.env,
        options: invocation.options,
    })
}

/// Starts every extension of the setup; restarts as each one's policy says, unless
/// `once` (a command that runs once has no use for them).
fn start(setup: &Setup, once: bool) -> FleetProcesses {
    let mut fleet = FleetProcesses::new(Config::default(), Stderr::Prefixed(String::new()));
    for spec in &setup.specs {
        let mut config = config::extension_config(spec, &setup.options);
        if once {
            config.restart = config.restart.max_exits(1);
        }
        let (spec_for_command, options, env) =
            (spec.clone(), setup.options.clone(), setup.env.clone());
        let make = Box::new(move || config::command(&spec_for_command, &options, &env));
        // The names were checked as the file was read.
        if let Err(e) = fleet.add(&spec.name, config, make) {
            debug_assert!(false, "an extension the file allowed was refused: {e}");
        }
    }
    fleet
}

/// `dhara tools --config FILE [OPTIONS]`: every tool of every extension, with its
/// extension and qualified name.
pub fn tools(words: &[String]) -> Status {
    let setup = match setup(words, "tools") {
        Ok(setup) => setup,
        Err(status) => return status,
    };
    let mut fleet = start(&setup, true);
    let longest = setup
        .specs
        .iter()
        .map(|s| s.timeout.unwrap_or(setup.options.timeout))
        .max()
        .unwrap_or(setup.options.timeout);
    fleet.wait_ready(longest + Duration::from_secs(1));

    // Why each extension that is not ready is not.
    let mut why: BTreeMap<ExtensionKey, String> = BTreeMap::new();
    let mut servers: BTreeMap<ExtensionKey, (String, String)> = BTreeMap::new();
    while let Some(event) = fleet.next_event_timeout(Duration::ZERO) {
        match event {
            Event::Ready { process, server } => {
                servers.insert(process.extension(), server);
            }
            Event::InitializeFailed { process, error } => {
                why.insert(process.extension(), format!("initialize failed: {error}"));
            }
            Event::Stopped { process, how, .. } => {
                why.entry(process.extension())
                    .or_insert_with(|| format!("the extension {how}"));
            }
            _ => {}
        }
    }
    let mut status = Status::Success;
    let mut listed = Vec::new();
    for extension in fleet.fleet().extensions().collect::<Vec<_>>() {
        let name = fleet
            .fleet()
            .name(extension)
            .unwrap_or_default()
            .to_string();
        let ready = matches!(
            fleet.fleet().status(extension),
            Some(Health::Running { ready: true, .. })
        );
        if !ready {
            let reason = why
                .remove(&extension)
                .unwrap_or_else(|| String::from("it did not answer initialize in time"));
            eprintln!("dhara: extension '{name}': {reason}");
            status = Status::Exited;
            continue;
        }
        listed.push((extension, name));
    }
    if setup.options.json {
        print_json(&registry_json(&fleet, &listed, &servers));
    } else {
        print_registry(&fleet, &listed, &servers);
    }
    fleet.shutdown();
    status
}

fn print_registry(
    fleet: &FleetProcesses,
    listed: &[(ExtensionKey, String)],
    servers: &BTreeMap<ExtensionKey, (String, String)>,
) {
    for (i, (extension, name)) in listed.iter().enumerate() {
        if i > 0 {
            outln!();
        }
        let tools: Vec<_> = fleet
            .fleet()
            .tools()
            .filter(|t| t.extension == *extension)
            .collect();
        let server = servers
            .get(extension)
            .map(|(n, v)| format!(" ({n} {v})"))
            .unwrap_or_default();
        let count = match tools.len() {
            1 => String::from("1 tool"),
            n => format!("{n} tools"),
        };
        outln!("{name}{server}: {count}");
        for tool in tools {
            outln!();
            outln!("  {}", tool.offered);
            let mut names = format!("    extension {name}, qualified name {}", tool.qualified);
            let bare = fleet::alias(&tool.tool.name);
            if tool.offered == tool.qualified {
                names.push_str(&format!("; the bare name {bare} is ambiguous"));
            }
            if bare != tool.tool.name {
                names.push_str(&format!("; sent as {:?}", tool.tool.name));
            }
            outln!("{names}");
            if let Some(description) = &tool.tool.description {
                outln!("    {description}");
            }
            match &tool.tool.input_schema {
                Some(schema) => outln!("    input: {schema}"),
                None => outln!("    input: (no schema)"),
            }
        }
    }
}

fn registry_json(
    fleet: &FleetProcesses,
    listed: &[(ExtensionKey, String)],
    servers: &BTreeMap<ExtensionKey, (String, String)>,
) -> Value {
    let tools = fleet
        .fleet()
        .tools()
        .filter(|t| listed.iter().any(|(e, _)| *e == t.extension))
        .map(|t| {
            let mut tool = Object::from_iter([
                ("name", Value::from(t.offered)),
                ("qualifiedName", Value::from(t.qualified)),
                ("realName", Value::from(t.tool.name.as_str())),
                ("extension", Value::from(t.extension_name)),
            ]);
            if let Some(description) = &t.tool.description {
                tool.push("description", Value::from(description.as_str()));
            }
            if let Some(schema) = &t.tool.input_schema {
                tool.push("inputSchema", schema.clone());
            }
            Value::Object(tool)
        })
        .collect();
    let extensions = listed
        .iter()
        .map(|(extension, name)| {
            let mut entry = Object::from_iter([("name", Value::from(name.as_str()))]);
            if let Some((server, version)) = servers.get(extension) {
                entry.push("server", Value::from(server.as_str()));
                entry.push("version", Value::from(version.as_str()));
            }
            Value::Object(entry)
        })
        .collect();
    Value::Object(Object::from_iter([
        ("extensions", Value::Array(extensions)),
        ("tools", Value::Array(tools)),
    ]))
}
