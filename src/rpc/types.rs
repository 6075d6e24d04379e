//! The JSON-RPC 2.0 message model.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::json::{Number, Value};

/// A request id: a string, an integer, or `null`.
///
/// A reply echoes the id with the same type and value; integer ids keep their exact
/// text, so ids beyond 2^53 (or beyond 64 bits) are echoed unchanged. The decoder
/// accepts only integer texts for [`Id::Number`] (no fraction, no exponent).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Id {
    /// An integer id, kept as its exact text.
    Number(Number),
    /// A string id.
    String(String),
    /// `null`: used in replies when the request's id could not be read.
    Null,
}

impl From<u64> for Id {
    fn from(v: u64) -> Id {
        Id::Number(Number::from(v))
    }
}

impl From<&str> for Id {
    fn from(v: &str) -> Id {
        Id::String(String::from(v))
    }
}

impl From<String> for Id {
    fn from(v: String) -> Id {
        Id::String(v)
    }
}

/// A call that expects a [`Response`].
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// The id the response must echo.
    pub id: Id,
    /// The method name.
    pub method: String,
    /// Structured params (an array or an object), if any.
    pub params: Option<Value>,
}

/// A message that expects no reply.
#[derive(Clone, Debug, PartialEq)]
pub struct Notification {
    /// The method name.
    pub method: String,
    /// Structured params (an array or an object), if any.
    pub params: Option<Value>,
}

/// The reply to a [`Request`]: exactly one of a result or an error.
#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    /// The id of the request this answers (`null` when it could not be read).
    pub id: Id,
    /// `Ok(result)` or `Err(error)`.
    pub outcome: Result<Value, ErrorObject>,
}

/// One JSON-RPC 2.0 message.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    /// A request (has an id).
    Request(Request),
    /// A notification (no id).
    Notification(Notification),
    /// A response (result or error).
    Response(Response),
}

/// The `error` member of a response.
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorObject {
    /// The error code.
    pub code: ErrorCode,
    /// A short description.
    pub message: String,
    /// Extra information, if any.
    pub data: Option<Value>,
}

/// A JSON-RPC error code: the integer on the wire, compared by value.
///
/// The specification names five codes, which are constants here; it reserves
/// `-32768..=-32000`, of which `-32099..=-32000` are implementation-defined server
/// errors (the Dhara protocol calls them extension-specific); every other integer is
/// an application code. Two codes are equal exactly when they write the same integer.
///
/// ```
/// use dhara_protocol::rpc::ErrorCode;
///
/// assert_eq!(ErrorCode::from(-32601), ErrorCode::METHOD_NOT_FOUND);
/// assert_eq!(ErrorCode::METHOD_NOT_FOUND.name(), Some("Method not found"));
/// assert!(ErrorCode::new(-32050).is_server_error());
/// assert!(!ErrorCode::new(7).is_reserved());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ErrorCode(i64);

impl ErrorCode {
    /// `-32700`: the text is not valid JSON.
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// `-32600`: the JSON is not a valid request object.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// `-32601`: the method does not exist or is not available.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// `-32602`: invalid method parameters.
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// `-32603`: internal JSON-RPC error.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);

    /// The code for an integer.
    pub const fn new(code: i64) -> ErrorCode {
        ErrorCode(code)
    }

    /// The integer code.
    pub const fn code(self) -> i64 {
        self.0
    }

    /// `true` in `-32099..=-32000`, the implementation-defined server errors.
    pub const fn is_server_error(self) -> bool {
        -32099 <= self.0 && self.0 <= -32000
    }

    /// `true` in `-32768..=-32000`, the range the specification reserves.
    pub const fn is_reserved(self) -> bool {
        -32768 <= self.0 && self.0 <= -32000
    }

    /// The specification's name for the code: `"Parse error"`, `"Invalid Request"`,
    /// `"Method not found"`, `"Invalid params"`, `"Internal error"` or `"Server error"`;
    /// `None` for other codes.
    pub const fn name(self) -> Option<&'static str> {
        match self.0 {
            -32700 => Some("Parse error"),
            -32600 => Some("Invalid Request"),
            -32601 => Some("Method not found"),
            -32602 => Some("Invalid params"),
            -32603 => Some("Internal error"),
            -32099..=-32000 => Some("Server error"),
            _ => None,
        }
    }
}

impl core::fmt::Debug for ErrorCode {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.name() {
            Some(name) => write!(f, "ErrorCode({} {name})", self.0),
            None => write!(f, "ErrorCode({})", self.0),
        }
    }
}

impl From<i64> for ErrorCode {
    fn from(code: i64) -> ErrorCode {
        ErrorCode(code)
    }
}

impl From<ErrorCode> for i64 {
    fn from(code: ErrorCode) -> i64 {
        code.code()
    }
}

impl ErrorObject {
    /// An error object with no `data`.
    pub fn new(code: impl Into<ErrorCode>, message: impl Into<String>) -> ErrorObject {
        ErrorObject {
            code: code.into(),
            message: message.into(),
            data: None,
        }
    }

    /// The same error object with `data` set.
    pub fn with_data(mut self, data: Value) -> ErrorObject {
        self.data = Some(data);
        self
    }
}

impl Id {
    /// The id as a `u64`, for a non-negative integer id in range.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Id::Number(n) => n.as_u64(),
            _ => None,
        }
    }

    /// The id as an `i64`, for an integer id in range.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Id::Number(n) => n.as_i64(),
            _ => None,
        }
    }

    /// The string, for a string id.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Id::String(s) => Some(s),
            _ => None,
        }
    }

    /// `true` for the `null` id.
    pub fn is_null(&self) -> bool {
        matches!(self, Id::Null)
    }
}

impl fmt::Display for Id {
    /// Writes the id as JSON: `7`, `"abc"` (quoted and escaped) or `null`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = Vec::new();
        super::encode::write_id(self, &mut text);
        f.write_str(core::str::from_utf8(&text).map_err(|_| fmt::Error)?)
    }
}

impl Message {
    /// The id of a request or a response; `None` for a notification.
    pub fn id(&self) -> Option<&Id> {
        match self {
            Message::Request(r) => Some(&r.id),
            Message::Notification(_) => None,
            Message::Response(r) => Some(&r.id),
        }
    }

    /// The method of a request or a notification; `None` for a response.
    pub fn method(&self) -> Option<&str> {
        match self {
            Message::Request(r) => Some(&r.method),
            Message::Notification(n) => Some(&n.method),
            Message::Response(_) => None,
        }
    }
}

impl From<Request> for Message {
    fn from(request: Request) -> Message {
        Message::Request(request)
    }
}

impl From<Notification> for Message {
    fn from(notification: Notification) -> Message {
        Message::Notification(notification)
    }
}

impl From<Response> for Message {
    fn from(response: Response) -> Message {
        Message::Response(response)
    }
}

impl Response {
    /// A successful response.
    pub fn result(id: Id, result: Value) -> Response {
        Response {
            id,
            outcome: Ok(result),
        }
    }

    /// An error response.
    pub fn error(id: Id, error: ErrorObject) -> Response {
        Response {
            id,
            outcome: Err(error),
        }
    }
}

impl fmt::Display for ErrorCode {
    /// The integer code, then its name when it has one: `-32601 (Method not found)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{} ({name})", self.code()),
            None => write!(f, "{}", self.code()),
        }
    }
}

impl fmt::Display for ErrorObject {
    /// The message, then the code: `Method not found (code -32601)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code.code())
    }
}

#[cfg(feature = "std")]
impl std::error::Error for ErrorObject {}
