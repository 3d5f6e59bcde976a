//! Path safety (docs/design.md, "Path safety").
//!
//! A plan's path is first normalized lexically ([`normalize`]): relative to the root,
//! `/`-separated, no `.`, no `..` that leaves the root, not under a `.git/`, `.jj/`,
//! `.hg/`, `.svn/` or `.ultra-edit/` directory, no `.ue-*.tmp` name, no NUL or other
//! control character. It is
//! then checked against the disk ([`check_on_disk`]): no parent may be a symlink, the
//! file itself may not be a symlink, a directory or a file with more than one hard
//! link. The disk check runs at preview and again under the commit lock (the gate).

use std::path::{Component, Path, PathBuf};

use crate::error::{Error, IoContext, PathError, Result};
use crate::fs::{EntryKind, FileSystem, RelPath};

/// Why a name with a character of [`hidden_in_a_listing`] is refused.
const CONTROL: &str = "contains a control character (newline, carriage return, escape, a Unicode line separator, bidirectional override or invisible character…), which a diff could not show safely";

/// A character a diff, a listing or a terminal would not show as itself: a control
/// character (Unicode category Cc: C0, DEL, C1), U+2028/U+2029 (line and paragraph
/// separators), a bidirectional formatting character (U+061C, U+200E, U+200F,
/// U+202A–U+202E, U+2066–U+2069; Unicode Standard Annex #9), or an invisible one that
/// makes a name print as another (U+00AD soft hyphen, U+180E, U+200B zero-width space,
/// U+2060–U+2064, U+FEFF, U+FFF9–U+FFFB, the tag characters U+E0000–U+E007F, and the
/// Hangul fillers U+115F, U+1160, U+3164, U+FFA0). The zero-width joiner and
/// non-joiner (U+200C, U+200D) stay allowed: scripts such as Persian and the Indic ones
/// spell words with them. Paths with one are refused; the CLI escapes them in the free
/// text it prints (a plan's `agent` and `description`).
pub fn hidden_in_a_listing(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}'
                | '\u{2029}'
                | '\u{061C}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
                | '\u{00AD}'
                | '\u{180E}'
                | '\u{200B}'
                | '\u{2060}'..='\u{2064}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{E0000}'..='\u{E007F}'
                | '\u{115F}'
                | '\u{1160}'
                | '\u{3164}'
                | '\u{FFA0}'
        )
}

/// Longest accepted relative path, in bytes (Linux `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;

