//! How every message type is read and written: [`FieldError`], the readers of the
//! member types the protocol uses (strings, flags, ids, lists), the member loop, and
//! the object writer.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::json::{self, Name, Object, ParseOptions, Reader, Str, Value};
use crate::rpc::Id;

/// A member of a Dhara message that is missing or has the wrong type.
///
/// The [`path`](FieldError::path) names the member from the value that was read:
/// member names joined by `.`, array elements as `[index]`, such as
/// `tools[2].inputSchema`. It is empty when the value itself has the wrong type.
///
/// ```
/// use dhara_protocol::json::{Object, Value};
/// use dhara_protocol::message::ExecuteParams;
///
/// let params = Value::Object(Object::from_iter([("input", Value::Object(Object::new()))]));
/// let err = ExecuteParams::from_value(&params).unwrap_err();
/// assert_eq!(err.path(), "toolName");
/// assert_eq!(err.to_string(), "toolName: missing, expected a string");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct FieldError {
    // Boxed: a reading result that may hold the error stays small to move, and
    // the error is the rare case.
    details: Box<Details>,
}

#[derive(Clone, PartialEq, Eq)]
struct Details {
    path: String,
    expected: &'static str,
    found: Option<&'static str>,
}

impl FieldError {
    /// `expected` was not there: `found` names the JSON type of what was, `None`
    /// for nothing.
    pub(super) fn new(expected: &'static str, found: Option<&'static str>) -> FieldError {
        FieldError {
            details: Box::new(Details {
                path: String::new(),
                expected,
                found,
            }),
        }
    }

    pub(super) fn missing(expected: &'static str) -> FieldError {
        FieldError::new(expected, None)
    }

    /// Text that is not JSON where a value was expected. A checked
    /// [`RawValue`] never gives this.
    pub(super) fn not_json(_: json::Error) -> FieldError {
        FieldError::new("JSON text", Some("text that is not JSON"))
    }

    /// The same error, seen from the object that holds member `name`.
    pub(super) fn in_member(mut self, name: &str) -> FieldError {
        let path = &mut self.details.path;
        let separator = if path.is_empty() || path.starts_with('[') {
            ""
        } else {
            "."
        };
        path.insert_str(0, separator);
        path.insert_str(0, name);
        self
    }

    /// The same error, seen from the array that holds element `index`.
    pub(super) fn in_element(mut self, index: usize) -> FieldError {
        use core::fmt::Write;
        let mut prefix = String::new();
        let _ = write!(prefix, "[{index}]");
        let path = &mut self.details.path;
        if !(path.is_empty() || path.starts_with('[')) {
            prefix.push('.');
        }
        path.insert_str(0, &prefix);
        self
    }

    /// The path of the member, such as `tools[2].inputSchema` (empty for the value
    /// itself).
    pub fn path(&self) -> &str {
        &self.details.path
    }

    /// What the protocol expects there, such as `a string`.
    pub fn expected(&self) -> &str {
        self.details.expected
    }

    /// What was found: `missing`, or the JSON type of the value found there
    /// (as [`Value::type_name`] names it).
    pub fn found(&self) -> &str {
        self.details.found.unwrap_or("missing")
    }

    /// `true` when the member is absent (rather than of the wrong type).
    pub fn is_missing(&self) -> bool {
        self.details.found.is_none()
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Details {
            path,
            expected,
            found,
        } = &*self.details;
        if !path.is_empty() {
            write!(f, "{path}: ")?;
        }
        match found {
            None => write!(f, "missing, expected {expected}"),
            Some(found) => write!(f, "expected {expected}, found {found}"),
        }
    }
}

impl fmt::Debug for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FieldError")
            .field("path", &self.details.path)
            .field("expected", &self.details.expected)
            .field("found", &self.details.found)
            .finish()
    }
}

#[cfg(feature = "std")]
impl std::error::Error for FieldError {}

pub(super) const A_STRING: &str = "a string";
pub(super) const AN_OBJECT: &str = "an object";
pub(super) const AN_ARRAY: &str = "an array";
pub(super) const A_BOOLEAN: &str = "a boolean";
pub(super) const A_SCHEMA: &str = "a JSON Schema (an object or a boolean)";
pub(super) const AN_ID: &str = "a string, an integer or null";

// ---- Reading straight from JSON text ------------------------------------------------
//
// Every type is read with a `json::Reader` from the text of its value, building no tree
// except for the members that are JSON values themselves (a tool's `input` and
// `inputSchema`, an unknown content item). A reading function consumes the whole value
// it is at, whether it fits or not; the outer `Err` is text that is not JSON (which a
// checked `RawValue` never is), the inner one a member that does not fit.

/// What reading one value gives.
pub(super) type Read<T> = Result<Result<T, FieldError>, json::Error>;

