//! Span and trace ids derived from a session id, so that the processes of
//! one Claude Code session (`tascer hook` runs one per event, or a warm
//! server) put their spans in one trace under one `invoke_agent` span
//! without sharing state; and the id generator that lets the SDK create
//! that `invoke_agent` span with its derived id.

use std::cell::Cell;

use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};
use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator};

/// The trace and `invoke_agent` span ids of the session `session_id`.
pub(crate) fn derived(session_id: &str) -> (TraceId, SpanId) {
    let high = fnv1a(session_id, 0x6c62_272e_07bb_0142);
    let low = fnv1a(session_id, 0x9e37_79b9_7f4a_7c15);
    let span = fnv1a(session_id, 0x2545_f491_4f6c_dd1d).max(1);
    let trace = ((u128::from(high) << 64) | u128::from(low)).max(1);
    (
        TraceId::from_bytes(trace.to_be_bytes()),
        SpanId::from_bytes(span.to_be_bytes()),
    )
}

/// The derived `invoke_agent` span of `session_id`, as a sampled remote
/// parent.
pub(crate) fn derived_parent(session_id: &str) -> SpanContext {
    let (trace, span) = derived(session_id);
    SpanContext::new(
        trace,
        span,
        TraceFlags::SAMPLED,
        true,
        TraceState::default(),
    )
}

/// FNV-1a, 64 bits, from `seed` (stable across processes and builds).
fn fnv1a(text: &str, seed: u64) -> u64 {
    text.bytes()
        .fold(seed ^ 0xcbf2_9ce4_8422_2325, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
        })
}

thread_local! {
    /// The trace id the next root span started on this thread takes.
    static NEXT_TRACE: Cell<Option<TraceId>> = const { Cell::new(None) };
    /// The span id the next span started on this thread takes.
    static NEXT_SPAN: Cell<Option<SpanId>> = const { Cell::new(None) };
}

/// Random ids, except for a span started inside [`with_ids`].
#[derive(Debug, Default)]
pub(crate) struct Ids {
    random: RandomIdGenerator,
}

impl IdGenerator for Ids {
    fn new_trace_id(&self) -> TraceId {
        match NEXT_TRACE.with(Cell::take) {
            Some(trace) => trace,
            None => self.random.new_trace_id(),
        }
    }

    fn new_span_id(&self) -> SpanId {
        match NEXT_SPAN.with(Cell::take) {
            Some(span) => span,
            None => self.random.new_span_id(),
        }
    }
}

/// Runs `start` (which starts one root span) with that span's ids set to
/// `ids`.
pub(crate) fn with_ids<T>(ids: (TraceId, SpanId), start: impl FnOnce() -> T) -> T {
    NEXT_TRACE.with(|next| next.set(Some(ids.0)));
    NEXT_SPAN.with(|next| next.set(Some(ids.1)));
    let out = start();
    NEXT_TRACE.with(|next| next.set(None));
    NEXT_SPAN.with(|next| next.set(None));
    out
}
