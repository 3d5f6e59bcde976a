//! What Ultra Edit knows of a file at one moment: its state (absent, or bytes by
//! blake3, size and metadata), the metadata a commit keeps (mode, owner, extended
//! attributes) and the hash type that names bytes. These are the filesystem's words;
//! the journal stores them ([`crate::journal::records`] re-exports them) and encodes an
//! [`Xattrs`] set as a blob with its codec (`journal/codec.rs`).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A blake3 hash of a blob's bytes: the blob's key in the journal.
///
/// Serialized as 64 lowercase hex characters in human-readable formats (JSON) and as 32
/// raw bytes in the journal.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BlobHash(pub [u8; 32]);

impl BlobHash {
    /// blake3 of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        BlobHash(*blake3::hash(bytes).as_bytes())
    }

    /// 64 lowercase hex characters.
    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }

    /// Parse 64 hex characters.
    pub fn from_hex(s: &str) -> Option<Self> {
        if s.len() != 64 || !s.is_ascii() {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
        }
        Some(BlobHash(out))
    }

    /// First 12 hex characters, for human output.
    pub fn short(&self) -> String {
        hex(&self.0[..6])
    }
}

/// Lowercase hex of `bytes`, two characters per byte. (A table lookup: formatting each
/// byte with `format!` cost ~300 instructions and an allocation per byte, 5 % of a
/// 10-file CLI commit's instructions in its receipt alone.)
fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(2 * bytes.len());
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    s
}

impl fmt::Debug for BlobHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BlobHash({})", self.to_hex())
    }
}

impl fmt::Display for BlobHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl Serialize for BlobHash {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            s.serialize_str(&self.to_hex())
        } else {
            self.0.serialize(s)
        }
    }
}

impl<'de> Deserialize<'de> for BlobHash {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        if d.is_human_readable() {
            let s = String::deserialize(d)?;
            BlobHash::from_hex(&s).ok_or_else(|| serde::de::Error::custom("expected 64 hex chars"))
        } else {
            Ok(BlobHash(<[u8; 32]>::deserialize(d)?))
        }
    }
}

/// The state of one path at one moment: a source snapshot, a candidate, or a batch's
/// pre- or post-image (docs/design.md, "Words").
///
/// Two states are the same file state exactly when they are `==`: absent both, or
/// files with the same blake3 (so the same bytes and size) and the same metadata.
/// Stored and printed (`--json`) as `{exists, hash, size, mode}` (`hash` null, `size`
/// and `mode` 0 when absent), the schema-v1 shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "FileStateRepr", into = "FileStateRepr")]
pub enum FileState {
    /// No regular file at the path.
    Absent,
    /// A regular file.
    File {
        /// blake3 of the bytes; the bytes are a blob of the journal.
        hash: BlobHash,
        /// Size in bytes.
        size: u64,
        /// What a commit keeps besides the bytes.
        meta: FileMeta,
    },
}

/// The metadata of a file that Ultra Edit records, compares (a change is a change of
/// state) and restores (docs/on-disk-format.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileMeta {
    /// Unix permission bits (`st_mode & 0o7777`).
    pub mode: u32,
    /// Owner and group. `None`: not recorded — a file the batch creates gets whatever
    /// owner the process gives it, and records of schema ≤ 3 did not keep it; a
    /// comparison then ignores the owner ([`FileState::matches`]).
    pub owner: Option<Owner>,
    /// The blob of the file's `user.*` extended attributes and access ACL ([`Xattrs`], encoded; the
    /// empty set too). `None`: not recorded (a file the batch creates, records of
    /// schema ≤ 3); a comparison then ignores them.
    pub xattrs: Option<BlobHash>,
}

/// A file's `user.*` extended attributes and its POSIX access ACL
/// (`system.posix_acl_access`, in the form of [`crate::fs::acl::normalize`]), sorted by
/// name: what a commit keeps besides the bytes, mode and owner (`security.*` and
/// `trusted.*` are not kept; see docs/on-disk-format.md). Stored as a blob, named by
/// [`FileMeta::xattrs`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Xattrs(pub Vec<(String, Vec<u8>)>);

/// A file's owner and group (`st_uid`, `st_gid`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    /// User id.
    pub uid: u32,
    /// Group id.
    pub gid: u32,
}

/// The mode of a file a plan creates without giving one.
pub const DEFAULT_NEW_FILE_MODE: u32 = 0o644;

impl FileState {
    /// The state of an absent path.
    pub const ABSENT: FileState = FileState::Absent;

    /// The state of a file with `bytes` and permission bits `mode`, owner not recorded.
    pub fn present(bytes: &[u8], mode: u32) -> Self {
        FileState::with_meta(
            bytes,
            FileMeta {
                mode,
                owner: None,
                xattrs: None,
            },
        )
    }

