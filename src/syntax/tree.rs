//! Parsing with tree-sitter: the outline of a file's definitions and its parse errors.
//!
//! Every walk over a syntax tree is iterative (an explicit stack or a tree cursor),
//! so a deeply nested file cannot overflow the thread's stack.

use tree_sitter::{Node, Parser, Tree};

use std::collections::HashMap;

use super::lang::{self, Found, Up};

pub(super) mod parts;
use super::{Definition, Language, ParseReport};

/// The UTF-8 byte-order mark: not given to the parser (grammars do not expect it),
/// and added back to every offset.
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// A parsed file: its tree over the bytes after a BOM, and the table of line starts.
struct Parsed<'a> {
    bytes: &'a [u8],
    /// Length of the BOM before the parsed bytes (0 or 3).
    bom: usize,
    tree: Tree,
    /// Byte offset of the start of each line (line 1 at 0).
    line_starts: Vec<usize>,
}

fn parse(language: Language, bytes: &[u8]) -> Option<Parsed<'_>> {
    parse_from(language, bytes, None)
}

/// Like [`parse`]; when `before` is given (an earlier version of the same file), its
/// tree is edited to the one changed region of `bytes` (common prefix and suffix set
/// aside) and the parser reuses the unchanged subtrees: tree-sitter's incremental
/// parsing, which gives the tree a full parse would.
fn parse_from<'a>(
    language: Language,
    bytes: &'a [u8],
    before: Option<&[u8]>,
) -> Option<Parsed<'a>> {
    let bom = if bytes.starts_with(UTF8_BOM) {
        UTF8_BOM.len()
    } else {
        0
    };
    let body = bytes.get(bom..)?;
    let key = cache::Key::of(language, body);
    let tree = match cache::get(&key) {
        Some(tree) => tree,
        None => {
            let mut parser = Parser::new();
            parser.set_language(&lang::grammar(language)).ok()?;
            let old = before.and_then(|b| edited_tree(language, b, bom, body));
            let tree = parse_within(&mut parser, body, old.as_ref(), deadline())?;
            #[cfg(test)]
            counts::count(old.is_some());
            cache::put(key, &tree, body.len());
            tree
        }
    };
    let mut line_starts = vec![0];
    line_starts.extend(memchr::memchr_iter(b'\n', bytes).map(|i| i + 1));
    Some(Parsed {
        bytes,
        bom,
        tree,
        line_starts,
    })
}

/// How long a parse may take: [`super::PARSE_DEADLINE_MS`]; a test may set its own
/// thread's ([`deadline_tests::set_deadline`]).
fn deadline() -> std::time::Duration {
    #[cfg(test)]
    if let Some(d) = deadline_tests::DEADLINE.with(|d| d.get()) {
        return d;
    }
    std::time::Duration::from_millis(super::PARSE_DEADLINE_MS)
}

/// `parser.parse(body, old)`, cut off once `deadline` has passed ([`super::PARSE_DEADLINE_MS`]):
/// tree-sitter calls the progress callback as it works and stops when it says so;
/// `None` then, as for any parse that did not finish.
fn parse_within(
    parser: &mut Parser,
    body: &[u8],
    old: Option<&Tree>,
    deadline: std::time::Duration,
) -> Option<Tree> {
    let start = std::time::Instant::now();
    let mut past_deadline = |_: &tree_sitter::ParseState| start.elapsed() >= deadline;
    let options = tree_sitter::ParseOptions::new().progress_callback(&mut past_deadline);
    parser.parse_with_options(
        &mut |at: usize, _| body.get(at..).unwrap_or_default(),
        old,
        Some(options),
    )
}

