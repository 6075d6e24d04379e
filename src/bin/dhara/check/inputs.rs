//! Inputs for the real calls: a value that satisfies a tool's `inputSchema`, built
//! from what the schema says it needs.
//!
//! Only what an input must hold is built: the `required` members of an object, the
//! `minItems` elements of an array, nothing optional. For each value, in this order:
//! `const`, the first of `enum`, `default`, then a value of its `type` (the first
//! non-null type of a union), kept within `minimum`/`maximum` and
//! `minLength`/`maxLength`. Without a `type`, `properties` or `required` mean an
//! object and `items` an array; any other value is a string. `$ref`, `allOf`, `oneOf`
//! and the like are not followed: the caller checks the result with the validator and
//! asks for an input (`--call`) when it does not fit.

use dhara_protocol::json::{Number, Object, Value};

/// How deep a schema is followed; below it a value is `null`.
const MAX_DEPTH: usize = 32;
/// The most elements built for an array, whatever its `minItems`.
const MAX_ITEMS: usize = 16;
/// The longest string built, whatever its `minLength`.
const MAX_STRING: usize = 256;
/// The string every string value starts from.
const SAMPLE_TEXT: &str = "dhara-check";

/// An input for a tool whose `inputSchema` is `schema` (`None`: no schema). A tool's
/// input is an object, so a schema that says nothing about the type gives `{}`.
pub(super) fn input_for(schema: Option<&Value>) -> Value {
    match schema {
        Some(schema @ Value::Object(object)) if declares_value(object) => value_for(schema, 0),
        _ => Value::Object(Object::new()),
    }
}

/// Whether a schema object fixes what kind of value it wants.
fn declares_value(object: &Object) -> bool {
    ["type", "const", "enum", "default", "properties", "required"]
        .iter()
        .any(|k| object.contains_key(k))
}

/// A value that satisfies `schema`, as far as the keywords above go.
fn value_for(schema: &Value, depth: usize) -> Value {
    let Value::Object(s) = schema else {
        return Value::from(SAMPLE_TEXT);
    };
    if depth >= MAX_DEPTH {
        return Value::Null;
    }
    if let Some(value) = s.get("const") {
        return value.clone();
    }
    if let Some(first) = s
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    if let Some(value) = s.get("default") {
        return value.clone();
    }
    match type_of(s) {
        "object" => object_for(s, depth),
        "array" => array_for(s, depth),
        "integer" => number_for(s, true),
        "number" => number_for(s, false),
        "boolean" => Value::Bool(false),
        "null" => Value::Null,
        _ => string_for(s),
    }
}

/// The type a schema asks for: its `type` (the first non-null one of a union), else
/// what its keywords imply.
fn type_of(s: &Object) -> &str {
    match s.get("type") {
        Some(Value::String(t)) => return t.as_str(),
        Some(Value::Array(types)) => {
            let names = types.iter().filter_map(Value::as_str);
            let mut names = names.clone().filter(|t| *t != "null").chain(names);
            if let Some(first) = names.next() {
                return first;
            }
        }
        _ => {}
    }
    if s.contains_key("properties") || s.contains_key("required") {
        "object"
    } else if s.contains_key("items") || s.contains_key("prefixItems") {
        "array"
    } else {
        "string"
    }
}

/// An object with each `required` member, each built from its schema in
/// `properties` (a member without one is a string).
fn object_for(s: &Object, depth: usize) -> Value {
    let properties = s.get("properties").and_then(Value::as_object);
    let mut object = Object::new();
    let required = s.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        if object.contains_key(name) {
            continue;
        }
        let value = match properties.and_then(|p| p.get(name)) {
            Some(schema) => value_for(schema, depth + 1),
            None => Value::from(SAMPLE_TEXT),
        };
        object.push(name, value);
    }
    Value::Object(object)
}