/// Normalize `raw` to a root-relative, `/`-separated path.
///
/// An absolute `raw` is accepted only when it lies, lexically, under one of `roots`:
/// the canonical root, and the root as the user gave it (a symlinked alias of it,
/// absolute, without `.` or `..`; see [`crate::Journal::open`]). Either names the same
/// directory, so the root-relative path is the same.
///
/// A path ending in `/`, `/.` or `/..` names a directory (POSIX), never a file:
/// refused. Names are bytes, as on Linux: no Unicode normalization, so `café` in NFC
/// and in NFD are two different files (docs/design.md, "Path safety").
///
/// Errors: [`PathError::Invalid`], [`PathError::OutsideRoot`], [`PathError::Reserved`],
/// [`PathError::NamesDirectory`], [`PathError::TempName`].
pub fn normalize(roots: &[&Path], raw: &str) -> Result<RelPath, PathError> {
    let invalid = |why| PathError::Invalid {
        path: raw.to_string(),
        why,
    };
    if raw.is_empty() {
        return Err(invalid("empty path"));
    }
    if raw.contains('\0') {
        return Err(invalid("contains a NUL byte"));
    }
    // A newline, carriage return or escape in a name would be printed as is into the
    // diff a person reviews before committing (a forged `+++` line, hidden text):
    // refused, where git instead quotes such names (core.quotePath). So are the C1
    // controls (U+0085 is a line break to many readers, U+009B an escape to a
    // terminal), Unicode's line and paragraph separators, and the bidirectional
    // controls that reorder what a reader sees (Trojan Source, CVE-2021-42574). A tab
    // cannot start a line or hide one, and real trees have such names: accepted.
    if raw.chars().any(|c| c != '\t' && hidden_in_a_listing(c)) {
        return Err(invalid(CONTROL));
    }
    if raw.len() > MAX_PATH_BYTES {
        return Err(invalid("longer than 4096 bytes"));
    }
    if let Some(ending) = directory_ending(raw) {
        return Err(PathError::NamesDirectory {
            path: raw.to_string(),
            ending,
        });
    }
    let p = Path::new(raw);
    let rel: PathBuf = if p.is_absolute() {
        let lexical = lexical_absolute(p);
        roots
            .iter()
            .find_map(|root| lexical.strip_prefix(root).ok())
            .ok_or_else(|| PathError::OutsideRoot {
                path: raw.to_string(),
            })?
            .to_path_buf()
    } else {
        p.to_path_buf()
    };
    let mut parts: Vec<&str> = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(s) => parts.push(s.to_str().ok_or_else(|| invalid("not UTF-8"))?),
            Component::CurDir => {}
            Component::ParentDir => {
                if parts.pop().is_none() {
                    return Err(PathError::OutsideRoot {
                        path: raw.to_string(),
                    });
                }
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(PathError::OutsideRoot {
                    path: raw.to_string(),
                })
            }
        }
    }
    if parts.is_empty() {
        return Err(invalid("names the root itself, not a file"));
    }
    if parts
        .last()
        .is_some_and(|name| name.starts_with(".ue-") && name.ends_with(".tmp"))
    {
        return Err(PathError::TempName {
            path: raw.to_string(),
        });
    }
    if parts.iter().any(|s| s.len() > 255) {
        return Err(invalid("has a component longer than 255 bytes"));
    }
    // Anywhere in the path: a version-control store (git's, jj's, Mercurial's,
    // Subversion's; a nested repository's too) or a nested workspace's journal is as
    // off-limits as the root's: their files are another tool's database.
    // Compared without case, as git compares `.git` since CVE-2014-9390: on a
    // case-insensitive filesystem (a mounted macOS or Windows volume, ext4 with
    // casefold) `.GIT/config` is `.git/config`.
    for area in [".git", ".jj", ".hg", ".svn", ".ultra-edit"] {
        if parts.iter().any(|p| p.eq_ignore_ascii_case(area)) {
            return Err(PathError::Reserved {
                path: raw.to_string(),
                area,
            });
        }
    }
    Ok(RelPath::from_normalized(&parts))
}

/// How `raw` ends if it ends the way a directory's path does: `/`, `/.` or `/..`
/// (or is `.` or `..` itself, which the root rules refuse on their own).
fn directory_ending(raw: &str) -> Option<&'static str> {
    let (_, last) = raw.rsplit_once('/')?;
    match last {
        "" => Some("/"),
        "." => Some("/."),
        ".." => Some("/.."),
        _ => None,
    }
}

/// `p` with `.` and `..` resolved lexically (`/ws/../ws/x` → `/ws/x`).
fn lexical_absolute(p: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(s) => out.push(s),
            _ => {}
        }
    }
    out
}

/// Check a normalized path against the disk. `raw` is the path as the user gave it, for
/// messages. Errors: [`PathError::SymlinkInPath`], [`PathError::IsSymlink`],
/// [`PathError::HardLinked`], [`PathError::WrongKind`], or an I/O error from `lstat`.
///
/// `root` is the filesystem's root, for error messages only.
pub fn check_on_disk(fs: &dyn FileSystem, root: &Path, rel: &RelPath, raw: &str) -> Result<()> {
    checked_entry(fs, root, rel, raw).map(|_| ())
}