/// The tree of `before` (parsed, or from the cache) edited to become `after`'s
/// starting point; `None` when `before` has a different BOM.
fn edited_tree(language: Language, before: &[u8], bom: usize, after: &[u8]) -> Option<Tree> {
    let old_bom = if before.starts_with(UTF8_BOM) {
        UTF8_BOM.len()
    } else {
        0
    };
    if old_bom != bom {
        return None;
    }
    let old = before.get(bom..)?;
    let mut tree = parse(language, before)?.tree;
    let prefix = old.iter().zip(after).take_while(|(a, b)| a == b).count();
    let max_suffix = old.len().min(after.len()) - prefix;
    let suffix = old
        .iter()
        .rev()
        .zip(after.iter().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    let point = |text: &[u8], at: usize| {
        let head = text.get(..at).unwrap_or_default();
        let row = memchr::memchr_iter(b'\n', head).count();
        let column = at - memchr::memrchr(b'\n', head).map_or(0, |i| i + 1);
        tree_sitter::Point { row, column }
    };
    let (old_end, new_end) = (old.len() - suffix, after.len() - suffix);
    tree.edit(&tree_sitter::InputEdit {
        start_byte: prefix,
        old_end_byte: old_end,
        new_end_byte: new_end,
        start_position: point(old, prefix),
        old_end_position: point(old, old_end),
        new_end_position: point(after, new_end),
    });
    Some(tree)
}

/// How many parses this thread made, full and incremental (tests pin the parses of a
/// preview with them).
#[cfg(test)]
pub(super) mod counts {
    use std::cell::Cell;

    thread_local! {
        static PARSES: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
    }

    pub(super) fn count(incremental: bool) {
        PARSES.with(|p| {
            let (full, inc) = p.get();
            p.set(match incremental {
                true => (full, inc + 1),
                false => (full + 1, inc),
            });
        });
    }

    /// (full parses, incremental parses) of this thread so far.
    pub(in crate::syntax) fn get() -> (usize, usize) {
        PARSES.with(Cell::get)
    }
}

/// The trees of the last few files parsed, by content: a preview parses the same
/// bytes several times (the symbol ops find definitions in the base, the diff names
/// the definitions around its hunks in the same base, the validation edits that tree
/// into the candidate's), and a parse of a 10 000-line file takes tens of
/// milliseconds. Only files up to [`CACHED_MAX_BYTES`] are kept (a tree takes several
/// times its file's size).
pub(super) mod cache {
    use std::sync::Mutex;

    use tree_sitter::Tree;

    use super::Language;

    /// Trees kept.
    const ENTRIES: usize = 4;
    /// Largest file (bytes) whose tree is kept: every file that is parsed.
    pub(super) const CACHED_MAX_BYTES: usize = crate::syntax::PARSE_MAX_BYTES;

    /// The language and the blake3 hash of the parsed bytes.
    #[derive(Clone, Copy, PartialEq, Eq)]
    pub(super) struct Key(Language, [u8; 32]);

    impl Key {
        pub(super) fn of(language: Language, bytes: &[u8]) -> Key {
            Key(language, *blake3::hash(bytes).as_bytes())
        }
    }

    /// Most recently used last.
    static TREES: Mutex<Vec<(Key, Tree)>> = Mutex::new(Vec::new());

    #[cfg(test)]
    thread_local! {
        /// A test thread's own cache, when it asked for one ([`isolate`]): the
        /// parses it counts are then not changed by other tests' parses.
        static OWN: std::cell::RefCell<Option<Vec<(Key, Tree)>>> =
            const { std::cell::RefCell::new(None) };
    }

    /// From now on this thread uses a cache of its own, empty.
    #[cfg(test)]
    pub(in crate::syntax) fn isolate() {
        OWN.with(|own| *own.borrow_mut() = Some(Vec::new()));
    }

    /// Runs `f` on the cache: the process's, or this test thread's own.
    fn with_trees<R>(f: impl FnOnce(&mut Vec<(Key, Tree)>) -> R) -> Option<R> {
        #[cfg(test)]
        let f = match own(f) {
            Ok(result) => return Some(result),
            Err(f) => f,
        };
        let mut trees = TREES.lock().ok()?;
        Some(f(&mut trees))
    }

    /// Runs `f` on this test thread's own cache if it has one, else gives `f` back.
    #[cfg(test)]
    fn own<R, F: FnOnce(&mut Vec<(Key, Tree)>) -> R>(f: F) -> Result<R, F> {
        OWN.with(|own| match own.borrow_mut().as_mut() {
            Some(trees) => Ok(f(trees)),
            None => Err(f),
        })
    }

    pub(super) fn get(key: &Key) -> Option<Tree> {
        with_trees(|trees| {
            let at = trees.iter().position(|(k, _)| k == key)?;
            let entry = trees.remove(at);
            let tree = entry.1.clone();
            trees.push(entry);
            Some(tree)
        })
        .flatten()
    }

    /// Forgets every tree (tests compare incremental and full parses with it).
    #[cfg(test)]
    pub(in crate::syntax) fn clear() {
        with_trees(Vec::clear);
    }

    pub(super) fn put(key: Key, tree: &Tree, len: usize) {
        if len > CACHED_MAX_BYTES {
            return;
        }
        with_trees(|trees| {
            trees.retain(|(k, _)| *k != key);
            if trees.len() >= ENTRIES {
                trees.remove(0);
            }
            trees.push((key, tree.clone()));
        });
    }
}

impl Parsed<'_> {
    fn start(&self, node: Node<'_>) -> usize {
        node.start_byte() + self.bom
    }

    fn end(&self, node: Node<'_>) -> usize {
        node.end_byte() + self.bom
    }

    /// 1-based line of byte `at`.
    fn line_of(&self, at: usize) -> usize {
        self.line_starts.partition_point(|&s| s <= at).max(1)
    }

    /// Start of the line holding byte `at` (after the BOM on line 1).
    fn line_start(&self, at: usize) -> usize {
        let start = self
            .line_starts
            .get(self.line_of(at) - 1)
            .copied()
            .unwrap_or(0);
        start.max(self.bom.min(at))
    }

    /// Just after the terminator of the line holding byte `at` (or the end of file).
    fn line_end(&self, at: usize) -> usize {
        self.line_starts
            .get(self.line_of(at))
            .copied()
            .unwrap_or(self.bytes.len())
    }

    /// 1-based line of the last byte of `node` (its start for an empty node).
    fn last_line(&self, node: Node<'_>) -> usize {
        let (start, end) = (self.start(node), self.end(node));
        self.line_of(end.saturating_sub(1).max(start))
    }

    fn text(&self, node: Node<'_>) -> &[u8] {
        self.bytes
            .get(self.start(node)..self.end(node))
            .unwrap_or_default()
    }
}

