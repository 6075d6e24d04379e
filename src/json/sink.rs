//! What the grammar reports to: the sinks [`Reader`](super::Reader)'s walk hands its
//! values to. [`Tree`] builds a [`Value`], [`Skip`] only checks, and a `Cow<str>`
//! takes one string; [`Nesting`] keeps the kinds of the open containers.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use super::error::Sure;
use super::scan::{WINDOW, string_end};
use super::string::Str;
use super::value::{Number, Object, Value};

pub(super) const OBJECT: bool = true;
pub(super) const ARRAY: bool = false;

/// What a string with escapes is decoded to: a `String`, or nothing when only
/// validating.
pub(super) trait Text {
    /// The finished text.
    type Out;
    /// Takes the run `text[from..to]`, which ends at a `"`, `\\` or control byte
    /// (or at the end of `text`).
    fn take(&mut self, text: &str, from: usize, to: usize);
    /// An ASCII character from a short escape.
    fn push_ascii(&mut self, b: u8);
    /// A character from a `\u` escape.
    fn push(&mut self, c: char);
    /// The text.
    fn finish(self) -> Self::Out;
}

impl Text for String {
    type Out = String;
    /// A run of up to two [`WINDOW`]s is appended as a fixed-size window of that
    /// size (one load and store, no call) and cut back to its end, a special ASCII
    /// byte, so a character boundary; a window that would end inside a character or
    /// past the text is not taken, and a smaller one is tried (a window, half of
    /// one). Longer runs, and those no window fits, are appended in one piece.
    #[inline(always)]
    fn take(&mut self, text: &str, from: usize, to: usize) {
        let len = to.saturating_sub(from);
        let taken = (len <= 2 * WINDOW && push_window(self, text, from, len, 2 * WINDOW))
            || (len <= WINDOW && push_window(self, text, from, len, WINDOW))
            || (len <= WINDOW / 2 && push_window(self, text, from, len, WINDOW / 2));
        if !taken {
            self.push_str(text.get(from..to).sure());
        }
    }
    #[inline(always)]
    fn push_ascii(&mut self, b: u8) {
        String::push(self, char::from(b));
    }
    #[inline]
    fn push(&mut self, c: char) {
        String::push(self, c);
    }
    #[inline]
    fn finish(self) -> String {
        self
    }
}

/// Appends the run of `len` bytes at `text[from..]` as the `size` bytes there, cut
/// back to `len`: `false` when they end inside a character or past the text.
#[inline(always)]
fn push_window(out: &mut String, text: &str, from: usize, len: usize, size: usize) -> bool {
    let Some(window) = text.get(from..from + size) else {
        return false;
    };
    out.push_str(window);
    out.truncate(out.len() - (size - len));
    true
}

/// Where a string goes: a member name, or a value (a member's value when
/// `in_object`, else an element or the root).
#[derive(Clone, Copy)]
pub(super) enum Place {
    Name,
    Value { in_object: bool },
}

/// What takes the strings [`Reader::string`](super::Reader) finds in an input that lives for `'a`.
pub(super) trait Strings<'a> {
    /// Where decoded text goes.
    type Text: Text;
    /// A string without escapes, `input[start..end]`, its bytes checked to be UTF-8
    /// as they were passed over.
    fn checked(&mut self, input: &'a [u8], start: usize, end: usize, place: Place);
    /// Where the string with escapes whose text goes on in `text` (UTF-8, up to the
    /// closing quote and beyond) is decoded to, its first run, `text[..first_run]`,
    /// taken already.
    fn start_text(&mut self, text: &str, first_run: usize) -> Self::Text;
    /// A string decoded from escapes.
    fn decoded(&mut self, text: <Self::Text as Text>::Out, place: Place);
    /// Whether the sink keeps its strings as copies, so that a long string is better
    /// copied as it is scanned and handed over whole to [`copied`](Strings::copied).
    const COPIES: bool = false;
    /// A string without escapes, its text copied as it was checked (only when
    /// [`COPIES`](Strings::COPIES)).
    fn copied(&mut self, text: String, place: Place) {
        let _ = (text, place);
    }
    /// Whether the sink takes decoded text. A sink that does not (validation only)
    /// has strings with escapes checked in place, with nothing decoded, and is told
    /// of none of its strings.
    const DECODES: bool = true;
    /// Whether the sink keeps short strings inline, so that a short string with
    /// escapes is better decoded straight into [`short`](Strings::short).
    const KEEPS_SHORT: bool = false;
    /// A string with escapes decoded to `text[..len]`, whole UTF-8 of at most
    /// [`Str::INLINE_CAPACITY`] bytes (only when [`KEEPS_SHORT`](Strings::KEEPS_SHORT)).
    fn short(&mut self, text: &[u8; Str::INLINE_CAPACITY], len: usize, place: Place) {
        let _ = (text, len, place);
    }
}

