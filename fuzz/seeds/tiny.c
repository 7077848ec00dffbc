/*
 * The ELF fuzz corpus's guests (see ../README.md): a vector table or an
 * entry, a loop, a data word, a bss word, and a semihosting exit; built
 * with debug information by build.sh, a few KiB each.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
int counter = 3;
int scratch;

static int sum(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += i + counter;
	return s;
}

static void exit_with(int code)
{
#ifdef __arm__
	register int op __asm__("r0") = 0x18;
	register int reason __asm__("r1") = code ? 0x20024 : 0x20026;
	__asm__ volatile("bkpt 0xab" : : "r"(op), "r"(reason) : "memory");
#else
	register int op __asm__("a0") = 0x18;
	register int reason __asm__("a1") = code ? 0x20024 : 0x20026;
	__asm__ volatile(".option push\n.option norvc\nslli x0, x0, 0x1f\nebreak\nsrai x0, x0, 7\n.option pop"
			 : : "r"(op), "r"(reason) : "memory");
#endif
	for (;;)
		;
}

void reset(void)
{
	volatile int n = 10;
	scratch = sum(n);
	exit_with(scratch == 75 ? 0 : 1);
}

#ifdef __arm__
__attribute__((section(".vectors"), used)) void *const vectors[2] = {(void *)0x20010000, reset};
#else
__attribute__((naked, section(".vectors"))) void _start(void)
{
	__asm__ volatile("li sp, 0x20010000\nj reset");
}
#endif
