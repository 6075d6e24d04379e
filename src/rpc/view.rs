//! Messages borrowed from the line they were decoded from.
//!
//! [`decode_view`](super::decode_view) checks a line exactly as
//! [`decode`](super::decode) does, but builds no tree: `params`, `result` and
//! `error.data` stay as [`RawValue`]s (slices of the line, already checked), and the
//! method and the error message are borrowed from the line when they hold no escape.
//! A receiver reads the payload it expects straight from the text, or builds a
//! [`Value`] only for what it hands on ([`RawValue::parse`]).

use alloc::borrow::Cow;
use alloc::vec::Vec;

use super::error::DecodeError;
use super::types::{ErrorCode, ErrorObject, Id, Message, Notification, Request, Response};
use crate::json::{RawValue, Value};

/// What one line holds, borrowed from it: a single message or a batch.
#[derive(Clone, Debug, PartialEq)]
///
/// `P` is what the payloads (`params`, `result`) are: their checked text, unless a
/// receiver reads the payloads it knows into typed values in the same pass.
pub enum IncomingView<'a, P = RawValue<'a>> {
    /// One message (the line held an object, or was not a valid batch at all).
    Single(Result<MessageView<'a, P>, DecodeError>),
    /// A non-empty batch: one entry per element, in order.
    Batch(Vec<Result<MessageView<'a, P>, DecodeError>>),
}

/// One JSON-RPC 2.0 message, borrowed from its line.
#[derive(Clone, Debug, PartialEq)]
pub enum MessageView<'a, P = RawValue<'a>> {
    /// A request (has an id).
    Request(RequestView<'a, P>),
    /// A notification (no id).
    Notification(NotificationView<'a, P>),
    /// A response (result or error).
    Response(ResponseView<'a, P>),
}

/// A [`Request`] borrowed from its line.
#[derive(Clone, Debug, PartialEq)]
pub struct RequestView<'a, P = RawValue<'a>> {
    /// The id the response must echo.
    pub id: Id,
    /// The method name.
    pub method: Cow<'a, str>,
    /// Structured params (an array or an object), if any.
    pub params: Option<P>,
}

/// A [`Notification`] borrowed from its line.
#[derive(Clone, Debug, PartialEq)]
pub struct NotificationView<'a, P = RawValue<'a>> {
    /// The method name.
    pub method: Cow<'a, str>,
    /// Structured params (an array or an object), if any.
    pub params: Option<P>,
}

/// A [`Response`] borrowed from its line.
#[derive(Clone, Debug, PartialEq)]
pub struct ResponseView<'a, P = RawValue<'a>> {
    /// The id of the request this answers (`null` when it could not be read).
    pub id: Id,
    /// `Ok(result)` or `Err(error)`.
    pub outcome: Result<P, ErrorView<'a>>,
}

/// An [`ErrorObject`] borrowed from its line.
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorView<'a> {
    /// The error code.
    pub code: ErrorCode,
    /// A short description.
    pub message: Cow<'a, str>,
    /// Extra information, if any.
    pub data: Option<RawValue<'a>>,
}

fn owned(payload: Option<RawValue<'_>>) -> Option<Value> {
    payload.map(|raw| raw.parse())
}

impl IncomingView<'_> {
    /// The owned form, building every payload.
    pub fn into_owned(self) -> super::Incoming {
        let entry =
            |entry: Result<MessageView<'_>, DecodeError>| entry.map(MessageView::into_owned);
        match self {
            IncomingView::Single(entry_) => super::Incoming::Single(entry(entry_)),
            IncomingView::Batch(entries) => {
                super::Incoming::Batch(entries.into_iter().map(entry).collect())
            }
        }
    }
}

impl<P> MessageView<'_, P> {
    /// The id of a request or a response; `None` for a notification.
    pub fn id(&self) -> Option<&Id> {
        match self {
            MessageView::Request(r) => Some(&r.id),
            MessageView::Notification(_) => None,
            MessageView::Response(r) => Some(&r.id),
        }
    }

    /// The method of a request or a notification; `None` for a response.
    pub fn method(&self) -> Option<&str> {
        match self {
            MessageView::Request(r) => Some(&r.method),
            MessageView::Notification(n) => Some(&n.method),
            MessageView::Response(_) => None,
        }
    }
}

impl MessageView<'_> {
    /// The owned [`Message`], building its payload.
    pub fn into_owned(self) -> Message {
        match self {
            MessageView::Request(r) => Message::Request(r.into_owned()),
            MessageView::Notification(n) => Message::Notification(n.into_owned()),
            MessageView::Response(r) => Message::Response(r.into_owned()),
        }
    }
}

impl RequestView<'_> {
    /// The owned [`Request`], building its params.
    pub fn into_owned(self) -> Request {
        Request {
            id: self.id,
            method: self.method.into_owned(),
            params: owned(self.params),
        }
    }
}

impl NotificationView<'_> {
    /// The owned [`Notification`], building its params.
    pub fn into_owned(self) -> Notification {
        Notification {
            method: self.method.into_owned(),
            params: owned(self.params),
        }
    }
}

impl ResponseView<'_> {
    /// The owned [`Response`], building its result or error data.
    pub fn into_owned(self) -> Response {
        Response {
            id: self.id,
            outcome: self
                .outcome
                .map(|result| result.parse())
                .map_err(ErrorView::into_owned),
        }
    }
}

impl ErrorView<'_> {
    /// The owned [`ErrorObject`], building its data.
    pub fn into_owned(self) -> ErrorObject {
        ErrorObject {
            code: self.code,
            message: self.message.into_owned(),
            data: owned(self.data),
        }
    }
}
