// The iterations of a loop recorded on the device (its ops: w<!m> = u any.pair A, and the
// element-wise ops around it), run by one block of THREADS threads while they are small, in
// one launch placed in the WHILE node's body behind the recorded iteration; launch contract:
// gbla_fused(args, control, ...) of _fused.py's generated unit, args its packed arguments.
// (gbla/runtime/capture.py, gbla/kernels/_fused.py): the kernels of one recorded iteration are
// compiled into one translation unit as device functions (the loader reads __global__ as
// __device__ there, __restrict__ as nothing, so that a value one step writes is never read
// through the read-only cache by the next, and __threadfence as __threadfence_block), and
// called in their launch order, a barrier between two, with the same arguments as the graph's
// nodes. Each is a grid-stride kernel whose last-block steps hold for a grid of one block (they
// skip the count of finished blocks there: lists.cuh's gbla_last_block). A product's gather
// and push are one step (gbla_fused_push). The iteration's last kernel is the loop's test
// (loop.cu), which sets the control words and the WHILE node's condition as it does in the
// graph.
//
// The block runs between the run's start and the WHILE node, and behind the recorded iteration
// in the WHILE node's body: it goes on while the test says go and the next iteration looks
// small (the first product's input listed, with at most max_vertices entries and max_edges
// out-edges, and no step walking more than max_edges entries); then it returns and the graph's
// iteration runs the next one with the whole GPU.
// Every product it runs pushes (GBLA_FUSED in loop.cu's choice): a frontier that would pull is
// a large one, which it hands over instead.

#ifndef GBLA_FUSED_UNIT  // in the fused unit, frontier.cuh came with loop.cu above
#include "frontier.cuh"
#endif

#define GBLA_FUSED_GO 4      // control words (loop.cu's GBLA_GO)
#define GBLA_FUSED_COUNT 7   // iterations this kernel ran, over a run
#ifndef GBLA_FUSED_THREADS   // the block's threads (_fused.THREADS, which the unit defines)
#define GBLA_FUSED_THREADS 1024
#endif

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

// The next iteration's frontier (the first product's input) as the size test laid it out, one
// entry a thread: entry t's id, its first edge, and where its edges start when the frontier's
// are laid end to end; gbla_s_listed entries (-1: not laid out, the frontier being larger than
// the block) with gbla_s_edges out-edges. The iteration's first push reads it instead of the
// list (gbla_fused_push's `laid_out`).
__shared__ long long gbla_s_entry[GBLA_FUSED_THREADS];
__shared__ long long gbla_s_first[GBLA_FUSED_THREADS];
__shared__ long long gbla_s_at[GBLA_FUSED_THREADS];
__shared__ long long gbla_s_warp[32];
__shared__ long long gbla_s_listed, gbla_s_edges;

// Exclusive prefix sum of x over the block, where only threads below `active` (at most the
// block) hold a nonzero x: one warp's scan, or the warps' and a scan of their sums (one barrier
// or two). *total (every thread) gets the sum. gbla_s_warp is free to write: the caller's
// barriers separate two scans.
__device__ __forceinline__ long long gbla_fused_scan(long long x, long long active,
                                                     long long* total)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long inclusive = warp * 32 < active ? gbla_warp_inclusive_scan(x) : x;
    if (lane == 31) gbla_s_warp[warp] = inclusive;
    __syncthreads();
    if (active > 32) {
        const int warps = (int)((active + 31) >> 5);
        if (warp == 0) {
            const long long sum = gbla_warp_inclusive_scan(lane < warps ? gbla_s_warp[lane]
                                                                        : 0LL);
            if (lane < warps) gbla_s_warp[lane] = sum;
        }
        __syncthreads();
        *total = gbla_s_warp[warps - 1];
        return (warp ? gbla_s_warp[warp - 1] : 0) + inclusive - x;
    }
    *total = gbla_s_warp[0];
    return inclusive - x;
}

// Lays out ids[0..c) (c at most the block) by their out-degrees in indptr, as gbla_s_* hold
// it; returns their out-edges. Every thread calls it.
template <class I>
__device__ __forceinline__ long long gbla_fused_lay_out(const I* indptr, const I* ids,
                                                        long long c)
{
    const int t = threadIdx.x;
    long long degree = 0;
    if (t < c) {
        const long long k = (long long)ids[t];
        const long long first = (long long)indptr[k];
        degree = (long long)indptr[k + 1] - first;
        gbla_s_entry[t] = k;
        gbla_s_first[t] = first;
    }
    long long total;
    const long long at = gbla_fused_scan(degree, c, &total);
    if (t < c) gbla_s_at[t] = at;
    return total;
}

