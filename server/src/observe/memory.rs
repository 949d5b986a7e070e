//! The process's memory: mimalloc, and handing back what a burst of work no longer uses.
//!
//! mimalloc returns freed memory to the system only after a delay, and only when it is
//! next called on that thread or arena. A process that goes quiet after a large, short
//! allocation keeps it resident: an argon2id run holds 19 MiB, rendering the API
//! description several MB. So the places that make such bursts say when they are done.

// The request path allocates many small objects; the system allocator showed up as
// ~18 % of a list request's CPU in profiles (docs/benchmarks.md). Declared in the library,
// so the server and the tests linking it run on the same allocator.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Returns the memory this thread freed, and the arenas' pending purges, to the system
/// now. Costs a few hundred microseconds: for after rare, large work, not per request.
pub fn release_unused() {
    // SAFETY: mi_collect only walks mimalloc's own structures; any thread may call it.
    unsafe { libmimalloc_sys::mi_collect(true) }
}