/// An array of `minItems` elements: by position from `prefixItems` (or an array
/// `items`), then from the schema for the rest.
fn array_for(s: &Object, depth: usize) -> Value {
    let wanted = s
        .get("minItems")
        .and_then(Value::as_u64)
        .map_or(0, |n| usize::try_from(n).unwrap_or(MAX_ITEMS))
        .min(MAX_ITEMS);
    let (positional, rest) = match (s.get("prefixItems"), s.get("items")) {
        (Some(Value::Array(prefix)), rest) => (prefix.as_slice(), rest),
        (None, Some(Value::Array(prefix))) => (prefix.as_slice(), s.get("additionalItems")),
        (_, rest) => (&[][..], rest),
    };
    let count = wanted.max(positional.len().min(MAX_ITEMS));
    let elements = (0..count)
        .map(|i| match positional.get(i).or(rest) {
            Some(schema) => value_for(schema, depth + 1),
            None => Value::from(SAMPLE_TEXT),
        })
        .collect();
    Value::Array(elements)
}

/// A number within the schema's bounds: 1 when they allow it, else the nearest
/// bound (one past an exclusive one); an integer when `integral`.
fn number_for(s: &Object, integral: bool) -> Value {
    let bound = |name: &str| s.get(name).and_then(Value::as_f64);
    let exclusive = |name: &str, plain: &str| match s.get(name) {
        Some(Value::Bool(true)) => bound(plain).map(|b| (b, true)),
        Some(Value::Number(n)) => Some((n.as_f64(), true)),
        _ => bound(plain).map(|b| (b, false)),
    };
    let mut value: f64 = 1.0;
    match exclusive("exclusiveMinimum", "minimum") {
        Some((low, true)) if value <= low => {
            value = if integral {
                low.floor() + 1.0
            } else {
                low + 1.0
            };
        }
        Some((low, false)) if value < low => value = if integral { low.ceil() } else { low },
        _ => {}
    }
    match exclusive("exclusiveMaximum", "maximum") {
        Some((high, true)) if value >= high => {
            value = if integral {
                high.ceil() - 1.0
            } else {
                high - 1.0
            };
        }
        Some((high, false)) if value > high => {
            value = if integral { high.floor() } else { high };
        }
        _ => {}
    }
    if value.fract() == 0.0 && value.abs() < 9.0e15 {
        // Written as an integer (`3`, not `3.0`), which every reader takes for a
        // number too: exact below 2^53.
        #[allow(clippy::cast_possible_truncation)]
        return Value::Number(Number::from(value as i64));
    }
    Number::from_f64(value).map_or(Value::Null, Value::Number)
}

