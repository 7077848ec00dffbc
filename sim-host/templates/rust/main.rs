//! {{NAME}}: a FIR filter over blocks of samples, instrumented with the
//! ATOMIUM Record & Playback API through `arp-guest`. Section 2 is the
//! whole run; kernel 1 is one block (its loop index is the block number).
{{TIMER_DOC}}#![no_std]
#![no_main]

{{RUNTIME_USE}}

const BLOCKS: usize = 8;
const BLOCK: usize = 256;
const TAPS: usize = 16;
const COEFFICIENTS: [i32; TAPS] = [1, 3, 7, 12, 18, 23, 27, 29, 29, 27, 23, 18, 12, 7, 3, 1];
{{TIMER_ITEMS}}
#[inline(never)]
fn fir_block(input: &[i32], output: &mut [i32]) {
    for (i, out) in output.iter_mut().enumerate() {
        let window = &input[i..i + TAPS];
        let acc: i32 = window.iter().zip(COEFFICIENTS).map(|(x, c)| x * c).sum();
        *out = acc >> 8;
    }
}

#[entry]
fn main() -> ! {
    let mut input = [0i32; BLOCKS * BLOCK + TAPS];
    let mut output = [0i32; BLOCKS * BLOCK];
    for (i, x) in input.iter_mut().enumerate() {
        *x = ((i * 37) % 1024) as i32 - 512;
    }
{{TIMER_START}}    arp_guest::start(1, 2, arp_guest::Mode::RecordAverage);
    arp_guest::section(1, 2, 0, || {
        for (b, out) in output.chunks_mut(BLOCK).enumerate() {
            let first = b * BLOCK;
            let block_input = &input[first..first + BLOCK + TAPS];
            arp_guest::kernel(1, 1, b as i32, || fir_block(block_input, out));
        }
    });
    arp_guest::finish();
{{TIMER_REPORT}}    let checksum = output
        .iter()
        .fold(0u32, |c, x| c.wrapping_mul(31).wrapping_add(*x as u32));
    hprintln!("{{NAME}}: {} blocks filtered, checksum {:08x}", BLOCKS, checksum);
    {{EXIT}}
}
