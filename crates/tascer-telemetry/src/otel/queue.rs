//! [`QueuedObserver`]: the loop's side of the telemetry. Each fact is
//! copied onto a bounded queue, and a thread of its own builds the spans,
//! metrics and log events from it: a tool call pays one copy and one push
//! under an uncontended lock, and never runs the SDK's span building,
//! attribute sorting or metric aggregation. The thread sleeps while the
//! queue is empty; the first fact wakes it, and it lets a [`TICK`] of
//! facts gather before it takes them, so a burst costs one wake-up and an
//! idle process (a hook server between events) none.
//!
//! The queue is bounded: when the builder thread falls behind (thousands
//! of calls within one tick), a fact that does not fit is dropped and
//! counted, as the SDK's batch exporters drop spans, and
//! [`QueueWorker::finish`] says how many.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::thread::{JoinHandle, Thread};
use std::time::Duration;

use parking_lot::Mutex;
use tascer_core::observe::{
    AgentEndFacts, AgentFacts, ModelCallFacts, Observer, SessionFacts, ToolCallFacts,
};

/// How many facts wait for the builder thread before new ones are
/// dropped: far more than one tick's worth (a 20-call session reports
/// about 45 facts in all).
const QUEUE_CAPACITY: usize = 8192;

/// How often the builder thread takes what is queued. The spans carry
/// the times the facts name, so the delay changes no timestamp; the SDK's
/// batch exporters wait seconds anyway.
const TICK: Duration = Duration::from_millis(100);

/// One reported fact, owned, on its way to the builder thread.
enum Fact {
    SessionOpened(SessionFacts),
    AgentStarted(AgentFacts),
    ModelCall(ModelCallFacts),
    ToolCall(Box<ToolCallFacts>),
    AgentEnded(AgentEndFacts),
}

/// What the observer and the builder thread share.
#[derive(Default)]
struct Shared {
    queued: Mutex<Vec<Fact>>,
    /// Set by [`QueueWorker::finish`]: nothing is taken any more.
    closed: AtomicBool,
    dropped: AtomicU64,
}

/// The observer the loop and the hosts hold: it queues.
pub(crate) struct QueuedObserver {
    shared: Arc<Shared>,
    /// The builder thread, woken by the fact that finds the queue empty.
    builder: Thread,
}

/// The builder thread, for [`finish`](Self::finish) at shutdown.
pub(crate) struct QueueWorker {
    stop: SyncSender<()>,
    thread: JoinHandle<()>,
    shared: Arc<Shared>,
}

/// Starts the thread that hands queued facts to `inner`, in the order
/// they were reported.
pub(crate) fn start(
    inner: Box<dyn Observer>,
) -> Result<(QueuedObserver, QueueWorker), std::io::Error> {
    let shared = Arc::new(Shared::default());
    let (stop, stopped) = sync_channel(1);
    let thread = {
        let shared = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("tascer-otel-facts".into())
            .spawn(move || hand_on(&shared, &stopped, inner.as_ref()))?
    };
    Ok((
        QueuedObserver {
            shared: Arc::clone(&shared),
            builder: thread.thread().clone(),
        },
        QueueWorker {
            stop,
            thread,
            shared,
        },
    ))
}

/// Sleeps until a fact is queued, lets a tick's worth gather, and hands
/// them to `inner`; once more when told to stop.
fn hand_on(shared: &Shared, stopped: &Receiver<()>, inner: &dyn Observer) {
    loop {
        while shared.queued.lock().is_empty() && !shared.closed.load(Ordering::Relaxed) {
            std::thread::park();
        }
        let stop = !matches!(stopped.recv_timeout(TICK), Err(RecvTimeoutError::Timeout));
        let facts = std::mem::take(&mut *shared.queued.lock());
        for fact in facts {
            match fact {
                Fact::SessionOpened(f) => inner.session_opened(&f),
                Fact::AgentStarted(f) => inner.agent_started(&f),
                Fact::ModelCall(f) => inner.model_call(&f),
                Fact::ToolCall(f) => inner.tool_call(&f),
                Fact::AgentEnded(f) => inner.agent_ended(&f),
            }
        }
        if stop {
            return;
        }
    }
}

