//! The MCP bridges: `mcp::Adapter` and `mcp::Server` without processes, the two
//! chained, their decoding under any chunking, and interop as processes.

#[path = "mcp/adapter.rs"]
mod adapter;
#[path = "mcp/chain.rs"]
mod chain;
#[path = "mcp/interop.rs"]
mod interop;
#[path = "mcp/props.rs"]
mod props;
#[path = "mcp/server.rs"]
mod server;
