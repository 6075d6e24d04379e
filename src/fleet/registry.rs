//! The one tool registry over every extension: the names each tool is offered and
//! addressed by, and how a name is resolved.
//!
//! Every tool has three names:
//!
//! * its **real name**, the one the extension declared and the one written in
//!   `tools/execute` (the wire always keeps it);
//! * its **bare name**: [`alias`] of the real name;
//! * its **qualified name**: [`alias`] of `<extension>__<real name>`.
//!
//! A name is resolved among the qualified names first, then among the bare names
//! and the real names. A bare name that two extensions offer resolves to nothing:
//! it is refused with the qualified names of the tools it could mean. The name a
//! tool is *offered* under (the one to show an LLM) is its bare name while no other
//! tool has the same bare or qualified name, and its qualified name otherwise.
//!
//! Extension names follow [`valid_extension_name`]: no `__` and no `_` at either
//! end, so the first `__` of `<extension>__<tool>` always ends the extension's name
//! and two different pairs never give the same qualified name.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::events::ExtensionKey;
use crate::message::Tool;

/// The longest name LLM APIs accept.
pub const MAX_NAME_BYTES: usize = 64;

/// Whether `name` matches `^[a-zA-Z0-9_-]{1,64}$`, the tool names LLM APIs accept.
pub fn is_offerable(name: &str) -> bool {
    (1..=MAX_NAME_BYTES).contains(&name.len()) && name.bytes().all(is_name_byte)
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Whether `name` can name an extension: it is [offerable](is_offerable), holds no
/// `__`, and neither starts nor ends with `_`.
pub fn valid_extension_name(name: &str) -> bool {
    is_offerable(name) && !name.contains("__") && !name.starts_with('_') && !name.ends_with('_')
}

/// The name a tool is offered under: `name` itself when it is
/// [offerable](is_offerable); otherwise its characters outside `[a-zA-Z0-9_-]`
/// replaced by `_`, cut to 55 bytes, then `_` and the 8 lowercase hex digits of the
/// 32-bit FNV-1a hash of the whole original name. The result is always offerable,
/// and two different names that need an alias get different aliases unless their
/// hashes collide.
///
/// ```
/// use dhara_protocol::fleet::alias;
///
/// assert_eq!(alias("read_file"), "read_file");
/// assert_eq!(alias("files.read"), "files_read_feef3122");
/// assert_eq!(alias(&"x".repeat(70)).len(), 64);
/// ```
pub fn alias(name: &str) -> String {
    if is_offerable(name) {
        return String::from(name);
    }
    const KEEP: usize = MAX_NAME_BYTES - 9;
    let mut out = String::with_capacity(MAX_NAME_BYTES);
    for c in name.chars() {
        if out.len() >= KEEP {
            break;
        }
        out.push(if c.is_ascii() && is_name_byte(c as u8) {
            c
        } else {
            '_'
        });
    }
    out.push_str(&format!("_{:08x}", fnv1a(name.as_bytes())));
    out
}

/// The 32-bit FNV-1a hash.
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |hash, &b| {
        (hash ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// One tool in the registry.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Entry {
    pub(crate) extension: ExtensionKey,
    pub(crate) tool: Tool,
    pub(crate) bare: String,
    pub(crate) qualified: String,
    pub(crate) offered: String,
}

/// How a registry update changed one extension's tools, by qualified name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Change {
    pub(crate) added: Vec<String>,
    pub(crate) removed: Vec<String>,
    pub(crate) changed: Vec<String>,
}

/// Why a name resolves to no tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Unresolved {
    Unknown,
    /// The qualified names of the tools the bare name could mean.
    Ambiguous(Vec<String>),
}

/// Every extension's tools, grouped by extension in the order they were added.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    entries: Vec<Entry>,
}

impl Registry {
    pub(crate) fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Replaces the tools of `extension` (named `name`) and returns, for every
    /// extension whose entries changed (its own, and those whose offered names a new
    /// clash or its end changed), what changed. A tool whose real name repeats an
    /// earlier one of the same extension is left out: `tools/execute` could not tell
    /// them apart.
    pub(crate) fn replace(
        &mut self,
        extension: ExtensionKey,
        name: &str,
        tools: &[Tool],
    ) -> Vec<(ExtensionKey, Change)> {
        let before = self.entries.clone();
        self.entries.retain(|e| e.extension != extension);
        // Grouped by extension, in the order they were added.
        let at = self.entries.partition_point(|e| e.extension < extension);
        let mut new = Vec::with_capacity(tools.len());
        for tool in tools {
            if new.iter().any(|e: &Entry| e.tool.name == tool.name) {
                continue;
            }
            new.push(Entry {
                extension,
                tool: tool.clone(),
                bare: alias(&tool.name),
                qualified: alias(&format!("{name}__{}", tool.name)),
                offered: String::new(),
            });
        }
        self.entries.splice(at..at, new);
        self.set_offered();
        diff(&before, &self.entries)
    }

