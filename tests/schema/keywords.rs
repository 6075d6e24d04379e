//! The input validator, keyword by keyword: what each accepts and rejects, the path
//! and message of each error, the order errors are found in, and the depth guard.

use dhara_protocol::json::{self, Number, Object, Value, json};
use dhara_protocol::schema::{MAX_DEPTH, SchemaError, validate};

fn num(text: &str) -> Value {
    Value::Number(Number::from_text(text).expect("a JSON number"))
}

#[track_caller]
fn accepts(schema: &Value, instance: &Value) {
    if let Err(e) = validate(schema, instance) {
        panic!("{instance:?} rejected by {schema:?}: {e}");
    }
}

#[track_caller]
fn rejects(schema: &Value, instance: &Value) -> SchemaError {
    match validate(schema, instance) {
        Ok(()) => panic!("{instance:?} accepted by {schema:?}"),
        Err(e) => e,
    }
}

#[track_caller]
fn rejects_with(schema: &Value, instance: &Value, path: &str, message: &str) {
    let e = rejects(schema, instance);
    assert_eq!((e.path(), e.message()), (path, message));
    assert_eq!(e.to_string(), message);
}

fn fetch_url_schema() -> Value {
    json!({
        "type": "object",
        "properties": { "url": { "type": "string" } },
        "required": ["url"]
    })
}

#[test]
fn the_decisions_example() {
    let schema = fetch_url_schema();
    accepts(&schema, &json!({ "url": "https://example.com" }));
    rejects_with(&schema, &json!({}), "$", "Missing required parameter 'url'");
    rejects_with(
        &schema,
        &json!({ "uri": "x" }),
        "$",
        "Missing required parameter 'url'",
    );
    rejects_with(
        &schema,
        &json!({ "url": 1 }),
        "$.url",
        "Expected string, found number at $.url",
    );
    rejects_with(
        &schema,
        &json!(["url"]),
        "$",
        "Expected object, found array",
    );
}

#[test]
fn trivial_schemas() {
    for instance in [
        json!(null),
        json!(1),
        json!("s"),
        json!([1]),
        json!({ "a": {} }),
    ] {
        accepts(&json!(true), &instance);
        accepts(&json!({}), &instance);
        rejects_with(&json!(false), &instance, "$", "Value not allowed");
    }
}

#[test]
fn schemas_that_are_not_schemas_accept_everything() {
    for schema in [json!(null), json!(1), json!("object"), json!([])] {
        accepts(&schema, &json!({ "x": 1 }));
    }
}

#[test]
fn unknown_keywords_are_ignored() {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "t",
        "pattern": "^(?!a)",
        "format": "uri",
        "propertyNames": false,
        "x-custom": { "type": "string" },
        "type": "string"
    });
    accepts(&schema, &json!("not a uri and not matching"));
    rejects(&schema, &json!(1));
}

#[test]
fn malformed_keywords_are_ignored() {
    accepts(&json!({ "type": "strng" }), &json!(1));
    accepts(&json!({ "type": ["string", 7] }), &json!(1));
    accepts(&json!({ "type": [] }), &json!(1));
    accepts(&json!({ "required": "url" }), &json!({}));
    accepts(&json!({ "required": [1, null] }), &json!({}));
    accepts(&json!({ "properties": [] }), &json!({ "a": 1 }));
    accepts(&json!({ "enum": "a" }), &json!("b"));
    accepts(&json!({ "minimum": "5" }), &json!(1));
    accepts(&json!({ "minLength": (-1) }), &json!(""));
    accepts(&json!({ "items": 5 }), &json!([1]));
}

#[test]
fn type_names() {
    let cases = [
        ("null", json!(null), json!(0)),
        ("boolean", json!(false), json!("false")),
        ("object", json!({}), json!([])),
        ("array", json!([]), json!({})),
        ("number", json!(1), json!("1")),
        ("number", num("1.5"), json!(null)),
        ("string", json!(""), json!(null)),
        ("integer", json!(3), json!("3")),
    ];
    for (name, good, bad) in cases {
        let schema = json!({ "type": name });
        accepts(&schema, &good);
        let e = rejects(&schema, &bad);
        assert_eq!(
            e.message(),
            format!("Expected {name}, found {}", bad.type_name())
        );
    }
}

