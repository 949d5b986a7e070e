//! Counting the statements a piece of work runs: how the tests hold an expanded read to
//! its statements (one, or one more per list of ids), and not one per record. Outside
//! [`counted`] nothing is counted (a task-local lookup that finds nothing).

use std::cell::Cell;
use std::future::Future;

tokio::task_local! {
    static STATEMENTS: Cell<u32>;
}

/// Runs `work`, and says how many statements it ran on either database (`BEGIN` and
/// `COMMIT` aside).
pub async fn counted<T>(work: impl Future<Output = T>) -> (T, u32) {
    STATEMENTS
        .scope(Cell::new(0), async {
            let out = work.await;
            (out, STATEMENTS.with(Cell::get))
        })
        .await
}

/// One statement ran.
pub(super) fn one() {
    let _ = STATEMENTS.try_with(|n| n.set(n.get() + 1));
}