    /// Sets each entry's offered name: its bare name unless another entry has the
    /// same bare or qualified name.
    fn set_offered(&mut self) {
        let offered: Vec<String> = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, entry)| {
                let clash = self.entries.iter().enumerate().any(|(j, other)| {
                    j != i && (other.bare == entry.bare || other.qualified == entry.bare)
                });
                match clash {
                    true => entry.qualified.clone(),
                    false => entry.bare.clone(),
                }
            })
            .collect();
        for (entry, offered) in self.entries.iter_mut().zip(offered) {
            entry.offered = offered;
        }
    }

    /// The tool `name` addresses: a qualified name, else a bare or real name that
    /// only one extension offers.
    pub(crate) fn resolve(&self, name: &str) -> Result<&Entry, Unresolved> {
        if let Some(entry) = self.entries.iter().find(|e| e.qualified == name) {
            return Ok(entry);
        }
        let mut matching = self
            .entries
            .iter()
            .filter(|e| e.bare == name || e.tool.name == name);
        match (matching.next(), matching.next()) {
            (None, _) => Err(Unresolved::Unknown),
            (Some(entry), None) => Ok(entry),
            (Some(first), Some(second)) => {
                let mut candidates = Vec::from([first.qualified.clone(), second.qualified.clone()]);
                candidates.extend(matching.map(|e| e.qualified.clone()));
                Err(Unresolved::Ambiguous(candidates))
            }
        }
    }
}

