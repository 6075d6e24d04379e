//! Decoding one line into JSON-RPC 2.0 messages, in a single pass over its bytes.
//!
//! The envelope is read member by member with [`json::Reader`], without building a
//! tree for it. The payloads (`params`, `result` and `error.data`) are taken in one of
//! two forms, by the same code: built as [`Value`]s for [`decode`], or left as
//! [`RawValue`]s, checked slices of the line, for [`decode_view`]. A JSON syntax error
//! anywhere in the line fails the whole line (Parse error), while a well-formed entry
//! that breaks a JSON-RPC rule fails only that entry (Invalid Request), keeping its id
//! when the id itself was valid.

use alloc::borrow::Cow;
use alloc::vec::Vec;

use super::error::{DecodeError, DecodeErrorKind};
use super::types::{ErrorCode, ErrorObject, Id, Message, Notification, Request, Response};
use super::view::{
    ErrorView, IncomingView, MessageView, NotificationView, RequestView, ResponseView,
};
use crate::json::{self, Name, ParseOptions, RawValue, Reader, Value};

/// What one line holds: a single message or a batch.
///
/// Each message is either valid or a [`DecodeError`] to answer (or report). A line
/// that is not JSON, and the empty batch `[]`, give a single error.
#[derive(Clone, Debug, PartialEq)]
pub enum Incoming {
    /// One message (the line held an object, or was not a valid batch at all).
    Single(Result<Message, DecodeError>),
    /// A non-empty batch: one entry per element, in order.
    Batch(Vec<Result<Message, DecodeError>>),
}

/// How [`decode`] and [`decode_view`] read a line: a small `Copy` value, built from
/// [`DecodeOptions::DEFAULT`].
///
/// ```
/// use dhara_protocol::json::ParseOptions;
/// use dhara_protocol::rpc::DecodeOptions;
///
/// let options = DecodeOptions::DEFAULT
///     .json(ParseOptions { max_depth: 16, ..ParseOptions::DEFAULT })
///     .expecting(&["tools/list", "tools/execute"]);
/// assert_eq!(options.json.max_depth, 16);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DecodeOptions {
    /// The JSON limits (depth, lone surrogates). A view's payloads keep them, so
    /// [`RawValue::parse`] and [`RawValue::reader`] read them under the same limits.
    pub json: ParseOptions,
    /// The methods the receiver expects. In a view, a method that is one of them,
    /// however it is spelled in the line, is handed out as that `&'static str`
    /// (`Cow::Borrowed`). The messages are the same with
    /// or without it; [`decode`] makes an owned `String` of every method either way.
    pub methods: &'static [&'static str],
}

impl DecodeOptions {
    /// The default JSON limits ([`ParseOptions::DEFAULT`]), no expected methods.
    pub const DEFAULT: DecodeOptions = DecodeOptions {
        json: ParseOptions::DEFAULT,
        methods: &[],
    };

    /// These options with the JSON limits `json`.
    #[must_use]
    pub const fn json(self, json: ParseOptions) -> DecodeOptions {
        DecodeOptions { json, ..self }
    }

    /// These options expecting `methods` (see [`DecodeOptions::methods`]).
    #[must_use]
    pub const fn expecting(self, methods: &'static [&'static str]) -> DecodeOptions {
        DecodeOptions { methods, ..self }
    }
}

impl Default for DecodeOptions {
    fn default() -> DecodeOptions {
        DecodeOptions::DEFAULT
    }
}

/// Decodes one line (without its newline) into owned messages.
///
/// Never panics; every failure is a [`DecodeError`] inside the returned
/// [`Incoming`].
pub fn decode(line: &[u8], options: DecodeOptions) -> Incoming {
    decode_line(Owned, line, &options.json)
}

/// Decodes one line (without its newline) into messages borrowed from it.
///
/// The line is checked exactly as [`decode`] checks it, with the same errors, but no
/// tree is built: the payloads are [`RawValue`]s, and the method and the error
/// message are borrowed from the line when they hold no escape. Decoding a request
/// with an integer id allocates nothing.
///
/// ```
/// use std::borrow::Cow;
/// use dhara_protocol::rpc::{self, DecodeOptions, Id, IncomingView, MessageView};
///
/// const METHODS: &[&str] = &["tools/list", "tools/execute"];
/// let line = br#"{"jsonrpc":"2.0","id":7,"method":"tools/execute","params":{"toolName":"grep"}}"#;
/// let view = rpc::decode_view(line, DecodeOptions::DEFAULT.expecting(METHODS));
/// let IncomingView::Single(Ok(MessageView::Request(request))) = view else {
///     panic!("a valid request");
/// };
/// assert_eq!(request.id, Id::from(7u64));
/// assert!(matches!(request.method, Cow::Borrowed(m) if std::ptr::eq(m, METHODS[1])));
/// assert_eq!(request.params.unwrap().as_str(), r#"{"toolName":"grep"}"#);
/// ```
pub fn decode_view(line: &[u8], options: DecodeOptions) -> IncomingView<'_> {
    decode_reading(line, &options, Raw)
}

/// Which payload a [`Payloads`] reader is offered, with what the envelope said
/// before it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum PayloadOf<'h> {
    /// The `params` of a request (`id` present) or a notification (`id` not seen
    /// yet: it may still come after the params).
    Params {
        /// The id, when it came before the params.
        id: Option<&'h Id>,
        /// The method, which came before the params.
        method: &'h str,
    },
    /// The `result` of a response.
    Result {
        /// The response's id, which came before the result.
        id: &'h Id,
    },
}

/// How a receiver takes the payloads (`params` and `result`) of the lines it
/// decodes: as their checked text ([`Raw`]), or, for the payloads it knows, read
/// straight into the typed values it expects, in the same pass over the line.
pub(crate) trait Payloads<'a> {
    /// What a payload becomes.
    type Payload;
    /// Reads the whole payload at `reader`, told what it is when the envelope is
    /// far enough along (`None` otherwise). A JSON error fails the line, as it
    /// does when the payload is taken as text.
    fn read(
        &mut self,
        of: Option<PayloadOf<'_>>,
        reader: &mut Reader<'a>,
    ) -> Result<Self::Payload, json::Error>;
}