#[test]
fn integer_accepts_integral_values() {
    let schema = json!({ "type": "integer" });
    for text in [
        "0",
        "-0",
        "7",
        "1.0",
        "1e2",
        "1E+2",
        "2.50e1",
        "-3.000",
        "0.0",
        "1e400",
        "123456789012345678901234567890",
        "1.5e1",
    ] {
        accepts(&schema, &num(text));
    }
    for text in [
        "1.5",
        "0.1",
        "1e-1",
        "12.345e2",
        "-0.5",
        "1e-400",
        "123456789012345678901234567890.5",
    ] {
        let e = rejects(&schema, &num(text));
        assert_eq!(e.message(), format!("Expected integer, found {text}"));
    }
}

#[test]
fn type_unions() {
    let schema = json!({ "type": ["string", "null"] });
    accepts(&schema, &json!("a"));
    accepts(&schema, &json!(null));
    rejects_with(
        &schema,
        &json!(1),
        "$",
        "Expected string or null, found number",
    );
    let schema = json!({ "type": ["integer", "boolean", "array"] });
    accepts(&schema, &json!(true));
    rejects_with(
        &schema,
        &num("0.5"),
        "$",
        "Expected integer, boolean or array, found 0.5",
    );
    rejects_with(
        &schema,
        &json!({}),
        "$",
        "Expected integer, boolean or array, found object",
    );
}

#[test]
fn properties_apply_to_named_members() {
    let schema = json!({
        "type": "object",
        "properties": { "n": { "type": "integer" }, "s": { "type": "string" } }
    });
    accepts(&schema, &json!({ "n": 1, "s": "x", "other": [] }));
    accepts(&schema, &json!({}));
    rejects_with(
        &schema,
        &json!({ "s": 2 }),
        "$.s",
        "Expected string, found number at $.s",
    );
}

#[test]
fn required_members_in_listed_order() {
    let schema = json!({ "required": ["b", "a"] });
    accepts(&schema, &json!({ "a": null, "b": null }));
    rejects_with(
        &schema,
        &json!({ "a": 1 }),
        "$",
        "Missing required parameter 'b'",
    );
    rejects_with(&schema, &json!({}), "$", "Missing required parameter 'b'");
    // `required` on a non-object instance does nothing.
    accepts(&schema, &json!("text"));
}

#[test]
fn nested_errors_name_the_path() {
    let schema = json!({
        "type": "object",
        "properties": {
            "server": {
                "type": "object",
                "properties": { "host": { "type": "string" }, "port": { "type": "integer" } },
                "required": ["host"],
                "additionalProperties": false
            },
            "items": {
                "type": "array",
                "items": { "type": "object", "properties": { "name": { "type": "string" } } }
            }
        }
    });
    rejects_with(
        &schema,
        &json!({ "server": {} }),
        "$.server",
        "Missing required property 'host' at $.server",
    );
    rejects_with(
        &schema,
        &json!({ "server": { "host": "h", "user": "u" } }),
        "$.server",
        "Unexpected property 'user' at $.server",
    );
    rejects_with(
        &schema,
        &json!({ "server": { "host": "h", "port": "80" } }),
        "$.server.port",
        "Expected integer, found string at $.server.port",
    );
    rejects_with(
        &schema,
        &json!({ "items": [{ "name": "a" }, {}, { "name": "c" }, { "name": 4 }] }),
        "$.items[3].name",
        "Expected string, found number at $.items[3].name",
    );
}

