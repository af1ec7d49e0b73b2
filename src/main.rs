//! The `pcsim` binary: all of it is [`pcsim::cli::main`] (the library with its `cli` feature), on
//! mimalloc (feature `mimalloc`, on by default).

/// The program's allocator: replay's many small, short-lived strings per logged call cost a fifth
/// of its time under the system allocator, and its threads contended in it. Declared here, not in
/// the library, so a program using the library keeps its own.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Memory freed is given back to the system after 5 ms (mimalloc's `purge_delay`, by default 1 s).
/// A short command like `run` frees the catalog's and the tokenizer's working memory early and
/// allocates in other sizes after it; held for a second, both stayed resident (median peak RSS of
/// `pcsim run` 20.1 MiB, against 16.75 MiB on the system allocator; 18.2 MiB at 5 ms, 17.4 at 0).
/// At 0, commands that free and allocate again in bulk paid for it in system time (`fit` on a 1 GB
/// folder: 1.24 s at 1 s, 3.3 s at 0, 1.9-2.0 s at 5 ms). What 5 ms costs: memory given back is
/// faulted in again (`run --runs 20000`: twice the page faults of 1 s, 0.151 s against 0.144 s);
/// replay is within noise of 1 s (README "Speed" has the measurements).
#[cfg(feature = "mimalloc")]
fn give_freed_memory_back_soon() {
    /// `mi_option_purge_delay` in mimalloc.h's `mi_option_t` (mimalloc keeps the numbering of its
    /// options: retired ones keep their place as `deprecated_`); the `mimalloc` crate binds no name
    /// for it.
    const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;
    extern "C" {
        fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
    }
    // SAFETY: mi_option_set only stores an option's value (mimalloc.h); 15 is an option of the
    // linked mimalloc (v3, pinned by Cargo.lock).
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, 5) }
}

fn main() -> std::process::ExitCode {
    #[cfg(feature = "mimalloc")]
    give_freed_memory_back_soon();
    pcsim::cli::main()
}