/// Payloads taken as their checked text.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Raw;

impl<'a> Payloads<'a> for Raw {
    type Payload = RawValue<'a>;

    #[inline]
    fn read(
        &mut self,
        _: Option<PayloadOf<'_>>,
        reader: &mut Reader<'a>,
    ) -> Result<RawValue<'a>, json::Error> {
        reader.read_raw()
    }
}

/// Decodes one line into messages borrowed from it, each payload taken by
/// `payloads`: the one reading the endpoints make of each line.
///
/// `options.methods` are the methods the receiver expects (see
/// [`DecodeOptions::methods`]).
pub(crate) fn decode_reading<'a, P: Payloads<'a>>(
    line: &'a [u8],
    options: &DecodeOptions,
    payloads: P,
) -> IncomingView<'a, P::Payload> {
    let methods = options.methods;
    decode_line(Borrowed { methods, payloads }, line, &options.json)
}

/// [`decode_reading`] for a line read as one message even when it is an array
/// (which is then an Invalid Request, as a batch's entry that is not an object
/// is): for an element of a batch [`scan_batch`] found, read on its own.
pub(crate) fn decode_entry<'a, P: Payloads<'a>>(
    line: &'a [u8],
    options: &DecodeOptions,
    payloads: P,
) -> Result<MessageView<'a, P::Payload>, DecodeError> {
    let methods = options.methods;
    let mut form = Borrowed { methods, payloads };
    let mut reader = Reader::new(line, &options.json);
    let read = read_entry(&mut form, &mut reader).and_then(|entry| reader.finish().map(|()| entry));
    read.unwrap_or_else(|e| Err(DecodeError::new(DecodeErrorKind::Json(e), None, false)))
}

/// Finds the text of each element of a batch line (one that starts with `[`),
/// checking that the whole line is JSON; an entry's message is read later, on its
/// own ([`decode_entry`]). The error is what [`decode_reading`] gives for the
/// line when it is not JSON, or the empty batch.
pub(crate) fn scan_batch(
    line: &[u8],
    options: &ParseOptions,
) -> Result<Vec<core::ops::Range<usize>>, DecodeError> {
    let mut reader = Reader::new(line, options);
    let scan = |reader: &mut Reader<'_>| {
        reader.begin_array()?;
        let mut ranges = Vec::new();
        while reader.next_element()? {
            ranges.push(reader.skip_value()?);
        }
        reader.finish()?;
        Ok(ranges)
    };
    match scan(&mut reader) {
        Ok(ranges) if ranges.is_empty() => {
            Err(DecodeError::new(DecodeErrorKind::EmptyBatch, None, false))
        }
        Ok(ranges) => Ok(ranges),
        Err(e) => Err(DecodeError::new(DecodeErrorKind::Json(e), None, false)),
    }
}

/// The `error` member's parts, with the data in the form being decoded.
struct ErrorParts<'a, P> {
    code: ErrorCode,
    message: Cow<'a, str>,
    data: Option<P>,
}

/// How the payloads are taken, and the messages put together: the one difference
/// between [`decode`] and [`decode_reading`].
trait Form<'a> {
    /// What `params` and `result` become.
    type Payload;
    /// What `error.data` becomes.
    type ErrorData;
    /// What a valid entry becomes.
    type Message;
    /// The methods the receiver expects, handed out as they are when a line's
    /// method is one of them.
    fn methods(&self) -> &'static [&'static str] {
        &[]
    }
    /// Reads one payload, told what it is when the envelope is far enough along.
    fn payload(
        &mut self,
        of: Option<PayloadOf<'_>>,
        reader: &mut Reader<'a>,
    ) -> Result<Self::Payload, json::Error>;
    /// Reads the `data` of an error.
    fn error_data(&mut self, reader: &mut Reader<'a>) -> Result<Self::ErrorData, json::Error>;
    fn request(id: Id, method: Cow<'a, str>, params: Option<Self::Payload>) -> Self::Message;
    fn notification(method: Cow<'a, str>, params: Option<Self::Payload>) -> Self::Message;
    fn response(
        id: Id,
        outcome: Result<Self::Payload, ErrorParts<'a, Self::ErrorData>>,
    ) -> Self::Message;
}

/// What a whole line becomes, a single message or a batch.
trait Line<'a>: Form<'a> {
    type Incoming;
    fn single(entry: Result<Self::Message, DecodeError>) -> Self::Incoming;
    fn batch(entries: Vec<Result<Self::Message, DecodeError>>) -> Self::Incoming;
}

/// Owned messages: payloads built as [`Value`]s.
#[derive(Clone)]
struct Owned;

impl<'a> Line<'a> for Owned {
    type Incoming = Incoming;

    fn single(entry: Result<Message, DecodeError>) -> Incoming {
        Incoming::Single(entry)
    }

    fn batch(entries: Vec<Result<Message, DecodeError>>) -> Incoming {
        Incoming::Batch(entries)
    }
}

impl<'a> Form<'a> for Owned {
    type Payload = Value;
    type ErrorData = Value;
    type Message = Message;

    fn payload(
        &mut self,
        _: Option<PayloadOf<'_>>,
        reader: &mut Reader<'a>,
    ) -> Result<Value, json::Error> {
        reader.read_value()
    }

    fn error_data(&mut self, reader: &mut Reader<'a>) -> Result<Value, json::Error> {
        reader.read_value()
    }

    fn request(id: Id, method: Cow<'a, str>, params: Option<Value>) -> Message {
        let method = method.into_owned();
        Message::Request(Request { id, method, params })
    }

    fn notification(method: Cow<'a, str>, params: Option<Value>) -> Message {
        let method = method.into_owned();
        Message::Notification(Notification { method, params })
    }

    fn response(id: Id, outcome: Result<Value, ErrorParts<'a, Value>>) -> Message {
        let outcome = outcome.map_err(|e| ErrorObject {
            code: e.code,
            message: e.message.into_owned(),
            data: e.data,
        });
        Message::Response(Response { id, outcome })
    }
}

/// Borrowed messages: payloads taken by a [`Payloads`] reader, and the methods the
/// receiver expects.
#[derive(Clone)]
struct Borrowed<P> {
    methods: &'static [&'static str],
    payloads: P,
}

impl<'a, P: Payloads<'a>> Line<'a> for Borrowed<P> {
    type Incoming = IncomingView<'a, P::Payload>;

    fn single(entry: Result<MessageView<'a, P::Payload>, DecodeError>) -> Self::Incoming {
        IncomingView::Single(entry)
    }

    fn batch(entries: Vec<Result<MessageView<'a, P::Payload>, DecodeError>>) -> Self::Incoming {
        IncomingView::Batch(entries)
    }
}

