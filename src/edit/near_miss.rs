//! Near misses of a text to find (docs/plan.md, "Near misses"): when `old` / `anchor`
//! is not in the file byte for byte but is there once whitespace at the start or the
//! end of its lines is ignored, [`whitespace`] names the line and what differs (tabs
//! against spaces, another indentation depth, trailing whitespace), so the agent can
//! fix the text instead of guessing.

/// How lines are compared once the exact search failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ignore {
    /// Spaces and tabs at the end of each line.
    Trailing,
    /// Spaces and tabs at the start of each line.
    Indentation,
    /// Both.
    Both,
}

/// Most lines of a text to find that the near-miss search compares: longer texts get
/// the generic hint (the search is on the failure path only, but stays bounded).
const MAX_NEEDLE_LINES: usize = 200;

/// Most inner-line comparisons of one near-miss search; past it, no near miss is named.
const MAX_LINE_COMPARISONS: usize = 1 << 20;

fn is_blank(b: &u8) -> bool {
    *b == b' ' || *b == b'\t'
}

fn trim_start(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|b| is_blank(b)).count();
    &s[n..]
}

fn trim_end(s: &[u8]) -> &[u8] {
    let n = s.iter().rev().take_while(|b| is_blank(b)).count();
    &s[..s.len() - n]
}

fn norm(s: &[u8], how: Ignore) -> &[u8] {
    match how {
        Ignore::Trailing => trim_end(s),
        Ignore::Indentation => trim_start(s),
        Ignore::Both => trim_end(trim_start(s)),
    }
}

/// The lines of `bytes` split at `\n` (a `\r` before it stays on the line; the
/// caller's CRLF check runs first).
fn lines(bytes: &[u8]) -> Vec<&[u8]> {
    bytes.split(|&b| b == b'\n').collect()
}

/// The first base line (0-based index into `base`) where the lines `needle` match
/// under `how`: the first needle line as the end of a base line, the middle ones
/// whole, the last as the start of a base line (a needle of one line: anywhere in a
/// line). `None` when nowhere.
fn find(base: &[&[u8]], needle: &[&[u8]], how: Ignore, budget: &mut usize) -> Option<usize> {
    let k = needle.len();
    if k == 0 || k > base.len() {
        return None;
    }
    let first = norm(needle[0], how);
    (0..=base.len() - k).find(|&j| {
        if k == 1 {
            let line = norm(base[j], how);
            return !first.is_empty() && memchr::memmem::find(line, first).is_some();
        }
        let last = norm(needle[k - 1], how);
        norm(base[j], how).ends_with(first)
            && (1..k - 1).all(|i| {
                *budget = budget.saturating_sub(1);
                *budget > 0 && norm(base[j + i], how) == norm(needle[i], how)
            })
            && norm(base[j + k - 1], how).starts_with(last)
    })
}

/// Whitespace at the start (`leading`) or end of `s`, in words: `1 tab ("\t")`,
/// `4 spaces ("    ")`, `no indentation`.
fn describe(s: &[u8], leading: bool) -> String {
    let ws: &[u8] = if leading {
        &s[..s.len() - trim_start(s).len()]
    } else {
        &s[trim_end(s).len()..]
    };
    if ws.is_empty() {
        return if leading {
            "no indentation".into()
        } else {
            "no trailing whitespace".into()
        };
    }
    let tabs = ws.iter().filter(|&&b| b == b'\t').count();
    let spaces = ws.len() - tabs;
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let words = match (tabs, spaces) {
        (0, s) => plural(s, "space", "spaces"),
        (t, 0) => plural(t, "tab", "tabs"),
        (t, s) => format!(
            "{} and {}",
            plural(t, "tab", "tabs"),
            plural(s, "space", "spaces")
        ),
    };
    format!("{words} ({:?})", String::from_utf8_lossy(ws))
}

