//! What each line from the extension means: replies are matched to calls,
//! notifications become events, requests are answered `-32601`, and everything else
//! is reported and skipped.

use alloc::borrow::Cow;
use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::ops::Range;

use super::Core;
use super::calls::{CallId, CallKind, Calls, EndReason, Match};
use super::events::{CallError, Event, Excerpt, PeerError, Reply};
use crate::frame::{self, Frame};
use crate::json::{self, ParseOptions, RawValue, Reader};
use crate::message::{
    FieldError, InitializeResult, Progress, RejectedTool, ToolList, ToolResult, method,
};
use crate::rpc::{
    self, DecodeError, DecodeOptions, ErrorCode, ErrorObject, ErrorView, Id, MessageView,
    NotificationView, PayloadOf, RequestView, Response, ResponseView,
};

/// A batch line whose entries are handled one per step: a copy of the line, and
/// each entry's text in it, each read when its step comes.
#[derive(Debug, Default)]
pub(super) struct Batch {
    line: Vec<u8>,
    entries: VecDeque<Range<usize>>,
}

/// A batch line copy bigger than this is freed once its batch is handled.
const KEEP_BATCH_LINE_BYTES: usize = 64 * 1024;

impl Batch {
    /// Lets go of a handled batch's line; a large one is freed.
    fn close(&mut self) {
        if self.line.capacity() > KEEP_BATCH_LINE_BYTES {
            self.line = Vec::new();
        } else {
            self.line.clear();
        }
    }

    /// Keeps the batch `line`, its entries' text at `entries`.
    fn open(&mut self, line: &[u8], entries: Vec<Range<usize>>) {
        self.line.clear();
        self.line.extend_from_slice(line);
        self.entries.clear();
        self.entries.extend(entries);
    }
}

/// A payload as the Core reads it: the result of a `tools/execute` call in flight
/// and `progress` params straight into their typed values; any other payload as
/// its text.
pub(super) enum Payload<'a> {
    Raw(RawValue<'a>),
    Read(Read),
}

/// What [`Payload::Read`] holds.
pub(super) enum Read {
    /// The result of the `tools/execute` call in flight it answers.
    Executed(CallId, Result<ToolResult, FieldError>),
    /// `progress` params.
    Progress(Result<Progress, FieldError>),
}

/// How the Core reads payloads: a result is read as a [`ToolResult`] when its id
/// names a `tools/execute` call in flight.
struct Payloads<'c> {
    calls: &'c Calls,
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
            Some(PayloadOf::Result { id }) => {
                if let Match::InFlight(call, CallKind::Execute) = self.calls.lookup(id) {
                    let result = ToolResult::read_from(reader)?;
                    return Ok(Payload::Read(Read::Executed(call, result)));
                }
            }
            Some(PayloadOf::Params {
                id: None,
                method: method::PROGRESS,
            }) => return Ok(Payload::Read(Read::Progress(Progress::read_from(reader)?))),
            _ => {}
        }
        reader.read_raw().map(Payload::Raw)
    }
}

/// An entry of a line, its payloads as the Core reads them.
type Entry<'a> = Result<MessageView<'a, Payload<'a>>, DecodeError>;

impl Core {
    /// Decodes and handles the next complete line, if one is buffered.
    ///
    /// The line is handled where it lies, in the decoder's buffer
    /// ([`frame::handle_next_frame`]): its messages borrow from it, and it is read
    /// once, a `tools/execute` result straight into the reply its call waits for
    /// ([`rpc::decode_entry`]).
    pub(super) fn handle_next_line(&mut self) -> bool {
        frame::handle_next_frame(self, |core| &mut core.decoder, Core::handle_frame)
    }

    fn handle_frame(&mut self, frame: Frame<'_>) {
        match frame {
            Frame::Line(bytes) => self.handle_line(bytes),
            Frame::TooLong { prefix, len } => {
                let id = response_id(prefix);
                self.handle_too_long(id, Excerpt::of(prefix, length(len)));
            }
            Frame::Truncated { prefix, len } => {
                let line = Excerpt::of(prefix, length(len));
                self.truncated_line = Some(line.clone());
                self.report(PeerError::Truncated { line });
            }
        }
    }

