/* The prepared all_reduce and broadcast of a contiguous CPU tensor (distributed/_fast.py) in
 * C: the slot's all-gather and its polls, the signature check, then the combination of the
 * rank rows or the root's row (a payload riding in the slot), or MPI's in-place all-reduce or
 * broadcast (one past it), with no Python between MPI calls.  Built on first use against the MPI library mpi4py loaded
 * (distributed/_native.py); what it does not finish it hands back to the Python path.
 *
 * Both calls start with the group's slot:
 *   comm       the group's meta communicator, as its Fortran handle (mpi4py's py2f())
 *   slot, rows the group's slot (this rank's header + payload) and all ranks' rows
 *   slot_bytes, header_bytes, signature (bytes: the header every rank's row must carry)
 *   size       the group's size;  spins: polls of a request before handing it back
 * all_reduce(<slot>, nbytes, kind, tensor): the payload (the tensor's nbytes) rides in the
 *   slot; kind = DTYPE * 4 + OP for the rows combined here, -1 for Python to combine them.
 * all_reduce_large(<slot>, data_comm, count, datatype, op, tensor): the slot carries the
 *   signature alone, then MPI_Iallreduce in place on the tensor (Fortran handles of the
 *   data communicator, datatype and op).
 * broadcast(<slot>, nbytes, root, is_root, tensor): the root's payload rides in the slot.
 * broadcast_large(<slot>, data_comm, nbytes, root, tensor): the signature, then MPI_Ibcast.
 * Answers: DONE (the tensor holds the result; AVG's division is Python's on the large path),
 * GATHERED (rows checked, Python combines them), MISMATCH (a rank's signature differs:
 * Python reports which), or (phase, handle): the Fortran handle of a request still pending
 * after `spins` polls, phase 0 the slot's all-gather and 1 the all-reduce or broadcast.
 * Python waits on it with the group's timeout and finishes as on its own path.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <mpi.h>
#include <stdint.h>
#include <string.h>

enum { DONE = 0, GATHERED = 1, MISMATCH = 2 };
enum { F32 = 0, F64 = 1, I32 = 2, I64 = 3 };           /* kind = dtype * 4 + op */
enum { SUM = 0, MAX = 1, MIN = 2, AVG = 3 };

/* out = rows[0] (op) rows[1] (op) ... in rank order, as NumPy's reduce over axis 0 */
#define COMBINE(T)                                                                        \
    static void combine_##T(T *out, const char *rows, size_t stride, int size, size_t n,   \
                            int op) {                                                     \
        const T *r0 = (const T *)rows;                                                    \
        for (size_t i = 0; i < n; i++) {                                                  \
            T acc = r0[i];                                                                \
            for (int r = 1; r < size; r++) {                                              \
                T v = ((const T *)(rows + (size_t)r * stride))[i];                        \
                if (op == MAX) acc = (v > acc || v != v) && acc == acc ? v : acc;          \
                else if (op == MIN) acc = (v < acc || v != v) && acc == acc ? v : acc;     \
                else acc = acc + v;                                                       \
            }                                                                             \
            out[i] = op == AVG ? (T)(acc / size) : acc;                                   \
        }                                                                                 \
    }
COMBINE(float)
COMBINE(double)
COMBINE(int32_t)
COMBINE(int64_t)

static int combine(int kind, void *out, const char *rows, size_t stride, int size,
                   size_t nbytes) {
    int op = kind % 4;
    switch (kind / 4) {
    case F32: combine_float(out, rows, stride, size, nbytes / 4, op); return 1;
    case F64: combine_double(out, rows, stride, size, nbytes / 8, op); return 1;
    case I32: if (op == AVG) return 0; combine_int32_t(out, rows, stride, size, nbytes / 4, op);
              return 1;
    case I64: if (op == AVG) return 0; combine_int64_t(out, rows, stride, size, nbytes / 8, op);
              return 1;
    }
    return 0;
}

typedef struct {                 /* the arguments both calls start with */
    MPI_Comm comm;
    char *slot, *rows;
    Py_ssize_t slot_bytes, header;
    const char *sig;
    int size;
    long spins;
} Slot;

