//! What starting a real Slurm here needs: the programs and root. Shared by
//! the build script (`tests/build.rs`, which ignores the Slurm tests where
//! something is missing, unless `CI` is set) and the tests (which, under
//! `CI`, fail naming what is missing). Standard library only.

use std::path::PathBuf;

/// The programs the Slurm tests run: MUNGE's daemon and client, Slurm's
/// daemons and clients (Debian: munge, slurmctld, slurmd, slurm-client).
pub const PROGRAMS: [&str; 9] = [
    "munged",
    "munge",
    "slurmctld",
    "slurmd",
    "sbatch",
    "squeue",
    "scontrol",
    "scancel",
    "sinfo",
];

/// The absolute path of `program`: on `PATH`, else in the sbin folders
/// (where Debian puts the daemons, and which a user's `PATH` may lack).
pub fn find(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/bin", "/sbin", "/bin"].map(PathBuf::from))
        .map(|dir| dir.join(program))
        .find(|p| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// Whether this process runs as root (the daemons run as root, with
/// `SlurmUser=root`, and slurmd starts jobs as their submitter).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().next())
            == Some("0")
    })
}

/// Why a Slurm cannot be started here, or `None` when it can.
pub fn missing() -> Option<String> {
    let mut reasons = Vec::new();
    let absent: Vec<&str> = PROGRAMS.into_iter().filter(|p| find(p).is_none()).collect();
    if !absent.is_empty() {
        reasons.push(format!(
            "not installed: {} (scripts/bootstrap.sh installs munge, slurmctld, slurmd and slurm-client)",
            absent.join(", ")
        ));
    }
    if !is_root() {
        reasons.push("not root (the daemons run as root: SlurmUser=root)".to_owned());
    }
    (!reasons.is_empty()).then(|| reasons.join("; "))
}
