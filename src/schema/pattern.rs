//! `pattern` and `patternProperties`: ECMA-262 regular expressions, a subset,
//! matched in time linear in the text by a Pike VM (a Thompson NFA simulated over
//! all its states at once), with no backtracking and memory bounded by the
//! pattern.
//!
//! The subset is listed in the [module docs](super), where users read it. A
//! pattern outside it, or one larger than [`MAX_INSTRUCTIONS`] once repetitions
//! are written out, or more than [`MAX_GROUPS`] groups deep, gives `None` from
//! [`Regex::new`], and the keyword is reported unchecked.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::iter::Peekable;
use core::str::Chars;

/// The largest program a pattern compiles to.
pub(super) const MAX_INSTRUCTIONS: usize = 2048;
/// The deepest nesting of groups in a pattern.
pub(super) const MAX_GROUPS: usize = 32;
/// The largest count in a `{n,m}` quantifier.
const MAX_COUNT: u32 = 1000;

/// A compiled pattern.
#[derive(Clone, Debug)]
pub(super) struct Regex {
    program: Vec<Inst>,
    classes: Vec<Class>,
}

/// One instruction of the program.
#[derive(Clone, Copy, Debug)]
enum Inst {
    Char(char),
    /// Any character but a line terminator.
    Any,
    Class(usize),
    /// Go on at both, the first preferred (which does not matter for a match).
    Split(usize, usize),
    Jump(usize),
    Assert(Assertion),
    Match,
}

/// A condition on the position between two characters.
#[derive(Clone, Copy, Debug)]
enum Assertion {
    Start,
    End,
    WordBoundary,
    NotWordBoundary,
}

/// A set of characters: sorted, disjoint ranges, perhaps negated.
#[derive(Clone, Debug)]
struct Class {
    ranges: Vec<(char, char)>,
    negated: bool,
}

impl Class {
    fn contains(&self, c: char) -> bool {
        let inside = self.ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi);
        inside != self.negated
    }
}

/// A pattern, parsed.
enum Node {
    Empty,
    Char(char),
    Any,
    Class(Class),
    Assert(Assertion),
    Concat(Vec<Node>),
    Alternate(Vec<Node>),
    Repeat {
        node: Box<Node>,
        min: u32,
        max: Option<u32>,
    },
}

const DIGITS: &[(char, char)] = &[('0', '9')];
const WORD: &[(char, char)] = &[('0', '9'), ('A', 'Z'), ('_', '_'), ('a', 'z')];
/// ECMA-262 white space and line terminators.
const SPACE: &[(char, char)] = &[
    ('\t', '\r'),
    (' ', ' '),
    ('\u{a0}', '\u{a0}'),
    ('\u{1680}', '\u{1680}'),
    ('\u{2000}', '\u{200a}'),
    ('\u{2028}', '\u{2029}'),
    ('\u{202f}', '\u{202f}'),
    ('\u{205f}', '\u{205f}'),
    ('\u{3000}', '\u{3000}'),
    ('\u{feff}', '\u{feff}'),
];