impl QueuedObserver {
    fn push(&self, fact: Fact) {
        let mut queued = self.shared.queued.lock();
        if queued.len() >= QUEUE_CAPACITY || self.shared.closed.load(Ordering::Relaxed) {
            self.shared.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let was_empty = queued.is_empty();
        queued.push(fact);
        drop(queued);
        if was_empty {
            self.builder.unpark();
        }
    }
}

impl Observer for QueuedObserver {
    fn session_opened(&self, session: &SessionFacts) {
        self.push(Fact::SessionOpened(session.clone()));
    }
    fn agent_started(&self, agent: &AgentFacts) {
        self.push(Fact::AgentStarted(agent.clone()));
    }
    fn model_call(&self, call: &ModelCallFacts) {
        self.push(Fact::ModelCall(call.clone()));
    }
    fn tool_call(&self, call: &ToolCallFacts) {
        self.push(Fact::ToolCall(Box::new(call.clone())));
    }
    fn agent_ended(&self, agent: &AgentEndFacts) {
        self.push(Fact::AgentEnded(agent.clone()));
    }
}

impl QueueWorker {
    /// Lets the thread build what was queued before this call, then ends
    /// it. Blocks until it has (the caller bounds the wait). How many
    /// facts were dropped because the queue was full or already closed.
    pub(crate) fn finish(self) -> u64 {
        {
            // Under the lock: a fact pushed before this is taken by the
            // thread's last round, one pushed after is counted as dropped.
            let _queued = self.shared.queued.lock();
            self.shared.closed.store(true, Ordering::Relaxed);
        }
        if self.stop.send(()).is_ok() {
            self.thread.thread().unpark();
            let _ = self.thread.join();
        }
        self.shared.dropped.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default, Clone)]
    struct Recorder {
        seen: Arc<Mutex<Vec<String>>>,
    }

    impl Observer for Recorder {
        fn agent_started(&self, agent: &AgentFacts) {
            self.seen.lock().push(format!("start {}", agent.session_id));
        }
        fn tool_call(&self, call: &ToolCallFacts) {
            self.seen.lock().push(format!("tool {}", call.tool_use_id));
        }
        fn agent_ended(&self, agent: &AgentEndFacts) {
            self.seen.lock().push(format!("end {}", agent.session_id));
        }
    }

    #[test]
    fn facts_reach_the_inner_observer_in_order_before_finish_returns() {
        let recorder = Recorder::default();
        let (observer, worker) = start(Box::new(recorder.clone())).unwrap();
        observer.agent_started(&AgentFacts {
            session_id: "s".into(),
            ..AgentFacts::default()
        });
        for i in 0..100 {
            observer.tool_call(&ToolCallFacts {
                tool_use_id: format!("t{i}"),
                ..ToolCallFacts::default()
            });
        }
        observer.agent_ended(&AgentEndFacts {
            session_id: "s".into(),
            ..AgentEndFacts::default()
        });
        assert_eq!(worker.finish(), 0);
        let seen = recorder.seen.lock();
        assert_eq!(seen.len(), 102);
        assert_eq!(seen[0], "start s");
        assert_eq!(seen[1], "tool t0");
        assert_eq!(seen[100], "tool t99");
        assert_eq!(seen[101], "end s");
    }

    #[test]
    fn facts_reported_after_finish_are_counted_as_dropped_not_blocking() {
        let recorder = Recorder::default();
        let (observer, worker) = start(Box::new(recorder.clone())).unwrap();
        let shared = Arc::clone(&worker.shared);
        assert_eq!(worker.finish(), 0);
        observer.tool_call(&ToolCallFacts::default());
        assert_eq!(shared.dropped.load(Ordering::Relaxed), 1);
        assert!(recorder.seen.lock().is_empty());
    }
}