impl<'a, P: Payloads<'a>> Form<'a> for Borrowed<P> {
    type Payload = P::Payload;
    type ErrorData = RawValue<'a>;
    type Message = MessageView<'a, P::Payload>;

    fn methods(&self) -> &'static [&'static str] {
        self.methods
    }

    #[inline(always)]
    fn payload(
        &mut self,
        of: Option<PayloadOf<'_>>,
        reader: &mut Reader<'a>,
    ) -> Result<P::Payload, json::Error> {
        self.payloads.read(of, reader)
    }

    fn error_data(&mut self, reader: &mut Reader<'a>) -> Result<RawValue<'a>, json::Error> {
        reader.read_raw()
    }

    fn request(id: Id, method: Cow<'a, str>, params: Option<P::Payload>) -> Self::Message {
        MessageView::Request(RequestView { id, method, params })
    }

    fn notification(method: Cow<'a, str>, params: Option<P::Payload>) -> Self::Message {
        MessageView::Notification(NotificationView { method, params })
    }

    fn response(
        id: Id,
        outcome: Result<P::Payload, ErrorParts<'a, RawValue<'a>>>,
    ) -> Self::Message {
        let outcome = outcome.map_err(|e| ErrorView {
            code: e.code,
            message: e.message,
            data: e.data,
        });
        MessageView::Response(ResponseView { id, outcome })
    }
}

/// Decodes a line in form `F`; any JSON error fails the whole line.
fn decode_line<'a, F: Line<'a>>(
    mut form: F,
    line: &'a [u8],
    options: &ParseOptions,
) -> F::Incoming {
    let mut reader = Reader::new(line, options);
    let read = if reader.peek() == Some(b'[') {
        read_batch(&mut form, &mut reader)
    } else {
        // The single message is checked to end the line before it is wrapped, so
        // it is moved once, into the answer.
        read_entry(&mut form, &mut reader)
            .and_then(|entry| reader.finish().map(|()| entry))
            .map(F::single)
    };
    match read {
        Ok(line) => line,
        Err(e) => F::single(Err(DecodeError::new(DecodeErrorKind::Json(e), None, false))),
    }
}

/// Decodes a batch, the rest of the line included.
fn read_batch<'a, F: Line<'a>>(
    form: &mut F,
    reader: &mut Reader<'a>,
) -> Result<F::Incoming, json::Error> {
    reader.begin_array()?;
    let mut entries = Vec::new();
    while reader.next_element()? {
        entries.push(read_entry(form, reader)?);
    }
    reader.finish()?;
    Ok(if entries.is_empty() {
        F::single(Err(DecodeError::new(
            DecodeErrorKind::EmptyBatch,
            None,
            false,
        )))
    } else {
        F::batch(entries)
    })
}

/// What reading one entry gives: the message or the error it makes; the outer
/// `Err` is a JSON error.
type Entry<'a, F> = Result<Result<<F as Form<'a>>::Message, DecodeError>, json::Error>;

/// Decodes one message: the whole line, or one element of a batch.
///
/// One loop over the members; each name is matched against the envelope's
/// ([`Reader::next_known_member`] compares one written without escapes where it
/// lies), and each value read by [`Envelope::read_member`].
#[inline]
fn read_entry<'a, F: Form<'a>>(form: &mut F, reader: &mut Reader<'a>) -> Entry<'a, F> {
    if reader.peek() != Some(b'{') {
        reader.skip_value()?;
        return Ok(Err(DecodeError::new(
            DecodeErrorKind::NotAnObject,
            None,
            false,
        )));
    }
    let mut envelope = Envelope::<F>::default();
    // The version first, as every writer of the protocol's lines spells it, is
    // taken in one compare; any other start is read by the loop.
    if reader.skip_prefix(r#"{"jsonrpc":"2.0""#) {
        envelope.seen = Member::Jsonrpc.bit();
        envelope.read_usual_members(form, reader)?;
    } else {
        reader.begin_object()?;
    }
    while let Some(name) = reader.next_known_member(Member::NAMES)? {
        let member = match name {
            Name::Known(index) => Member::ALL.get(index).copied(),
            Name::Other(_) => None,
        };
        envelope.read_member(form, member, reader)?;
    }
    Ok(envelope.into_message())
}

/// The members that decide what a message means. Any other member is ignored.
#[derive(Clone, Copy)]
enum Member {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
}

impl Member {
    /// Every member, in the order of [`Member::NAMES`]: the order in which the
    /// protocol's writers write them, so a name is found by its first compare.
    const ALL: [Member; 6] = [
        Member::Jsonrpc,
        Member::Id,
        Member::Method,
        Member::Params,
        Member::Result,
        Member::Error,
    ];

    /// The members' names on the wire.
    const NAMES: &'static [&'static str] =
        &["jsonrpc", "id", "method", "params", "result", "error"];

    fn name(self) -> &'static str {
        match self {
            Member::Jsonrpc => "jsonrpc",
            Member::Id => "id",
            Member::Method => "method",
            Member::Params => "params",
            Member::Result => "result",
            Member::Error => "error",
        }
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// What has been read of one envelope so far.
struct Envelope<'a, F: Form<'a>> {
    /// The members present (one bit per [`Member`]), valid or not.
    seen: u8,
    /// The id, unless it was invalid or given twice.
    id: Option<Id>,
    method: Option<Cow<'a, str>>,
    params: Option<F::Payload>,
    result: Option<F::Payload>,
    error: Option<ErrorParts<'a, F::ErrorData>>,
    /// The first rule the members broke, in reading order.
    problem: Option<DecodeErrorKind>,
}

impl<'a, F: Form<'a>> Default for Envelope<'a, F> {
    fn default() -> Self {
        Envelope {
            seen: 0,
            id: None,
            method: None,
            params: None,
            result: None,
            error: None,
            problem: None,
        }
    }
}

