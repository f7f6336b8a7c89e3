//! The tools' handlers, one module per tool (the audit tools share one):
//! each is a method of the shared [`Server`](crate::server::Server) that
//! takes the call's arguments and returns its result.

mod audit;
mod chain;
pub(crate) mod check;
mod commit;
pub(crate) mod confirm;
mod intent;
mod push;
