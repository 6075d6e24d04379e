//! The tools an extension offers, found by name.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use crate::message::Tool;

/// The declared tools, in the order the author gave them, with an index by name.
///
/// When two tools share a name, the first one is the one `tools/execute` runs (the
/// Core sees both in the list; `dhara check` flags the duplicate).
#[derive(Clone, Debug, Default)]
pub(crate) struct Registry {
    tools: Vec<Tool>,
    by_name: BTreeMap<String, usize>,
}

impl Registry {
    pub(crate) fn new(tools: Vec<Tool>) -> Registry {
        let mut by_name = BTreeMap::new();
        for (index, tool) in tools.iter().enumerate() {
            by_name.entry(tool.name.clone()).or_insert(index);
        }
        Registry { tools, by_name }
    }

    /// Every tool, in declaration order.
    pub(crate) fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The tool named `name`.
    pub(crate) fn find(&self, name: &str) -> Option<&Tool> {
        self.by_name
            .get(name)
            .and_then(|&index| self.tools.get(index))
    }
}