impl<'a, F: Form<'a>> Envelope<'a, F> {
    fn has(&self, member: Member) -> bool {
        self.seen & member.bit() != 0
    }

    fn note(&mut self, problem: DecodeErrorKind) {
        self.problem.get_or_insert(problem);
    }

    /// Reads one member's value.
    #[inline]
    fn read_member(
        &mut self,
        form: &mut F,
        member: Option<Member>,
        reader: &mut Reader<'a>,
    ) -> Result<(), json::Error> {
        let Some(member) = member else {
            reader.skip_value()?;
            return Ok(());
        };
        if self.has(member) {
            if let Member::Id = member {
                self.id = None;
            }
            self.note(DecodeErrorKind::DuplicateMember(member.name()));
            reader.skip_value()?;
            return Ok(());
        }
        self.seen |= member.bit();
        match member {
            Member::Jsonrpc => self.read_version(reader),
            Member::Id => self.read_id(reader),
            Member::Method => self.read_method(form, reader),
            Member::Params => self.read_params(form, reader),
            Member::Result => self.read_result(form, reader),
            Member::Error => self.read_error(form, reader),
        }
    }

    /// Reads the members that follow the version as the protocol's writers write
    /// them, in their order: `,"id":`, `,"method":`, then `,"params":` or
    /// `,"result":`, each name taken with one compare. The member loop goes on from
    /// wherever this stops.
    #[inline(always)]
    fn read_usual_members(
        &mut self,
        form: &mut F,
        reader: &mut Reader<'a>,
    ) -> Result<(), json::Error> {
        if reader.skip_prefix(r#","id":"#) {
            self.seen |= Member::Id.bit();
            self.read_id(reader)?;
        }
        if reader.skip_prefix(r#","method":"#) {
            self.seen |= Member::Method.bit();
            self.read_method(form, reader)?;
        }
        if reader.skip_prefix(r#","params":"#) {
            self.seen |= Member::Params.bit();
            self.read_params(form, reader)?;
        } else if reader.skip_prefix(r#","result":"#) {
            self.seen |= Member::Result.bit();
            self.read_result(form, reader)?;
        }
        Ok(())
    }

    #[inline(always)]
    fn read_version(&mut self, reader: &mut Reader<'a>) -> Result<(), json::Error> {
        if !read_version(reader)? {
            self.note(DecodeErrorKind::Version);
        }
        Ok(())
    }

    #[inline(always)]
    fn read_id(&mut self, reader: &mut Reader<'a>) -> Result<(), json::Error> {
        match read_id(reader)? {
            // Unset until now (each member is read once): nothing to drop.
            Ok(id) => _ = self.id.get_or_insert(id),
            Err(problem) => self.note(problem),
        }
        Ok(())
    }

    #[inline(always)]
    fn read_method(&mut self, form: &F, reader: &mut Reader<'a>) -> Result<(), json::Error> {
        match read_text(reader, form.methods())? {
            Some((method, false)) => _ = self.method.get_or_insert(method),
            Some((_, true)) => self.note(DecodeErrorKind::MethodLoneSurrogate),
            None => self.note(DecodeErrorKind::MethodNotString),
        }
        Ok(())
    }

    #[inline(always)]
    fn read_params(&mut self, form: &mut F, reader: &mut Reader<'a>) -> Result<(), json::Error> {
        match reader.peek() {
            Some(b'[' | b'{') => {
                let of = self.method.as_deref().map(|method| PayloadOf::Params {
                    id: self.id.as_ref(),
                    method,
                });
                self.params = Some(form.payload(of, reader)?);
            }
            _ => {
                reader.skip_value()?;
                self.note(DecodeErrorKind::ParamsNotStructured);
            }
        }
        Ok(())
    }

    #[inline(always)]
    fn read_result(&mut self, form: &mut F, reader: &mut Reader<'a>) -> Result<(), json::Error> {
        let of = self.id.as_ref().map(|id| PayloadOf::Result { id });
        self.result = Some(form.payload(of, reader)?);
        Ok(())
    }

    #[inline(always)]
    fn read_error(&mut self, form: &mut F, reader: &mut Reader<'a>) -> Result<(), json::Error> {
        match read_error_object(form, reader)? {
            Ok(error) => self.error = Some(error),
            Err(problem) => self.note(problem),
        }
        Ok(())
    }

    /// Applies the rules that depend on which members are present, and builds the
    /// message or the error.
    #[inline(always)]
    fn into_message(self) -> Result<F::Message, DecodeError> {
        let has_version = self.has(Member::Jsonrpc);
        let response_like =
            (self.has(Member::Result) || self.has(Member::Error)) && !self.has(Member::Method);
        // Taken apart at once: each part moves once, into the message.
        let Envelope {
            id,
            method,
            params,
            result,
            error,
            problem,
            ..
        } = self;
        let fail = |kind, id| Err(DecodeError::new(kind, id, response_like));
        if let Some(problem) = problem {
            return fail(problem, id);
        }
        if !has_version {
            return fail(DecodeErrorKind::Version, id);
        }
        // No problem was noted, so every member present was read into its field.
        match (method, result, error, id) {
            (Some(method), None, None, Some(id)) => Ok(F::request(id, method, params)),
            (Some(method), None, None, None) => Ok(F::notification(method, params)),
            (Some(_), _, _, id) => fail(DecodeErrorKind::MethodWithOutcome, id),
            (None, Some(_), Some(_), id) => fail(DecodeErrorKind::ResultAndError, id),
            (None, None, None, id) => fail(DecodeErrorKind::NoMethodOrOutcome, id),
            (None, _, _, None) => fail(DecodeErrorKind::ResponseWithoutId, None),
            (None, Some(result), None, Some(id)) => Ok(F::response(id, Ok(result))),
            (None, None, Some(error), Some(id)) => Ok(F::response(id, Err(error))),
        }
    }
}

