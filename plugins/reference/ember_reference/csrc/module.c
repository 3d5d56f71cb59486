/* The kernel table, and the Python module `ember_reference._kernels` that hands it to ember.
 *
 * ember asks the plugin's `ember_kernel_table` hook for a PyCapsule named
 * EMBER_KERNEL_TABLE_CAPSULE holding a pointer to an ember_kernel_table that lives as long as
 * the process: here a static struct, filled with designated initialisers so each entry is
 * named.  Every entry of ABI 6.2 is implemented; a vendor may leave any but the six memory
 * entries NULL (the core then runs a composite, or the CPU kernel on host copies).
 *
 * The module also exposes the arena's counters for ember_reference.runtime (memory stats).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "reference.h"

static ember_kernel_table table = {
    .abi_version = EMBER_ABI_VERSION,
    .abi_minor = EMBER_ABI_MINOR,
    .size = sizeof(ember_kernel_table),
    /* memory: the six entries every device must have */
    .alloc = ref_alloc,
    .free = ref_free,
    .copy = ref_copy,
    .fill = ref_fill,
    .to_host = ref_to_host,
    .from_host = ref_from_host,
    /* the primitive families */
    .unary = ref_unary,
    .binary = ref_binary,
    .reduce = ref_reduce,
    .matmul = ref_matmul,
    .random = ref_random,
    .where = ref_where,
    .scan = ref_scan,
    .index = ref_index,
    .search = ref_search,
    /* optional fused kernels */
    .softmax = ref_softmax,
    .norm = ref_norm,
    .nll = ref_nll,
    .conv = ref_conv,
    .pool = ref_pool,
    .adam = ref_adam,
    /* ABI 6.1 */
    .sort = ref_sort,
    /* ABI 6.2 */
    .rnn = ref_rnn,
    /* ABI 6.3 */
    .sgd = ref_sgd,
    /* ABI 6.4 */
    .activation = ref_activation,
    /* ABI 6.5 */
    .ternary = ref_ternary,
};

static PyObject *kernel_table(PyObject *self, PyObject *unused) {
    (void)self, (void)unused;
    PyObject *capsule = PyObject_GetAttrString(self, "_capsule");
    return capsule;
}

static PyObject *memory_stats(PyObject *self, PyObject *unused) {
    (void)self, (void)unused;
    ref_arena_stats s;
    ref_arena_get_stats(&s);
    return Py_BuildValue("{s:L,s:L,s:L,s:L,s:L}",
                         "allocated_bytes", (long long)s.allocated_bytes,
                         "peak_bytes", (long long)s.peak_bytes,
                         "live_allocations", (long long)s.live_allocations,
                         "total_allocations", (long long)s.total_allocations,
                         "bad_frees", (long long)s.bad_frees);
}

static PyObject *reset_peak(PyObject *self, PyObject *unused) {
    (void)self, (void)unused;
    ref_arena_reset_peak();
    Py_RETURN_NONE;
}

static PyObject *address_range(PyObject *self, PyObject *unused) {
    (void)self, (void)unused;
    ref_arena_stats s;
    ref_arena_get_stats(&s);
    return Py_BuildValue("(KK)", (unsigned long long)s.space_begin,
                         (unsigned long long)s.space_end);
}

static PyObject *take_deferred_error(PyObject *self, PyObject *unused) {
    (void)self, (void)unused;
    ember_ctx ctx = {0};
    int code = ref_take_deferred_error(&ctx);
    if (!code) Py_RETURN_NONE;
    return Py_BuildValue("(is)", code, ctx.error);
}

static PyMethodDef methods[] = {
    {"kernel_table", kernel_table, METH_NOARGS,
     "The PyCapsule (\"ember.kernel_table\") holding this device's ember_kernel_table."},
    {"memory_stats", memory_stats, METH_NOARGS,
     "The arena's counters: allocated/peak bytes, live/total allocations, bad frees."},
    {"reset_peak", reset_peak, METH_NOARGS, "Set the peak to the bytes allocated now."},
    {"address_range", address_range, METH_NOARGS,
     "(begin, end) of the reserved device address range; (0, 0) before the first alloc."},
    {"take_deferred_error", take_deferred_error, METH_NOARGS,
     "(code, message) of the data error waiting for a synchronisation, or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "ember_reference._kernels",
    "The reference device's kernels (plain C), handed to ember as a PyCapsule.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__kernels(void) {
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    /* one capsule for the life of the process; the table it points to is static */
    PyObject *capsule = PyCapsule_New(&table, EMBER_KERNEL_TABLE_CAPSULE, NULL);
    if (!capsule || PyModule_AddObject(m, "_capsule", capsule) < 0) {
        Py_XDECREF(capsule);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
