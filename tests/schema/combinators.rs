//! The keywords beyond the plain ones, as real tool schemas (zod, pydantic,
//! schemars) use them: references, combinators, conditionals and the rarer
//! assertions. What each accepts and rejects, the message and path of each error,
//! and the bounds that keep cycles and deep schemas from looping or overflowing.

use dhara_protocol::json::{self, Value, json};
use dhara_protocol::schema::{
    MAX_DEPTH, MAX_SCHEMAS, PreparedSchema, SchemaError, unchecked_keywords, validate,
};

#[track_caller]
fn accepts(schema: &Value, instance: &Value) {
    if let Err(e) = validate(schema, instance) {
        panic!("{instance:?} rejected by {schema:?}: {e}");
    }
    assert_eq!(
        PreparedSchema::new(schema.clone()).validate(instance),
        Ok(())
    );
}

#[track_caller]
fn rejects(schema: &Value, instance: &Value) -> SchemaError {
    match validate(schema, instance) {
        Ok(()) => panic!("{instance:?} accepted by {schema:?}"),
        Err(e) => {
            let prepared = PreparedSchema::new(schema.clone()).validate(instance);
            assert_eq!(prepared.as_ref(), Err(&e));
            e
        }
    }
}

#[track_caller]
fn rejects_with(schema: &Value, instance: &Value, path: &str, message: &str) {
    let e = rejects(schema, instance);
    assert_eq!((e.path(), e.message()), (path, message));
}

/// A schema as pydantic writes it: a model in `$defs`, referred to, optional
/// fields as `anyOf` with null.
fn pydantic_schema() -> Value {
    json!({
        "$defs": {
            "Server": {
                "properties": {
                    "host": { "title": "Host", "type": "string" },
                    "port": { "anyOf": [{ "type": "integer", "minimum": 1 }, { "type": "null" }], "default": null }
                },
                "required": ["host"],
                "title": "Server",
                "type": "object"
            }
        },
        "properties": {
            "servers": { "items": { "$ref": "#/$defs/Server" }, "title": "Servers", "type": "array" },
            "mode": { "enum": ["fast", "safe"], "type": "string" }
        },
        "required": ["servers"],
        "title": "Deploy",
        "type": "object"
    })
}

#[test]
fn a_pydantic_schema() {
    let schema = pydantic_schema();
    assert!(unchecked_keywords(&schema).is_empty());
    accepts(
        &schema,
        &json!({ "servers": [{ "host": "a", "port": 80 }, { "host": "b", "port": null }, { "host": "c" }] }),
    );
    rejects_with(
        &schema,
        &json!({}),
        "$",
        "Missing required parameter 'servers'",
    );
    rejects_with(
        &schema,
        &json!({ "servers": [{ "host": "a" }, { "port": 1 }] }),
        "$.servers[1]",
        "Missing required property 'host' at $.servers[1]",
    );
    // A nullable union explains a miss by the one schema the type fits...
    rejects_with(
        &schema,
        &json!({ "servers": [{ "host": "a", "port": 0 }] }),
        "$.servers[0].port",
        "Expected a number >= 1, found 0 at $.servers[0].port",
    );
    // ...and by all the types when none fits.
    rejects_with(
        &schema,
        &json!({ "servers": [{ "host": "a", "port": "80" }] }),
        "$.servers[0].port",
        "Expected integer or null, found string at $.servers[0].port",
    );
}

