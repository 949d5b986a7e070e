fn main() -> std::process::ExitCode {
    gable::cli::main()
}
