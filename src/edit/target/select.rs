//! Which definition a target op edits: among those of its `symbol`, the ones of a kind
//! the op applies to; an ambiguous or wrong-kind symbol lists every candidate with how
//! it matched (docs/symbols.md, "Several candidates").

use super::super::error::{EditError, SymbolCandidate};
use super::super::plan::Edit;
use super::SymbolEdit;
use crate::syntax::Definition;

/// The kinds of definition `edit` applies to.
pub(super) fn kinds(edit: &Edit) -> &'static [&'static str] {
    match edit {
        Edit::InsertField { .. } => &["struct", "union", "class", "interface"],
        Edit::InsertVariant { .. } => &["enum", "union"],
        _ => &["function", "method"],
    }
}

/// The definition of `target.symbol` whose kind is one of `kinds`, picked by
/// `target.occurrence` (1-based among those) when there are several.
///
/// # Errors
/// [`EditError::SymbolNotFound`] (no definition of that path);
/// [`EditError::SymbolCheckFailed`] `wrong_kind` (none of a kind in `kinds`);
/// [`EditError::AmbiguousSymbol`] (several, no occurrence), listing the candidates of
/// that path (`exact_path`, `other_kind`) and of that last name elsewhere
/// (`name_only`); [`EditError::OccurrenceOutOfRange`].
pub(super) fn select<'d>(
    target: &SymbolEdit<'_>,
    defs: &'d [Definition],
    kinds: &[&str],
) -> Result<&'d Definition, EditError> {
    let named: Vec<&Definition> = defs.iter().filter(|d| d.path == target.symbol).collect();
    let fitting: Vec<&Definition> = named
        .iter()
        .copied()
        .filter(|d| kinds.contains(&d.kind))
        .collect();
    if named.is_empty() {
        return Err(EditError::SymbolNotFound {
            path: target.path.into(),
            op: target.op,
            symbol: target.symbol.into(),
            index: target.index,
            hint: target.not_found_hint(defs),
        });
    }
    let candidates = || {
        let last = target.symbol.rsplit('.').next().unwrap_or(target.symbol);
        let mut out: Vec<(usize, SymbolCandidate)> = Vec::new();
        for d in defs {
            let matched = if d.path == target.symbol && kinds.contains(&d.kind) {
                "exact_path"
            } else if d.path == target.symbol {
                "other_kind"
            } else if d.path.rsplit('.').next() == Some(last) && kinds.contains(&d.kind) {
                "name_only"
            } else {
                continue;
            };
            out.push((d.signature_start, SymbolCandidate::new(d, matched)));
        }
        // Best first, then in file order.
        out.sort_by_key(|(at, c)| (std::cmp::Reverse(c.score), *at));
        out.into_iter().map(|(_, c)| c).collect::<Vec<_>>()
    };
    match (target.occurrence, fitting.as_slice()) {
        (_, []) => {
            let found: Vec<String> = named
                .iter()
                .map(|d| format!("{} (lines {}-{})", d.kind, d.signature_line, d.last_line))
                .collect();
            Err(target.check_failed(
                "wrong_kind",
                named[0].signature_line,
                format!(
                    "{:?} is {}; {} applies to a {}. Name a definition of that kind, or use \
                     replace_symbol (or replace_lines with the lines above) for this one",
                    target.symbol,
                    found.join(", "),
                    target.op,
                    kinds.join(" or "),
                ),
            ))
        }
        (None, [one]) => Ok(one),
        (None, _) => Err(EditError::AmbiguousSymbol {
            path: target.path.into(),
            op: target.op,
            symbol: target.symbol.into(),
            index: target.index,
            candidates: candidates(),
        }),
        (Some(n), _) => n
            .checked_sub(1)
            .and_then(|i| fitting.get(i).copied())
            .ok_or_else(|| EditError::OccurrenceOutOfRange {
                path: target.path.into(),
                op: target.op,
                needle: format!("symbol {:?}", target.symbol),
                index: target.index,
                occurrence: n,
                count: fitting.len(),
            }),
    }
}
