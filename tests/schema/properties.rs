//! Property tests for the input validator: it never panics on any schema and input,
//! its answers are deterministic, and it compares numbers exactly.

use dhara_protocol::json::{Number, Object, Value};
use dhara_protocol::schema::{PreparedSchema, validate};
use proptest::prelude::*;

fn number() -> impl Strategy<Value = Number> {
    prop_oneof![
        any::<i64>().prop_map(Number::from),
        "-?(0|[1-9][0-9]{0,25})(\\.[0-9]{1,8})?([eE][+-]?[0-9]{1,3})?"
            .prop_map(|t| Number::from_text(&t).expect("generated from the grammar")),
    ]
}

fn name() -> impl Strategy<Value = String> {
    "[a-c]|url|a b|".prop_map(String::from)
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number().prop_map(Value::Number),
        ".{0,6}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((name(), inner), 0..5)
                .prop_map(|m| Value::Object(Object::from_iter(m))),
        ]
    })
}

fn type_names() -> impl Strategy<Value = Value> {
    let one = "null|boolean|object|array|number|integer|string|strng";
    prop_oneof![
        one.prop_map(Value::from),
        prop::collection::vec(one.prop_map(Value::from), 0..4).prop_map(Value::Array),
        value(),
    ]
}

/// Schemas built from the keywords the validator knows (with well- and ill-formed
/// values), and arbitrary values in schema position.
fn schema() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        any::<bool>().prop_map(Value::Bool),
        type_names().prop_map(|t| Value::Object(Object::from_iter([("type", t)]))),
        value(),
    ];
    leaf.prop_recursive(4, 40, 6, |inner| {
        let keyword = prop_oneof![
            type_names().prop_map(|v| ("type", v)),
            prop::collection::vec((name(), inner.clone()), 0..4)
                .prop_map(|m| ("properties", Value::Object(Object::from_iter(m)))),
            prop::collection::vec(name().prop_map(Value::from), 0..3)
                .prop_map(|r| ("required", Value::Array(r))),
            prop::collection::vec(value(), 0..4).prop_map(|e| ("enum", Value::Array(e))),
            value().prop_map(|v| ("const", v)),
            inner.clone().prop_map(|s| ("items", s)),
            prop::collection::vec(inner.clone(), 0..3).prop_map(|s| ("items", Value::Array(s))),
            prop::collection::vec(inner.clone(), 0..3)
                .prop_map(|s| ("prefixItems", Value::Array(s))),
            inner.clone().prop_map(|s| ("additionalItems", s)),
            inner.clone().prop_map(|s| ("additionalProperties", s)),
            (prop::sample::select(BOUND_KEYWORDS), value()),
            any::<bool>().prop_map(|b| ("exclusiveMinimum", Value::Bool(b))),
            prop::collection::vec(inner.clone(), 0..3).prop_map(|s| ("allOf", Value::Array(s))),
            prop::collection::vec(inner.clone(), 0..3).prop_map(|s| ("anyOf", Value::Array(s))),
            prop::collection::vec(inner.clone(), 0..3).prop_map(|s| ("oneOf", Value::Array(s))),
            (prop::sample::select(IN_PLACE_KEYWORDS), inner.clone()),
            prop::collection::vec((name(), inner.clone()), 0..3)
                .prop_map(|m| ("$defs", Value::Object(Object::from_iter(m)))),
            prop::sample::select(REFERENCES).prop_map(|r| ("$ref", Value::from(r))),
            any::<bool>().prop_map(|b| ("uniqueItems", Value::Bool(b))),
            value().prop_map(|v| ("multipleOf", v)),
            prop::collection::vec(
                (
                    name(),
                    prop::collection::vec(name().prop_map(Value::from), 0..3)
                ),
                0..3
            )
            .prop_map(|m| (
                "dependentRequired",
                Value::Object(Object::from_iter(
                    m.into_iter().map(|(k, v)| (k, Value::Array(v)))
                ))
            )),
        ];
        prop::collection::vec(keyword, 0..5).prop_map(|k| Value::Object(Object::from_iter(k)))
    })
}

/// Keywords whose value is one schema, applied to the value itself or its children.
const IN_PLACE_KEYWORDS: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "contains",
    "dependentSchemas",
    "propertyNames",
];

