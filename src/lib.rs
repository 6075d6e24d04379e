//! # dhara-protocol
//!
//! A sans-IO implementation of the Dhara extension protocol: JSON-RPC 2.0 messages,
//! one per line, between the Dhara *Core* and an *Extension* process over its
//! stdin/stdout.
//!
//! The crate is a set of pure state machines. They take bytes and the current time
//! in, and give typed events, bytes to write, the next deadline and the decision to
//! kill out. They never read a clock, never spawn, never block: a runtime (threads,
//! tokio, a WASM host, a microcontroller) drives them.
//!
//! Layers, each importing only from the ones above it in this list:
//!
//! | module | what it does |
//! |---|---|
//! | [`json`] | strict RFC 8259 JSON: parse, write, an ordered [`json::Value`] |
//! | [`frame`] | newline framing: an incremental line decoder and the line encoder |
//! | [`rpc`] | the JSON-RPC 2.0 message model, its validation and its error codes; borrowed views of a line |
//! | [`time`] | the clock-free time type the endpoints are driven with |
//! | [`message`], [`schema`] | the Dhara methods' typed params and results; input-schema validation |
//! | [`host`] | the Core endpoint: the side that starts extensions and calls tools |
//! | [`extension`] | the Extension endpoint: the side a tool author embeds |
//! | `driver` (feature `std`) | blocking reference drivers over child processes and stdio |
//!
//! The two endpoints never import each other.
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod frame;
pub mod json;
pub mod message;
pub mod rpc;
pub mod schema;
pub mod time;

pub mod extension;
pub mod host;

#[cfg(feature = "std")]
pub mod driver;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
