//! Writing JSON-RPC 2.0 messages as compact JSON, appended to a caller's buffer.
//!
//! Members come in the order `jsonrpc`, `id`, `method`, `params` / `result` /
//! `error`. The envelope is written directly, without building a [`Value`] for it.
//! No newline is written: the framing layer adds it.

use alloc::vec::Vec;

use super::types::{ErrorObject, Id, Message, Response};
use crate::json::{self, Number, Value};

/// Writes any message.
pub fn write_message(message: &Message, out: &mut Vec<u8>) {
    match message {
        Message::Request(r) => write_request(&r.id, &r.method, r.params.as_ref(), out),
        Message::Notification(n) => write_notification(&n.method, n.params.as_ref(), out),
        Message::Response(r) => write_response(r, out),
    }
}

/// The envelope of a message whose payload [`write_with`] writes.
#[derive(Clone, Copy, Debug)]
pub enum Envelope<'a> {
    /// A request; the payload is its `params` (an array or an object).
    Request {
        /// The request's id.
        id: &'a Id,
        /// The method.
        method: &'a str,
    },
    /// A notification; the payload is its `params` (an array or an object).
    Notification {
        /// The method.
        method: &'a str,
    },
    /// A successful response; the payload is its `result`.
    Result {
        /// The id of the request answered.
        id: &'a Id,
    },
}

/// Writes a message whose payload (`params` or `result`) `write_payload` appends to
/// `out` as JSON, such as a typed message writing itself without a [`Value`]. The
/// bytes are those [`write_message`] writes for the same message.
///
/// ```
/// use dhara_protocol::rpc::{self, Envelope, Id};
///
/// let mut out = Vec::new();
/// let envelope = Envelope::Request { id: &Id::from(7), method: "tools/list" };
/// rpc::write_with(envelope, |out| out.extend_from_slice(b"{}"), &mut out);
/// assert_eq!(out, br#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}"#);
///
/// out.clear();
/// rpc::write_with(Envelope::Result { id: &Id::from("a") }, |out| out.extend_from_slice(b"true"), &mut out);
/// assert_eq!(out, br#"{"jsonrpc":"2.0","id":"a","result":true}"#);
/// ```
pub fn write_with(
    envelope: Envelope<'_>,
    write_payload: impl FnOnce(&mut Vec<u8>),
    out: &mut Vec<u8>,
) {
    match envelope {
        Envelope::Request { id, method } => {
            write_envelope_start(Some(id), out);
            write_call_with(method, write_payload, out);
        }
        Envelope::Notification { method } => {
            write_envelope_start(None, out);
            write_call_with(method, write_payload, out);
        }
        Envelope::Result { id } => {
            write_envelope_start(Some(id), out);
            out.extend_from_slice(b",\"result\":");
            write_payload(out);
            out.push(b'}');
        }
    }
}

/// A method name seen, when the crate is built, to need no escape in JSON (no `"`,
/// `\`, control or non-ASCII byte): written as it is between its quotes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PlainMethod(&'static str);

impl PlainMethod {
    /// `name`, checked. Meant for a `const`, so that a name that would need an
    /// escape stops the build rather than a call.
    pub(crate) const fn new(name: &'static str) -> PlainMethod {
        assert!(
            PlainMethod::is_plain(name),
            "a plain method name needs no escape"
        );
        PlainMethod(name)
    }

    /// Whether `name` holds no byte that a JSON string escapes, nor any above ASCII.
    const fn is_plain(name: &str) -> bool {
        let bytes = name.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if b < 0x20 || b >= 0x80 || b == b'"' || b == b'\\' {
                return false;
            }
            i += 1;
        }
        true
    }
}

/// [`write_with`] of a request, for an integer id and a plain method, the id written
/// straight from `id` as the text `Id::from(id)` holds, without building that
/// [`Id`], and the method as it is.
pub(crate) fn write_request_with_u64(
    id: u64,
    method: PlainMethod,
    write_params: impl FnOnce(&mut Vec<u8>),
    out: &mut Vec<u8>,
) {
    out.extend_from_slice(ENVELOPE_START_WITH_ID);
    Number::write_u64(id, out);
    out.extend_from_slice(b",\"method\":\"");
    out.extend_from_slice(method.0.as_bytes());
    out.extend_from_slice(b"\",\"params\":");
    write_params(out);
    out.push(b'}');
}

/// Writes a request. `params`, when given, should be an array or an object.
pub(crate) fn write_request(id: &Id, method: &str, params: Option<&Value>, out: &mut Vec<u8>) {
    write_envelope_start(Some(id), out);
    write_call(method, params, out);
}

/// Writes a notification. `params`, when given, should be an array or an object.
pub(crate) fn write_notification(method: &str, params: Option<&Value>, out: &mut Vec<u8>) {
    write_envelope_start(None, out);
    write_call(method, params, out);
}

