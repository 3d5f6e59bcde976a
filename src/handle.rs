//! Transaction handles: a transaction id that names its journal.
//!
//! A tx number (`7`) is unique only inside one journal: an embedder with one journal per
//! root (m1nd has several ingest roots) sees `7` in each of them. A [`TxHandle`] adds
//! the [`JournalId`] of the journal that made it, and round-trips as a string
//! (`"3f9a2c1b7d4e8a60-7"`): every verb takes one (through [`TxRef`]) and refuses a
//! handle of another journal with [`crate::Error::ForeignHandle`], before reading or
//! writing anything.
//!
//! The id is derived, not stored: `blake3("ultra-edit journal id" ‖ nonce ‖ root)`, cut
//! to 64 bits, where the nonce is 16 random bytes drawn when the journal was created
//! (schema v5, `migrations/v0005_journal_id.rs`) and `root` is the canonical workspace
//! root it is opened for. So a backup of `.ultra-edit/` restored in place has the same
//! id (same nonce, same root) and its handles keep working, while a journal copied under
//! a different root (`cp -a repo repo2`) gets another id: it is another history from
//! then on, and the handles of the original are refused there (docs/embedding.md,
//! "Handles").

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The id of a journal at its root: 64 bits, printed as 16 lowercase hex digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JournalId(pub u64);

impl JournalId {
    /// The id of the journal with `nonce` opened for the canonical root `root`:
    /// the first 8 bytes (big-endian) of `blake3("ultra-edit journal id\0" ‖ len(nonce)
    /// as u64 little-endian ‖ nonce ‖ the bytes of root)`. The rule is fixed: ids
    /// (and so handles) stay the same across versions and Rust releases. The nonce is
    /// the journal's own (16 random bytes drawn when it was created); a host that
    /// routes handles without opening journals keeps the id each journal reported
    /// ([`crate::Journal::id`]), as [`crate::Registry`] does in its index.
    pub fn derive(nonce: &[u8], root: &std::path::Path) -> JournalId {
        use std::os::unix::ffi::OsStrExt;
        let mut h = blake3::Hasher::new();
        h.update(b"ultra-edit journal id\0");
        h.update(&(nonce.len() as u64).to_le_bytes());
        h.update(nonce);
        h.update(root.as_os_str().as_bytes());
        let bytes = h.finalize();
        let mut first = [0u8; 8];
        first.copy_from_slice(&bytes.as_bytes()[..8]);
        JournalId(u64::from_be_bytes(first))
    }
}

impl fmt::Display for JournalId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl FromStr for JournalId {
    type Err = HandleParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.len() != 16 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(HandleParseError::handle_only(s));
        }
        u64::from_str_radix(s, 16)
            .map(JournalId)
            .map_err(|_| HandleParseError::handle_only(s))
    }
}

impl Serialize for JournalId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for JournalId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A transaction of one journal: `"<journal id>-<tx>"`, e.g. `"3f9a2c1b7d4e8a60-7"`.
/// Serialized as that string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TxHandle {
    /// The journal that made the transaction.
    pub journal: JournalId,
    /// The transaction's number in that journal (1-based, increasing).
    pub tx: u64,
}

impl fmt::Display for TxHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.journal, self.tx)
    }
}

/// A string that is not a handle (`"3f9a2c1b7d4e8a60-7"`) — nor, where one is
/// accepted ([`TxRef`]), a bare tx number. The message says what the parser that
/// refused it accepts: [`TxHandle::from_str`] (and [`JournalId::from_str`]) only a
/// handle, [`TxRef::from_str`] a handle or a number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not a transaction handle: a handle is 16 hex digits (the journal id), '-' and the tx number in decimal, as in \"3f9a2c1b7d4e8a60-7\"{}", if *number_accepted { "; a bare tx number (\"7\" or \"tx-7\") is accepted too" } else { "" })]
#[non_exhaustive]
pub struct HandleParseError {
    /// The text given.
    pub text: String,
    /// Whether the parser also accepted a bare tx number ([`TxRef::from_str`]).
    pub number_accepted: bool,
}

impl HandleParseError {
    fn handle_only(text: &str) -> HandleParseError {
        HandleParseError {
            text: text.into(),
            number_accepted: false,
        }
    }
}

impl FromStr for TxHandle {
    type Err = HandleParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || HandleParseError::handle_only(s);
        let (id, tx) = s.trim().split_once('-').ok_or_else(err)?;
        let journal = id.parse().map_err(|_| err())?;
        if tx.is_empty() || !tx.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err());
        }
        let tx = tx.parse().map_err(|_| err())?;
        Ok(TxHandle { journal, tx })
    }
}

