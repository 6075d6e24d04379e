//! The `dhara` command and the std driver, run over the built binary: every
//! subcommand and exit code, config files, `dhara check`, interop with other
//! languages and how sessions end.

#[path = "cli/check.rs"]
mod check;
#[path = "cli/commands.rs"]
mod commands;
#[path = "cli/config.rs"]
mod config;
#[path = "cli/driver.rs"]
mod driver;
#[path = "cli/interop.rs"]
mod interop;
#[path = "cli/lifecycle.rs"]
mod lifecycle;
