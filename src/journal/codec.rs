//! The one place records are turned into bytes and back.
//!
//! Every value stored in the journal is `[FORMAT_V1] ++ bincode2(serde value)` with
//! bincode's standard configuration (varint integers, little endian). The leading byte
//! lets a later schema change the encoding of a table without guessing (docs/on-disk-format.md). bincode 2 is used through its serde layer; bincode 3.0 is an empty
//! tombstone release.

use serde::{de::DeserializeOwned, Serialize};

use crate::error::JournalError;
use crate::fs::meta::{BlobHash, Xattrs};

/// Most bytes a decoded record may claim (1 GiB): far above any real record, far below
/// what a damaged length prefix could ask for.
const DECODE_LIMIT: usize = 1 << 30;

/// Format byte of every record written by this version.
pub const FORMAT_V1: u8 = 1;

/// Encode `value` as `[FORMAT_V1] ++ bincode`.
pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, JournalError> {
    let mut out = vec![FORMAT_V1];
    let body = bincode::serde::encode_to_vec(value, bincode::config::standard()).map_err(|e| {
        JournalError::Corrupt {
            table: "(encode)",
            message: e.to_string(),
        }
    })?;
    out.extend_from_slice(&body);
    Ok(out)
}

/// Decode a value written by [`encode`]. `table` names the source in errors.
///
/// Errors: [`JournalError::UnknownFormat`] for a format byte other than [`FORMAT_V1`],
/// [`JournalError::Corrupt`] for an empty value, undecodable or trailing bytes.
pub fn decode<T: DeserializeOwned>(table: &'static str, bytes: &[u8]) -> Result<T, JournalError> {
    let Some((&format, body)) = bytes.split_first() else {
        return Err(JournalError::Corrupt {
            table,
            message: "empty record".into(),
        });
    };
    if format != FORMAT_V1 {
        return Err(JournalError::UnknownFormat {
            table,
            byte: format,
        });
    }
    // The limit turns a damaged length prefix into an error before anything is
    // allocated (unbounded, a prefix of 2^40 aborts the process on allocation).
    let config = bincode::config::standard().with_limit::<DECODE_LIMIT>();
    let (value, used) =
        bincode::serde::decode_from_slice(body, config).map_err(|e| JournalError::Corrupt {
            table,
            message: e.to_string(),
        })?;
    if used != body.len() {
        return Err(JournalError::Corrupt {
            table,
            message: format!("{} trailing bytes", body.len() - used),
        });
    }
    Ok(value)
}

/// An [`Xattrs`] set is stored as a blob in this codec's format; the type is the
/// filesystem's ([`crate::fs::meta`]), its encoding is the journal's.
impl Xattrs {
    /// The blob bytes of this set (this codec).
    pub fn encode(&self) -> Vec<u8> {
        crate::journal::codec::encode(self).unwrap_or_default()
    }

    /// The set a blob holds. Errors: [`crate::JournalError::Corrupt`].
    pub fn decode(bytes: &[u8]) -> Result<Xattrs, crate::error::JournalError> {
        crate::journal::codec::decode("blob (xattrs)", bytes)
    }

    /// The hash of the empty set. A state with no extended attributes names it, and
    /// no blob is stored for it (nor required: [`crate::journal::records::BlobRef`]s leave it out).
    pub fn empty_hash() -> BlobHash {
        static EMPTY: std::sync::OnceLock<BlobHash> = std::sync::OnceLock::new();
        *EMPTY.get_or_init(|| BlobHash::of(&Xattrs::default().encode()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_format_byte() {
        let v = (7u64, String::from("a"), vec![1u8, 2]);
        let bytes = encode(&v).unwrap();
        assert_eq!(bytes, vec![1, 7, 1, b'a', 2, 1, 2]);
        let back: (u64, String, Vec<u8>) = decode("t", &bytes).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn unknown_format_and_damage_are_typed() {
        assert!(matches!(
            decode::<u64>("t", &[9, 1]),
            Err(JournalError::UnknownFormat { byte: 9, .. })
        ));
        assert!(matches!(
            decode::<u64>("t", &[]),
            Err(JournalError::Corrupt { .. })
        ));
        assert!(matches!(
            decode::<String>("t", &[1, 200]),
            Err(JournalError::Corrupt { .. })
        ));
        assert!(matches!(
            decode::<u8>("t", &[1, 1, 2]),
            Err(JournalError::Corrupt { .. })
        ));
    }
}

#[cfg(test)]
mod file_state_tests {
    use crate::fs::meta::{BlobHash, FileMeta, FileState, FileStateV3, Owner};

    #[test]
    fn file_state_keeps_its_stored_and_printed_shape() {
        let owner = Owner {
            uid: 1000,
            gid: 100,
        };
        let file = FileState::with_meta(
            b"hi\n",
            FileMeta {
                mode: 0o640,
                owner: Some(owner),
                xattrs: None,
            },
        );
        assert_eq!(
            serde_json::to_value(file).unwrap(),
            serde_json::json!({"exists": true, "hash": BlobHash::of(b"hi\n").to_hex(), "size": 3, "mode": 0o640, "owner": {"uid": 1000, "gid": 100}, "xattrs": null})
        );
        assert_eq!(
            serde_json::to_value(FileState::Absent).unwrap(),
            serde_json::json!({"exists": false, "hash": null, "size": 0, "mode": 0, "owner": null, "xattrs": null})
        );
        for s in [file, FileState::present(b"x", 0o644), FileState::Absent] {
            let bytes = crate::journal::codec::encode(&s).unwrap();
            // The bincode shape: the v1–v3 fields, then owner and xattrs (schema v4).
            let shape = (
                s.exists(),
                s.hash().map(|h| h.0),
                s.size(),
                s.mode().unwrap_or(0),
                s.owner().map(|o| (o.uid, o.gid)),
                s.xattrs().map(|h| h.0),
            );
            assert_eq!(bytes, crate::journal::codec::encode(&shape).unwrap());
            let back: FileState = crate::journal::codec::decode("test", &bytes).unwrap();
            assert_eq!(back, s);
            // A v3 record of it decodes with no owner (the migration's reading).
            let v3 = (
                s.exists(),
                s.hash().map(|h| h.0),
                s.size(),
                s.mode().unwrap_or(0),
            );
            let old: FileStateV3 =
                crate::journal::codec::decode("test", &crate::journal::codec::encode(&v3).unwrap())
                    .unwrap();
            assert_eq!(
                FileState::from(old),
                match s {
                    FileState::File { hash, size, meta } => FileState::File {
                        hash,
                        size,
                        meta: FileMeta {
                            owner: None,
                            ..meta
                        },
                    },
                    FileState::Absent => FileState::Absent,
                }
            );
        }
        // Equality is exact; `matches` ignores an owner not recorded.
        assert_ne!(file, FileState::present(b"hi\n", 0o640));
        assert!(FileState::present(b"hi\n", 0o640).matches(&file));
        assert!(!file.matches(&FileState::present(b"hi\n", 0o640)));
        assert!(!file.matches(&FileState::present(b"hi\n", 0o644)));
        let other = FileState::with_meta(
            b"hi\n",
            FileMeta {
                mode: 0o640,
                owner: Some(Owner { uid: 0, gid: 100 }),
                xattrs: None,
            },
        );
        assert!(!file.matches(&other));
        assert!(file.matches(&file));
    }
}
