//! [`unchecked_keywords`]: what a schema asks that the validator does not check.

use alloc::string::String;
use alloc::vec::Vec;

use super::MAX_DEPTH;
use super::keywords::subschemas;
use super::pattern::Regex;
use super::refs::{Dialect, has_embedded_resource, resolve};
use crate::json::Value;

/// The keywords [`validate`](super::validate) checks (`$ref` only when it is
/// followed, see [`unchecked_keywords`]).
const CHECKED: &[&str] = &[
    "type",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "items",
    "prefixItems",
    "additionalItems",
    "contains",
    "minContains",
    "maxContains",
    "properties",
    "patternProperties",
    "propertyNames",
    "required",
    "additionalProperties",
    "minProperties",
    "maxProperties",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "$ref",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
];

/// Keywords that say something about a value without constraining it: never reported
/// as unchecked (`$schema` only when it names a dialect the validator knows).
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "$comment",
    "$anchor",
    "$dynamicAnchor",
    "$vocabulary",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "format",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    "$defs",
    "definitions",
];

/// The keywords in `schema` that constrain a value but that [`validate`](super::validate)
/// does not check, each named once, in the order first met (depth first). A tool
/// whose schema uses them is still callable; its input is just checked less than
/// its author meant.
///
/// Besides keywords the validator does not know (`unevaluatedProperties`,
/// `unevaluatedItems`, `$dynamicRef`, …), these are `pattern` and `patternProperties` with
/// a regular expression outside the subset the validator matches (see the
/// [module docs](super)), `$ref` when a reference is not followed
/// (a remote URI, an anchor, a pointer to nothing, or any reference in a document
/// with embedded resources) and `$schema` when it names a dialect other than
/// drafts 4, 6, 7, 2019-09 and 2020-12.
///
/// ```
/// use dhara_protocol::json;
/// use dhara_protocol::schema::unchecked_keywords;
///
/// let schema = json::parse(br#"{"type":"object","properties":{"url":{"type":"string","pattern":"^(?=https)"}},"not":{"required":["x"]}}"#).unwrap();
/// assert_eq!(unchecked_keywords(&schema), ["pattern"]);
/// let remote = json::parse(br#"{"$ref":"https://example.com/schema.json"}"#).unwrap();
/// assert_eq!(unchecked_keywords(&remote), ["$ref"]);
/// ```
pub fn unchecked_keywords(schema: &Value) -> Vec<String> {
    let root = schema;
    let follows_references = !has_embedded_resource(root);
    let dialect_known = |uri: &Value| uri.as_str().and_then(Dialect::named).is_some();
    let mut found: Vec<String> = Vec::new();
    // An explicit work list, as in `validate`, so no schema can overflow the stack;
    // past `MAX_DEPTH` the rest is not looked at.
    let mut work: Vec<(&Value, usize)> = Vec::from([(schema, 0)]);
    let mut later: Vec<(&Value, usize)> = Vec::new();
    // The targets of references already looked at, so that a cycle ends.
    let mut targets: Vec<&Value> = Vec::new();
    while let Some((schema, depth)) = work.pop() {
        let Value::Object(object) = schema else {
            continue;
        };
        if depth >= MAX_DEPTH {
            continue;
        }
        for (name, value) in object.iter() {
            let name = name.as_str();
            later.extend(subschemas(name, value).map(|v| (v, depth + 1)));
            let checked = match (name, value) {
                ("$ref", Value::String(reference)) => {
                    let target = resolve(root, reference).filter(|_| follows_references);
                    if let Some(target) = target {
                        if !targets.iter().any(|&t| core::ptr::eq(t, target)) {
                            targets.push(target);
                            later.push((target, depth + 1));
                        }
                    }
                    target.is_some()
                }
                ("$schema", uri) => dialect_known(uri),
                ("pattern", Value::String(pattern)) => Regex::new(pattern).is_some(),
                ("patternProperties", Value::Object(patterns)) => patterns
                    .iter()
                    .all(|(pattern, _)| Regex::new(pattern).is_some()),
                _ => CHECKED.contains(&name) || ANNOTATIONS.contains(&name),
            };
            if !checked && !found.iter().any(|f| f == name) {
                found.push(String::from(name));
            }
        }
        // Children in schema order: pushed reversed onto the work list.
        work.extend(later.drain(..).rev());
    }
    found
}