/// A schema as zod-to-json-schema writes it: draft 7, `definitions`, a
/// discriminated union as `anyOf`, and `$ref` with nothing beside it.
#[test]
fn a_zod_schema() {
    let schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {
            "shape": {
                "anyOf": [
                    { "type": "object", "properties": { "kind": { "type": "string", "const": "circle" }, "r": { "type": "number" } }, "required": ["kind", "r"], "additionalProperties": false },
                    { "type": "object", "properties": { "kind": { "type": "string", "const": "square" }, "side": { "type": "number" } }, "required": ["kind", "side"], "additionalProperties": false }
                ]
            }
        },
        "type": "object",
        "properties": { "shape": { "$ref": "#/definitions/shape" } },
        "required": ["shape"],
        "additionalProperties": false
    });
    assert!(unchecked_keywords(&schema).is_empty());
    accepts(&schema, &json!({ "shape": { "kind": "circle", "r": 1 } }));
    accepts(
        &schema,
        &json!({ "shape": { "kind": "square", "side": 2 } }),
    );
    rejects_with(
        &schema,
        &json!({ "shape": { "kind": "triangle" } }),
        "$.shape",
        "Value does not match any of the allowed schemas (anyOf) at $.shape",
    );
    rejects_with(
        &schema,
        &json!({ "shape": [] }),
        "$.shape",
        "Expected object, found array at $.shape",
    );
    // Draft 7: a `$ref` stands for its whole schema, its siblings are ignored.
    let sibling = json!({ "$schema": "http://json-schema.org/draft-07/schema#", "definitions": { "s": { "type": "string" } }, "$ref": "#/definitions/s", "maxLength": 1 });
    accepts(&sibling, &json!("long"));
    rejects(&sibling, &json!(1));
    // From 2019-09 on, and with no `$schema`, they apply beside it.
    let mut current = sibling.clone();
    current.as_object_mut().unwrap().remove("$schema");
    rejects_with(
        &current,
        &json!("long"),
        "$",
        "Expected at most 1 character, found 4",
    );
}

#[test]
fn references_by_json_pointer() {
    let schema = json!({
        "$defs": { "a/b": { "type": "integer" }, "m~n": { "type": "string" }, "p%q": { "type": "boolean" }, "": { "type": "null" } },
        "definitions": { "d": { "minimum": 10 } },
        "properties": {
            "slash": { "$ref": "#/$defs/a~1b" },
            "tilde": { "$ref": "#/$defs/m~0n" },
            "percent": { "$ref": "#/$defs/p%25q" },
            "empty": { "$ref": "#/$defs/" },
            "legacy": { "$ref": "#/definitions/d" },
            "sibling": { "$ref": "#/properties/slash" },
            "tuple": { "prefixItems": [{ "type": "string" }, { "$ref": "#/properties/tuple/prefixItems/0" }] },
            "root": { "$ref": "#" }
        }
    });
    accepts(
        &schema,
        &json!({ "slash": 1, "tilde": "x", "percent": true, "empty": null, "legacy": 10, "sibling": 2, "tuple": ["a", "b"], "root": { "slash": 3 } }),
    );
    for (input, path, message) in [
        (
            json!({ "slash": "1" }),
            "$.slash",
            "Expected integer, found string at $.slash",
        ),
        (
            json!({ "tilde": 1 }),
            "$.tilde",
            "Expected string, found number at $.tilde",
        ),
        (
            json!({ "percent": 1 }),
            "$.percent",
            "Expected boolean, found number at $.percent",
        ),
        (
            json!({ "empty": 1 }),
            "$.empty",
            "Expected null, found number at $.empty",
        ),
        (
            json!({ "legacy": 9 }),
            "$.legacy",
            "Expected a number >= 10, found 9 at $.legacy",
        ),
        (
            json!({ "sibling": 1.5 }),
            "$.sibling",
            "Expected integer, found 1.5 at $.sibling",
        ),
        (
            json!({ "tuple": ["a", 2] }),
            "$.tuple[1]",
            "Expected string, found number at $.tuple[1]",
        ),
        (
            json!({ "root": { "root": { "slash": false } } }),
            "$.root.root.slash",
            "Expected integer, found boolean at $.root.root.slash",
        ),
    ] {
        rejects_with(&schema, &input, path, message);
    }
}

