//! Work on numbered items in parallel with the results taken in order: [`in_order`].
//!
//! Why not rayon's chunks: replay of a folder read a chunk of files, replayed it and summed it with
//! a barrier at every chunk, and a file was read on one thread and replayed on another (its calls
//! crossing caches); two threads ran 1.25-1.45x one. Here each item is done whole by one thread,
//! a thread takes the next item as soon as it is free, and the results are taken in order by
//! whichever thread gives the one that was awaited: no barrier, memory bounded by a window.
//!
//! The workers are threads of their own, not rayon's: a worker waits when it is a window ahead of
//! the results taken, and a rayon thread that waits while work it stole from below it in its own
//! stack is unfinished never wakes. Work may use rayon inside (it is injected into rayon's pool).

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// The shared state of one [`in_order`] call.
struct Queue<T> {
    /// The next item to be given to a worker.
    next: usize,
    /// Items whose results were taken (the results of items `taken..` are in `ready`).
    taken: usize,
    /// Results of items `taken..`, by item minus `taken`: `None` while the item is being worked on.
    ready: VecDeque<Option<T>>,
    /// A worker is taking results (only one at a time does, in order).
    taking: bool,
    /// The results' taker said stop (an error), or a worker panicked: give out no more items.
    stop: bool,
}

/// Locks `m`, a poisoned lock taken as it is: a worker that panicked has stopped the queue (see
/// `StopOnPanic`), and the panic is raised again when the threads are joined.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Gives out no more items and wakes the workers waiting for one (they then end).
fn stop_all<T>(queue: &Mutex<Queue<T>>, moved: &Condvar) {
    lock(queue).stop = true;
    moved.notify_all();
}

