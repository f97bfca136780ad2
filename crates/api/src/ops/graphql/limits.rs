//! What one GraphQL request may cost. The library enforces the limits on the operation (depth,
//! complexity, directives); the two checks here run first, where it would not bound its own work:
//!
//! - [`check_text`], before parsing: the document's size (parsing is synchronous, about a
//!   microsecond per token, so the size bounds how long it holds a worker) and how deep its
//!   brackets nest (the parser recurses on list and object values without a limit of its own:
//!   a few thousand `[` overflow the stack);
//! - [`check_fragments`], after parsing: what the document becomes once its fragments are spread
//!   in place. The library's depth check and validation walk every spread afresh, so fragments
//!   that spread each other twice over grow exponentially; here each fragment is measured once.
use std::collections::HashMap;
use std::time::Duration;

use async_graphql::parser::types::{ExecutableDocument, Selection, SelectionSet};
use async_graphql::{Pos, Positioned, ServerError};

/// The longest document read, in bytes.
pub const MAX_QUERY_BYTES: usize = 32 * 1024;
/// How deep anything may nest: brackets in the text (`{`, `[`, `(`), and selection sets with
/// the fragments spread in them (the library's "recursion depth").
pub const MAX_NESTING: usize = 64;
/// Fields within fields, as the hosted API counts them (its maximum too).
pub const MAX_DEPTH: usize = 25;
/// Fields selected, fragments spread in place, aliases and repeats included (each field costs 1
/// unless its declaration says more).
pub const MAX_COMPLEXITY: usize = 5_000;
/// Selections all the document's operations and fragments expand to: bounds the library's own
/// passes over the document before it measures complexity.
pub const MAX_EXPANDED: usize = 10 * MAX_COMPLEXITY;
/// Directives on one field.
pub const MAX_DIRECTIVES: usize = 8;
/// The longest an operation runs (the hosted API's timeout).
pub const MAX_EXECUTION: Duration = Duration::from_secs(10);

/// Refuses a document too long or nested too deep to parse.
pub fn check_text(src: &str) -> Result<(), ServerError> {
    if src.len() > MAX_QUERY_BYTES {
        let message = format!("Query is {} bytes long, more than the {MAX_QUERY_BYTES} accepted.", src.len());
        return Err(ServerError::new(message, None));
    }
    match too_deep_at(src.as_bytes()) {
        Some(at) => Err(ServerError::new(format!("Query nests brackets more than {MAX_NESTING} deep."), Some(position(src, at)))),
        None => Ok(()),
    }
}

