//! Strict RFC 8259 JSON, written for this protocol.
//!
//! * [`parse`] / [`parse_with`] turn bytes into a [`Value`]; [`to_vec`] and
//!   [`write_value`] write compact JSON; `Display` for [`Value`] writes the same text.
//! * Numbers keep their exact text ([`Number`]), so parse → write is byte-identical.
//! * Objects keep member order and duplicate names ([`Object`]); lookup by name
//!   returns the last member with that name.
//! * Nesting is bounded ([`Limits::max_depth`]) and the parser never recurses on the
//!   native stack, whatever the depth.

mod value;

pub use value::{Number, Object, Value};