#[test]
fn member_names_that_are_not_identifiers_are_quoted_in_paths() {
    let schema = json!({ "additionalProperties": { "type": "string" } });
    rejects_with(
        &schema,
        &json!({ "a b": 1 }),
        "$[\"a b\"]",
        "Expected string, found number at $[\"a b\"]",
    );
    rejects_with(
        &schema,
        &json!({ "1x": 1 }),
        "$[\"1x\"]",
        "Expected string, found number at $[\"1x\"]",
    );
    rejects_with(
        &schema,
        &json!({ "q\"\n": 1 }),
        "$[\"q\\\"\\n\"]",
        "Expected string, found number at $[\"q\\\"\\n\"]",
    );
    rejects_with(
        &schema,
        &json!({ "_ok9": 1 }),
        "$._ok9",
        "Expected string, found number at $._ok9",
    );
}

#[test]
fn additional_properties() {
    let closed = json!({ "properties": { "a": {} }, "additionalProperties": false });
    accepts(&closed, &json!({ "a": 1 }));
    rejects_with(
        &closed,
        &json!({ "a": 1, "b": 2 }),
        "$",
        "Unexpected parameter 'b'",
    );
    let open = json!({ "properties": { "a": {} }, "additionalProperties": true });
    accepts(&open, &json!({ "a": 1, "b": 2 }));
    let typed = json!({ "properties": { "a": {} }, "additionalProperties": { "type": "number" } });
    accepts(&typed, &json!({ "a": "s", "b": 2 }));
    rejects_with(
        &typed,
        &json!({ "a": "s", "b": "2" }),
        "$.b",
        "Expected number, found string at $.b",
    );
    // Patterns are not evaluated, so `additionalProperties` cannot tell which names
    // they cover and is not applied.
    let patterned = json!({ "patternProperties": { "^x-": {} }, "additionalProperties": false });
    accepts(&patterned, &json!({ "x-a": 1 }));
}

#[test]
fn false_property_schema() {
    let schema = json!({ "properties": { "legacy": false } });
    accepts(&schema, &json!({ "other": 1 }));
    rejects_with(
        &schema,
        &json!({ "legacy": 1 }),
        "$.legacy",
        "Value not allowed at $.legacy",
    );
}

#[test]
fn every_member_is_checked_even_shadowed_duplicates() {
    let schema = json!({ "properties": { "a": { "type": "string" } } });
    let mut o = Object::new();
    o.push("a", json!(1));
    o.push("a", json!("last"));
    rejects_with(
        &schema,
        &Value::Object(o),
        "$.a",
        "Expected string, found number at $.a",
    );
}

#[test]
fn enum_values() {
    let schema = json!({ "enum": ["celsius", "fahrenheit", 1, null] });
    accepts(&schema, &json!("celsius"));
    accepts(&schema, &num("1.0"));
    accepts(&schema, &json!(null));
    rejects_with(
        &schema,
        &json!("kelvin"),
        "$",
        "Expected one of \"celsius\", \"fahrenheit\", 1 or null, found \"kelvin\"",
    );
    rejects_with(
        &schema,
        &json!(2),
        "$",
        "Expected one of \"celsius\", \"fahrenheit\", 1 or null, found 2",
    );
    let compound = json!({ "enum": [[1, 2], { "a": 1 }] });
    accepts(&compound, &json!([1, (num("2.0"))]));
    rejects_with(
        &compound,
        &json!([2, 1]),
        "$",
        "Expected one of an array of 2 items or an object with 1 member, found an array of 2 items",
    );
}

#[test]
fn long_enums_and_values_are_cut_in_messages() {
    let allowed: Vec<Value> = (0..15).map(Value::from).collect();
    let schema = json!({ "enum": (Value::Array(allowed)) });
    let e = rejects(&schema, &json!(99));
    assert_eq!(
        e.message(),
        "Expected one of 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, … (15 in all), found 99"
    );
    let long = "x".repeat(1000);
    let e = rejects(&json!({ "const": "y" }), &json!(long));
    assert_eq!(
        e.message(),
        format!("Expected \"y\", found \"{}…\"", "x".repeat(40))
    );
}

