//! A run from start to end: limits checked, the engine created with the
//! target's CPU model and memory, the guest loaded, hooks installed, the
//! threads scheduled, the outcome gathered; again after a debugger's reset.

use super::api::{uc, Counting, MachineError, Observer, RunOutcome, Stop};
use super::block_hook::BlockHook;
use super::blocks::BlockCache;
use super::debug::DebugSession;
use super::exceptions::install_exception_hooks;
use super::intercept::install_interception;
use super::memory::map_memory;
use super::options::ChargePath;
use super::options::RunOptions;
use super::peripherals;
use super::pricing::{dynamic_sites, unpriced_block};
use super::registers::{operand_regs, read_regs32, regs};
use super::schedule::run_threads;
use super::state::CoreSystem;
use super::state::{
    stop_with, Clock, DebugMarks, Ending, GuestIo, Limits, State, Threads, Uc, UnpricedLog,
};
use super::state::{CounterOffsets, MmioCursor};
use super::stop::{outcome, stop_of};
use super::thread_calls::heap_end;
use super::trail::BlockTrail;
use super::translation_charge::TranslationCharge;
use crate::host::arp_host::ArpHost;
use crate::host::expected::{ExpectedOutput, OutputCheck};
use crate::host::sandbox::Sandbox;
use crate::host::scs::Scs;
use crate::host::semihost::{HostConsole, Semihost};
use crate::host::threads::Scheduler;
use crate::image::elf::GuestImage;
use crate::model::cycles::{self, DynamicSite};
use crate::model::decode::Decoder;
use crate::model::limits::{MAX_CORES, MAX_THREAD_STACK, MIN_THREAD_STACK};
use crate::model::peripherals::PeripheralMap;
use crate::model::target::{Arch, Target, PAGE_SIZE};
use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;
use std::sync::atomic::AtomicI32;
use std::sync::Arc;
use std::time::Instant;
use unicorn_engine::unicorn_const::{Arch as UcArch, HookType, MemType, Mode as UcMode};
use unicorn_engine::{ArmCpuModel, Riscv32CpuModel, Unicorn};
use unicorn_engine_sys::{uc_ctl, uc_error, ControlType};

/// Loads the image into a fresh machine and runs it to the end.
pub fn run(
    image: GuestImage,
    target: Target,
    mut options: RunOptions,
) -> Result<RunOutcome, MachineError> {
    check_limits(&options, &target)?;
    // a debugger interrupts through the stop flag: a run it controls has
    // one, kept across resets
    if options.debugger.is_some() && options.interrupt.is_none() {
        options.interrupt = Some(Arc::new(AtomicI32::new(0)));
    }
    // Plugin callbacks cannot be interrupted: a watchdog ends a run whose
    // callback hangs past its timeout or a stop signal.
    let _watchdog = (!options.arp.plugins.is_empty()).then(|| {
        crate::host::plugin::watchdog::Watchdog::start(
            options.timeout.map(|t| Instant::now() + t),
            options.interrupt.clone(),
        )
    });
    let image = Rc::new(image);
    let target = Rc::new(target);
    // --timeout counts the set-up too (issue 30, N09)
    let begun = Instant::now();
    loop {
        if let Some(outcome) = run_once(Rc::clone(&image), Rc::clone(&target), &options, begun)? {
            return Ok(outcome);
        }
        // the debugger reset the guest: observers start from nothing too
        for o in &options.observers {
            o.borrow_mut().reset();
        }
    }
}

/// Checks a run's resource requests before anything is allocated.
pub(super) fn check_limits(options: &RunOptions, target: &Target) -> Result<(), MachineError> {
    let limit = |what: &str, message: String| MachineError::Setup {
        what: what.into(),
        message,
    };
    let cores = options.cores.unwrap_or(target.cores as usize);
    if !(1..=MAX_CORES).contains(&cores) {
        return Err(limit(
            "cores",
            format!("{cores}: expected 1 to {MAX_CORES} simulated cores"),
        ));
    }
    if let Some(stack) = options.thread_stack {
        if !(MIN_THREAD_STACK..=MAX_THREAD_STACK).contains(&stack) {
            return Err(limit(
                "thread stack",
                format!("{stack} bytes: expected {MIN_THREAD_STACK} to {MAX_THREAD_STACK}"),
            ));
        }
    }
    Ok(())
}