/// [`check_on_disk`], returning what is at `rel` once it passed: [`EntryKind::Absent`]
/// (it, or a directory above it, does not exist) or [`EntryKind::File`] as `lstat` gave
/// it, so a caller that reads the file does not `lstat` it a second time.
pub(crate) fn checked_entry(
    fs: &dyn FileSystem,
    root: &Path,
    rel: &RelPath,
    raw: &str,
) -> Result<EntryKind> {
    for dir in rel.ancestors() {
        let kind = fs.entry(&dir).ctx_at("lstat", || dir.under(root))?;
        match kind {
            EntryKind::Dir => {
                if is_state_dir(fs, root, &dir)? {
                    return Err(PathError::StateDirectory {
                        path: raw.into(),
                        dir: dir.to_string(),
                    }
                    .into());
                }
            }
            EntryKind::Absent => return Ok(EntryKind::Absent),
            EntryKind::Symlink => {
                return Err(PathError::SymlinkInPath {
                    path: raw.into(),
                    link: dir.to_string(),
                }
                .into())
            }
            EntryKind::File { .. } => {
                return Err(wrong_kind(
                    raw,
                    &format!("{dir} is a file, not a directory"),
                ))
            }
            EntryKind::Other => {
                return Err(wrong_kind(raw, &format!("{dir} is not a regular file")))
            }
        }
    }
    let kind = fs.entry(rel).ctx_at("lstat", || rel.under(root))?;
    check_final(kind, raw)
}

/// Whether the directory `dir` is the state directory of an ultra-edit journal: it
/// holds a regular file `journal.redb` and a regular file `commit.lock` (docs/design.md,
/// "Path safety"). One `lstat` for a directory without a journal, two for one with it.
fn is_state_dir(fs: &dyn FileSystem, root: &Path, dir: &RelPath) -> Result<bool> {
    for name in ["journal.redb", "commit.lock"] {
        let p = dir.join(name);
        match fs.entry(&p).ctx_at("lstat", || p.under(root))? {
            EntryKind::File { .. } => {}
            _ => return Ok(false),
        }
    }
    Ok(true)
}

/// The checks of [`check_on_disk`] on what is at the path itself, `kind` (from its
/// `lstat`, or the `fstat` of the descriptor a read opened): absent or a regular file
/// with one link and no set-id bit pass, and are returned.
pub(crate) fn check_final(kind: EntryKind, raw: &str) -> Result<EntryKind> {
    match kind {
        EntryKind::Absent => Ok(kind),
        EntryKind::Symlink => Err(PathError::IsSymlink { path: raw.into() }.into()),
        EntryKind::File { mode, .. } if mode & 0o7000 != 0 => Err(PathError::SetId {
            path: raw.into(),
            mode,
        }
        .into()),
        EntryKind::File { links, .. } if links > 1 => Err(PathError::HardLinked {
            path: raw.into(),
            links,
        }
        .into()),
        EntryKind::File { .. } => Ok(kind),
        EntryKind::Dir => Err(wrong_kind(raw, "is a directory, not a file")),
        EntryKind::Other => Err(wrong_kind(raw, &format!("{raw} is not a regular file"))),
    }
}