/// What [`Reader::walk`](super::Reader) finds, in order. `in_object` tells whether a completed
/// value is a member value (its name came just before) or an element / the root.
pub(super) trait Sink<'a>: Strings<'a> {
    /// `null` (`None`), `true` or `false`: nothing that needs a drop, so a sink
    /// that takes no values costs nothing here.
    fn literal(&mut self, v: Option<bool>, in_object: bool);
    /// A number's text, checked against the grammar.
    fn number(&mut self, input: &[u8], start: usize, end: usize, in_object: bool);
    /// An array or object starts.
    fn open(&mut self, object: bool);
    /// The innermost open array or object ends; it is a value in its turn.
    fn close(&mut self, object: bool, in_object: bool);
}

/// One string, for the reader's own methods: borrowed from the input unless it had
/// escapes.
impl<'a> Strings<'a> for Cow<'a, str> {
    type Text = String;
    /// Borrowing needs a `&str`, which safe code gets only through a UTF-8 check:
    /// of this one string, which always passes.
    fn checked(&mut self, input: &'a [u8], start: usize, end: usize, _: Place) {
        let s = input.get(start..end).sure();
        *self = Cow::Borrowed(core::str::from_utf8(s).sure());
    }
    /// The text is handed out, so it is sized once, from where the string's closing
    /// quote is: the decoded text is never longer than the string's text, and a
    /// window copied whole may reach [`WINDOW`] bytes past the end of a run before
    /// it is cut back.
    fn start_text(&mut self, text: &str, first_run: usize) -> String {
        let mut out = String::with_capacity(string_end(text.as_bytes(), first_run) + WINDOW);
        out.push_str(text.get(..first_run).sure());
        out
    }
    fn decoded(&mut self, text: String, _: Place) {
        *self = Cow::Owned(text);
    }
}

/// Validation only: nothing is built.
pub(super) struct Skip;

/// Decoded text that is checked, not kept: its runs are skipped a word at a time.
pub(super) struct Discard;

impl Text for Discard {
    type Out = ();
    #[inline(always)]
    fn take(&mut self, _: &str, _: usize, _: usize) {}
    #[inline]
    fn push_ascii(&mut self, _: u8) {}
    #[inline]
    fn push(&mut self, _: char) {}
    #[inline]
    fn finish(self) {}
}

impl Strings<'_> for Skip {
    type Text = Discard;
    const DECODES: bool = false;
    fn checked(&mut self, _: &[u8], _: usize, _: usize, _: Place) {}
    fn start_text(&mut self, _: &str, _: usize) -> Discard {
        Discard
    }
    fn decoded(&mut self, _: (), _: Place) {}
}

impl Sink<'_> for Skip {
    fn literal(&mut self, _: Option<bool>, _: bool) {}
    fn number(&mut self, _: &[u8], _: usize, _: usize, _: bool) {}
    fn open(&mut self, _: bool) {}
    fn close(&mut self, _: bool, _: bool) {}
}