#[test]
fn references_not_followed_are_not_a_reason_to_reject() {
    for reference in [
        "https://example.com/schema.json",
        "#name",
        "#/$defs/missing",
        "#/$defs/a/type",
        "%zz",
        "#/%zz",
    ] {
        let schema = json!({ "$defs": { "a": { "type": "string" } }, "$ref": (reference), "type": "object" });
        assert_eq!(unchecked_keywords(&schema), ["$ref"], "{reference}");
        accepts(&schema, &json!({}));
        // The keywords beside it still apply.
        rejects(&schema, &json!(1));
    }
    // Nor in a document whose base moves: its fragments are not the document's.
    let embedded = json!({ "$defs": { "a": { "$id": "https://example.com/a", "type": "string" } }, "$ref": "#/$defs/a" });
    accepts(&embedded, &json!(1));
}

#[test]
fn combinators() {
    let all = json!({ "allOf": [{ "type": "integer" }, { "minimum": 2 }, { "maximum": 4 }] });
    accepts(&all, &json!(3));
    rejects_with(&all, &json!(5), "$", "Expected a number <= 4, found 5");
    rejects_with(&all, &json!("3"), "$", "Expected integer, found string");

    let any = json!({ "anyOf": [{ "type": "string", "maxLength": 2 }, { "type": "integer" }, { "type": "array" }] });
    accepts(&any, &json!("ab"));
    accepts(&any, &json!(7));
    rejects_with(
        &any,
        &json!("abc"),
        "$",
        "Expected at most 2 characters, found 3",
    );
    rejects_with(
        &any,
        &json!(null),
        "$",
        "Expected string, integer or array, found null",
    );
    rejects_with(
        &any,
        &json!(1.5),
        "$",
        "Expected string, integer or array, found 1.5",
    );

    let one = json!({ "oneOf": [{ "type": "integer" }, { "minimum": 2 }] });
    accepts(&one, &json!(1));
    accepts(&one, &json!(2.5));
    rejects_with(
        &one,
        &json!(3),
        "$",
        "Value matches schemas 0 and 1 of oneOf, but must match exactly one",
    );
    rejects_with(&one, &json!(1.5), "$", "Expected a number >= 2, found 1.5");
    let none = json!({ "properties": { "v": { "oneOf": [{ "minimum": 5 }, { "maximum": 1 }] } } });
    rejects_with(
        &none,
        &json!({ "v": 3 }),
        "$.v",
        "Value does not match any of the allowed schemas (oneOf) at $.v",
    );

    let not = json!({ "properties": { "name": { "not": { "const": "root" } } } });
    accepts(&not, &json!({ "name": "user" }));
    rejects_with(
        &not,
        &json!({ "name": "root" }),
        "$.name",
        "Value matches the schema in 'not', which it must not at $.name",
    );

    let conditional = json!({
        "if": { "properties": { "kind": { "const": "file" } }, "required": ["kind"] },
        "then": { "required": ["path"] },
        "else": { "required": ["url"] }
    });
    accepts(&conditional, &json!({ "kind": "file", "path": "/a" }));
    accepts(&conditional, &json!({ "url": "https://a" }));
    rejects_with(
        &conditional,
        &json!({ "kind": "file" }),
        "$",
        "Missing required parameter 'path'",
    );
    rejects_with(
        &conditional,
        &json!({ "kind": "web" }),
        "$",
        "Missing required parameter 'url'",
    );
    // `then` and `else` without `if` do nothing.
    accepts(&json!({ "then": false, "else": false }), &json!(1));

    // A keyword of the wrong shape is ignored, as the plain ones are.
    for schema in [
        json!({ "allOf": {} }),
        json!({ "anyOf": [] }),
        json!({ "oneOf": "x" }),
        json!({ "not": 5 }),
        json!({ "if": 1, "then": false }),
        json!({ "$ref": 3 }),
    ] {
        accepts(&schema, &json!(1));
    }
}

