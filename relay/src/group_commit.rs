//! Group commit: writes that arrive while a database transaction runs wait, and go together
//! in the next one, so one transaction (one lock hand-off, one fsync) serves many callers.
//!
//! An item carries its own answer channel; the writer answers each item only after the
//! transaction that holds it ended, so nothing is answered for a write a crash could still
//! lose. Callers must run detached from their connection (`billing::metering::paid`): a caller
//! dropped while it writes a group would leave the group's other callers without an answer.

use std::future::Future;

/// The most items one transaction takes (bound parameters stay far below SQLite's and
/// PostgreSQL's limits).
pub const MAX_GROUP: usize = 128;

pub struct GroupCommit<T> {
    waiting: std::sync::Mutex<Vec<T>>,
    /// Held by the caller that writes; the others queue behind it and add to the next group.
    writer: tokio::sync::Mutex<()>,
}

impl<T> Default for GroupCommit<T> {
    fn default() -> Self {
        GroupCommit { waiting: std::sync::Mutex::new(Vec::new()), writer: tokio::sync::Mutex::new(()) }
    }
}

impl<T> GroupCommit<T> {
    /// Queues `item`, then waits for the writer's turn: whoever holds it writes everything
    /// waiting with `write`, [`MAX_GROUP`] at a time, this item included unless an earlier
    /// turn already took it. Returns once this caller's turn ended; the item's own channel
    /// carries its answer.
    pub async fn submit<F, Fut>(&self, item: T, write: F)
    where
        F: Fn(Vec<T>) -> Fut,
        Fut: Future<Output = ()>,
    {
        self.waiting().push(item);
        let _turn = self.writer.lock().await;
        loop {
            let group: Vec<T> = {
                let mut waiting = self.waiting();
                let n = waiting.len().min(MAX_GROUP);
                waiting.drain(..n).collect()
            };
            if group.is_empty() {
                return;
            }
            write(group).await;
        }
    }

    /// Runs `f` alone, between groups: a write that must not interleave with them.
    pub async fn alone<R, Fut: Future<Output = R>>(&self, f: impl FnOnce() -> Fut) -> R {
        let _turn = self.writer.lock().await;
        f().await
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, Vec<T>> {
        // Held only to push or drain: a panic cannot leave the list half-changed.
        self.waiting.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Items submitted while a group is being written go together in the next group, each is
    /// written exactly once, and no group is larger than `MAX_GROUP`.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn items_that_wait_share_a_group_and_each_is_written_once() {
        let group = Arc::new(GroupCommit::<usize>::default());
        let written = Arc::new(std::sync::Mutex::new(Vec::<Vec<usize>>::new()));
        let groups = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = (0..500)
            .map(|i| {
                let (group, written, groups) = (group.clone(), written.clone(), groups.clone());
                tokio::spawn(async move {
                    group
                        .submit(i, |items| {
                            let (written, groups) = (written.clone(), groups.clone());
                            async move {
                                groups.fetch_add(1, Ordering::Relaxed);
                                tokio::time::sleep(std::time::Duration::from_millis(2)).await;
                                written.lock().unwrap().push(items);
                            }
                        })
                        .await
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        let written = written.lock().unwrap();
        let mut all: Vec<usize> = written.iter().flatten().copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..500).collect::<Vec<_>>(), "each item written once");
        assert!(written.iter().all(|g| g.len() <= MAX_GROUP));
        assert!(groups.load(Ordering::Relaxed) < 100, "items shared groups: {} groups", written.len());
    }
}