/// Reads a string value, borrowed from the line when it holds no escape (or, when
/// it is one of `known`, that one), with whether a lone surrogate escape was
/// replaced; `None` (with the value skipped) when the value is not a string.
fn read_text<'a>(
    reader: &mut Reader<'a>,
    known: &'static [&'static str],
) -> Result<Option<(Cow<'a, str>, bool)>, json::Error> {
    if reader.peek() != Some(b'"') {
        reader.skip_value()?;
        return Ok(None);
    }
    Ok(Some(match reader.read_known_str(known)? {
        (Name::Known(index), replaced) => {
            let name = known.get(index).copied();
            debug_assert!(name.is_some(), "a known name's index is in range");
            (Cow::Borrowed(name.unwrap_or("")), replaced)
        }
        (Name::Other(text), replaced) => (text, replaced),
    }))
}

/// Reads the `jsonrpc` value: whether it is the string `"2.0"`, however spelled
/// (`"2\u002e0"` is `"2.0"` too).
#[inline]
fn read_version(reader: &mut Reader<'_>) -> Result<bool, json::Error> {
    if reader.peek() != Some(b'"') {
        reader.skip_value()?;
        return Ok(false);
    }
    Ok(reader.read_known_str(&["2.0"])?.0 == Name::Known(0))
}

/// Reads an `id` value: a string, an integer text or `null`.
fn read_id(reader: &mut Reader<'_>) -> Result<Result<Id, DecodeErrorKind>, json::Error> {
    match reader.peek() {
        Some(b'"') => {
            let (text, replaced) = reader.read_str()?;
            Ok(if replaced {
                Err(DecodeErrorKind::IdLoneSurrogate)
            } else {
                Ok(Id::String(text.into_owned()))
            })
        }
        Some(b'-' | b'0'..=b'9') => match reader.read_integer()? {
            Some(n) => Ok(Ok(Id::Number(n))),
            None => Ok(Err(DecodeErrorKind::InvalidId)),
        },
        Some(b'n') => {
            reader.skip_value()?; // `null`, or a JSON error
            Ok(Ok(Id::Null))
        }
        _ => {
            reader.skip_value()?;
            Ok(Err(DecodeErrorKind::InvalidId))
        }
    }
}

/// Reads the `error` member of a response: `{"code": integer, "message": string,
/// "data"?: any}`. Other members are ignored; a duplicated one is an error.
fn read_error_object<'a, F: Form<'a>>(
    form: &mut F,
    reader: &mut Reader<'a>,
) -> Result<Result<ErrorParts<'a, F::ErrorData>, DecodeErrorKind>, json::Error> {
    if reader.peek() != Some(b'{') {
        reader.skip_value()?;
        return Ok(Err(DecodeErrorKind::ErrorNotObject));
    }
    reader.begin_object()?;
    let mut code: Option<Option<i64>> = None;
    let mut message: Option<Option<Cow<'a, str>>> = None;
    let mut data: Option<F::ErrorData> = None;
    let mut problem = None;
    while let Some(name) = reader.next_known_member(ErrorMember::NAMES)? {
        let name = match name {
            Name::Known(0) => ErrorMember::Code,
            Name::Known(1) => ErrorMember::Message,
            Name::Known(_) => ErrorMember::Data,
            Name::Other(_) => ErrorMember::Other,
        };
        let duplicate = match name {
            ErrorMember::Code if code.is_none() => {
                code = Some(read_integer(reader)?);
                continue;
            }
            ErrorMember::Message if message.is_none() => {
                message = Some(read_text(reader, &[])?.map(|(text, _)| text));
                continue;
            }
            ErrorMember::Data if data.is_none() => {
                data = Some(form.error_data(reader)?);
                continue;
            }
            ErrorMember::Code => "error.code",
            ErrorMember::Message => "error.message",
            ErrorMember::Data => "error.data",
            ErrorMember::Other => {
                reader.skip_value()?;
                continue;
            }
        };
        problem.get_or_insert(DecodeErrorKind::DuplicateMember(duplicate));
        reader.skip_value()?;
    }
    if let Some(problem) = problem {
        return Ok(Err(problem));
    }
    let Some(Some(code)) = code else {
        return Ok(Err(DecodeErrorKind::ErrorCode));
    };
    let Some(Some(message)) = message else {
        return Ok(Err(DecodeErrorKind::ErrorMessage));
    };
    Ok(Ok(ErrorParts {
        code: ErrorCode::new(code),
        message,
        data,
    }))
}

/// The members of an `error` object; any other member is ignored.
enum ErrorMember {
    Code,
    Message,
    Data,
    Other,
}

impl ErrorMember {
    /// The names of `code`, `message` and `data`, in that order.
    const NAMES: &'static [&'static str] = &["code", "message", "data"];
}

/// Reads an integer that fits an `i64`; `None` (value consumed) for anything else.
fn read_integer(reader: &mut Reader<'_>) -> Result<Option<i64>, json::Error> {
    match reader.peek() {
        Some(b'-' | b'0'..=b'9') => Ok(reader.read_number()?.as_i64()),
        _ => {
            reader.skip_value()?;
            Ok(None)
        }
    }
}

/// What the first bytes of a line tell about its message, when the whole line was
/// too long to decode (the framing layer keeps the first few KiB of such a line).
///
/// Built by [`LinePrefix::scan`]. It lets an endpoint fail the right call at once: the
/// Extension answers an oversized request with an error naming its id; the Core ends
/// the call an oversized response was for.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinePrefix {
    /// The id, when one valid and complete id member appears before the cut and the
    /// line is a JSON object. `None` when two id members appear.
    pub id: Option<Id>,
    /// A `method` member appears before the cut: a request or a notification.
    pub has_method: bool,
    /// A `result` or `error` member appears before the cut: a response.
    pub has_outcome: bool,
}