/// Guest threads switch after this many cycles ahead of the next thread.
pub(super) const THREAD_QUANTUM: u64 = 2_000;

/// One run from the first instruction; `None` if a debugger reset it.
pub(super) fn run_once(
    image: Rc<GuestImage>,
    target: Rc<Target>,
    options: &RunOptions,
    begun: Instant,
) -> Result<Option<RunOutcome>, MachineError> {
    let arch = target.arch;
    let decoder = Decoder::new(arch)?;
    let dynamic = dynamic_sites(&image, &target, &decoder);
    let state = new_state(&image, &target, options, decoder)?;
    let mut emu = create_engine(state, &target, &image)?;
    if options.peripherals.ignore {
        peripherals::map_ignored(&mut emu, &target)?;
    }
    install_interception(&mut emu, &image, options)?;
    if options.counting != Counting::Off {
        super::tasks::install(&mut emu, &image)?;
    }
    let debug_dynamic = options.debugger.as_ref().map(|_| dynamic.clone());
    // kept until the run ends: the block hook is removed when dropped
    let _block_hook = install_cycle_hooks(&mut emu, dynamic, options.counting)?;
    // kept until the run ends, as the block hook
    let _model_hooks = match options.counting {
        Counting::Off => Vec::new(),
        _ => super::model_hooks::install(&emu)?,
    };
    let _translation_charge = install_translation_charge(&mut emu, options)?;
    install_observers(&mut emu, &options.observers)?;
    install_exception_hooks(&mut emu, &image, &target, options.counting)?;
    // kept until the run ends: the callback is removed when dropped
    let _lazy_fp = super::fp_context::install(&mut emu);

    let (sp, entry) = reset_state(&image, &target);
    let r = regs(arch);
    let thumb = u64::from(arch == Arch::Arm);
    uc("set SP", emu.reg_write(r.sp, sp))?;
    uc("set PC", emu.reg_write(r.pc, entry | thumb))?;
    let mut debug = match (&options.debugger, options.interrupt.clone()) {
        (Some(debugger), Some(interrupt)) => Some(DebugSession::new(
            &emu,
            Rc::clone(debugger),
            debug_dynamic.as_deref().unwrap_or_default(),
            interrupt,
        )),
        _ => None,
    };
    let started = Instant::now();
    let (result, paused) = run_threads(&mut emu, options, &mut debug, begun)?;
    if emu.get_data().debug.reset {
        return Ok(None);
    }
    let host_time = started.elapsed().saturating_sub(paused);
    if emu.get_data().end.stop.is_none() {
        let stop = stop_of(&mut emu, result, &target);
        emu.get_data_mut().end.stop = Some(stop);
    }
    if let (Some(session), Some(stop)) = (&debug, emu.get_data().end.stop.clone()) {
        session.ended(&stop);
    }
    Ok(Some(outcome(&mut emu, &image, host_time)))
}

