//! The `futexhash` binary: everything happens in [`futexhash::cli`].

fn main() -> std::process::ExitCode {
    // Run as a C hasher's probe child (before the hasher may be loaded into a run), this
    // probes and exits; otherwise it returns at once.
    futexhash::hashers::external::serve_probe_child();
    futexhash::cli::run(std::env::args_os())
}