    /// Decodes one message, a line or a batch's entry, its payloads read as the Core
    /// reads them.
    fn decode<'a>(&self, bytes: &'a [u8]) -> Entry<'a> {
        let payloads = Payloads { calls: &self.calls };
        let options = &DecodeOptions::DEFAULT.expecting(method::ALL);
        rpc::decode_entry(bytes, options, payloads)
    }

    /// Decodes a line and handles its message, or opens its batch: the batch's
    /// entries are read and handled one per step.
    fn handle_line(&mut self, bytes: &[u8]) {
        let is_batch = Reader::new(bytes, &ParseOptions::DEFAULT).peek() == Some(b'[');
        let entry = if is_batch {
            match rpc::scan_batch(bytes, &ParseOptions::DEFAULT) {
                Ok(entries) => {
                    self.batch.open(bytes, entries);
                    self.handle_next_batch_entry();
                    return;
                }
                Err(error) => Err(error),
            }
        } else {
            self.decode(bytes)
        };
        match entry {
            Err(error) if error.is_parse_error() => {
                let line = Excerpt::of(bytes, length(bytes.len()));
                self.report(PeerError::NotJson { line, error });
            }
            entry => self.handle_entry(entry, false),
        }
    }

    /// Handles the next entry of a batch line, if one is left; after the last, sends
    /// the answers to its requests as one batch.
    #[inline]
    pub(super) fn handle_next_batch_entry(&mut self) -> bool {
        // Checked here, where the step loop asks, before any call.
        if self.batch.entries.is_empty() {
            return false;
        }
        self.handle_batch_entry();
        true
    }

    /// [`handle_next_batch_entry`](Core::handle_next_batch_entry), once one is left.
    #[inline(never)]
    fn handle_batch_entry(&mut self) {
        let Some(entry) = self.batch.entries.pop_front() else {
            return;
        };
        let line = core::mem::take(&mut self.batch.line);
        // The ranges were found in this line.
        debug_assert!(line.get(entry.clone()).is_some());
        let entry = self.decode(line.get(entry).unwrap_or_default());
        self.handle_entry(entry, true);
        self.batch.line = line;
        if self.batch.entries.is_empty() {
            self.batch.close();
            if !self.batch_answers.is_empty() {
                let answers = core::mem::take(&mut self.batch_answers);
                self.send(|out| rpc::write_response_batch(&answers, out));
            }
        }
    }

    fn handle_entry(&mut self, entry: Entry<'_>, in_batch: bool) {
        match entry {
            Ok(MessageView::Response(response)) => self.handle_response(response),
            Ok(MessageView::Notification(notification)) => self.handle_notification(notification),
            Ok(MessageView::Request(request)) => self.handle_request(request, in_batch),
            Err(error) => self.handle_invalid(error),
        }
    }

    /// A message that breaks JSON-RPC 2.0. When it is shaped like a response and its
    /// id (read whole, never guessed: a duplicated `id` gives none) names a call in
    /// flight, that call ends at once with [`CallError::InvalidReply`]: its answer
    /// came and cannot be used. Anything else is reported.
    fn handle_invalid(&mut self, error: DecodeError) {
        let call = match (&error.id, error.is_response_like()) {
            (Some(id), true) => match self.calls.lookup(id) {
                Match::InFlight(call, _) => Some(call),
                _ => None,
            },
            _ => None,
        };
        match call {
            Some(call) => {
                let result = Err(CallError::InvalidReply(error));
                self.end_call(call, result, Some(EndReason::Answered));
            }
            None => self.report(PeerError::InvalidMessage { error }),
        }
    }

    fn handle_response(&mut self, response: ResponseView<'_, Payload<'_>>) {
        let outcome = match response.outcome {
            // Read as the result of the call in flight its id names.
            Ok(Payload::Read(Read::Executed(call, result))) => {
                let result = result.map(Reply::Executed);
                let result = result.map_err(CallError::InvalidResult);
                return self.end_call(call, result, Some(EndReason::Answered));
            }
            Ok(Payload::Raw(result)) => Ok(result),
            // Progress is read from params only.
            Ok(Payload::Read(Read::Progress(_))) => {
                debug_assert!(false, "a result read as progress");
                Ok(RawValue::NULL)
            }
            Err(error) => Err(error),
        };
        match self.calls.lookup(&response.id) {
            Match::InFlight(call, kind) => {
                let result = self.read_reply(kind, outcome);
                self.end_call(call, result, Some(EndReason::Answered));
            }
            Match::Ended(call, ended) => self.report(PeerError::LateResponse { call, ended }),
            Match::Unknown => match (response.id, outcome) {
                (Id::Null, Err(error)) => self.report(PeerError::ErrorWithoutId {
                    error: error.into_owned(),
                }),
                (id, _) => self.report(PeerError::UnknownId { id }),
            },
        }
    }

    /// Reads a call's result straight from its text into the typed reply, applying
    /// what it tells the Core (the tools, the extension's name).
    fn read_reply(
        &mut self,
        kind: CallKind,
        outcome: Result<RawValue<'_>, ErrorView<'_>>,
    ) -> Result<Reply, CallError> {
        let result = outcome.map_err(|error| CallError::Rpc(error.into_owned()))?;
        // A tool descriptor that does not fit is left out and reported; the rest of
        // the tools stay callable.
        let reply = match kind {
            CallKind::Initialize => {
                InitializeResult::from_raw_keeping_good_tools(result).map(|(result, rejected)| {
                    self.report_rejected(rejected);
                    self.set_tools(&result.tools);
                    self.server_info = Some((result.name.clone(), result.version.clone()));
                    Reply::Initialized(result)
                })
            }
            CallKind::ListTools => {
                ToolList::from_raw_keeping_good_tools(result).map(|(list, rejected)| {
                    self.report_rejected(rejected);
                    self.set_tools(&list.tools);
                    Reply::Tools(list)
                })
            }
            CallKind::Execute => ToolResult::from_raw(result).map(Reply::Executed),
        };
        reply.map_err(CallError::InvalidResult)
    }

    fn report_rejected(&mut self, rejected: Vec<RejectedTool>) {
        for tool in rejected {
            self.report(PeerError::InvalidTool { tool });
        }
    }

    fn handle_notification(&mut self, notification: NotificationView<'_, Payload<'_>>) {
        let NotificationView { method, params } = notification;
        let params = match params {
            Some(Payload::Read(Read::Progress(progress))) => {
                return self.handle_progress_params(method, progress);
            }
            Some(Payload::Raw(raw)) => Some(raw),
            // A result is read from responses only.
            Some(Payload::Read(Read::Executed(..))) => {
                debug_assert!(false, "params read as a result");
                None
            }
            None => None,
        };
        let params_or_null = params.unwrap_or(RawValue::NULL);
        match &*method {
            method::PROGRESS => {
                let progress = Progress::from_raw(params_or_null);
                self.handle_progress_params(method, progress);
            }
            method::TOOLS_LIST => match ToolList::from_raw_keeping_good_tools(params_or_null) {
                Ok((list, rejected)) => {
                    self.report_rejected(rejected);
                    self.set_tools(&list.tools);
                    self.events
                        .push_back(Event::ToolsChanged { tools: list.tools });
                }
                Err(error) => self.report(PeerError::InvalidParams {
                    method: method.into_owned(),
                    error,
                }),
            },
            _ => self.events.push_back(Event::Notification {
                method: method.into_owned(),
                params: params.map(|params| params.parse()),
            }),
        }
    }

    /// `progress` params, read: handled, or reported when they do not fit.
    fn handle_progress_params(
        &mut self,
        method: Cow<'_, str>,
        progress: Result<Progress, FieldError>,
    ) {
        match progress {
            Ok(progress) => self.handle_progress(progress),
            Err(error) => self.report(PeerError::InvalidParams {
                method: method.into_owned(),
                error,
            }),
        }
    }

    /// Attributes progress (its `id` member, else the one call in flight) and, when
    /// that call opted in, moves its deadline.
    fn handle_progress(&mut self, progress: Progress) {
        let call = match &progress.id {
            Some(id) => match self.calls.lookup(id) {
                Match::InFlight(call, _) => Some(call),
                Match::Ended(..) | Match::Unknown => None,
            },
            None => self.calls.single(),
        };
        if let Some(call) = call {
            self.calls.extend_deadline(call, self.now);
        }
        self.events.push_back(Event::Progress { call, progress });
    }

    /// The Core serves no methods: every request is answered `-32601` (in a batch
    /// answer when it came in a batch) and reported.
    fn handle_request(&mut self, request: RequestView<'_, Payload<'_>>, in_batch: bool) {
        let RequestView { id, method, .. } = request;
        let method = method.into_owned();
        let error = ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "Method not found");
        let answer = Response::error(id.clone(), error);
        if in_batch {
            self.batch_answers.push(answer);
        } else {
            self.send(|out| rpc::write_response(&answer, out));
        }
        self.report(PeerError::UnexpectedRequest { id, method });
    }

    /// An oversized line: if its first bytes name a call in flight, that call fails at
    /// once; otherwise it is reported.
    fn handle_too_long(&mut self, id: Option<Id>, line: Excerpt) {
        match id.as_ref().map(|id| self.calls.lookup(id)) {
            Some(Match::InFlight(call, _)) => {
                let result = Err(CallError::TooLarge { len: line.len });
                self.end_call(call, result, Some(EndReason::TooLarge));
            }
            _ => self.report(PeerError::LineTooLong { line, id }),
        }
    }

    fn report(&mut self, error: PeerError) {
        self.events.push_back(Event::Protocol(error));
    }
}