// Whether the next iteration is one for this block: its frontier (ids[0..*count), the first
// product's input) known, with at most max_vertices entries and max_edges out-edges in indptr;
// a frontier no larger than the block is laid out on the way (gbla_s_*). Every thread gets the
// answer.
template <class I>
__device__ bool gbla_fused_small(const I* indptr, const I* ids, const u64* count,
                                 long long max_vertices, long long max_edges)
{
    const u64 c = *count;
    if (c == GBLA_UNKNOWN || (long long)c > max_vertices) return false;
    long long edges;
    if (c <= (u64)blockDim.x) {
        edges = gbla_fused_lay_out<I>(indptr, ids, (long long)c);
        if (threadIdx.x == 0) {
            gbla_s_listed = (long long)c;
            gbla_s_edges = edges;
        }
    } else {  // too many to lay out: their out-edges summed, a thread a stride of them
        if (threadIdx.x == 0) {
            gbla_s_listed = -1;
            gbla_s_edges = 0;
        }
        __syncthreads();
        u64 mine = 0;
        for (long long j = threadIdx.x; j < (long long)c; j += blockDim.x) {
            const long long i = (long long)ids[j];
            mine += (u64)((long long)indptr[i + 1] - (long long)indptr[i]);
        }
        for (int offset = 16; offset > 0; offset >>= 1)
            mine += __shfl_down_sync(0xffffffffu, mine, offset);
        if ((threadIdx.x & 31) == 0 && mine)
            atomicAdd(reinterpret_cast<u64*>(&gbla_s_edges), mine);
        __syncthreads();
        edges = gbla_s_edges;
    }
    // gbla_s_* read by all before they are written again: the loop's barriers come between
    return edges <= max_edges;
}

#ifdef GBLA_FUSED_UNIT  // the kernels of spmv.cu and loop.cu are in the unit
// The out-edges of the entries laid out in gbla_s_*[0..entries) (`total` of them) relaxed into
// w, a thread an edge (a binary search for its entry), so that a pass waits for the longest
// chain of one edge, whatever the degrees. (Four edges a thread a pass, their loads issued
// before any atomic, made a thin level's push slower on an H100: 2.6 against 2.5 us.)
template <class S, class I>
__device__ __forceinline__ void gbla_fused_edges(
    int entries, long long total, const typename S::U* uvals, const I* p_indices,
    const typename S::A* p_avals, const bool* mask, int mask_mode, typename S::Z* w,
    unsigned char* wpresent, I* w_ids, u64* w_count, typename S::Z* ov, bool* op)
{
    for (long long e = threadIdx.x; e < total; e += blockDim.x) {
        int lo = 0, hi = entries - 1;  // the last entry whose edges start at or before e
        while (lo < hi) {
            const int mid = (lo + hi + 1) >> 1;
            if (gbla_s_at[mid] <= e) lo = mid;
            else hi = mid - 1;
        }
        gbla_push_edge<S, I>(gbla_s_entry[lo], gbla_s_first[lo] + (e - gbla_s_at[lo]), uvals,
                             p_indices, p_avals, mask, mask_mode, w, wpresent, w_ids, w_count,
                             ov, op);
    }
}

// gbla_gather_decide, then gbla_spmv_device, of one product (the arguments of each, as the graph
// holds them), in the block. Where the input's list is known, without the bins: its entries a
// block at a time, thread t taking entry t, their out-edges laid end to end after the entries
// before it (a block scan of the degrees, in shared memory), then gbla_fused_edges over them;
// the choice (which pushes, in the block) is told the entries and their edges directly. With
// `laid_out`, the input is the frontier the size test laid out (at most a block's entries),
// which nothing before this step can have written (_fused.py checks): its layout is read, not
// made again. Where the list is unknown, or a pulling policy was given, the two kernels as the
// graph runs them. Either way the product adds the edges it examined to `examined`, as
// gbla_spmv_device does.
template <class S, class I>
__device__ void gbla_fused_push(
    int laid_out,
    // gbla_gather_decide's
    long long n_in, const bool* upresent, const I* ids, const u64* count, const I* indptr,
    I* bins, u64* info, int decide, long long* state, long long n, long long edges,
    int early_exit, const void* wvals, const void* wt, const void* wshift, int wkind,
    long long direct,
    // gbla_spmv_device's
    const I* d_bins, long long d_n_in, const u64* d_info, const typename S::U* uvals,
    const bool* d_upresent, const I* p_indptr, const I* p_indices,
    const typename S::A* p_avals, long long n_out, const I* q_indptr, const I* q_indices,
    const typename S::A* q_avals, long long long_row, const long long* long_rows,
    long long n_long, const long long* huge_rows, long long n_huge, const bool* mask,
    int mask_mode, typename S::Z* w, unsigned char* wpresent, I* w_ids, u64* w_count,
    long long pull_edges, u64* examined, typename S::Z* ov,
    bool* op, const typename S::Z* also_v, const bool* also_p, const void* also_ids,
    int also_wide, const u64* also_count, const void* win_t, const void* win_shift,
    int win_kind, const I* u_ids, const u64* u_count, long long* d_state)
{
    const u64 c = (ids == nullptr || count == nullptr) ? GBLA_UNKNOWN : *count;
    // a product given a pulling policy (no choice made here) pulls, as in the graph, and a
    // window's product (gbla.relax's) runs as the graph runs it: its gather bins only the
    // entries the window expands
    if (c == GBLA_UNKNOWN || (!decide && info[GBLA_INFO_PULL]) || wkind) {
        gbla_gather_decide<I>(n_in, upresent, ids, count, indptr, bins, info, decide, state, n,
                              edges, early_exit, wvals, wt, wshift, wkind, direct);
        __syncthreads();
        gbla_spmv_device<S, I>(d_bins, d_n_in, d_info, uvals, d_upresent, p_indptr, p_indices,
                               p_avals, n_out, q_indptr, q_indices, q_avals, long_row,
                               long_rows, n_long, huge_rows, n_huge, mask, mask_mode, w,
                               wpresent, w_ids, w_count, pull_edges, examined, ov, op, also_v,
                               also_p, also_ids, also_wide, also_count, win_t, win_shift,
                               win_kind, u_ids, u_count, d_state);
        return;
    }
    gbla_push_also<S, I>(threadIdx.x, blockDim.x, n_out, also_v, also_p, also_ids, also_wide,
                         also_count, w, wpresent, w_ids, w_count, {});
    long long all = 0;  // the input's out-edges
    if (laid_out && gbla_s_listed == (long long)c) {
        all = gbla_s_edges;
        gbla_fused_edges<S, I>((int)c, all, uvals, p_indices, p_avals, mask, mask_mode, w,
                               wpresent, w_ids, w_count, ov, op);
    } else {
        for (long long base = 0; base < (long long)c; base += blockDim.x) {
            if (base) __syncthreads();  // the last block of entries' layout read by every thread
            const int entries = (int)min((long long)blockDim.x, (long long)c - base);
            const long long total = gbla_fused_lay_out<I>(p_indptr, ids + base, entries);
            __syncthreads();  // the layout seen by every thread
            gbla_fused_edges<S, I>(entries, total, uvals, p_indices, p_avals, mask, mask_mode, w,
                                   wpresent, w_ids, w_count, ov, op);
            all += total;
        }
    }
    // the choice, told the entries and their edges (the bins' counts in info go unread: the
    // next product's start zeroes them); no thread waits for it. The loop's edge count gets
    // what gbla_spmv_device would add for this push: the input's out-edges.
    if (threadIdx.x == 0 && decide)
        gbla_decide_for(info, state, n, edges, early_exit, (long long)c, all);
    if (threadIdx.x == 0 && examined != nullptr) atomicAdd(examined, (u64)all);
}