/// Builds a [`Value`]. Finished members and elements wait on scratch stacks; when
/// a container closes, its part of a stack moves into one exact-size `Vec`, so each
/// container costs one allocation. The first few items of each stack
/// live in the tree itself, so a small value needs no allocation for its scratch.
/// Strings with escapes are decoded into one scratch `String`, then copied into
/// their `Str` (inline when short), so each costs at most one exact-size
/// allocation; a long one takes the scratch text with it ([`HAND_OVER_TEXT_BYTES`]).
/// A tree used again (by a [`Parser`](super::Parser)) keeps what it allocated.
pub(super) struct Tree<const N: usize = INLINE_ITEMS> {
    /// Members of the open objects. A member is pushed with a `null` placeholder
    /// when its name is read.
    members: Stack<(Str, Value), N>,
    /// Elements of the open arrays, and the root value.
    elements: Stack<Value, N>,
    /// For each open container, where its members or elements start.
    starts: Stack<usize, N>,
    /// Where strings with escapes are decoded.
    text: String,
}

/// How many items of each scratch stack are kept in the tree itself: enough for
/// the payloads of most messages.
pub(super) const INLINE_ITEMS: usize = 8;

/// Scratch stacks that grew past this many items are not kept for the next parse.
const KEEP_SCRATCH_ITEMS: usize = 1024;

/// A scratch text bigger than this is not kept for the next string.
const KEEP_SCRATCH_TEXT_BYTES: usize = 256 * 1024;

/// A decoded text at least this long is handed over as it is (its buffer cut back
/// to its length) rather than copied out of the scratch text; the next string with
/// escapes then starts a new scratch text, sized for the rest of the input: one
/// copy of a long text fewer.
const HAND_OVER_TEXT_BYTES: usize = 1024;

/// A stack whose first `N` items are stored in place and the rest in a `Vec`.
/// Every place in `inline` past the stack's length holds a default item.
struct Stack<T, const N: usize> {
    len: usize,
    inline: [T; N],
    spill: Vec<T>,
}

/// An item that owns nothing, as a constant: what a stack's free inline places
/// hold.
trait Empty {
    const EMPTY: Self;
}

impl Empty for (Str, Value) {
    const EMPTY: Self = (Str::new(), Value::Null);
}

impl Empty for Value {
    const EMPTY: Self = Value::Null;
}

impl Empty for usize {
    const EMPTY: Self = 0;
}

impl<T: Default + Empty, const N: usize> Stack<T, N> {
    /// The inline places are filled from a constant where the stack is built,
    /// not built elsewhere and copied in.
    fn new() -> Stack<T, N> {
        Stack {
            len: 0,
            inline: [const { T::EMPTY }; N],
            spill: Vec::new(),
        }
    }

    /// An empty stack with room for `items` past its inline places.
    fn with_room(items: usize) -> Stack<T, N> {
        Stack {
            spill: Vec::with_capacity(items),
            ..Stack::new()
        }
    }

    #[inline(always)]
    fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    fn push(&mut self, item: T) {
        match self.inline.get_mut(self.len) {
            // The place holds a default item, which owns nothing: no call is made
            // to drop it.
            Some(place) => core::mem::forget(core::mem::replace(place, item)),
            None => self.spill.push(item),
        }
        self.len += 1;
    }

