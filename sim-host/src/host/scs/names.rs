//! The names of the System Control Space's and the DWT's registers
//! (ARMv7-M B3.2.2 Table B3-4, B3.3.1, B3.4.3, C1.6, C1.8; ARMv8-M adds
//! to the same map): what an error says when a guest touches one that is
//! not modelled.

/// Single registers: address and name.
const REGISTERS: &[(u32, &str)] = &[
    (0xE000_E000, "MCR (Master Control Register, reserved)"),
    (0xE000_E004, "ICTR (Interrupt Controller Type Register)"),
    (0xE000_E008, "ACTLR (Auxiliary Control Register)"),
    (0xE000_E010, "SYST_CSR (SysTick Control and Status)"),
    (0xE000_E014, "SYST_RVR (SysTick Reload Value)"),
    (0xE000_E018, "SYST_CVR (SysTick Current Value)"),
    (0xE000_E01C, "SYST_CALIB (SysTick Calibration Value)"),
    (0xE000_ED00, "CPUID"),
    (0xE000_ED04, "ICSR (Interrupt Control and State)"),
    (0xE000_ED08, "VTOR (Vector Table Offset)"),
    (
        0xE000_ED0C,
        "AIRCR (Application Interrupt and Reset Control)",
    ),
    (0xE000_ED10, "SCR (System Control)"),
    (0xE000_ED14, "CCR (Configuration and Control)"),
    (0xE000_ED18, "SHPR1 (System Handler Priority 1)"),
    (0xE000_ED1C, "SHPR2 (System Handler Priority 2)"),
    (0xE000_ED20, "SHPR3 (System Handler Priority 3)"),
    (0xE000_ED24, "SHCSR (System Handler Control and State)"),
    (0xE000_ED28, "CFSR (Configurable Fault Status)"),
    (0xE000_ED2C, "HFSR (HardFault Status)"),
    (0xE000_ED30, "DFSR (Debug Fault Status)"),
    (0xE000_ED34, "MMFAR (MemManage Fault Address)"),
    (0xE000_ED38, "BFAR (BusFault Address)"),
    (0xE000_ED3C, "AFSR (Auxiliary Fault Status)"),
    (0xE000_ED40, "ID_PFR0 (Processor Feature 0)"),
    (0xE000_ED44, "ID_PFR1 (Processor Feature 1)"),
    (0xE000_ED48, "ID_DFR0 (Debug Feature 0)"),
    (0xE000_ED4C, "ID_AFR0 (Auxiliary Feature 0)"),
    (0xE000_ED50, "ID_MMFR0 (Memory Model Feature 0)"),
    (0xE000_ED54, "ID_MMFR1 (Memory Model Feature 1)"),
    (0xE000_ED58, "ID_MMFR2 (Memory Model Feature 2)"),
    (0xE000_ED5C, "ID_MMFR3 (Memory Model Feature 3)"),
    (0xE000_ED60, "ID_ISAR0 (Instruction Set Attribute 0)"),
    (0xE000_ED64, "ID_ISAR1 (Instruction Set Attribute 1)"),
    (0xE000_ED68, "ID_ISAR2 (Instruction Set Attribute 2)"),
    (0xE000_ED6C, "ID_ISAR3 (Instruction Set Attribute 3)"),
    (0xE000_ED70, "ID_ISAR4 (Instruction Set Attribute 4)"),
    (0xE000_ED78, "CLIDR (Cache Level ID)"),
    (0xE000_ED7C, "CTR (Cache Type)"),
    (0xE000_ED80, "CCSIDR (Cache Size ID)"),
    (0xE000_ED84, "CSSELR (Cache Size Selection)"),
    (0xE000_ED88, "CPACR (Coprocessor Access Control)"),
    (0xE000_ED90, "MPU_TYPE (MPU Type)"),
    (0xE000_ED94, "MPU_CTRL (MPU Control)"),
    (0xE000_ED98, "MPU_RNR (MPU Region Number)"),
    (0xE000_ED9C, "MPU_RBAR (MPU Region Base Address)"),
    (0xE000_EDA0, "MPU_RASR (MPU Region Attribute and Size)"),
    (0xE000_EDF0, "DHCSR (Debug Halting Control and Status)"),
    (0xE000_EDF4, "DCRSR (Debug Core Register Selector)"),
    (0xE000_EDF8, "DCRDR (Debug Core Register Data)"),
    (0xE000_EDFC, "DEMCR (Debug Exception and Monitor Control)"),
    (0xE000_EF00, "STIR (Software Triggered Interrupt)"),
    (0xE000_EF34, "FPCCR (Floating-point Context Control)"),
    (0xE000_EF38, "FPCAR (Floating-point Context Address)"),
    (
        0xE000_EF3C,
        "FPDSCR (Floating-point Default Status Control)",
    ),
    (0xE000_EF50, "ICIALLU (Instruction cache invalidate all)"),
    (
        0xE000_EF58,
        "ICIMVAU (Instruction cache invalidate by address)",
    ),
    (0xE000_EF5C, "DCIMVAC (Data cache invalidate by address)"),
    (0xE000_EF60, "DCISW (Data cache invalidate by set/way)"),
    (0xE000_EF64, "DCCMVAU (Data cache clean by address to PoU)"),
    (0xE000_EF68, "DCCMVAC (Data cache clean by address to PoC)"),
    (0xE000_EF6C, "DCCSW (Data cache clean by set/way)"),
    (
        0xE000_EF70,
        "DCCIMVAC (Data cache clean and invalidate by address)",
    ),
    (
        0xE000_EF74,
        "DCCISW (Data cache clean and invalidate by set/way)",
    ),
    (0xE000_1000, "DWT_CTRL (DWT Control)"),
    (0xE000_1004, "DWT_CYCCNT (DWT Cycle Count)"),
    (0xE000_1008, "DWT_CPICNT (DWT CPI Count)"),
    (0xE000_100C, "DWT_EXCCNT (DWT Exception Overhead Count)"),
    (0xE000_1010, "DWT_SLEEPCNT (DWT Sleep Count)"),
    (0xE000_1014, "DWT_LSUCNT (DWT LSU Count)"),
    (0xE000_1018, "DWT_FOLDCNT (DWT Folded-instruction Count)"),
    (0xE000_101C, "DWT_PCSR (DWT Program Counter Sample)"),
    (0xE000_1FB0, "DWT_LAR (DWT Lock Access)"),
    (0xE000_1FB4, "DWT_LSR (DWT Lock Status)"),
];

