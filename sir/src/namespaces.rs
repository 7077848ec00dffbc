//! Namespace URIs that modules below the dialects and `arp` need too: the
//! error messages name Periscope's, the reader checks `arp:name`. They are
//! defined here, under every module that names them, and exported where
//! they belong ([`crate::periscope::NAMESPACE`], [`crate::arp::ARP_NS`]).

/// The target namespace of the Periscope schema (`elementFormDefault` is
/// `qualified`: every element is in it; attributes are unqualified).
pub const PERISCOPE: &str = "http://www.lrr.in.tum.de/Periscope";

/// Namespace of the ARP attributes on section regions.
pub const ARP: &str = "urn:arpsim:arp";
