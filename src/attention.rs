//! The batches that need attention, as data (docs/design.md, "Recovery"): what `log`
//! reports beside its transactions, so that a script or an agent reading `log --json`
//! sees them without parsing standard error, and the command still exits 0 (it did
//! what it was asked: list the history).

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::journal::records::BatchState;
use crate::workspace::Journal;

/// One batch in `NeedsAttention`: past or before its commit point, recovery could not
/// settle it because files hold foreign bytes. Until it is settled it owns its
/// `files` ([`crate::Error::AttentionOwnsFiles`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttentionEntry {
    /// The batch id.
    pub batch: u64,
    /// Its transaction.
    pub tx: u64,
    /// Every file of the batch, root-relative, sorted.
    pub files: Vec<String>,
    /// The files that held foreign bytes when recovery last ran, root-relative, sorted:
    /// what keeps it from settling.
    pub foreign: Vec<String>,
    /// `true`: settling it gives its files their new content (it reached its commit
    /// point); `false`: their old content.
    pub rolls_forward: bool,
}

impl Journal {
    /// Every batch that needs attention, by batch id (empty when none). Reads the
    /// journal only; works on a journal opened read-only. Errors: the journal's.
    pub fn needs_attention(&self) -> Result<Vec<AttentionEntry>> {
        crate::workspace::guarded(|| {
            let r = self.ws.store.read()?;
            let mut out = Vec::new();
            for id in r.inflight()? {
                let Some(rec) = r.batch(id)? else {
                    continue;
                };
                if rec.state != BatchState::NeedsAttention {
                    continue;
                }
                let mut files: Vec<String> = rec.files.iter().map(|f| f.path.to_string()).collect();
                files.sort();
                let mut foreign: Vec<String> =
                    rec.foreign.iter().map(|f| f.path.to_string()).collect();
                foreign.sort();
                foreign.dedup();
                out.push(AttentionEntry {
                    batch: rec.batch,
                    tx: rec.tx,
                    files,
                    foreign,
                    rolls_forward: rec.rolls_forward(),
                });
            }
            Ok(out)
        })
    }
}
