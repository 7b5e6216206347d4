// The iterations of a loop recorded on the device (its ops: w<!m> = u any.pair A, and the
// element-wise ops around it), run by one block of THREADS threads while they are small, in
// one launch placed in the WHILE node's body behind the recorded iteration; launch contract:
// gbla_fused(args, control, ...) of _fused.py's generated unit, args its packed arguments.
// (gbla/runtime/capture.py, gbla/kernels/_fused.py): the kernels of one recorded iteration are
// compiled into one translation unit as device functions (the loader reads __global__ as
// __device__ there, __restrict__ as nothing, so that a value one step writes is never read
// through the read-only cache by the next, and __threadfence as __threadfence_block), and
// called in their launch order, a barrier between two, with the same arguments as the graph's
// nodes. Each is a grid-stride kernel whose last-block steps hold for a grid of one block. The
// iteration's last kernel is the loop's test (loop.cu), which sets the control words and the
// WHILE node's condition as it does in the graph.
//
// The block runs behind one recorded iteration, in the WHILE node's body: it goes on while the
// test says go and the next iteration looks small (the first product's input listed, with at
// most max_vertices entries and max_edges out-edges); then it returns and the graph's iteration
// runs the next one with the whole GPU. Every product it runs pushes (GBLA_FUSED in loop.cu's
// choice): a frontier that would pull is a large one, which it hands over instead.

#ifndef GBLA_FUSED_UNIT  // in the fused unit, lists.cuh came with the kernels above
#include "lists.cuh"
#endif

#define GBLA_FUSED_GO 4      // control words (loop.cu's GBLA_GO)
#define GBLA_FUSED_COUNT 7   // iterations this kernel ran, over a run

// A launch argument as the host packed it (8 bytes: an address, an integer's two's complement,
// a float's bits), converted to the type of the parameter it is passed to.
struct gbla_arg {
    u64 bits;

    template <class T>
    __device__ __forceinline__ operator T*() const { return reinterpret_cast<T*>(bits); }
    __device__ __forceinline__ operator bool() const { return bits != 0; }
    __device__ __forceinline__ operator int() const { return (int)(unsigned int)bits; }
    __device__ __forceinline__ operator unsigned int() const { return (unsigned int)bits; }
    __device__ __forceinline__ operator long long() const { return (long long)bits; }
    __device__ __forceinline__ operator u64() const { return bits; }
    __device__ __forceinline__ operator float() const
    {
        return __int_as_float((int)(unsigned int)bits);
    }
    __device__ __forceinline__ operator double() const
    {
        return __longlong_as_double((long long)bits);
    }
};

