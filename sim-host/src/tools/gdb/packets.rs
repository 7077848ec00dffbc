//! Packets vetted before gdbstub sees them (issue 43): gdbstub ends the
//! session on an address wider than the target's (`m100000000,4`, `Z0,…`),
//! on a length that overflows (`m0,1ffffffffffffffff`) and on a `qRcmd`
//! whose argument is not hex; and it streams an `m` reply of any length,
//! chunk after chunk, appending an `E` code to the hex already sent when
//! the memory ends (the reply of `m0,ffffffff` was 275 KB and corrupt) and
//! wrapping the address past 2^32. Here such a packet is refused with an
//! error reply (EINVAL), and an `m` read is cut to what one reply may hold
//! (half the PacketSize: hex takes two characters a byte) and to the end
//! of the 32-bit address space, which the protocol allows (a reply may
//! hold fewer bytes than asked for).

/// The most bytes of a packet, from its `$` to its `#`: the PacketSize
/// the stub announces (gdbstub's 4096-byte buffer), enforced by the
/// session's reader (issue 30, N23: gdbstub's growable buffer held a
/// 200 MB packet whole).
pub const MAX_PACKET: usize = 4096;

/// The most bytes one `m` reply holds: its hex is the PacketSize.
pub const MAX_READ: u64 = MAX_PACKET as u64 / 2;

