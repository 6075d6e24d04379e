//! [`Str`]: the string type of [`Value`](super::Value) strings and object member
//! names, stored inline when short.
//!
//! Protocol messages are mostly short strings: member names (`"jsonrpc"`,
//! `"params"`, `"toolName"`), method names, tool names, small inputs. Holding each in
//! a `String` costs an allocation apiece, which is most of the cost of building a
//! tree for a small message. A `Str` of up to [`Str::INLINE_CAPACITY`] bytes lives
//! inside the value itself; a longer one is one exact-size `Box<str>`.

use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::string::String;
use core::borrow::Borrow;
use core::cmp::Ordering;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::ops::Deref;

use super::error::Sure;

/// An immutable UTF-8 string: inline up to [`Str::INLINE_CAPACITY`] bytes, else
/// one heap allocation of exactly its length.
///
/// It dereferences to `str`, compares, orders and hashes as its text, and converts
/// from and into `String` and `&str`.
///
/// ```
/// use dhara_protocol::json::Str;
///
/// let name = Str::from("toolName");
/// assert!(name.is_inline());
/// assert_eq!(name, "toolName");
/// assert_eq!(name.len(), 8);
///
/// let long = Str::from("a string longer than twenty-two bytes");
/// assert!(!long.is_inline());
/// assert_eq!(String::from(long), "a string longer than twenty-two bytes");
/// ```
#[derive(Clone)]
pub struct Str {
    repr: Repr,
}

#[derive(Clone)]
enum Repr {
    /// The first `len` bytes of `bytes` are the text (always whole UTF-8).
    Inline {
        len: u8,
        bytes: [u8; Str::INLINE_CAPACITY],
    },
    Heap(Box<str>),
}

impl Str {
    /// The longest text, in bytes, stored without allocating.
    pub const INLINE_CAPACITY: usize = 22;

    /// The empty string.
    pub const fn new() -> Str {
        Str {
            repr: Repr::Inline {
                len: 0,
                bytes: [0; Str::INLINE_CAPACITY],
            },
        }
    }

    /// `true` when the text is stored inline (no allocation).
    pub fn is_inline(&self) -> bool {
        matches!(self.repr, Repr::Inline { .. })
    }

    /// The text.
    #[inline]
    pub fn as_str(&self) -> &str {
        match &self.repr {
            // Inline bytes were copied from a whole `&str`, so this never fails; the
            // check is what keeps the crate free of `unsafe`.
            Repr::Inline { .. } => core::str::from_utf8(self.as_bytes()).sure(),
            Repr::Heap(s) => s,
        }
    }

