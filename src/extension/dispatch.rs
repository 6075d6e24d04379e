//! What each incoming line gets: the automatic answers and the events.

use alloc::format;
use alloc::string::String;

use super::{Event, Excerpt, Extension, PeerError, Route, SHUTTING_DOWN};
use crate::frame::{self, Frame};
use crate::json::{self, Object, RawValue, Reader, Value};
use crate::message::{
    ExecuteParams, FieldError, InitializeParams, InitializeResult, NOT_INITIALIZED, ToolList,
    method,
};
use crate::rpc::{
    self, DecodeError, DecodeOptions, ErrorCode, ErrorObject, Id, IncomingView, MessageView,
    PayloadOf, RequestView,
};

/// A payload as the Extension reads it: the params of a `tools/execute` request it
/// would run, read straight from the line; any other payload as its text.
enum Payload<'a> {
    Raw(RawValue<'a>),
    Execute(Result<ExecuteParams, FieldError>),
}

/// How the Extension reads payloads: `runs` when a `tools/execute` request would
/// run (initialized, not shutting down); a request's input is read with the
/// Extension's own `parser`, whose scratch space serves every request.
struct Payloads<'p> {
    runs: bool,
    parser: &'p mut json::Parser,
}

impl<'a> rpc::Payloads<'a> for Payloads<'_> {
    type Payload = Payload<'a>;

    #[inline(always)]
    fn read(
        &mut self,
        of: Option<PayloadOf<'_>>,
        reader: &mut Reader<'a>,
    ) -> Result<Payload<'a>, json::Error> {
        match of {
            Some(PayloadOf::Params {
                id: Some(_),
                method: method::TOOLS_EXECUTE,
            }) if self.runs => ExecuteParams::read_with(reader, self.parser).map(Payload::Execute),
            _ => reader.read_raw().map(Payload::Raw),
        }
    }
}

/// An entry of a line, its payloads as the Extension reads them.
type Entry<'a> = Result<MessageView<'a, Payload<'a>>, DecodeError>;

impl Extension {
    /// Decodes and handles the next complete line from stdin. `false` when there is
    /// none yet.
    ///
    /// The line is handled where it lies, in the decoder's buffer
    /// ([`frame::handle_next_frame`]): its messages borrow from it, and it is read
    /// once, the params of a `tools/execute` request straight into
    /// [`ExecuteParams`] in the same pass ([`rpc::decode_reading`]).
    pub(super) fn read_next_line(&mut self) -> bool {
        frame::handle_next_frame(self, |e| &mut e.decoder, Extension::handle_frame)
    }

    fn handle_frame(&mut self, frame: Frame<'_>) {
        match frame {
            Frame::Line(line) => self.handle_line(line),
            Frame::TooLong { prefix, len } => {
                let id = request_id_in_prefix(prefix);
                if let Some(id) = &id {
                    let error = self.too_long_error(len);
                    self.reply_error(Route::Line, id.clone(), error);
                }
                let line = Excerpt::of(prefix, len);
                self.report(PeerError::LineTooLong { line, id });
            }
            Frame::Truncated { prefix, len } => {
                let line = Excerpt::of(prefix, len);
                self.report(PeerError::Truncated { line });
            }
        }
    }

