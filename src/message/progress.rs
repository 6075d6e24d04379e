//! The params of the `progress` notification.

use alloc::string::String;
use alloc::vec::Vec;

use super::fields::{
    A_STRING, Read, Slot, object, read_id, read_members, read_more_members, read_string,
};
use crate::json::{self, Reader, Value};
use crate::rpc::{self, Id};

/// Params of a `progress` notification.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// The progress text.
    pub message: String,
    /// The request it belongs to, if the extension said (`id` member).
    pub id: Option<Id>,
}

impl Progress {
    /// Progress text not attributed to a request.
    pub fn new(message: impl Into<String>) -> Progress {
        Progress {
            message: message.into(),
            id: None,
        }
    }

    /// Progress text for the request with this id.
    pub fn for_request(id: Id, message: impl Into<String>) -> Progress {
        Progress {
            message: message.into(),
            id: Some(id),
        }
    }

    pub(super) fn read(r: &mut Reader<'_>) -> Read<Progress> {
        const NAMES: &[&str] = &["message", "id"];
        let (mut message, mut id) = (Slot::new(), Slot::new());
        // The members in the writers' order and spelling are taken with one compare
        // of each name; the member loop goes on from wherever that stops.
        let usual = r.skip_prefix(r#"{"message":"#);
        if usual {
            message.read(r, read_string)?;
            if r.skip_prefix(r#","id":"#) {
                id.read(r, read_id)?;
            }
        }
        let member = |member, r: &mut Reader<'_>| match member {
            0 => message.read(r, read_string),
            _ => id.read(r, read_id),
        };
        let members = if usual {
            read_more_members(r, NAMES, member)?
        } else {
            read_members(r, NAMES, member)?
        };
        Ok(members.and_then(|()| {
            Ok(Progress {
                message: message.required("message", A_STRING)?,
                id: id.optional("id")?,
            })
        }))
    }

    pub(super) fn write(self) -> Value {
        let id = self.id.map(|id| match id {
            Id::Number(n) => Value::Number(n),
            Id::String(s) => Value::from(s),
            Id::Null => Value::Null,
        });
        object([("message", Some(self.message.into())), ("id", id)])
    }

    pub(super) fn encode(&self, out: &mut Vec<u8>) {
        Progress::write_parts(&self.message, self.id.as_ref(), out);
    }

    /// Appends `progress` params with `message` and `id` to `out`, as
    /// [`write_json`](Self::write_json) does, without a `Progress` to hold them:
    /// how an extension reports progress, without a copy of its text.
    pub(crate) fn write_parts(message: &str, id: Option<&Id>, out: &mut Vec<u8>) {
        // `message` always comes first: its name in one piece with the brace.
        out.extend_from_slice(br#"{"message":"#);
        json::write_string(message, out);
        if let Some(id) = id {
            out.extend_from_slice(br#","id":"#);
            rpc::write_id(id, out);
        }
        out.push(b'}');
    }
}
