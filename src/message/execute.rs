//! The types of `tools/execute`: its params, its result, and the result's content
//! items.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use super::Text;
use super::fields::{
    A_STRING, AN_ARRAY, AN_OBJECT, FieldError, ObjectWriter, Read, Slot, VALUE_TEXT, add_element,
    mistyped, object, read_flag, read_list, read_members, read_more_elements, read_more_members,
    read_str, read_whole,
};
use crate::json::{self, Name, Object, RawValue, Reader, Str, Value};

/// Params of `tools/execute`.
#[derive(Clone, Debug, PartialEq)]
pub struct ExecuteParams {
    /// The tool to run (`toolName`).
    pub tool_name: Text,
    /// Its input (`input`).
    pub input: Value,
}

/// Result of `tools/execute`.
///
/// `is_error: true` is a tool-level failure the LLM should see; a JSON-RPC error is a
/// protocol-level failure.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolResult {
    /// The content items.
    pub content: Vec<Content>,
    /// `isError`: a tool-level failure. Absent or `null` on the wire reads as `false`;
    /// always written.
    pub is_error: bool,
}

/// One content item of a [`ToolResult`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Content {
    /// `{"type": "text", "text": ...}`
    Text {
        /// The text.
        text: Text,
    },
    /// `{"type": "image", "mimeType": ..., "data": ...}`: base64 image data.
    ImageData {
        /// The MIME type, such as `image/png`.
        mime_type: String,
        /// The base64-encoded bytes.
        data: String,
    },
    /// `{"type": "image", "path": ...}`: an image file reference.
    ImagePath {
        /// The file path.
        path: String,
        /// The MIME type, if given.
        mime_type: Option<String>,
    },
    /// `{"type": "file", "path": ..., "size": ..., "mimeType": ...}`
    File {
        /// The file path.
        path: String,
        /// Its size in bytes, if given.
        size: Option<u64>,
        /// The MIME type, if given.
        mime_type: Option<String>,
    },
    /// A content item of a type this crate does not know, kept whole.
    Unknown(Object),
}

impl ExecuteParams {
    /// `tools/execute` params: run `tool_name` with `input`.
    pub fn new(tool_name: impl Into<Text>, input: Value) -> ExecuteParams {
        ExecuteParams {
            tool_name: tool_name.into(),
            input,
        }
    }

    pub(super) fn read(r: &mut Reader<'_>) -> Read<ExecuteParams> {
        ExecuteParams::read_input_with(r, Reader::read_value)
    }

    /// Reads `tools/execute` params, the `input` with `parser`'s scratch space: how
    /// an endpoint that keeps a [`json::Parser`] reads every request's input.
    pub(crate) fn read_with(r: &mut Reader<'_>, parser: &mut json::Parser) -> Read<ExecuteParams> {
        ExecuteParams::read_input_with(r, |r| parser.read(r))
    }

    /// [`from_raw`](Self::from_raw), the `input` read with `parser`'s scratch space.
    pub(crate) fn from_raw_with(
        raw: RawValue<'_>,
        parser: &mut json::Parser,
    ) -> Result<ExecuteParams, FieldError> {
        read_whole(raw.reader(), |r| ExecuteParams::read_with(r, parser))
    }

    /// The one reading of the params, the `input` value read by `read_input`.
    #[inline(always)]
    fn read_input_with<'a>(
        r: &mut Reader<'a>,
        mut read_input: impl FnMut(&mut Reader<'a>) -> Result<Value, json::Error>,
    ) -> Read<ExecuteParams> {
        const NAMES: &[&str] = &["toolName", "input"];
        // Any value is an input: it is kept as it is read, with nothing to check.
        let (mut tool_name, mut input) = (Slot::new(), None);
        // The members in the writers' order and spelling are taken with one compare
        // of each name; the member loop goes on from wherever that stops.
        let usual = r.skip_prefix(r#"{"toolName":"#);
        if usual {
            tool_name.read(r, read_str)?;
            if r.skip_prefix(r#","input":"#) {
                input = Some(read_input(r)?);
            }
        }
        let member = |member, r: &mut Reader<'a>| {
            match member {
                0 => tool_name.read(r, read_str)?,
                _ => input = Some(read_input(r)?),
            }
            Ok(())
        };
        let members = if usual {
            read_more_members(r, NAMES, member)?
        } else {
            read_members(r, NAMES, member)?
        };
        Ok(members.and_then(|()| {
            Ok(ExecuteParams {
                tool_name: Text::from_json(tool_name.required("toolName", A_STRING)?),
                input: input
                    .ok_or_else(|| FieldError::missing("a JSON value").in_member("input"))?,
            })
        }))
    }

