//! The [`json!`](super::json!) macro.

/// Builds a [`Value`](crate::json::Value) from JSON-like syntax.
///
/// Member names are string literals; every other value is one token tree: `null`,
/// an array `[...]`, an object `{...}`, or anything [`Value`](crate::json::Value)
/// converts from (a literal, a variable, or an expression in parentheses, such as
/// `(-1)` or `(x.len())`). Members keep their order.
///
/// ```
/// use dhara_protocol::json::json;
///
/// let path = "src/main.rs";
/// let v = json!({
///     "toolName": "read_file",
///     "input": {"path": path, "limit": 100, "offset": (-1), "follow": true},
///     "tags": ["a", 1.5, null, []],
/// });
/// assert_eq!(
///     v.to_string(),
///     r#"{"toolName":"read_file","input":{"path":"src/main.rs","limit":100,"offset":-1,"follow":true},"tags":["a",1.5,null,[]]}"#
/// );
/// ```
// Exported under a private name at the crate root (where `macro_export` puts it)
// and re-exported as `json::json!`, so the root keeps one `json`: the module.
#[doc(hidden)]
#[macro_export]
macro_rules! __json_value {
    (null) => {
        $crate::json::Value::Null
    };
    ([]) => {
        $crate::json::Value::Array(::core::default::Default::default())
    };
    ([ $($element:tt),+ $(,)? ]) => {
        $crate::json::Value::Array(
            ::core::iter::Iterator::collect(::core::iter::IntoIterator::into_iter([
                $($crate::json::json!($element)),+
            ])),
        )
    };
    ({}) => {
        $crate::json::Value::Object($crate::json::Object::new())
    };
    ({ $($name:literal : $value:tt),+ $(,)? }) => {
        $crate::json::Value::Object(::core::iter::Iterator::collect(
            ::core::iter::IntoIterator::into_iter([$(($name, $crate::json::json!($value))),+]),
        ))
    };
    ($other:expr) => {
        $crate::json::Value::from($other)
    };
}

pub use crate::__json_value as json;
