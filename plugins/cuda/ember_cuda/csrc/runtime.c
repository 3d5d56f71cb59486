/* The shared C runtime of ember-cuda: the driver loaded with dlopen, contexts, the
 * calling thread's current stream, kernel lookup and launch, errors, operand layouts. */
#include <Python.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember/half.h"
#include "ec.h"

cu_api cu;
ec_device ec_devices[EC_MAX_DEVICES];

static pthread_mutex_t device_lock = PTHREAD_MUTEX_INITIALIZER;
/* the device whose context this thread made current last (-1: none yet) */
static __thread int tls_device = -1;
/* this thread's current stream per device (NULL: the legacy default stream, as PyTorch's) */
static __thread CUstream tls_stream[EC_MAX_DEVICES];

/* -- errors ------------------------------------------------------------------------------ */

int ec_fail(ember_ctx *ctx, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->error, EMBER_ERROR_LEN, fmt, ap);
    va_end(ap);
    return code;
}

int ec_cu_fail(ember_ctx *ctx, CUresult r, const char *what) {
    const char *name = "CUDA_ERROR_UNKNOWN", *text = "unknown error";
    if (cu.GetErrorName) cu.GetErrorName(r, &name);
    if (cu.GetErrorString) cu.GetErrorString(r, &text);
    return ec_fail(ctx, r == CUDA_ERROR_OUT_OF_MEMORY ? EMBER_ERR_MEMORY : EMBER_ERR_RUNTIME,
                   "CUDA error: %s: %s (%s)", name, text, what);
}

const char *ec_dtype_name(int dtype) {
    switch (dtype) {
    case EMBER_UINT8: return "Byte";
    case EMBER_INT8: return "Char";
    case EMBER_INT16: return "Short";
    case EMBER_INT32: return "Int";
    case EMBER_INT64: return "Long";
    case EMBER_FLOAT16: return "Half";
    case EMBER_FLOAT32: return "Float";
    case EMBER_FLOAT64: return "Double";
    case EMBER_BOOL: return "Bool";
    case EMBER_BFLOAT16: return "BFloat16";
    default: return "?";
    }
}

int ec_itemsize(int dtype) {
    switch (dtype) {
    case EMBER_UINT8: case EMBER_INT8: case EMBER_BOOL: return 1;
    case EMBER_INT16: case EMBER_FLOAT16: case EMBER_BFLOAT16: return 2;
    case EMBER_INT32: case EMBER_FLOAT32: return 4;
    case EMBER_INT64: case EMBER_FLOAT64: return 8;
    default: return 0;
    }
}

int ec_is_floating(int dtype) {
    return dtype == EMBER_FLOAT16 || dtype == EMBER_FLOAT32 || dtype == EMBER_FLOAT64 ||
           dtype == EMBER_BFLOAT16;
}

int ec_fail_dtype(ember_ctx *ctx, const char *op, int dtype) {
    return ec_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "\"%s_cuda\" not implemented for '%s'", op,
                   ec_dtype_name(dtype));
}

/* -- the driver ---------------------------------------------------------------------------- */

static void *sym(void *lib, const char *name, int *missing, char *why, size_t n) {
    void *p = dlsym(lib, name);
    if (!p && !*missing) {
        snprintf(why, n, "libcuda lacks %s", name);
        *missing = 1;
    }
    return p;
}

int ec_driver_load(char *why, size_t n) {
    static int state = 0;                 /* 0: not tried, 1: loaded, -1: failed */
    static char failure[256];
    if (state == 1) return 0;
    if (state == -1) {
        snprintf(why, n, "%s", failure);
        return -1;
    }
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib) lib = dlopen("libcuda.so", RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
        snprintf(failure, sizeof failure, "the CUDA driver (libcuda.so.1) was not found: %s",
                 dlerror());
        state = -1;
        snprintf(why, n, "%s", failure);
        return -1;
    }
    int missing = 0;