/// Writes a response: `result` or `error`.
pub(crate) fn write_response(response: &Response, out: &mut Vec<u8>) {
    match &response.outcome {
        Ok(result) => {
            let id = &response.id;
            write_with(
                Envelope::Result { id },
                |out| json::write_value(result, out),
                out,
            );
        }
        Err(error) => {
            write_envelope_start(Some(&response.id), out);
            out.extend_from_slice(b",\"error\":");
            write_error_object(error, out);
            out.push(b'}');
        }
    }
}

/// Writes a batch of messages as one JSON array.
///
/// The specification forbids sending an empty batch (and a reply to a batch of only
/// notifications is nothing at all): callers send nothing when `messages` is empty.
pub fn write_batch(messages: &[Message], out: &mut Vec<u8>) {
    json::write_array(messages, write_message, out);
}

/// Writes the responses to a batch as one JSON array (see [`write_batch`]).
pub(crate) fn write_response_batch(responses: &[Response], out: &mut Vec<u8>) {
    json::write_array(responses, write_response, out);
}

/// Writes an id: its exact integer text, a quoted string, or `null`.
pub(crate) fn write_id(id: &Id, out: &mut Vec<u8>) {
    match id {
        Id::Number(n) => out.extend_from_slice(n.text_bytes()),
        Id::String(s) => json::write_string(s, out),
        Id::Null => out.extend_from_slice(b"null"),
    }
}

/// Writes an error object: `{"code":…,"message":…}` plus `"data"` when present.
fn write_error_object(error: &ErrorObject, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"code\":");
    out.extend_from_slice(Number::from(error.code.code()).text_bytes());
    out.extend_from_slice(b",\"message\":");
    json::write_string(&error.message, out);
    if let Some(data) = &error.data {
        out.extend_from_slice(b",\"data\":");
        json::write_value(data, out);
    }
    out.push(b'}');
}

/// What an envelope with an id starts with, up to the id.
const ENVELOPE_START_WITH_ID: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":";

/// `{"jsonrpc":"2.0"` and, when given, `,"id":…`; the caller closes the object.
fn write_envelope_start(id: Option<&Id>, out: &mut Vec<u8>) {
    match id {
        Some(id) => {
            out.extend_from_slice(ENVELOPE_START_WITH_ID);
            write_id(id, out);
        }
        None => out.extend_from_slice(b"{\"jsonrpc\":\"2.0\""),
    }
}

/// `,"method":…` and `,"params":…` when given, then the closing brace.
fn write_call(method: &str, params: Option<&Value>, out: &mut Vec<u8>) {
    match params {
        Some(params) => write_call_with(method, |out| json::write_value(params, out), out),
        None => {
            write_method(method, out);
            out.push(b'}');
        }
    }
}

/// `,"method":…,"params":…` with the params written by `write_params`, then the
/// closing brace.
fn write_call_with(method: &str, write_params: impl FnOnce(&mut Vec<u8>), out: &mut Vec<u8>) {
    write_method(method, out);
    out.extend_from_slice(b",\"params\":");
    write_params(out);
    out.push(b'}');
}

fn write_method(method: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(b",\"method\":");
    json::write_string(method, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every power of ten, one either side of it, the ends of the range, and a spread
    /// of others.
    fn integers() -> impl Iterator<Item = u64> {
        let around_powers = (0..20).flat_map(|e| {
            let p = 10u64.pow(e);
            [p - 1, p, p + 1]
        });
        let spread = (0..2000u64).map(|k| k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (k % 64));
        around_powers
            .chain(spread)
            .chain([0, u64::MAX - 1, u64::MAX])
    }

    /// Every byte a JSON string escapes keeps a name from being plain; the
    /// protocol's methods are.
    #[test]
    fn plain_methods_are_those_that_need_no_escape() {
        for bad in ["a\"b", "a\\b", "a\nb", "caf\u{e9}", "\u{1}"] {
            assert!(!PlainMethod::is_plain(bad), "{bad:?}");
        }
        for good in ["tools/execute", "initialize", "progress", "a b~!", ""] {
            assert!(PlainMethod::is_plain(good), "{good:?}");
            assert_eq!(PlainMethod::new(good).0, good);
        }
    }

    #[test]
    fn a_request_with_an_integer_id_is_written_as_with_the_id_built() {
        let params = |out: &mut Vec<u8>| out.extend_from_slice(b"{\"a\":[1]}");
        for n in integers() {
            let mut general = Vec::new();
            let id = &Id::from(n);
            write_with(
                Envelope::Request {
                    id,
                    method: "tools/execute",
                },
                params,
                &mut general,
            );
            let mut direct = Vec::new();
            write_request_with_u64(n, PlainMethod::new("tools/execute"), params, &mut direct);
            assert_eq!(direct, general, "id {n}");
        }
    }
}
