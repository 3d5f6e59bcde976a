//! Near-miss paths (docs/plan.md, "Near misses"): for a path of a plan that does not
//! exist, the existing name it most likely meant — one that differs only by case, by
//! Unicode normalization (NFC against NFD), by whitespace at its end, or by a typo
//! (edit distance among the directory's entries). Looked up on the failure path and for
//! new files only, one directory listing per lookup.

use unicode_normalization::UnicodeNormalization;

pub use crate::edit::NearPath;
use crate::fs::{EntryKind, FileSystem, RelPath};

/// Which differences count as a near miss.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closeness {
    /// Case, normalization, whitespace at the end, and typos: an edit distance (optimal
    /// string alignment: insert, delete, substitute, swap two neighbours) of at most 1
    /// for names of 4–8 characters, 2 for longer ones. For a path that must exist.
    AnyTypo,
    /// Case, normalization, whitespace at the end, and one inserted, deleted or swapped
    /// character in a name of 5 characters or more — not a substituted one, so
    /// `g.txt` next to `f.txt` is not a near miss. For a new file, where another name
    /// is often meant.
    NoSubstitution,
}

/// Most directory entries compared; a larger directory is compared by its first ones.
const MAX_ENTRIES: usize = 20_000;

/// The existing path nearest to `rel` (which does not exist, or whose directory does
/// not), if one is close by `closeness`; `None` when none is, or on any I/O error (a
/// suggestion is never worth failing for).
pub fn near_path(fs: &dyn FileSystem, rel: &RelPath, closeness: Closeness) -> Option<NearPath> {
    let parts: Vec<&str> = rel.components().collect();
    for i in 0..parts.len() {
        let prefix = RelPath::from_normalized(&parts[..=i]);
        match fs.entry(&prefix).ok()? {
            EntryKind::Dir if i + 1 < parts.len() => continue,
            EntryKind::Absent => {}
            // It exists (as a file, or the final name as anything): nothing to suggest.
            _ => return None,
        }
        let dir = RelPath::from_normalized(&parts[..i]);
        let names = fs.list_dir(&dir).ok()?;
        let (name, differs) = nearest(parts[i], names.iter().take(MAX_ENTRIES), closeness)?;
        let mut existing: Vec<&str> = parts[..i].to_vec();
        existing.push(&name);
        existing.extend_from_slice(&parts[i + 1..]);
        return Some(NearPath {
            existing: existing.join("/"),
            differs,
        });
    }
    None
}

/// The entry of `names` nearest to `want`, with how they differ.
fn nearest<'n>(
    want: &str,
    names: impl Iterator<Item = &'n String>,
    closeness: Closeness,
) -> Option<(String, String)> {
    names
        .filter_map(|have| classify(want, have, closeness).map(|(rank, why)| (rank, have, why)))
        .min_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)))
        .map(|(_, have, why)| (have.clone(), why))
}

/// How close `have` is to `want`: a rank (lower is closer) and the difference in words.
fn classify(want: &str, have: &str, closeness: Closeness) -> Option<(usize, String)> {
    if want == have {
        return None;
    }
    if want.trim_end() == have.trim_end() {
        return Some((0, "only by whitespace at the end".into()));
    }
    let (w, h): (String, String) = (want.nfc().collect(), have.nfc().collect());
    if w == h {
        return Some((1, "only by Unicode normalization (NFC against NFD)".into()));
    }
    if w.to_lowercase() == h.to_lowercase() {
        let how = if want.nfc().eq(want.chars()) && have.nfc().eq(have.chars()) {
            "only by case"
        } else {
            "only by case and Unicode normalization (NFC against NFD)"
        };
        return Some((2, how.into()));
    }
    let len = w.chars().count().max(h.chars().count());
    let (limit, substitute) = match closeness {
        Closeness::AnyTypo if len >= 4 => (if len <= 8 { 1 } else { 2 }, 1),
        Closeness::NoSubstitution if len >= 5 => (1, 2),
        _ => return None,
    };
    let d = distance(&w, &h, substitute);
    (d <= limit).then(|| {
        (
            2 + d,
            format!("by {d} character{}", if d == 1 { "" } else { "s" }),
        )
    })
}

/// Optimal-string-alignment distance between `a` and `b` in characters: insert,
/// delete and swap of two neighbours cost 1, a substitution `substitute`.
fn distance(a: &str, b: &str, substitute: usize) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for j in 0..=b.len() {
        d[0][j] = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = if a[i - 1] == b[j - 1] { 0 } else { substitute };
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_classified_by_their_difference() {
        let c = |w: &str, h: &str| classify(w, h, Closeness::AnyTypo).map(|(_, why)| why);
        assert_eq!(c("lib.rs", "lib.rs"), None);
        assert_eq!(
            c("notes.txt", "notes.txt ").as_deref(),
            Some("only by whitespace at the end")
        );
        assert_eq!(
            c("caf\u{e9}.txt", "cafe\u{301}.txt").as_deref(),
            Some("only by Unicode normalization (NFC against NFD)")
        );
        assert_eq!(c("Lib.rs", "lib.rs").as_deref(), Some("only by case"));
        assert_eq!(
            c("reqeusts.py", "requests.py").as_deref(),
            Some("by 1 character")
        );
        assert_eq!(
            c("sessoins.py", "sessions.py").as_deref(),
            Some("by 1 character")
        );
        assert_eq!(
            c("modles.pyx", "models.py").as_deref(),
            Some("by 2 characters")
        );
        assert_eq!(c("a.rs", "b.rs"), Some("by 1 character".into()));
        assert_eq!(c("abc", "abd"), None);
        assert_eq!(c("main.rs", "lib.rs"), None);
        let n = |w: &str, h: &str| classify(w, h, Closeness::NoSubstitution).map(|(_, why)| why);
        assert_eq!(n("g.txt", "f.txt"), None);
        assert_eq!(n("utils.py", "util.py").as_deref(), Some("by 1 character"));
        assert_eq!(n("README.MD", "README.md").as_deref(), Some("only by case"));
    }

    #[test]
    fn distance_counts_swaps_once() {
        assert_eq!(distance("ab", "ba", 1), 1);
        assert_eq!(distance("kitten", "sitting", 1), 3);
        assert_eq!(distance("f.txt", "g.txt", 2), 2);
        assert_eq!(distance("", "abc", 1), 3);
    }
}
