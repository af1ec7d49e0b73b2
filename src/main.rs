//! The `pcsim` binary: all of it is [`pcsim::cli::main`] (the library with its `cli` feature).

/// The program's allocator (feature `mimalloc`, on by default): replay's many small, short-lived
/// strings per logged call cost a fifth of its time under the system allocator, and its threads
/// contended in it. Declared here, not in the library, so a program using the library keeps its own.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    pcsim::cli::main()
}
