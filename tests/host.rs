//! The Core endpoint (`host`): one scenario per path of its lifecycle, the
//! bad-input matrix of both endpoints, and the endpoints' reading of the usual
//! spelling of a line.
//!
//! `bad_input` installs a counting global allocator for this binary; it counts per
//! thread, so the other tests here are not disturbed by it.

// Helpers are `pub` to be shared by this binary's modules, not exported.
#![allow(unreachable_pub)]

#[path = "support/extension.rs"]
mod extension_support;

#[path = "host/bad_input.rs"]
mod bad_input;
#[path = "host/endpoint_fast_paths.rs"]
mod endpoint_fast_paths;
#[path = "host/scenarios.rs"]
mod scenarios;
