//! PostgreSQL's `LISTEN`: waking this process on another's notifications (due work, key
//! revocations), reconnecting with backoff, and counting the connections listeners hold.

use std::time::Duration;

use super::pool::Pool;
use super::{keys, Store};

const LISTEN_FIRST_BACKOFF: Duration = Duration::from_millis(500);
const LISTEN_MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Counts a listener's connection in `Store::listening` while it lives.
struct Listening<'a>(&'a std::sync::atomic::AtomicUsize);

impl<'a> Listening<'a> {
    fn new(count: &'a std::sync::atomic::AtomicUsize) -> Self {
        count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Listening(count)
    }
}

impl Drop for Listening<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Store {
    /// On PostgreSQL, wakes `notify` on each notification on `channel` (and after a lost
    /// connection, which may have lost some). Runs until the pool closes; a connection
    /// that fails, the first one included, is tried again with backoff.
    pub async fn listen(&self, channel: &str, notify: std::sync::Arc<tokio::sync::Notify>) -> anyhow::Result<()> {
        self.listening(channel, |_| notify.notify_one()).await
    }

    /// On PostgreSQL, listens for key revocations made by any process sharing the
    /// database and evicts them from this process's key cache. Runs until the pool closes.
    pub async fn listen_for_revocations(&self) -> anyhow::Result<()> {
        // After a lost connection, forget everything cached: a revocation may be lost.
        self.listening(keys::REVOCATION_CHANNEL, |payload| match payload {
            Some(key) => self.keys.evict(key),
            None => self.keys.clear(),
        })
        .await
    }

    /// Calls `on` with each notification's payload on `channel`, and with `None` when
    /// the connection was lost (notifications may have been missed). Connects again with
    /// backoff (half a second, doubling to 30 s) while PostgreSQL is unreachable, also
    /// for the first connection; returns when the pool closes.
    async fn listening(&self, channel: &str, mut on: impl FnMut(Option<&str>)) -> anyhow::Result<()> {
        let Pool::Postgres(pool) = &self.pool else { return Ok(()) };
        let mut backoff = LISTEN_FIRST_BACKOFF;
        loop {
            let connected = async {
                let mut listener = sqlx::postgres::PgListener::connect_with(pool).await?;
                listener.listen(channel).await?;
                Ok::<_, sqlx::Error>(listener)
            };
            let mut listener = match connected.await {
                Ok(l) => l,
                Err(_) if pool.is_closed() => return Ok(()),
                Err(e) => {
                    tracing::warn!(error = %e, channel, retry_in_ms = backoff.as_millis() as u64, "cannot listen; retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(LISTEN_MAX_BACKOFF);
                    continue;
                }
            };
            backoff = LISTEN_FIRST_BACKOFF;
            let _counted = Listening::new(&self.listening);
            // `recv` reconnects by itself after an error; the error is reported once.
            loop {
                match listener.recv().await {
                    Ok(n) => {
                        backoff = LISTEN_FIRST_BACKOFF;
                        on(Some(n.payload()))
                    }
                    Err(e) => {
                        on(None);
                        if pool.is_closed() {
                            return Ok(());
                        }
                        tracing::warn!(error = %e, channel, retry_in_ms = backoff.as_millis() as u64, "listener reconnecting");
                        tokio::time::sleep(backoff).await;
                        backoff = (backoff * 2).min(LISTEN_MAX_BACKOFF);
                    }
                }
            }
        }
    }
}
