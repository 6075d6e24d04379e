//! Properties of the JSON-RPC 2.0 codec: what is written decodes to the same
//! messages, batches included, through line framing in any chunking, and no input
//! makes the decoder panic.

use dhara_protocol::frame::{self, Frame, LineDecoder};
use dhara_protocol::json::{self, Number, Object, Value};
use dhara_protocol::rpc::{
    DecodeErrorKind, DecodeOptions, ErrorObject, Id, Incoming, IncomingView, Message, MessageView,
    Notification, Request, Response, decode, decode_view, write_batch, write_message,
};
use proptest::collection::vec;
use proptest::prelude::*;

fn number_text() -> impl Strategy<Value = Number> {
    "-?(0|[1-9][0-9]{0,40})(\\.[0-9]{1,12})?([eE][+-]?[0-9]{1,3})?"
        .prop_map(|text| Number::from_text(&text).expect("generated number text"))
}

fn integer_text() -> impl Strategy<Value = Number> {
    "-?(0|[1-9][0-9]{0,60})".prop_map(|text| Number::from_text(&text).expect("integer text"))
}

fn id() -> impl Strategy<Value = Id> {
    prop_oneof![
        any::<u64>().prop_map(Id::from),
        any::<i64>().prop_map(|n| Id::Number(Number::from(n))),
        integer_text().prop_map(Id::Number),
        any::<String>().prop_map(Id::String),
        Just(Id::Null),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        number_text().prop_map(Value::Number),
        any::<String>().prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..6).prop_map(Value::Array),
            vec((any::<String>(), inner), 0..6)
                .prop_map(|members| Value::Object(Object::from_iter(members))),
        ]
    })
}

fn params() -> impl Strategy<Value = Option<Value>> {
    proptest::option::of(value().prop_map(|v| match v {
        Value::Array(_) | Value::Object(_) => v,
        other => Value::Array(vec![other]),
    }))
}

fn error_object() -> impl Strategy<Value = ErrorObject> {
    (any::<i64>(), any::<String>(), proptest::option::of(value())).prop_map(
        |(code, message, data)| ErrorObject {
            code: code.into(),
            message,
            data,
        },
    )
}

fn response() -> impl Strategy<Value = Response> {
    (
        id(),
        prop_oneof![value().prop_map(Ok), error_object().prop_map(Err)],
    )
        .prop_map(|(id, outcome)| Response { id, outcome })
}

