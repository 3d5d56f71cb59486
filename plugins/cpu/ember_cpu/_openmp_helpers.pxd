# OpenMP routines for the whole package, behind one header that still builds without
# OpenMP (scikit-learn's sklearn/utils/_openmp_helpers.pxd pattern): without -fopenmp
# the routines become serial stand-ins and every prange runs serially.

cdef extern from *:
    """
    #ifdef _OPENMP
        #include <omp.h>
        #define EMBER_OPENMP_ENABLED 1
    #else
        #define EMBER_OPENMP_ENABLED 0
        #define omp_get_max_threads() 1
        #define omp_get_num_threads() 1
        #define omp_get_thread_num() 0
        #define omp_in_parallel() 0
        #define omp_set_num_threads(n) ((void)(n))
    #endif
    """
    bint EMBER_OPENMP_ENABLED
    int omp_get_max_threads() noexcept nogil
    int omp_get_num_threads() noexcept nogil
    int omp_get_thread_num() noexcept nogil
    int omp_in_parallel() noexcept nogil
    void omp_set_num_threads(int n) noexcept nogil