/// The JSON type of the value at the reader, as [`Value::type_name`] names it.
pub(super) fn type_at(r: &mut Reader<'_>) -> &'static str {
    match r.peek() {
        Some(b'"') => "string",
        Some(b'{') => "object",
        Some(b'[') => "array",
        Some(b't' | b'f') => "boolean",
        Some(b'n') => "null",
        _ => "number",
    }
}

/// Skips the value at the reader, which is not what `expected` says.
pub(super) fn mistyped<T>(r: &mut Reader<'_>, expected: &'static str) -> Read<T> {
    let found = type_at(r);
    r.skip_value()?;
    Ok(Err(FieldError::new(expected, Some(found))))
}

/// Reads a string as a [`Str`]: inline, with no allocation, when short (a tool
/// name, a short text).
pub(super) fn read_str(r: &mut Reader<'_>) -> Read<Str> {
    match r.peek() {
        Some(b'"') => Ok(Ok(r.read_inline_str()?)),
        _ => mistyped(r, A_STRING),
    }
}

/// Reads a string.
pub(super) fn read_string(r: &mut Reader<'_>) -> Read<String> {
    match r.peek() {
        Some(b'"') => Ok(Ok(r.read_str()?.0.into_owned())),
        _ => mistyped(r, A_STRING),
    }
}

/// Reads a string or `null`.
pub(super) fn read_optional_string(r: &mut Reader<'_>) -> Read<Option<String>> {
    match r.peek() {
        Some(b'n') => r.skip_value().map(|_| Ok(None)),
        _ => Ok(read_string(r)?.map(Some)),
    }
}

/// Reads `true`, `false` or `null`.
pub(super) fn read_flag(r: &mut Reader<'_>) -> Read<Option<bool>> {
    match r.peek() {
        Some(b'n') => r.skip_value().map(|_| Ok(None)),
        Some(b't' | b'f') => Ok(Ok(Some(r.read_bool()?))),
        _ => mistyped(r, A_BOOLEAN),
    }
}

/// Reads a request id: a string, an integer or `null`.
pub(super) fn read_id(r: &mut Reader<'_>) -> Read<Option<Id>> {
    let id = match r.peek() {
        Some(b'n') => {
            r.skip_value()?;
            Id::Null
        }
        Some(b'"') => Id::String(r.read_string()?.0),
        Some(b'-' | b'0'..=b'9') => match r.read_integer()? {
            Some(n) => Id::Number(n),
            None => return Ok(Err(FieldError::new(AN_ID, Some("number")))),
        },
        _ => return mistyped(r, AN_ID),
    };
    Ok(Ok(Some(id)))
}

/// Reads an array, each element with `read`; the first element that does not fit
/// is the error.
pub(super) fn read_list<'a, T>(
    r: &mut Reader<'a>,
    read: fn(&mut Reader<'a>) -> Read<T>,
) -> Read<Vec<T>> {
    if r.peek() != Some(b'[') {
        return mistyped(r, AN_ARRAY);
    }
    r.begin_array()?;
    read_more_elements(r, Ok(Vec::new()), 0, read)
}

/// The rest of [`read_list`], from the element at `index`, with what was read
/// before it in `out`.
pub(super) fn read_more_elements<'a, T>(
    r: &mut Reader<'a>,
    mut out: Result<Vec<T>, FieldError>,
    mut index: usize,
    read: fn(&mut Reader<'a>) -> Read<T>,
) -> Read<Vec<T>> {
    while r.next_element()? {
        add_element(&mut out, read(r)?, index);
        index += 1;
    }
    Ok(out)
}

/// Adds the element at `index` to a list being read, or its error.
pub(super) fn add_element<T>(
    out: &mut Result<Vec<T>, FieldError>,
    element: Result<T, FieldError>,
    index: usize,
) {
    match (element, out) {
        // Most lists (a result's content) hold one item: room for just that one.
        (Ok(item), Ok(items)) if items.capacity() == 0 => *items = alloc::vec![item],
        (Ok(item), Ok(items)) => items.push(item),
        (Err(e), out @ Ok(_)) => *out = Err(e.in_element(index)),
        (_, Err(_)) => {}
    }
}

/// Reads an object whose members are named in `names`: `member` reads the value of
/// each member so named, given its index in `names`; the others are skipped. This
/// is the one member loop of every type; the names are matched in place
/// ([`Reader::next_known_member`]).
pub(super) fn read_members<'a>(
    r: &mut Reader<'a>,
    names: &[&str],
    member: impl FnMut(usize, &mut Reader<'a>) -> Result<(), json::Error>,
) -> Read<()> {
    if r.peek() != Some(b'{') {
        return mistyped(r, AN_OBJECT);
    }
    r.begin_object()?;
    read_more_members(r, names, member)
}

/// The rest of [`read_members`], from the next member (or the object's end) on.
#[inline]
pub(super) fn read_more_members<'a>(
    r: &mut Reader<'a>,
    names: &[&str],
    mut member: impl FnMut(usize, &mut Reader<'a>) -> Result<(), json::Error>,
) -> Read<()> {
    while let Some(name) = r.next_known_member(names)? {
        match name {
            Name::Known(index) => member(index, r)?,
            Name::Other(_) => _ = r.skip_value()?,
        }
    }
    Ok(Ok(()))
}

/// A member read as it came, the last one when repeated (as [`Object::get`] does).
pub(super) struct Slot<T>(pub(super) Option<Result<T, FieldError>>);

impl<T> Slot<T> {
    pub(super) fn new() -> Slot<T> {
        Slot(None)
    }

    /// Reads (again) the member's value.
    pub(super) fn read<'a>(
        &mut self,
        r: &mut Reader<'a>,
        read: fn(&mut Reader<'a>) -> Read<T>,
    ) -> Result<(), json::Error> {
        self.0 = Some(read(r)?);
        Ok(())
    }

    /// The member `name`, which must be present.
    pub(super) fn required(self, name: &str, expected: &'static str) -> Result<T, FieldError> {
        match self.0 {
            Some(read) => read.map_err(|e| e.in_member(name)),
            None => Err(FieldError::missing(expected).in_member(name)),
        }
    }
}

impl<T> Slot<Option<T>> {
    /// The member `name`, which may be absent.
    pub(super) fn optional(self, name: &str) -> Result<Option<T>, FieldError> {
        match self.0 {
            Some(read) => read.map_err(|e| e.in_member(name)),
            None => Ok(None),
        }
    }
}

/// Options for reading the text written from a [`Value`]: any depth (the value was
/// built, not read), lone surrogates as the writer escapes them.
pub(super) const VALUE_TEXT: ParseOptions = ParseOptions {
    max_depth: usize::MAX,
    strict_surrogates: false,
};

/// Reads a type from a reader at the start of its value, to the end of the text.
pub(super) fn read_whole<'a, T>(
    mut r: Reader<'a>,
    read: impl FnOnce(&mut Reader<'a>) -> Read<T>,
) -> Result<T, FieldError> {
    match read(&mut r).and_then(|field| r.finish().map(|()| field)) {
        Ok(field) => field,
        Err(error) => Err(FieldError::not_json(error)),
    }
}

/// Builds an object from members, leaving out the absent ones.
pub(super) fn object<const N: usize>(members: [(&str, Option<Value>); N]) -> Value {
    let mut object = Object::with_capacity(N);
    for (name, value) in members {
        if let Some(value) = value {
            object.push(name, value);
        }
    }
    Value::Object(object)
}

/// Writes one JSON object member by member: `write_json`'s counterpart of [`object`].
pub(super) struct ObjectWriter<'a> {
    out: &'a mut Vec<u8>,
    empty: bool,
}

