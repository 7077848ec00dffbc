//! arpsim: the ARP record & playback engine (in progress).
