//! The `futexhash` binary: everything happens in [`futexhash::cli`].

fn main() -> std::process::ExitCode {
    futexhash::cli::run(std::env::args_os())
}
