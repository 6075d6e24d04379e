//! JSON-RPC 2.0: the message model, its validation, and its error codes.
//!
//! [`decode`] turns a line into [`Incoming`]: one message or a batch, each entry either a valid
//! [`Message`] or a [`DecodeError`] that carries the error object the receiver should
//! answer with (and the id, when it could be recovered).
//!
//! Decoding follows the JSON-RPC 2.0 specification exactly:
//!
//! | input | result |
//! |---|---|
//! | not JSON (anywhere in the line, batch or not) | one Parse error (`-32700`), id `null` |
//! | JSON but not an object or an array | one Invalid Request (`-32600`) |
//! | `[]` | one Invalid Request |
//! | a non-empty array | one entry per element, each valid or an Invalid Request |
//! | `jsonrpc` missing or not exactly `"2.0"` | Invalid Request |
//! | `method` not a string, `params` neither array nor object | Invalid Request |
//! | `id` not a string, an integer text or `null` (`1.5`, `1e3`, `true`, `[]`) | Invalid Request |
//! | `method` with `result` or `error`; both `result` and `error`; neither, without `method` | Invalid Request |
//! | a response without `id`; `error` not `{"code": integer, "message": string}` | Invalid Request |
//! | a duplicated `jsonrpc`, `id`, `method`, `params`, `result` or `error` | Invalid Request |
//! | an escaped lone surrogate in `method` or a string `id` | Invalid Request |
//!
//! [`decode_view`] applies the same rules, with the same errors, without building a
//! tree: the message borrows from the line ([`MessageView`]), its payloads stay as
//! checked slices of it ([`json::RawValue`](crate::json::RawValue)). The endpoints
//! decode this way and read each payload straight into the typed value they expect.
//!
//! Members with other names are ignored. A message with `method` and `id` (even
//! `"id": null`) is a request; with `method` and no `id`, a notification. Integer ids
//! keep their exact text, so any integer is echoed unchanged. When an entry is
//! invalid but its `id` was valid, the error carries it, so the reply names the
//! right request.
//!
//! [`DecodeOptions`], a small value, sets the JSON limits and the methods a receiver
//! expects; [`LinePrefix::scan`] reads what it can of a line too long to decode.
//!
//! [`write_message`] and [`write_batch`] write messages; [`write_with`] writes one
//! whose payload a closure appends, for a typed payload written without a tree.
//! Writing is compact, with members in the order `jsonrpc`, `id`, `method`,
//! `params` / `result` / `error`, appended to a caller's buffer with no newline
//! (the framing layer adds it).
//!
//! ```
//! use dhara_protocol::json::Value;
//! use dhara_protocol::rpc::{self, DecodeOptions, ErrorCode, Id, Incoming, Message, Response};
//!
//! // A request in, its response out.
//! let Incoming::Single(Ok(Message::Request(request))) =
//!     rpc::decode(br#"{"jsonrpc":"2.0","id":7,"method":"sum","params":[1,2]}"#, DecodeOptions::DEFAULT)
//! else {
//!     panic!("a valid request");
//! };
//! assert_eq!(request.method, "sum");
//! let mut out = Vec::new();
//! rpc::write_message(&Response::result(request.id, Value::from(3u64)).into(), &mut out);
//! assert_eq!(out, br#"{"jsonrpc":"2.0","id":7,"result":3}"#);
//!
//! // An invalid request: the error to answer with keeps the id.
//! let Incoming::Single(Err(error)) =
//!     rpc::decode(br#"{"jsonrpc":"2.0","id":"a","method":"sum","params":5}"#, DecodeOptions::DEFAULT)
//! else {
//!     panic!("an invalid request");
//! };
//! assert_eq!(error.id, Some(Id::from("a")));
//! assert_eq!(error.error_object().code, ErrorCode::INVALID_REQUEST);
//! out.clear();
//! rpc::write_message(&error.to_response().into(), &mut out);
//! assert_eq!(
//!     out,
//!     br#"{"jsonrpc":"2.0","id":"a","error":{"code":-32600,"message":"Invalid Request: params must be an array or an object"}}"#
//! );
//! ```

mod decode;
mod encode;
mod error;
mod types;
mod view;

pub use decode::{DecodeOptions, Incoming, LinePrefix, decode, decode_view};
pub(crate) use decode::{PayloadOf, Payloads, decode_entry, decode_reading, scan_batch};
pub use encode::{Envelope, write_batch, write_message, write_with};
pub(crate) use encode::{
    PlainMethod, write_id, write_notification, write_request, write_request_with_u64,
    write_response, write_response_batch,
};
pub use error::{DecodeError, DecodeErrorKind};
pub use types::{ErrorCode, ErrorObject, Id, Message, Notification, Request, Response};
pub use view::{ErrorView, IncomingView, MessageView, NotificationView, RequestView, ResponseView};
