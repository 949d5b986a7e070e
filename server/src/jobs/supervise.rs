//! Background loops run supervised: each in a task of its own, so that a panic ends that
//! loop only, is logged with its message, and the loop starts again after a back-off
//! (doubling from half a second to 30 s while it keeps panicking), until stop is asked.
//! Panics are reported to the `Health` readiness reads, as failed rounds.

use std::future::Future;
use std::time::Duration;

use tokio::sync::watch;

use crate::observe::Health;

const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Runs the loop `start` makes until it returns (it returns when stop is asked), making
/// it anew after each panic; returns how many times it panicked.
pub async fn supervise<F, Fut>(name: &'static str, health: &Health, mut stop: watch::Receiver<bool>, mut start: F) -> u32
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    health.watch(name);
    let mut panics = 0;
    let mut backoff = FIRST_BACKOFF;
    loop {
        match tokio::spawn(start()).await {
            Ok(()) => return panics,
            Err(e) if e.is_panic() => {
                panics += 1;
                let message = panic_message(e.into_panic());
                health.panicked(name, &message);
                tracing::error!(job = name, panic = %message, restart_in_ms = backoff.as_millis() as u64, "background loop panicked; restarting it");
                tokio::select! {
                    _ = tokio::time::sleep(backoff) => {}
                    _ = stop.wait_for(|s| *s) => return panics,
                }
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
            // Cancelled: the runtime is shutting down.
            Err(_) => return panics,
        }
    }
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(s) => *s,
        Err(p) => p.downcast_ref::<&str>().map_or_else(|| "a panic without a message".to_string(), |s| s.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;

    use super::*;

    // Real time: two back-offs, 0.5 s and 1 s.
    #[tokio::test]
    async fn a_panicking_loop_is_started_again_until_it_returns() {
        let (_tx, stop) = watch::channel(false);
        let runs = Arc::new(AtomicU32::new(0));
        let counted = runs.clone();
        let health = Health::default();
        let panics = supervise("test", &health, stop, move || {
            let runs = counted.clone();
            async move {
                if runs.fetch_add(1, Ordering::SeqCst) < 2 {
                    panic!("round {} broke", runs.load(Ordering::SeqCst));
                }
            }
        })
        .await;
        assert_eq!(panics, 2);
        assert_eq!(runs.load(Ordering::SeqCst), 3);
        let report = &health.report()[0];
        assert_eq!((report.name, report.panics), ("test", 2));
        assert_eq!(report.last_error.as_deref(), Some("panicked: round 2 broke"));
    }

    #[tokio::test]
    async fn stop_ends_the_back_off() {
        let (tx, stop) = watch::channel(false);
        let supervised = tokio::spawn(async move { supervise("test", &Health::default(), stop, || async { panic!("always") }).await });
        tokio::time::sleep(Duration::from_millis(100)).await;
        tx.send(true).unwrap();
        let panics = supervised.await.unwrap();
        assert_eq!(panics, 1, "stopped during the first back-off");
    }

    #[test]
    fn the_message_is_read_from_either_payload() {
        assert_eq!(panic_message(Box::new("static")), "static");
        assert_eq!(panic_message(Box::new(String::from("owned"))), "owned");
        assert_eq!(panic_message(Box::new(7)), "a panic without a message");
    }
}
