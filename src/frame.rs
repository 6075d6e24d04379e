//! Newline framing: one JSON message per line.