/// What changed from `before` to `after`, per extension, by qualified name.
fn diff(before: &[Entry], after: &[Entry]) -> Vec<(ExtensionKey, Change)> {
    fn change_of(
        changes: &mut Vec<(ExtensionKey, Change)>,
        extension: ExtensionKey,
    ) -> &mut Change {
        let at = match changes.iter().position(|(e, _)| *e == extension) {
            Some(at) => at,
            None => {
                changes.push((extension, Change::default()));
                changes.len() - 1
            }
        };
        &mut changes[at].1
    }
    let find = |entries: &[Entry], e: &Entry| -> Option<usize> {
        entries
            .iter()
            .position(|o| o.extension == e.extension && o.qualified == e.qualified)
    };
    let mut changes = Vec::new();
    for old in before {
        match find(after, old).and_then(|i| after.get(i)) {
            None => change_of(&mut changes, old.extension)
                .removed
                .push(old.qualified.clone()),
            Some(new) if new != old => change_of(&mut changes, old.extension)
                .changed
                .push(old.qualified.clone()),
            Some(_) => {}
        }
    }
    for new in after {
        if find(before, new).is_none() {
            change_of(&mut changes, new.extension)
                .added
                .push(new.qualified.clone());
        }
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str) -> Tool {
        Tool {
            name: name.into(),
            description: None,
            input_schema: None,
        }
    }

    fn key(n: usize) -> ExtensionKey {
        ExtensionKey::for_tests(n)
    }

    #[test]
    fn offerable_names_are_their_own_alias() {
        for name in ["a", "read_file", "fetch-url", "X9", &"y".repeat(64)] {
            assert!(is_offerable(name));
            assert_eq!(alias(name), name);
        }
    }

    #[test]
    fn other_names_get_an_offerable_alias_with_a_hash() {
        for name in ["", "files.read", "ünïcode", "a b", &"z".repeat(65), "x/y:z"] {
            let a = alias(name);
            assert!(is_offerable(&a), "{a}");
            assert_ne!(a, name);
            assert_eq!(a.get(a.len() - 9..a.len() - 8), Some("_"));
        }
        assert_eq!(
            alias("ünïcode"),
            format!("_n_code_{:08x}", fnv1a("ünïcode".as_bytes()))
        );
        // Names that sanitize alike keep apart by their hash.
        assert_ne!(alias("a.b"), alias("a:b"));
        // The hash is FNV-1a: the published test vectors.
        assert_eq!(fnv1a(b""), 0x811c_9dc5);
        assert_eq!(fnv1a(b"a"), 0xe40c_292c);
        assert_eq!(fnv1a(b"foobar"), 0xbf9c_f968);
    }

    #[test]
    fn extension_names_cannot_shift_the_separator() {
        for ok in ["web", "my-files", "a_b", "x1"] {
            assert!(valid_extension_name(ok));
        }
        for bad in ["", "a__b", "_a", "a_", "a.b", &"e".repeat(65)] {
            assert!(!valid_extension_name(bad), "{bad}");
        }
    }

    #[test]
    fn bare_names_route_while_unique_and_clash_to_qualified_names() {
        let mut registry = Registry::default();
        registry.replace(key(0), "web", &[tool("fetch"), tool("search")]);
        registry.replace(key(1), "files", &[tool("read"), tool("search")]);

        assert_eq!(registry.resolve("fetch").map(|e| e.extension), Ok(key(0)));
        assert_eq!(registry.resolve("read").map(|e| e.extension), Ok(key(1)));
        assert_eq!(
            registry.resolve("files__search").map(|e| e.extension),
            Ok(key(1))
        );
        assert_eq!(
            registry.resolve("web__search").map(|e| e.extension),
            Ok(key(0))
        );
        assert_eq!(
            registry.resolve("search"),
            Err(Unresolved::Ambiguous(Vec::from([
                String::from("web__search"),
                String::from("files__search")
            ])))
        );
        assert_eq!(registry.resolve("nothing"), Err(Unresolved::Unknown));

        let offered: Vec<&str> = registry
            .entries()
            .iter()
            .map(|e| e.offered.as_str())
            .collect();
        assert_eq!(offered, ["fetch", "web__search", "read", "files__search"]);
    }

    #[test]
    fn a_sanitized_name_routes_by_alias_and_by_real_name() {
        let mut registry = Registry::default();
        registry.replace(key(0), "files", &[tool("files.read")]);
        let entry = registry.resolve("files.read").cloned();
        assert_eq!(
            entry.as_ref().map(|e| e.tool.name.as_str()),
            Ok("files.read")
        );
        let bare = alias("files.read");
        assert_eq!(
            registry.resolve(&bare).map(|e| &e.tool.name),
            Ok(&"files.read".into())
        );
        let qualified = alias("files__files.read");
        assert_eq!(
            registry.resolve(&qualified).map(|e| e.extension),
            Ok(key(0))
        );
        assert!(registry.entries().iter().all(|e| is_offerable(&e.offered)));
    }

    #[test]
    fn changes_are_reported_per_extension_including_offered_names() {
        let mut registry = Registry::default();
        let changes = registry.replace(key(0), "web", &[tool("fetch"), tool("fetch")]);
        assert_eq!(registry.entries().len(), 1, "a repeated name is left out");
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].1.added, ["web__fetch"]);

        // A second extension offering `fetch` changes the first one's offered name.
        let changes = registry.replace(key(1), "other", &[tool("fetch")]);
        assert_eq!(changes.len(), 2);
        let of = |k| {
            changes
                .iter()
                .find(|(e, _)| *e == k)
                .map(|(_, c)| c.clone())
        };
        assert_eq!(
            of(key(0)).map(|c| c.changed),
            Some(Vec::from([String::from("web__fetch")]))
        );
        assert_eq!(
            of(key(1)).map(|c| c.added),
            Some(Vec::from([String::from("other__fetch")]))
        );

        // The same tools again: nothing changed.
        assert!(
            registry
                .replace(key(1), "other", &[tool("fetch")])
                .is_empty()
        );

        // Its tools gone, the first one's name is bare again.
        let changes = registry.replace(key(1), "other", &[]);
        assert_eq!(changes.len(), 2);
        assert_eq!(registry.resolve("fetch").map(|e| e.extension), Ok(key(0)));
        assert_eq!(registry.entries()[0].offered, "fetch");
    }

    #[test]
    fn entries_keep_the_order_extensions_were_added_whatever_order_they_answer() {
        let mut registry = Registry::default();
        registry.replace(key(2), "c", &[tool("x")]);
        registry.replace(key(0), "a", &[tool("y"), tool("z")]);
        registry.replace(key(1), "b", &[tool("w")]);
        registry.replace(key(0), "a", &[tool("z")]);
        let order: Vec<&str> = registry
            .entries()
            .iter()
            .map(|e| e.qualified.as_str())
            .collect();
        assert_eq!(order, ["a__z", "b__w", "c__x"]);
    }

    #[test]
    fn a_bare_name_equal_to_a_qualified_name_is_not_offered_bare() {
        let mut registry = Registry::default();
        registry.replace(key(0), "web", &[tool("fetch")]);
        registry.replace(key(1), "x", &[tool("web__fetch")]);
        // The qualified name wins; the other tool is reached by its own qualified name.
        assert_eq!(
            registry.resolve("web__fetch").map(|e| e.extension),
            Ok(key(0))
        );
        assert_eq!(
            registry.resolve("x__web__fetch").map(|e| e.extension),
            Ok(key(1))
        );
        assert_eq!(registry.entries()[1].offered, "x__web__fetch");
    }
}
