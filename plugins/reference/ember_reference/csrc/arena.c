/* The reference device's memory: device addresses that nobody can dereference, backed by a
 * separate arena that only these kernels read.
 *
 * At the first allocation we reserve a large range of address space with
 * mmap(PROT_NONE): touching any address inside it faults.  `alloc` hands out a fresh
 * *device address* inside that range (a bump pointer, never reused, so a pointer that
 * outlives its allocation is caught too) and backs it with an ordinary malloc'd block, the
 * "arena" bytes.  The allocation table maps each device range to its block; kernels call
 * ref_arena_translate to turn a device address (a view's `data`: an allocation's base plus
 * an offset, so interior pointers are fine) into the block's address, after checking that
 * the whole span an access covers lies inside one live allocation.
 *
 * Allocations are separated by an unmapped gap, so a span that runs past the end of one
 * allocation never lands in the next one.  The table is sorted by device address (the bump
 * pointer only grows, so an allocation is appended) and searched by bisection.  A mutex
 * guards it: `free` may come from any thread, and kernels may run without the GIL.
 */
#define _DEFAULT_SOURCE                       /* MAP_ANONYMOUS, MAP_NORESERVE */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "reference.h"

#define REF_ALIGN 256                         /* every device address is 256-byte aligned */
#define REF_GAP 256                           /* unmapped bytes between two allocations */

typedef struct {
    uintptr_t dev;                            /* device address of the first byte */
    int64_t nbytes;                           /* as asked for (0 is allowed) */
    char *host;                               /* the arena bytes */
} ref_block;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t space_begin, space_end, bump;    /* the reserved range; the next address */
static ref_block *blocks;                         /* live allocations, sorted by dev */
static int64_t nblocks, capacity;
static ref_arena_stats stats;

/* reserve the device address range: as large as the system lets us, 1 TiB down to 1 GiB;
 * PROT_NONE with MAP_NORESERVE costs no memory, only address space */
static int reserve_space(void) {
    for (uintptr_t size = (uintptr_t)1 << 40; size >= (uintptr_t)1 << 30; size >>= 1) {
        void *p = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                       -1, 0);
        if (p != MAP_FAILED) {
            space_begin = (uintptr_t)p;
            space_end = space_begin + size;
            bump = space_begin + REF_ALIGN;   /* never hand out the range's first byte */
            return 1;
        }
    }
    return 0;
}

/* index of the last block whose dev <= addr, or -1 (caller holds the lock) */
static int64_t find_block(uintptr_t addr) {
    int64_t lo = 0, hi = nblocks;             /* first block with dev > addr is in [lo, hi] */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (blocks[mid].dev <= addr) lo = mid + 1;
        else hi = mid;
    }
    return lo - 1;
}

void *ref_arena_alloc(ember_ctx *ctx, int64_t nbytes) {
    if (nbytes < 0) {
        ref_fail(ctx, EMBER_ERR_VALUE, "alloc: negative size %lld", (long long)nbytes);
        return NULL;
    }
    pthread_mutex_lock(&lock);
    void *result = NULL;
    uintptr_t span = ((uintptr_t)nbytes + REF_ALIGN - 1) / REF_ALIGN * REF_ALIGN + REF_GAP;
    if (!space_begin && !reserve_space()) {
        ref_fail(ctx, EMBER_ERR_MEMORY, "alloc: could not reserve a device address range");
    } else if (span > space_end - bump) {
        ref_fail(ctx, EMBER_ERR_MEMORY, "alloc: the device address range is used up "
                 "(addresses are never reused) asking for %lld bytes", (long long)nbytes);
    } else if (nblocks == capacity &&
               !(blocks = realloc(blocks, (size_t)(capacity = capacity ? 2 * capacity : 64)
                                          * sizeof *blocks))) {
        ref_fail(ctx, EMBER_ERR_MEMORY, "alloc: out of memory for the allocation table");
    } else {
        char *host = malloc(nbytes ? (size_t)nbytes : 1);    /* alloc(0) is valid too */
        if (!host) {
            ref_fail(ctx, EMBER_ERR_MEMORY, "alloc: out of memory asking for %lld bytes",
                     (long long)nbytes);
        } else {
            blocks[nblocks++] = (ref_block){bump, nbytes, host};
            result = (void *)bump;
            bump += span;
            stats.allocated_bytes += nbytes;
            if (stats.allocated_bytes > stats.peak_bytes) stats.peak_bytes = stats.allocated_bytes;
            stats.live_allocations++;
            stats.total_allocations++;
        }
    }
    pthread_mutex_unlock(&lock);
    return result;
}

void ref_arena_free(void *device_ptr) {
    if (!device_ptr) return;
    pthread_mutex_lock(&lock);
    int64_t i = find_block((uintptr_t)device_ptr);
    if (i < 0 || blocks[i].dev != (uintptr_t)device_ptr) {
        /* `free` cannot report an error: count it (runtime.memory_stats()) and say so once */
        if (stats.bad_frees++ == 0)
            fprintf(stderr, "ember-reference: free of %p, which is not a live allocation\n",
                    device_ptr);
    } else {
        free(blocks[i].host);
        stats.allocated_bytes -= blocks[i].nbytes;
        stats.live_allocations--;
        memmove(blocks + i, blocks + i + 1, (size_t)(nblocks - i - 1) * sizeof *blocks);
        nblocks--;
    }
    pthread_mutex_unlock(&lock);
}

int ref_arena_translate(ember_ctx *ctx, const void *dev, int64_t lo, int64_t hi, char **host,
                        const char *what) {
    uintptr_t addr = (uintptr_t)dev;
    pthread_mutex_lock(&lock);
    int64_t i = find_block(addr);
    int ok = i >= 0 && (int64_t)(addr - blocks[i].dev) + lo >= 0 &&
             (int64_t)(addr - blocks[i].dev) + hi <= blocks[i].nbytes;
    if (ok) *host = blocks[i].host + (addr - blocks[i].dev);
    pthread_mutex_unlock(&lock);
    if (ok) return EMBER_OK;
    int inside = addr >= space_begin && addr < space_end;
    return ref_fail(ctx, EMBER_ERR_RUNTIME, "%s: bytes [%p%+lld, %p%+lld) are not inside a live "
                    "allocation of this device%s", what, dev, (long long)lo, dev, (long long)hi,
                    inside ? "" : " (not a reference-device address at all: a host pointer?)");
}

void ref_arena_get_stats(ref_arena_stats *out) {
    pthread_mutex_lock(&lock);
    *out = stats;
    out->space_begin = space_begin;
    out->space_end = space_end;
    pthread_mutex_unlock(&lock);
}

void ref_arena_reset_peak(void) {
    pthread_mutex_lock(&lock);
    stats.peak_bytes = stats.allocated_bytes;
    pthread_mutex_unlock(&lock);
}
