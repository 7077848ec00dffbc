/*
 * The FreeRTOS configuration of the FreeRTOS corpus (issue 39): one file
 * for every port the corpus builds (ARM_CM0, ARM_CM3, ARM_CM4F, ARM_CM7
 * r0p1, ARM_CM33_NTZ, RISC-V), the kernel and ports unmodified. What the
 * build gives per target (guest-shim/examples/freertos/example.toml):
 * TARGET_CLOCK_HZ (the target file's clock) and, on RISC-V, the machine
 * timer's registers and the rate it counts at.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef FREERTOS_CONFIG_H
#define FREERTOS_CONFIG_H

#include <stdint.h>

#define configUSE_PREEMPTION 1
#define configUSE_TIME_SLICING 1
#define configUSE_PORT_OPTIMISED_TASK_SELECTION 0
#define configTICK_RATE_HZ 1000
#define configMAX_PRIORITIES 6
#define configMINIMAL_STACK_SIZE 256
#define configMAX_TASK_NAME_LEN 12
#define configTICK_TYPE_WIDTH_IN_BITS TICK_TYPE_WIDTH_32_BITS
#define configIDLE_SHOULD_YIELD 1
#define configUSE_MUTEXES 1
#define configUSE_RECURSIVE_MUTEXES 0
#define configUSE_COUNTING_SEMAPHORES 1
#define configQUEUE_REGISTRY_SIZE 0
#define configUSE_TASK_NOTIFICATIONS 1
#define configSUPPORT_DYNAMIC_ALLOCATION 1
#define configSUPPORT_STATIC_ALLOCATION 0
#define configTOTAL_HEAP_SIZE (HEAP_KIB * 1024)
#define configUSE_IDLE_HOOK 0
#define configUSE_TICK_HOOK 0
#define configUSE_MALLOC_FAILED_HOOK 1
#define configCHECK_FOR_STACK_OVERFLOW 2
#define configUSE_TRACE_FACILITY 0
#define configGENERATE_RUN_TIME_STATS 0
#define configUSE_CO_ROUTINES 0
#define configUSE_TIMERS 1
#define configTIMER_TASK_PRIORITY 4
#define configTIMER_QUEUE_LENGTH 5
#define configTIMER_TASK_STACK_DEPTH 256

#define INCLUDE_vTaskDelay 1
#define INCLUDE_vTaskDelete 1
#define INCLUDE_xTaskDelayUntil 1
#define INCLUDE_xTaskGetSchedulerState 1
#define INCLUDE_uxTaskPriorityGet 1

void vAssertCalled(const char *file, int line);
#define configASSERT(x)                                                     \
    if (!(x))                                                              \
    vAssertCalled(__FILE__, __LINE__)

#if defined(__arm__)
#define configCPU_CLOCK_HZ TARGET_CLOCK_HZ
/* Priority bits: 2 on ARMv6-M (the cortex-m0 facts), 3 elsewhere */
#if __ARM_ARCH == 6
#define configPRIO_BITS 2
#else
#define configPRIO_BITS 3
#endif
#define configKERNEL_INTERRUPT_PRIORITY (((1 << configPRIO_BITS) - 1) << (8 - configPRIO_BITS))
#define configMAX_SYSCALL_INTERRUPT_PRIORITY (1 << (8 - configPRIO_BITS))
/* the handlers under the names picolibc's vector table gives them */
#define vPortSVCHandler arm_svc_isr
#define xPortPendSVHandler arm_pendsv_isr
#define xPortSysTickHandler arm_systick_isr
#define SVC_Handler arm_svc_isr
#define PendSV_Handler arm_pendsv_isr
#define SysTick_Handler arm_systick_isr
/* ARM_CM33_NTZ on a core that runs in the Secure state only */
#define configENABLE_FPU 1
#define configENABLE_MPU 0
#define configENABLE_TRUSTZONE 0
#define configRUN_FREERTOS_SECURE_ONLY 1
#define configENABLE_MVE 0
#endif

#if defined(__riscv)
/* the RISC-V port times ticks with mtime: configCPU_CLOCK_HZ is the rate
 * mtime counts at (the port's uxTimerIncrementsForOneTick) */
#define configCPU_CLOCK_HZ MTIME_HZ
#define configMTIME_BASE_ADDRESS MTIME_ADDRESS
#define configMTIMECMP_BASE_ADDRESS MTIMECMP_ADDRESS
#define configISR_STACK_SIZE_WORDS 512
#endif

#endif /* FREERTOS_CONFIG_H */