/// Register arrays: first address, count of 32-bit words, name stem.
const ARRAYS: &[(u32, u32, &str)] = &[
    (0xE000_E100, 16, "NVIC_ISER (Interrupt Set-Enable)"),
    (0xE000_E180, 16, "NVIC_ICER (Interrupt Clear-Enable)"),
    (0xE000_E200, 16, "NVIC_ISPR (Interrupt Set-Pending)"),
    (0xE000_E280, 16, "NVIC_ICPR (Interrupt Clear-Pending)"),
    (0xE000_E300, 16, "NVIC_IABR (Interrupt Active Bit)"),
    (0xE000_E400, 124, "NVIC_IPR (Interrupt Priority)"),
    (0xE000_1020, 64, "DWT_COMP/MASK/FUNCTION (DWT comparators)"),
    (0xE000_1FD0, 12, "DWT peripheral/component ID"),
    (0xE000_EFD0, 12, "SCS peripheral/component ID"),
];

/// The name of the register at `addr` (its word), as the manual calls it.
pub fn name_of(addr: u32) -> String {
    let word = addr & !3;
    if let Some((_, name)) = REGISTERS.iter().find(|(a, _)| *a == word) {
        return (*name).to_owned();
    }
    for (first, count, stem) in ARRAYS {
        if (*first..*first + count * 4).contains(&word) {
            let (short, long) = stem.split_once(' ').unwrap_or((stem, ""));
            return format!("{short}{} {long}", (word - first) / 4);
        }
    }
    let area = if (0xE000_1000..0xE000_2000).contains(&addr) {
        "the DWT"
    } else {
        "the System Control Space"
    };
    format!("the register at {word:#010x} of {area} (reserved or implementation defined)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_and_array_members_are_named() {
        assert_eq!(name_of(0xE000_ED94), "MPU_CTRL (MPU Control)");
        assert_eq!(name_of(0xE000_E404), "NVIC_IPR1 (Interrupt Priority)");
        assert_eq!(name_of(0xE000_1005), "DWT_CYCCNT (DWT Cycle Count)");
        assert!(name_of(0xE000_EE00).contains("0xe000ee00"));
    }
}