    #[inline(always)]
    fn last_mut(&mut self) -> Option<&mut T> {
        let last = self.len.checked_sub(1)?;
        match self.inline.get_mut(last) {
            Some(item) => Some(item),
            None => self.spill.last_mut(),
        }
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<T> {
        let last = self.len.checked_sub(1)?;
        self.len = last;
        match self.inline.get_mut(last) {
            Some(item) => Some(core::mem::take(item)),
            None => self.spill.pop(),
        }
    }

    /// The items from `start` on, moved into a `Vec` of exactly their number; the
    /// stack keeps its `Vec`'s capacity.
    #[inline]
    fn split_off(&mut self, start: usize) -> Vec<T> {
        debug_assert!(start <= self.len, "a container starts within its stack");
        let start = start.min(self.len);
        let items = match start.checked_sub(N) {
            // All in the `Vec`.
            Some(from) if from > 0 => self.spill.split_off(from),
            _ => {
                let mut items = Vec::with_capacity(self.len - start);
                let inline_end = self.len.min(N);
                if let Some(inline) = self.inline.get_mut(start..inline_end) {
                    items.extend(inline.iter_mut().map(core::mem::take));
                }
                // Most containers fit inline: no call to append nothing.
                if !self.spill.is_empty() {
                    items.append(&mut self.spill);
                }
                items
            }
        };
        self.len = start;
        items
    }

    /// Lets go of what an empty stack allocated: its inline places hold items
    /// that own nothing.
    #[inline]
    fn let_go(&mut self) {
        debug_assert!(self.len == 0, "only an empty stack is let go");
        self.spill = Vec::new();
    }

    /// Empties the stack; its `Vec` is let go when it grew past what is kept.
    fn clear(&mut self) {
        // After a whole value the stack is empty already.
        if self.len == 0 && self.spill.capacity() <= KEEP_SCRATCH_ITEMS {
            return;
        }
        let inline_end = self.len.min(N);
        if let Some(inline) = self.inline.get_mut(..inline_end) {
            inline
                .iter_mut()
                .for_each(|item| drop(core::mem::take(item)));
        }
        self.spill.clear();
        self.len = 0;
        if self.spill.capacity() > KEEP_SCRATCH_ITEMS {
            self.spill = Vec::new();
        }
    }
}

impl<const N: usize> Tree<N> {
    /// An empty tree whose scratch stacks have room for `items` each past their
    /// inline places: a tree kept for many parses allocates its scratch once, as
    /// it is made, for values that small.
    pub(super) fn with_room(items: usize) -> Tree<N> {
        Tree {
            members: Stack::with_room(items),
            elements: Stack::with_room(items),
            starts: Stack::with_room(items),
            text: String::new(),
        }
    }

    /// An empty tree.
    pub(super) fn new() -> Tree<N> {
        Tree {
            members: Stack::new(),
            elements: Stack::new(),
            starts: Stack::new(),
            text: String::new(),
        }
    }

    /// Runs `f` with a new tree, which is then let go without a call to drop each
    /// of its empty inline places: it is built where it stays, and never moved.
    #[inline(always)]
    pub(super) fn fresh<R>(f: impl FnOnce(&mut Tree<N>) -> R) -> R {
        let mut tree = Tree::new();
        let out = f(&mut tree);
        tree.members.let_go();
        tree.elements.let_go();
        tree.starts.let_go();
        tree.text = String::new();
        // It owns nothing now (`f` finished it, which empties its stacks).
        core::mem::forget(tree);
        out
    }

    /// The root value; the scratch stacks are left empty for the next parse (and
    /// what they allocated let go when it grew too big to keep). After an error
    /// there is no root, and `null` stands in.
    pub(super) fn finish(&mut self) -> Value {
        let root = self.elements.pop().unwrap_or_default();
        // (The text is kept only while small enough, see `decoded`.)
        self.members.clear();
        self.elements.clear();
        self.starts.clear();
        root
    }

    #[inline]
    fn string(&mut self, s: Str, place: Place) {
        match place {
            Place::Name => self.members.push((s, Value::Null)),
            Place::Value { in_object } => self.complete(Value::String(s), in_object),
        }
    }

    /// A value is complete: the value of the member named last (in place of its
    /// placeholder) when `in_object`, else the next element or the root.
    #[inline]
    fn complete(&mut self, v: Value, in_object: bool) {
        self.complete_at(v, in_object);
    }

    /// [`complete`](Tree::complete), giving back where `v` went.
    #[inline(always)]
    fn complete_at(&mut self, v: Value, in_object: bool) -> Option<&mut Value> {
        match self.members.last_mut() {
            Some(member) if in_object => {
                // The member's placeholder, `null`, has nothing to drop: said so, no
                // call to drop it is made on the way.
                let placeholder = core::mem::replace(&mut member.1, v);
                if let Value::Null = placeholder {
                    core::mem::forget(placeholder);
                } else {
                    drop(placeholder);
                }
                Some(&mut member.1)
            }
            _ => {
                self.elements.push(v);
                self.elements.last_mut()
            }
        }
    }

