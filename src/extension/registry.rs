//! The tools an extension offers, found by name.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use crate::message::Tool;
use crate::schema::PreparedSchema;

/// The declared tools, in the order the author gave them, with an index by name.
///
/// When two tools share a name, the first one is the one `tools/execute` runs (the
/// Core sees both in the list; `dhara check` flags the duplicate).
#[derive(Clone, Debug, Default)]
pub(crate) struct Registry {
    tools: Vec<Tool>,
    /// Each tool's `inputSchema`, prepared for checking inputs.
    input_schemas: Vec<Option<PreparedSchema>>,
    by_name: BTreeMap<String, usize>,
}

impl Registry {
    pub(crate) fn new(tools: Vec<Tool>) -> Registry {
        let mut by_name = BTreeMap::new();
        for (index, tool) in tools.iter().enumerate() {
            by_name.entry(tool.name.clone()).or_insert(index);
        }
        let input_schemas = tools.iter().map(Tool::prepare_input_schema).collect();
        Registry {
            tools,
            input_schemas,
            by_name,
        }
    }

    /// Every tool, in declaration order.
    pub(crate) fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The tool named `name`, with its prepared `inputSchema` if it has one.
    pub(crate) fn find(&self, name: &str) -> Option<(&Tool, Option<&PreparedSchema>)> {
        let &index = self.by_name.get(name)?;
        let tool = self.tools.get(index)?;
        Some((tool, self.input_schemas.get(index)?.as_ref()))
    }
}
