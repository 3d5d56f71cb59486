/* A barrier whose waiters spin (then yield) instead of sleeping: for a team that meets
 * many times within one kernel call (an LSTM layer: twice per step), where OpenMP's own
 * barrier under OMP_WAIT_POLICY=PASSIVE puts each waiter to sleep and every step pays a
 * wake-up (40-80 us on some virtual machines, against a step's ~30 us of work).  `n` is
 * the team's size, the same for every waiter; the generation counter makes it reusable,
 * and its release/acquire order publishes what each thread wrote before the barrier. */
#ifndef EMBER_SPIN_BARRIER_H
#define EMBER_SPIN_BARRIER_H

#include <sched.h>

typedef struct {
    int count;
    int gen;
} ember_spin_barrier;

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
    while (__atomic_load_n(&b->gen, __ATOMIC_ACQUIRE) == gen) {
        if (++spins < 4096) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        } else {
            sched_yield();          /* a descheduled teammate: give it the core */
        }
    }
}

#endif