/// The state the hooks share, for a run from the first instruction.
pub(super) fn new_state(
    image: &Rc<GuestImage>,
    target: &Rc<Target>,
    options: &RunOptions,
    decoder: Decoder,
) -> Result<State, MachineError> {
    let max_cycles = options.max_cycles.unwrap_or(u64::MAX);
    Ok(State {
        arch: target.arch,
        target: Rc::clone(target),
        image: Rc::clone(image),
        decoder,
        cache: BlockCache::new(),
        clock: Clock {
            prev_fallthrough: u64::MAX,
            ..Clock::default()
        },
        limits: Limits {
            max_cycles,
            limit: max_cycles,
            slice_limit: max_cycles,
            next_event: u64::MAX,
            interrupt: options.interrupt.clone(),
            timeout: options.timeout,
            progress: options.progress.clone(),
        },
        trail: BlockTrail::default(),
        io: guest_io(image, target, options)?,
        arp: ArpHost::new(options.arp.clone()).stopped_by(
            options.interrupt.clone(),
            options.timeout.map(|t| Instant::now() + t),
        ),
        threads: new_threads(image, target, options),
        end: Ending::default(),
        debug: DebugMarks::default(),
        system: target
            .system
            .core
            .clone()
            .filter(|_| target.arch == Arch::Arm)
            .map(|facts| {
                let mut scs = Scs::new(facts);
                scs.reset_vtor(vector_table(image, target) as u32);
                let mut system = CoreSystem::new(scs);
                system.observed = (!options.observers.is_empty()).then(Vec::new);
                Box::new(system)
            }),
        counter_offsets: CounterOffsets::default(),
        mmio: MmioCursor::default(),
        peripherals: peripherals::state(
            PeripheralMap::new(&target.system.peripherals, &options.peripherals.svd),
            options.peripherals.ignore,
        ),
        machine_timer: super::machine_timer::state(target),
        riscv_interrupted: None,
        ebreak_taken: false,
        predictor: target
            .predictor
            .as_ref()
            .map(crate::model::predictor::Predictor::new),
        flash: super::flash::state(target),
        call_registers: None,
        memory_observed: Default::default(),
        l1cache: super::l1cache::state(target),
        xip: super::xip::state(target),
        unpriced: UnpricedLog {
            allow: options.allow_unpriced,
            ..Default::default()
        },
        power: Default::default(),
        tasks: super::state::TaskTracker::new(crate::image::rtos::freertos(image)),
        devices: super::devices::state(target),
        core_clock: crate::model::clocks::ClockTimeline::new(target.clock_hz),
    })
}

/// Semihosting beneath `--fs-root`, and the console.
fn guest_io(
    image: &GuestImage,
    target: &Target,
    options: &RunOptions,
) -> Result<GuestIo, MachineError> {
    let heap = [
        image.symbol("__heap_start").unwrap_or(0) as u32,
        image.symbol("__heap_end").unwrap_or(0) as u32,
        image.symbol("__stack").unwrap_or(0) as u32,
        image.symbol("__heap_end").unwrap_or(0) as u32,
    ];
    let root = options.fs_root.as_deref();
    let sandbox = Sandbox::new(root).map_err(|e| MachineError::Setup {
        what: format!("--fs-root {}", root.unwrap_or(Path::new("")).display()),
        message: e.to_string(),
    })?;
    let check = options
        .expect_output
        .as_ref()
        .map(OutputCheck::open)
        .transpose()
        .map_err(|e| MachineError::Setup {
            what: match &options.expect_output {
                Some(ExpectedOutput::File(p)) => format!("--expect-output {}", p.display()),
                _ => "the expected output".into(),
            },
            message: e.to_string(),
        })?;
    Ok(GuestIo {
        semihost: Semihost::new(sandbox, options.cmdline.clone(), target.clock_hz, heap),
        console: HostConsole {
            check,
            echo: options.echo,
            deadline: options.timeout.map(|t| Instant::now() + t),
            interrupt: options.interrupt.clone(),
            ..Default::default()
        },
    })
}

/// The main thread alone, and where the stacks of the threads it creates
/// will be carved from.
fn new_threads(image: &GuestImage, target: &Target, options: &RunOptions) -> Threads {
    Threads {
        sched: Scheduler::new(
            options.cores.unwrap_or(target.cores as usize),
            THREAD_QUANTUM,
        ),
        current: 0,
        current_core: 0,
        contexts: Default::default(),
        // The heap ends where the main stack's reserve begins (picolibc's
        // script only PROVIDEs __heap_end, so compute it); it starts after .bss.
        next_stack_top: heap_end(image) & !(PAGE_SIZE - 1),
        stack_floor: image
            .symbol("__heap_start")
            .or_else(|| image.symbol("__bss_end"))
            .unwrap_or(u64::MAX),
        stack_size: options
            .thread_stack
            .unwrap_or(8 * 1024)
            .next_multiple_of(PAGE_SIZE),
        guards: Vec::new(),
        stacks: HashMap::new(),
        free_stacks: Vec::new(),
        exit: image.function("simthread_exit").map_or(0, |f| f.addr),
    }
}