/// The definitions of a file, in order of their first byte (see [`super::outline`]).
///
/// One walk over the tree, in time linear in its size: the ancestors of each node
/// and the leading trivia of each child are known from the walk itself, never asked
/// of tree-sitter (`Node::parent` and `Node::prev_sibling` search from the root or the
/// first sibling).
pub(super) fn outline(language: Language, bytes: &[u8]) -> Option<Vec<Definition>> {
    parse(language, bytes).map(|parsed| outline_of(&parsed, language, None))
}

/// The definitions of a file whose lines (signature through last line) hold one of
/// `lines` (1-based, ascending), each as [`outline`] gives it: the innermost
/// definition around a hunk of a diff is among them, and so are all that hold it.
///
/// The walk visits only the nodes whose lines hold one of `lines`, the wrappers
/// ([`lang::may_wrap`]) and the children of wrappers. A definition is found at a node
/// and its lines are those of its `outer` node: that node itself or the wrappers
/// directly above it. So a definition that holds a line has an outer node that holds
/// it, every node above that holds it too, and the nodes between the outer node and
/// the definition's own are wrappers: each is visited. The definitions in a long
/// function body or a long list that no hunk touches are not.
pub(super) fn outline_around(language: Language, bytes: &[u8], lines: &[usize]) -> Vec<Definition> {
    let Some(parsed) = parse(language, bytes) else {
        return Vec::new();
    };
    let holds = |first: usize, last: usize| {
        let at = lines.partition_point(|&l| l < first);
        lines.get(at).is_some_and(|&l| l <= last)
    };
    let near = |node: Node<'_>| holds(parsed.line_of(parsed.start(node)), parsed.last_line(node));
    outline_of(&parsed, language, Some(&near))
        .into_iter()
        .filter(|d| holds(d.signature_line, d.last_line))
        .collect()
}