    /// The text as bytes, without re-checking UTF-8.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        match &self.repr {
            Repr::Inline { len, bytes } => bytes.get(..usize::from(*len)).sure(),
            Repr::Heap(s) => s.as_bytes(),
        }
    }

    /// The length in bytes.
    #[inline]
    pub fn len(&self) -> usize {
        self.as_bytes().len()
    }

    /// `true` for the empty string.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The text as a `String` (one allocation unless empty).
    pub fn into_string(self) -> String {
        match self.repr {
            Repr::Inline { .. } => String::from(self.as_str()),
            Repr::Heap(s) => String::from(s),
        }
    }

    /// Text whose bytes the caller has already checked to be UTF-8 (number text,
    /// say): kept inline without checking them again when short, checked as they
    /// are boxed when long. `None` only if the bytes are not UTF-8 after all.
    #[inline]
    pub(crate) fn from_checked_bytes(bytes: &[u8]) -> Option<Str> {
        match Str::inline(bytes) {
            Some(s) => Some(s),
            None if bytes.len() <= Str::PIECE_BYTES => {
                core::str::from_utf8(bytes).ok().map(Str::from)
            }
            None => Str::boxed_in_pieces(bytes),
        }
    }

    /// How much of a long text is checked, then copied, at a time.
    pub(super) const PIECE_BYTES: usize = 16 * 1024;

    /// A long text checked and copied a piece at a time, each piece copied while
    /// the check has just brought it into the cache (rather than checking all of a
    /// text of megabytes, then reading it all again to copy it). Pieces end on
    /// character boundaries.
    #[inline(never)]
    fn boxed_in_pieces(bytes: &[u8]) -> Option<Str> {
        let mut text = String::with_capacity(bytes.len());
        let mut rest = bytes;
        while !rest.is_empty() {
            let mut end = rest.len().min(Str::PIECE_BYTES);
            // Back up to the start of a character (at most three continuation bytes).
            while rest.get(end).is_some_and(|&b| b & 0xC0 == 0x80) && end > 0 {
                end -= 1;
            }
            let (piece, after) = rest.split_at(end.max(1).min(rest.len()));
            text.push_str(core::str::from_utf8(piece).ok()?);
            rest = after;
        }
        Some(Str {
            repr: Repr::Heap(text.into_boxed_str()),
        })
    }

    /// The text `window[..len]`, whose bytes the caller has already checked to be
    /// whole UTF-8, inline; `None` when `len` is over the inline capacity. The bytes
    /// of the window after the text are kept but are no part of it: a parser hands
    /// in the input from where the string starts, and the fixed-size copy costs a
    /// couple of moves where copying exactly `len` bytes costs a call.
    #[inline]
    pub(crate) fn from_checked_window(
        window: &[u8; Str::INLINE_CAPACITY],
        len: usize,
    ) -> Option<Str> {
        if len > Str::INLINE_CAPACITY {
            return None;
        }
        Some(Str {
            repr: Repr::Inline {
                len: len as u8,
                bytes: *window,
            },
        })
    }

    /// Makes an inline string the text `window[..len]`, whose bytes the caller has
    /// already checked to be whole UTF-8, writing it where the string stands (as
    /// [`from_checked_window`](Str::from_checked_window) would build it). A parser
    /// pushes an empty string into its tree, then fills it in place, rather than
    /// building it elsewhere and moving it in. `false`, with nothing
    /// changed, when `len` is over the inline capacity or the string is not inline.
    #[inline(always)]
    pub(crate) fn fill_checked_window(
        &mut self,
        window: &[u8; Str::INLINE_CAPACITY],
        len: usize,
    ) -> bool {
        match &mut self.repr {
            Repr::Inline { len: l, bytes } if len <= Str::INLINE_CAPACITY => {
                *bytes = *window;
                *l = len as u8;
                true
            }
            _ => false,
        }
    }

    /// [`fill_checked_window`](Str::fill_checked_window) for a text given as its
    /// bytes (where the input ends too soon for a whole window).
    #[inline(always)]
    pub(crate) fn fill_checked_bytes(&mut self, text: &[u8]) -> bool {
        match &mut self.repr {
            Repr::Inline { len, bytes } => match bytes.get_mut(..text.len()) {
                Some(slot) => {
                    slot.copy_from_slice(text);
                    *len = text.len() as u8;
                    true
                }
                None => false,
            },
            Repr::Heap(_) => false,
        }
    }

    /// The short text `s` (whole UTF-8) inline, or `None` when it is too long.
    #[inline]
    fn inline(s: &[u8]) -> Option<Str> {
        let len = s.len();
        if len > Str::INLINE_CAPACITY {
            return None;
        }
        let mut bytes = [0; Str::INLINE_CAPACITY];
        bytes.get_mut(..len)?.copy_from_slice(s);
        Some(Str {
            repr: Repr::Inline {
                len: len as u8,
                bytes,
            },
        })
    }
}

impl Default for Str {
    fn default() -> Str {
        Str::new()
    }
}

impl From<&str> for Str {
    #[inline]
    fn from(s: &str) -> Str {
        Str::inline(s.as_bytes()).unwrap_or_else(|| Str {
            repr: Repr::Heap(Box::from(s)),
        })
    }
}

impl From<String> for Str {
    /// Short text moves inline (the `String`'s buffer is freed); longer text keeps
    /// its buffer, trimmed to its length.
    #[inline]
    fn from(s: String) -> Str {
        Str::inline(s.as_bytes()).unwrap_or_else(|| Str {
            repr: Repr::Heap(s.into_boxed_str()),
        })
    }
}

impl From<Cow<'_, str>> for Str {
    /// Borrowed text is copied (inline when short); owned text moves as a `String`
    /// does.
    #[inline]
    fn from(s: Cow<'_, str>) -> Str {
        match s {
            Cow::Borrowed(s) => Str::from(s),
            Cow::Owned(s) => Str::from(s),
        }
    }
}

impl From<Box<str>> for Str {
    fn from(s: Box<str>) -> Str {
        Str::inline(s.as_bytes()).unwrap_or(Str {
            repr: Repr::Heap(s),
        })
    }
}

impl From<&String> for Str {
    fn from(s: &String) -> Str {
        Str::from(s.as_str())
    }
}

impl From<char> for Str {
    fn from(c: char) -> Str {
        Str::from(c.encode_utf8(&mut [0; 4]) as &str)
    }
}

impl From<Str> for String {
    fn from(s: Str) -> String {
        s.into_string()
    }
}