fn is_line_terminator(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

fn is_word(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Regex {
    /// Compiles `pattern`; `None` when it is outside the subset (or not a regular
    /// expression at all).
    pub(super) fn new(pattern: &str) -> Option<Regex> {
        let mut parser = Parser {
            chars: pattern.chars().peekable(),
        };
        let node = parser.alternation(0)?;
        if parser.chars.next().is_some() {
            return None; // an unmatched `)`
        }
        let mut regex = Regex {
            program: Vec::new(),
            classes: Vec::new(),
        };
        regex.emit(node, 0)?;
        regex.push(Inst::Match)?;
        Some(regex)
    }

    fn push(&mut self, inst: Inst) -> Option<usize> {
        if self.program.len() >= MAX_INSTRUCTIONS {
            return None;
        }
        self.program.push(inst);
        Some(self.program.len() - 1)
    }

    /// Writes the program for `node`; `depth` is its nesting, bounded by the
    /// parser's.
    fn emit(&mut self, node: Node, depth: usize) -> Option<()> {
        match node {
            Node::Empty => {}
            Node::Char(c) => drop(self.push(Inst::Char(c))?),
            Node::Any => drop(self.push(Inst::Any)?),
            Node::Class(class) => {
                self.classes.push(class);
                self.push(Inst::Class(self.classes.len() - 1))?;
            }
            Node::Assert(a) => drop(self.push(Inst::Assert(a))?),
            Node::Concat(nodes) => {
                for node in nodes {
                    self.emit(node, depth + 1)?;
                }
            }
            Node::Alternate(nodes) => {
                let mut ends = Vec::new();
                let last = nodes.len().saturating_sub(1);
                for (i, node) in nodes.into_iter().enumerate() {
                    if i == last {
                        self.emit(node, depth + 1)?;
                    } else {
                        let split = self.push(Inst::Split(0, 0))?;
                        self.emit(node, depth + 1)?;
                        ends.push(self.push(Inst::Jump(0))?);
                        self.patch(split, Inst::Split(split + 1, self.program.len()));
                    }
                }
                let end = self.program.len();
                for at in ends {
                    self.patch(at, Inst::Jump(end));
                }
            }
            Node::Repeat { node, min, max } => self.emit_repeat(&node, min, max, depth)?,
        }
        Some(())
    }

    /// `node` at least `min` times and at most `max`: `min` copies, then a loop
    /// or `max - min` optional copies that all skip to the end.
    fn emit_repeat(&mut self, node: &Node, min: u32, max: Option<u32>, depth: usize) -> Option<()> {
        for _ in 0..min {
            self.emit(node.duplicate(), depth + 1)?;
        }
        match max {
            None => {
                let split = self.push(Inst::Split(0, 0))?;
                self.emit(node.duplicate(), depth + 1)?;
                self.push(Inst::Jump(split))?;
                self.patch(split, Inst::Split(split + 1, self.program.len()));
            }
            Some(max) => {
                let mut splits = Vec::new();
                for _ in min..max {
                    splits.push(self.push(Inst::Split(0, 0))?);
                    self.emit(node.duplicate(), depth + 1)?;
                }
                let end = self.program.len();
                for at in splits {
                    self.patch(at, Inst::Split(at + 1, end));
                }
            }
        }
        Some(())
    }

    fn patch(&mut self, at: usize, inst: Inst) {
        if let Some(slot) = self.program.get_mut(at) {
            *slot = inst;
        }
    }

    /// Whether the pattern matches anywhere in `text`. Every state of the program
    /// is tracked at once, each at most once per position: the time is at most
    /// the length of the text times the size of the program.
    pub(super) fn is_match(&self, text: &str) -> bool {
        let size = self.program.len();
        let (mut current, mut next) = (States::new(size), States::new(size));
        let mut stack = Vec::new();
        let mut chars = text.chars().peekable();
        let mut previous = None;
        loop {
            let following = chars.peek().copied();
            // A match may start anywhere: a thread from the start at each position.
            if self.close(&mut current, &mut stack, 0, previous, following) {
                return true;
            }
            let Some(c) = chars.next() else {
                return false;
            };
            let after = chars.peek().copied();
            for &pc in &current.dense {
                let advances = match self.program.get(pc) {
                    Some(Inst::Char(x)) => *x == c,
                    Some(Inst::Any) => !is_line_terminator(c),
                    Some(Inst::Class(i)) => self.classes.get(*i).is_some_and(|k| k.contains(c)),
                    _ => false,
                };
                if advances && self.close(&mut next, &mut stack, pc + 1, Some(c), after) {
                    return true;
                }
            }
            core::mem::swap(&mut current, &mut next);
            next.clear();
            previous = Some(c);
        }
    }

    /// Adds `pc` and every state reachable from it without reading a character to
    /// `states`, at the position between `previous` and `following`; whether that
    /// reaches [`Inst::Match`].
    fn close(
        &self,
        states: &mut States,
        stack: &mut Vec<usize>,
        pc: usize,
        previous: Option<char>,
        following: Option<char>,
    ) -> bool {
        stack.push(pc);
        while let Some(pc) = stack.pop() {
            if !states.insert(pc) {
                continue;
            }
            match self.program.get(pc) {
                Some(Inst::Match) => {
                    stack.clear();
                    return true;
                }
                Some(Inst::Jump(to)) => stack.push(*to),
                Some(Inst::Split(first, second)) => {
                    stack.push(*second);
                    stack.push(*first);
                }
                Some(Inst::Assert(a)) => {
                    let holds = match a {
                        Assertion::Start => previous.is_none(),
                        Assertion::End => following.is_none(),
                        Assertion::WordBoundary => is_word(previous) != is_word(following),
                        Assertion::NotWordBoundary => is_word(previous) == is_word(following),
                    };
                    if holds {
                        stack.push(pc + 1);
                    }
                }
                _ => {}
            }
        }
        false
    }
}

/// A set of program states: the members in order of insertion, and where each is.
struct States {
    dense: Vec<usize>,
    sparse: Vec<usize>,
}

impl States {
    fn new(size: usize) -> States {
        States {
            dense: Vec::with_capacity(size),
            sparse: alloc::vec![0; size],
        }
    }

    /// Adds `pc`; `false` when it was there already (or is out of range).
    fn insert(&mut self, pc: usize) -> bool {
        let Some(&at) = self.sparse.get(pc) else {
            return false;
        };
        if self.dense.get(at) == Some(&pc) {
            return false;
        }
        if let Some(slot) = self.sparse.get_mut(pc) {
            *slot = self.dense.len();
        }
        self.dense.push(pc);
        true
    }

    fn clear(&mut self) {
        self.dense.clear();
    }
}

impl Node {
    /// A copy, for a repetition written out. Recurses once per level of the
    /// node, as bounded as the parser's nesting.
    fn duplicate(&self) -> Node {
        match self {
            Node::Empty => Node::Empty,
            Node::Char(c) => Node::Char(*c),
            Node::Any => Node::Any,
            Node::Class(class) => Node::Class(class.clone()),
            Node::Assert(a) => Node::Assert(*a),
            Node::Concat(nodes) => Node::Concat(nodes.iter().map(Node::duplicate).collect()),
            Node::Alternate(nodes) => Node::Alternate(nodes.iter().map(Node::duplicate).collect()),
            Node::Repeat { node, min, max } => Node::Repeat {
                node: Box::new(node.duplicate()),
                min: *min,
                max: *max,
            },
        }
    }
}

/// A recursive-descent parser, at most [`MAX_GROUPS`] groups deep.
struct Parser<'a> {
    chars: Peekable<Chars<'a>>,
}

impl Parser<'_> {
    fn eat(&mut self, c: char) -> bool {
        self.chars.next_if_eq(&c).is_some()
    }

    fn alternation(&mut self, depth: usize) -> Option<Node> {
        let mut alternatives = alloc::vec![self.sequence(depth)?];
        while self.eat('|') {
            alternatives.push(self.sequence(depth)?);
        }
        Some(match alternatives.len() {
            1 => alternatives.pop()?,
            _ => Node::Alternate(alternatives),
        })
    }

    fn sequence(&mut self, depth: usize) -> Option<Node> {
        let mut items = Vec::new();
        while let Some(&c) = self.chars.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let atom = self.atom(depth)?;
            items.push(self.quantified(atom)?);
        }
        Some(match items.len() {
            0 => Node::Empty,
            1 => items.pop()?,
            _ => Node::Concat(items),
        })
    }

    fn atom(&mut self, depth: usize) -> Option<Node> {
        Some(match self.chars.next()? {
            '^' => Node::Assert(Assertion::Start),
            '$' => Node::Assert(Assertion::End),
            '.' => Node::Any,
            '(' => {
                if depth + 1 >= MAX_GROUPS {
                    return None;
                }
                if self.eat('?') {
                    match self.chars.next()? {
                        ':' => {}
                        // A named group; lookbehind (`(?<=`, `(?<!`) is not in the subset.
                        '<' if !matches!(self.chars.peek(), Some('=' | '!')) => {
                            while self.chars.next()? != '>' {}
                        }
                        _ => return None,
                    }
                }
                let inner = self.alternation(depth + 1)?;
                if !self.eat(')') {
                    return None;
                }
                inner
            }
            '[' => Node::Class(self.class()?),
            '\\' => self.escape()?,
            '*' | '+' | '?' => return None,
            '{' if self.counts().is_some() => return None,
            c => Node::Char(c),
        })
    }

    /// A quantifier after `atom`, if any.
    fn quantified(&mut self, atom: Node) -> Option<Node> {
        let (min, max) = match self.chars.peek() {
            Some('*') => (0, None),
            Some('+') => (1, None),
            Some('?') => (0, Some(1)),
            Some('{') => match self.counts() {
                Some(counts) => counts,
                None => return Some(atom), // a literal `{`, read next
            },
            _ => return Some(atom),
        };
        if !matches!(self.chars.peek(), Some('{')) {
            self.chars.next();
        } else {
            while self.chars.next()? != '}' {}
        }
        self.eat('?'); // lazy: the same for whether it matches
        if matches!(atom, Node::Assert(_)) || matches!(self.chars.peek(), Some('*' | '+' | '?')) {
            return None;
        }
        if max.is_some_and(|max| max < min) || min > MAX_COUNT || max.is_some_and(|m| m > MAX_COUNT)
        {
            return None;
        }
        Some(Node::Repeat {
            node: Box::new(atom),
            min,
            max,
        })
    }

    /// The counts of a `{n}`, `{n,}` or `{n,m}` ahead (the `{` not yet read), read
    /// from a copy: `None` when what follows is not one.
    fn counts(&self) -> Option<(u32, Option<u32>)> {
        let mut ahead = self.chars.clone();
        if ahead.peek() == Some(&'{') {
            ahead.next();
        }
        let number = |ahead: &mut Peekable<Chars<'_>>| {
            let mut value: Option<u32> = None;
            while let Some(d) = ahead.peek().and_then(|c| c.to_digit(10)) {
                ahead.next();
                value = Some(value.unwrap_or(0).saturating_mul(10).saturating_add(d));
            }
            value
        };
        let min = number(&mut ahead)?;
        let max = if ahead.next_if_eq(&',').is_some() {
            number(&mut ahead)
        } else {
            Some(min)
        };
        (ahead.next()? == '}').then_some((min, max))
    }

    /// An escape after `\`, outside a class.
    fn escape(&mut self) -> Option<Node> {
        let c = *self.chars.peek()?;
        let set = |ranges: &[(char, char)], negated| {
            Node::Class(Class {
                ranges: ranges.to_vec(),
                negated,
            })
        };
        Some(match c {
            'd' | 'D' | 'w' | 'W' | 's' | 'S' => {
                self.chars.next();
                let ranges = match c.to_ascii_lowercase() {
                    'd' => DIGITS,
                    'w' => WORD,
                    _ => SPACE,
                };
                set(ranges, c.is_ascii_uppercase())
            }
            'b' => {
                self.chars.next();
                Node::Assert(Assertion::WordBoundary)
            }
            'B' => {
                self.chars.next();
                Node::Assert(Assertion::NotWordBoundary)
            }
            _ => Node::Char(self.character_escape()?),
        })
    }

    /// An escape that stands for one character, after `\`.
    fn character_escape(&mut self) -> Option<char> {
        Some(match self.chars.next()? {
            't' => '\t',
            'n' => '\n',
            'v' => '\u{b}',
            'f' => '\u{c}',
            'r' => '\r',
            '0' if !self.chars.peek().is_some_and(char::is_ascii_digit) => '\0',
            'x' => char::from_u32(self.hex(2)?)?,
            'u' => self.unicode_escape()?,
            'c' => {
                let letter = self.chars.next().filter(char::is_ascii_alphabetic)?;
                char::from_u32(u32::from(letter) % 32)?
            }
            // Backreferences, `\p{…}`, `\k<…>` and other letters are not in the subset.
            c if c.is_ascii_alphanumeric() => return None,
            c => c,
        })
    }

    /// `\uHHHH` (a surrogate pair of two as one character) or `\u{H…}`, after
    /// the `u`.
    fn unicode_escape(&mut self) -> Option<char> {
        if self.eat('{') {
            let mut value: u32 = 0;
            let mut digits = 0;
            while let Some(d) = self.chars.next_if(char::is_ascii_hexdigit) {
                value = value.checked_mul(16)?.checked_add(d.to_digit(16)?)?;
                digits += 1;
            }
            return (digits > 0 && self.eat('}')).then(|| char::from_u32(value))?;
        }
        let high = self.hex(4)?;
        if !(0xD800..0xDC00).contains(&high) {
            return char::from_u32(high);
        }
        // A high surrogate: only as the first of a pair.
        if !(self.eat('\\') && self.eat('u')) {
            return None;
        }
        let low = self.hex(4).filter(|low| (0xDC00..0xE000).contains(low))?;
        char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
    }

    fn hex(&mut self, digits: usize) -> Option<u32> {
        let mut value = 0;
        for _ in 0..digits {
            value = value * 16 + self.chars.next()?.to_digit(16)?;
        }
        Some(value)
    }

    /// A class after `[`, to its `]`.
    fn class(&mut self) -> Option<Class> {
        let negated = self.eat('^');
        let mut ranges: Vec<(char, char)> = Vec::new();
        loop {
            let lo = match self.chars.next()? {
                ']' => break,
                '\\' => match self.class_escape()? {
                    Member::Char(c) => c,
                    Member::Set(set) => {
                        ranges.extend(set);
                        // A set cannot start a range; a `-` after it is a literal.
                        continue;
                    }
                },
                c => c,
            };
            let mut ahead = self.chars.clone();
            let is_range = ahead.next() == Some('-') && ahead.peek().is_some_and(|&c| c != ']');
            if !is_range {
                ranges.push((lo, lo));
                continue;
            }
            self.chars.next();
            let hi = match self.chars.next()? {
                '\\' => match self.class_escape()? {
                    Member::Char(c) => c,
                    Member::Set(_) => return None,
                },
                c => c,
            };
            if hi < lo {
                return None;
            }
            ranges.push((lo, hi));
        }
        Some(Class { ranges, negated })
    }

    /// An escape inside a class, after `\`.
    fn class_escape(&mut self) -> Option<Member> {
        let c = *self.chars.peek()?;
        Some(match c {
            'd' | 'D' | 'w' | 'W' | 's' | 'S' => {
                self.chars.next();
                let ranges = match c.to_ascii_lowercase() {
                    'd' => DIGITS,
                    'w' => WORD,
                    _ => SPACE,
                };
                if c.is_ascii_uppercase() {
                    Member::Set(complement(ranges))
                } else {
                    Member::Set(ranges.to_vec())
                }
            }
            'b' => {
                self.chars.next();
                Member::Char('\u{8}')
            }
            '-' => {
                self.chars.next();
                Member::Char('-')
            }
            _ => Member::Char(self.character_escape()?),
        })
    }
}

