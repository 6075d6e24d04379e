//! JSON-RPC 2.0: the message model, its validation, and its error codes.
//!
//! A line decodes to [`Incoming`]: one message or a batch, each entry either a valid
//! [`Message`] or a [`DecodeError`] that carries the error object the receiver should
//! answer with (and the id, when it could be recovered).

mod types;

pub use types::{ErrorCode, ErrorObject, Id, Message, Notification, Request, Response};