impl Deref for Str {
    type Target = str;
    #[inline]
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Str {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<[u8]> for Str {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl Borrow<str> for Str {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for Str {
    #[inline]
    fn eq(&self, other: &Str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}
impl Eq for Str {}

impl PartialEq<str> for Str {
    #[inline]
    fn eq(&self, other: &str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}
impl PartialEq<&str> for Str {
    #[inline]
    fn eq(&self, other: &&str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}
impl PartialEq<String> for Str {
    fn eq(&self, other: &String) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}
impl PartialEq<Str> for str {
    fn eq(&self, other: &Str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}
impl PartialEq<Str> for &str {
    fn eq(&self, other: &Str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}
impl PartialEq<Str> for String {
    fn eq(&self, other: &Str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialOrd for Str {
    fn partial_cmp(&self, other: &Str) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Str {
    /// Byte order, which for UTF-8 is the order of `str`.
    fn cmp(&self, other: &Str) -> Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
}

impl Hash for Str {
    /// Hashes as the `str` it holds, as [`Borrow<str>`] requires.
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    /// Long texts are checked and copied in pieces: characters of every length
    /// straddling every piece boundary come out whole, and bytes that are not UTF-8
    /// anywhere, at a boundary included, are refused.
    #[test]
    fn long_texts_are_checked_and_copied_in_pieces() {
        let piece = Str::PIECE_BYTES;
        for c in ['a', 'é', '€', '𝄞'] {
            for shift in 0..4 {
                let text: String =
                    "x".repeat(piece - shift) + &String::from(c).repeat(piece / c.len_utf8() + 3);
                let checked = Str::from_checked_bytes(text.as_bytes());
                assert_eq!(checked.as_deref(), Some(text.as_str()), "{c} {shift}");
                for bad_at in [0, piece - 1, piece, piece + 1, text.len() - 1] {
                    let mut bytes = text.clone().into_bytes();
                    bytes[bad_at] = 0xFF;
                    assert_eq!(
                        Str::from_checked_bytes(&bytes),
                        None,
                        "{c} {shift} {bad_at}"
                    );
                }
            }
        }
    }

    #[test]
    fn up_to_the_inline_capacity_stays_inline() {
        let texts = ["", "a", "jsonrpc", "0123456789012345678901", "ééééééééééé"];
        for text in texts {
            assert!(text.len() <= Str::INLINE_CAPACITY);
            let s = Str::from(text);
            assert!(s.is_inline(), "{text:?}");
            assert_eq!(s.as_str(), text);
            assert_eq!(s.len(), text.len());
        }
        for text in [
            "01234567890123456789012",
            "éééééééééééé",
            "a\u{1F600}aaaaaaaaaaaaaaaaaaaa",
        ] {
            assert!(text.len() > Str::INLINE_CAPACITY);
            let s = Str::from(String::from(text));
            assert!(!s.is_inline(), "{text:?}");
            assert_eq!(s.as_str(), text);
        }
    }

    #[test]
    fn every_conversion_keeps_the_text() {
        for text in [
            "",
            "x",
            "a longer text that needs the heap, surely",
            "日本語",
        ] {
            assert_eq!(Str::from(text), text);
            assert_eq!(Str::from(String::from(text)), text);
            assert_eq!(Str::from(Box::<str>::from(text)), text);
            assert_eq!(String::from(Str::from(text)), text);
            assert_eq!(Str::from(text).into_string(), text);
            assert_eq!(&*Str::from(text), text);
            assert_eq!(alloc::format!("{}", Str::from(text)), text);
            assert_eq!(
                alloc::format!("{:?}", Str::from(text)),
                alloc::format!("{text:?}")
            );
        }
        assert_eq!(Str::from('é'), "é");
        assert!(Str::default().is_empty());
    }

    #[test]
    fn comparisons_and_order_follow_the_text() {
        let mut words: Vec<Str> = ["b", "a", "a longer text that needs the heap", "ab", ""]
            .into_iter()
            .map(Str::from)
            .collect();
        words.sort();
        let sorted: Vec<&str> = words.iter().map(Str::as_str).collect();
        assert_eq!(
            sorted,
            ["", "a", "a longer text that needs the heap", "ab", "b"]
        );
        // Inline and heap copies of the same text are equal.
        let heap = Str::from(Box::<str>::from("short"));
        assert_eq!(heap, Str::from("short"));
        assert_ne!(Str::from("short"), Str::from("shorts"));
        let (owned, short) = (String::from("x"), Str::from("x"));
        assert_eq!(owned, short);
        assert_eq!(short, owned);
        assert_eq!("x", short);
    }

    #[cfg(feature = "std")]
    #[test]
    fn hashes_as_str_so_maps_can_look_up_by_str() {
        let mut map = std::collections::HashMap::new();
        map.insert(Str::from("toolName"), 1);
        map.insert(Str::from("a key long enough to live on the heap"), 2);
        assert_eq!(map.get("toolName"), Some(&1));
        assert_eq!(map.get("a key long enough to live on the heap"), Some(&2));
    }

    #[test]
    fn is_no_bigger_than_a_string() {
        assert!(core::mem::size_of::<Str>() <= core::mem::size_of::<String>());
    }
}