    /// The text `input[start..end]`, already checked to be UTF-8, as a member name
    /// (`place`), a string value or, when `number`, a number value. A short one is
    /// stored inline as it is, with no further check: an empty one goes into the
    /// tree first, then the text is copied into it where it stands (see
    /// [`Str::fill_checked_window`]), as a fixed-size window of the input where the
    /// input goes on far enough. A long one is checked again as it is boxed (safe
    /// code cannot box a `str` otherwise).
    #[inline(always)]
    fn text(&mut self, input: &[u8], start: usize, end: usize, place: Place, number: bool) {
        let len = end - start;
        if len > Str::INLINE_CAPACITY {
            let text = input.get(start..end).sure();
            let text = Str::from_checked_bytes(text).sure();
            return match place {
                Place::Value { in_object } if number => {
                    let number = Number::from_checked_text(text);
                    self.complete(Value::Number(number), in_object);
                }
                _ => self.string(text, place),
            };
        }
        let empty = match place {
            Place::Name => {
                self.members.push((Str::new(), Value::Null));
                self.members.last_mut().map(|member| &mut member.0)
            }
            Place::Value { in_object } if number => {
                let number = Value::Number(Number::from_checked_text(Str::new()));
                match self.complete_at(number, in_object) {
                    Some(Value::Number(n)) => Some(n.text_mut()),
                    _ => None,
                }
            }
            Place::Value { in_object } => {
                match self.complete_at(Value::String(Str::new()), in_object) {
                    Some(Value::String(s)) => Some(s),
                    _ => None,
                }
            }
        };
        let window = input
            .get(start..start + Str::INLINE_CAPACITY)
            .and_then(|w| <&[u8; Str::INLINE_CAPACITY]>::try_from(w).ok());
        match (empty, window) {
            (Some(empty), Some(window)) => empty.fill_checked_window(window, len),
            (Some(empty), None) => empty.fill_checked_bytes(input.get(start..end).sure()),
            (None, _) => false,
        };
    }
}

/// The text `input[start..end]`, already checked to be UTF-8, as a [`Str`]: a short
/// one is stored inline as it is, with no further check (copied as a fixed-size
/// window of the input where the input goes on far enough); a long one is checked
/// again as it is boxed (safe code cannot box a `str` otherwise).
#[inline(always)]
pub(super) fn checked_str(input: &[u8], start: usize, end: usize) -> Str {
    let window = input
        .get(start..start + Str::INLINE_CAPACITY)
        .and_then(|w| <&[u8; Str::INLINE_CAPACITY]>::try_from(w).ok());
    let inline = match window {
        Some(window) => Str::from_checked_window(window, end - start),
        None => None,
    };
    match inline {
        Some(s) => s,
        None => Str::from_checked_bytes(input.get(start..end).sure()).sure(),
    }
}

impl<const N: usize> Strings<'_> for Tree<N> {
    type Text = String;
    /// See [`Tree::text`].
    #[inline(always)]
    fn checked(&mut self, input: &[u8], start: usize, end: usize, place: Place) {
        self.text(input, start, end, place, false);
    }
    /// The scratch text, emptied. A new or small one is sized for `text`, the rest
    /// of the input (up to [`KEEP_SCRATCH_TEXT_BYTES`]), which the decoded string
    /// cannot outgrow: a long string is then decoded without growing its buffer.
    #[inline]
    fn start_text(&mut self, text: &str, first_run: usize) -> String {
        let mut out = core::mem::take(&mut self.text);
        out.clear();
        if out.capacity() < HAND_OVER_TEXT_BYTES {
            out.reserve(text.len().min(KEEP_SCRATCH_TEXT_BYTES));
        }
        out.push_str(text.get(..first_run).sure());
        out
    }
    /// Copied into its `Str`, and the scratch text goes back for the next string;
    /// or, when long, handed over whole.
    #[inline]
    fn decoded(&mut self, text: String, place: Place) {
        if text.len() >= HAND_OVER_TEXT_BYTES {
            self.string(Str::from(text), place);
            return;
        }
        self.string(Str::from(text.as_str()), place);
        if text.capacity() <= KEEP_SCRATCH_TEXT_BYTES {
            self.text = text;
        }
    }
    const COPIES: bool = true;
    /// Boxed as it is (cut back to its length).
    fn copied(&mut self, text: String, place: Place) {
        self.string(Str::from(text), place);
    }
    const KEEPS_SHORT: bool = true;
    /// Filled in where it lies in the tree, as a short string without escapes is.
    #[inline]
    fn short(&mut self, text: &[u8; Str::INLINE_CAPACITY], len: usize, place: Place) {
        self.text(text, 0, len, place, false);
    }
}

