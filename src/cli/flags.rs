//! Flag blocks shared by several commands, each one `#[command(flatten)]` struct.

/// `--runs N` and `--seed S`, the Monte Carlo flags of `run`, `compare`, `whatif`, `advise` and
/// `diff`. Each command words the help of `--runs` (and `diff` that of `--seed`) for what it does
/// with the runs, with `#[command(mut_arg("runs", ...))]` on its own arguments.
#[derive(Debug, clap::Args, Default, Clone, Copy)]
pub(crate) struct MonteCarloArgs {
    /// Monte Carlo: simulate N runs (default: the scenario's `runs`, else 1).
    #[arg(long, value_name = "N")]
    pub runs: Option<u64>,
    /// Seed of the random draws (default: the scenario's `seed`).
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
}