impl<'a> ObjectWriter<'a> {
    pub(super) fn begin(out: &'a mut Vec<u8>) -> ObjectWriter<'a> {
        out.push(b'{');
        ObjectWriter { out, empty: true }
    }

    /// Writes the member's name, one of the protocol's own, which need no escape;
    /// the caller writes its value into the buffer returned.
    pub(super) fn member(&mut self, name: &'static str) -> &mut Vec<u8> {
        let comma: &[u8] = if self.empty { b"\"" } else { b",\"" };
        self.empty = false;
        self.out.extend_from_slice(comma);
        self.out.extend_from_slice(name.as_bytes());
        self.out.extend_from_slice(b"\":");
        self.out
    }

    /// Writes members whose names and values never change, given as their text
    /// (`"type":"text"`), in one piece.
    pub(super) fn fixed(&mut self, members: &'static str) {
        if !self.empty {
            self.out.push(b',');
        }
        self.empty = false;
        self.out.extend_from_slice(members.as_bytes());
    }

    pub(super) fn string(&mut self, name: &'static str, value: &str) {
        json::write_string(value, self.member(name));
    }

    pub(super) fn optional_string(&mut self, name: &'static str, value: Option<&str>) {
        if let Some(value) = value {
            self.string(name, value);
        }
    }

    pub(super) fn value(&mut self, name: &'static str, value: &Value) {
        json::write_value(value, self.member(name));
    }

    /// Writes the array member `name`, each element with `encode`.
    pub(super) fn list<T>(
        &mut self,
        name: &'static str,
        items: &[T],
        encode: fn(&T, &mut Vec<u8>),
    ) {
        json::write_array(items, encode, self.member(name));
    }

    pub(super) fn end(self) {
        self.out.push(b'}');
    }
}