impl<const N: usize> Sink<'_> for Tree<N> {
    #[inline(always)]
    fn literal(&mut self, v: Option<bool>, in_object: bool) {
        let v = match v {
            Some(b) => Value::Bool(b),
            None => Value::Null,
        };
        self.complete(v, in_object);
    }
    #[inline]
    fn number(&mut self, input: &[u8], start: usize, end: usize, in_object: bool) {
        self.text(input, start, end, Place::Value { in_object }, true);
    }
    #[inline]
    fn open(&mut self, object: bool) {
        let start = if object {
            self.members.len()
        } else {
            self.elements.len()
        };
        self.starts.push(start);
    }
    #[inline]
    fn close(&mut self, object: bool, in_object: bool) {
        let start = self.starts.pop();
        let start = start.sure();
        let v = if object {
            Value::Object(Object::from(self.members.split_off(start)))
        } else {
            Value::Array(self.elements.split_off(start))
        };
        self.complete(v, in_object);
    }
}

/// The kinds of the open containers, one bit per level, the innermost lowest;
/// the first 63 levels without allocating. A word holds its levels below a marker
/// bit, so a word holding none is `1`; a full word moves to `lower_words`.
pub(super) struct Nesting {
    top_word: u64,
    lower_words: Vec<u64>,
}

impl Default for Nesting {
    #[inline]
    fn default() -> Nesting {
        Nesting {
            top_word: 1,
            lower_words: Vec::new(),
        }
    }
}

impl Nesting {
    #[inline(always)]
    pub(super) fn push(&mut self, object: bool) {
        if self.top_word >> 63 != 0 {
            self.lower_words.push(self.top_word);
            self.top_word = 1;
        }
        self.top_word = self.top_word << 1 | object as u64;
    }

    /// Closes the innermost container; returns whether the one it was in is an
    /// object (`false` at the root).
    #[inline(always)]
    pub(super) fn pop(&mut self) -> bool {
        self.top_word >>= 1;
        if self.top_word <= 1 {
            self.top_word = self.lower_words.pop().unwrap_or(1);
        }
        self.top_word & 1 == 1 && self.top_word > 1
    }