/// The walk of [`outline`] over a parsed file; with `near`, only over the nodes it
/// holds true for and the wrappers and their children (see [`outline_around`]).
fn outline_of(
    parsed: &Parsed<'_>,
    language: Language,
    near: Option<&dyn Fn(Node<'_>) -> bool>,
) -> Vec<Definition> {
    let wraps = |node: Node<'_>| lang::may_wrap(language, node.kind());
    let mut defs: Vec<Definition> = Vec::new();
    // First byte of the leading trivia of a node (by id), when it has any.
    let mut trivia: HashMap<usize, usize> = HashMap::new();
    // (node, its ancestors, index in `defs` of the innermost enclosing definition)
    let root = parsed.tree.root_node();
    let mut stack: Vec<(Node<'_>, Up<'_>, Option<usize>)> = vec![(root, Up::root(), None)];
    let mut cursor = root.walk();
    while let Some((node, up, parent)) = stack.pop() {
        let mut scope = parent;
        if let Some(found) = lang::classify(language, node, &up, &|n| parsed.text(n)) {
            if found.name.is_empty() {
                // Error recovery made a definition without a name: no path addresses
                // it, and what it holds would be listed under a wrong path.
                continue;
            }
            let mut path = parent
                .and_then(|i| defs.get(i))
                .map(|d| format!("{}.", d.path))
                .unwrap_or_default();
            if let Some(receiver) = &found.receiver {
                path.push_str(receiver);
                path.push('.');
            }
            path.push_str(&found.name);
            let first = trivia.get(&found.outer.id()).copied();
            defs.push(definition(parsed, language, &found, node, path, first));
            scope = Some(defs.len() - 1);
        }
        let node_wraps = near.is_some() && wraps(node);
        if near.is_some_and(|near| !node_wraps && !near(node)) {
            continue;
        }
        let visit = |c: &Node<'_>| {
            c.is_named() && (node_wraps || near.is_none_or(|near| near(*c) || wraps(*c)))
        };
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        let mut visited = Vec::with_capacity(children.len());
        for (i, child) in children.iter().enumerate() {
            if !visit(child) {
                continue;
            }
            let own = leading_trivia(parsed, &children[..i], *child);
            // The comments between a block's opener (`if x:`) and its first statement
            // are the block's siblings, not its children: they lead the block's first
            // definition, after any trivia of its own inside the block.
            let run_from_start = match own {
                None => i == 0,
                Some(first) => children.first().is_some_and(|c| parsed.start(*c) == first),
            };
            let lead = match run_from_start && node.kind() == "block" {
                true => trivia.get(&node.id()).copied().or(own),
                false => own,
            };
            if let Some(first) = lead {
                trivia.insert(child.id(), first);
            }
            visited.push(*child);
        }
        let below = up.child_of(node);
        stack.extend(visited.into_iter().rev().map(|c| (c, below, scope)));
    }
    defs.sort_by_key(|d| (d.trivia_start, d.signature_start));
    defs
}

/// The line extents of one found definition (at its own node `own`) whose leading
/// trivia starts at byte `first_trivia` (if it has any).
fn definition(
    parsed: &Parsed<'_>,
    language: Language,
    found: &Found<'_>,
    own: Node<'_>,
    path: String,
    first_trivia: Option<usize>,
) -> Definition {
    let outer = found.outer;
    let signature = signature_start(parsed, outer);
    let first = first_trivia.unwrap_or(parsed.start(outer));
    let last = last_statement(outer);
    let end_byte = parsed.end(last);
    let last_line = parsed.last_line(last);
    let before = parsed
        .bytes
        .get(parsed.line_start(first)..first)
        .unwrap_or_default();
    let line_end = parsed.line_end(end_byte.saturating_sub(1).max(parsed.start(last)));
    let after = parsed.bytes.get(end_byte..line_end).unwrap_or_default();
    let shared_line = if !before.iter().all(u8::is_ascii_whitespace) {
        Some(parsed.line_of(first))
    } else if !only_trailing_comment(language, after) {
        Some(last_line)
    } else {
        None
    };
    Definition {
        kind: found.kind,
        path,
        impl_block: found.impl_block,
        trivia_start: parsed.line_start(first),
        signature_start: parsed.line_start(signature),
        end: line_end,
        node: parsed.start(own)..parsed.end(own),
        node_kind: own.kind(),
        trivia_line: parsed.line_of(first),
        signature_line: parsed.line_of(signature),
        last_line,
        shared_line,
        parse_error: outer
            .has_error()
            .then(|| first_error(outer).map(|e| parsed.line_of(parsed.start(e))))
            .flatten(),
    }
}

