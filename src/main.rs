//! The `chatparse` binary; everything lives in [`chatparse::cli`].

fn main() -> std::process::ExitCode {
    chatparse::cli::run()
}
