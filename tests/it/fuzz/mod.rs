//! Fuzzing with proptest (docs/threat-model.md, "A hostile plan"): arbitrary and
//! mutated inputs to the plan parser, target resolution, the diff and 3-way merge, the
//! journal record decoder, and whole hostile plans through preview and commit.
//!
//! Every target is bounded twice: a case count and a wall-clock budget (cases after the
//! budget pass without running). Failures are not persisted to disk (no
//! `proptest-regressions/` files); each crash found becomes a named `regression_*` test.
//!
//! Decoding a damaged journal record can abort the process (an allocation failure is
//! not a panic), so the unbounded decode target runs in a child process (this test
//! binary, re-run on one test) that writes each input to a file before decoding it:
//! if the child dies, the parent reports the input that killed it.

mod decode;
mod hostile;
mod plan;
mod resolve;

use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};

/// Run `test` on up to `cases` values of `strategy`, for at most `budget`; panics with
/// the minimal failing input (proptest shrinks it) on failure. Panics inside `test` are
/// failures too.
///
/// With `UE_FUZZ_SECS=N` (`.ci/run` sets 60: about a minute per target), rounds
/// of `cases` fresh random values run until N seconds have passed instead.
fn fuzz<S: Strategy>(
    name: &str,
    cases: u32,
    budget: Duration,
    strategy: S,
    test: impl Fn(S::Value) -> Result<(), TestCaseError>,
) where
    S::Value: std::fmt::Debug,
{
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_time: 10_000,
        ..Config::default()
    };
    let extended = std::env::var("UE_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .map(Duration::from_secs);
    let budget = extended.unwrap_or(budget);
    let started = Instant::now();
    let ran = std::cell::Cell::new(0u64);
    loop {
        // A new runner per round: a fresh random seed, so rounds try new values.
        let mut runner = TestRunner::new(config.clone());
        let result = runner.run(&strategy, |v| {
            if started.elapsed() > budget {
                return Ok(());
            }
            ran.set(ran.get() + 1);
            test(v)
        });
        match result {
            Ok(()) => {}
            Err(TestError::Fail(why, input)) => {
                panic!("fuzz {name}: {why}\nminimal failing input: {input:#?}")
            }
            Err(e) => panic!("fuzz {name}: {e}"),
        }
        if extended.is_none() || started.elapsed() > budget {
            break;
        }
    }
    println!(
        "fuzz {name}: {} cases in {:?}, no failure",
        ran.get(),
        started.elapsed()
    );
}
