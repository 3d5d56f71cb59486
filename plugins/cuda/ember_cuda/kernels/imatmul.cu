// Integer matmul (cuBLAS has none): one thread per output element, int64 sums that wrap,
// as the CPU plugin computes.  out [B, M, N] = a [B, M, K] @ b [B, K, N], any strides.
extern "C" __global__ void imatmul(scalar_t *out, const scalar_t *a, const scalar_t *b, i64 B,
                                   i64 M, i64 N, i64 K, i64 os0, i64 os1, i64 os2, i64 as0,
                                   i64 as1, i64 as2, i64 bs0, i64 bs1, i64 bs2) {
    i64 total = B * M * N;
    for (i64 i = global_id(); i < total; i += global_threads()) {
        i64 n = i % N, m = (i / N) % M, bi = i / (N * M);
        const scalar_t *pa = a + bi * as0 + m * as1;
        const scalar_t *pb = b + bi * bs0 + n * bs2;
        u64 acc = 0;
        for (i64 k = 0; k < K; k++) acc += (u64)to_acc(pa[k * as2]) * (u64)to_acc(pb[k * bs1]);
        out[bi * os0 + m * os1 + n * os2] = Store<EC_DTYPE>::from((i64)acc);
    }
}
