#!/bin/sh
# Rebuilds the seed guests of the ELF and attributes corpora from tiny.c
# (needs the guest cross compilers that scripts/bootstrap.sh installs).
# An attributes input is one byte naming the architecture (0 Arm, 1
# RISC-V) and the section's bytes (see fuzz/README.md).
set -eu
cd "$(dirname "$0")"
elf=../corpus/elf
attributes=../corpus/attributes
flags="-Os -g -nostdlib -nostartfiles -ffreestanding -Wl,--build-id=none -Wl,-n -Wl,-z,max-page-size=4"
arm-none-eabi-gcc $flags -mcpu=cortex-m4 -mthumb -Wl,--defsym=FLASH=0 -T tiny.ld tiny.c -o $elf/tiny-cortex-m4.elf
arm-none-eabi-gcc $flags -mcpu=cortex-m0 -mthumb -Wl,--defsym=FLASH=0 -T tiny.ld tiny.c -o $elf/tiny-cortex-m0.elf
arm-none-eabi-gcc $flags -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16 -Wl,--defsym=FLASH=0 -T tiny.ld tiny.c -o $elf/tiny-cortex-m4f.elf
riscv64-unknown-elf-gcc $flags -march=rv32imac -mabi=ilp32 -Wl,--defsym=FLASH=0x10000000 -T tiny.ld tiny.c -o $elf/tiny-rv32imac.elf
for arch in cortex-m0:0:.ARM.attributes:arm-none-eabi cortex-m4:0:.ARM.attributes:arm-none-eabi \
	cortex-m4f:0:.ARM.attributes:arm-none-eabi rv32imac:1:.riscv.attributes:riscv64-unknown-elf; do
	IFS=: read -r name byte section tools <<-END
	$arch
	END
	$tools-objcopy --dump-section "$section"=section.tmp $elf/tiny-$name.elf
	{ printf "\\00$byte"; cat section.tmp; } > $attributes/$name.bin
	rm section.tmp
done
