//! The tools an extension offers, found by name.

use alloc::vec::Vec;

use crate::message::Tool;
use crate::schema::PreparedSchema;

/// The declared tools, in the order the author gave them, found by name in that
/// order ([`Tool::is_named`]).
///
/// When two tools share a name, the first one is the one `tools/execute` runs (the
/// Core sees both in the list; `dhara check` flags the duplicate).
#[derive(Clone, Debug, Default)]
pub(crate) struct Registry {
    tools: Vec<Tool>,
    /// Each tool's `inputSchema`, prepared for checking inputs.
    input_schemas: Vec<Option<PreparedSchema>>,
}

impl Registry {
    pub(crate) fn new(tools: Vec<Tool>) -> Registry {
        let input_schemas = tools.iter().map(Tool::prepare_input_schema).collect();
        Registry {
            tools,
            input_schemas,
        }
    }

    /// Every tool, in declaration order.
    pub(crate) fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The tool named `name` (its bytes), with its prepared `inputSchema` if it has
    /// one.
    pub(crate) fn find(&self, name: &[u8]) -> Option<(&Tool, Option<&PreparedSchema>)> {
        let index = self.tools.iter().position(|tool| tool.is_named(name))?;
        let tool = self.tools.get(index)?;
        Some((tool, self.input_schemas.get(index)?.as_ref()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::string::String;

    /// A name is found as the first tool whose name is equal to it: names of the
    /// same length, names that share a start or an end, a name given twice, and
    /// names that are nobody's.
    #[test]
    fn a_tool_is_the_first_of_its_name() {
        let mut names: Vec<String> = Vec::new();
        for stem in [
            "read_file",
            "search",
            "édition",
            "a",
            "",
            "tools_and_more_tools_x",
        ] {
            names.push(String::from(stem));
            names.push(format!("{stem}2"));
            names.push(format!("x{stem}"));
        }
        names.push(String::from("search")); // the second of its name
        let tools: Vec<Tool> = names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                Tool::new(name.as_str(), format!("tool {i}"), crate::json::Value::Null)
            })
            .collect();
        let registry = Registry::new(tools.clone());
        let mut asked = names.clone();
        asked.extend(
            [
                "read_filf",
                "searcH",
                "édition ",
                "b",
                "_",
                "tools_and_more_tools_y",
            ]
            .map(String::from),
        );
        for name in &asked {
            let expected = tools.iter().find(|t| t.name == *name);
            let found = registry.find(name.as_bytes()).map(|(tool, _)| tool);
            assert_eq!(
                found.map(|t| &t.description),
                expected.map(|t| &t.description),
                "{name}"
            );
        }
    }
}
