//! The `message` module: the Dhara messages to and from JSON, their round trips
//! and the published examples.

#[path = "message/conversions.rs"]
mod conversions;
#[path = "message/roundtrip.rs"]
mod roundtrip;
#[path = "message/spec_examples.rs"]
mod spec_examples;
