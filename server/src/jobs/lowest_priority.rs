//! Background work that must never take CPU time from requests: run on an OS thread of
//! its own at the lowest scheduling priority (nice 19 on Linux), so that the kernel gives
//! it what requests leave and next to nothing while they keep every core busy.
//!
//! The request log's writer runs so (`jobs::request_log`). Pacing it in user space (a share
//! of wall time) cost requests the same share at saturation and capped the log at ordinary
//! load, where cores sit idle; the scheduler does both right. The work is a future driven
//! on that thread with the runtime's handle, so it uses the store, timers and sockets as
//! any task does, and SQLite's statements, which run on the calling thread, run at that
//! priority too.

use std::future::Future;
use std::panic::AssertUnwindSafe;

/// Runs `work` to its end on a thread named `name` at the lowest priority, and resolves
/// when it has ended. A panic in `work` is raised again here, so a supervisor sees it as
/// it would a task's. Where the thread cannot be made, the work runs here instead.
pub async fn run<F>(name: &str, work: F)
where
    F: Future<Output = ()> + Send + 'static,
{
    let handle = tokio::runtime::Handle::current();
    let (done, ended) = tokio::sync::oneshot::channel();
    let work = std::sync::Arc::new(std::sync::Mutex::new(Some(work)));
    let given = work.clone();
    let spawned = std::thread::Builder::new().name(name.to_string()).spawn(move || {
        lower_this_threads_priority();
        let Some(work) = given.lock().ok().and_then(|mut w| w.take()) else { return };
        let _ = done.send(std::panic::catch_unwind(AssertUnwindSafe(|| handle.block_on(work))));
    });
    if let Err(e) = spawned {
        tracing::warn!(thread = name, error = %e, "no thread of its own for this background work; it runs beside requests");
        let Some(work) = work.lock().ok().and_then(|mut w| w.take()) else { return };
        return work.await;
    }
    // Otherwise it ended (the thread always says how before it goes).
    if let Ok(Err(panic)) = ended.await {
        std::panic::resume_unwind(panic)
    }
}

/// Nice 19 for the calling thread: on Linux a thread's nice value is its own, and any
/// process may lower its threads' priority. Elsewhere `setpriority` would lower the whole
/// process's, so the thread keeps the process's priority there.
fn lower_this_threads_priority() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: plain system calls on this thread's own id, no memory handed over.
        let failed = unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            libc::setpriority(libc::PRIO_PROCESS, tid, 19) != 0
        };
        if failed {
            tracing::warn!(error = %std::io::Error::last_os_error(), "could not lower a background thread's priority");
        }
    }
}

/// This thread's nice value (tests).
#[cfg(all(test, target_os = "linux"))]
pub fn this_threads_nice() -> i32 {
    // SAFETY: as above. getpriority may return -1 as a value; errno tells, and the test reads 19.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::getpriority(libc::PRIO_PROCESS, tid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn work_runs_on_its_own_thread_at_the_lowest_priority_with_the_runtime_at_hand() {
        #[cfg(target_os = "linux")]
        let callers = this_threads_nice();
        let (tx, rx) = tokio::sync::oneshot::channel();
        run("gable-test-low", async move {
            // Timers of the runtime work on the thread.
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            let name = std::thread::current().name().map(str::to_string);
            #[cfg(target_os = "linux")]
            let nice = this_threads_nice();
            #[cfg(not(target_os = "linux"))]
            let nice = 19;
            let _ = tx.send((name, nice));
        })
        .await;
        let (name, nice) = rx.await.unwrap();
        assert_eq!(name.as_deref(), Some("gable-test-low"));
        assert_eq!(nice, 19);
        #[cfg(target_os = "linux")]
        assert_eq!(this_threads_nice(), callers, "the caller's threads keep their priority");
    }

    #[tokio::test]
    async fn a_panic_in_the_work_is_raised_to_the_caller() {
        let joined = tokio::spawn(run("gable-test-panic", async { panic!("broke") })).await;
        let panic = joined.expect_err("the task panicked").into_panic();
        assert_eq!(panic.downcast_ref::<&str>(), Some(&"broke"));
    }
}