/// Runs `work(i)` for every item `i` in `0..items` on up to `threads` threads (the calling thread is
/// one of them), at most `window` items ahead of the results taken, and gives the results to `take`
/// in item order, one at a time, on whichever worker gave the result that was awaited. The first
/// error `take` returns stops the work (no further item is started; the results of items already
/// started are dropped) and is returned. A panic in `work` or `take` stops the others and is raised
/// again here.
///
/// `take` sees exactly what a loop `for i in 0..items { take(work(i))? }` would give it, whatever
/// the number of threads; threads that cannot be started (memory or process limits) are done
/// without.
pub fn in_order<T: Send, E: Send>(
    items: usize,
    threads: usize,
    window: usize,
    work: impl Fn(usize) -> T + Sync,
    take: impl FnMut(T) -> Result<(), E> + Send,
) -> Result<(), E> {
    let window = window.max(1);
    let queue = Mutex::new(Queue {
        next: 0,
        taken: 0,
        ready: VecDeque::new(),
        taking: false,
        stop: false,
    });
    let moved = Condvar::new();
    // The taker's closure and the first error; locked only by the worker holding `taking`.
    let taker = Mutex::new((take, None::<E>));
    let worker = || {
        // A panic below ends this worker: the others must not wait for its item.
        struct StopOnPanic<'q, T>(&'q Mutex<Queue<T>>, &'q Condvar);
        impl<T> Drop for StopOnPanic<'_, T> {
            fn drop(&mut self) {
                if std::thread::panicking() {
                    stop_all(self.0, self.1);
                }
            }
        }
        let _guard = StopOnPanic(&queue, &moved);
        loop {
            let item = {
                let mut q = lock(&queue);
                loop {
                    if q.stop || q.next >= items {
                        return;
                    }
                    if q.next < q.taken + window {
                        break;
                    }
                    q = moved.wait(q).unwrap_or_else(PoisonError::into_inner);
                }
                q.next += 1;
                q.next - 1
            };
            let result = work(item);
            {
                let mut q = lock(&queue);
                let at = item - q.taken;
                if q.ready.len() <= at {
                    q.ready.resize_with(at + 1, || None);
                }
                q.ready[at] = Some(result);
                if q.taking {
                    continue;
                }
                q.taking = true;
            }
            // This worker takes every result now ready, in order, then gives the role back.
            loop {
                let result = {
                    let mut q = lock(&queue);
                    match q.ready.front_mut().and_then(Option::take) {
                        Some(r) => {
                            q.ready.pop_front();
                            q.taken += 1;
                            moved.notify_all();
                            r
                        }
                        None => {
                            q.taking = false;
                            break;
                        }
                    }
                };
                let mut t = lock(&taker);
                if t.1.is_none() {
                    if let Err(e) = (t.0)(result) {
                        t.1 = Some(e);
                        stop_all(&queue, &moved);
                    }
                }
            }
        }
    };
    std::thread::scope(|scope| {
        for _ in 1..threads.max(1) {
            if std::thread::Builder::new()
                .spawn_scoped(scope, worker)
                .is_err()
            {
                break;
            }
        }
        worker();
    });
    match taker.into_inner().unwrap_or_else(PoisonError::into_inner).1 {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Every result is taken once, in order, on any number of threads and windows; the items worked
    /// on at once never pass the window.
    #[test]
    fn results_are_taken_in_order_within_the_window() {
        for threads in [1, 2, 3, 8] {
            for window in [1, 2, 5, 64] {
                let (busy, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
                let ahead = AtomicUsize::new(0);
                let taken = AtomicUsize::new(0);
                let mut got = Vec::new();
                in_order(
                    200,
                    threads,
                    window,
                    |i| {
                        let now = busy.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        // How far this item is past the results taken: within the window, plus
                        // the one result that may be leaving the queue for `take` as it starts.
                        let past = i + 1 - taken.load(Ordering::SeqCst).min(i + 1);
                        ahead.fetch_max(past, Ordering::SeqCst);
                        // Uneven work, so items finish out of order.
                        let spin = (i * 7919) % 13 * 200;
                        let mut x = i as u64;
                        for _ in 0..spin {
                            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                        }
                        busy.fetch_sub(1, Ordering::SeqCst);
                        (i, x)
                    },
                    |(i, _)| {
                        got.push(i);
                        taken.fetch_add(1, Ordering::SeqCst);
                        Ok::<(), ()>(())
                    },
                )
                .unwrap();
                assert_eq!(
                    got,
                    (0..200).collect::<Vec<_>>(),
                    "{threads} threads, window {window}"
                );
                assert!(most.load(Ordering::SeqCst) <= threads.min(window));
                assert!(
                    ahead.load(Ordering::SeqCst) <= window + 1,
                    "{threads} threads: an item {} past the results taken, window {window}",
                    ahead.load(Ordering::SeqCst)
                );
            }
        }
    }

    /// The first error stops the work: results after it are not taken, and few items past it are
    /// started (at most a window).
    #[test]
    fn the_first_error_in_order_is_returned_and_stops_the_work() {
        for threads in [1, 2, 4] {
            let started = AtomicUsize::new(0);
            let mut got = Vec::new();
            let r = in_order(
                1000,
                threads,
                4,
                |i| {
                    started.fetch_add(1, Ordering::SeqCst);
                    i
                },
                |i| {
                    if i == 10 || i == 11 {
                        return Err(format!("item {i}"));
                    }
                    got.push(i);
                    Ok(())
                },
            );
            assert_eq!(r, Err("item 10".to_string()));
            assert_eq!(got, (0..10).collect::<Vec<_>>());
            assert!(
                started.load(Ordering::SeqCst) <= 11 + 4,
                "{threads} threads"
            );
        }
    }

    /// A panic in a worker ends the call with that panic; no worker is left waiting.
    #[test]
    fn a_panic_in_work_is_raised_again_and_nobody_waits() {
        let r = std::panic::catch_unwind(|| {
            in_order(
                100,
                2,
                2,
                |i| {
                    assert!(i != 3, "item 3 panics");
                    i
                },
                |_| Ok::<(), ()>(()),
            )
        });
        assert!(r.is_err());
    }

    /// No item: nothing worked on, nothing taken.
    #[test]
    fn no_items() {
        let r = in_order(0, 4, 4, |i| i, |_| Err::<(), _>("taken"));
        assert_eq!(r, Ok(()));
    }
}