#[test]
fn const_numbers_compare_by_value() {
    for (a, b) in [
        ("1", "1.0"),
        ("100", "1e2"),
        ("0", "-0"),
        ("0.5", "5e-1"),
        ("12345678901234567890123", "1.2345678901234567890123e22"),
    ] {
        accepts(&json!({ "const": (num(a)) }), &num(b));
        accepts(&json!({ "const": (num(b)) }), &num(a));
    }
    for (a, b) in [
        ("1", "1.0000000000000000000001"),
        ("9007199254740993", "9007199254740992"),
        ("1e2", "1e3"),
        ("-1", "1"),
    ] {
        rejects(&json!({ "const": (num(a)) }), &num(b));
    }
}

#[test]
fn const_objects_compare_as_unordered_maps_last_wins() {
    let schema = json!({ "const": { "a": 1, "b": [true, { "c": null }] } });
    accepts(
        &schema,
        &json!({ "b": [true, { "c": null }], "a": (num("1.0")) }),
    );
    rejects(&schema, &json!({ "a": 1 }));
    rejects(
        &schema,
        &json!({ "a": 1, "b": [true, { "c": null }], "d": 0 }),
    );
    rejects(&schema, &json!({ "a": 1, "b": [{ "c": null }, true] }));
    let mut dup = Object::new();
    dup.push("a", json!(0));
    dup.push("b", json!([true, { "c": null }]));
    dup.push("a", json!(1));
    accepts(&schema, &Value::Object(dup));
    let mut dup = Object::new();
    dup.push("a", json!(1));
    dup.push("a", json!(0));
    dup.push("b", json!([true, { "c": null }]));
    rejects(&schema, &Value::Object(dup));
    rejects_with(
        &schema,
        &json!([]),
        "$",
        "Expected an object with 2 members, found an array of 0 items",
    );
}

#[test]
fn const_distinguishes_types() {
    let schema = json!({ "const": false });
    accepts(&schema, &json!(false));
    for other in [
        json!(0),
        json!(null),
        json!("false"),
        json!([]),
        json!(true),
    ] {
        rejects(&schema, &other);
    }
}

#[test]
fn numeric_bounds() {
    let schema = json!({ "minimum": 1, "maximum": 10 });
    for ok in [json!(1), num("1.0"), num("5.5"), json!(10), num("1e1")] {
        accepts(&schema, &ok);
    }
    rejects_with(&schema, &json!(0), "$", "Expected a number >= 1, found 0");
    rejects_with(
        &schema,
        &num("10.000001"),
        "$",
        "Expected a number <= 10, found 10.000001",
    );
    let schema = json!({ "exclusiveMinimum": 1, "exclusiveMaximum": (num("1e1")) });
    accepts(&schema, &num("1.0000001"));
    rejects_with(
        &schema,
        &num("1.0"),
        "$",
        "Expected a number > 1, found 1.0",
    );
    rejects_with(
        &schema,
        &json!(10),
        "$",
        "Expected a number < 1e1, found 10",
    );
    // Draft 4: boolean exclusivity beside `minimum`/`maximum`.
    let schema =
        json!({ "minimum": 0, "exclusiveMinimum": true, "maximum": 1, "exclusiveMaximum": true });
    accepts(&schema, &num("0.5"));
    rejects_with(&schema, &json!(0), "$", "Expected a number > 0, found 0");
    rejects_with(&schema, &json!(1), "$", "Expected a number < 1, found 1");
    // Bounds do not apply to other types.
    accepts(&json!({ "minimum": 5 }), &json!("1"));
}

#[test]
fn numeric_bounds_are_exact_beyond_f64() {
    let schema = json!({ "maximum": (num("9007199254740992")) });
    accepts(&schema, &num("9007199254740992"));
    rejects(&schema, &num("9007199254740993"));
    let schema = json!({ "minimum": (num("-18446744073709551616")) });
    accepts(&schema, &num("-18446744073709551616"));
    rejects(&schema, &num("-18446744073709551617"));
    let schema = json!({ "exclusiveMinimum": 0 });
    accepts(&schema, &num("1e-400"));
    rejects(&schema, &num("-1e-400"));
    rejects(&schema, &num("0e5"));
    let schema = json!({ "maximum": (num("1e400")) });
    accepts(&schema, &num("9e399"));
    rejects(&schema, &num("1.0000000000000000001e400"));
    let schema = json!({ "minimum": (-2), "maximum": (num("-1.5")) });
    accepts(&schema, &num("-1.75"));
    rejects(&schema, &num("-1.25"));
    rejects(&schema, &num("-2.5"));
}