/// The engine with the target's CPU model and memory, the guest loaded.
pub(super) fn create_engine(
    state: State,
    target: &Target,
    image: &GuestImage,
) -> Result<Uc<'static>, MachineError> {
    let arch = target.arch;
    let (uc_arch, uc_mode) = match arch {
        // Not Mode::MCLASS: Unicorn 2.1.5 then forces a Cortex-M33 whatever
        // model is asked for. The M-profile comes from the CPU model.
        Arch::Arm => (UcArch::ARM, UcMode::THUMB),
        Arch::Riscv => (UcArch::RISCV, UcMode::RISCV32),
    };
    let mut emu: Uc<'static> = uc(
        "create engine",
        Unicorn::new_with_data(uc_arch, uc_mode, state),
    )?;
    // The CPU model and the translation buffer must be set before
    // anything initialises the engine.
    uc("set CPU model", emu.ctl_set_cpu_model(cpu_model(target)?))?;
    uc(
        "set the translation buffer",
        set_translation_buffer(&mut emu, TRANSLATION_BUFFER),
    )?;
    map_memory(&mut emu, target)?;
    super::scs::map(&mut emu)?;
    super::machine_timer::map(&mut emu)?;
    super::devices::map(&mut emu, target)?;
    super::xip::map(&mut emu)?;
    for seg in &image.segments {
        uc(
            &format!("load segment {}", seg.index),
            emu.mem_write(seg.load_addr, &seg.data),
        )?;
    }
    super::xip::load_aliases(&mut emu, image)?;
    super::flash::load_mirror(&mut emu, image)?;
    Ok(emu)
}

/// Bytes of host code Unicorn keeps for translated guest blocks; when it is
/// full, the translations are flushed and made again as the guest runs
/// (issue 30, N12: Unicorn's default, 1 GiB on 64-bit hosts, let a guest
/// that rewrites its code grow the host's memory by that much). A
/// microcontroller program's code translates to a few MiB.
pub const TRANSLATION_BUFFER: u32 = 32 << 20;

/// Sets the size of Unicorn's translation buffer (`uc_ctl`
/// `UC_CTL_TCG_BUFFER_SIZE`, which the crate does not wrap); only before
/// the engine is initialised.
fn set_translation_buffer(emu: &mut Uc<'static>, bytes: u32) -> Result<(), uc_error> {
    // UC_CTL_WRITE(UC_CTL_TCG_BUFFER_SIZE, 1): the type, one argument, a write
    const TCG_BUFFER_SIZE: u32 = 13;
    let control = ControlType(TCG_BUFFER_SIZE | (1 << 26) | (1 << 30));
    // SAFETY: the handle is this live engine's; the control takes one
    // uint32_t argument, which is what is passed.
    let err = unsafe { uc_ctl(emu.get_handle(), control, bytes) };
    if err == uc_error::OK {
        Ok(())
    } else {
        Err(err)
    }
}

pub(super) fn cpu_model(target: &Target) -> Result<i32, MachineError> {
    let unknown = || MachineError::UnknownCpu {
        target: target.name.clone(),
        cpu: target.cpu.clone(),
    };
    Ok(match (target.arch, target.cpu.as_str()) {
        (Arch::Arm, "cortex-m0") => ArmCpuModel::CORTEX_M0 as i32,
        (Arch::Arm, "cortex-m3") => ArmCpuModel::CORTEX_M3 as i32,
        (Arch::Arm, "cortex-m4") => ArmCpuModel::CORTEX_M4 as i32,
        (Arch::Arm, "cortex-m7") => ArmCpuModel::CORTEX_M7 as i32,
        (Arch::Arm, "cortex-m33") => ArmCpuModel::CORTEX_M33 as i32,
        (Arch::Riscv, "sifive-e31") => Riscv32CpuModel::SIFIVE_E31 as i32,
        (Arch::Riscv, "rv32") => Riscv32CpuModel::ANY as i32,
        _ => return Err(unknown()),
    })
}

