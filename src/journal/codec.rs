//! The one place records are turned into bytes and back.
//!
//! Every value stored in the journal is `[FORMAT_V1] ++ bincode2(serde value)` with
//! bincode's standard configuration (varint integers, little endian). The leading byte
//! lets a later schema change the encoding of a table without guessing (docs/on-disk-format.md). bincode 2 is used through its serde layer; bincode 3.0 is an empty
//! tombstone release.

use serde::{de::DeserializeOwned, Serialize};

use crate::error::JournalError;

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