fn length(len: impl TryInto<u64>) -> u64 {
    len.try_into().unwrap_or(u64::MAX)
}

/// The id of a response, read from the first bytes of a line too long to decode.
///
/// [`rpc::LinePrefix::scan`] reads the top-level members in order and stops at the first
/// one it cannot read whole, so an id number cut short is never taken. The id counts
/// only when the line is a response (a `result` or `error` member was reached, and no
/// `method`). So it finds the id when `id` comes before the large member, as this
/// crate and most JSON-RPC libraries write it; a line that puts `id` after a large
/// `result` is only reported, and its call ends by its deadline.
fn response_id(prefix: &[u8]) -> Option<Id> {
    let found = rpc::LinePrefix::scan(prefix);
    if found.has_outcome && !found.has_method {
        found.id.filter(|id| !id.is_null())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_of_a_cut_response_is_found_when_it_comes_first() {
        let id = response_id(br#"{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"te"#);
        assert_eq!(id, Some(Id::from(42)));
        let id = response_id(br#"{ "id" : 7 , "jsonrpc":"2.0", "error":{"code":1,"#);
        assert_eq!(id, Some(Id::from(7)));
    }

    #[test]
    fn no_id_is_guessed() {
        // The id comes after the large member.
        assert_eq!(
            response_id(br#"{"jsonrpc":"2.0","result":{"id":3,"text":"aaaa"#),
            None
        );
        // A number cut at the end of the prefix may be longer.
        assert_eq!(response_id(br#"{"jsonrpc":"2.0","id":12"#), None);
        // A request, not a response.
        assert_eq!(
            response_id(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1,"#),
            None
        );
        // Not an object, or not JSON.
        assert_eq!(response_id(br#"[{"id":1,"result":"#), None);
        assert_eq!(response_id(b"log: id=1 aaaa"), None);
        // The id of a nested object is not the envelope's.
        assert_eq!(response_id(br#"{"data":{"id":5},"result":"#), None);
    }
}