    pub(super) fn write(self) -> Value {
        object([
            ("toolName", Some(self.tool_name.into())),
            ("input", Some(self.input)),
        ])
    }

    pub(super) fn encode(&self, out: &mut Vec<u8>) {
        ExecuteParams::write_parts(&self.tool_name, &self.input, out);
    }

    /// Appends `tools/execute` params for `tool_name` and `input` to `out`, as
    /// [`write_json`](Self::write_json) does, without an `ExecuteParams` to hold them:
    /// how the Core sends a call, without a copy of its input.
    pub(crate) fn write_parts(tool_name: &str, input: &Value, out: &mut Vec<u8>) {
        // Both members always: the names in one piece with what surrounds them.
        out.extend_from_slice(br#"{"toolName":"#);
        json::write_string(tool_name, out);
        out.extend_from_slice(br#","input":"#);
        json::write_value(input, out);
        out.push(b'}');
    }
}

impl ToolResult {
    /// A successful result holding one text item.
    pub fn text(text: impl Into<Text>) -> ToolResult {
        ToolResult {
            content: alloc::vec![Content::text(text)],
            is_error: false,
        }
    }

    /// A tool-level failure (`isError: true`) holding one text item: the LLM sees it.
    pub fn error_text(text: impl Into<Text>) -> ToolResult {
        ToolResult {
            content: alloc::vec![Content::text(text)],
            is_error: true,
        }
    }

    /// A tool-level failure (`isError: true`) with these content items: the LLM sees
    /// them, as it sees a result. ([`error_text`](ToolResult::error_text) is the
    /// one-text case.) A protocol-level failure is a JSON-RPC error instead.
    ///
    /// ```
    /// use dhara_protocol::json::Value;
    /// use dhara_protocol::message::{Content, ToolResult};
    ///
    /// let result = ToolResult::error([Content::text("no such file: a.txt")]);
    /// assert!(result.is_error);
    /// assert_eq!(
    ///     Value::from(result).to_string(),
    ///     r#"{"content":[{"type":"text","text":"no such file: a.txt"}],"isError":true}"#
    /// );
    /// ```
    pub fn error(content: impl IntoIterator<Item = Content>) -> ToolResult {
        ToolResult {
            content: content.into_iter().collect(),
            is_error: true,
        }
    }

    pub(super) fn read(r: &mut Reader<'_>) -> Read<ToolResult> {
        const NAMES: &[&str] = &["content", "isError"];
        let (mut content, mut is_error) = (Slot::new(), Slot::new());
        let usual = r.skip_prefix(USUAL_TEXT_RESULT);
        if usual {
            // A result as writers spell it, a text item first: that item and the list
            // are read on from its text, then the members after the list.
            let start = r.offset() - USUAL_TEXT_ITEM.len();
            let text = match Seen::read_text(r)? {
                Seen::Text(text) => {
                    // The usual end, the one item and `isError` closed in one compare.
                    for (end, is_error) in [(USUAL_END_OK, false), (USUAL_END_ERROR, true)] {
                        if r.skip_prefix(end) {
                            let text = Text::from_json(text);
                            let content = alloc::vec![Content::Text { text }];
                            return Ok(Ok(ToolResult { content, is_error }));
                        }
                    }
                    Seen::Text(text)
                }
                other => other,
            };
            let first = Content::read_members_of(r, start, Item::text(text))?;
            let mut items = Ok(Vec::new());
            add_element(&mut items, first, 0);
            content.0 = Some(read_more_elements(r, items, 1, Content::read)?);
        }
        let member = |member, r: &mut Reader<'_>| match member {
            0 => content.read(r, |r| read_list(r, Content::read)),
            _ => is_error.read(r, read_flag),
        };
        let members = if usual {
            read_more_members(r, NAMES, member)?
        } else {
            read_members(r, NAMES, member)?
        };
        Ok(members.and_then(|()| {
            Ok(ToolResult {
                content: content.required("content", AN_ARRAY)?,
                is_error: is_error.optional("isError")?.unwrap_or(false),
            })
        }))
    }

    pub(super) fn write(self) -> Value {
        let content = Value::Array(self.content.into_iter().map(Content::write).collect());
        object([
            ("content", Some(content)),
            ("isError", Some(Value::Bool(self.is_error))),
        ])
    }

    pub(super) fn encode(&self, out: &mut Vec<u8>) {
        // Both members always, so the fixed text around the list in one piece each.
        out.extend_from_slice(br#"{"content":"#);
        json::write_array(&self.content, Content::encode, out);
        out.extend_from_slice(if self.is_error {
            br#","isError":true}"#
        } else {
            br#","isError":false}"#
        });
    }
}

impl Content {
    /// A text item.
    pub fn text(text: impl Into<Text>) -> Content {
        Content::Text { text: text.into() }
    }

    /// The item's `type` as written on the wire: `text`, `image`, `file`, or for an
    /// unknown item its `type` member (`None` if it has no string `type`).
    pub fn kind(&self) -> Option<&str> {
        match self {
            Content::Text { .. } => Some("text"),
            Content::ImageData { .. } | Content::ImagePath { .. } => Some("image"),
            Content::File { .. } => Some("file"),
            Content::Unknown(object) => object.get("type").and_then(Value::as_str),
        }
    }

    pub(super) fn read(r: &mut Reader<'_>) -> Read<Content> {
        if r.peek() != Some(b'{') {
            return mistyped(r, AN_OBJECT);
        }
        let start = r.offset();
        r.begin_object()?;
        Content::read_members_of(r, start, Item::default())
    }

    /// The rest of [`read`](Content::read), from the item's next member on, with
    /// the members read before it in `item`; `start` is where the item's `{` is.
    fn read_members_of<'a>(r: &mut Reader<'a>, start: usize, mut item: Item<'a>) -> Read<Content> {
        while let Some(name) = r.next_known_member(&ITEM_MEMBERS)? {
            let slot = match name {
                Name::Known(0) => {
                    item.kind = Some(Kind::read(r)?);
                    continue;
                }
                Name::Known(1) => {
                    item.text = Some(Seen::read_text(r)?);
                    continue;
                }
                Name::Known(2) => &mut item.data,
                Name::Known(3) => &mut item.mime_type,
                Name::Known(4) => &mut item.path,
                Name::Known(_) => &mut item.size,
                Name::Other(_) => {
                    r.skip_value()?;
                    continue;
                }
            };
            *slot = Some(Seen::read(r)?);
        }
        if let Some(content) = item.fit() {
            return Ok(Ok(content));
        }
        // Kept whole: the item's text, read again as a tree.
        let text = r.input().get(start..r.offset());
        debug_assert!(text.is_some(), "the item lies within the input");
        let text = text.unwrap_or(b"{}");
        match json::parse_with(text, &VALUE_TEXT)? {
            Value::Object(object) => Ok(Ok(Content::Unknown(object))),
            _ => Ok(Ok(Content::Unknown(Object::new()))),
        }
    }

    pub(super) fn write(self) -> Value {
        let kind = |k: &str| Some(Value::from(k));
        match self {
            Content::Text { text } => object([("type", kind("text")), ("text", Some(text.into()))]),
            Content::ImageData { mime_type, data } => object([
                ("type", kind("image")),
                ("mimeType", Some(mime_type.into())),
                ("data", Some(data.into())),
            ]),
            Content::ImagePath { path, mime_type } => object([
                ("type", kind("image")),
                ("path", Some(path.into())),
                ("mimeType", mime_type.map(Value::from)),
            ]),
            Content::File {
                path,
                size,
                mime_type,
            } => object([
                ("type", kind("file")),
                ("path", Some(path.into())),
                ("size", size.map(Value::from)),
                ("mimeType", mime_type.map(Value::from)),
            ]),
            Content::Unknown(object) => Value::Object(object),
        }
    }

    pub(super) fn encode(&self, out: &mut Vec<u8>) {
        if let Content::Unknown(object) = self {
            return json::write_object(object, out);
        }
        if let Content::Text { text } = self {
            // The usual item, its fixed start in one piece.
            out.extend_from_slice(br#"{"type":"text","text":"#);
            json::write_str(text.as_json(), out);
            out.push(b'}');
            return;
        }
        let mut o = ObjectWriter::begin(out);
        match self {
            Content::Text { .. } => {}
            Content::ImageData { mime_type, data } => {
                o.fixed(r#""type":"image""#);
                o.string("mimeType", mime_type);
                o.string("data", data);
            }
            Content::ImagePath { path, mime_type } => {
                o.fixed(r#""type":"image""#);
                o.string("path", path);
                o.optional_string("mimeType", mime_type.as_deref());
            }
            Content::File {
                path,
                size,
                mime_type,
            } => {
                o.fixed(r#""type":"file""#);
                o.string("path", path);
                if let Some(size) = size {
                    o.member("size")
                        .extend_from_slice(json::Number::from(*size).text_bytes());
                }
                o.optional_string("mimeType", mime_type.as_deref());
            }
            Content::Unknown(_) => {}
        }
        o.end();
    }
}

/// What a content item's member held, as far as fitting it to a typed variant
/// needs: strings borrowed from the text when they hold no escape.
enum Seen<'a> {
    Null,
    String(Cow<'a, str>),
    /// A `text` member's string, kept as the [`Text`] of a text item keeps it.
    Text(Str),
    /// A number that is a `u64`.
    U64(u64),
    /// Anything else.
    Other,
}

/// The content types this crate reads into typed variants.
#[derive(Clone, Copy)]
enum Kind {
    Text,
    Image,
    File,
}

impl Kind {
    /// Reads a `type`: one of the known types, matched in place, or `None` for any
    /// other value.
    fn read(r: &mut Reader<'_>) -> Result<Option<Kind>, json::Error> {
        if r.peek() != Some(b'"') {
            r.skip_value()?;
            return Ok(None);
        }
        Ok(match r.read_known_str(&["text", "image", "file"])?.0 {
            Name::Known(0) => Some(Kind::Text),
            Name::Known(1) => Some(Kind::Image),
            Name::Known(_) => Some(Kind::File),
            Name::Other(_) => None,
        })
    }
}

impl<'a> Seen<'a> {
    /// Reads a `text` member: a short string inline, with nothing to check when
    /// it is ASCII without escapes.
    fn read_text(r: &mut Reader<'a>) -> Result<Seen<'a>, json::Error> {
        match r.peek() {
            Some(b'"') => Ok(Seen::Text(r.read_inline_str()?)),
            _ => Seen::read(r),
        }
    }

    fn read(r: &mut Reader<'a>) -> Result<Seen<'a>, json::Error> {
        Ok(match r.peek() {
            Some(b'"') => Seen::String(r.read_str()?.0),
            Some(b'n') => {
                r.skip_value()?;
                Seen::Null
            }
            Some(b'-' | b'0'..=b'9') => r.read_number()?.as_u64().map_or(Seen::Other, Seen::U64),
            _ => {
                r.skip_value()?;
                Seen::Other
            }
        })
    }
}

/// How writers spell a tool result up to the text of its first item, when that is a
/// text item.
const USUAL_TEXT_RESULT: &str = r#"{"content":[{"type":"text","text":"#;

/// How writers end a tool result after the text of its one text item.
const USUAL_END_OK: &str = r#"}],"isError":false}"#;

/// [`USUAL_END_OK`] for a tool error.
const USUAL_END_ERROR: &str = r#"}],"isError":true}"#;

/// The part of [`USUAL_TEXT_RESULT`] from the item's `{` on.
const USUAL_TEXT_ITEM: &str = r#"{"type":"text","text":"#;

/// The members of a content item read, in the order of [`Item`]'s fields.
const ITEM_MEMBERS: [&str; 6] = ["type", "text", "data", "mimeType", "path", "size"];

/// The members of a content item that decide its variant (the last of each when
/// repeated); `None` when absent.
#[derive(Default)]
struct Item<'a> {
    /// `Some(None)` for a `type` that is not a known one.
    kind: Option<Option<Kind>>,
    text: Option<Seen<'a>>,
    data: Option<Seen<'a>>,
    mime_type: Option<Seen<'a>>,
    path: Option<Seen<'a>>,
    size: Option<Seen<'a>>,
}

impl<'a> Item<'a> {
    /// A text item whose `text` member was read as `text`.
    fn text(text: Seen<'a>) -> Item<'a> {
        Item {
            kind: Some(Some(Kind::Text)),
            text: Some(text),
            ..Item::default()
        }
    }

    /// The typed variant for an item whose `type` and members fit one; `None` for
    /// every other item.
    fn fit(self) -> Option<Content> {
        fn string(seen: Option<Seen<'_>>) -> Option<String> {
            match seen {
                Some(Seen::String(s)) => Some(s.into_owned()),
                _ => None,
            }
        }
        fn optional_string(seen: Option<Seen<'_>>) -> Option<Option<String>> {
            match seen {
                None | Some(Seen::Null) => Some(None),
                Some(Seen::String(s)) => Some(Some(s.into_owned())),
                _ => None,
            }
        }
        let Item {
            kind: Some(Some(kind)),
            text,
            data,
            mime_type,
            path,
            size,
        } = self
        else {
            return None;
        };
        let content = match kind {
            Kind::Text => Content::Text {
                text: match text {
                    Some(Seen::Text(s)) => Text::from_json(s),
                    Some(Seen::String(s)) => Text::from(s),
                    _ => return None,
                },
            },
            Kind::Image if !matches!(data, None | Some(Seen::Null)) => Content::ImageData {
                mime_type: string(mime_type)?,
                data: string(data)?,
            },
            Kind::Image => Content::ImagePath {
                path: string(path)?,
                mime_type: optional_string(mime_type)?,
            },
            Kind::File => Content::File {
                path: string(path)?,
                size: match size {
                    None | Some(Seen::Null) => None,
                    Some(Seen::U64(size)) => Some(size),
                    Some(_) => return None,
                },
                mime_type: optional_string(mime_type)?,
            },
        };
        Some(content)
    }
}