#[test]
fn object_and_array_assertions() {
    let schema = json!({
        "minProperties": 1,
        "maxProperties": 2,
        "dependentRequired": { "user": ["password"] },
        "dependencies": { "a": ["b"], "c": { "required": ["d"] } },
        "dependentSchemas": { "e": { "properties": { "f": { "type": "string" } } } }
    });
    accepts(&schema, &json!({ "x": 1 }));
    rejects_with(
        &schema,
        &json!({}),
        "$",
        "Expected at least 1 property, found 0",
    );
    rejects_with(
        &schema,
        &json!({ "x": 1, "y": 2, "z": 3 }),
        "$",
        "Expected at most 2 properties, found 3",
    );
    rejects_with(
        &schema,
        &json!({ "user": "u" }),
        "$",
        "Missing parameter 'password', required with 'user'",
    );
    rejects_with(
        &json!({ "properties": { "o": (schema.clone()) } }),
        &json!({ "o": { "a": 1 } }),
        "$.o",
        "Missing property 'b', required with 'a' at $.o",
    );
    rejects_with(
        &schema,
        &json!({ "c": 1 }),
        "$",
        "Missing required parameter 'd'",
    );
    rejects_with(
        &schema,
        &json!({ "e": 1, "f": 2 }),
        "$.f",
        "Expected string, found number at $.f",
    );

    let unique = json!({ "uniqueItems": true });
    accepts(&unique, &json!([1, "1", [1], { "a": 1 }, { "a": 2 }]));
    rejects_with(
        &unique,
        &json!([{ "a": 1, "b": [1.0] }, 2, { "b": [1], "a": 1e0 }]),
        "$",
        "Expected unique items, found item 2 equal to item 0",
    );
    accepts(&json!({ "uniqueItems": false }), &json!([1, 1]));

    let multiple = json!({ "multipleOf": 0.01 });
    accepts(&multiple, &json!(19.99));
    accepts(&multiple, &json!(1e300));
    rejects_with(
        &multiple,
        &json!(1.005),
        "$",
        "Expected a multiple of 0.01, found 1.005",
    );
    accepts(&json!({ "multipleOf": 0 }), &json!(1.5));

    let contains = json!({ "contains": { "type": "integer" }, "minContains": 2, "maxContains": 3 });
    accepts(&contains, &json!(["a", 1, 2]));
    rejects_with(
        &contains,
        &json!(["a", 1]),
        "$",
        "Expected at least 2 items matching 'contains', found 1",
    );
    rejects_with(
        &contains,
        &json!([1, 2, 3, 4]),
        "$",
        "Expected at most 3 items matching 'contains', found 4",
    );
    rejects_with(
        &json!({ "contains": { "const": 1 } }),
        &json!([]),
        "$",
        "Expected at least 1 item matching 'contains', found 0",
    );
    accepts(&json!({ "contains": false, "minContains": 0 }), &json!([1]));
    // Counts may be written as integral decimals.
    rejects_with(
        &json!({ "maxLength": 2.0 }),
        &json!("abc"),
        "$",
        "Expected at most 2 characters, found 3",
    );
}

#[test]
fn errors_are_found_in_a_fixed_order() {
    // The value's own assertions, then `$ref`, `allOf`, `anyOf`, `oneOf`, `not`,
    // `if`, dependent schemas, `contains`, then the members.
    let schema = json!({
        "$defs": { "r": { "required": ["r"] } },
        "properties": { "p": { "type": "string" } },
        "contains": false,
        "not": { "required": ["n"] },
        "allOf": [{ "required": ["a"] }],
        "$ref": "#/$defs/r",
        "required": ["q"]
    });
    rejects_with(
        &schema,
        &json!({ "p": 1 }),
        "$",
        "Missing required parameter 'q'",
    );
    rejects_with(
        &schema,
        &json!({ "p": 1, "q": 0 }),
        "$",
        "Missing required parameter 'r'",
    );
    rejects_with(
        &schema,
        &json!({ "p": 1, "q": 0, "r": 0 }),
        "$",
        "Missing required parameter 'a'",
    );
    rejects_with(
        &schema,
        &json!({ "p": 1, "q": 0, "r": 0, "a": 0, "n": 0 }),
        "$",
        "Value matches the schema in 'not', which it must not",
    );
    rejects_with(
        &schema,
        &json!({ "p": 1, "q": 0, "r": 0, "a": 0 }),
        "$.p",
        "Expected string, found number at $.p",
    );
    let input = json!({ "p": 1, "q": 0, "r": 0, "a": 0 });
    assert_eq!(validate(&schema, &input), validate(&schema, &input));
}