/// What an escape in a class stands for.
enum Member {
    Char(char),
    Set(Vec<(char, char)>),
}

/// The characters not in `ranges` (sorted and disjoint).
fn complement(ranges: &[(char, char)]) -> Vec<(char, char)> {
    let mut out = Vec::new();
    let mut from = 0u32;
    for &(lo, hi) in ranges {
        if u32::from(lo) > from {
            push_range(&mut out, from, u32::from(lo) - 1);
        }
        from = u32::from(hi) + 1;
    }
    push_range(&mut out, from, u32::from(char::MAX));
    out
}

/// The characters from `lo` to `hi`, as ranges around the surrogates.
fn push_range(out: &mut Vec<(char, char)>, lo: u32, hi: u32) {
    for (lo, hi) in [(lo, hi.min(0xD7FF)), (lo.max(0xE000), hi)] {
        if let (Some(lo), Some(hi)) = (char::from_u32(lo), char::from_u32(hi)) {
            if lo <= hi {
                out.push((lo, hi));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, text: &str) -> bool {
        Regex::new(pattern)
            .unwrap_or_else(|| panic!("{pattern} is in the subset"))
            .is_match(text)
    }

    #[test]
    fn the_subset() {
        let cases: &[(&str, &str, bool)] = &[
            ("^a*$", "aaa", true),
            ("^a*$", "aab", false),
            ("a+", "xxa", true),
            ("^[a-z0-9_-]{3,16}$", "user_1", true),
            ("^[a-z0-9_-]{3,16}$", "u", false),
            ("^\\d{4}-\\d{2}-\\d{2}$", "2024-01-31", true),
            ("^\\d{4}-\\d{2}-\\d{2}$", "2024-1-31", false),
            ("^(?:https?|ftp)://", "https://a", true),
            ("^(?:https?|ftp)://", "gopher://a", false),
            ("^(?<word>\\w+)\\s", "ab c", true),
            ("[^\\s]", "   ", false),
            ("[\\D]", "123x", true),
            ("^.$", "\n", false),
            ("^.$", "é", true),
            ("^\\u00e9$", "é", true),
            ("^\\ud83d\\ude00$", "😀", true),
            ("^\\u{1F600}$", "😀", true),
            ("\\bcat\\b", "a cat!", true),
            ("\\bcat\\b", "concat", false),
            ("\\Bcat", "concat", true),
            ("^a{2}$", "aa", true),
            ("^a{2,}$", "a", false),
            ("^a{,2}$", "a{,2}", true),
            ("^(a|b)*c$", "ababc", true),
            ("^(a*)*$", "aaaa", true),
            ("^(a*)*b$", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false),
            ("x*?y", "xxy", true),
            ("^[\\-a]+$", "-a-", true),
            ("^[a-]$", "-", true),
            ("^\\.\\*$", ".*", true),
            ("^$", "", true),
            ("", "anything", true),
            ("a|", "b", true),
            ("[]", "a", false),
            ("[^]", "a", true),
            ("^\\cJ$", "\n", true),
            ("^\\x41$", "A", true),
            ("]", "]", true),
        ];
        for &(pattern, text, expected) in cases {
            assert_eq!(matches(pattern, text), expected, "{pattern:?} on {text:?}");
        }
    }

    #[test]
    fn outside_the_subset() {
        for pattern in [
            "(a)\\1",
            "(?=a)",
            "(?!a)",
            "(?<=a)b",
            "(?<!a)b",
            "\\p{L}",
            "\\k<x>",
            "\\a",
            "a**",
            "*a",
            "a{3,2}",
            "a{1001}",
            "(a",
            "a)",
            "[a",
            "[z-a]",
            "^*",
            "\\ud83d",
            "((((((((((((((((((((((((((((((((a))))))))))))))))))))))))))))))))",
            "(a{1000}){1000}",
        ] {
            assert!(Regex::new(pattern).is_none(), "{pattern}");
        }
    }

    /// A pattern that makes a backtracking matcher take exponential time is
    /// matched at once.
    #[test]
    fn no_backtracking() {
        let text = "a".repeat(10_000);
        assert!(!matches("^(a|a)*(a|a)*(a|aa)*b$", &text));
        assert!(matches("(x+x+)+y|a$", &text));
    }
}
