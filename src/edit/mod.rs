//! Edit plans → candidate bytes, diffs and validation, all in memory.
//!
//! This module is the pure (no I/O) core of a preview or revision:
//!
//! 1. [`plan`] — the JSON edit plan of the CLI contract ([`Plan::from_json`]),
//!    with the checks that need no file content.
//! 2. [`resolve`] — applies the edits of one file to its base bytes
//!    ([`apply_file_edits`]). Text ops are byte splices computed against the same
//!    base and applied in a deterministic order; overlapping edits are refused;
//!    every byte outside a matched span is kept exactly (CRLF, BOM, invalid
//!    UTF-8, a missing final newline).
//! 3. [`diff`] — the candidate diff ([`candidate_diff`]): git-style unified text
//!    and line counts; only its display may be lossy, never the candidate.
//! 4. [`validate`](mod@validate) — warnings and commit-blocking errors for a revision
//!    ([`validate()`](validate::validate)).
//!
//! Units: offsets and sizes are bytes; line numbers and occurrences are
//! 1-based; plan indices are 0-based positions in the plan's `edits` array.
//! Errors are [`EditError`]; each message says what was wrong and what to do.

mod build;
pub mod diff;
pub mod error;
mod line_myers;
mod lines;
pub mod merge;
mod near_miss;
pub mod plan;
pub mod resolve;
pub(crate) mod spliced;
mod symbol;
mod target;
pub mod validate;

pub use diff::{candidate_diff, is_binary, window_diff, CandidateDiff, DiffWindow};
pub use error::{EditError, NearPath, SymbolCandidate, TargetFailure};
pub(crate) use lines::count_lines;
pub use merge::{merge3, merge3_styled, ConflictRegion, ConflictStyle, Labels, MergeResult};
pub use plan::{Edit, ExpectedBase, Occurrence, Plan, Position};
pub(crate) use resolve::apply_file_edits_spliced;
pub use resolve::{apply_file_edits, wide_encoding, FileBase, FileCandidate};
pub(crate) use spliced::Spliced;
pub(crate) use symbol::edit_distance;
pub use validate::{conflict_marker_lines, has_errors, validate, FileCheck, Issue, Severity};
