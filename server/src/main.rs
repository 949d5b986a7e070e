// mimalloc: the request path allocates many small objects; the system allocator
// showed up as ~18 % of a list request's CPU in profiles (docs/benchmarks.md).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    gable::cli::main()
}