fn message() -> impl Strategy<Value = Message> {
    prop_oneof![
        (id(), any::<String>(), params())
            .prop_map(|(id, method, params)| Message::Request(Request { id, method, params })),
        (any::<String>(), params())
            .prop_map(|(method, params)| Message::Notification(Notification { method, params })),
        response().prop_map(Message::Response),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_written_message_decodes_to_itself(message in message()) {
        let mut line = Vec::new();
        write_message(&message, &mut line);
        prop_assert_eq!(decode(&line, DecodeOptions::DEFAULT), Incoming::Single(Ok(message)));
    }

    #[test]
    fn a_written_batch_decodes_to_itself(messages in vec(message(), 1..6)) {
        let mut line = Vec::new();
        write_batch(&messages, &mut line);
        let expected = Incoming::Batch(messages.into_iter().map(Ok).collect());
        prop_assert_eq!(decode(&line, DecodeOptions::DEFAULT), expected);
    }

    #[test]
    fn a_written_response_batch_decodes_to_itself(responses in vec(response(), 1..6)) {
        let mut line = Vec::new();
        let messages: Vec<Message> = responses.into_iter().map(Message::from).collect();
        write_batch(&messages, &mut line);
        let expected = Incoming::Batch(messages.into_iter().map(Ok).collect());
        prop_assert_eq!(decode(&line, DecodeOptions::DEFAULT), expected);
    }

    #[test]
    fn a_written_stream_decodes_to_the_same_messages_in_any_chunking(
        messages in vec(message(), 1..8),
        cuts in vec(any::<prop::sample::Index>(), 0..12),
    ) {
        let mut stream = Vec::new();
        for message in &messages {
            frame::write_line(&mut stream, |buf| write_message(message, buf));
        }
        let mut cuts: Vec<usize> = cuts.iter().map(|cut| cut.index(stream.len() + 1)).collect();
        cuts.push(stream.len());
        cuts.sort_unstable();
        let mut decoder = LineDecoder::new();
        let mut decoded = Vec::new();
        let mut start = 0;
        for cut in cuts {
            decoder.push(&stream[start..cut]);
            start = cut;
            while let Some(frame) = decoder.next_frame() {
                match frame {
                    Frame::Line(line) => decoded.push(decode(line, DecodeOptions::DEFAULT)),
                    other => return Err(TestCaseError::fail(format!("unexpected frame {other}"))),
                }
            }
        }
        decoder.end();
        prop_assert!(decoder.next_frame().is_none());
        let expected: Vec<Incoming> =
            messages.into_iter().map(|m| Incoming::Single(Ok(m))).collect();
        prop_assert_eq!(decoded, expected);
    }

    #[test]
    fn decoding_and_writing_again_is_byte_identical(message in message()) {
        let mut first = Vec::new();
        write_message(&message, &mut first);
        let Incoming::Single(Ok(decoded)) = decode(&first, DecodeOptions::DEFAULT) else {
            return Err(TestCaseError::fail("a written message must decode"));
        };
        let mut second = Vec::new();
        write_message(&decoded, &mut second);
        prop_assert_eq!(first, second);
    }

    #[test]
    fn a_written_message_decodes_to_a_view_of_its_own_text(message in message()) {
        let mut line = Vec::new();
        write_message(&message, &mut line);
        let IncomingView::Single(Ok(view)) = decode_view(&line, DecodeOptions::DEFAULT) else {
            return Err(TestCaseError::fail("a written message must decode"));
        };
        // Each payload is the very text written for it.
        let payload = |v: &Option<Value>| v.as_ref().map(json::to_vec);
        let raw = |r: Option<json::RawValue<'_>>| r.map(|r| r.as_bytes().to_vec());
        match (&message, &view) {
            (Message::Request(m), MessageView::Request(v)) => {
                prop_assert_eq!(payload(&m.params), raw(v.params));
            }
            (Message::Notification(m), MessageView::Notification(v)) => {
                prop_assert_eq!(payload(&m.params), raw(v.params));
            }
            (Message::Response(m), MessageView::Response(v)) => match (&m.outcome, &v.outcome) {
                (Ok(result), Ok(r)) => prop_assert_eq!(json::to_vec(result), r.as_bytes()),
                (Err(e), Err(v)) => prop_assert_eq!(payload(&e.data), raw(v.data)),
                _ => return Err(TestCaseError::fail("the outcome changed")),
            },
            _ => return Err(TestCaseError::fail("the kind of message changed")),
        }
        prop_assert_eq!(view.into_owned(), message);
    }

    #[test]
    fn a_written_batch_decodes_to_views_of_itself(messages in vec(message(), 1..6)) {
        let mut line = Vec::new();
        write_batch(&messages, &mut line);
        let expected = Incoming::Batch(messages.into_iter().map(Ok).collect());
        prop_assert_eq!(decode_view(&line, DecodeOptions::DEFAULT).into_owned(), expected);
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_agree_with_the_json_parser(
        bytes in vec(any::<u8>(), 0..256),
    ) {
        check_against_parser(&bytes)?;
    }

    #[test]
    fn damaged_messages_never_panic_and_agree_with_the_json_parser(
        message in message(),
        cut in any::<prop::sample::Index>(),
        byte in prop_oneof![any::<u8>(), prop::sample::select(b"{}[],:\"\\ 0-en".to_vec())],
        delete in any::<bool>(),
    ) {
        let mut line = Vec::new();
        write_message(&message, &mut line);
        let at = cut.index(line.len());
        if delete {
            line.remove(at);
        } else {
            line.insert(at, byte);
        }
        check_against_parser(&line)?;
    }
}

/// Decoding fails as a whole with a Parse error exactly when the line is not JSON;
/// the borrowed view of the line agrees with the owned decoding, errors included.
fn check_against_parser(line: &[u8]) -> Result<(), TestCaseError> {
    let incoming = decode(line, DecodeOptions::DEFAULT);
    prop_assert_eq!(
        &decode_view(line, DecodeOptions::DEFAULT).into_owned(),
        &incoming
    );
    let parse_error = matches!(
        &incoming,
        Incoming::Single(Err(e)) if matches!(e.kind(), DecodeErrorKind::Json(_))
    );
    prop_assert_eq!(parse_error, json::parse(line).is_err());
    if let Incoming::Batch(entries) = &incoming {
        prop_assert!(!entries.is_empty());
    }
    Ok(())
}