/// The node whose end is the end of `node` without the comments that close it: a
/// Python block takes in the comment lines indented under it after its last statement,
/// which are not part of the definition (docs/symbols.md, "The extent of a
/// definition"). Descends through the last child that is not a comment.
fn last_statement(node: Node<'_>) -> Node<'_> {
    let mut at = node;
    loop {
        let last = (0..at.child_count())
            .rev()
            .filter_map(|i| at.child(i))
            .find(|c| !c.kind().contains("comment"));
        match last {
            Some(child) => at = child,
            None => return at,
        }
    }
}

/// True when the rest of a definition's last line holds nothing but whitespace,
/// semicolons and a comment.
fn only_trailing_comment(language: Language, after: &[u8]) -> bool {
    let rest: &[u8] = {
        let skip = after
            .iter()
            .position(|b| !(b.is_ascii_whitespace() || *b == b';'))
            .unwrap_or(after.len());
        &after[skip..]
    };
    let comment: &[&[u8]] = match language {
        Language::Python => &[b"#"],
        _ => &[b"//", b"/*"],
    };
    rest.is_empty() || comment.iter().any(|c| rest.starts_with(c))
}

/// Where the signature of `outer` starts: its first child that is not a decorator
/// (Python's `decorated_definition`, a decorated JavaScript/TypeScript class or
/// `export`), or `outer` itself.
fn signature_start(parsed: &Parsed<'_>, outer: Node<'_>) -> usize {
    let mut cursor = outer.walk();
    let first = outer
        .children(&mut cursor)
        .find(|c| c.kind() != "decorator" && !c.kind().contains("comment"));
    match first {
        Some(child) if outer.child(0).is_some_and(|c| c.kind() == "decorator") => {
            parsed.start(child)
        }
        _ => parsed.start(outer),
    }
}

/// The first byte of the leading trivia of `node`, whose earlier siblings are
/// `before`: the run of comments, attributes and decorators just before it, each
/// starting its own line, with no blank line between them and `node`. `None` when
/// there is none, and for a node that is trivia itself (so that a long run of
/// comments is not scanned once per comment).
fn leading_trivia(parsed: &Parsed<'_>, before: &[Node<'_>], node: Node<'_>) -> Option<usize> {
    let is_trivia = |n: Node<'_>| {
        let kind = n.kind();
        kind.contains("comment") || kind == "attribute_item" || kind == "decorator"
    };
    if is_trivia(node) || !node.is_named() {
        return None;
    }
    let mut first: Option<usize> = None;
    let mut next_line = parsed.line_of(parsed.start(node));
    for &sibling in before.iter().rev() {
        let start = parsed.start(sibling);
        let end_line = parsed.last_line(sibling);
        let own_line = parsed
            .bytes
            .get(parsed.line_start(start)..start)
            .is_some_and(|b| b.iter().all(u8::is_ascii_whitespace));
        // A comment ending on the definition's first line but starting its own line
        // (`/* a */ fn f`) is trivia too; a blank line ends the run.
        if !is_trivia(sibling)
            || !own_line
            || end_line + 1 < next_line
            || is_inner_doc(parsed, sibling)
        {
            break;
        }
        first = Some(start);
        next_line = parsed.line_of(start);
    }
    first
}

/// A Rust inner doc comment or attribute (`//!`, `/*!`, `#![…]`): it documents the
/// enclosing item, not the next one.
fn is_inner_doc(parsed: &Parsed<'_>, node: Node<'_>) -> bool {
    let text = parsed.text(node);
    text.starts_with(b"//!") || text.starts_with(b"/*!") || text.starts_with(b"#!")
}

/// See [`super::empty_blocks`]: every `block` node without a named child that is not a
/// comment, by the line of the node that opens it (its parent's first line).
pub(super) fn empty_python_blocks(bytes: &[u8]) -> Vec<usize> {
    let Some(parsed) = parse(Language::Python, bytes) else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    let mut cursor = parsed.tree.root_node().walk();
    let mut header: Vec<Node<'_>> = Vec::new();
    loop {
        let node = cursor.node();
        if node.kind() == "block" {
            let mut c = node.walk();
            let statements = node
                .named_children(&mut c)
                .any(|n| !n.kind().contains("comment"));
            if !statements {
                let opener = header.last().copied().unwrap_or(node);
                lines.push(parsed.line_of(parsed.start(opener)));
            }
        }
        if cursor.goto_first_child() {
            header.push(node);
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return lines;
            }
            header.pop();
        }
    }
}