/// Where an M-profile core finds its vector table at reset: address 0, or
/// where the program's table starts when nothing is at 0 (the reset VTOR
/// of a part whose boot puts it there: RP2040's boot ROM, AN505's SVTOR,
/// an STM32's flash). The table is the first of 0 and the loaded segments'
/// starts, lowest first, that holds an initial stack pointer in RAM and a
/// reset handler that is a function; cortex-m-rt puts it in a read-only
/// segment of its own, before the executable one. A segment that starts
/// with an RP2040 second-stage boot is entered as that boot enters it,
/// through the table after it ([`after_boot2`]). Without one: 0, or the
/// lowest executable segment.
fn vector_table(image: &GuestImage, target: &Target) -> u64 {
    let mut starts: Vec<u64> = image.segments.iter().map(|s| s.load_addr).collect();
    starts.sort_unstable();
    let starts = starts
        .into_iter()
        .flat_map(|at| after_boot2(image, at).into_iter().chain([at]));
    std::iter::once(0)
        .chain(starts)
        .find(|&at| table_at(image, target, at).is_some())
        .unwrap_or_else(|| {
            if image.bytes_at(0, 8).is_some() {
                return 0;
            }
            image
                .segments
                .iter()
                .filter(|s| s.executable)
                .map(|s| s.load_addr)
                .min()
                .unwrap_or(0)
        })
}

/// The RP2040's second-stage boot: the boot ROM runs the flash's first
/// 256 bytes only if their last word is the CRC-32 of the 252 before it
/// (RP2040 datasheet 2.8.1.3.1, "Checksum"; polynomial
/// 0x04c11db7, initial value 0xffffffff, no reflection, no final XOR, as
/// pico-sdk's src/rp2040/boot_stage2/pad_checksum writes it), and a
/// boot2 ends by pointing VTOR at XIP_BASE + 0x100 and entering through
/// that table (pico-sdk boot_stage2/asminclude/boot2_helpers/
/// exit_from_boot2.S, `vector_into_flash`). The rp2040 preset starts as
/// boot2 leaves the flash, so a program whose segment at `at` starts
/// with such a block (an rp2040-hal firmware's `.boot2`) has its table at
/// `at + 0x100`.
fn after_boot2(image: &GuestImage, at: u64) -> Option<u64> {
    const BOOT2: u64 = 256;
    let block = image.bytes_at(at, BOOT2 as usize)?;
    let (code, check) = block.split_at(252);
    let check = u32::from_le_bytes(check.try_into().ok()?);
    (crc32_mpeg2(code) == check).then_some(at + BOOT2)
}