#[test]
fn string_lengths_count_unicode_scalar_values() {
    let schema = json!({ "minLength": 2, "maxLength": 3 });
    accepts(&schema, &json!("ab"));
    accepts(&schema, &json!("日本語"));
    accepts(&schema, &json!("😀😀"));
    rejects_with(
        &schema,
        &json!("😀"),
        "$",
        "Expected at least 2 characters, found 1",
    );
    rejects_with(
        &schema,
        &json!("abcd"),
        "$",
        "Expected at most 3 characters, found 4",
    );
    rejects_with(
        &json!({ "maxLength": 1 }),
        &json!("ab"),
        "$",
        "Expected at most 1 character, found 2",
    );
    accepts(&json!({ "maxLength": 0 }), &json!(""));
    accepts(&schema, &json!(12345));
}

#[test]
fn array_items() {
    let schema = json!({ "items": { "type": "integer" }, "minItems": 1, "maxItems": 3 });
    accepts(&schema, &json!([1, 2, 3]));
    rejects_with(
        &schema,
        &json!([]),
        "$",
        "Expected at least 1 item, found 0",
    );
    rejects_with(
        &schema,
        &json!([1, 2, 3, 4]),
        "$",
        "Expected at most 3 items, found 4",
    );
    rejects_with(
        &schema,
        &json!([1, "2", "3"]),
        "$[1]",
        "Expected integer, found string at $[1]",
    );
    accepts(&schema, &json!({ "not": "an array" }));
}

#[test]
fn array_items_by_position() {
    let tuple = json!({ "items": [{ "type": "string" }, { "type": "number" }] });
    accepts(&tuple, &json!(["a", 1, "anything", null]));
    rejects_with(
        &tuple,
        &json!([1]),
        "$[0]",
        "Expected string, found number at $[0]",
    );
    let closed = json!({ "items": [{ "type": "string" }], "additionalItems": false });
    rejects_with(
        &closed,
        &json!(["a", "b"]),
        "$[1]",
        "Value not allowed at $[1]",
    );
    let prefix = json!({ "prefixItems": [{ "type": "string" }], "items": { "type": "boolean" } });
    accepts(&prefix, &json!(["a", true, false]));
    rejects_with(
        &prefix,
        &json!(["a", true, 0]),
        "$[2]",
        "Expected boolean, found number at $[2]",
    );
}

#[test]
fn first_error_in_a_fixed_order() {
    let schema = json!({
        "type": "object",
        "required": ["a"],
        "properties": { "b": { "type": "string" }, "c": { "type": "string" } }
    });
    // `required` comes before the members.
    rejects_with(
        &schema,
        &json!({ "b": 1 }),
        "$",
        "Missing required parameter 'a'",
    );
    // Members in input order.
    rejects_with(
        &schema,
        &json!({ "a": 0, "c": 1, "b": 2 }),
        "$.c",
        "Expected string, found number at $.c",
    );
    // `type` before everything else.
    let schema = json!({ "type": "string", "enum": ["x"], "minLength": 5 });
    rejects_with(&schema, &json!(1), "$", "Expected string, found number");
    rejects_with(
        &schema,
        &json!("y"),
        "$",
        "Expected one of \"x\", found \"y\"",
    );
    // The same input gives the same error every time.
    let input = json!({ "a": 0, "c": 1, "b": 2 });
    let schema = json!({ "properties": { "b": { "type": "string" }, "c": { "type": "string" } } });
    assert_eq!(validate(&schema, &input), validate(&schema, &input));
}

/// A schema nested `levels` deep through `properties.a`, and an input to match.
fn nested(levels: usize) -> (Value, Value) {
    let mut schema = json!({ "type": "integer" });
    let mut input = json!(1);
    for _ in 0..levels {
        schema = json!({ "properties": { "a": (schema) } });
        input = json!({ "a": (input) });
    }
    (schema, input)
}