/// A string of `SAMPLE_TEXT` cut or padded to fit `minLength` and `maxLength`.
fn string_for(s: &Object) -> Value {
    let length = |name: &str| {
        s.get(name)
            .and_then(Value::as_u64)
            .map(|n| usize::try_from(n).unwrap_or(MAX_STRING).min(MAX_STRING))
    };
    let mut text = String::from(SAMPLE_TEXT);
    if let Some(min) = length("minLength") {
        while text.len() < min {
            text.push('x');
        }
    }
    if let Some(max) = length("maxLength") {
        text.truncate(max);
    }
    Value::from(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dhara_protocol::json;
    use dhara_protocol::schema::validate;

    fn schema(text: &str) -> Value {
        match json::parse(text.as_bytes()) {
            Ok(schema) => schema,
            Err(e) => panic!("bad test schema {text}: {e}"),
        }
    }

    fn text(value: &Value) -> String {
        String::from_utf8_lossy(&json::to_vec(value)).into_owned()
    }

    /// The input built for `text`, as JSON text, after checking that the validator
    /// accepts it.
    fn built(schema_text: &str) -> String {
        let schema = schema(schema_text);
        let input = input_for(Some(&schema));
        if let Err(e) = validate(&schema, &input) {
            panic!("the input built for {schema_text} does not fit it: {e}");
        }
        text(&input)
    }

    #[test]
    fn only_required_members_are_built() {
        assert_eq!(
            built(
                r#"{"type":"object","properties":{"url":{"type":"string"},"depth":{"type":"integer"}},"required":["url"]}"#
            ),
            r#"{"url":"dhara-check"}"#
        );
        assert_eq!(built(r#"{"type":"object"}"#), "{}");
        // A required member without a schema of its own is a string.
        assert_eq!(built(r#"{"required":["x"]}"#), r#"{"x":"dhara-check"}"#);
    }

    #[test]
    fn const_enum_and_default_come_first() {
        assert_eq!(
            built(
                r#"{"type":"object","properties":{
                    "a":{"type":"string","const":"fixed"},
                    "b":{"type":"string","enum":["red","green"]},
                    "c":{"type":"integer","default":7},
                    "d":{"enum":[null,1]}
                },"required":["a","b","c","d"]}"#
            ),
            r#"{"a":"fixed","b":"red","c":7,"d":null}"#
        );
    }

    #[test]
    fn each_type_gets_a_value_of_its_own() {
        assert_eq!(
            built(
                r#"{"type":"object","properties":{
                    "i":{"type":"integer"},"n":{"type":"number"},"b":{"type":"boolean"},
                    "z":{"type":"null"},"s":{"type":"string"},"u":{"type":["null","integer"]},
                    "o":{"type":"object","properties":{"k":{"type":"boolean"}},"required":["k"]}
                },"required":["i","n","b","z","s","u","o"]}"#
            ),
            r#"{"i":1,"n":1,"b":false,"z":null,"s":"dhara-check","u":1,"o":{"k":false}}"#
        );
    }

    #[test]
    fn arrays_get_their_minimum_of_items() {
        assert_eq!(
            built(
                r#"{"type":"object","properties":{
                    "tags":{"type":"array","items":{"type":"string"},"minItems":2},
                    "none":{"type":"array","items":{"type":"string"}},
                    "pair":{"type":"array","prefixItems":[{"type":"integer"},{"type":"boolean"}]},
                    "old":{"type":"array","items":[{"type":"null"}],"additionalItems":{"type":"integer"},"minItems":2}
                },"required":["tags","none","pair","old"]}"#
            ),
            r#"{"tags":["dhara-check","dhara-check"],"none":[],"pair":[1,false],"old":[null,1]}"#
        );
        // A huge minItems is not followed: the validator then refuses the input,
        // and the check asks for one.
        let many = schema(r#"{"type":"array","minItems":1000}"#);
        let built = input_for(Some(&schema(
            r#"{"required":["m"],"properties":{"m":{"type":"array","minItems":1000}}}"#,
        )));
        assert_eq!(built["m"].as_array().map(Vec::len), Some(MAX_ITEMS));
        assert!(validate(&many, &built["m"]).is_err());
    }

    #[test]
    fn bounds_are_kept() {
        assert_eq!(
            built(
                r#"{"type":"object","properties":{
                    "a":{"type":"integer","minimum":5},
                    "b":{"type":"integer","exclusiveMinimum":5},
                    "c":{"type":"integer","maximum":-3},
                    "d":{"type":"number","minimum":2.5},
                    "e":{"type":"integer","maximum":0,"exclusiveMaximum":true},
                    "f":{"type":"string","minLength":14},
                    "g":{"type":"string","maxLength":3}
                },"required":["a","b","c","d","e","f","g"]}"#
            ),
            r#"{"a":5,"b":6,"c":-3,"d":2.5,"e":-1,"f":"dhara-checkxxx","g":"dha"}"#
        );
    }

    #[test]
    fn no_schema_or_a_loose_one_gives_an_empty_object() {
        assert_eq!(text(&input_for(None)), "{}");
        for loose in ["true", "{}", r#"{"description":"anything"}"#] {
            assert_eq!(text(&input_for(Some(&schema(loose)))), "{}");
        }
    }

    #[test]
    fn a_deep_schema_is_followed_only_so_far() {
        let mut text = String::from(r#"{"type":"string"}"#);
        // 60 levels of objects: within the parser's depth, beyond the generator's.
        for _ in 0..60 {
            text = format!(r#"{{"type":"object","properties":{{"x":{text}}},"required":["x"]}}"#);
        }
        let input = input_for(Some(&schema(&text)));
        let mut depth = 0;
        let mut at = &input;
        while let Some(inner) = at.get("x") {
            depth += 1;
            at = inner;
        }
        assert_eq!(depth, MAX_DEPTH);
        assert_eq!(*at, Value::Null);
    }
}