impl Serialize for TxHandle {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for TxHandle {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// What a verb accepts as a transaction: a [`TxHandle`] (checked against the journal),
/// or a bare tx number of the journal at hand (as the CLI's `commit 7` means). `u64`,
/// `TxHandle` and `&TxHandle` convert into it, so `journal.commit(preview.handle, …)`
/// and `journal.commit(7, …)` both work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxRef {
    /// A tx number of the journal the verb runs on.
    Number(u64),
    /// A handle, refused unless it names the journal the verb runs on.
    Handle(TxHandle),
}

impl From<u64> for TxRef {
    fn from(tx: u64) -> Self {
        TxRef::Number(tx)
    }
}

impl From<TxHandle> for TxRef {
    fn from(h: TxHandle) -> Self {
        TxRef::Handle(h)
    }
}

impl From<&TxHandle> for TxRef {
    fn from(h: &TxHandle) -> Self {
        TxRef::Handle(*h)
    }
}

impl fmt::Display for TxRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TxRef::Number(n) => write!(f, "{n}"),
            TxRef::Handle(h) => write!(f, "{h}"),
        }
    }
}

impl FromStr for TxRef {
    type Err = HandleParseError;
    /// A handle, or a bare number (`7`, or `tx-7` as older output printed it).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        let bare = t.strip_prefix("tx-").unwrap_or(t);
        if !bare.is_empty() && bare.bytes().all(|b| b.is_ascii_digit()) {
            return bare
                .parse()
                .map(TxRef::Number)
                .map_err(|_| HandleParseError {
                    text: s.into(),
                    number_accepted: true,
                });
        }
        t.parse().map(TxRef::Handle).map_err(|_| HandleParseError {
            text: s.into(),
            number_accepted: true,
        })
    }
}

/// 16 random bytes from the kernel (`getrandom(2)`); should that fail, a blake3 of the
/// time, the pid and a stack address — unique enough for a journal's nonce, which must
/// only differ between journals, not be secret.
pub(crate) fn random_nonce() -> [u8; 16] {
    let mut buf = [0u8; 16];
    if matches!(rustix::rand::getrandom(&mut buf, rustix::rand::GetRandomFlags::empty()), Ok(n) if n == buf.len())
    {
        return buf;
    }
    let mut h = blake3::Hasher::new();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    h.update(&now.to_le_bytes());
    h.update(&std::process::id().to_le_bytes());
    h.update(&(&buf as *const _ as usize).to_le_bytes());
    buf.copy_from_slice(&h.finalize().as_bytes()[..16]);
    buf
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handle_round_trips_as_a_string() {
        let h = TxHandle {
            journal: JournalId(0x3f9a_2c1b_7d4e_8a60),
            tx: 7,
        };
        assert_eq!(h.to_string(), "3f9a2c1b7d4e8a60-7");
        assert_eq!("3f9a2c1b7d4e8a60-7".parse::<TxHandle>(), Ok(h));
        assert_eq!(serde_json::to_string(&h).unwrap(), "\"3f9a2c1b7d4e8a60-7\"");
        assert_eq!(
            serde_json::from_str::<TxHandle>("\"3f9a2c1b7d4e8a60-7\"").unwrap(),
            h
        );
        assert_eq!("7".parse::<TxRef>(), Ok(TxRef::Number(7)));
        assert_eq!("tx-7".parse::<TxRef>(), Ok(TxRef::Number(7)));
        assert_eq!("3f9a2c1b7d4e8a60-7".parse::<TxRef>(), Ok(TxRef::Handle(h)));
        for bad in [
            "",
            "x",
            "3f9a2c1b7d4e8a6-7",
            "3f9a2c1b7d4e8a60-",
            "3f9a2c1b7d4e8a60-+7",
            "3f9a2c1b7d4e8a60-7-1",
        ] {
            assert!(bad.parse::<TxRef>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_parse_error_says_what_the_parser_accepts() {
        let handle_only = "7".parse::<TxHandle>().unwrap_err();
        assert!(!handle_only.number_accepted);
        assert_eq!(
            handle_only.to_string(),
            "\"7\" is not a transaction handle: a handle is 16 hex digits (the journal id), '-' and the tx number in decimal, as in \"3f9a2c1b7d4e8a60-7\""
        );
        let either = "x".parse::<TxRef>().unwrap_err();
        assert!(either.number_accepted);
        assert_eq!(
            either.to_string(),
            "\"x\" is not a transaction handle: a handle is 16 hex digits (the journal id), '-' and the tx number in decimal, as in \"3f9a2c1b7d4e8a60-7\"; a bare tx number (\"7\" or \"tx-7\") is accepted too"
        );
        assert!(
            "99999999999999999999999"
                .parse::<TxRef>()
                .unwrap_err()
                .number_accepted
        );
    }

    #[test]
    fn the_id_depends_on_the_nonce_and_on_the_root() {
        let a = JournalId::derive(&[1; 16], std::path::Path::new("/srv/a"));
        assert_eq!(
            a,
            JournalId::derive(&[1; 16], std::path::Path::new("/srv/a"))
        );
        assert_ne!(
            a,
            JournalId::derive(&[2; 16], std::path::Path::new("/srv/a"))
        );
        assert_ne!(
            a,
            JournalId::derive(&[1; 16], std::path::Path::new("/srv/b"))
        );
        assert_ne!(random_nonce(), random_nonce());
    }
}