/// What becomes of a packet (its body: between `$` and `#`).
#[derive(Debug, PartialEq, Eq)]
pub enum Vetted {
    /// Given to gdbstub as it came.
    Pass,
    /// Given to gdbstub as this body instead.
    Rewrite(Vec<u8>),
    /// Answered here with this error reply, and never given to gdbstub.
    Refuse(&'static str),
}

/// The error reply of a refused packet: EINVAL.
pub const REFUSAL: &str = "E16";

pub fn vet(body: &[u8]) -> Vetted {
    match body.first() {
        Some(b'm') => read(&body[1..]),
        Some(b'M' | b'X') => addressed(&body[1..], b':'),
        Some(b'Z' | b'z') => breakpoint(&body[1..]),
        Some(b'q') if body.starts_with(b"qRcmd") => monitor(&body[5..]),
        _ => Vetted::Pass,
    }
}

/// A hex number; None if it has no digit or a non-hex one. Digits past
/// 64 bits saturate.
fn number(text: &[u8]) -> Option<u64> {
    if text.is_empty() {
        return None;
    }
    text.iter().try_fold(0u64, |n, &c| {
        let digit = char::from(c).to_digit(16)?;
        Some(
            n.checked_mul(16)
                .map_or(u64::MAX, |n| n.saturating_add(u64::from(digit))),
        )
    })
}

/// A 32-bit address, as gdbstub's targets take them.
fn address(text: &[u8]) -> Option<u32> {
    number(text).and_then(|a| u32::try_from(a).ok())
}

/// `m addr,length`: cut to one reply and to the end of the address space.
fn read(args: &[u8]) -> Vetted {
    let mut fields = args.splitn(2, |&c| c == b',');
    let (Some(addr), Some(length)) = (fields.next().and_then(address), fields.next()) else {
        return Vetted::Refuse(REFUSAL);
    };
    let Some(length) = number(length) else {
        return Vetted::Refuse(REFUSAL);
    };
    let to_the_end = (1u64 << 32) - u64::from(addr);
    let cut = length.min(MAX_READ).min(to_the_end);
    if cut == length && u32::try_from(length).is_ok() {
        return Vetted::Pass;
    }
    Vetted::Rewrite(format!("m{addr:x},{cut:x}").into_bytes())
}

/// `M addr,length:…` and `X addr,length:…`: a 32-bit address and a length
/// that ends within the address space.
fn addressed(args: &[u8], end: u8) -> Vetted {
    let head = args.split(|&c| c == end).next().unwrap_or(args);
    let mut fields = head.splitn(2, |&c| c == b',');
    let addr = fields.next().and_then(address);
    let length = fields.next().and_then(number);
    match (addr, length) {
        (Some(addr), Some(length)) if u64::from(addr) + length <= 1 << 32 => Vetted::Pass,
        _ => Vetted::Refuse(REFUSAL),
    }
}

/// `Z type,addr,kind` and `z …`: a 32-bit address and kind.
fn breakpoint(args: &[u8]) -> Vetted {
    let mut fields = args.split(|&c| c == b',');
    let _kind_of_point = fields.next();
    let addr = fields.next().and_then(address);
    let kind = fields
        .next()
        .map(|k| k.split(|&c| c == b';').next().unwrap_or(k))
        .and_then(address);
    match (addr, kind) {
        (Some(_), Some(_)) => Vetted::Pass,
        _ => Vetted::Refuse(REFUSAL),
    }
}

/// `qRcmd,hex`: the command must be whole bytes of hex.
fn monitor(args: &[u8]) -> Vetted {
    let hex = args.strip_prefix(b",").unwrap_or(args);
    if hex.len() % 2 == 0 && hex.iter().all(u8::is_ascii_hexdigit) {
        Vetted::Pass
    } else {
        Vetted::Refuse(REFUSAL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(body: &str) -> String {
        match vet(body.as_bytes()) {
            Vetted::Rewrite(b) => String::from_utf8(b).unwrap(),
            other => panic!("{body}: {other:?}"),
        }
    }

    #[test]
    fn reads_are_cut_to_one_reply_and_the_address_space() {
        assert_eq!(vet(b"m20000000,40"), Vetted::Pass);
        assert_eq!(vet(b"m20000000,800"), Vetted::Pass);
        assert_eq!(rewritten("m20000000,801"), "m20000000,800");
        assert_eq!(rewritten("m0,ffffffff"), "m0,800");
        assert_eq!(rewritten("m0,1ffffffffffffffff"), "m0,800");
        assert_eq!(rewritten("mfffffff0,100"), "mfffffff0,10");
        assert_eq!(rewritten("mffffffff,2"), "mffffffff,1");
        assert_eq!(vet(b"m100000000,4"), Vetted::Refuse(REFUSAL));
        assert_eq!(vet(b"m0"), Vetted::Refuse(REFUSAL));
        assert_eq!(vet(b"mzz,4"), Vetted::Refuse(REFUSAL));
        assert_eq!(vet(b"m0,"), Vetted::Refuse(REFUSAL));
    }

    #[test]
    fn writes_breakpoints_and_monitor_commands_are_refused_when_malformed() {
        assert_eq!(vet(b"M20000000,4:00000000"), Vetted::Pass);
        assert_eq!(vet(b"Mfffffffe,4:00000000"), Vetted::Refuse(REFUSAL));
        assert_eq!(vet(b"X100000000,0:"), Vetted::Refuse(REFUSAL));
        assert_eq!(vet(b"Z0,8000100,2"), Vetted::Pass);
        assert_eq!(vet(b"Z0,100000000,2"), Vetted::Refuse(REFUSAL));
        assert_eq!(vet(b"z1,0,1ffffffff"), Vetted::Refuse(REFUSAL));
        assert_eq!(vet(b"Z0,8000100,2;X1,0"), Vetted::Pass);
        assert_eq!(vet(b"qRcmd,6379636c6573"), Vetted::Pass);
        assert_eq!(vet(b"qRcmd,"), Vetted::Pass);
        assert_eq!(vet(b"qRcmd,zz"), Vetted::Refuse(REFUSAL));
        assert_eq!(vet(b"qRcmd,123"), Vetted::Refuse(REFUSAL));
        assert_eq!(vet(b"qSupported:multiprocess+"), Vetted::Pass);
        assert_eq!(vet(b"g"), Vetted::Pass);
    }
}
