/* The caching allocator: device memory is taken from the driver in size classes and never
 * given back on free; a freed block waits in its class's list and serves the next request
 * of that class made on the same stream (stream order makes the reuse safe without a
 * sync).  Four classes per power of two bound the rounding waste by 25%.  A request the
 * driver refuses is retried once after every cached block is released; a second refusal
 * returns NULL with PyTorch's "CUDA out of memory" message in ctx->error.
 * Every function may be called from any thread, with or without the GIL. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ec.h"

#define NBINS 168
#define NBUCKETS 4096

typedef struct block {
    CUdeviceptr ptr;
    int64_t size;                 /* the class size: what the driver gave */
    int64_t requested;
    CUstream stream;
    struct block *next;           /* in a free list, or in a live-hash chain */
} block;

typedef struct {
    pthread_mutex_t lock;
    block *bins[NBINS];           /* cached (free) blocks per class */
    block *live[NBUCKETS];        /* blocks held by tensors, hashed by address */
    ec_memory_stats st;
} pool;

static pool pools[EC_MAX_DEVICES];
static pthread_once_t pools_once = PTHREAD_ONCE_INIT;

static void pools_init(void) {
    for (int d = 0; d < EC_MAX_DEVICES; d++) pthread_mutex_init(&pools[d].lock, NULL);
}

/* the class of a request: its size and bin */
static int64_t size_class(int64_t n, int *bin) {
    if (n <= 512) {
        *bin = 0;
        return 512;
    }
    int k = 63 - __builtin_clzll((unsigned long long)(n - 1));   /* 2^k < n <= 2^(k+1) */
    int64_t step = (int64_t)1 << (k - 2);
    int64_t q = (n + step - 1) / step;                          /* 5..8 */
    *bin = 1 + (k - 9) * 4 + (int)(q - 5);
    return q * step;
}

static unsigned bucket(CUdeviceptr p) {
    return (unsigned)((p >> 9) * 2654435761u) % NBUCKETS;
}

static void fmt_bytes(char *buf, size_t n, double b) {
    const char *unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024 && u < 4) { b /= 1024; u++; }
    if (u == 0) snprintf(buf, n, "%.0f %s", b, unit[u]);
    else snprintf(buf, n, "%.2f %s", b, unit[u]);
}

/* release every cached block of a pool (its lock held) */
static void release_cached(pool *p) {
    for (int b = 0; b < NBINS; b++) {
        block *blk = p->bins[b];
        while (blk) {
            block *next = blk->next;
            cu.MemFree(blk->ptr);
            p->st.reserved -= blk->size;
            p->st.num_device_frees++;
            p->st.cached_blocks--;
            free(blk);
            blk = next;
        }
        p->bins[b] = NULL;
    }
}

