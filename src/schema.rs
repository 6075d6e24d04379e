//! Validation of tool input against a tool's declared `inputSchema` (a JSON Schema subset).