#define LOAD(field, name) *(void **)&cu.field = sym(lib, name, &missing, failure, sizeof failure)
    LOAD(Init, "cuInit");
    LOAD(DriverGetVersion, "cuDriverGetVersion");
    LOAD(DeviceGet, "cuDeviceGet");
    LOAD(DeviceGetCount, "cuDeviceGetCount");
    LOAD(DeviceGetAttribute, "cuDeviceGetAttribute");
    LOAD(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    LOAD(CtxSetCurrent, "cuCtxSetCurrent");
    LOAD(CtxSynchronize, "cuCtxSynchronize");
    LOAD(MemAlloc, "cuMemAlloc_v2");
    LOAD(MemFree, "cuMemFree_v2");
    LOAD(MemGetInfo, "cuMemGetInfo_v2");
    LOAD(MemHostAlloc, "cuMemHostAlloc");
    LOAD(MemFreeHost, "cuMemFreeHost");
    LOAD(MemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2");
    LOAD(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
    LOAD(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
    LOAD(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
    LOAD(MemsetD8Async, "cuMemsetD8Async");
    LOAD(StreamCreateWithPriority, "cuStreamCreateWithPriority");
    LOAD(StreamDestroy, "cuStreamDestroy_v2");
    LOAD(StreamSynchronize, "cuStreamSynchronize");
    LOAD(StreamQuery, "cuStreamQuery");
    LOAD(StreamWaitEvent, "cuStreamWaitEvent");
    LOAD(EventCreate, "cuEventCreate");
    LOAD(EventDestroy, "cuEventDestroy_v2");
    LOAD(EventRecord, "cuEventRecord");
    LOAD(EventSynchronize, "cuEventSynchronize");
    LOAD(EventQuery, "cuEventQuery");
    LOAD(EventElapsedTime, "cuEventElapsedTime");
    LOAD(ModuleLoadData, "cuModuleLoadData");
    LOAD(ModuleGetFunction, "cuModuleGetFunction");
    LOAD(FuncSetAttribute, "cuFuncSetAttribute");
    LOAD(LaunchKernel, "cuLaunchKernel");
    LOAD(GetErrorName, "cuGetErrorName");
    LOAD(GetErrorString, "cuGetErrorString");
#undef LOAD
    if (!missing) {
        CUresult r = cu.Init(0);
        if (r != CUDA_SUCCESS) {
            const char *name = "?";
            cu.GetErrorName(r, &name);
            snprintf(failure, sizeof failure, "cuInit failed: %s", name);
            missing = 1;
        }
    }
    if (missing) {
        memset(&cu, 0, sizeof cu);
        state = -1;
        snprintf(why, n, "%s", failure);
        return -1;
    }
    state = 1;
    return 0;
}

static int device_init(ember_ctx *ctx, int d) {
    ec_device *dev = &ec_devices[d];
    char why[256];
    int rc = EMBER_OK;
    pthread_mutex_lock(&device_lock);
    if (dev->ready) goto done;
    if (ec_driver_load(why, sizeof why)) {
        rc = ec_fail(ctx, EMBER_ERR_RUNTIME, "%s", why);
        goto done;
    }
    int count = 0;
    CUresult r = cu.DeviceGetCount(&count);
    if (r != CUDA_SUCCESS) { rc = ec_cu_fail(ctx, r, "cuDeviceGetCount"); goto done; }
    if (d >= count) {
        rc = ec_fail(ctx, EMBER_ERR_RUNTIME, "CUDA error: invalid device ordinal %d (%d device%s)",
                     d, count, count == 1 ? "" : "s");
        goto done;
    }
    CUdevice h;
    if ((r = cu.DeviceGet(&h, d)) != CUDA_SUCCESS) { rc = ec_cu_fail(ctx, r, "cuDeviceGet"); goto done; }
    if ((r = cu.DevicePrimaryCtxRetain(&dev->context, h)) != CUDA_SUCCESS) {
        rc = ec_cu_fail(ctx, r, "cuDevicePrimaryCtxRetain");
        goto done;
    }
    cu.DeviceGetAttribute(&dev->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, h);
    cu.DeviceGetAttribute(&dev->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, h);
    cu.DeviceGetAttribute(&dev->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, h);
    cu.DeviceGetAttribute(&dev->max_smem_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, h);
    if (dev->sm_count <= 0) dev->sm_count = 1;
    dev->ready = 1;
done:
    pthread_mutex_unlock(&device_lock);
    return rc;
}

int ec_enter(ember_ctx *ctx) {
    int d = ctx->device;
    if (d == tls_device) return EMBER_OK;
    if (d < 0 || d >= EC_MAX_DEVICES)
        return ec_fail(ctx, EMBER_ERR_RUNTIME, "CUDA error: invalid device ordinal %d", d);
    if (!ec_devices[d].ready) {
        int rc = device_init(ctx, d);
        if (rc) return rc;
    }
    CUresult r = cu.CtxSetCurrent(ec_devices[d].context);
    if (r != CUDA_SUCCESS) return ec_cu_fail(ctx, r, "cuCtxSetCurrent");
    tls_device = d;
    return EMBER_OK;
}

CUstream ec_stream(int device) {
    return (device >= 0 && device < EC_MAX_DEVICES) ? tls_stream[device] : NULL;
}

void ec_set_stream(int device, CUstream s) {
    if (device >= 0 && device < EC_MAX_DEVICES) tls_stream[device] = s;
}

/* -- kernels -------------------------------------------------------------------------------- */

static PyObject *loader = NULL;          /* (device, module, name) -> int */

void ec_set_loader(void *callable) {
    Py_XINCREF((PyObject *)callable);
    Py_XDECREF(loader);
    loader = (PyObject *)callable;
}

int ec_get(ember_ctx *ctx, ec_kernel *k, const char *module, const char *name, CUfunction *f) {
    int d = ctx->device;
    if (d >= 0 && d < EC_MAX_DEVICES && k->fn[d]) {
        *f = k->fn[d];
        return EMBER_OK;
    }
    int rc = ec_enter(ctx);
    if (rc) return rc;
    rc = EMBER_OK;
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *r = loader ? PyObject_CallFunction(loader, "iss", d, module, name) : NULL;
    if (r == NULL) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyObject *s = value ? PyObject_Str(value) : NULL;
        const char *msg = s ? PyUnicode_AsUTF8(s) : "no kernel loader is set";
        rc = ec_fail(ctx, EMBER_ERR_RUNTIME, "ember-cuda: could not load kernel %s from %s: %s",
                     name, module, msg ? msg : "?");
        Py_XDECREF(s);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        PyErr_Clear();
    } else {
        void *p = PyLong_AsVoidPtr(r);
        Py_DECREF(r);
        if (p == NULL) {
            PyErr_Clear();
            rc = ec_fail(ctx, EMBER_ERR_RUNTIME, "ember-cuda: kernel %s of %s is missing", name,
                         module);
        } else {
            k->fn[d] = (CUfunction)p;
            *f = (CUfunction)p;
        }
    }
    PyGILState_Release(g);
    return rc;
}

const char *ec_dtype_key(int dtype) {
    switch (dtype) {
    case EMBER_UINT8: return "uint8";
    case EMBER_INT8: return "int8";
    case EMBER_INT16: return "int16";
    case EMBER_INT32: return "int32";
    case EMBER_INT64: return "int64";
    case EMBER_FLOAT16: return "float16";
    case EMBER_FLOAT32: return "float32";
    case EMBER_FLOAT64: return "float64";
    case EMBER_BOOL: return "bool";
    case EMBER_BFLOAT16: return "bfloat16";
    default: return "unknown";
    }
}

int ec_fn(ember_ctx *ctx, ec_kernel *cache, const char *family, int dtype, const char *name,
          CUfunction *f) {
    ec_kernel *k = &cache[dtype & 15];
    int d = ctx->device;
    if (d >= 0 && d < EC_MAX_DEVICES && k->fn[d]) {
        *f = k->fn[d];
        return EMBER_OK;
    }
    char module[64];
    snprintf(module, sizeof module, "%s.%s", family, ec_dtype_key(dtype));
    return ec_get(ctx, k, module, name, f);
}

int ec_launch(ember_ctx *ctx, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
              unsigned block, unsigned smem, void **args) {
    int rc = ec_enter(ctx);
    if (rc) return rc;
    int slot = ec_profiling ? ec_profile_begin(ctx, f) : -1;
    CUresult r = cu.LaunchKernel(f, gx, gy, gz, block, 1, 1, smem, tls_stream[ctx->device],
                                 args, NULL);
    if (slot >= 0) ec_profile_end(ctx, slot);
    if (r != CUDA_SUCCESS) return ec_cu_fail(ctx, r, "cuLaunchKernel");
    return EMBER_OK;
}

/* -- the kernel profiler ------------------------------------------------------------------ */

typedef struct {
    CUfunction f;
    CUevent start, end;
} prof_record;

int ec_profiling = 0;
static prof_record *prof;
static long prof_n, prof_cap;
static pthread_mutex_t prof_lock = PTHREAD_MUTEX_INITIALIZER;

void ec_profile_start(void) {
    pthread_mutex_lock(&prof_lock);
    prof_n = 0;
    ec_profiling = 1;
    pthread_mutex_unlock(&prof_lock);
}

int ec_profile_begin(ember_ctx *ctx, CUfunction f) {
    pthread_mutex_lock(&prof_lock);
    int slot = -1;
    if (prof_n == prof_cap) {                 /* events are kept and reused across runs */
        long cap = prof_cap ? 2 * prof_cap : 4096;
        prof_record *p = (prof_record *)realloc(prof, (size_t)cap * sizeof *p);
        if (p) {
            memset(p + prof_cap, 0, (size_t)(cap - prof_cap) * sizeof *p);
            prof = p;
            prof_cap = cap;
        }
    }
    if (prof_n < prof_cap) {
        prof_record *rec = &prof[prof_n];
        if ((rec->start || cu.EventCreate(&rec->start, CU_EVENT_DEFAULT) == CUDA_SUCCESS) &&
            (rec->end || cu.EventCreate(&rec->end, CU_EVENT_DEFAULT) == CUDA_SUCCESS)) {
            rec->f = f;
            cu.EventRecord(rec->start, tls_stream[ctx->device]);
            slot = (int)prof_n++;
        }
    }
    pthread_mutex_unlock(&prof_lock);
    return slot;
}

void ec_profile_end(ember_ctx *ctx, int slot) {
    cu.EventRecord(prof[slot].end, tls_stream[ctx->device]);
}

long ec_profile_stop(uintptr_t *fn, float *ms, long n) {
    pthread_mutex_lock(&prof_lock);
    ec_profiling = 0;
    for (long i = 0; i < prof_n && i < n; i++) {
        cu.EventSynchronize(prof[i].end);
        fn[i] = (uintptr_t)prof[i].f;
        ms[i] = 0;
        cu.EventElapsedTime(&ms[i], prof[i].start, prof[i].end);
    }
    long total = prof_n;
    pthread_mutex_unlock(&prof_lock);
    return total;
}

unsigned ec_blocks(ember_ctx *ctx, int64_t work, int64_t per_thread) {
    int64_t threads = (work + per_thread - 1) / per_thread;
    int64_t blocks = (threads + EC_THREADS - 1) / EC_THREADS;
    int sms = ec_devices[ctx->device].sm_count;
    int64_t cap = (int64_t)(sms > 0 ? sms : 1) * 16;     /* grid-stride beyond a few waves */
    if (blocks > cap) blocks = cap;
    return blocks < 1 ? 1 : (unsigned)blocks;
}

/* -- the device error slot of the index and search kernels ---------------------------------- */

static int64_t *err_host[EC_MAX_DEVICES];
static CUdeviceptr err_dev[EC_MAX_DEVICES];

CUdeviceptr ec_error_slot(ember_ctx *ctx) {
    int d = ctx->device;
    if (!err_host[d]) {
        void *p = NULL;
        if (cu.MemHostAlloc(&p, 4 * sizeof(int64_t),
                            CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP) != CUDA_SUCCESS)
            return 0;
        memset(p, 0, 4 * sizeof(int64_t));
        if (cu.MemHostGetDevicePointer(&err_dev[d], p, 0) != CUDA_SUCCESS) return 0;
        err_host[d] = (int64_t *)p;
    }
    return err_dev[d];
}

/* Errors found in the data (an index out of range, a bad target, a zero integer divisor)
 * are reported as CUDA reports a device-side assert: at the next synchronisation (to_host,
 * ember.cuda.synchronize), so that embedding lookups and losses never stall the stream.
 * EMBER_CUDA_SYNC_ERRORS=1 makes every checking entry wait and raise at the op itself. */
static int sync_errors = -1;
static const char *err_op[EC_MAX_DEVICES];

static int errors_are_synchronous(void) {
    if (sync_errors < 0) {
        const char *e = getenv("EMBER_CUDA_SYNC_ERRORS");
        sync_errors = e != NULL && *e != 0 && strcmp(e, "0") != 0;
    }
    return sync_errors;
}

int ec_sync_errors(ember_ctx *ctx, const char *op) {
    int d = ctx->device;
    err_op[d] = op;
    if (!errors_are_synchronous()) return EMBER_OK;
    CUresult r = cu.StreamSynchronize(tls_stream[d]);
    if (r != CUDA_SUCCESS) return ec_cu_fail(ctx, r, op);
    return ec_take_error(ctx, 0);
}

int ec_take_error(ember_ctx *ctx, int deferred) {
    int d = ctx->device;
    volatile int64_t *e = err_host[d];
    if (!e || e[0] == 0) return EMBER_OK;
    int code = (int)e[0];
    long long value = (long long)e[1], bound = (long long)e[2], dim = (long long)e[3];
    e[0] = e[1] = e[2] = e[3] = 0;
    const char *op = err_op[d] ? err_op[d] : "a kernel";
    int rc;
    switch (code) {
    case 1:      /* gather/scatter: value is the index, bound the size of the dim, e[3] the dim */
        rc = ec_fail(ctx, EMBER_ERR_INDEX, "index %lld is out of bounds for dimension %lld with "
                     "size %lld", value, dim, bound);
        break;
    case 2:
        rc = ec_fail(ctx, EMBER_ERR_RUNTIME, "probability tensor contains either `inf`, `nan` "
                     "or element < 0");
        break;
    case 3:
        rc = ec_fail(ctx, EMBER_ERR_RUNTIME, "invalid multinomial distribution (sum of "
                     "probabilities <= 0)");
        break;
    case 4:
        rc = ec_fail(ctx, EMBER_ERR_INDEX, "Target %lld is out of bounds.", value);
        break;
    case 5:                   /* an integer division by zero (binary kernels) */
        rc = ec_fail(ctx, EMBER_ERR_RUNTIME, "%s: ZeroDivisionError", op);
        break;
    default:
        rc = ec_fail(ctx, EMBER_ERR_RUNTIME, "%s: a kernel reported error %d", op, code);
    }
    if (deferred) {                         /* say where it came from */
        size_t len = strlen(ctx->error);
        snprintf(ctx->error + len, EMBER_ERROR_LEN - len, " (reported asynchronously by %s "
                 "on cuda:%d; set EMBER_CUDA_SYNC_ERRORS=1 to raise at the op)", op, d);
    }
    return rc;
}

/* -- operands -------------------------------------------------------------------------------- */

ec_scalar ec_read_scalar(const ember_view *v) {
    ec_scalar s;
    const char *p = v->data;
    switch (v->dtype) {
    case EMBER_FLOAT32: s.f = *(const float *)p; break;
    case EMBER_FLOAT64: s.f = *(const double *)p; break;
    case EMBER_FLOAT16: s.f = ember_half_to_float(*(const uint16_t *)p); break;
    case EMBER_BFLOAT16: s.f = ember_bf16_to_float(*(const uint16_t *)p); break;
    case EMBER_UINT8: s.i = *(const uint8_t *)p; break;
    case EMBER_INT8: s.i = *(const int8_t *)p; break;
    case EMBER_INT16: s.i = *(const int16_t *)p; break;
    case EMBER_INT32: s.i = *(const int32_t *)p; break;
    case EMBER_INT64: s.i = *(const int64_t *)p; break;
    case EMBER_BOOL: s.i = *(const uint8_t *)p != 0; break;
    default: s.i = 0;
    }
    return s;
}

int64_t ec_numel(const ember_view *v) {
    int64_t n = 1;
    for (int d = 0; d < v->ndim; d++) n *= v->sizes[d];
    return n;
}

int ec_contiguous(const ember_view *v) {
    int64_t expect = 1;
    for (int d = v->ndim - 1; d >= 0; d--) {
        if (v->sizes[d] != 1 && v->strides[d] != expect) return 0;
        expect *= v->sizes[d];
    }
    return 1;
}

int ec_check_view(ember_ctx *ctx, const char *op, const ember_view *v) {
    if (v->ndim < 0 || v->ndim > EMBER_MAX_DIM)
        return ec_fail(ctx, EMBER_ERR_VALUE, "%s: bad ndim %d", op, (int)v->ndim);
    if (!ec_itemsize(v->dtype))
        return ec_fail(ctx, EMBER_ERR_NOT_IMPLEMENTED, "%s: unknown dtype code %d", op,
                       (int)v->dtype);
    for (int d = 0; d < v->ndim; d++)
        if (v->sizes[d] < 0 || v->strides[d] < 0)
            return ec_fail(ctx, EMBER_ERR_VALUE, "%s: negative size or stride", op);
    return EMBER_OK;
}

int64_t ec_layout_make(ec_layout *L, int n, const ember_view *const *views) {
    const ember_view *out = views[0];
    int nd = 0;
    int64_t numel = 1;
    /* keep the dims of size != 1, outermost first */
    for (int d = 0; d < out->ndim; d++) {
        if (out->sizes[d] == 1) continue;
        L->sizes[nd] = out->sizes[d];
        for (int k = 0; k < n; k++) {
            const ember_view *v = views[k];
            int j = v ? d + v->ndim - out->ndim : -1;  /* right-aligned, as broadcasting */
            L->strides[k][nd] = (v == NULL || ec_is_scalar(v) || j < 0 || v->sizes[j] == 1)
                                ? 0 : v->strides[j];
        }
        numel *= out->sizes[d];
        nd++;
    }
    /* merge dim i into i + 1 where every operand steps evenly across both */
    int m = 0;
    for (int d = 0; d < nd; d++) {
        if (m > 0) {
            int ok = 1;
            for (int k = 0; k < n && ok; k++)
                ok = L->strides[k][m - 1] == L->strides[k][d] * L->sizes[d];
            if (ok) {
                L->sizes[m - 1] *= L->sizes[d];
                for (int k = 0; k < n; k++) L->strides[k][m - 1] = L->strides[k][d];
                continue;
            }
        }
        L->sizes[m] = L->sizes[d];
        for (int k = 0; k < n; k++) L->strides[k][m] = L->strides[k][d];
        m++;
    }
    L->ndim = m;
    /* 32-bit indexing when the element count and every operand's reach fit */
    int fits = numel < ((int64_t)1 << 31);
    for (int k = 0; k < n && fits; k++) {
        int64_t reach = 0;
        for (int d = 0; d < m; d++) reach += (L->sizes[d] - 1) * L->strides[k][d];
        fits = reach < ((int64_t)1 << 31);
    }
    L->index32 = fits;
    return numel;
}

int ec_layout_flat(const ec_layout *L, int n, unsigned scalars) {
    if (L->ndim > 1) return 0;
    for (int k = 0; k < n; k++)
        if (L->ndim == 1 && !(scalars >> k & 1) && L->strides[k][0] != 1) return 0;
    return 1;
}
