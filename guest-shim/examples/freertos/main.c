/*
 * The FreeRTOS corpus's application (issue 39): the upstream kernel and
 * its own ports, unmodified, with tasks, a queue, a mutex, a software
 * timer, vTaskDelay, time slicing between two tasks of equal priority and,
 * on cores with an FPU, floating point in both of them.
 *
 * What it prints does not depend on how long anything takes, only on the
 * kernel's semantics, so the same ELF prints the same under QEMU (whose
 * SysTick follows the host's clock) and under sim-host:
 * - the consumer prints each item as the producer queues it (it has the
 *   higher priority, so it runs at once);
 * - everything else is gathered and printed by the reporter at the end:
 *   how many ticks vTaskDelay(DELAY_TICKS) took (exactly DELAY_TICKS: it
 *   is the highest-priority task when it wakes), that the one-shot timer
 *   fired, and each worker's result against the same computation done
 *   before the scheduler started (no task switch could touch it then).
 *
 * ARP sections (tid = the task's own number): the delay (section 1), each
 * worker's computation (2 and 3), the whole run from main (4).
 *
 * `freertos overflow` adds a task whose recursion runs past the bottom of
 * its stack and then yields: the simulator stops at the exception that
 * would stack its frame below the stack, naming the task.
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "FreeRTOS.h"
#include "queue.h"
#include "semphr.h"
#include "task.h"
#include "timers.h"
#include <atomium_rp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The sections' names (ARP_SECTION_NAME: the report's, callgrind's and
 * the trace's; the two workers run one function). */
ARP_SECTION_NAME(1, "vTaskDelay(10)");
ARP_SECTION_NAME(2, "worker0's computation");
ARP_SECTION_NAME(3, "worker1's computation");
ARP_SECTION_NAME(4, "the whole run");

#define DELAY_TICKS 10
#define ITEMS 5
#define WORK 40000

static QueueHandle_t items, results;
static SemaphoreHandle_t print_lock, timer_done, consumer_done;
static volatile TickType_t delay_took;

void vAssertCalled(const char *file, int line)
{
    printf("ASSERT %s:%d\n", file, line);
    exit(2);
}

void vApplicationStackOverflowHook(TaskHandle_t task, char *name)
{
    (void)task;
    printf("stack overflow in task %s\n", name);
    exit(3);
}

void vApplicationMallocFailedHook(void)
{
    printf("out of heap\n");
    exit(4);
}

static void locked_print(const char *text, long value)
{
    xSemaphoreTake(print_lock, portMAX_DELAY);
    printf("%s %ld\n", text, value);
    xSemaphoreGive(print_lock);
}

static void producer(void *arg)
{
    (void)arg;
    for (long i = 0; i < ITEMS; i++) {
        xQueueSend(items, &i, portMAX_DELAY);
        vTaskDelay(3);
    }
    long end = -1;
    xQueueSend(items, &end, portMAX_DELAY);
    vTaskDelete(NULL);
}

static void consumer(void *arg)
{
    (void)arg;
    for (;;) {
        long item;
        xQueueReceive(items, &item, portMAX_DELAY);
        if (item < 0)
            break;
        locked_print("consumer got", item);
    }
    xSemaphoreGive(consumer_done);
    vTaskDelete(NULL);
}

static void delayer(void *arg)
{
    (void)arg;
    arp_enter_kernel(3, 1, 0);
    TickType_t before = xTaskGetTickCount();
    vTaskDelay(DELAY_TICKS);
    delay_took = xTaskGetTickCount() - before;
    arp_leave_kernel(3, 1);
    vTaskDelete(NULL);
}

/* A worker's computation: float on cores with an FPU (its registers must
 * survive every switch to the other worker), integer elsewhere. */
static uint32_t compute(uint32_t seed)
{
#ifdef __ARM_FP
    float x = (float)seed, y = 0.5f;
    for (int i = 0; i < WORK; i++) {
        x = x * 0.999f + y;
        y = y * 1.0001f - 0.25f * (float)(i & 7);
    }
    union {
        float f;
        uint32_t u;
    } bits = {.f = x + y};
    return bits.u;
#else
    uint32_t h = seed;
    for (int i = 0; i < WORK; i++)
        h = (h ^ (uint32_t)i) * 16777619u + (h >> 13);
    return h;
#endif
}