#[test]
fn reference_cycles_end() {
    // A cycle that never reaches into the input: an error, not a loop.
    for schema in [
        json!({ "$ref": "#" }),
        json!({ "$defs": { "a": { "$ref": "#/$defs/b" }, "b": { "allOf": [{ "$ref": "#/$defs/a" }] } }, "$ref": "#/$defs/a" }),
        json!({ "anyOf": [{ "$ref": "#" }, true] }),
        json!({ "not": { "$ref": "#" } }),
    ] {
        let e = rejects(&schema, &json!(1));
        assert_eq!(e.path(), "$");
        assert_eq!(
            e.message(),
            format!("Schemas nested more than {MAX_SCHEMAS} levels deep")
        );
    }
    // A recursive schema for recursive data is fine, as deep as `MAX_DEPTH`.
    let tree = json!({ "$defs": { "node": { "type": "object", "properties": { "children": { "type": "array", "items": { "$ref": "#/$defs/node" } } } } }, "$ref": "#/$defs/node" });
    let mut input = json!({});
    for _ in 0..(MAX_DEPTH / 2 - 1) {
        input = json!({ "children": [(input)] });
    }
    accepts(&tree, &input);
    let deeper = json!({ "children": [(input)] });
    let e = rejects(&tree, &deeper);
    assert!(
        e.message()
            .starts_with("Input nested more than 128 levels deep at $.children[0]"),
        "{e}"
    );
}

#[test]
fn references_that_multiply_are_cut_off() {
    // Each level refers to the next twice: 2^40 applications, unless bounded.
    let mut defs = json::Object::new();
    for level in 0..40 {
        let next = format!("#/$defs/l{}", level + 1);
        defs.push(
            format!("l{level}"),
            json!({ "allOf": [{ "$ref": (next.as_str()) }, { "$ref": (next.as_str()) }] }),
        );
    }
    defs.push("l40", json!({ "type": "integer" }));
    let schema = json!({ "$defs": (Value::Object(defs)), "$ref": "#/$defs/l0" });
    let e = rejects(&schema, &json!(1));
    assert!(e.message().starts_with("Schema too costly to check"), "{e}");
}

#[test]
fn a_long_chain_of_references_does_not_use_the_native_stack() {
    // 1,000 references, one inside the next, checked on a small stack.
    let mut defs = json::Object::new();
    for i in 0..1000 {
        defs.push(
            format!("d{i}"),
            json!({ "$ref": (format!("#/$defs/d{}", i + 1).as_str()) }),
        );
    }
    defs.push("d1000", json!({ "type": "string" }));
    let schema = json!({ "$defs": (Value::Object(defs)), "anyOf": [{ "$ref": "#/$defs/d0" }] });
    let outcome = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(32 * 1024)
            .spawn_scoped(scope, || {
                (validate(&schema, &json!("s")), validate(&schema, &json!(1)))
            })
            .expect("thread")
            .join()
    });
    let (ok, err) = outcome.expect("no overflow");
    assert_eq!(ok, Ok(()));
    assert_eq!(
        err.map_err(|e| e.message().to_string()),
        Err("Expected string, found number".to_string())
    );
}