/// References to the places `schema()` makes, to nowhere, and to elsewhere; cycles
/// among them are common.
const REFERENCES: &[&str] = &[
    "#",
    "#/$defs/a",
    "#/$defs/b",
    "#/properties/a",
    "#/items",
    "#/allOf/0",
    "#/anyOf/1",
    "#/nowhere",
    "#a",
    "https://example.com/s.json",
];

/// Regular expressions that mean the same to proptest and to ECMA-262, none of
/// which allows `#`.
const PATTERNS: &[&str] = &[
    "[a-z]{1,5}",
    "(ab|cd)*e?",
    "[0-9]{2,4}-[A-F0-9]+",
    "x(y|z){0,3}w+",
    "[^a-c#]{0,3}q",
    "(?:[a-z]+_)*[a-z]+",
    "\\(a|b\\)c|d{3}",
    "[\\u00e0-\\u00ff]{2}",
    "(a|ab)(c|bcd)(d*)",
];

const BOUND_KEYWORDS: &[&str] = &[
    "minProperties",
    "maxProperties",
    "minContains",
    "maxContains",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
];

fn num(text: &str) -> Value {
    Value::Number(Number::from_text(text).expect("a JSON number"))
}

/// `m × 10^-k` written out in plain decimal.
fn plain_decimal(m: i64, k: u32) -> String {
    let digits = m.unsigned_abs().to_string();
    let k = k as usize;
    let sign = if m < 0 { "-" } else { "" };
    if k == 0 {
        return format!("{sign}{digits}");
    }
    let padded = format!("{digits:0>width$}", width = k + 1);
    let (int, frac) = padded.split_at(padded.len() - k);
    format!("{sign}{int}.{frac}")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// No schema and input make the validator panic; the answer is the same every
    /// time, and an error's path is rooted and its message non-empty.
    #[test]
    fn never_panics(schema in schema(), instance in value()) {
        let first = validate(&schema, &instance);
        prop_assert_eq!(&first, &validate(&schema, &instance));
        if let Err(e) = first {
            prop_assert!(e.path().starts_with('$'));
            prop_assert!(!e.message().is_empty());
        }
    }

    /// A prepared schema gives what `validate` gives, errors included, for every
    /// schema (well- or ill-formed) and input.
    #[test]
    fn a_prepared_schema_checks_as_validate_does(schema in schema(), instance in value()) {
        let prepared = PreparedSchema::new(schema.clone());
        prop_assert_eq!(prepared.validate(&instance), validate(&schema, &instance));
        prop_assert_eq!(prepared.schema(), &schema);
    }

    #[test]
    fn arbitrary_values_as_schemas_never_panic(schema in value(), instance in value()) {
        let _ = validate(&schema, &instance).map_err(|e| e.to_string());
    }

    /// A value equals itself for `const` and `enum`, and `true`/`false` decide alone.
    #[test]
    fn const_and_enum_are_reflexive(v in value(), others in prop::collection::vec(value(), 0..3)) {
        let schema = Value::Object(Object::from_iter([("const", v.clone())]));
        prop_assert_eq!(validate(&schema, &v), Ok(()));
        let mut allowed = others;
        allowed.push(v.clone());
        let schema = Value::Object(Object::from_iter([("enum", Value::Array(allowed))]));
        prop_assert_eq!(validate(&schema, &v), Ok(()));
        prop_assert_eq!(validate(&Value::Bool(true), &v), Ok(()));
        prop_assert!(validate(&Value::Bool(false), &v).is_err());
    }

    /// `multipleOf` is exact: `a × 10^-ka` is a multiple of `b × 10^-kb` exactly
    /// when the integers `a × 10^(K-ka)` and `b × 10^(K-kb)` divide, whatever the
    /// spelling of either; a divisor that is not positive is ignored.
    #[test]
    fn multiple_of_is_exact(a in any::<i32>(), ka in 0u32..6, b in -50i32..5000, kb in 0u32..6, e in 0u32..40) {
        let scaled = |m: i32, k: u32| i128::from(m) * 10i128.pow(6 - k);
        let (x, y) = (scaled(a, ka), scaled(b, kb));
        let schema = Value::Object(Object::from_iter([("multipleOf", num(&format!("{b}e-{kb}")))]));
        for instance in [num(&plain_decimal(a.into(), ka)), num(&format!("{a}0e-{}", ka + 1))] {
            let expected = y <= 0 || x % y == 0;
            prop_assert_eq!(validate(&schema, &instance).is_ok(), expected, "{} {}", schema, instance);
        }
        // A huge multiple of a divisor is one, and a huge shift does not make it one.
        if b > 0 && b % 10 != 0 {
            let big = num(&format!("{b}e{e}00"));
            prop_assert!(validate(&schema, &big).is_ok());
            let off = num(&format!("{}e-{}", i64::from(b) * 10 + 1, kb + 1));
            let divisible = (i64::from(b) * 10 + 1) % (i64::from(b) * 10) == 0;
            prop_assert_eq!(validate(&schema, &off).is_ok(), divisible);
        }
    }

    /// Every string a regular expression describes matches it as a `pattern`
    /// (the strings drawn by proptest's own regex reader, from patterns on which
    /// it and ECMA-262 agree), and the same text with a character that no pattern
    /// here allows does not.
    #[test]
    fn patterns_match_the_strings_they_describe(
        (pattern, text) in prop::sample::select(PATTERNS).prop_flat_map(|p| (Just(p), p)),
        at in any::<prop::sample::Index>(),
    ) {
        let schema = Value::Object(Object::from_iter([("pattern", Value::from(format!("^(?:{pattern})$")))]));
        prop_assert_eq!(validate(&schema, &Value::from(text.as_str())), Ok(()));
        let mut spoiled: Vec<char> = text.chars().collect();
        spoiled.insert(at.index(spoiled.len() + 1), '#');
        let spoiled: String = spoiled.into_iter().collect();
        prop_assert!(validate(&schema, &Value::from(spoiled.as_str())).is_err(), "{} {}", pattern, spoiled);
    }

    /// `uniqueItems` agrees with comparing every pair by `const`.
    #[test]
    fn unique_items_agrees_with_pairwise_equality(items in prop::collection::vec(value(), 0..6)) {
        let equal = |a: &Value, b: &Value| {
            validate(&Value::Object(Object::from_iter([("const", a.clone())])), b).is_ok()
        };
        let repeat = (1..items.len()).find_map(|j| (0..j).find(|&i| equal(&items[i], &items[j])).map(|i| (i, j)));
        let schema = Value::Object(Object::from_iter([("uniqueItems", Value::Bool(true))]));
        let answer = validate(&schema, &Value::Array(items.clone()));
        match repeat {
            None => prop_assert_eq!(answer, Ok(())),
            Some((i, j)) => {
                let message = format!("Expected unique items, found item {j} equal to item {i}");
                prop_assert_eq!(answer.map_err(|e| e.message().to_string()), Err(message));
            }
        }
    }

    /// `m × 10^-k` compares like the integers `m × 10^(K-k)` do, whether it is written
    /// plainly or with an exponent; `integer` accepts it exactly when it is integral.
    #[test]
    fn numbers_compare_exactly(a in any::<i32>(), ka in 0u32..6, b in any::<i32>(), kb in 0u32..6) {
        let scaled = |m: i32, k: u32| i128::from(m) * 10i128.pow(6 - k);
        let (x, y) = (scaled(a, ka), scaled(b, kb));
        let bound = num(&plain_decimal(a.into(), ka));
        let exp_form = num(&format!("{b}e-{kb}"));
        let plain_form = num(&plain_decimal(b.into(), kb));
        for instance in [&exp_form, &plain_form] {
            let schema = |k: &str| Value::Object(Object::from_iter([(k, bound.clone())]));
            prop_assert_eq!(validate(&schema("minimum"), instance).is_ok(), y >= x);
            prop_assert_eq!(validate(&schema("maximum"), instance).is_ok(), y <= x);
            prop_assert_eq!(validate(&schema("exclusiveMinimum"), instance).is_ok(), y > x);
            prop_assert_eq!(validate(&schema("exclusiveMaximum"), instance).is_ok(), y < x);
            prop_assert_eq!(validate(&schema("const"), instance).is_ok(), y == x);
            let integer = Value::Object(Object::from_iter([("type", Value::from("integer"))]));
            prop_assert_eq!(validate(&integer, instance).is_ok(), y % 1_000_000 == 0);
        }
    }
}
