//! Workflow runs beyond the operations (`ops::workflow_runs`): the response shapes, the engine
//! glue that settles runs on the platform clock and records their completion as activity, the
//! control-plane plans that create runs, and the signed log downloads.
pub mod engine;
pub mod logs;
pub mod plan;
pub mod shapes;
mod zip;
