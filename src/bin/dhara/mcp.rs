//! `dhara mcp adapt` and `dhara mcp serve`: the MCP bridges, over this process's
//! stdio and one child. The bridges themselves are `dhara_protocol::mcp`; this is the
//! command line around their drivers.

use std::io::ErrorKind;
use std::process::Command;

use dhara_protocol::driver::{BridgeOptions, run_adapter, run_server};
use dhara_protocol::host::Config;
use dhara_protocol::mcp::{AdapterConfig, ServerConfig};

use crate::args::{self, Accepts, Invocation};
use crate::connect;
use crate::{Status, usage_error};

const ACCEPTS: Accepts = Accepts {
    process: true,
    json: false,
    trace: true,
    ..Accepts::NONE
};

/// The usage of `dhara mcp`.
const MCP_USAGE: &str = "\
dhara mcp: bridges between MCP (the Model Context Protocol) and Dhara

USAGE:
    dhara mcp adapt [--grace DUR] [--cwd DIR] [--trace] -- CMD [ARGS...]
    dhara mcp serve [--timeout DUR] [--grace DUR] [--cwd DIR] [--trace] -- CMD [ARGS...]

    adapt   run CMD, an MCP server, and be a Dhara extension on stdin/stdout
            (its log messages and stderr go to stderr)
    serve   run CMD, a Dhara extension, and be an MCP server on stdin/stdout
            (the Dhara timeout, grace and kill apply to CMD)
";

/// `dhara mcp adapt|serve [OPTIONS] -- CMD [ARGS...]`; the exit code.
pub(crate) fn run(words: &[String]) -> i32 {
    let Some((which, rest)) = words.split_first() else {
        eprint!("{MCP_USAGE}");
        return Status::Usage as i32;
    };
    let adapt = match which.as_str() {
        "adapt" => true,
        "serve" => false,
        "-h" | "--help" | "help" => {
            outln!("{MCP_USAGE}");
            return Status::Success as i32;
        }
        other => {
            return usage_error(&format!(
                "unknown `dhara mcp` command `{other}`; the commands are adapt and serve"
            )) as i32;
        }
    };
    let invocation = match args::parse(rest, ACCEPTS) {
        Ok(invocation) => invocation,
        Err(e) => return usage_error(&e.0) as i32,
    };
    if invocation.help {
        outln!("{MCP_USAGE}");
        return Status::Success as i32;
    }
    if let Some(extra) = invocation.positional.first() {
        return usage_error(&format!(
            "`dhara mcp {which}` takes no argument `{extra}` before `--`"
        )) as i32;
    }
    let command = match command(&invocation) {
        Ok(command) => command,
        Err(status) => return status as i32,
    };
    let options = &invocation.options;
    let mut bridge = BridgeOptions::new(if adapt {
        "[mcp server] "
    } else {
        "[extension] "
    });
    bridge.grace = options.grace;
    bridge.trace = options.trace;
    let program = invocation.command.first().cloned().unwrap_or_default();
    let ran = if adapt {
        run_adapter(command, AdapterConfig::default(), &bridge)
    } else {
        let core = Config::default()
            .timeout(options.timeout)
            .grace(options.grace)
            // The extension's own answer to bad input is the one to pass on.
            .validate_input(false);
        run_server(
            command,
            ServerConfig::new(connect::session_cwd(options)).core(core),
            &bridge,
        )
    };
    match ran {
        Ok(code) => code,
        Err(e) => {
            match e.kind() {
                ErrorKind::NotFound => eprintln!(
                    "dhara mcp {which}: command not found: `{program}` (is it installed and on PATH?)"
                ),
                _ => eprintln!("dhara mcp {which}: cannot start `{program}`: {e}"),
            }
            Status::Exited as i32
        }
    }
}

/// The child's command, from what follows `--`, in `--cwd` if given.
fn command(invocation: &Invocation) -> Result<Command, Status> {
    let Some((program, args)) = invocation.command.split_first() else {
        return Err(usage_error(
            "missing the command: put it after `--`, as in `dhara mcp adapt -- npx server`",
        ));
    };
    let mut command = Command::new(program);
    command.args(args);
    if let Some(cwd) = &invocation.options.cwd {
        if !cwd.is_dir() {
            return Err(usage_error(&format!(
                "--cwd {}: not a directory",
                cwd.display()
            )));
        }
        command.current_dir(cwd);
    }
    Ok(command)
}