enum { SLOT_ARGS = 8 };

static int parse_slot(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t extra,
                      const char *name, Slot *s) {
    Py_ssize_t sig_len;
    if (nargs != SLOT_ARGS + extra) {
        PyErr_Format(PyExc_TypeError, "%s() takes %zd arguments", name, SLOT_ARGS + extra);
        return -1;
    }
    s->comm = MPI_Comm_f2c((MPI_Fint)PyLong_AsLong(args[0]));
    s->slot = (char *)PyLong_AsVoidPtr(args[1]);
    s->rows = (char *)PyLong_AsVoidPtr(args[2]);
    s->slot_bytes = PyLong_AsSsize_t(args[3]);
    s->header = PyLong_AsSsize_t(args[4]);
    if (PyBytes_AsStringAndSize(args[5], (char **)&s->sig, &sig_len) < 0) return -1;
    s->size = (int)PyLong_AsLong(args[6]);
    s->spins = PyLong_AsLong(args[7]);
    if (PyErr_Occurred()) return -1;
    if (sig_len != s->header || s->header > s->slot_bytes || s->size < 1) {
        PyErr_Format(PyExc_ValueError, "%s(): inconsistent slot layout", name);
        return -1;
    }
    return 0;
}

static PyObject *mpi_error(int rc) {
    PyErr_Format(PyExc_RuntimeError, "ember.distributed: MPI error %d", rc);
    return NULL;
}

/* poll `req` up to `spins` times: 1 done, 0 pending, -1 an MPI error (raised) */
static int poll(MPI_Request *req, long spins) {
    int flag = 0, rc = MPI_SUCCESS;
    for (long i = 0; rc == MPI_SUCCESS && !flag && i < spins; i++)
        rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
        mpi_error(rc);
        return -1;
    }
    return flag;
}

static PyObject *pending(int phase, MPI_Request req) {
    return Py_BuildValue("(il)", phase, (long)MPI_Request_c2f(req));
}

/* the slot's all-gather, polled and checked: 1 when every rank's signature matches (go on),
 * else 0 with *answer the call's answer (pending, MISMATCH, or NULL with an error raised) */
static int exchange(const Slot *s, PyObject **answer) {
    MPI_Request req;
    int rc = MPI_Iallgather(s->slot, (int)s->slot_bytes, MPI_BYTE, s->rows, (int)s->slot_bytes,
                            MPI_BYTE, s->comm, &req);
    if (rc != MPI_SUCCESS) {
        *answer = mpi_error(rc);
        return 0;
    }
    switch (poll(&req, s->spins)) {
    case -1: *answer = NULL; return 0;
    case 0: *answer = pending(0, req); return 0;
    }
    for (int r = 0; r < s->size; r++)
        if (memcmp(s->rows + (size_t)r * s->slot_bytes, s->sig, (size_t)s->header) != 0) {
            *answer = PyLong_FromLong(MISMATCH);
            return 0;
        }
    return 1;
}

/* the answer once the second step (MPI's all-reduce or broadcast past the slot) started */
static PyObject *second_step(int rc, MPI_Request req, long spins) {
    if (rc != MPI_SUCCESS) return mpi_error(rc);
    switch (poll(&req, spins)) {
    case -1: return NULL;
    case 0: return pending(1, req);
    }
    return PyLong_FromLong(DONE);
}

static PyObject *all_reduce(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Slot s;
    PyObject *answer;
    if (parse_slot(args, nargs, 3, "all_reduce", &s) < 0) return NULL;
    Py_ssize_t nbytes = PyLong_AsSsize_t(args[SLOT_ARGS]);
    int kind = (int)PyLong_AsLong(args[SLOT_ARGS + 1]);
    char *tensor = (char *)PyLong_AsVoidPtr(args[SLOT_ARGS + 2]);
    if (PyErr_Occurred()) return NULL;
    if (s.header + nbytes > s.slot_bytes) {
        PyErr_SetString(PyExc_ValueError, "all_reduce(): the payload does not fit the slot");
        return NULL;
    }
    memcpy(s.slot + s.header, tensor, (size_t)nbytes);
    if (!exchange(&s, &answer)) return answer;
    if (kind < 0 || !combine(kind, tensor, s.rows + s.header, (size_t)s.slot_bytes, s.size,
                             (size_t)nbytes))
        return PyLong_FromLong(GATHERED);
    return PyLong_FromLong(DONE);
}