void *ec_alloc(ember_ctx *ctx, int64_t nbytes) {
    if (nbytes < 0) {
        ec_fail(ctx, EMBER_ERR_VALUE, "alloc: negative size");
        return NULL;
    }
    if (ec_enter(ctx)) return NULL;
    pthread_once(&pools_once, pools_init);
    int d = ctx->device, bin;
    int64_t size = size_class(nbytes, &bin);
    CUstream s = ec_stream(d);
    pool *p = &pools[d];
    pthread_mutex_lock(&p->lock);
    block **link = &p->bins[bin], *blk = NULL;
    for (; *link; link = &(*link)->next)
        if ((*link)->stream == s) {
            blk = *link;
            *link = blk->next;
            p->st.cached_blocks--;
            break;
        }
    if (!blk) {
        CUdeviceptr ptr = 0;
        CUresult r = cu.MemAlloc(&ptr, (size_t)size);
        if (r == CUDA_ERROR_OUT_OF_MEMORY) {
            p->st.num_alloc_retries++;
            cu.CtxSynchronize();
            release_cached(p);
            r = cu.MemAlloc(&ptr, (size_t)size);
        }
        if (r != CUDA_SUCCESS) {
            if (r == CUDA_ERROR_OUT_OF_MEMORY) {
                size_t free_b = 0, total_b = 0;
                char want[32], total[32], avail[32], held[32], cached[32];
                cu.MemGetInfo(&free_b, &total_b);
                p->st.num_ooms++;
                fmt_bytes(want, sizeof want, (double)nbytes);
                fmt_bytes(total, sizeof total, (double)total_b);
                fmt_bytes(avail, sizeof avail, (double)free_b);
                fmt_bytes(held, sizeof held, (double)p->st.allocated);
                fmt_bytes(cached, sizeof cached, (double)(p->st.reserved - p->st.allocated));
                ec_fail(ctx, EMBER_ERR_MEMORY, "CUDA out of memory. Tried to allocate %s. GPU %d "
                        "has a total capacity of %s of which %s is free. Of the allocated memory "
                        "%s is allocated by ember, and %s is reserved by ember but unallocated.",
                        want, d, total, avail, held, cached);
            } else {
                ec_cu_fail(ctx, r, "cuMemAlloc");
            }
            pthread_mutex_unlock(&p->lock);
            return NULL;
        }
        blk = (block *)malloc(sizeof(block));
        if (!blk) {
            cu.MemFree(ptr);
            pthread_mutex_unlock(&p->lock);
            ec_fail(ctx, EMBER_ERR_MEMORY, "alloc: out of host memory");
            return NULL;
        }
        blk->ptr = ptr;
        blk->size = size;
        blk->stream = s;
        p->st.reserved += size;
        if (p->st.reserved > p->st.reserved_peak) p->st.reserved_peak = p->st.reserved;
        p->st.num_device_allocs++;
    }
    blk->requested = nbytes;
    unsigned h = bucket(blk->ptr);
    blk->next = p->live[h];
    p->live[h] = blk;
    p->st.allocated += size;
    p->st.requested += nbytes;
    if (p->st.allocated > p->st.allocated_peak) p->st.allocated_peak = p->st.allocated;
    p->st.num_allocs++;
    p->st.active_blocks++;
    pthread_mutex_unlock(&p->lock);
    return (void *)(uintptr_t)blk->ptr;
}

void ec_free(int32_t device, void *ptr) {
    if (!ptr || device < 0 || device >= EC_MAX_DEVICES) return;
    pool *p = &pools[device];
    CUdeviceptr key = (CUdeviceptr)(uintptr_t)ptr;
    pthread_mutex_lock(&p->lock);
    block **link = &p->live[bucket(key)];
    for (; *link; link = &(*link)->next)
        if ((*link)->ptr == key) {
            block *blk = *link;
            int bin;
            *link = blk->next;
            size_class(blk->size, &bin);
            blk->next = p->bins[bin];
            p->bins[bin] = blk;
            p->st.allocated -= blk->size;
            p->st.requested -= blk->requested;
            p->st.num_frees++;
            p->st.active_blocks--;
            p->st.cached_blocks++;
            break;
        }
    pthread_mutex_unlock(&p->lock);
}

void ec_memory_stats_get(int device, ec_memory_stats *s) {
    pthread_once(&pools_once, pools_init);
    pool *p = &pools[device];
    pthread_mutex_lock(&p->lock);
    *s = p->st;
    pthread_mutex_unlock(&p->lock);
}

void ec_memory_reset_peaks(int device) {
    pthread_once(&pools_once, pools_init);
    pool *p = &pools[device];
    pthread_mutex_lock(&p->lock);
    p->st.allocated_peak = p->st.allocated;
    p->st.reserved_peak = p->st.reserved;
    pthread_mutex_unlock(&p->lock);
}

int ec_empty_cache(int device) {
    pthread_once(&pools_once, pools_init);
    if (!ec_devices[device].ready) return 0;
    pool *p = &pools[device];
    ember_ctx ctx;
    ctx.device = device;
    if (ec_enter(&ctx)) return 1;
    pthread_mutex_lock(&p->lock);
    CUresult r = cu.CtxSynchronize();
    release_cached(p);
    pthread_mutex_unlock(&p->lock);
    return r;
}
