//! The `pcsim` binary: all of it is [`pcsim::cli::main`] (the library with its `cli` feature).

fn main() -> std::process::ExitCode {
    pcsim::cli::main()
}
