//! One module per subcommand.
pub mod arp;
pub mod new;
pub mod run;
pub mod sdk;
pub mod sir;
pub mod suite;
pub mod targets;

/// An error with its causes, each once (`arpsim::error::causes_once`).
pub fn error_text(e: &anyhow::Error) -> String {
    arpsim::error::causes_once(e.as_ref())
}

#[cfg(test)]
mod tests {
    use super::error_text;

    #[test]
    fn causes_are_kept_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        // a message that already quotes its cause
        let quoted = anyhow::Error::new(io).context("x.elf: cannot read: no such file");
        assert_eq!(error_text(&quoted), "x.elf: cannot read: no such file");
        // a context that does not: the cause is added
        let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "permission denied");
        let wrapped = anyhow::Error::new(io).context("writing the profile p.sir");
        assert_eq!(
            error_text(&wrapped),
            "writing the profile p.sir: permission denied"
        );
    }
}