/// CRC-32 with polynomial 0x04c11db7, initial value 0xffffffff, no
/// reflection and no final XOR (the boot ROM's, see [`after_boot2`]).
fn crc32_mpeg2(bytes: &[u8]) -> u32 {
    let mut crc = u32::MAX;
    for &byte in bytes {
        crc ^= u32::from(byte) << 24;
        for _ in 0..8 {
            crc = if crc & 0x8000_0000 != 0 {
                crc << 1 ^ 0x04c1_1db7
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// The initial stack pointer and reset handler of a vector table at `at`,
/// if it looks like one: the stack pointer in (or just past) a writable
/// region, the handler a function.
fn table_at(image: &GuestImage, target: &Target, at: u64) -> Option<(u64, u64)> {
    let word = |a| {
        let bytes = image.bytes_at(a, 4)?;
        Some(u64::from(u32::from_le_bytes(bytes.try_into().ok()?)))
    };
    let (sp, pc) = (word(at)?, word(at + 4)?);
    let sp_in_ram = target
        .regions
        .iter()
        .any(|r| r.access.write && sp > r.start && sp <= r.end());
    (sp_in_ram && image.function_at(pc & !1).is_some()).then_some((sp, pc & !1))
}

/// Initial stack pointer and entry: from the vector table on M-profile
/// cores (as the hardware does at reset: see [`vector_table`]), else the
/// ELF entry and the top of the highest RAM region.
pub(super) fn reset_state(image: &GuestImage, target: &Target) -> (u64, u64) {
    let ram_top = target
        .regions
        .iter()
        .filter(|r| r.access.write)
        .map(|r| r.end())
        .max()
        .unwrap_or(0);
    if target.arch == Arch::Arm {
        if let Some(reset) = table_at(image, target, vector_table(image, target)) {
            return reset;
        }
    }
    (ram_top, image.entry & !1)
}

/// Charges a data-dependent instruction from its operands' values.
fn charge_dynamic(uc: &mut Uc<'_>, site: &DynamicSite, operands: &[i32; 2]) {
    match read_regs32(uc, operands) {
        Ok([a, b, ..]) => {
            uc.get_data_mut().clock.cycles += u64::from(cycles::dynamic_extra(site, a, b));
        }
        Err(e) => stop_with(
            uc,
            Stop::Internal(format!(
                "cannot read the operands of the instruction at {:#010x}: {e:?}",
                site.addr
            )),
        ),
    }
}

/// The hooks that count cycles: data-dependent instructions, and the
/// block hook (or, to measure it against, a hook per instruction).
pub(super) fn install_cycle_hooks(
    emu: &mut Uc<'static>,
    dynamic: Vec<DynamicSite>,
    counting: Counting,
) -> Result<Option<BlockHook>, MachineError> {
    let arch = emu.get_data().arch;
    for site in dynamic.into_iter().filter(|_| counting == Counting::Blocks) {
        let operands = operand_regs(arch, &site).ok_or_else(|| MachineError::Setup {
            what: format!("the data-dependent instruction at {:#010x}", site.addr),
            message: format!("operand registers {:?} do not exist", site.operands),
        })?;
        uc(
            "hook data-dependent instruction",
            emu.add_code_hook(site.addr, site.addr, move |uc: &mut Uc<'_>, _, _| {
                charge_dynamic(uc, &site, &operands)
            }),
        )?;
    }

    if counting == Counting::PerInstruction {
        // One cost per instruction address, decoded once; no pipeline or
        // taken-branch modelling (it exists to measure the hook's cost).
        let mut costs: HashMap<u64, u32> = HashMap::new();
        uc(
            "instruction hook",
            emu.add_code_hook(1, 0, move |uc: &mut Uc<'_>, addr, size| {
                let cost = match costs.get(&addr) {
                    Some(c) => *c,
                    None => {
                        let mut code = vec![0u8; size as usize];
                        let _ = uc.mem_read(addr, &mut code);
                        let st = uc.get_data();
                        let insns = st.decoder.decode(&code, addr, false).unwrap_or_default();
                        let block = cycles::price_block(&st.target, &insns, 0);
                        if !block.unpriced.is_empty() {
                            unpriced_block(uc, addr, &code, &block.unpriced);
                        }
                        costs.insert(addr, block.cycles);
                        block.cycles
                    }
                };
                let st = uc.get_data_mut();
                st.clock.cycles += u64::from(cost);
                st.clock.instructions += 1;
                if st.clock.cycles >= st.limits.max_cycles {
                    let limit = st.limits.max_cycles;
                    stop_with(uc, Stop::CycleLimit(limit));
                }
            }),
        )?;
    }

    if counting == Counting::Blocks {
        return Ok(Some(uc("block hook", BlockHook::install(emu))?));
    }
    Ok(None)
}

/// The charge in the translation, when the run takes that path: not with
/// observers (their block hook sees every block) or a debugger (its
/// breakpoints are block hooks), where the block hook charges every block.
/// A branch predictor is resolved by the translated code's entry call.
fn install_translation_charge(
    emu: &mut Uc<'static>,
    options: &RunOptions,
) -> Result<Option<TranslationCharge>, MachineError> {
    let path = options.charge.unwrap_or_else(ChargePath::from_env);
    if path != ChargePath::Translation
        || options.counting != Counting::Blocks
        || !options.observers.is_empty()
        || options.debugger.is_some()
    {
        return Ok(None);
    }
    Ok(Some(uc(
        "charge in the translation",
        TranslationCharge::install(emu),
    )?))
}

/// Tells the observers of the exceptions entered and returned from since
/// the last block; returns whether the block at `addr` was skipped (an
/// exception taken in front of it: it runs after the handler).
fn exceptions_observed(uc: &mut Uc<'_>, addr: u64, observers: &[Observer]) -> bool {
    let Some(events) = uc
        .get_data_mut()
        .system
        .as_mut()
        .and_then(|s| s.observed.as_mut())
    else {
        return false;
    };
    if events.is_empty() {
        return false;
    }
    let mut skipped = false;
    let events = std::mem::take(events);
    let clock = uc.get_data().clock.observed;
    for e in &events {
        skipped |= e.skipped == Some(addr);
        for o in observers {
            o.borrow_mut().exception(e.event);
            if let Some(thread) = e.task {
                o.borrow_mut().thread(thread, clock);
            }
        }
    }
    skipped
}

/// Observers see every block after it is charged (a second block hook:
/// hooks run in the order they were added), and memory accesses.
pub(super) fn install_observers(
    emu: &mut Uc<'static>,
    observers: &[Observer],
) -> Result<(), MachineError> {
    if !observers.is_empty() {
        let all = observers.to_vec();
        uc(
            "observer block hook",
            emu.add_block_hook(1, 0, move |uc: &mut Uc<'_>, addr, _size| {
                if exceptions_observed(uc, addr, &all) {
                    return;
                }
                let st = uc.get_data_mut();
                let price = st.cache.get(addr as u32);
                let (before, after) = (st.clock.observed, st.clock.cycles);
                st.clock.observed = after;
                let instructions = price.map_or(0, |p| p.instructions);
                let memory = st.memory_counters().map(|now| {
                    let then = std::mem::replace(&mut st.memory_observed, now);
                    now.since(then)
                });
                for o in &all {
                    let mut o = o.borrow_mut();
                    if let Some(since_last) = memory {
                        o.memory_system(since_last);
                    }
                    o.block(addr, instructions, before, after);
                }
            }),
        )?;
        let memory: Vec<Observer> = observers
            .iter()
            .filter(|o| o.borrow().wants_memory())
            .cloned()
            .collect();
        if !memory.is_empty() {
            uc(
                "observer memory hook",
                emu.add_mem_hook(
                    HookType::MEM_READ | HookType::MEM_WRITE,
                    1,
                    0,
                    move |uc: &mut Uc<'_>, kind, addr, size, _| {
                        let pc = uc.pc_read().unwrap_or(0);
                        let write = kind == MemType::WRITE;
                        for o in &memory {
                            o.borrow_mut().memory(pc, addr, size, write);
                        }
                        true
                    },
                ),
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The catalogue's check value of CRC-32/MPEG-2 (the boot ROM's CRC):
    /// "123456789" gives 0x0376e6e7.
    #[test]
    fn the_boot_rom_crc_is_crc32_mpeg2() {
        assert_eq!(crc32_mpeg2(b"123456789"), 0x0376_e6e7);
    }

    /// One flash segment holding a boot2 block, the vector table after
    /// it and the reset handler (as a GNU ld link of boot2 and the
    /// program into one segment gives); `checked` seals the block with
    /// the boot ROM's CRC.
    fn one_segment(checked: bool) -> GuestImage {
        let mut data = vec![0u8; 0x200];
        data[..4].copy_from_slice(&0x4b32_b500u32.to_le_bytes());
        let crc = crc32_mpeg2(&data[..252]) ^ u32::from(!checked);
        data[252..256].copy_from_slice(&crc.to_le_bytes());
        data[0x100..0x104].copy_from_slice(&0x2004_0000u32.to_le_bytes());
        data[0x104..0x108].copy_from_slice(&0x1000_01c1u32.to_le_bytes());
        GuestImage {
            file: "boot2.elf".into(),
            arch: Arch::Arm,
            entry: 0x1000_01c1,
            segments: vec![crate::image::elf::Segment {
                index: 0,
                load_addr: 0x1000_0000,
                data,
                mem_size: 0x200,
                executable: true,
            }],
            functions: vec![crate::image::elf::Function {
                addr: 0x1000_01c0,
                size: 0x40,
                name: "Reset".into(),
            }],
            symbols: Vec::new(),
            needs: None,
            arp_names: Default::default(),
        }
    }

    #[test]
    fn a_program_after_a_checked_boot2_is_entered_through_its_table() {
        let target = crate::model::target::builtin("rp2040").unwrap();
        let image = one_segment(true);
        assert_eq!(vector_table(&image, &target), 0x1000_0100);
        assert_eq!(reset_state(&image, &target), (0x2004_0000, 0x1000_01c0));
        // a block the boot ROM would refuse is no boot2: no table there
        let image = one_segment(false);
        assert_eq!(vector_table(&image, &target), 0x1000_0000);
    }
}
