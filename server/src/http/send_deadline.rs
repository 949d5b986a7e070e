//! Answers must reach the client at a minimum pace: a connection whose client stops
//! reading is closed, so that it cannot hold one of the listener's connections for as long
//! as it likes (the third security review held every connection of a listener with six
//! sockets that sent pipelined requests and never read).
//!
//! The clock starts when the socket stops taking bytes (the kernel's send buffer is full:
//! the client is not reading) and stops when everything hyper has to send has been handed
//! to the kernel (hyper then flushes). In between, once `limit` has passed, the answer must
//! have moved at least `MIN_RATE` bytes a second on average since the clock started, or
//! the connection is closed. A client that never reads is cut off after `limit`; a slow but
//! real one (a phone on a weak signal) is not, while it keeps the answer moving.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// The slowest average pace, in bytes a second, at which a blocked answer may move once
/// the deadline has passed.
pub const MIN_RATE: u64 = 4096;

/// A connection's socket whose writes must make progress. Unpin (hyper needs it): the
/// timer is boxed, once per connection.
pub struct SendDeadline<T> {
    inner: T,
    limit: Duration,
    /// When the socket stopped taking bytes, and what it took since; `None` while nothing
    /// waits to be sent.
    blocked: Option<(Instant, u64)>,
    check: Pin<Box<Sleep>>,
}

impl<T> SendDeadline<T> {
    pub fn new(inner: T, limit: Duration) -> Self {
        SendDeadline { inner, limit, blocked: None, check: Box::pin(tokio::time::sleep(limit)) }
    }

    /// Handles what a write returned: counts bytes moved while blocked, starts the clock
    /// when the socket stops taking bytes, and fails the write once the pace is too slow.
    fn paced(&mut self, cx: &mut Context<'_>, written: Poll<io::Result<usize>>) -> Poll<io::Result<usize>> {
        match written {
            Poll::Ready(Ok(n)) => {
                if let Some((_, moved)) = self.blocked.as_mut() {
                    *moved += n as u64;
                }
                Poll::Ready(Ok(n))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => {
                let now = Instant::now();
                let (since, moved) = match self.blocked {
                    Some(b) => b,
                    None => {
                        self.check.as_mut().reset(now + self.limit);
                        *self.blocked.insert((now, 0))
                    }
                };
                loop {
                    ready!(self.check.as_mut().poll(cx));
                    // The deadline passed: fine while the answer keeps the minimum pace;
                    // then look again when it would fall below it (at least a second on).
                    let now = Instant::now();
                    let due = since + Duration::from_secs_f64(moved as f64 / MIN_RATE as f64);
                    if due <= now {
                        return Poll::Ready(Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            format!("the client read {moved} bytes of the answer in {} s", (now - since).as_secs()),
                        )));
                    }
                    self.check.as_mut().reset(due.max(now + Duration::from_secs(1)));
                }
            }
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for SendDeadline<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for SendDeadline<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.paced(cx, written)
    }

    fn poll_write_vectored(mut self: Pin<&mut Self>, cx: &mut Context<'_>, bufs: &[io::IoSlice<'_>]) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.paced(cx, written)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    /// hyper flushes once its whole buffer is handed to the socket: nothing waits then.
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let flushed = ready!(Pin::new(&mut self.inner).poll_flush(cx));
        self.blocked = None;
        Poll::Ready(flushed)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::SendDeadline;

    /// A pipe with a small buffer stands in for a socket whose client reads slowly or not
    /// at all; tokio's paused clock runs the minutes in no time.
    #[tokio::test(start_paused = true)]
    async fn a_client_that_never_reads_is_cut_off_after_the_limit() {
        let (server, _client) = tokio::io::duplex(1024);
        let mut paced = SendDeadline::new(server, Duration::from_secs(10));
        let started = tokio::time::Instant::now();
        let err = paced.write_all(&[0u8; 64 * 1024]).await.expect_err("cut off");
        assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
        let after = started.elapsed();
        assert!(after >= Duration::from_secs(10) && after < Duration::from_secs(12), "{after:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_reader_keeping_the_pace_gets_the_whole_answer() {
        let (server, mut client) = tokio::io::duplex(1024);
        let mut paced = SendDeadline::new(server, Duration::from_secs(2));
        // 8 KiB a second, twice the minimum, for 64 KiB: 8 s, well past the limit.
        let reader = tokio::spawn(async move {
            let mut got = 0;
            let mut buf = [0u8; 1024];
            while got < 64 * 1024 {
                got += client.read(&mut buf).await.expect("read");
                tokio::time::sleep(Duration::from_millis(125)).await;
            }
            got
        });
        paced.write_all(&[0u8; 64 * 1024]).await.expect("not cut off");
        paced.flush().await.expect("flushed");
        assert_eq!(reader.await.expect("reader"), 64 * 1024);
    }

    #[tokio::test(start_paused = true)]
    async fn a_trickling_reader_is_cut_off_once_below_the_pace() {
        let (server, mut client) = tokio::io::duplex(1024);
        let mut paced = SendDeadline::new(server, Duration::from_secs(2));
        // 512 bytes a second: an eighth of the minimum.
        tokio::spawn(async move {
            let mut buf = [0u8; 512];
            while client.read(&mut buf).await.is_ok_and(|n| n > 0) {
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
        let started = tokio::time::Instant::now();
        let err = paced.write_all(&[0u8; 256 * 1024]).await.expect_err("cut off");
        assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
        assert!(started.elapsed() < Duration::from_secs(4), "{:?}", started.elapsed());
    }

    #[tokio::test(start_paused = true)]
    async fn the_clock_stops_once_everything_is_handed_over() {
        let (server, mut client) = tokio::io::duplex(1024);
        let mut paced = SendDeadline::new(server, Duration::from_secs(2));
        // Blocked a moment, then read: the first answer is sent and flushed.
        let first = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(500)).await;
            let mut buf = vec![0u8; 2048];
            client.read_exact(&mut buf).await.expect("read");
            // The server idles for longer than the limit (nothing waits to be sent, so
            // nothing counts), then its second answer waits a second for this read.
            tokio::time::sleep(Duration::from_secs(4)).await;
            client.read_exact(&mut buf).await.expect("read");
        });
        paced.write_all(&[1u8; 2048]).await.expect("sent");
        paced.flush().await.expect("flushed");
        tokio::time::sleep(Duration::from_secs(3)).await;
        paced.write_all(&[2u8; 2048]).await.expect("the clock started again from zero");
        paced.flush().await.expect("flushed");
        first.await.expect("client");
    }
}
