//! The `frame` module: the framing decisions one by one, and the line decoder's
//! properties under any chunking.

#[path = "frame/decisions.rs"]
mod decisions;
#[path = "frame/props.rs"]
mod props;
