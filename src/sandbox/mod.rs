//! Commands as transactions (feature `sandbox`, docs/commands.md): run a shell command
//! on a copy-on-write view of the workspace and record what it wrote as a revision;
//! run a check command on a candidate and record its outcome in the validation.
//!
//! The command runs through `sh -c` with the caller's environment and working
//! directory, in a private mount namespace where the workspace root is an overlayfs
//! mounted at the root's own absolute path: lower layer = the real root, upper and
//! work directories in the state directory ([`ns`], [`layers`]). The real tree is not
//! written. Afterwards the upper directory is read ([`capture`]), the scope rules drop
//! what a transaction never holds ([`scope`]), and what is left becomes a plan of
//! `write_file` / `delete_file` edits against the base (the disk, or the candidate a
//! revision is built on) recorded with the command's origin
//! ([`crate::CommandOrigin`]).
//!
//! Writes outside the root are neither captured nor prevented: only the root is an
//! overlay. Linux only; where the namespace or the overlay cannot be set up, every call
//! is [`crate::SandboxError::Unavailable`] and runs nothing.
//!
//! Nothing below this module refers to it (it sits above the revision builder and the
//! verbs): the CLI and the MCP server call it.

mod capture;
mod check;
mod config;
pub mod layers;
mod ns;
mod run;
mod scope;

pub use check::CheckOptions;
pub use config::JournalConfig;
pub use layers::sweep;
pub use ns::{Passthrough, TAIL_BYTES};
pub use run::{RunOptions, EMPTY_COMMAND};
pub use scope::VCS_DIRS;

/// How long a command or a check may run when no timeout is given: 10 minutes. A
/// command still running then is killed with its process group and nothing is
/// recorded ([`crate::SandboxError::TimedOut`]).
pub const DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);
