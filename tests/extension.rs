//! The Extension endpoint: one behaviour per test, its properties under any input,
//! a whole session against a Core, and the examples of the JSON-RPC 2.0
//! specification.

// Helpers are `pub` to be shared by this binary's modules, not exported.
#![allow(unreachable_pub)]

#[path = "support/extension.rs"]
mod extension_support;
#[path = "support/pair.rs"]
mod pair;
#[path = "support/shared_data.rs"]
mod shared_data;

#[path = "extension/behaviour.rs"]
mod behaviour;
#[path = "extension/e2e.rs"]
mod e2e;
#[path = "extension/props.rs"]
mod props;
#[path = "extension/spec_examples.rs"]
mod spec_examples;
