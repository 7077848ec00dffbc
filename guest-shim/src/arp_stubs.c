/*
 * arp_stubs.c - the ARP entry points as seen by a guest program.
 *
 * Every function of atomium_rp.h (manual section 6) and the two ARP_SIM
 * functions of section 6.3 is a real, separate, never-inlined function with
 * its own symbol. sim-host finds them in the ELF symbol table and intercepts
 * their first instruction (DESIGN.md decision 1): it reads the arguments from
 * the argument registers, runs the ARP engine on the host and returns to the
 * caller, so the bodies below never execute under sim-host and cost the guest
 * nothing.
 *
 * On a simulator or board that does not intercept them they behave sanely:
 * they return and do nothing observable except bump `arp_stub_calls`, which
 * lets a test see that interception did (or did not) happen. Each body is
 * different on purpose: identical bodies could be merged by the compiler's
 * identical-code folding, and the host needs one address per function. The
 * file is also compiled with -fno-ipa-icf (see build.py) for the same reason.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "atomium_rp.h"

#if defined(ARP_NONE)
#error "arp_stubs.c is not linked into ARP_NONE builds"
#endif

/* Number of stub bodies executed, by function (index = ARP_STUB_* below). */
volatile unsigned arp_stub_calls[32];

#define STUB_HIT(n) (arp_stub_calls[(n)] += 1u)
#define ARP_ENTRY __attribute__((noinline, used, externally_visible))

/* Undo the ARP_SIM remapping so the real names can be defined here. */
#undef arp_add_callbacks
#undef arp_start

ARP_ENTRY void arp_enter(const arp_tid tid, const arp_sid sid, const arp_lidx lidx)
{ (void)tid; (void)sid; (void)lidx; STUB_HIT(0); }
ARP_ENTRY void arp_enter_kernel(const arp_tid tid, const arp_sid sid, const arp_lidx lidx)
{ (void)tid; (void)sid; (void)lidx; STUB_HIT(1); }
ARP_ENTRY void arp_enter_profiled(const arp_tid tid, const arp_sid sid, const arp_lidx lidx)
{ (void)tid; (void)sid; (void)lidx; STUB_HIT(2); }
ARP_ENTRY void arp_leave(const arp_tid tid, const arp_sid sid)
{ (void)tid; (void)sid; STUB_HIT(3); }
ARP_ENTRY void arp_leave_kernel(const arp_tid tid, const arp_sid sid)
{ (void)tid; (void)sid; STUB_HIT(4); }
ARP_ENTRY void arp_leave_profiled(const arp_tid tid, const arp_sid sid)
{ (void)tid; (void)sid; STUB_HIT(5); }
ARP_ENTRY void arp_spawned(const arp_tid parent, const arp_tid child)
{ (void)parent; (void)child; STUB_HIT(6); }
ARP_ENTRY void arp_join(const arp_tid tid)
{ (void)tid; STUB_HIT(7); }

ARP_ENTRY void arp_add_callbacks(const arp_data_type type, arp_enter_callback enter,
                                 arp_leave_callback leave, arp_spawn_callback spawn,
                                 arp_join_callback join, void *context)
{ (void)type; (void)enter; (void)leave; (void)spawn; (void)join; (void)context; STUB_HIT(8); }
ARP_ENTRY void arp_start(const arp_tid max_tid, const arp_sid max_sid, const arp_mode mode,
                         arp_error_callback error_cb, void *error_context,
                         arp_lock_callback lock_cb, arp_unlock_callback unlock_cb,
                         void *lock_context)
{
    (void)max_tid; (void)max_sid; (void)mode; (void)error_cb; (void)error_context;
    (void)lock_cb; (void)unlock_cb; (void)lock_context; STUB_HIT(9);
}
ARP_ENTRY void arp_finish(void) { STUB_HIT(10); }
ARP_ENTRY void arp_set_file_name(const char *name) { (void)name; STUB_HIT(11); }
ARP_ENTRY void arp_set_output_file_format(const arp_file_format format) { (void)format; STUB_HIT(12); }

ARP_ENTRY void arpsim_add_callbacks(void) { STUB_HIT(13); }
ARP_ENTRY void arpsim_start(const arp_tid max_tid, const arp_sid max_sid, const arp_mode mode)
{ (void)max_tid; (void)max_sid; (void)mode; STUB_HIT(14); }

/* The query API (6.4) makes no sense inside a guest, but every function of
 * the header links, so a program written against the full API builds. Under
 * sim-host they answer "no data". */
ARP_ENTRY void arp_load_data(const char *file_name, arp_error_callback cb, void *context)
{ (void)file_name; (void)cb; (void)context; STUB_HIT(15); }
ARP_ENTRY const arp_mode arp_get_mode(void) { STUB_HIT(16); return arp_record_average; }
ARP_ENTRY void arp_switch_mode(const arp_mode mode) { (void)mode; STUB_HIT(17); }
ARP_ENTRY void arp_free_data(void) { STUB_HIT(18); }
ARP_ENTRY const unsigned arp_get_data_mult(void) { STUB_HIT(19); return 0u; }
ARP_ENTRY const arp_data_type arp_get_data_type(const unsigned i) { (void)i; STUB_HIT(20); return arp_uint; }
ARP_ENTRY const unsigned arp_get_nTraces(void) { STUB_HIT(21); return 0u; }
ARP_ENTRY const arp_trace arp_get_trace(const unsigned n) { (void)n; STUB_HIT(22); return (arp_trace)0; }
ARP_ENTRY void arp_free_trace(const arp_trace t) { (void)t; STUB_HIT(23); }
ARP_ENTRY const unsigned arp_trace_get_count(const arp_trace t) { (void)t; STUB_HIT(24); return 0u; }
ARP_ENTRY const unsigned arp_trace_get_stack_length(const arp_trace t) { (void)t; STUB_HIT(25); return 0u; }
ARP_ENTRY const arp_sid arp_trace_get_stack_pos(const arp_trace t, const unsigned d)
{ (void)t; (void)d; STUB_HIT(26); return 0; }
ARP_ENTRY const arp_lidx arp_trace_get_stack_index(const arp_trace t, const unsigned d)
{ (void)t; (void)d; STUB_HIT(27); return 0; }
ARP_ENTRY const void *arp_trace_get_value(const arp_trace t, const unsigned i)
{ (void)t; (void)i; STUB_HIT(28); return (const void *)0; }