#[test]
fn depth_is_guarded() {
    let (schema, input) = nested(MAX_DEPTH - 1);
    accepts(&schema, &input);
    let (schema, input) = nested(MAX_DEPTH);
    let e = rejects(&schema, &input);
    assert_eq!(e.path(), format!("${}", ".a".repeat(MAX_DEPTH)));
    assert!(
        e.message()
            .starts_with("Input nested more than 128 levels deep at $.a.a"),
        "{e}"
    );
}

#[test]
fn depth_does_not_use_the_native_stack() {
    let (schema, input) = nested(MAX_DEPTH + 10);
    // A stack far too small for 128 levels of recursion.
    let outcome = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(32 * 1024)
            .spawn_scoped(scope, || {
                validate(&schema, &input).map_err(|e| e.path().len())
            })
            .expect("thread")
            .join()
    });
    assert_eq!(outcome.ok(), Some(Err(1 + 2 * MAX_DEPTH)));
}

/// `[[[…[1]…]]]`, `depth` arrays deep.
fn deep_array(depth: usize) -> Value {
    let mut v = json!(1);
    for _ in 0..depth {
        v = json!([(v)]);
    }
    v
}

/// Drops a deep value level by level: `Value`'s own drop (like its derived `Clone`
/// and `Debug`) recurses, and a value this deep would overflow the test's stack.
fn unwind(mut v: Value) {
    while let Value::Array(mut a) = v {
        v = a.pop().unwrap_or(Value::Null);
    }
}

#[test]
fn a_deep_input_under_a_shallow_schema_is_not_descended() {
    let input = deep_array(100_000);
    accepts(
        &json!({ "type": "array", "items": { "type": "array" } }),
        &input,
    );
    // Equality for `const` walks a work list, so depth does not matter there either.
    rejects(&json!({ "const": [[1]] }), &input);
    let mut schema = json!({ "const": (deep_array(100_000)) });
    accepts(&schema, &input);
    let mut deeper = json!({ "const": (deep_array(100_001)) });
    assert!(validate(&deeper, &input).is_err());
    for s in [&mut schema, &mut deeper] {
        unwind(
            s.as_object_mut()
                .and_then(|o| o.get_mut("const"))
                .map(Value::take)
                .unwrap_or_default(),
        );
    }
    unwind(input);
}