impl LinePrefix {
    /// Reads the top-level members of a cut line, in order, until the bytes run out.
    ///
    /// Only members read whole count: an id cut in the middle (`"id":12` of
    /// `"id":123`) is not taken. Never fails; an unreadable prefix gives an empty
    /// [`LinePrefix`].
    ///
    /// ```
    /// use dhara_protocol::rpc::{Id, LinePrefix};
    ///
    /// let prefix = LinePrefix::scan(br#"{"jsonrpc":"2.0","id":41,"method":"tools/execute","params":{"input":"aaaa"#);
    /// assert_eq!(prefix.id, Some(Id::from(41u64)));
    /// assert!(prefix.has_method && !prefix.has_outcome);
    /// ```
    pub fn scan(prefix: &[u8]) -> LinePrefix {
        let mut found = LinePrefix::default();
        let mut reader = Reader::new(prefix, &ParseOptions::DEFAULT);
        if reader.begin_object().is_err() {
            return found;
        }
        let mut ids = 0;
        while let Ok(Some(name)) = reader.next_known_member(Member::NAMES) {
            let member = match name {
                Name::Known(index) => Member::ALL.get(index).copied(),
                Name::Other(_) => None,
            };
            let complete = match member {
                Some(Member::Id) => {
                    ids += 1;
                    match read_id(&mut reader) {
                        // Nothing after the value: it may have been cut (`12` of `123`).
                        Ok(_) if reader.offset() >= prefix.len() => false,
                        Ok(id) => {
                            found.id = id.ok();
                            true
                        }
                        Err(_) => false,
                    }
                }
                Some(Member::Method) => {
                    found.has_method = true;
                    reader.skip_value().is_ok()
                }
                Some(Member::Result | Member::Error) => {
                    found.has_outcome = true;
                    reader.skip_value().is_ok()
                }
                _ => reader.skip_value().is_ok(),
            };
            if !complete {
                break;
            }
        }
        if ids > 1 {
            found.id = None;
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Number;
    use alloc::format;
    use alloc::string::String;

    fn kind(line: &[u8]) -> Option<DecodeErrorKind> {
        match decode(line, DecodeOptions::DEFAULT) {
            Incoming::Single(Err(e)) => Some(e.kind().clone()),
            Incoming::Single(Ok(_)) => None,
            Incoming::Batch(_) => panic!("not a batch"),
        }
    }

    #[test]
    fn the_version_is_compared_in_place_or_decoded() {
        assert_eq!(kind(br#"{"jsonrpc":"2.0","method":"x"}"#), None);
        assert_eq!(kind(br#"{"jsonrpc":"2\u002e0","method":"x"}"#), None);
        for wrong in [
            &br#""2.00""#[..],
            br#"2.0"#,
            br#""2.0 ""#,
            br#"null"#,
            br#"["2.0"]"#,
        ] {
            let line = [&br#"{"method":"x","jsonrpc":"#[..], wrong, b"}"].concat();
            assert_eq!(kind(&line), Some(DecodeErrorKind::Version), "{wrong:?}");
        }
    }

    #[test]
    fn the_version_is_read_wherever_and_however_it_is_written() {
        for line in [
            &br#"{"jsonrpc":"2.0","method":"x"}"#[..],
            br#"{ "jsonrpc" : "2.0" , "method" : "x" }"#,
            br#"{"method":"x","jsonrpc":"2.0"}"#,
            br#"{"jsonr\u0070c":"2.0","method":"x"}"#,
        ] {
            assert_eq!(kind(line), None, "{}", String::from_utf8_lossy(line));
        }
        let twice = br#"{"jsonrpc":"2.0","jsonrpc":"2.0","method":"x"}"#;
        assert_eq!(
            kind(twice),
            Some(DecodeErrorKind::DuplicateMember("jsonrpc"))
        );
        let cut = br#"{"jsonrpc":"2.0""#;
        assert!(matches!(kind(cut), Some(DecodeErrorKind::Json(_))));
        let glued = br#"{"jsonrpc":"2.0":1}"#;
        assert!(matches!(kind(glued), Some(DecodeErrorKind::Json(_))));
    }

    /// Reads `tools/execute` params and results into values, other payloads as
    /// text.
    #[derive(Clone)]
    struct Typed;

    impl<'a> Payloads<'a> for Typed {
        type Payload = Result<RawValue<'a>, (Option<Id>, Value)>;

        fn read(
            &mut self,
            of: Option<PayloadOf<'_>>,
            reader: &mut Reader<'a>,
        ) -> Result<Self::Payload, json::Error> {
            match of {
                Some(PayloadOf::Params {
                    method: "tools/execute",
                    id,
                }) => Ok(Err((id.cloned(), reader.read_value()?))),
                Some(PayloadOf::Result { id }) => Ok(Err((Some(id.clone()), reader.read_value()?))),
                _ => reader.read_raw().map(Ok),
            }
        }
    }

    /// `line` with a space after every `{`, `[`, `,` and `:` of its envelopes
    /// (not inside their payloads, whose text would change): the same messages,
    /// in a spelling no envelope member name is matched in place in.
    fn spaced(line: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(line.len() * 2);
        let envelope = if line.first() == Some(&b'[') { 2 } else { 1 };
        let (mut in_string, mut escaped, mut depth) = (false, false, 0usize);
        for &b in line {
            out.push(b);
            if in_string {
                match b {
                    _ if escaped => escaped = false,
                    b'\\' => escaped = true,
                    b'"' => in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' => depth = depth.saturating_sub(1),
                _ => {}
            }
            if matches!(b, b'{' | b'[' | b',' | b':') && depth <= envelope {
                out.push(b' ');
            }
        }
        out
    }

    /// Reads `line` in `form` as written and spaced out: the same entries, or a
    /// JSON error both ways (at another offset).
    fn read_alike<'a, F: Line<'a> + Clone>(
        form: &F,
        line: &'a [u8],
        spaced: &'a [u8],
        options: &ParseOptions,
    ) where
        F::Incoming: PartialEq + core::fmt::Debug,
    {
        let shown = String::from_utf8_lossy(line);
        let compact = decode_line(form.clone(), line, options);
        let other = decode_line(form.clone(), spaced, options);
        if compact != other {
            let both_json = |line: &[u8]| matches!(decode_line(Owned, line, options), Incoming::Single(Err(ref e)) if e.is_parse_error());
            assert!(
                both_json(line) && both_json(spaced),
                "{shown}: {compact:?} != {other:?}"
            );
        }
    }

    /// A line as the protocol's writers write it, or near it: each part picked
    /// from usual and unusual spellings, then a byte inserted, removed or
    /// replaced, or the line cut short.
    fn envelope_line() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use alloc::vec;
        use proptest::prelude::*;
        let start = prop::sample::select(vec![
            r#"{"jsonrpc":"2.0""#,
            r#"{"jsonrpc":"2.0""#,
            r#"{"jsonrpc":"2.0""#,
            r#"{ "jsonrpc":"2.0""#,
            r#"{"jsonrpc":"2.1""#,
            r#"{"jsonrpc":"2.0","jsonrpc":"2.0""#,
            r#"{"#,
        ]);
        let id = prop::sample::select(vec![
            r#","id":7"#,
            r#","id":123456789012345678901234"#,
            r#","id":-3"#,
            r#","id":"req-1""#,
            r#","id":"a\"b\u00e9""#,
            r#","id":"\ud800""#,
            r#","id":null"#,
            r#","id":1.5"#,
            r#","id":true"#,
            r#","id":[1]"#,
            "",
        ]);
        let method = prop::sample::select(vec![
            r#","method":"tools/execute""#,
            r#","method":"progress""#,
            r#","method":"other/method""#,
            r#","method":"t\u006fols/execute""#,
            r#","method":"\udc00""#,
            r#","method":5"#,
            "",
        ]);
        let payload = prop::sample::select(vec![
            r#","params":{"toolName":"grep","input":{"path":"a"}}"#,
            r#","params":[1,2]"#,
            r#","params":"x""#,
            r#","params":null"#,
            r#","result":{"content":[{"type":"text","text":"ok"}],"isError":false}"#,
            r#","result":null"#,
            r#","error":{"code":-32601,"message":"m"}"#,
            r#","params":{"a":[[[[{}]]]]}"#,
            "",
        ]);
        let rest = prop::sample::select(vec![
            "}",
            "}",
            "}",
            r#","id":9}"#,
            r#","x":1}"#,
            r#","result":1}"#,
            "} ",
            "}}",
        ]);
        let bytes = prop::sample::select(b" \t,:}]{[\"\\\x0e\xc3\xff1".to_vec());
        (
            start,
            id,
            method,
            payload,
            rest,
            0..5u8,
            any::<prop::sample::Index>(),
            bytes,
        )
            .prop_map(|(start, id, method, payload, rest, how, at, byte)| {
                let mut line = [start, id, method, payload, rest].concat().into_bytes();
                let at = at.index(line.len() + 1);
                match how {
                    0 | 1 => {}
                    2 => line.insert(at, byte),
                    3 => line.truncate(at),
                    _ => {
                        if let Some(b) = line.get_mut(at) {
                            *b = byte;
                        }
                    }
                }
                line
            })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]

        /// Member names written as the protocol's writers write them, matched in
        /// place, and the same line spaced out, read the general way: the same
        /// messages and errors in every form: owned, borrowed with expected methods,
        /// and with some payloads read into typed values.
        #[test]
        fn the_envelope_reads_alike_in_place_and_spaced_out(
            line in envelope_line(),
            depth in proptest::prop_oneof![3 => proptest::strategy::Just(128usize), 1 => 0..5usize],
        ) {
            let options = ParseOptions { max_depth: depth, strict_surrogates: false };
            let spaced = spaced(&line);
            read_alike(&Owned, &line, &spaced, &options);
            read_alike(&Borrowed { methods: crate::message::method::ALL, payloads: Raw }, &line, &spaced, &options);
            read_alike(&Borrowed { methods: crate::message::method::ALL, payloads: Typed }, &line, &spaced, &options);
        }
    }

    /// Members after the first, written as every writer writes them (compared in
    /// place) or with whitespace (read the general way), in any order, repeated,
    /// or near misses of the envelope's names: the same messages and errors.
    #[test]
    fn the_usual_members_are_read_in_place_as_they_are_read_otherwise() {
        let members = [
            r#""jsonrpc":"2.0""#,
            r#""id":7"#,
            r#""id":"a""#,
            r#""method":"m""#,
            r#""params":[1]"#,
            r#""result":{}"#,
            r#""error":{"code":1,"message":"x"}"#,
            r#""idx":1"#,
            r#""i":1"#,
            r#""method2":1"#,
            r#""p":[]"#,
            r#""results":1"#,
            r#""e":1"#,
            r#""id":8"#,
        ];
        let mut lines = 0;
        for a in members {
            for b in members {
                for c in members {
                    let compact = format!("{{{a},{b},{c}}}");
                    let spaced = format!("{{{a} , {b} ,{c}}}");
                    let decoded = decode(compact.as_bytes(), DecodeOptions::DEFAULT);
                    assert_eq!(
                        decoded,
                        decode(spaced.as_bytes(), DecodeOptions::DEFAULT),
                        "{compact}"
                    );
                    let view = decode_view(compact.as_bytes(), DecodeOptions::DEFAULT).into_owned();
                    assert_eq!(view, decoded, "{compact}");
                    lines += 1;
                }
            }
        }
        assert_eq!(lines, members.len().pow(3));
        // A comma where no member may follow is a JSON error, as ever.
        for line in [
            &br#"{,"id":1,"method":"m"}"#[..],
            br#"{"jsonrpc":"2.0",,"id":1,"method":"m"}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"m",}"#,
        ] {
            assert!(matches!(kind(line), Some(DecodeErrorKind::Json(_))));
        }
    }

    /// The method of a line decoded expecting `methods`, and whether it is one of
    /// them, handed out as it is.
    fn expected_method(line: &[u8], methods: &'static [&'static str]) -> (String, bool) {
        let view = decode_view(line, DecodeOptions::DEFAULT.expecting(methods));
        assert_eq!(
            view,
            decode_view(line, DecodeOptions::DEFAULT),
            "{}",
            String::from_utf8_lossy(line)
        );
        // Read by a payload reader, which is given the same method.
        struct Spy(&'static [&'static str], Option<bool>);
        impl<'a> Payloads<'a> for &mut Spy {
            type Payload = RawValue<'a>;
            fn read(
                &mut self,
                of: Option<PayloadOf<'_>>,
                reader: &mut Reader<'a>,
            ) -> Result<RawValue<'a>, json::Error> {
                if let Some(PayloadOf::Params { method, .. }) = of {
                    self.1 = Some(self.0.iter().any(|known| core::ptr::eq(*known, method)));
                }
                reader.read_raw()
            }
        }
        let mut spy = Spy(methods, None);
        let read = decode_reading(line, &DecodeOptions::DEFAULT.expecting(methods), &mut spy);
        assert_eq!(read, view, "{}", String::from_utf8_lossy(line));
        let given_to_reader = spy.1;
        let IncomingView::Single(Ok(message)) = view else {
            panic!("{}: a valid message", String::from_utf8_lossy(line));
        };
        let (MessageView::Request(RequestView { method, .. })
        | MessageView::Notification(NotificationView { method, .. })) = message
        else {
            panic!("a request or a notification");
        };
        let given = match &method {
            Cow::Borrowed(m) => methods.iter().any(|known| core::ptr::eq(*known, *m)),
            Cow::Owned(_) => false,
        };
        assert_eq!(given_to_reader, Some(given));
        (method.into_owned(), given)
    }

    #[test]
    fn an_expected_method_is_handed_out_as_the_callers_own() {
        const METHODS: &[&str] = &[
            "tools",
            "tools/execute",
            "progress",
            "a",
            "b\\c",
            "sixteen_bytes_16",
            "seventeen_bytes17",
        ];
        let line = |method: &str| format!(r#"{{"jsonrpc":"2.0","method":{method},"params":[]}}"#);
        let cases = [
            (r#""tools/execute""#, "tools/execute", true),
            (r#""progress""#, "progress", true),
            (r#""tools""#, "tools", true),
            (r#""a""#, "a", true),
            (r#""sixteen_bytes_16""#, "sixteen_bytes_16", true),
            (r#""seventeen_bytes17""#, "seventeen_bytes17", true),
            (r#""sixteen_bytes_17""#, "sixteen_bytes_17", false),
            (r#""xeventeen_bytes17""#, "xeventeen_bytes17", false),
            (r#""progresS""#, "progresS", false),
            // Escaped in the line: decoded, equal, and handed out all the same.
            (r#""tools\/execute""#, "tools/execute", true),
            (r#""progr\u0065ss""#, "progress", true),
            // Prefixes, extensions and near misses of expected ones.
            (r#""tools/""#, "tools/", false),
            (r#""tools/executes""#, "tools/executes", false),
            (r#""tools/executf""#, "tools/executf", false),
            (r#""Progress""#, "Progress", false),
            (r#""""#, "", false),
            (r#""b\\c""#, "b\\c", true),
            (r#""prögress""#, "prögress", false),
        ];
        for (written, method, given) in cases {
            let line = line(written);
            assert_eq!(
                expected_method(line.as_bytes(), METHODS),
                (String::from(method), given),
                "{line}"
            );
        }
        // A method that is not a string is the same error either way.
        let line = br#"{"jsonrpc":"2.0","method":7}"#;
        let view = decode_view(line, DecodeOptions::DEFAULT.expecting(METHODS));
        assert_eq!(view, decode_view(line, DecodeOptions::DEFAULT));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// Any method text, escaped or not, near an expected one or not: the same
        /// message as without expected methods.
        #[test]
        fn expected_methods_change_nothing_but_where_the_text_lives(
            method in r"(tools|progress|x|\\u0074|\\/|/|é|\\\\){0,4}(execute)?",
        ) {
            const METHODS: &[&str] = &["tools/execute", "progress", "tools", "x", "toolsx"];
            let line = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{}}}}"#);
            let (decoded, given) = expected_method(line.as_bytes(), METHODS);
            proptest::prop_assert_eq!(given, METHODS.contains(&decoded.as_str()));
        }
    }

    #[test]
    fn ids_are_taken_from_their_text() {
        let id = |text: &str| match decode(
            format!(r#"{{"jsonrpc":"2.0","id":{text},"method":"x"}}"#).as_bytes(),
            DecodeOptions::DEFAULT,
        ) {
            Incoming::Single(Ok(Message::Request(r))) => Ok(r.id),
            Incoming::Single(Err(e)) => Err(e.kind().clone()),
            other => panic!("{other:?}"),
        };
        assert_eq!(id("-0"), Ok(Id::Number(Number::from_text("-0").unwrap())));
        assert_eq!(
            id("12345678901234567890123"),
            Ok(Id::Number(
                Number::from_text("12345678901234567890123").unwrap()
            ))
        );
        assert_eq!(id("null"), Ok(Id::Null));
        assert_eq!(id("1e3"), Err(DecodeErrorKind::InvalidId));
        assert_eq!(id("1.5"), Err(DecodeErrorKind::InvalidId));
        assert!(matches!(id("nul"), Err(DecodeErrorKind::Json(_))));
        assert!(matches!(id("01"), Err(DecodeErrorKind::Json(_))));
        // The text is taken as a window of the line where the line goes on far
        // enough, and copied on its own at its end: the same id either way.
        for text in [
            "7",
            "-12",
            "1234567890123456789012",
            "12345678901234567890123",
        ] {
            for line in [
                format!(r#"{{"jsonrpc":"2.0","method":"x","id":{text}}}"#),
                format!(r#"{{"jsonrpc":"2.0","id":{text},"method":"a long enough method"}}"#),
            ] {
                let Incoming::Single(Ok(Message::Request(r))) =
                    decode(line.as_bytes(), DecodeOptions::DEFAULT)
                else {
                    panic!("{line}: a request");
                };
                assert_eq!(r.id, Id::Number(Number::from_text(text).unwrap()), "{line}");
                assert_eq!(format!("{}", r.id), text);
            }
        }
    }

    #[test]
    fn error_codes_are_taken_from_their_text() {
        let line = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"m"}}"#;
        let Incoming::Single(Ok(Message::Response(r))) = decode(line, DecodeOptions::DEFAULT)
        else {
            panic!("a response");
        };
        assert_eq!(
            r.outcome.map_err(|e| e.code),
            Err(ErrorCode::METHOD_NOT_FOUND)
        );
        let line = br#"{"jsonrpc":"2.0","id":1,"error":{"code":1.0,"message":"m"}}"#;
        assert_eq!(kind(line), Some(DecodeErrorKind::ErrorCode));
    }
}
