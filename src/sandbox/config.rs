//! The journal's default check (docs/commands.md, "The default check"): a check
//! command stored with the journal (table `settings`, key `check`;
//! docs/on-disk-format.md) that the CLI's `preview`, `revise`, `rebase`, `resolve` and
//! `run`, and the MCP server started with `--allow-commands`, run when no check is
//! given. The library runs it only when asked: [`Journal::default_check_options`]
//! makes the [`CheckOptions`] to pass to the `*_checked` verbs.

use serde::Serialize;

use super::CheckOptions;
use crate::error::{Result, SandboxError};
use crate::workspace::Journal;

/// The key of the default check in the journal's `settings` table.
const CHECK_KEY: &str = "check";

/// The journal's settings as `ultra-edit config show` prints them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct JournalConfig {
    /// The default check command (`sh -c CHECK`), `None` when none is set.
    pub check: Option<String>,
}

impl Journal {
    /// The journal's default check command, `None` when none is set (a journal made
    /// before this setting existed has none). Errors: a journal read
    /// ([`crate::Error::Journal`]); a stored value that is not UTF-8 is
    /// [`crate::JournalError::Corrupt`].
    pub fn default_check(&self) -> Result<Option<String>> {
        match self.ws.store.setting(CHECK_KEY)? {
            None => Ok(None),
            Some(bytes) => String::from_utf8(bytes).map(Some).map_err(|_| {
                crate::error::JournalError::Corrupt {
                    table: "settings",
                    message: "the default check (key `check`) is not UTF-8; set it again".into(),
                }
                .into()
            }),
        }
    }

    /// Store `command` as the journal's default check (`None`: remove it), in one
    /// journal write; every process using the journal sees it from its next call.
    /// Nothing is run. Errors: [`SandboxError::EmptyCommand`] for a command of
    /// whitespace only (nothing is stored); [`crate::Error::ReadOnly`] on a journal
    /// opened for reading; those of a journal write.
    pub fn set_default_check(&self, command: Option<&str>) -> Result<()> {
        if let Some(c) = command {
            if c.trim().is_empty() {
                return Err(SandboxError::EmptyCommand {
                    what: "the default check".into(),
                }
                .into());
            }
        }
        self.ws.writable()?;
        self.ws
            .store
            .set_setting(CHECK_KEY, command.map(str::as_bytes))
    }

    /// The journal's settings ([`JournalConfig`]). Errors: as
    /// [`Journal::default_check`].
    pub fn config(&self) -> Result<JournalConfig> {
        Ok(JournalConfig {
            check: self.default_check()?,
        })
    }

    /// [`CheckOptions::new`] of the default check, `None` when none is set. Errors:
    /// as [`Journal::default_check`].
    pub fn default_check_options(&self) -> Result<Option<CheckOptions>> {
        Ok(self.default_check()?.map(CheckOptions::new))
    }
}