    /// The state of a file with `bytes` and `meta`.
    pub fn with_meta(bytes: &[u8], meta: FileMeta) -> Self {
        FileState::File {
            hash: BlobHash::of(bytes),
            size: bytes.len() as u64,
            meta,
        }
    }

    /// Whether `found` (read from the disk) is this state: the same existence, bytes and
    /// mode, and — where this state recorded one — the same owner. The gate, the
    /// install's last check and recovery decide with it; exact record equality is `==`.
    pub fn matches(&self, found: &FileState) -> bool {
        match (self, found) {
            (FileState::Absent, FileState::Absent) => true,
            (
                FileState::File { hash, meta, .. },
                FileState::File {
                    hash: h2, meta: m2, ..
                },
            ) => {
                hash == h2
                    && meta.mode == m2.mode
                    && meta.owner.is_none_or(|o| m2.owner == Some(o))
                    && meta.xattrs.is_none_or(|x| m2.xattrs == Some(x))
            }
            _ => false,
        }
    }

    /// The recorded owner, if any.
    pub fn owner(&self) -> Option<Owner> {
        self.meta().and_then(|m| m.owner)
    }

    /// The blob of the recorded extended attributes, if recorded.
    pub fn xattrs(&self) -> Option<BlobHash> {
        self.meta().and_then(|m| m.xattrs)
    }

    /// Whether a regular file exists at the path.
    pub fn exists(&self) -> bool {
        matches!(self, FileState::File { .. })
    }

    /// blake3 of the bytes, `None` when absent.
    pub fn hash(&self) -> Option<BlobHash> {
        match self {
            FileState::File { hash, .. } => Some(*hash),
            FileState::Absent => None,
        }
    }

    /// Size in bytes (0 when absent).
    pub fn size(&self) -> u64 {
        match self {
            FileState::File { size, .. } => *size,
            FileState::Absent => 0,
        }
    }

    /// The recorded metadata, `None` when absent.
    pub fn meta(&self) -> Option<FileMeta> {
        match self {
            FileState::File { meta, .. } => Some(*meta),
            FileState::Absent => None,
        }
    }

    /// Permission bits, `None` when absent.
    pub fn mode(&self) -> Option<u32> {
        self.meta().map(|m| m.mode)
    }
}

/// The stored and printed shape of a [`FileState`].
#[derive(Clone, Copy, Serialize, Deserialize)]
struct FileStateRepr {
    exists: bool,
    hash: Option<BlobHash>,
    size: u64,
    mode: u32,
    owner: Option<Owner>,
    xattrs: Option<BlobHash>,
}

impl From<FileStateRepr> for FileState {
    fn from(r: FileStateRepr) -> Self {
        match (r.exists, r.hash) {
            (true, Some(hash)) => FileState::File {
                hash,
                size: r.size,
                meta: FileMeta {
                    mode: r.mode,
                    owner: r.owner,
                    xattrs: r.xattrs,
                },
            },
            _ => FileState::Absent,
        }
    }
}

impl From<FileState> for FileStateRepr {
    fn from(s: FileState) -> Self {
        FileStateRepr {
            exists: s.exists(),
            hash: s.hash(),
            size: s.size(),
            mode: s.mode().unwrap_or(0),
            owner: s.owner(),
            xattrs: s.xattrs(),
        }
    }
}

/// The stored shape of a [`FileState`] in schema ≤ 3 (no owner), for the migration.
#[derive(Clone, Copy, Serialize, Deserialize)]
pub(crate) struct FileStateV3 {
    exists: bool,
    hash: Option<BlobHash>,
    size: u64,
    mode: u32,
}

impl From<FileStateV3> for FileState {
    fn from(r: FileStateV3) -> Self {
        FileStateRepr {
            exists: r.exists,
            hash: r.hash,
            size: r.size,
            mode: r.mode,
            owner: None,
            xattrs: None,
        }
        .into()
    }
}

#[cfg(test)]
mod hex_tests {
    use super::*;

    #[test]
    fn a_hash_prints_as_lowercase_hex_and_parses_back() {
        let mut bytes = [0u8; 32];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(0x1f) ^ 0xa5;
        }
        let h = BlobHash(bytes);
        let expected: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(h.to_hex(), expected);
        assert_eq!(
            h.to_hex(),
            "a5ba9bf8d93e1f7c5db293f0d136177455aa8be8c92e0f6c4da283e0c1260764"
        );
        assert_eq!(h.short(), "a5ba9bf8d93e");
        assert_eq!(h.to_string(), h.to_hex());
        assert_eq!(BlobHash::from_hex(&h.to_hex()), Some(h));
        // blake3 of the empty input, as its reference vectors print it
        assert_eq!(
            BlobHash::of(b"").to_hex(),
            "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
        );
    }
}