/// Where brackets first nest more than [`MAX_NESTING`] deep, outside strings and comments
/// (GraphQL's lexical rules: `#` to the end of the line, `"…"` with `\` escapes and ending at a
/// line end, `"""…"""` where `\"""` is escaped).
fn too_deep_at(src: &[u8]) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = 0;
    while i < src.len() {
        match src[i] {
            b'{' | b'[' | b'(' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Some(i);
                }
            }
            b'}' | b']' | b')' => depth = depth.saturating_sub(1),
            b'#' => {
                while i + 1 < src.len() && !matches!(src[i + 1], b'\n' | b'\r') {
                    i += 1;
                }
            }
            b'"' if src[i..].starts_with(b"\"\"\"") => {
                i += 3;
                while i < src.len() && !src[i..].starts_with(b"\"\"\"") {
                    i += if src[i..].starts_with(b"\\\"\"\"") { 4 } else { 1 };
                }
                i += 2;
            }
            b'"' => {
                i += 1;
                while i < src.len() && !matches!(src[i], b'"' | b'\n' | b'\r') {
                    i += if src[i] == b'\\' { 2 } else { 1 };
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The line and column (from 1, in characters) of byte `at`.
fn position(src: &str, at: usize) -> Pos {
    let before = &src[..at];
    let line_start = before.rfind('\n').map_or(0, |n| n + 1);
    Pos { line: before.matches('\n').count() + 1, column: before[line_start..].chars().count() + 1 }
}

/// Refuses a document whose fragments expand beyond [`MAX_EXPANDED`] selections, spread
/// themselves, or nest more than [`MAX_NESTING`] deep once spread.
pub fn check_fragments(doc: &ExecutableDocument) -> Result<(), ServerError> {
    let mut sizes = Sizes { doc, fragments: HashMap::new() };
    let mut total = 0usize;
    for (_, op) in doc.operations.iter() {
        total = total.saturating_add(sizes.of(&op.node.selection_set, 0)?.selections);
    }
    // Fragment definitions are walked on their own as well, used or not.
    for (name, fragment) in &doc.fragments {
        total = total.saturating_add(sizes.fragment(name, fragment.pos, 0)?.selections);
    }
    if total > MAX_EXPANDED {
        return Err(ServerError::new(format!("Query expands to more than {MAX_EXPANDED} selections once its fragments are spread."), None));
    }
    Ok(())
}

#[derive(Clone, Copy, Default)]
struct Size {
    /// Fields, spreads and inline fragments, fragments spread in place.
    selections: usize,
    /// How many selection sets deep it nests below its own.
    height: usize,
}

/// Each fragment's [`Size`], measured once (`None` while it is being measured).
struct Sizes<'a> {
    doc: &'a ExecutableDocument,
    fragments: HashMap<&'a str, Option<Size>>,
}

impl<'a> Sizes<'a> {
    fn of(&mut self, set: &'a Positioned<SelectionSet>, depth: usize) -> Result<Size, ServerError> {
        if depth > MAX_NESTING {
            return Err(too_deep(set.pos));
        }
        let mut size = Size::default();
        for selection in &set.node.items {
            let inner = match &selection.node {
                Selection::Field(f) if f.node.selection_set.node.items.is_empty() => None,
                Selection::Field(f) => Some(self.of(&f.node.selection_set, depth + 1)?),
                Selection::InlineFragment(f) => Some(self.of(&f.node.selection_set, depth + 1)?),
                Selection::FragmentSpread(s) => Some(self.fragment(&s.node.fragment_name.node, selection.pos, depth + 1)?),
            };
            size.selections = size.selections.saturating_add(1);
            if let Some(inner) = inner {
                size.selections = size.selections.saturating_add(inner.selections);
                size.height = size.height.max(inner.height + 1);
            }
        }
        Ok(size)
    }

    /// The size of fragment `name` spread at `depth` (an unknown one is the validation's to name).
    fn fragment(&mut self, name: &'a str, pos: Pos, depth: usize) -> Result<Size, ServerError> {
        let size = match self.fragments.get(name) {
            Some(Some(size)) => *size,
            Some(None) => return Err(ServerError::new(format!("Fragment \"{name}\" spreads itself."), Some(pos))),
            None => {
                let Some(fragment) = self.doc.fragments.get(name) else { return Ok(Size::default()) };
                self.fragments.insert(name, None);
                let size = self.of(&fragment.node.selection_set, depth)?;
                self.fragments.insert(name, Some(size));
                size
            }
        };
        if depth + size.height > MAX_NESTING {
            return Err(too_deep(pos));
        }
        Ok(size)
    }
}

fn too_deep(pos: Pos) -> ServerError {
    ServerError::new(format!("Query nests selections more than {MAX_NESTING} deep once its fragments are spread."), Some(pos))
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_graphql::parser::parse_query;

    fn fragments(src: &str) -> Result<(), String> {
        check_fragments(&parse_query(src).unwrap()).map_err(|e| e.message)
    }

    #[test]
    fn text_nesting_outside_strings_and_comments() {
        let deep = |open: &str, close: &str, n: usize| format!("{{a(x: {}1{})}}", open.repeat(n), close.repeat(n));
        assert!(check_text(&deep("[", "]", MAX_NESTING - 2)).is_ok());
        let e = check_text(&deep("[", "]", MAX_NESTING)).unwrap_err();
        assert_eq!((e.message.as_str(), e.locations[0]), ("Query nests brackets more than 64 deep.", Pos { line: 1, column: 69 }));
        assert!(check_text(&deep("{a:", "}", 5_000)).is_err());
        assert!(check_text(&format!("{}{}", "{a".repeat(5_000), "}".repeat(5_000))).is_err());
        // Brackets in strings, block strings (with an escaped end) and comments are no nesting.
        let many = "{[(".repeat(100);
        for quoted in [format!("\"{many}\\\"{many}\""), format!("\"\"\"{many}\\\"\"\"\n{many}\"\"\"")] {
            assert!(check_text(&format!("{{ a(x: {quoted}) }}")).is_ok(), "{quoted}");
        }
        assert!(check_text(&format!("{{ a # {many}\n}}")).is_ok());
        // A string ends at the line's end: what follows is counted again.
        let e = check_text(&format!("{{ a(x: \"open\n{many}")).unwrap_err();
        assert_eq!(e.locations[0].line, 2);
        // Unterminated strings and comments at the end are no trouble.
        for src in ["\"", "\"\"\"", "\"\\", "#", "\"\"\"\\\"\"\""] {
            assert!(check_text(src).is_ok(), "{src}");
        }
    }

    #[test]
    fn text_size() {
        assert!(check_text(&format!("{{{}}}", "a ".repeat(MAX_QUERY_BYTES / 2 - 1))).is_ok());
        let e = check_text(&format!("{{{}}}", "a ".repeat(MAX_QUERY_BYTES / 2))).unwrap_err();
        assert_eq!(e.message, format!("Query is {} bytes long, more than the 32768 accepted.", MAX_QUERY_BYTES + 2));
    }

    #[test]
    fn fragments_are_measured_once() {
        assert!(fragments("{ viewer { ...A } } fragment A on User { login ...B } fragment B on User { id }").is_ok());
        // Each fragment spreading the next twice: 2^40 selections, measured in 40 steps.
        let chain: String = (0..40).map(|i| format!("fragment F{i} on User {{ ...F{} ...F{} }}\n", i + 1, i + 1)).collect();
        let src = format!("{{ viewer {{ ...F0 }} }}\n{chain}fragment F40 on User {{ login }}");
        assert!(fragments(&src).unwrap_err().contains("more than 50000 selections"));
        // Unused fragments count too: the library walks them as well.
        assert!(fragments(&format!("{{ viewer {{ login }} }}\n{chain}fragment F40 on User {{ login }}")).is_err());
        assert!(fragments(&format!("{{ viewer {{ ...F0 }} }}\n{}", "fragment F0 on User { login }")).is_ok());
    }

    #[test]
    fn fragments_that_spread_themselves_or_nest_too_deep() {
        assert_eq!(
            fragments("{ viewer { ...A } } fragment A on User { ...B } fragment B on User { ...A }").unwrap_err(),
            "Fragment \"A\" spreads itself."
        );
        assert!(fragments("{ viewer { ...A } } fragment A on User { ...A ...A }").is_err());
        // A chain of fragments, each one level deeper: fine within the limit, refused beyond.
        let chain = |n: usize| {
            let defs: String = (0..n).map(|i| format!("fragment F{i} on User {{ ...F{} }}\n", i + 1)).collect();
            format!("{{ viewer {{ ...F0 }} }}\n{defs}fragment F{n} on User {{ login }}")
        };
        assert!(fragments(&chain(60)).is_ok());
        assert!(fragments(&chain(2_000)).unwrap_err().contains("more than 64 deep"));
        // A fragment measured shallow first, then spread deeper.
        let deep = format!("{{ viewer {{ ...F }} {} ...F {} }} fragment F on User {{ a {{ b }} }}", "a {".repeat(63), "}".repeat(63));
        assert!(fragments(&deep).unwrap_err().contains("more than 64 deep"));
        // An unknown fragment is left for the validation to name.
        assert!(fragments("{ viewer { ...Nope } }").is_ok());
    }
}
