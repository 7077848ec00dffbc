//! GDB's remote serial protocol spoken by hand, for tests that need no
//! gdb: packets with their checksums, acknowledgements, run-length
//! encoding undone.

use std::io::{Read, Write};
use std::net::TcpStream;

/// One remote-protocol packet, with its checksum.
pub fn send_packet(stream: &mut TcpStream, body: &str) {
    let sum = body.bytes().fold(0u8, u8::wrapping_add);
    write!(stream, "${body}#{sum:02x}").unwrap();
}

/// The stub's acknowledgement of the packet just sent: it has read it.
pub fn read_ack(stream: &mut TcpStream) {
    let mut byte = [0u8; 1];
    stream.read_exact(&mut byte).unwrap();
    assert_eq!(byte[0], b'+', "the stub acknowledges the packet");
}

/// The next packet's body as sent (acknowledging it).
pub fn read_packet(stream: &mut TcpStream) -> String {
    let mut text = Vec::new();
    let mut byte = [0u8; 1];
    while !text.ends_with(b"#") {
        stream.read_exact(&mut byte).unwrap();
        text.push(byte[0]);
    }
    let mut sum = [0u8; 2];
    stream.read_exact(&mut sum).unwrap();
    stream.write_all(b"+").unwrap();
    let start = text.iter().rposition(|&b| b == b'$').unwrap_or(0);
    String::from_utf8_lossy(&text[start + 1..text.len() - 1]).into_owned()
}

/// A body with its run-length encoding undone (`X*N`: X repeated N - 29
/// more times).
pub fn run_length_decoded(body: &str) -> String {
    let mut text = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '*' {
            text.push(c);
            continue;
        }
        let count = chars.next().map_or(0, |n| (n as usize).saturating_sub(29));
        let last = text.chars().last().expect("a repeated character");
        text.extend(std::iter::repeat_n(last, count));
    }
    text
}