    /// The answer to a request too long to read: what any request would get in this
    /// state (shutting down, not initialized), else -32600 naming the limit.
    fn too_long_error(&self, len: u64) -> ErrorObject {
        if self.shutting_down {
            ErrorObject::new(SHUTTING_DOWN, "Shutting down")
        } else if !self.initialized {
            ErrorObject::new(NOT_INITIALIZED, "Not initialized")
        } else {
            ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "Invalid Request: a message of {len} bytes is over the limit of {} bytes",
                    self.config.max_line_bytes
                ),
            )
        }
    }

    /// Decodes a line and handles each of its messages.
    fn handle_line(&mut self, line: &[u8]) {
        // Only a request that would run is read as `tools/execute` params; any
        // other gets its answer from the text.
        let payloads = Payloads {
            runs: self.initialized && !self.shutting_down,
            parser: &mut self.parser,
        };
        let options = &DecodeOptions::DEFAULT.expecting(method::ALL);
        match rpc::decode_reading(line, options, payloads) {
            IncomingView::Single(Err(error)) if error.is_parse_error() => {
                let response = error.to_response();
                let line = Excerpt::of(line, u64::try_from(line.len()).unwrap_or(u64::MAX));
                self.report(PeerError::NotJson { line, error });
                self.reply(Route::Line, response);
            }
            IncomingView::Single(entry) => self.handle_entry(Route::Line, entry),
            IncomingView::Batch(entries) => {
                let batch = self.batches.open();
                for entry in entries {
                    self.handle_entry(Route::Batch(batch), entry);
                }
                if let Some(replies) = self.batches.seal(batch) {
                    self.write_batch(&replies);
                }
            }
        }
    }

    /// One message, alone or from a batch.
    fn handle_entry(&mut self, route: Route, entry: Entry<'_>) {
        match entry {
            Ok(MessageView::Request(request)) => self.handle_request(route, request),
            Ok(MessageView::Notification(n)) => {
                let params = n.params.and_then(|params| match params {
                    Payload::Raw(raw) => Some(raw),
                    // Read only for a request (an id before the params).
                    Payload::Execute(_) => {
                        debug_assert!(false, "execute params read for a notification");
                        None
                    }
                });
                self.handle_notification(&n.method, params);
            }
            Ok(MessageView::Response(response)) => {
                self.report(PeerError::UnexpectedResponse { id: response.id });
            }
            // Something shaped like a response: answering it could start an error
            // storm between two endpoints, and no request of ours is waiting for it.
            Err(e) if e.is_response_like() => {
                self.report(PeerError::UnexpectedResponse {
                    id: e.id.unwrap_or(Id::Null),
                });
            }
            Err(error) => {
                let response = error.to_response();
                self.report(PeerError::InvalidMessage { error });
                self.reply(route, response);
            }
        }
    }

    fn handle_request(&mut self, route: Route, request: RequestView<'_, Payload<'_>>) {
        let RequestView { id, method, params } = request;
        let params = match params {
            // Read for a `tools/execute` request while initialized and not
            // shutting down, where it runs.
            Some(Payload::Execute(params)) => return self.execute(route, id, params),
            Some(Payload::Raw(raw)) => Some(raw),
            None => None,
        };
        if self.shutting_down {
            let error = ErrorObject::new(SHUTTING_DOWN, "Shutting down");
            return self.reply_error(route, id, error);
        }
        match &*method {
            method::INITIALIZE => self.initialize(route, id, params),
            // `shutdown` is a notification; a Core that sends it as a request after
            // `initialize` gets it done all the same, and a `null` result. Before
            // `initialize` it is a request like any other: -32002, and nothing ends.
            method::SHUTDOWN if self.initialized => {
                self.reply_result(route, id, Value::Null);
                self.begin_shutdown();
            }
            _ if !self.initialized => {
                let error = ErrorObject::new(NOT_INITIALIZED, "Not initialized");
                self.reply_error(route, id, error);
            }
            method::TOOLS_LIST => {
                let tools = ToolList {
                    tools: self.registry.tools().to_vec(),
                };
                self.reply_result(route, id, Value::from(tools));
            }
            method::TOOLS_EXECUTE => {
                let params = ExecuteParams::from_raw_with(
                    params.unwrap_or(RawValue::NULL),
                    &mut self.parser,
                );
                self.execute(route, id, params);
            }
            // `progress` is defined, but only from the extension to the Core.
            method::PROGRESS => self.method_not_found(route, id, &method),
            _ if self.config.custom_methods => {
                if let Some(request) = self.start_request(route, id) {
                    self.events.push_back(Event::Request {
                        request,
                        method: method.into_owned(),
                        params: params.map(|params| self.parser.parse_raw(&params)),
                    });
                }
            }
            _ => self.method_not_found(route, id, &method),
        }
    }

    fn handle_notification(&mut self, method: &str, params: Option<RawValue<'_>>) {
        if method == method::SHUTDOWN {
            self.begin_shutdown();
        } else {
            self.events.push_back(Event::Notification {
                method: String::from(method),
                params: params.map(|params| self.parser.parse_raw(&params)),
            });
        }
    }

    fn initialize(&mut self, route: Route, id: Id, params: Option<RawValue<'_>>) {
        if self.initialized {
            let error = ErrorObject::new(ErrorCode::INVALID_REQUEST, "Already initialized");
            return self.reply_error(route, id, error);
        }
        match InitializeParams::from_raw(params.unwrap_or(RawValue::NULL)) {
            Err(e) => self.reply_error(route, id, invalid_params(&e)),
            Ok(params) => {
                self.initialized = true;
                let result = InitializeResult {
                    name: self.info.name.clone(),
                    version: self.info.version.clone(),
                    tools: self.registry.tools().to_vec(),
                };
                self.reply_result(route, id, Value::from(result));
                self.events.push_back(Event::Initialized { params });
            }
        }
    }

    /// A `tools/execute` request, its params read.
    fn execute(&mut self, route: Route, id: Id, params: Result<ExecuteParams, FieldError>) {
        let ExecuteParams { tool_name, input } = match params {
            Ok(params) => params,
            Err(e) => return self.reply_error(route, id, invalid_params(&e)),
        };
        let Some((_, input_schema)) = self.registry.find(tool_name.as_bytes()) else {
            let error = ErrorObject::new(
                ErrorCode::INVALID_PARAMS,
                format!("Unknown tool '{tool_name}'"),
            )
            .with_data(data([("toolName", Value::from(tool_name))]));
            return self.reply_error(route, id, error);
        };
        if self.config.validate_input {
            if let Err(e) = input_schema.map_or(Ok(()), |schema| schema.validate(&input)) {
                let error =
                    ErrorObject::new(ErrorCode::INVALID_PARAMS, e.message()).with_data(data([
                        ("toolName", Value::from(tool_name)),
                        ("path", Value::from(e.path())),
                    ]));
                return self.reply_error(route, id, error);
            }
        }
        if let Some(request) = self.start_request(route, id) {
            self.events.push_back(Event::Execute {
                request,
                tool_name,
                input,
            });
        }
    }

    fn method_not_found(&mut self, route: Route, id: Id, method: &str) {
        let error = ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "Method not found")
            .with_data(data([("method", Value::from(method))]));
        self.reply_error(route, id, error);
    }

    fn reply_result(&mut self, route: Route, id: Id, result: Value) {
        self.reply(route, rpc::Response::result(id, result));
    }

    fn reply_error(&mut self, route: Route, id: Id, error: ErrorObject) {
        self.reply(route, rpc::Response::error(id, error));
    }

    fn report(&mut self, error: PeerError) {
        self.events.push_back(Event::Protocol(error));
    }
}

