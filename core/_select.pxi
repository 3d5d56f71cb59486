# top-k selection on the host (sorting.py's topk): the first k positions of each row's
# stable order (NaN the largest, ties in row order) in one pass over the row, the k kept
# in a heap whose root is the one that sorts last; an element enters when it sorts before
# the root (on unordered data a few times k log(n / k) times), so a row costs about n
# comparisons, and at most n log k on ordered data.  np.partition and a sort of its
# candidates took 3-4x PyTorch's time.

ctypedef fused select_t:
    float
    double
    int64_t


cdef inline bint sorts_before(select_t x, select_t y, bint largest) noexcept nogil:
    """Whether x comes strictly before y in the stable order (NaN the largest)."""
    if select_t is int64_t:
        return x > y if largest else x < y
    elif largest:
        return (x != x and y == y) or x > y
    else:
        return (x == x and y != y) or x < y


cdef inline bint later(select_t *v, int64_t *ix, Py_ssize_t a, Py_ssize_t b,
                       bint largest) noexcept nogil:
    """Whether kept entry a sorts after kept entry b (equal values: the later position)."""
    return sorts_before(v[b], v[a], largest) or (
        not sorts_before(v[a], v[b], largest) and ix[a] > ix[b])


cdef inline void swap(select_t *v, int64_t *ix, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    v[a], v[b] = v[b], v[a]
    ix[a], ix[b] = ix[b], ix[a]


cdef void sift_down(select_t *v, int64_t *ix, Py_ssize_t i, Py_ssize_t m,
                    bint largest) noexcept nogil:
    """Restore the heap (every parent sorts after its children) below i, over v[:m]."""
    cdef Py_ssize_t c
    while True:
        c = 2 * i + 1
        if c >= m:
            return
        if c + 1 < m and later(v, ix, c + 1, c, largest):
            c += 1
        if not later(v, ix, c, i, largest):
            return
        swap(v, ix, c, i)
        i = c


def _top_k_rows(select_t[:, ::1] a, Py_ssize_t k, bint largest, int64_t[:, ::1] out):
    """out[r] = the positions of row r's first k elements in the stable order (k <= the
    row's length)."""
    cdef Py_ssize_t rows = a.shape[0], n = a.shape[1], r, i, j, m
    if k <= 0 or rows == 0:
        return
    cdef select_t *v = <select_t *>PyMem_Malloc(k * sizeof(select_t))
    cdef int64_t *ix = <int64_t *>PyMem_Malloc(k * sizeof(int64_t))
    if v is NULL or ix is NULL:
        PyMem_Free(v)
        PyMem_Free(ix)
        raise MemoryError()
    try:
        with nogil:
            for r in range(rows):
                for i in range(k):                  # the first k, heaped
                    v[i], ix[i] = a[r, i], i
                    j = i
                    while j > 0 and later(v, ix, j, (j - 1) // 2, largest):
                        swap(v, ix, j, (j - 1) // 2)
                        j = (j - 1) // 2
                for i in range(k, n):               # a later equal value never enters
                    if sorts_before(a[r, i], v[0], largest):
                        v[0], ix[0] = a[r, i], i
                        sift_down(v, ix, 0, k, largest)
                for m in range(k - 1, -1, -1):      # popped last-first: in order
                    out[r, m] = ix[0]
                    swap(v, ix, 0, m)
                    sift_down(v, ix, 0, m, largest)
    finally:
        PyMem_Free(v)
        PyMem_Free(ix)