struct result {
    uint32_t worker, value;
};

static void worker(void *arg)
{
    uint32_t id = (uint32_t)(uintptr_t)arg;
    arp_enter_kernel(4 + id, 2 + id, 0);
    struct result r = {id, compute(1000 + id)};
    arp_leave_kernel(4 + id, 2 + id);
    xQueueSend(results, &r, portMAX_DELAY);
    vTaskDelete(NULL);
}

static void timer_fired(TimerHandle_t timer)
{
    (void)timer;
    xSemaphoreGive(timer_done);
}

static uint32_t expected[2];

static void reporter(void *arg)
{
    (void)arg;
    xSemaphoreTake(consumer_done, portMAX_DELAY);
    xSemaphoreTake(timer_done, portMAX_DELAY);
    struct result got[2];
    for (int i = 0; i < 2; i++) {
        struct result r;
        xQueueReceive(results, &r, portMAX_DELAY);
        got[r.worker] = r;
    }
    while (delay_took == 0)
        vTaskDelay(1);
    printf("vTaskDelay(%d) took %lu ticks\n", DELAY_TICKS, (unsigned long)delay_took);
    printf("the one-shot timer fired\n");
    for (int i = 0; i < 2; i++)
        printf("worker %d: %08lx %s\n", i, (unsigned long)got[i].value,
               got[i].value == expected[i] ? "as computed alone" : "CORRUPTED by a switch");
    arp_leave(1, 4);
    arp_finish();
    printf("done\n");
    exit(0);
}

/* Recursion that uses `depth` x 64 bytes of stack, then yields. */
__attribute__((noinline)) static uint32_t deep(uint32_t depth)
{
    volatile uint8_t frame[64];
    frame[0] = (uint8_t)depth;
    if (depth == 0) {
        taskYIELD();
        return frame[0];
    }
    return deep(depth - 1) + frame[0];
}

static void overflow(void *arg)
{
    (void)arg;
    printf("overflow: %lu\n", (unsigned long)deep(64));
    vTaskDelete(NULL);
}

#if defined(__riscv)
/* The RISC-V port's trap handler, taken through mtvec (direct mode). */
extern void freertos_risc_v_trap_handler(void);
#endif

static void create(TaskFunction_t code, const char *name, void *arg, UBaseType_t priority)
{
    if (xTaskCreate(code, name, 2 * configMINIMAL_STACK_SIZE, arg, priority, NULL) != pdPASS) {
        printf("cannot create task %s\n", name);
        exit(5);
    }
}

int main(int argc, char **argv)
{
#if defined(__riscv)
    __asm volatile("csrw mtvec, %0" ::"r"(freertos_risc_v_trap_handler));
#endif
    arp_add_callbacks(arp_ullong, 0, 0, 0, 0, 0);
    arp_start(6, 4, arp_record_all, 0, 0, 0, 0, 0);
    arp_enter(1, 4, 0);
    for (uint32_t i = 0; i < 2; i++)
        expected[i] = compute(1000 + i);
    items = xQueueCreate(2, sizeof(long));
    results = xQueueCreate(2, sizeof(struct result));
    print_lock = xSemaphoreCreateMutex();
    timer_done = xSemaphoreCreateBinary();
    consumer_done = xSemaphoreCreateBinary();
    TimerHandle_t timer = xTimerCreate("oneshot", 25, pdFALSE, NULL, timer_fired);
    if (!items || !results || !print_lock || !timer_done || !consumer_done || !timer) {
        printf("cannot create the kernel objects\n");
        return 6;
    }
    xTimerStart(timer, 0);
    create(delayer, "delay", NULL, 5);
    create(consumer, "consumer", NULL, 3);
    create(producer, "producer", NULL, 2);
    create(reporter, "reporter", NULL, 2);
    create(worker, "worker0", (void *)0, 1);
    create(worker, "worker1", (void *)1, 1);
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "overflow"))
            xTaskCreate(overflow, "overflow", configMINIMAL_STACK_SIZE, NULL, 5, NULL);
    puts("FreeRTOS " tskKERNEL_VERSION_NUMBER " starts");
    vTaskStartScheduler();
    printf("the scheduler returned\n");
    return 7;
}
