//! The Extension endpoint: the side a tool author embeds.
