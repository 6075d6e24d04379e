//! `rpc_decode`: any line through the JSON-RPC decoder.
//!
//! No input panics. Every message decoded, written back and decoded again is the
//! same message (batches too). Every
//! decode error makes a response that is itself a valid message, echoing the id
//! the error kept. The prefix scanner, run on a whole line that decoded, finds the
//! same id and the same kind of message. The borrowed view of the line, made
//! owned, is what `decode` gives.

use dhara_protocol::rpc::{self, DecodeError, Id, Incoming, Message};

pub fn run(data: &[u8]) {
    let prefix = rpc::LinePrefix::scan(data);
    let decoded = rpc::decode(data, rpc::DecodeOptions::DEFAULT);
    // The borrowed view is the same decoder: made owned, it is what `decode` gives.
    assert_eq!(
        rpc::decode_view(data, rpc::DecodeOptions::DEFAULT).into_owned(),
        decoded,
        "decode_view and decode disagree"
    );
    match decoded {
        Incoming::Single(entry) => {
            check_entry(&entry);
            if let Ok(message) = &entry {
                let (id, has_method) = match message {
                    Message::Request(r) => (Some(&r.id), true),
                    Message::Notification(_) => (None, true),
                    Message::Response(r) => (Some(&r.id), false),
                };
                assert_eq!(prefix.id.as_ref(), id, "scan_prefix finds another id");
                assert_eq!(prefix.has_method, has_method);
                assert_eq!(prefix.has_outcome, !has_method);
            }
        }
        Incoming::Batch(entries) => {
            assert!(!entries.is_empty(), "an empty batch is a single error");
            entries.iter().for_each(check_entry);
            let messages: Vec<Message> = entries.into_iter().filter_map(Result::ok).collect();
            if !messages.is_empty() {
                let mut written = Vec::new();
                rpc::write_batch(&messages, &mut written);
                let again = rpc::decode(&written, rpc::DecodeOptions::DEFAULT);
                let expected = Incoming::Batch(messages.into_iter().map(Ok).collect());
                assert_eq!(again, expected, "a batch does not survive write and decode");
            }
        }
    }
}

fn check_entry(entry: &Result<Message, DecodeError>) {
    match entry {
        Ok(message) => {
            let mut written = Vec::new();
            rpc::write_message(message, &mut written);
            let again = rpc::decode(&written, rpc::DecodeOptions::DEFAULT);
            assert_eq!(
                again,
                Incoming::Single(Ok(message.clone())),
                "decode(write(m), rpc::DecodeOptions::DEFAULT) != m for {}",
                String::from_utf8_lossy(&written)
            );
        }
        Err(error) => {
            let response = error.to_response();
            assert_eq!(response.id, error.id.clone().unwrap_or(Id::Null));
            assert_eq!(response.outcome.as_ref().err(), Some(&error.error_object()));
            let mut written = Vec::new();
            rpc::write_message(&response.clone().into(), &mut written);
            assert_eq!(
                rpc::decode(&written, rpc::DecodeOptions::DEFAULT),
                Incoming::Single(Ok(Message::Response(response))),
                "the error reply is not a valid response"
            );
        }
    }
}
