//! References: `$ref` to a place in the same schema document, by a JSON pointer in
//! a URI fragment (`#`, `#/$defs/name`, with `~0`, `~1` and percent-escapes), and
//! the `$schema` dialects whose rules for them differ.

use alloc::string::String;
use alloc::vec::Vec;

use super::MAX_DEPTH;
use super::keywords::subschemas;
use crate::json::Value;

/// The schema `reference` names in the document `root`; `None` when it is not a
/// JSON pointer into the document (a fragment alone, or after the URI of the root's
/// own `$id`), names no value, or names a value that is not a schema (neither an
/// object nor a boolean). Other URIs and anchors (`#name`) are not resolved.
pub(super) fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let (base, fragment) = reference.split_once('#').unwrap_or((reference, ""));
    if !base.is_empty() {
        let id = root.get("$id").and_then(Value::as_str)?;
        if id.strip_suffix('#').unwrap_or(id) != base {
            return None;
        }
    }
    let fragment = percent_decoded(fragment)?;
    let mut target = root;
    if !fragment.is_empty() {
        let pointer = fragment.strip_prefix('/')?;
        for token in pointer.split('/') {
            let token = token.replace("~1", "/").replace("~0", "~");
            target = match target {
                Value::Object(members) => members.get(token.as_str())?,
                Value::Array(elements) => elements.get(array_index(&token)?)?,
                _ => return None,
            };
        }
    }
    matches!(target, Value::Object(_) | Value::Bool(_)).then_some(target)
}

/// An array index in a JSON pointer: digits, without a leading zero but for `0`.
fn array_index(token: &str) -> Option<usize> {
    let digits = token.bytes().all(|b| b.is_ascii_digit());
    let leading_zero = token.len() > 1 && token.starts_with('0');
    if token.is_empty() || !digits || leading_zero {
        return None;
    }
    token.parse().ok()
}

/// A URI fragment with its `%XX` escapes decoded; `None` when an escape is cut
/// short or the bytes are not UTF-8.
fn percent_decoded(fragment: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(fragment.len());
    let mut rest = fragment.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        if b == b'%' {
            let hex = tail.get(..2)?;
            let text = core::str::from_utf8(hex).ok()?;
            bytes.push(u8::from_str_radix(text, 16).ok()?);
            rest = tail.get(2..)?;
        } else {
            bytes.push(b);
            rest = tail;
        }
    }
    String::from_utf8(bytes).ok()
}

/// Whether a schema below the root declares an `$id` that changes the base URI
/// (one that is not a bare `#anchor`). Fragments are then relative to that
/// resource, not the document, so no reference in the document is followed: each
/// is reported unchecked. Looks as deep as [`MAX_DEPTH`].
pub(super) fn has_embedded_resource(root: &Value) -> bool {
    let mut work: Vec<(&Value, usize)> = Vec::from([(root, 0)]);
    while let Some((schema, depth)) = work.pop() {
        let Value::Object(keywords) = schema else {
            continue;
        };
        if depth >= MAX_DEPTH {
            continue;
        }
        for (name, value) in keywords.iter() {
            let moves_base = value.as_str().is_some_and(|id| !id.starts_with('#'));
            if depth > 0 && name.as_str() == "$id" && moves_base {
                return true;
            }
            work.extend(subschemas(name.as_str(), value).map(|s| (s, depth + 1)));
        }
    }
    false
}

/// The JSON Schema dialects `$schema` may name, by its URI (`http` or `https`, with
/// or without an empty fragment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Dialect {
    /// Drafts 4, 6 and 7: a `$ref` replaces its schema, its siblings are ignored.
    Draft7OrEarlier,
    /// Drafts 2019-09 and 2020-12, and a schema that names none: a `$ref` applies
    /// beside its siblings.
    Current,
}

impl Dialect {
    /// The dialect the URI of a `$schema` names; `None` for one this module does
    /// not know.
    pub(super) fn named(uri: &str) -> Option<Dialect> {
        let uri = uri.strip_suffix('#').unwrap_or(uri);
        let path = uri
            .strip_prefix("https://json-schema.org/")
            .or_else(|| uri.strip_prefix("http://json-schema.org/"))?;
        match path {
            "draft-04/schema" | "draft-06/schema" | "draft-07/schema" => {
                Some(Dialect::Draft7OrEarlier)
            }
            "draft/2019-09/schema" | "draft/2020-12/schema" => Some(Dialect::Current),
            _ => None,
        }
    }

    /// The dialect of a whole schema document, by the `$schema` of its root.
    pub(super) fn of(root: &Value) -> Dialect {
        root.get("$schema")
            .and_then(Value::as_str)
            .and_then(Dialect::named)
            .unwrap_or(Dialect::Current)
    }
}