/// When `needle` (not found byte for byte in `base`) matches lines of `base` once
/// spaces and tabs at the start or end of lines are ignored: a hint naming the
/// 1-based line of the file where the first difference is and what differs, with how
/// to write the edit. `None` when it does not match that way either.
pub(crate) fn whitespace(base: &[u8], needle: &[u8]) -> Option<String> {
    let mut n = lines(needle);
    // A text ending with a newline ends with an empty piece: nothing to compare.
    if n.len() > 1 && n.last().is_some_and(|l| l.is_empty()) {
        n.pop();
    }
    if n.len() > MAX_NEEDLE_LINES || n.iter().all(|l| trim_start(l).is_empty()) {
        return None;
    }
    // One line without spaces or tabs at its ends matches a line with them ignored
    // only where it matches byte for byte, which the exact search ruled out: no scan.
    if n.len() == 1 && trim_end(trim_start(n[0])).len() == n[0].len() {
        return None;
    }
    let b = lines(base);
    // Lines compared inside a candidate match, over all three ways: a file of many
    // equal lines cannot make the search quadratic.
    let mut budget = MAX_LINE_COMPARISONS;
    let (how, at) = [Ignore::Trailing, Ignore::Indentation, Ignore::Both]
        .into_iter()
        .find_map(|how| find(&b, &n, how, &mut budget).map(|at| (how, at)))?;
    // The first line whose whitespace differs, and on which side.
    let k = n.len();
    let ws_lead = |s: &[u8]| s.len() - trim_start(s).len();
    let ws_trail = |s: &[u8]| trim_end(s).len();
    let differs = |i: usize, leading: bool| -> bool {
        let (line, text) = (b[at + i], n[i]);
        // The first text line may start inside its line, the last end inside it:
        // their outer whitespace is compared only when the whole line is the text's.
        let outer = if leading { i == 0 } else { i + 1 == k };
        if outer && norm(line, Ignore::Both) != norm(text, Ignore::Both) {
            return false;
        }
        if leading {
            line[..ws_lead(line)] != text[..ws_lead(text)]
        } else {
            line[ws_trail(line)..] != text[ws_trail(text)..]
        }
    };
    let leading = how != Ignore::Trailing;
    let trailing = how != Ignore::Indentation;
    let first = (0..k).find_map(|i| {
        if leading && differs(i, true) {
            Some((i, true))
        } else if trailing && differs(i, false) {
            Some((i, false))
        } else {
            None
        }
    });
    let (i, is_leading) = first.unwrap_or((0, leading));
    let line_no = at + i + 1;
    let (line, text) = (b[at + i], n[i]);
    Some(if is_leading {
        let (file_ws, text_ws) = (describe(line, true), describe(text, true));
        let kind = if leading_kind(line) != leading_kind(text)
            && leading_kind(line).is_some()
            && leading_kind(text).is_some()
        {
            "tabs against spaces"
        } else {
            "another indentation depth"
        };
        format!(
            "the text matches the file at line {line_no} except for indentation \
             ({kind}): the file indents line {line_no} with {file_ws}, the text with \
             {text_ws} — copy the file's indentation into the text to find (and into the \
             new text, to keep the file's style){}",
            also_trailing(how)
        )
    } else {
        let (file_ws, text_ws) = (describe(line, false), describe(text, false));
        format!(
            "the text matches the file at line {line_no} except for trailing whitespace: \
             line {line_no} of the file ends with {file_ws}, the text's line with {text_ws} \
             — write the line's end as the file has it{}",
            also_trailing(how)
        )
    })
}

/// Tabs or spaces, the kind of a line's indentation; `None` without one (or mixed).
fn leading_kind(line: &[u8]) -> Option<u8> {
    let ws = &line[..line.len() - trim_start(line).len()];
    let first = *ws.first()?;
    ws.iter().all(|&b| b == first).then_some(first)
}

fn also_trailing(how: Ignore) -> &'static str {
    if how == Ignore::Both {
        " (other lines also differ in indentation or trailing whitespace)"
    } else {
        ""
    }
}