#ifdef GBLA_FUSED_UNIT  // the kernels of spmv.cu and loop.cu are in the unit
// gbla_gather_decide, then gbla_spmv_device, of one product (the arguments of each, as the graph
// holds them), in the block. Where the input's list has at most a block's entries, without the
// bins: thread t takes entry t, a block scan of their out-degrees lays their edges end to end in
// shared memory, then a thread an edge (a binary search for its entry), so that the edges a
// step waits for are the longest chain of one edge, whatever the degrees; the choice (which
// pushes, in the block) is told the entries and their edges directly. Else the two as the graph
// runs them.
template <class S, class I>
__device__ void gbla_fused_push(
    // gbla_gather_decide's
    long long n_in, const bool* upresent, const I* ids, const u64* count, const I* indptr,
    I* bins, u64* info, int decide, long long* state, long long n, long long edges,
    int early_exit,
    // gbla_spmv_device's
    const I* d_bins, long long d_n_in, const u64* d_info, const typename S::U* uvals,
    const bool* d_upresent, const I* p_indptr, const I* p_indices,
    const typename S::A* p_avals, long long n_out, const I* q_indptr, const I* q_indices,
    const typename S::A* q_avals, long long long_row, const long long* long_rows,
    long long n_long, const long long* huge_rows, long long n_huge, const bool* mask,
    int mask_mode, typename S::Z* w, unsigned char* wpresent, I* w_ids, u64* w_count)
{
    __shared__ I s_entry[GBLA_FUSED_THREADS];
    __shared__ long long s_first[GBLA_FUSED_THREADS];  // the entry's first edge in p_indptr
    __shared__ long long s_at[GBLA_FUSED_THREADS];     // and where its edges start end to end
    __shared__ long long s_warp[32];
    const u64 c = (ids == nullptr || count == nullptr) ? GBLA_UNKNOWN : *count;
    // a product given a pulling policy (no choice made here) pulls, as in the graph
    if (c == GBLA_UNKNOWN || c > (u64)blockDim.x || (!decide && info[GBLA_INFO_PULL])) {
        gbla_gather_decide<I>(n_in, upresent, ids, count, indptr, bins, info, decide, state, n,
                              edges, early_exit);
        __syncthreads();
        gbla_spmv_device<S, I>(d_bins, d_n_in, d_info, uvals, d_upresent, p_indptr, p_indices,
                               p_avals, n_out, q_indptr, q_indices, q_avals, long_row,
                               long_rows, n_long, huge_rows, n_huge, mask, mask_mode, w,
                               wpresent, w_ids, w_count);
        return;
    }
    const int t = threadIdx.x, entries = (int)c;
    long long degree = 0;
    if (t < entries) {
        const I k = ids[t];
        const long long first = (long long)p_indptr[k];
        degree = (long long)p_indptr[k + 1] - first;
        s_entry[t] = k;
        s_first[t] = first;
    }
    long long total;
    const long long at = gbla_block_exclusive_scan(degree, s_warp, &total);
    if (t < entries) s_at[t] = at;
    if (t == 0) {  // as the gather counts them (one bin), and the choice
        info[0] = c;
        info[3] = (u64)total;
        if (decide) gbla_decide_for(info, state, n, edges, early_exit, entries, total);
    }
    __syncthreads();
    for (long long e = t; e < total; e += blockDim.x) {
        int lo = 0, hi = entries - 1;  // the last entry whose edges start at or before e
        while (lo < hi) {
            const int mid = (lo + hi + 1) >> 1;
            if (s_at[mid] <= e) lo = mid;
            else hi = mid - 1;
        }
        gbla_push_edge<S, I>(s_entry[lo], s_first[lo] + (e - s_at[lo]), uvals, p_indices,
                             p_avals, mask, mask_mode, w, wpresent, w_ids, w_count);
    }
}
#endif

// Whether the next iteration is one for this block: its frontier (ids[0..*count), the first
// product's input) known, with at most max_vertices entries and max_edges out-edges in indptr.
// Every thread gets the answer.
template <class I>
__device__ bool gbla_fused_small(const I* indptr, const I* ids, const u64* count,
                                 long long max_vertices, long long max_edges)
{
    __shared__ u64 s_edges;
    const u64 c = *count;
    if (c == GBLA_UNKNOWN || (long long)c > max_vertices) return false;
    if (threadIdx.x == 0) s_edges = 0;
    __syncthreads();
    u64 edges = 0;
    for (long long j = threadIdx.x; j < (long long)c; j += blockDim.x) {
        const long long i = (long long)ids[j];
        edges += (u64)((long long)indptr[i + 1] - (long long)indptr[i]);
    }
    for (int offset = 16; offset > 0; offset >>= 1)
        edges += __shfl_down_sync(0xffffffffu, edges, offset);
    if ((threadIdx.x & 31) == 0 && edges) atomicAdd(&s_edges, edges);
    __syncthreads();
    // read by all before the next call writes it: the loop's barriers come between
    return (long long)s_edges <= max_edges;
}

// Iterations of Steps::run(args) (one recorded iteration, its test last) while the test says
// go and the next looks small.
template <class Steps, class I>
__device__ void gbla_fused_loop(const u64* args, long long* control, const I* indptr,
                                const I* ids, const u64* count, long long max_vertices,
                                long long max_edges)
{
    for (;;) {
        __syncthreads();  // the test's control words seen by every thread
        if (!control[GBLA_FUSED_GO]) return;
        if (!gbla_fused_small<I>(indptr, ids, count, max_vertices, max_edges)) return;
        Steps::run(args);
        if (threadIdx.x == 0) control[GBLA_FUSED_COUNT] += 1;
    }
}
