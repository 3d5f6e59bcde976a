//! A file's POSIX access ACL, kept like its `user.*` extended attributes.
//!
//! The kernel shows a file's access ACL as the extended attribute
//! [`ACCESS`] (`system.posix_acl_access`): a little-endian `u32` version (2), then one
//! 8-byte entry per ACL entry (`u16` tag, `u16` permissions `rwx` = `0o7`, `u32`
//! uid or gid). Three of its entries are the file's mode, seen through the ACL: the
//! owner's (`USER_OBJ`), the mask's (`MASK`, or `GROUP_OBJ` when there is no mask) and
//! everyone else's (`OTHER`); a `chmod` rewrites them, and setting the attribute
//! rewrites the mode.
//!
//! So that the mode is recorded once (in `FileMeta::mode`) and a plan that changes the
//! mode does not make the recorded ACL disagree with the file, the value recorded in
//! the journal has the permissions of those three entries set to zero
//! ([`normalize`]); a new file gets them back from the mode it is given
//! ([`for_mode`]), which is what `chmod` would make of them.

/// The extended attribute that holds a file's access ACL.
pub const ACCESS: &str = "system.posix_acl_access";

const VERSION: u32 = 2;
const USER_OBJ: u16 = 0x01;
const GROUP_OBJ: u16 = 0x04;
const MASK: u16 = 0x10;
const OTHER: u16 = 0x20;

/// The entries of an ACL value as (offset of the entry's permissions, tag), or `None`
/// when `value` is not a version-2 ACL of whole 8-byte entries.
fn entries(value: &[u8]) -> Option<Vec<(usize, u16)>> {
    let (head, rest) = value.split_first_chunk::<4>()?;
    if u32::from_le_bytes(*head) != VERSION || rest.len() % 8 != 0 {
        return None;
    }
    Some(
        rest.chunks_exact(8)
            .enumerate()
            .map(|(i, e)| (4 + i * 8 + 2, u16::from_le_bytes([e[0], e[1]])))
            .collect(),
    )
}

/// `value` with each entry that mirrors the mode given the permissions of `mode`
/// (permission bits: owner `0o700` to `USER_OBJ`, group `0o070` to `MASK`, or to
/// `GROUP_OBJ` when there is no mask, others `0o007` to `OTHER`); `mode` 0 gives
/// [`normalize`]'s form. A value that is not a version-2 ACL is returned unchanged.
pub fn for_mode(value: &[u8], mode: u32) -> Vec<u8> {
    let mut out = value.to_vec();
    let Some(entries) = entries(value) else {
        return out;
    };
    let has_mask = entries.iter().any(|&(_, tag)| tag == MASK);
    for (at, tag) in entries {
        let perm = match tag {
            USER_OBJ => (mode >> 6) & 0o7,
            MASK => (mode >> 3) & 0o7,
            GROUP_OBJ if !has_mask => (mode >> 3) & 0o7,
            OTHER => mode & 0o7,
            _ => continue,
        };
        out[at..at + 2].copy_from_slice(&(perm as u16).to_le_bytes());
    }
    out
}

/// The extended attribute that holds a directory's default ACL, which files created in
/// it inherit as their access ACL.
pub const DEFAULT: &str = "system.posix_acl_default";

/// The mode bits a default ACL `value` lets a new file have: its owner's (`USER_OBJ`)
/// permissions as `0o700`, its mask's (or `GROUP_OBJ`'s, without a mask) as `0o070`,
/// its others' (`OTHER`) as `0o007`. open(2) gives a file created where this default
/// ACL applies the mode it is asked for intersected with these, ignoring the umask
/// (acl(5)). `None` when `value` is not a version-2 ACL.
pub fn default_permissions(value: &[u8]) -> Option<u32> {
    let entries = entries(value)?;
    let has_mask = entries.iter().any(|&(_, tag)| tag == MASK);
    let perm = |at: usize| u32::from(u16::from_le_bytes([value[at], value[at + 1]]) & 0o7);
    let mut mode = 0;
    for (at, tag) in entries {
        mode |= match tag {
            USER_OBJ => perm(at) << 6,
            MASK => perm(at) << 3,
            GROUP_OBJ if !has_mask => perm(at) << 3,
            OTHER => perm(at),
            _ => 0,
        };
    }
    Some(mode)
}

/// The recorded form of an ACL value: the permissions of the entries that mirror the
/// mode set to zero ([`for_mode`] with mode 0).
pub fn normalize(value: &[u8]) -> Vec<u8> {
    for_mode(value, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `user::rw-`, `user:1000:r--`, `group::---`, `mask::r--`, `other::---`: what
    /// `setfacl -m u:1000:r` makes of a file of mode 0o600.
    fn acl_600_u1000_r() -> Vec<u8> {
        let mut v = 2u32.to_le_bytes().to_vec();
        for (tag, perm, id) in [
            (USER_OBJ, 6u16, u32::MAX),
            (0x02, 4, 1000),
            (GROUP_OBJ, 0, u32::MAX),
            (MASK, 4, u32::MAX),
            (OTHER, 0, u32::MAX),
        ] {
            v.extend(tag.to_le_bytes());
            v.extend(perm.to_le_bytes());
            v.extend(id.to_le_bytes());
        }
        v
    }

    #[test]
    fn normalize_zeroes_the_entries_that_mirror_the_mode_and_for_mode_restores_them() {
        let acl = acl_600_u1000_r();
        let norm = normalize(&acl);
        // Permissions are the u16 at byte 2 of each 8-byte entry after the 4-byte header.
        let perms = |v: &[u8]| -> Vec<u16> {
            v[4..]
                .chunks_exact(8)
                .map(|e| u16::from_le_bytes([e[2], e[3]]))
                .collect()
        };
        assert_eq!(perms(&norm), vec![0, 4, 0, 0, 0]);
        assert_eq!(for_mode(&norm, 0o640), acl);
        // chmod 0o750: owner rwx, mask r-x, other ---; the named user and group keep theirs.
        assert_eq!(perms(&for_mode(&norm, 0o750)), vec![7, 4, 0, 5, 0]);
        assert_eq!(norm.len(), acl.len());
    }

    #[test]
    fn without_a_mask_the_group_entry_mirrors_the_mode() {
        let mut v = 2u32.to_le_bytes().to_vec();
        for (tag, perm) in [(USER_OBJ, 6u16), (GROUP_OBJ, 4), (OTHER, 4)] {
            v.extend(tag.to_le_bytes());
            v.extend(perm.to_le_bytes());
            v.extend(u32::MAX.to_le_bytes());
        }
        assert_eq!(for_mode(&normalize(&v), 0o644), v);
    }

    #[test]
    fn a_value_that_is_not_an_acl_is_kept_as_it_is() {
        for v in [
            &b""[..],
            &b"\x02\x00\x00"[..],
            &b"\x01\x00\x00\x00\x01\x00\x06\x00\xff\xff\xff\xff"[..],
            &b"\x02\x00\x00\x00\x01\x00\x06"[..],
        ] {
            assert_eq!(normalize(v), v.to_vec());
        }
    }
}
