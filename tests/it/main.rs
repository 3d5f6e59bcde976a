//! Integration tests of Ultra Edit: one binary, shared helpers in `support/`.

mod support;

mod differential;
#[cfg(feature = "syntax")]
mod symbols;

mod answers;
mod attention;
mod causes;
mod cli;
mod commit;
mod completion_races;
mod crash;
mod diffs;
mod edges;
mod embedding;
mod enospc;
mod explained;
mod fidelity;
mod fidelity_acl;
mod fidelity_init;
mod fidelity_lock;
mod fidelity_owners;
mod fidelity_paths;
mod fidelity_readonly;
mod fixture_v3;
mod fixture_v4;
mod fixture_v5;
mod fuzz;
mod growth;
mod handles;
mod history;
mod interdiff;
mod interrupts;
mod iofault;
mod journal;
mod lockholder;
mod m1nd_compat;
mod m1nd_registry;
mod pager;
mod paths;
mod people;
mod powercut;
mod preview;
mod rebase;
mod recovery;
mod regression;
mod resolve;
mod retry;
mod revert;
mod rollback;
mod sandbox;
mod soak;
mod stress;
mod syncs;
mod targeting;
