//! [`RelPath`]: a path relative to a workspace root, the only kind of path the
//! [`super::FileSystem`] layer takes (as jj's `RepoPathBuf`).

use std::borrow::Borrow;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize};

/// A normalized root-relative path: `/`-separated components, none empty, `.` or `..`;
/// no leading `/`; no NUL. The empty path is the root itself.
///
/// Made only by [`super::path::normalize`] (a plan's path, after the path-safety rules
/// of docs/design.md, "Path safety"), by the engine for names it derives from such a
/// path (parents, temp names), and by decoding a path the journal recorded, which is
/// checked against the same lexical rules (a damaged record does not decode).
/// Serialized as its string, so records keep their stored and printed shape.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct RelPath(String);

impl RelPath {
    /// The root itself (the empty path).
    pub fn root() -> RelPath {
        RelPath(String::new())
    }

    /// `s` if it is lexically a normalized root-relative path, else why not.
    pub fn parse(s: &str) -> Result<RelPath, &'static str> {
        if s.is_empty() {
            return Ok(RelPath::root());
        }
        if s.contains('\0') {
            return Err("contains a NUL byte");
        }
        if s.split('/').any(|c| c.is_empty() || c == "." || c == "..") {
            return Err("is not a normalized root-relative path");
        }
        Ok(RelPath(s.to_string()))
    }

    /// A path whose components the caller has already normalized
    /// ([`super::path::normalize`]).
    pub(crate) fn from_normalized(parts: &[&str]) -> RelPath {
        RelPath(parts.join("/"))
    }

    /// The path as a `/`-separated string (empty for the root).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is the root itself.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// The components, outermost first (none for the root).
    pub fn components(&self) -> impl Iterator<Item = &str> {
        self.0.split('/').filter(|c| !c.is_empty())
    }

    /// The last component (empty for the root).
    pub fn name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or("")
    }

    /// The parent directory (the root for a top-level name, and for the root).
    pub fn parent(&self) -> RelPath {
        match self.0.rsplit_once('/') {
            Some((dir, _)) => RelPath(dir.to_string()),
            None => RelPath::root(),
        }
    }

    /// The directories above this path, outermost first, without the root: for
    /// `a/b/c`, `a` then `a/b`.
    pub fn ancestors(&self) -> impl Iterator<Item = RelPath> + '_ {
        self.0
            .match_indices('/')
            .map(|(i, _)| RelPath(self.0[..i].to_string()))
    }

    /// `name` inside this directory. `name` is one component the engine made (a temp
    /// name); it must not contain `/`.
    pub(crate) fn join(&self, name: &str) -> RelPath {
        debug_assert!(!name.contains('/') && !name.is_empty());
        if self.is_root() {
            RelPath(name.to_string())
        } else {
            RelPath(format!("{}/{name}", self.0))
        }
    }

    /// The absolute path under `root`, for messages and for code outside the
    /// filesystem layer.
    pub fn under(&self, root: &Path) -> PathBuf {
        self.components().fold(root.to_path_buf(), |p, c| p.join(c))
    }
}

impl<'de> Deserialize<'de> for RelPath {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        RelPath::parse(&s)
            .map_err(|why| serde::de::Error::custom(format!("recorded path {s:?} {why}")))
    }
}

impl std::ops::Deref for RelPath {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for RelPath {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for RelPath {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<str> for RelPath {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for RelPath {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for RelPath {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

impl From<RelPath> for String {
    fn from(p: RelPath) -> String {
        p.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parents_ancestors_and_joins() {
        let p = RelPath::parse("a/b/c.txt").unwrap();
        assert_eq!(p.parent(), "a/b");
        assert_eq!(p.name(), "c.txt");
        assert_eq!(p.ancestors().collect::<Vec<_>>(), ["a", "a/b"]);
        assert_eq!(p.components().collect::<Vec<_>>(), ["a", "b", "c.txt"]);
        let top = RelPath::parse("x").unwrap();
        assert!(top.parent().is_root());
        assert_eq!(top.ancestors().count(), 0);
        assert_eq!(RelPath::root().join("t"), "t");
        assert_eq!(p.parent().join("t"), "a/b/t");
        assert_eq!(p.under(Path::new("/ws")), Path::new("/ws/a/b/c.txt"));
        assert_eq!(RelPath::root().under(Path::new("/ws")), Path::new("/ws"));
    }

    #[test]
    fn only_normalized_paths_parse_or_decode() {
        for bad in ["/a", "a//b", "a/./b", "a/../b", "a/", "..", "a\0b"] {
            assert!(RelPath::parse(bad).is_err(), "{bad:?}");
            let json = serde_json::to_string(bad).unwrap();
            assert!(serde_json::from_str::<RelPath>(&json).is_err(), "{bad:?}");
        }
        let ok: RelPath = serde_json::from_str("\"src/lib.rs\"").unwrap();
        assert_eq!(ok, "src/lib.rs");
        assert_eq!(serde_json::to_string(&ok).unwrap(), "\"src/lib.rs\"");
    }
}
