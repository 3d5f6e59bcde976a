//! Opening the files of a state directory (`journal.redb`, `commit.lock`, the journal's
//! backup, `.gitignore`) safely: never through a symbolic link, and, for root, owned as
//! the directory is. Used by the workspace (init, open), the commit lock and the store
//! (docs/threat-model.md, "The state directory").

use std::fs;
use std::path::Path;

use crate::error::IoContext;

/// `O_NOFOLLOW | O_CLOEXEC`: a state file is never opened through a symbolic link.
pub(crate) fn no_follow() -> i32 {
    (rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::CLOEXEC).bits() as i32
}

/// When the process is root, give `file` (at `path`, inside the state directory `dir`)
/// the owner and group of `dir`, if it has another. Root running a command in a
/// user's workspace would otherwise leave root-owned files in the user's
/// `.ultra-edit/` (a re-created `commit.lock`, a rewritten `.gitignore`, a journal
/// backup) that lock the user out of their own journal. Another user's process cannot
/// give a file away and needs not: what it creates in a directory it may write is its
/// own, as the directory is. Errors: the `stat` of `dir` or the `fchown`, as
/// [`crate::error::IoError`].
pub(crate) fn own_like_state_dir(
    dir: &Path,
    file: &fs::File,
    path: &Path,
) -> std::result::Result<(), crate::error::IoError> {
    use std::os::unix::fs::MetadataExt;
    if !rustix::process::geteuid().is_root() {
        return Ok(());
    }
    let want = fs::metadata(dir).ctx("stat", dir)?;
    let have = file.metadata().ctx("stat", path)?;
    if (have.uid(), have.gid()) != (want.uid(), want.gid()) {
        rustix::fs::fchown(
            file,
            Some(rustix::fs::Uid::from_raw(want.uid())),
            Some(rustix::fs::Gid::from_raw(want.gid())),
        )
        .map_err(std::io::Error::from)
        .ctx("chown", path)?;
    }
    Ok(())
}