/// -32602 for params that are missing or mistyped, naming the field.
fn invalid_params(e: &FieldError) -> ErrorObject {
    ErrorObject::new(ErrorCode::INVALID_PARAMS, format!("Invalid params: {e}"))
        .with_data(data([("path", Value::from(e.path()))]))
}

/// An error's `data` object.
fn data<const N: usize>(members: [(&str, Value); N]) -> Value {
    Value::Object(Object::from_iter(members))
}

/// The `"id"` of a request from the first bytes of a line too long to decode.
///
/// `None` when [`rpc::LinePrefix::scan`] finds no single complete id before the cut, or
/// when a `result` or `error` member shows the line is a response (never answered).
fn request_id_in_prefix(prefix: &[u8]) -> Option<Id> {
    let found = rpc::LinePrefix::scan(prefix);
    if found.has_outcome { None } else { found.id }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_in_prefix_of_a_cut_line() {
        let id = |text: &[u8]| request_id_in_prefix(text);
        assert_eq!(
            id(br#"{"jsonrpc":"2.0","id":7,"method":"x","params":{"a":"bbbb"#),
            Some(Id::from(7))
        );
        assert_eq!(id(br#"{"id":"abc","params":["#), Some(Id::from("abc")));
        assert_eq!(id(br#"{"params":{"a":"bbbbbbbbbbbbbbbb"#), None);
        assert_eq!(id(br#"{"id":1,"result":"xxxxx"#), None);
        assert_eq!(id(br#"{"id":1,"id":2,"params":"#), None);
        assert_eq!(id(br#"{"id":1.5,"params":"#), None);
        assert_eq!(id(br#"[{"id":1,"params":"#), None);
        assert_eq!(id(br#"{"id":"\ud800","params":"#), None);
        assert_eq!(id(b"not json"), None);
    }
}
