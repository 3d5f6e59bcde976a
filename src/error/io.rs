//! [`IoError`]: an I/O error with the operation and path it happened on.

use std::path::PathBuf;

use super::Result;

/// An I/O error with the path it happened on (never a bare "No such file or directory").
#[derive(Debug, thiserror::Error)]
#[error("{op} {path}: {source}")]
pub struct IoError {
    /// What was being done: "read", "rename", "fsync dir", …
    pub op: &'static str,
    /// The path the operation was applied to.
    pub path: PathBuf,
    /// The underlying OS error.
    #[source]
    pub source: std::io::Error,
}

impl IoError {
    /// The OS error number (`errno`), if any.
    pub fn raw_os_error(&self) -> Option<i32> {
        self.source.raw_os_error()
    }
}

/// Attach an operation name and a path to an [`std::io::Error`].
pub(crate) trait IoContext<T> {
    fn ctx(self, op: &'static str, path: impl Into<PathBuf>) -> Result<T, IoError>;
    /// [`IoContext::ctx`] with the path built only on an error (the commit path's
    /// per-file calls: an absolute path is an allocation or more).
    fn ctx_at(self, op: &'static str, path: impl FnOnce() -> PathBuf) -> Result<T, IoError>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn ctx(self, op: &'static str, path: impl Into<PathBuf>) -> Result<T, IoError> {
        self.map_err(|source| IoError {
            op,
            path: path.into(),
            source,
        })
    }
    fn ctx_at(self, op: &'static str, path: impl FnOnce() -> PathBuf) -> Result<T, IoError> {
        self.map_err(|source| IoError {
            op,
            path: path(),
            source,
        })
    }
}
