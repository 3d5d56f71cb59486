# What the other op modules call of core/_math.pyx.
from ember.core._dispatch cimport Op
from ember.core._dtype cimport dtype
from ember.core._tensor cimport TensorBase

cdef Op op_log_softmax
cdef object softmax_forward(Op op, object input, object dim, object dtype_arg)
cdef object where_c(TensorBase cond, object a, object b, dtype rt, object out)