#[test]
fn patterns() {
    let schema = json!({
        "type": "object",
        "properties": {
            "id": { "type": "string", "pattern": "^[a-z][a-z0-9_-]{2,15}$" },
            "date": { "type": "string", "pattern": "^\\d{4}-\\d{2}-\\d{2}$" },
            "free": { "type": "string", "pattern": "^(?!x)" }
        },
        "patternProperties": { "^x-": { "type": "string" }, "_n$": { "type": "integer" } },
        "additionalProperties": false
    });
    // `(?!` is outside the subset: reported, and not a reason to reject.
    assert_eq!(unchecked_keywords(&schema), ["pattern"]);
    accepts(
        &schema,
        &json!({ "id": "user_1", "date": "2024-01-31", "free": "xyz", "x-a": "s", "count_n": 3 }),
    );
    rejects_with(
        &schema,
        &json!({ "id": "1user" }),
        "$.id",
        "Expected a string matching the pattern \"^[a-z][a-z0-9_-]{2,15}$\", found \"1user\" at $.id",
    );
    rejects_with(
        &schema,
        &json!({ "date": "2024-1-31" }),
        "$.date",
        "Expected a string matching the pattern \"^\\\\d{4}-\\\\d{2}-\\\\d{2}$\", found \"2024-1-31\" at $.date",
    );
    // A member each pattern it matches applies to, in the schema's order.
    rejects_with(
        &schema,
        &json!({ "x-b_n": "4" }),
        "$[\"x-b_n\"]",
        "Expected integer, found string at $[\"x-b_n\"]",
    );
    rejects_with(
        &schema,
        &json!({ "x-a": 1 }),
        "$[\"x-a\"]",
        "Expected string, found number at $[\"x-a\"]",
    );
    rejects_with(
        &schema,
        &json!({ "other": 1 }),
        "$",
        "Unexpected parameter 'other'",
    );
    // With a pattern outside the subset, no member is known to be additional.
    let unknown = json!({ "patternProperties": { "\\p{L}": { "type": "string" } }, "additionalProperties": false });
    assert_eq!(unchecked_keywords(&unknown), ["patternProperties"]);
    accepts(&unknown, &json!({ "a": 1, "1": 2 }));
    // Long patterns and values are cut in messages.
    let long = format!("^{}$", "a".repeat(60));
    let e = rejects(
        &json!({ "pattern": (long.as_str()) }),
        &json!("b".repeat(60)),
    );
    assert_eq!(e.message().chars().filter(|&c| c == '…').count(), 2, "{e}");
}

#[test]
fn property_names() {
    let schema = json!({
        "properties": { "tags": { "propertyNames": { "pattern": "^[a-z]+$", "maxLength": 4 } } },
        "propertyNames": { "not": { "const": "secret" } }
    });
    assert!(unchecked_keywords(&schema).is_empty());
    accepts(&schema, &json!({ "tags": { "ab": 1, "cd": 2 } }));
    rejects_with(
        &schema,
        &json!({ "secret": 1 }),
        "$",
        "Invalid parameter name 'secret' (propertyNames): Value matches the schema in 'not', which it must not",
    );
    rejects_with(
        &schema,
        &json!({ "tags": { "ab": 1, "abcde": 2 } }),
        "$.tags",
        "Invalid property name 'abcde' (propertyNames): Expected at most 4 characters, found 5 at $.tags",
    );
    // A name reaches the document's references, and a limit there stops all.
    let cycle = json!({ "$defs": { "a": { "$ref": "#/$defs/a" } }, "not": { "propertyNames": { "$ref": "#/$defs/a" } } });
    let e = rejects(&cycle, &json!({ "n": 1 }));
    assert_eq!(
        e.message(),
        format!("Schemas nested more than {MAX_SCHEMAS} levels deep in the name 'n'")
    );
    // Without names, nothing to check: `propertyNames` matches, so `not` fails.
    rejects_with(
        &cycle,
        &json!({}),
        "$",
        "Value matches the schema in 'not', which it must not",
    );
}