    /// Whether no container is open.
    #[inline(always)]
    pub(super) fn is_empty(&self) -> bool {
        self.top_word <= 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    /// A tree's scratch stacks are left empty after each parse, good or bad, what
    /// spilled past the inline items is kept for the next parse, and stacks that
    /// grew past what is kept are let go.
    #[test]
    fn scratch_stacks_are_emptied_and_big_ones_let_go() {
        let mut tree = Tree::new();
        let read = |text: &[u8], tree: &mut Tree| {
            let mut reader = crate::json::Reader::new(text, &crate::json::ParseOptions::DEFAULT);
            reader.read_into(tree).is_ok()
        };
        let lens = |t: &Tree| (t.members.len(), t.elements.len(), t.starts.len());
        let spilled = |t: &Tree| {
            let capacity = t.members.spill.capacity().max(t.elements.spill.capacity());
            capacity.max(t.starts.spill.capacity())
        };
        assert!(read(br#"{"a":[1,{"b":2}]}"#, &mut tree));
        assert_eq!((lens(&tree), spilled(&tree)), ((0, 0, 0), 0));
        assert!(!read(br#"{"a":[1,{"b":2},"#, &mut tree));
        assert_eq!(lens(&tree), (0, 0, 0));
        let some = alloc::format!("[{}0]", "0,".repeat(INLINE_ITEMS * 2));
        assert!(read(some.as_bytes(), &mut tree));
        assert_eq!(lens(&tree), (0, 0, 0));
        assert!(spilled(&tree) > 0, "the spilled stack is kept");
        let big = alloc::format!("[{}0]", "0,".repeat(KEEP_SCRATCH_ITEMS * 2));
        assert!(read(big.as_bytes(), &mut tree));
        assert_eq!((lens(&tree), spilled(&tree)), ((0, 0, 0), 0));
        let nested = alloc::format!("{}1{}", "[{\"a\":".repeat(40), "}]".repeat(40));
        assert!(read(nested.as_bytes(), &mut tree));
        assert_eq!(lens(&tree), (0, 0, 0));
        assert!(read(br#"{"a":1}"#, &mut tree));
    }

    /// Values with more items than the stacks keep inline, nested at every place
    /// around the edge between the inline items and the spilled ones, come out as
    /// they went in.
    #[test]
    fn items_past_the_inline_ones_come_out_in_order() {
        for outer in [0, 1, INLINE_ITEMS - 1, INLINE_ITEMS, INLINE_ITEMS + 1, 40] {
            for inner in [0, 1, INLINE_ITEMS - 1, INLINE_ITEMS, INLINE_ITEMS + 3] {
                let items = |n: usize, base: usize| -> alloc::vec::Vec<Value> {
                    (0..n).map(|k| Value::from((base + k) as u64)).collect()
                };
                let mut array = items(outer, 0);
                let object = Object::from_iter(
                    (0..inner).map(|k| (alloc::format!("k{k}"), Value::Array(items(inner, k)))),
                );
                array.push(Value::Object(object));
                array.extend(items(inner, 100));
                let value = Value::Array(array);
                let text = alloc::string::ToString::to_string(&value);
                assert_eq!(parse(text.as_bytes()).as_ref(), Ok(&value), "{text}");
            }
        }
    }

    /// Long decoded texts take the scratch text with them, shorter ones are copied
    /// out of it; in any order, each string comes out whole.
    #[test]
    fn long_decoded_texts_are_handed_over_and_short_ones_copied() {
        let piece = "ab\\n\\u00e9\\\"c\\ud83d\\ude00 d\\t";
        let decoded = "ab\n\u{e9}\"c\u{1F600} d\t";
        let unit = decoded.len();
        for n in [
            1,
            2,
            30,
            HAND_OVER_TEXT_BYTES / unit,
            HAND_OVER_TEXT_BYTES / unit + 1,
            300,
        ] {
            let long = piece.repeat(n);
            for order in 0..3 {
                let members = match order {
                    0 => alloc::format!(r#"{{"a":"{long}","b":"{piece}","c":"{long}"}}"#),
                    1 => alloc::format!(r#"{{"b":"{piece}","a":"{long}","c":"{long}"}}"#),
                    _ => alloc::format!(r#"{{"a":"{long}","c":"{long}","b":"{piece}"}}"#),
                };
                let value = parse(members.as_bytes()).unwrap();
                for (name, want) in [
                    ("a", decoded.repeat(n)),
                    ("b", decoded.into()),
                    ("c", decoded.repeat(n)),
                ] {
                    let got = value.get(name).and_then(Value::as_str);
                    assert_eq!(
                        got,
                        Some(want.as_str()),
                        "{n} x, order {order}, member {name}"
                    );
                }
            }
        }
    }
}
