//! The defaults of a contract queue. The queue itself lives in PostgreSQL
//! (tascer-fleet, behind tascer-cli's `postgres` feature); its defaults are
//! here so that the command line reads the same ones in every build.

/// The queue name used when none is given.
pub const DEFAULT_QUEUE: &str = "default";

/// How many times a job is started before a worker's death fails it.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;
