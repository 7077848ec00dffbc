/*
 * The FreeRTOS RISC-V port's chip-specific header for the RP2350's Hazard3
 * (the rv32imac target): a memory-mapped machine timer (the SIO's MTIME and
 * MTIMECMP, configMTIME_BASE_ADDRESS / configMTIMECMP_BASE_ADDRESS in
 * FreeRTOSConfig.h) that is not SiFive's CLINT, and no registers beyond
 * the base ISA to save. The port asks each chip for this header
 * (portable/GCC/RISC-V/chip_specific_extensions/readme.txt); none of the
 * upstream ones has this combination.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef __FREERTOS_RISC_V_EXTENSIONS_H__
#define __FREERTOS_RISC_V_EXTENSIONS_H__

#define portasmHAS_SIFIVE_CLINT 0
#define portasmHAS_MTIME 1
#define portasmADDITIONAL_CONTEXT_SIZE 0

/* *INDENT-OFF* */
.macro portasmSAVE_ADDITIONAL_REGISTERS
    .endm

.macro portasmRESTORE_ADDITIONAL_REGISTERS
    .endm
/* *INDENT-ON* */

#endif /* __FREERTOS_RISC_V_EXTENSIONS_H__ */
