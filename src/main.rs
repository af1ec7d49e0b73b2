//! The `pcsim` binary: all of it is [`pcsim::cli::main`] (the library with its `cli` feature), on
//! mimalloc (feature `mimalloc`, on by default).

/// The program's allocator: replay's many small, short-lived strings per logged call cost a fifth
/// of its time under the system allocator, and its threads contended in it. Declared here, not in
/// the library, so a program using the library keeps its own.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Memory freed is given back to the system at once (mimalloc's `purge_delay` 0, by default 1 s):
/// a command like `run` frees the catalog's and the tokenizer's working memory and allocates in
/// other sizes after it, and with the delay both stayed resident (20.1 MB peak for `run` against
/// 16.8 MB on the system allocator; 17.3 MB at once). Replay's throughput is the same either way
/// (`pcsim bench`).
#[cfg(feature = "mimalloc")]
fn give_freed_memory_back_at_once() {
    /// `mi_option_purge_delay` in mimalloc.h's `mi_option_t` (mimalloc keeps the numbering of its
    /// options: retired ones keep their place as `deprecated_`); the `mimalloc` crate binds no name
    /// for it.
    const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;
    extern "C" {
        fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
    }
    // SAFETY: mi_option_set only stores an option's value (mimalloc.h); 15 is an option of the
    // linked mimalloc (v3, pinned by Cargo.lock).
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, 0) }
}

fn main() -> std::process::ExitCode {
    #[cfg(feature = "mimalloc")]
    give_freed_memory_back_at_once();
    pcsim::cli::main()
}