static PyObject *all_reduce_large(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Slot s;
    PyObject *answer;
    MPI_Request req;
    if (parse_slot(args, nargs, 5, "all_reduce_large", &s) < 0) return NULL;
    MPI_Comm data = MPI_Comm_f2c((MPI_Fint)PyLong_AsLong(args[SLOT_ARGS]));
    Py_ssize_t count = PyLong_AsSsize_t(args[SLOT_ARGS + 1]);
    MPI_Datatype type = MPI_Type_f2c((MPI_Fint)PyLong_AsLong(args[SLOT_ARGS + 2]));
    MPI_Op op = MPI_Op_f2c((MPI_Fint)PyLong_AsLong(args[SLOT_ARGS + 3]));
    char *tensor = (char *)PyLong_AsVoidPtr(args[SLOT_ARGS + 4]);
    if (PyErr_Occurred()) return NULL;
    if (!exchange(&s, &answer)) return answer;
    int rc = MPI_Iallreduce(MPI_IN_PLACE, tensor, (int)count, type, op, data, &req);
    return second_step(rc, req, s.spins);
}

static PyObject *broadcast(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Slot s;
    PyObject *answer;
    if (parse_slot(args, nargs, 4, "broadcast", &s) < 0) return NULL;
    Py_ssize_t nbytes = PyLong_AsSsize_t(args[SLOT_ARGS]);
    int root = (int)PyLong_AsLong(args[SLOT_ARGS + 1]);
    int is_root = PyObject_IsTrue(args[SLOT_ARGS + 2]);
    char *tensor = (char *)PyLong_AsVoidPtr(args[SLOT_ARGS + 3]);
    if (PyErr_Occurred()) return NULL;
    if (s.header + nbytes > s.slot_bytes || root < 0 || root >= s.size) {
        PyErr_SetString(PyExc_ValueError, "broadcast(): the payload does not fit the slot");
        return NULL;
    }
    if (is_root) memcpy(s.slot + s.header, tensor, (size_t)nbytes);
    if (!exchange(&s, &answer)) return answer;
    if (!is_root)
        memcpy(tensor, s.rows + (size_t)root * s.slot_bytes + s.header, (size_t)nbytes);
    return PyLong_FromLong(DONE);
}

static PyObject *broadcast_large(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Slot s;
    PyObject *answer;
    MPI_Request req;
    if (parse_slot(args, nargs, 4, "broadcast_large", &s) < 0) return NULL;
    MPI_Comm data = MPI_Comm_f2c((MPI_Fint)PyLong_AsLong(args[SLOT_ARGS]));
    Py_ssize_t nbytes = PyLong_AsSsize_t(args[SLOT_ARGS + 1]);
    int root = (int)PyLong_AsLong(args[SLOT_ARGS + 2]);
    char *tensor = (char *)PyLong_AsVoidPtr(args[SLOT_ARGS + 3]);
    if (PyErr_Occurred()) return NULL;
    if (!exchange(&s, &answer)) return answer;
    int rc = MPI_Ibcast(tensor, (int)nbytes, MPI_BYTE, root, data, &req);
    return second_step(rc, req, s.spins);
}

static PyMethodDef methods[] = {
    {"all_reduce", (PyCFunction)(void (*)(void))all_reduce, METH_FASTCALL, NULL},
    {"all_reduce_large", (PyCFunction)(void (*)(void))all_reduce_large, METH_FASTCALL, NULL},
    {"broadcast", (PyCFunction)(void (*)(void))broadcast, METH_FASTCALL, NULL},
    {"broadcast_large", (PyCFunction)(void (*)(void))broadcast_large, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, .m_name = "_ember_fast_mpi", .m_size = -1, .m_methods = methods};

PyMODINIT_FUNC PyInit__ember_fast_mpi(void) { return PyModule_Create(&module); }