fn wrong_kind(raw: &str, why: &str) -> Error {
    PathError::WrongKind {
        path: raw.into(),
        why: why.into(),
    }
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(raw: &str) -> Result<String, PathError> {
        normalize(&[Path::new("/ws")], raw).map(String::from)
    }

    #[test]
    fn lexical_rules() {
        assert_eq!(n("a/./b//c.rs").unwrap(), "a/b/c.rs");
        assert_eq!(n("a/x/../b").unwrap(), "a/b");
        assert_eq!(n("/ws/src/lib.rs").unwrap(), "src/lib.rs");
        assert!(matches!(n("../x"), Err(PathError::OutsideRoot { .. })));
        assert!(matches!(n("a/../../x"), Err(PathError::OutsideRoot { .. })));
        assert!(matches!(
            n("/etc/passwd"),
            Err(PathError::OutsideRoot { .. })
        ));
        assert!(matches!(
            n(".git/config"),
            Err(PathError::Reserved { area: ".git", .. })
        ));
        assert!(matches!(
            n("./.ultra-edit/journal.redb"),
            Err(PathError::Reserved {
                area: ".ultra-edit",
                ..
            })
        ));
        assert!(matches!(n("a\0b"), Err(PathError::Invalid { .. })));
        assert_eq!(n("x\t.rs").as_deref(), Ok("x\t.rs"));
        for name in [
            "a\nb.txt",
            "cr\r.rs",
            "\u{1b}[8mhidden",
            "del\u{7f}",
            "x\u{85}+++ b/other.txt",
            "csi\u{9b}2J",
            "ls\u{2028}ep",
            "evil\u{202e}txt.rs",
            "iso\u{2066}late",
            "setup\u{200b}.py",
            "bom\u{feff}.rs",
            "soft\u{ad}hyphen",
            "tag\u{e0041}.txt",
            "filler\u{3164}.py",
        ] {
            assert_eq!(
                n(name),
                Err(PathError::Invalid {
                    path: name.to_string(),
                    why: CONTROL,
                }),
                "{name:?}"
            );
        }
        // Other non-ASCII names are ordinary names.
        assert_eq!(n("café/naïve.rs").as_deref(), Ok("café/naïve.rs"));
        assert_eq!(n("日本/語.txt").as_deref(), Ok("日本/語.txt"));
        // Persian spells words with the zero-width non-joiner.
        assert_eq!(
            n("می\u{200c}خواهم.txt").as_deref(),
            Ok("می\u{200c}خواهم.txt")
        );
        assert!(matches!(n(""), Err(PathError::Invalid { .. })));
        assert!(matches!(n(".."), Err(PathError::OutsideRoot { .. })));
        assert!(matches!(n("."), Err(PathError::Invalid { .. })));
        assert!(matches!(
            n(&"x".repeat(256)),
            Err(PathError::Invalid { .. })
        ));
        assert!(matches!(
            n("vendor/sub/.git/config"),
            Err(PathError::Reserved { area: ".git", .. })
        ));
        for raw in [
            ".GIT/config",
            "sub/.Git/hooks/pre-commit",
            ".Ultra-Edit/journal.redb",
        ] {
            assert!(
                matches!(n(raw), Err(PathError::Reserved { .. })),
                "{raw}: {:?}",
                n(raw)
            );
        }
        assert_eq!(n("src/.github/ci.yml").as_deref(), Ok("src/.github/ci.yml"));
        // jj's, Mercurial's and Subversion's stores are refused like git's.
        assert!(matches!(
            n(".jj/repo/op_heads/heads/x"),
            Err(PathError::Reserved { area: ".jj", .. })
        ));
        assert!(matches!(
            n("sub/.hg/store/00changelog.i"),
            Err(PathError::Reserved { area: ".hg", .. })
        ));
        assert!(matches!(
            n(".svn/wc.db"),
            Err(PathError::Reserved { area: ".svn", .. })
        ));
        // Only a whole component: a file named like one is an ordinary file.
        assert_eq!(n("docs/.jjconfig").unwrap(), "docs/.jjconfig");
        assert!(matches!(
            n("src/.ultra-edit/journal.redb"),
            Err(PathError::Reserved {
                area: ".ultra-edit",
                ..
            })
        ));
        assert_eq!(n("vendor/.gitignore").unwrap(), "vendor/.gitignore");
        assert!(matches!(
            n("d/.ue-1-0.tmp"),
            Err(PathError::TempName { .. })
        ));
        assert_eq!(n("/ws/../ws/x").unwrap(), "x");
    }

    #[test]
    fn a_path_ending_like_a_directory_is_refused() {
        for (raw, ending) in [
            ("a.txt/", "/"),
            ("src/lib.rs//", "/"),
            ("a.txt/.", "/."),
            ("a/b/..", "/.."),
            ("a/..", "/.."),
            ("/ws/a.txt/", "/"),
        ] {
            assert_eq!(
                n(raw),
                Err(PathError::NamesDirectory {
                    path: raw.into(),
                    ending
                }),
                "{raw}"
            );
        }
    }

    #[test]
    fn an_absolute_path_under_any_of_the_roots_is_inside() {
        let roots = [Path::new("/real/ws"), Path::new("/home/me/ws-alias")];
        let n = |raw| normalize(&roots, raw).map(String::from);
        assert_eq!(n("/real/ws/a/b.txt").unwrap(), "a/b.txt");
        assert_eq!(n("/home/me/ws-alias/a/b.txt").unwrap(), "a/b.txt");
        assert_eq!(n("/home/me/ws-alias/./a/../b.txt").unwrap(), "b.txt");
        assert!(matches!(
            n("/home/me/ws-aliasx/a"),
            Err(PathError::OutsideRoot { .. })
        ));
        assert!(matches!(
            n("/home/me/ws-alias/../ws/a"),
            Err(PathError::OutsideRoot { .. })
        ));
    }
}
