//! Progress events of a contract run, for a display (the CLI's progress
//! bars) or a log.

use std::sync::Arc;

use crate::report::ContractReport;

/// Something that happened while contracts run.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Progress {
    /// A contract's session is starting.
    Started {
        /// Contract name (file name without `.md`).
        name: String,
        /// Its title.
        title: String,
    },
    /// The model answered (one turn).
    Turn {
        /// Contract name.
        name: String,
        /// Turn number, from 1.
        turn: u32,
        /// The first tool the model called in this turn, if any.
        tool: Option<String>,
    },
    /// The session's cost so far.
    Cost {
        /// Contract name.
        name: String,
        /// USD (a lower bound when `unpriced_models` is not empty).
        cost_usd: f64,
        /// Models called whose cost is unknown.
        unpriced_models: Vec<String>,
    },
    /// A contract is finished (completed, failed or malformed).
    Finished(Box<ContractReport>),
}

/// A progress callback.
pub type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;