/// The first error or missing-token node under `node`, in document order.
fn first_error(node: Node<'_>) -> Option<Node<'_>> {
    let mut found = None;
    visit_errors(node, |n| {
        found = Some(n);
        false
    });
    found
}

/// Calls `f` on each error or missing-token node under `node` in document order,
/// until it returns false. Descends only into subtrees that contain errors.
fn visit_errors<'t>(node: Node<'t>, mut f: impl FnMut(Node<'t>) -> bool) {
    if !node.has_error() {
        return;
    }
    let mut cursor = node.walk();
    loop {
        let n = cursor.node();
        let is_error = n.is_error() || n.is_missing();
        if is_error && !f(n) {
            return;
        }
        // An ERROR node's subtree is searched too: the parser often wraps a whole
        // region in one, and the errors inside it are what grows when more breaks.
        if n.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.node() == node {
                return;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

/// The parse errors of a file (see [`super::parse_errors`]); `before`, an earlier
/// version of it, makes the parse incremental. `with_unclosed` asks for
/// [`ParseReport::unclosed`] too: one more walk over the tree, done only for a report
/// that is shown.
pub(super) fn parse_errors(
    language: Language,
    bytes: &[u8],
    before: Option<&[u8]>,
    with_unclosed: bool,
) -> Option<ParseReport> {
    let parsed = parse_from(language, bytes, before)?;
    let mut report = ParseReport {
        errors: 0,
        line: 0,
        column: 0,
        end_line: 0,
        unclosed: None,
    };
    visit_errors(parsed.tree.root_node(), |n| {
        if report.errors == 0 {
            let at = parsed.start(n);
            let line_start = parsed.line_start(at);
            report.line = parsed.line_of(at);
            let before = parsed.bytes.get(line_start..at).unwrap_or_default();
            report.column = String::from_utf8_lossy(before).chars().count() + 1;
            report.end_line = parsed.last_line(n);
        }
        report.errors += 1;
        true
    });
    if with_unclosed && report.errors > 0 && language != Language::Python {
        report.unclosed = unclosed_bracket(&parsed).map(|at| {
            let line_start = parsed.line_start(at);
            let before = parsed.bytes.get(line_start..at).unwrap_or_default();
            (
                parsed.line_of(at),
                String::from_utf8_lossy(before).chars().count() + 1,
            )
        });
    }
    Some(report)
}

/// The byte offset of an opening bracket that looks unclosed (see
/// [`ParseReport::unclosed`]), from the bracket tokens of the tree in document order
/// (brackets inside strings and comments are not tokens).
fn unclosed_bracket(parsed: &Parsed<'_>) -> Option<usize> {
    let indent = |at: usize| -> Option<usize> {
        let start = parsed.line_start(at);
        let head = parsed.bytes.get(start..at)?;
        head.iter()
            .all(|b| *b == b' ' || *b == b'\t')
            .then_some(head.len())
    };
    let line_indent = |at: usize| -> usize {
        let start = parsed.line_start(at);
        let line = parsed.bytes.get(start..).unwrap_or_default();
        line.iter()
            .take_while(|b| **b == b' ' || **b == b'\t')
            .count()
    };
    // (opening bracket's kind, its offset)
    let mut open: Vec<(&str, usize)> = Vec::new();
    let mut cursor = parsed.tree.root_node().walk();
    loop {
        let node = cursor.node();
        if node.child_count() == 0 && !node.is_missing() {
            let at = parsed.start(node);
            match node.kind() {
                k @ ("{" | "(" | "[") => open.push((k, at)),
                k @ ("}" | ")" | "]") => {
                    let wanted = match k {
                        "}" => "{",
                        ")" => "(",
                        _ => "[",
                    };
                    let (kind, from) = open.pop()?;
                    if kind != wanted {
                        return Some(from);
                    }
                    // A closing bracket that starts its line, indented less than the
                    // line of the bracket it closes.
                    if indent(at).is_some_and(|i| i < line_indent(from)) {
                        return Some(from);
                    }
                }
                _ => {}
            }
        }
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return open.last().map(|&(_, at)| at);
            }
        }
    }
}

#[cfg(test)]
pub(super) mod deadline_tests {
    use super::*;

    thread_local! {
        pub(super) static DEADLINE: std::cell::Cell<Option<std::time::Duration>> =
            const { std::cell::Cell::new(None) };
    }

    /// Parses on this thread get `d` instead of [`super::super::PARSE_DEADLINE_MS`].
    pub(crate) fn set_deadline(d: Option<std::time::Duration>) {
        DEADLINE.with(|c| c.set(d));
    }

    /// A parse past its deadline stops and counts as no parse; within it, it finishes.
    /// (tree-sitter asks the callback every hundred or so steps, so the input must be
    /// longer than that.)
    #[test]
    fn a_parse_past_its_deadline_is_cut_off() {
        let broken: Vec<u8> = b"fn f( { [ ) ; impl ".repeat(2_000);
        let mut parser = Parser::new();
        parser.set_language(&lang::grammar(Language::Rust)).unwrap();
        let zero = std::time::Duration::ZERO;
        assert!(parse_within(&mut parser, &broken, None, zero).is_none());
        let mut parser = Parser::new();
        parser.set_language(&lang::grammar(Language::Rust)).unwrap();
        let ample = std::time::Duration::from_secs(60);
        let tree = parse_within(&mut parser, &broken, None, ample).expect("finishes");
        assert!(tree.root_node().has_error());
        assert_eq!(tree.root_node().end_byte(), broken.len());
    }
}
