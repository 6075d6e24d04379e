//! Why a JSON-RPC 2.0 entry could not be decoded, and what to answer.

use alloc::string::ToString;
use core::fmt;

use super::types::{ErrorCode, ErrorObject, Id, Response};
use crate::json;

/// The reason a line or a batch entry is not a valid JSON-RPC 2.0 message.
///
/// [`Json`](DecodeErrorKind::Json) is the specification's Parse error (`-32700`); every
/// other variant is an Invalid Request (`-32600`). `Display` gives the message the
/// receiver answers with, e.g. `Invalid Request: params must be an array or an object`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// The line is not valid JSON (`-32700`). Applies to the whole line, batch or not.
    Json(json::Error),
    /// The line, or a batch entry, is valid JSON but not an object.
    NotAnObject,
    /// The line is an empty array `[]`.
    EmptyBatch,
    /// `jsonrpc` is missing or is not exactly the string `"2.0"`.
    Version,
    /// A member that decides what the message means appears twice. Holds its name:
    /// `jsonrpc`, `id`, `method`, `params`, `result`, `error`, or inside the error
    /// object `error.code`, `error.message`, `error.data`.
    DuplicateMember(&'static str),
    /// `method` is not a string.
    MethodNotString,
    /// `method` holds an escaped lone surrogate (`"\ud800"`).
    MethodLoneSurrogate,
    /// `params` is present but is neither an array nor an object.
    ParamsNotStructured,
    /// `id` is not a string, an integer (no fraction, no exponent) or `null`.
    InvalidId,
    /// A string `id` holds an escaped lone surrogate.
    IdLoneSurrogate,
    /// `method` appears together with `result` or `error`.
    MethodWithOutcome,
    /// None of `method`, `result` and `error` is present.
    NoMethodOrOutcome,
    /// A response has both `result` and `error`.
    ResultAndError,
    /// A response (`result` or `error`) has no `id` member.
    ResponseWithoutId,
    /// `error` is not an object.
    ErrorNotObject,
    /// `error.code` is missing, not an integer, or does not fit an `i64`.
    ErrorCode,
    /// `error.message` is missing or not a string.
    ErrorMessage,
}

impl DecodeErrorKind {
    /// The code to answer with: [`ErrorCode::PARSE_ERROR`] for
    /// [`Json`](DecodeErrorKind::Json), [`ErrorCode::INVALID_REQUEST`] otherwise.
    pub fn code(&self) -> ErrorCode {
        match self {
            DecodeErrorKind::Json(_) => ErrorCode::PARSE_ERROR,
            _ => ErrorCode::INVALID_REQUEST,
        }
    }

    /// What is wrong, in the words of the specification (without the code's name).
    fn reason(&self) -> &'static str {
        match self {
            DecodeErrorKind::Json(_) => "the line is not valid JSON",
            DecodeErrorKind::NotAnObject => "a message must be a JSON object",
            DecodeErrorKind::EmptyBatch => "a batch must not be empty",
            DecodeErrorKind::Version => "jsonrpc must be exactly \"2.0\"",
            DecodeErrorKind::DuplicateMember(_) => "duplicated member",
            DecodeErrorKind::MethodNotString => "method must be a string",
            DecodeErrorKind::MethodLoneSurrogate => "method holds a lone surrogate escape",
            DecodeErrorKind::ParamsNotStructured => "params must be an array or an object",
            DecodeErrorKind::InvalidId => "id must be a string, an integer or null",
            DecodeErrorKind::IdLoneSurrogate => "id holds a lone surrogate escape",
            DecodeErrorKind::MethodWithOutcome => {
                "a message cannot have a method together with a result or an error"
            }
            DecodeErrorKind::NoMethodOrOutcome => "a message needs a method, a result or an error",
            DecodeErrorKind::ResultAndError => "a response has exactly one of result and error",
            DecodeErrorKind::ResponseWithoutId => "a response must have an id",
            DecodeErrorKind::ErrorNotObject => "error must be an object",
            DecodeErrorKind::ErrorCode => "error.code must be an integer",
            DecodeErrorKind::ErrorMessage => "error.message must be a string",
        }
    }
}

impl fmt::Display for DecodeErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeErrorKind::Json(e) => write!(f, "Parse error: {e}"),
            DecodeErrorKind::DuplicateMember(name) => {
                write!(f, "Invalid Request: duplicated member \"{name}\"")
            }
            other => write!(f, "Invalid Request: {}", other.reason()),
        }
    }
}

/// A line, or a batch entry, that is not a valid JSON-RPC 2.0 message.
///
/// It carries what the receiver needs to answer: [`error_object`](Self::error_object)
/// and [`to_response`](Self::to_response), with the [`id`](Self::id) when it could be
/// read and was valid, even if other parts of the message were not.
#[derive(Clone, Debug, PartialEq)]
pub struct DecodeError {
    kind: DecodeErrorKind,
    /// The entry's id, when it was present, readable and valid (and not duplicated).
    pub id: Option<Id>,
    response_like: bool,
}

impl DecodeError {
    pub(crate) fn new(kind: DecodeErrorKind, id: Option<Id>, response_like: bool) -> DecodeError {
        DecodeError {
            kind,
            id,
            response_like,
        }
    }

    /// Why decoding failed.
    pub fn kind(&self) -> &DecodeErrorKind {
        &self.kind
    }

    /// `true` when the line was not JSON at all (`-32700`).
    pub fn is_parse_error(&self) -> bool {
        matches!(self.kind, DecodeErrorKind::Json(_))
    }

    /// `true` when the entry looked like a response: it had a `result` or an `error`
    /// member and no `method`. An endpoint that never answers responses (the Core)
    /// reports such an entry instead of replying to it.
    pub fn is_response_like(&self) -> bool {
        self.response_like
    }

    /// The error object the receiver should answer with: the code and a message
    /// saying what is wrong.
    pub fn error_object(&self) -> ErrorObject {
        ErrorObject::new(self.kind.code(), self.kind.to_string())
    }

    /// The response the receiver should answer with: the error object, and the id
    /// when it was recovered (`null` otherwise).
    pub fn to_response(&self) -> Response {
        Response::error(self.id.clone().unwrap_or(Id::Null), self.error_object())
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.kind, f)?;
        match &self.id {
            Some(id) => write!(f, " (id {id})"),
            None => Ok(()),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for DecodeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            DecodeErrorKind::Json(e) => Some(e),
            _ => None,
        }
    }
}
