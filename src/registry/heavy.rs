//! Heavy reads off the runtime: the reads that rebuild a game's positions
//! from its log (GetReplay pages with positions, GetGame and analyses at a
//! past sequence) run their CPU work on tokio's blocking threads, at most
//! [`HeavyReadSettings::threads`] at once, and at most
//! [`HeavyReadSettings::max_heavy_reads`] are admitted at once (running,
//! reading the store or waiting for a thread); more are refused with
//! UNAVAILABLE / OVERLOADED. The runtime's worker threads, which serve
//! every move and every other call, never rebuild a position for a read
//! (issue 35: 32 clients replaying the last page of an 8,000-move
//! 1000x1000 game slowed another game's GetGame to 9.7 s).

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::RegistryError;

/// Limits on heavy reads, part of [`super::RegistrySettings`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeavyReadSettings {
    /// Heavy reads rebuilding positions at once, each on a blocking
    /// thread (default: half the cores, at least 1), so that the
    /// runtime keeps the other cores for moves and light calls.
    pub threads: usize,
    /// Heavy reads admitted at once, running or waiting their turn
    /// (default 64); more are refused with UNAVAILABLE / OVERLOADED (retry
    /// with backoff). Each admitted read may hold a game's state (about a
    /// byte per board cell) while it waits.
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

/// The server's heavy-read pool: admission slots and thread permits.
#[derive(Debug)]
pub(super) struct HeavyReads {
    settings: HeavyReadSettings,
    admitted: Arc<Semaphore>,
    threads: Arc<Semaphore>,
}

/// An admitted heavy read: holds its admission slot until dropped, and
/// runs its CPU work with [`Admission::run`].
#[derive(Debug)]
pub(super) struct Admission {
    _slot: OwnedSemaphorePermit,
    threads: Arc<Semaphore>,
}

impl HeavyReads {
    pub(super) fn new(settings: HeavyReadSettings) -> Self {
        HeavyReads {
            settings,
            admitted: Arc::new(Semaphore::new(settings.max_heavy_reads)),
            threads: Arc::new(Semaphore::new(settings.threads.max(1))),
        }
    }

    /// Admits one heavy read, for as long as the [`Admission`] lives.
    ///
    /// # Errors
    /// [`RegistryError::HeavyReadsBusy`] when
    /// [`HeavyReadSettings::max_heavy_reads`] are admitted already.
    pub(super) fn admit(&self) -> Result<Admission, RegistryError> {
        let slot = Arc::clone(&self.admitted)
            .try_acquire_owned()
            .map_err(|_| RegistryError::HeavyReadsBusy {
                max: self.settings.max_heavy_reads,
            })?;
        Ok(Admission {
            _slot: slot,
            threads: Arc::clone(&self.threads),
        })
    }

    /// Heavy reads admitted now (running or waiting).
    pub(super) fn admitted(&self) -> usize {
        self.settings.max_heavy_reads - self.admitted.available_permits()
    }
}

impl Admission {
    /// Runs `work` on a blocking thread once one of the pool's threads is
    /// free (waiting in line, first come first served), and returns its
    /// answer.
    ///
    /// # Errors
    /// [`RegistryError::Internal`] when `work` panicked.
    ///
    /// # Cancellation safety
    /// Dropping the future before `work` started drops it unrun; after,
    /// `work` runs to its end on its thread (holding the thread's permit)
    /// and its answer is dropped.
    pub(super) async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, RegistryError> {
        let thread = Arc::clone(&self.threads)
            .acquire_owned()
            .await
            .map_err(|_| RegistryError::ShuttingDown)?;
        tokio::task::spawn_blocking(move || {
            let _thread = thread;
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
    /// on their own take every thread permit and admission slot, and still:
    /// one more is refused at once (not queued), and other work on the
    /// runtime runs to its end, because none of them runs on it.
    #[tokio::test(flavor = "current_thread")]
    async fn reads_that_hold_every_thread_leave_the_runtime_free_and_refuse_one_more() {
        let pool = Arc::new(HeavyReads::new(HeavyReadSettings {
            threads: 2,
            max_heavy_reads: 3,
        }));
        // Two running (blocked until released), one waiting for a thread.
        let (release, blocked) = mpsc::channel::<()>();
        let blocked = Arc::new(std::sync::Mutex::new(blocked));
        let (started, mut running) = tokio::sync::mpsc::unbounded_channel();
        let mut reads = Vec::new();
        for i in 0..3 {
            let admission = pool.admit().expect("admitted");
            let (blocked, started) = (Arc::clone(&blocked), started.clone());
            reads.push(tokio::spawn(async move {
                admission
                    .run(move || {
                        started.send(i).unwrap();
                        blocked.lock().unwrap().recv().unwrap();
                        i
                    })
                    .await
            }));
        }
        for _ in 0..2 {
            tokio::time::timeout(std::time::Duration::from_secs(10), running.recv())
                .await
                .expect("two reads start")
                .unwrap();
        }
        assert_eq!(pool.admitted(), 3);
        // Full: the next is refused, naming the limit.
        assert!(matches!(
            pool.admit(),
            Err(RegistryError::HeavyReadsBusy { max: 3 })
        ));
        // The runtime's only thread is free: other tasks run.
        let light = tokio::spawn(async { 40 + 2 });
        assert_eq!(
            tokio::time::timeout(std::time::Duration::from_secs(10), light)
                .await
                .expect("a light task runs while the pool is full")
                .unwrap(),
            42
        );
        assert!(running.try_recv().is_err(), "a third thread ran");
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
        assert!(pool.admit().is_ok());
    }
}