#endif

// What a step walks (_fused.py's _WALKS, evaluated at the loop's top): the count a list argument
// points to (-1: no list, or its count unknown), and the walks of entries.cu's kernels from
// their lists' counts, n where they pass over every position.
__device__ __forceinline__ long long gbla_fw_count(u64 p)
{
    if (!p) return -1;
    const u64 c = *reinterpret_cast<const u64*>(p);
    return c == GBLA_UNKNOWN ? -1 : (long long)c;
}
__device__ __forceinline__ long long gbla_fw_known(long long c, long long otherwise)
{
    return c >= 0 ? c : otherwise;
}
__device__ __forceinline__ long long gbla_fw_shortest(long long n, long long a, long long b,
                                                      long long c)  // gbla_shorter's walk
{
    long long w = a;
    if (b >= 0 && (w < 0 || b < w)) w = b;
    if (c >= 0 && (w < 0 || c < w)) w = c;
    return w >= 0 ? w : n;
}
__device__ __forceinline__ long long gbla_fw_union(long long n, long long a, long long b,
                                                   long long m)  // gbla_entries_union's
{
    if (a >= 0 && b >= 0 && (m < 0 || a + b <= m)) return a + b;
    return m >= 0 ? m : n;
}
__device__ __forceinline__ long long gbla_fw_both(long long n, long long a, long long b)
{
    return a >= 0 && b >= 0 ? a + b : n;  // gbla_entries_merge's
}

__shared__ long long gbla_s_walk;  // the iteration's longest walk, for the loop's top

// Iterations of Steps::run(args) (one recorded iteration, its test last) while the test says
// go and the next looks small: its first product's input (the size test), and every list a
// step walks (Steps::walk, by the block's last thread while the others test the size; the size
// test's barriers publish it), at most max_edges entries.
template <class Steps, class I>
__device__ void gbla_fused_loop(const u64* args, long long* control, const I* indptr,
                                const I* ids, const u64* count, long long max_vertices,
                                long long max_edges)
{
    for (bool first = true;; first = false) {
        __syncthreads();  // the test's control words seen by every thread
#ifdef GBLA_FUSED_UNIT  // after the block's own test, its answer in shared memory (loop.cu)
        if (!(first ? control[GBLA_FUSED_GO] != 0 : gbla_fused_go)) return;
#else
        if (!control[GBLA_FUSED_GO]) return;
#endif
        if (threadIdx.x == blockDim.x - 1) gbla_s_walk = Steps::walk(args);
        if (!gbla_fused_small<I>(indptr, ids, count, max_vertices, max_edges)) return;
        if (gbla_s_walk > max_edges) return;
        Steps::run(args);
        if (threadIdx.x == 0) control[GBLA_FUSED_COUNT] += 1;
    }
}
