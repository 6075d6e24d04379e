//! [`Text`]: the string type of the message fields that are read on every call.

use alloc::borrow::Cow;
use alloc::string::String;
use core::borrow::Borrow;
use core::fmt;
use core::ops::Deref;

use crate::json::{Str, Value};

/// The text of a message field read on every call: a tool's name in
/// [`ExecuteParams`](super::ExecuteParams), a text item in a
/// [`ToolResult`](super::ToolResult).
///
/// It derefs to `str` and converts from and into `String`. Up to 22 bytes it is
/// stored inline, without allocating, so a round trip with a short name and a short
/// result allocates nothing for them.
///
/// ```
/// use dhara_protocol::message::Text;
///
/// let name = Text::from("read_file");
/// assert_eq!(name, "read_file");
/// assert!(name.starts_with("read"));
/// assert_eq!(String::from(name), "read_file");
/// ```
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Text(Str);

impl Text {
    /// The text.
    #[inline]
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// The text's bytes (without checking again that they are UTF-8, as taking a
    /// short text as a `&str` does).
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        self.0.as_bytes()
    }

    /// The text as a `String` (one allocation unless empty).
    pub fn into_string(self) -> String {
        self.0.into_string()
    }

    /// The text as the JSON layer stores it.
    pub(super) fn from_json(text: Str) -> Text {
        Text(text)
    }

    /// The text as the JSON layer stores it, for writing it.
    pub(super) fn as_json(&self) -> &Str {
        &self.0
    }
}

impl Deref for Text {
    type Target = str;

    #[inline]
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for Text {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Text {
        Text(Str::from(text))
    }
}

impl From<&String> for Text {
    fn from(text: &String) -> Text {
        Text(Str::from(text))
    }
}

impl From<String> for Text {
    fn from(text: String) -> Text {
        Text(Str::from(text))
    }
}

impl From<Cow<'_, str>> for Text {
    fn from(text: Cow<'_, str>) -> Text {
        Text(Str::from(text))
    }
}

impl From<Text> for String {
    fn from(text: Text) -> String {
        text.into_string()
    }
}

impl From<Text> for Value {
    fn from(text: Text) -> Value {
        Value::String(text.0)
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<Text> for str {
    fn eq(&self, other: &Text) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<Text> for &str {
    fn eq(&self, other: &Text) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<Text> for String {
    fn eq(&self, other: &Text) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}
