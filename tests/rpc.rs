//! The `rpc` module: the JSON-RPC 2.0 validation rules, the exact bytes written,
//! the codec's properties and the examples of the specification.

// Helpers are `pub` to be shared by this binary's modules, not exported.
#![allow(unreachable_pub)]

#[path = "support/shared_data.rs"]
mod shared_data;

#[path = "rpc/decode.rs"]
mod decode;
#[path = "rpc/encode.rs"]
mod encode;
#[path = "rpc/jsonrpc_examples.rs"]
mod jsonrpc_examples;
#[path = "rpc/props.rs"]
mod props;
