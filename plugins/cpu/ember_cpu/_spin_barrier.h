/* A barrier whose waiters spin (then yield) instead of sleeping: for a team that meets
 * many times within one kernel call (an LSTM layer: twice per step), where OpenMP's own
 * barrier under OMP_WAIT_POLICY=PASSIVE puts each waiter to sleep and every step pays a
 * wake-up (40-80 us on some virtual machines, against a step's ~30 us of work).  `n` is
 * the team's size, the same for every waiter; the generation counter makes it reusable,
 * and its release/acquire order publishes what each thread wrote before the barrier. */
#ifndef EMBER_SPIN_BARRIER_H
#define EMBER_SPIN_BARRIER_H

#include <sched.h>
#include <stdint.h>

typedef struct {
    int count;
    int gen;
} ember_spin_barrier;

/* one poll of a wait: a pause for the first 4096, then the core given away (a descheduled
 * teammate may be what the waiter waits for) */
static inline void ember_spin_step(unsigned *spins) {
    if (++*spins < 4096) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    } else {
        sched_yield();
    }
}

static inline void ember_barrier_init(ember_spin_barrier *b) {
    b->count = 0;
    b->gen = 0;
}

static inline void ember_barrier_wait(ember_spin_barrier *b, int n) {
    if (n <= 1)
        return;
    int gen = __atomic_load_n(&b->gen, __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&b->count, 1, __ATOMIC_ACQ_REL) == n) {
        __atomic_store_n(&b->count, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&b->gen, gen + 1, __ATOMIC_RELEASE);
        return;
    }
    unsigned spins = 0;
    while (__atomic_load_n(&b->gen, __ATOMIC_ACQUIRE) == gen)
        ember_spin_step(&spins);
}

/* A team's items handed out a chunk at a time from a shared counter, so a teammate woken
 * late takes only what is left, and a finish in which thread 0 waits, spinning, for the
 * others: arriving last at OpenMP's closing barrier, it never sleeps there.  Under a passive wait
 * policy a sleeping waiter costs a wake-up, so a region otherwise paid two (its team's
 * start and thread 0's wait at the end): 40-80 us each on some virtual machines. */
typedef struct {
    int64_t next;
    int done;
} ember_work_queue;

static inline void ember_queue_init(ember_work_queue *q) {
    q->next = 0;
    q->done = 0;
}

/* the first item of the next chunk (past the end when none is left) */
static inline int64_t ember_queue_take(ember_work_queue *q, int64_t chunk) {
    return __atomic_fetch_add(&q->next, chunk, __ATOMIC_RELAXED);
}

static inline void ember_queue_finish(ember_work_queue *q, int thread, int n) {
    if (thread != 0) {
        __atomic_add_fetch(&q->done, 1, __ATOMIC_RELEASE);
        return;
    }
    unsigned spins = 0;
    while (__atomic_load_n(&q->done, __ATOMIC_ACQUIRE) < n - 1)
        ember_spin_step(&spins);
}

#endif
