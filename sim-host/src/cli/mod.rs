//! One module per subcommand.
pub mod targets;
