//! The `json` module: the parser and writer against JSONTestSuite, their
//! properties, the string paths, skipping and the writer's fast paths.

// Helpers are `pub` to be shared by this binary's modules, not exported.
#![allow(unreachable_pub)]

#[path = "support/json.rs"]
mod json_support;
#[path = "support/shared_data.rs"]
mod shared_data;

#[path = "json/props.rs"]
mod props;
#[path = "json/skip.rs"]
mod skip;
#[path = "json/strings.rs"]
mod strings;
#[path = "json/suite.rs"]
mod suite;
#[path = "json/write_paths.rs"]
mod write_paths;
