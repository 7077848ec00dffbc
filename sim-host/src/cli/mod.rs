//! One module per subcommand.
pub mod arp;
pub mod run;
pub mod sir;
pub mod suite;
pub mod targets;