#[test]
fn unchecked_keywords_are_listed_once_and_annotations_never() {
    use dhara_protocol::schema::unchecked_keywords;
    let schema = json::parse(
        br#"{"$schema":"https://json-schema.org/draft/2020-12/schema","title":"t","type":"object",
            "properties":{"a":{"type":"string","format":"uri","pattern":"(x)\\1"},
                          "b":{"type":"array","items":{"anyOf":[{"type":"string"}],"pattern":"\\p{L}"}},
                          "c":{"type":"string","pattern":"^[a-z]+$"}},
            "additionalProperties":{"not":{}},"default":{}}"#,
    )
    .unwrap();
    assert_eq!(unchecked_keywords(&schema), ["pattern"]);
    let plain =
        json::parse(br#"{"type":"object","properties":{"x":{"enum":[1]}},"required":["x"]}"#)
            .unwrap();
    assert!(unchecked_keywords(&plain).is_empty());
    // Deeper than the validator's bound is not looked at.
    let mut deep = Vec::new();
    for _ in 0..200 {
        deep.extend_from_slice(br#"{"items":"#);
    }
    deep.extend_from_slice(br#"{"unevaluatedProperties":{}}"#);
    deep.extend(core::iter::repeat_n(b'}', 200));
    let options = dhara_protocol::json::ParseOptions {
        max_depth: 210,
        ..dhara_protocol::json::ParseOptions::DEFAULT
    };
    let deep = dhara_protocol::json::parse_with(&deep, &options).unwrap();
    assert!(unchecked_keywords(&deep).is_empty());
    let mut deep_not = Vec::new();
    for _ in 0..10 {
        deep_not.extend_from_slice(br#"{"items":"#);
    }
    deep_not.extend_from_slice(br#"{"unevaluatedProperties":{}}"#);
    deep_not.extend(core::iter::repeat_n(b'}', 10));
    let deep_not = json::parse(&deep_not).unwrap();
    assert_eq!(unchecked_keywords(&deep_not), ["unevaluatedProperties"]);
}

#[test]
fn unchecked_keywords_look_into_every_subschema_the_validator_checks() {
    use dhara_protocol::schema::unchecked_keywords;
    let schema = json!({
        "allOf": [{ "a1": 1 }],
        "anyOf": [{ "a2": 1 }],
        "oneOf": [{ "a3": 1 }],
        "not": { "a4": 1 },
        "if": { "a5": 1 },
        "then": { "a6": 1 },
        "else": { "a7": 1 },
        "contains": { "a8": 1 },
        "dependentSchemas": { "x": { "a9": 1 } },
        "dependencies": { "y": { "a10": 1 }, "z": ["y"] },
        "$defs": { "d": { "a11": 1 } },
        "definitions": { "e": { "a12": 1 } },
        "prefixItems": [{ "a13": 1 }],
        "items": { "a14": 1 },
        "additionalProperties": { "a15": 1 },
        "dependentRequired": { "x": ["y"] },
        "minProperties": 1, "maxProperties": 2, "uniqueItems": true, "multipleOf": 2,
        "minContains": 1, "maxContains": 2, "const": 1
    });
    let expected: Vec<String> = (1..=15).map(|i| format!("a{i}")).collect();
    assert_eq!(unchecked_keywords(&schema), expected);
}

#[test]
fn unchecked_keywords_report_references_that_are_not_followed() {
    use dhara_protocol::schema::unchecked_keywords;
    // Local pointers are followed, with escapes; the target's keywords are looked
    // at even outside `$defs`, once, whatever the cycles.
    let local = json!({
        "$defs": { "a/b": { "type": "string" }, "c%d": { "$ref": "#" } },
        "properties": {
            "x": { "$ref": "#/$defs/a~1b" },
            "y": { "$ref": "#/$defs/c%25d" },
            "z": { "$ref": "#/x-elsewhere/s" }
        },
        "x-elsewhere": { "s": { "pattern": "(?=a)" } }
    });
    assert_eq!(unchecked_keywords(&local), ["x-elsewhere", "pattern"]);
    let cycle = json!({ "$defs": { "a": { "$ref": "#/$defs/b" }, "b": { "$ref": "#/$defs/a" } }, "$ref": "#/$defs/a" });
    assert!(unchecked_keywords(&cycle).is_empty());
    for reference in [
        "https://example.com/s.json",
        "#anchor",
        "#/$defs/missing",
        "#/$defs/number/minimum",
        "other.json#/$defs/number",
    ] {
        let schema = json!({ "$defs": { "number": { "minimum": 1 } }, "$ref": (reference) });
        assert_eq!(unchecked_keywords(&schema), ["$ref"], "{reference}");
    }
    // The root's own `$id` names the document itself.
    let own = json!({ "$id": "https://example.com/s.json", "$defs": { "n": {} }, "$ref": "https://example.com/s.json#/$defs/n" });
    assert!(unchecked_keywords(&own).is_empty());
    // An embedded resource moves the base of its references: none is followed.
    let embedded =
        json!({ "$defs": { "n": { "$id": "n.json", "type": "number" } }, "$ref": "#/$defs/n" });
    assert_eq!(unchecked_keywords(&embedded), ["$ref"]);
    // `$schema` is an annotation for the drafts the validator knows, only.
    for (uri, unchecked) in [
        ("https://json-schema.org/draft/2020-12/schema", false),
        ("http://json-schema.org/draft-07/schema#", false),
        ("http://json-schema.org/draft-04/schema#", false),
        ("https://example.com/my-dialect", true),
    ] {
        let schema = json!({ "$schema": (uri), "type": "object" });
        assert_eq!(
            unchecked_keywords(&schema).len(),
            usize::from(unchecked),
            "{uri}"
        );
    }
}
