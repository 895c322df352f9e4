//! Heavy reads off the runtime: the reads that rebuild a game's positions
//! from its log (GetReplay pages with positions, GetGame and analyses at a
//! past sequence) run at most [`HeavyReadSettings::threads`] at once, each
//! rebuilding on a blocking thread of its own, never on the runtime's
//! worker threads, which serve every move and every other call; at most
//! [`HeavyReadSettings::max_heavy_reads`] are admitted at once (running or
//! waiting their turn, first come first served), and more are refused with
//! UNAVAILABLE / OVERLOADED (issue 35: 32 clients replaying the last page
//! of an 8,000-move 1000x1000 game slowed another game's GetGame to
//! seconds).

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::RegistryError;

/// Limits on heavy reads, part of [`super::RegistrySettings`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeavyReadSettings {
    /// Heavy reads running at once, each reading the store and rebuilding
    /// positions on a blocking thread (default: half the cores, at least
    /// 1), so that the runtime keeps the other cores for moves and light
    /// calls.
    pub threads: usize,
    /// Heavy reads admitted at once, running or waiting their turn
    /// (default 64); more are refused with UNAVAILABLE / OVERLOADED (retry
    /// with backoff).
    pub max_heavy_reads: usize,
}

impl Default for HeavyReadSettings {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        HeavyReadSettings {
            threads: (cores / 2).max(1),
            max_heavy_reads: 64,
        }
    }
}

/// The server's heavy-read pool: admission slots and running permits.
#[derive(Debug)]
pub(super) struct HeavyReads {
    settings: HeavyReadSettings,
    admitted: Arc<Semaphore>,
    running: Arc<Semaphore>,
}

/// A heavy read admitted and running: holds its admission slot and its
/// running permit until dropped (and while [`Admission::run`]'s work
/// runs), and rebuilds with [`Admission::run`].
#[derive(Debug)]
pub(super) struct Admission {
    _slot: OwnedSemaphorePermit,
    running: Arc<OwnedSemaphorePermit>,
}

impl HeavyReads {
    pub(super) fn new(settings: HeavyReadSettings) -> Self {
        HeavyReads {
            settings,
            admitted: Arc::new(Semaphore::new(settings.max_heavy_reads)),
            running: Arc::new(Semaphore::new(settings.threads.max(1))),
        }
    }

    /// Admits one heavy read and waits for its turn to run (first come
    /// first served), for as long as the [`Admission`] lives.
    ///
    /// # Errors
    /// [`RegistryError::HeavyReadsBusy`] at once when
    /// [`HeavyReadSettings::max_heavy_reads`] are admitted already.
    ///
    /// # Cancellation safety
    /// Dropping the future gives its admission slot back.
    pub(super) async fn admit(&self) -> Result<Admission, RegistryError> {
        let slot = Arc::clone(&self.admitted)
            .try_acquire_owned()
            .map_err(|_| RegistryError::HeavyReadsBusy {
                max: self.settings.max_heavy_reads,
            })?;
        let running = Arc::clone(&self.running)
            .acquire_owned()
            .await
            .map_err(|_| RegistryError::ShuttingDown)?;
        Ok(Admission {
            _slot: slot,
            running: Arc::new(running),
        })
    }

    /// Heavy reads admitted now (running or waiting).
    pub(super) fn admitted(&self) -> usize {
        self.settings.max_heavy_reads - self.admitted.available_permits()
    }
}

impl Admission {
    /// Runs `work` on a blocking thread and returns its answer.
    ///
    /// # Errors
    /// [`RegistryError::Internal`] when `work` panicked.
    ///
    /// # Cancellation safety
    /// Once started, `work` runs to its end on its thread, holding the
    /// read's running permit, and its answer is dropped.
    pub(super) async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, RegistryError> {
        let running = Arc::clone(&self.running);
        tokio::task::spawn_blocking(move || {
            let _running = running;
            work()
        })
        .await
        .map_err(|e| RegistryError::Internal(format!("a heavy read failed: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    /// On a runtime with one worker thread, heavy reads that never finish
    /// on their own take every running permit, and one more waits its
    /// turn, and still: one more than the limit is refused at once (not
    /// queued), and other work on the runtime runs to its end, because
    /// none of them runs on it.
    #[tokio::test(flavor = "current_thread")]
    async fn reads_that_hold_every_thread_leave_the_runtime_free_and_refuse_one_more() {
        let within = std::time::Duration::from_secs(10);
        let pool = Arc::new(HeavyReads::new(HeavyReadSettings {
            threads: 2,
            max_heavy_reads: 3,
        }));
        // Two running (blocked until released), one waiting its turn.
        let (release, blocked) = mpsc::channel::<()>();
        let blocked = Arc::new(std::sync::Mutex::new(blocked));
        let (started, mut running) = tokio::sync::mpsc::unbounded_channel();
        let mut reads = Vec::new();
        for i in 0..3 {
            let (pool, blocked, started) =
                (Arc::clone(&pool), Arc::clone(&blocked), started.clone());
            reads.push(tokio::spawn(async move {
                let admission = pool.admit().await?;
                admission
                    .run(move || {
                        started.send(i).unwrap();
                        // Held until released (10 s at most: a read run on
                        // the runtime's thread would hold it that long,
                        // then the checks below fail rather than hang).
                        let _ = blocked.lock().unwrap().recv_timeout(within);
                        i
                    })
                    .await
            }));
        }
        for _ in 0..2 {
            tokio::time::timeout(within, running.recv())
                .await
                .expect("two reads start")
                .unwrap();
        }
        tokio::time::timeout(within, async {
            while pool.admitted() < 3 {
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("the third read admitted");
        // Full: the next is refused at once, naming the limit.
        assert!(matches!(
            tokio::time::timeout(within, pool.admit()).await,
            Ok(Err(RegistryError::HeavyReadsBusy { max: 3 }))
        ));
        // The runtime's only thread is free: other tasks run.
        let light = tokio::spawn(async { 40 + 2 });
        assert_eq!(
            tokio::time::timeout(within, light)
                .await
                .expect("a light task runs while the pool is full")
                .unwrap(),
            42
        );
        assert!(running.try_recv().is_err(), "a third read ran");
        // Released, every read ends and its slot comes back.
        for _ in 0..3 {
            release.send(()).unwrap();
        }
        let mut answers = Vec::new();
        for read in reads {
            answers.push(read.await.unwrap().unwrap());
        }
        answers.sort_unstable();
        assert_eq!(answers, vec![0, 1, 2]);
        assert_eq!(pool.admitted(), 0);
        assert!(pool.admit().await.is_ok());
    }
}
