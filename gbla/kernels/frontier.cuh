// Frontier machinery shared by the hand-written traversal kernels (BFS now, SSSP next): claiming
// a vertex, appending it to a degree-binned frontier with warp-aggregated counters, counting
// claims, clearing counter slots, and a block-wide exclusive scan. Vertex ids and edge offsets
// are int32, except in the binned append, which spmv.cu's device-resident products share.
// Entry lists' own helpers (lists.cuh) come along.
// Included by the .cu files (the loader in _launch.py inlines it for NVRTC); the
// Python side (_frontier.py) reads GBLA_SMALL, GBLA_LARGE and GBLA_SLOT from this file.
#pragma once
// No CUDA header: under NVRTC (which makes every constant of an included libcu++ header a
// device symbol of the module) cooperative_groups.h alone added about 145 KB of symbols and
// relocations to every module that included this file, and a module that size took 7-12 ms
// to load on an H100 against 0.15 for one without (benchmarks/results/ab/
// module_load_cost_h100.log). The warp and grid steps below are this file's own.
#include "lists.cuh"
#include "atomics.cuh"

typedef unsigned long long u64;

// This thread's lane in its warp, and the mask of the lanes below it.
__device__ __forceinline__ unsigned gbla_lane_id() {
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
}
__device__ __forceinline__ unsigned gbla_lanes_below() {
    unsigned m;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
    return m;
}

// The sum of x over the lanes of `mask` (every one of them calls it), in every lane: three
// 24-bit-wide sums on the warp's reduction unit (sm_80 on, as the kernels' __reduce_max_sync).
__device__ __forceinline__ u64 gbla_lanes_sum(unsigned mask, u64 x) {
    u64 low = __reduce_add_sync(mask, (unsigned)(x & 0xFFFFFFu));
    u64 mid = __reduce_add_sync(mask, (unsigned)((x >> 24) & 0xFFFFFFu));
    u64 high = __reduce_add_sync(mask, (unsigned)(x >> 48));
    return low + (mid << 24) + (high << 48);
}

// The grid of a cooperative launch (one-dimensional): its threads, and a barrier over its
// blocks on the word the driver sets aside for the launch (the cooperative-launch ABI that
// cooperative_groups' grid sync uses: environment register 1 holds the workspace's high 32
// bits, register 2 its low ones, the barrier is its second 32-bit word; a launch that is not
// cooperative has none, and traps). Each block's first thread adds 1 (block 0: 2^31 -
// (blocks - 1)), so the top bit flips when the last block arrives; they wait for the flip.
// The add releases and the wait acquires at GPU scope, so what any block wrote before the
// barrier is seen by every block after it. The block barriers are __barrier_sync (PTX
// barrier.sync), which ptxas marks in the kernel's cooperative-launch attributes as it does
// cooperative_groups'.
struct gbla_grid {
    __device__ __forceinline__ long long thread_rank() const {
        return (long long)blockIdx.x * blockDim.x + threadIdx.x;
    }
    __device__ __forceinline__ long long size() const {
        return (long long)gridDim.x * blockDim.x;
    }
    __device__ __forceinline__ void sync() const {
        unsigned high, low;
        asm volatile("mov.u32 %0, %%envreg1;" : "=r"(high));
        asm volatile("mov.u32 %0, %%envreg2;" : "=r"(low));
        const u64 workspace = ((u64)high << 32) | low;
        if (workspace == 0) asm volatile("trap;");
        unsigned* word = reinterpret_cast<unsigned*>(workspace) + 1;
        __barrier_sync(0);
        if (threadIdx.x == 0) {
            unsigned add = blockIdx.x == 0 ? 0x80000000u - (gridDim.x - 1) : 1u, before, now;
            asm volatile("atom.add.release.gpu.u32 %0, [%1], %2;"
                         : "=r"(before) : "l"(word), "r"(add) : "memory");
            do {
                asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(now) : "l"(word) : "memory");
            } while (((before ^ now) & 0x80000000u) == 0);
        }
        __barrier_sync(0);
    }
};

// Frontiers are "binned": bins[0*n..] holds vertices of out-degree below
// GBLA_SMALL (a thread each), bins[1*n..] below GBLA_LARGE (a warp each), bins[2*n..] the rest
// (a block each). A counter slot (8 x u64) describes the frontier a launch builds:
//   [0..2] bin sizes (the frontier's size after a pull level)  [3] its out-edges  [4] unused
//   [5] depth of the frontier  [6] done flag  [7] levels expanded
// A device product's gather (loop.cu) and the persistent BFS (bfs.cu) spread the largest
// (SPREAD below): the vertices of at least GBLA_HUGE out-edges go to a fourth bin, from the
// top of the large bin's room down, bins[3n - c .. 3n), their count c in slot[GBLA_SLOT_HUGE]
// (its [7]), and their edges are spread over the whole grid (gbla_grid_for_each_spread_edge).
// A block each left one block walking a hub's edges while the others idled: on rmat(22) the
// algebra's push level of a few hundred entries took 400 us, nearly all of it one hub's.
#define GBLA_SMALL 32
#define GBLA_LARGE 1024
#define GBLA_HUGE 4096
#define GBLA_SLOT 8
#define GBLA_SLOT_HUGE 7

// Appends v to its degree bin and adds its out-degree to slot[3] (the next frontier's edges);
// the counters are aggregated over the coalesced threads (one atomic per bin per warp),
// because millions of claims in one level would serialize on a few addresses.
// I is the vertex and offset type: int for the kernels of bfs.cu, int or long long for spmv.cu.
template <class I, bool SPREAD = false>
__device__ __forceinline__ void gbla_append_binned(I v, long long n, const I* indptr, I* bins,
                                                   u64* slot) {
    long long deg = (long long)indptr[v + 1] - (long long)indptr[v];
    int bin = deg < GBLA_SMALL ? 0 : deg < GBLA_LARGE ? 1 : SPREAD && deg >= GBLA_HUGE ? 3 : 2;
    const unsigned active = __activemask(), lane = gbla_lane_id();
    u64 edges = gbla_lanes_sum(active, (u64)deg);
    if (lane == (unsigned)(__ffs(active) - 1)) atomicAdd(&slot[3], edges);
    unsigned m0 = __ballot_sync(active, bin == 0), m1 = __ballot_sync(active, bin == 1),
             m2 = __ballot_sync(active, bin == 2);
    unsigned m3 = SPREAD ? __ballot_sync(active, bin == 3) : 0u;
    unsigned mine = bin == 0 ? m0 : bin == 1 ? m1 : bin == 2 ? m2 : m3;
    int leader = __ffs(mine) - 1, rank = __popc(mine & gbla_lanes_below());
    u64 base = 0;
    if ((int)lane == leader)
        base = atomicAdd(&slot[bin == 3 ? GBLA_SLOT_HUGE : bin], (u64)__popc(mine));
    base = __shfl_sync(active, base, leader);
    if (bin == 3) bins[3 * n - 1 - (long long)(base + rank)] = v;
    else bins[(long long)bin * n + (long long)(base + rank)] = v;
}

// Adds the claims a warp's lanes counted (k each) to slot[0] with one atomic a warp, after the
// pass, not one a claiming step: pull levels need only the frontier's size (a later push level
// gathers the frontier from the levels), and every warp adding to one word while it scans was
// the pull's hot spot. All 32 lanes of the warp call it.
__device__ __forceinline__ void gbla_count_claims(unsigned k, u64* slot) {
    const unsigned total = __reduce_add_sync(0xffffffffu, k);
    if ((threadIdx.x & 31) == 0 && total) atomicAdd(&slot[0], (u64)total);
}

// Each of the n_in vertices of one bin q handed to a group of `group` threads (1, 32 or the
// block), groups striding over the bin: visit(u, lane) for this thread's share.
template <class Visit>
__device__ __forceinline__ void gbla_for_each_in_bin(const int* q, long long n_in, int group,
                                                     Visit visit) {
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long groups = (long long)gridDim.x * blockDim.x / group;
    const int lane = (int)(tid % group);
    for (long long i = tid / group; i < n_in; i += groups) visit(q[i], lane);
}

// Every vertex of a binned frontier q (bin sizes c0, c1, c2; the bins n apart) handed to a
// persistent grid, as the launches of gbla_for_each_in_bin hand one bin each:
// visit(u, lane, group) with a thread, a warp or a block per vertex.
template <class Visit>
__device__ __forceinline__ void gbla_grid_for_each_binned(const int* q, long long n, long long c0,
                                                          long long c1, long long c2,
                                                          Visit visit) {
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long threads = (long long)gridDim.x * blockDim.x;
    const int lane = threadIdx.x & 31;
    for (long long i = tid; i < c0; i += threads) visit(q[i], 0, 1);
    for (long long i = tid >> 5; i < c1; i += threads >> 5) visit(q[n + i], lane, 32);
    for (long long i = blockIdx.x; i < c2; i += gridDim.x)
        visit(q[2 * n + i], (int)threadIdx.x, (int)blockDim.x);
}

__device__ __forceinline__ void gbla_clear_slot(u64* clear) {
    if (blockIdx.x == 0 && threadIdx.x < GBLA_SLOT) clear[threadIdx.x] = 0;
}

// Inclusive prefix sum of x over the lanes of the warp. All 32 lanes call it.
template <class T>
__device__ __forceinline__ T gbla_warp_inclusive_scan(T x) {
    const int lane = threadIdx.x & 31;
    for (int off = 1; off < 32; off <<= 1) {
        const T below = __shfl_up_sync(0xffffffffu, x, off);
        if (lane >= off) x += below;
    }
    return x;
}

// Places in a queue for the items of a warp, with one atomicAdd on *count (C: int or u64):
// each lane holds k of them (k >= 0) and gets the place of its first. All 32 lanes of the warp
// call it.
template <class C>
__device__ __forceinline__ C gbla_warp_reserve(C k, C* count) {
    const C inclusive = gbla_warp_inclusive_scan(k);
    const C total = __shfl_sync(0xffffffffu, inclusive, 31);
    C base = 0;
    if ((threadIdx.x & 31) == 31 && total) base = atomicAdd(count, total);
    return __shfl_sync(0xffffffffu, base, 31) + inclusive - k;
}

// As gbla_warp_reserve for at most one item a lane (`item`): a ballot instead of a scan. The
// place is meaningful where `item` holds.
__device__ __forceinline__ int gbla_warp_reserve_one(bool item, int* count) {
    const int lane = threadIdx.x & 31;
    const unsigned mask = __ballot_sync(0xffffffffu, item);
    if (!mask) return 0;
    const int leader = __ffs(mask) - 1;
    int base = 0;
    if (lane == leader) base = atomicAdd(count, __popc(mask));
    return __shfl_sync(0xffffffffu, base, leader) + __popc(mask & ((1u << lane) - 1u));
}

// Exclusive prefix sum of x over the block (blockDim.x a multiple of 32, at most 1024 threads);
// *total gets the block's sum. s_warp: 32 long longs of shared memory.
__device__ inline long long gbla_block_exclusive_scan(long long x, long long* s_warp,
                                                     long long* total) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    const long long inclusive = gbla_warp_inclusive_scan(x);
    if (lane == 31) s_warp[warp] = inclusive;
    __syncthreads();
    if (warp == 0) s_warp[lane] = gbla_warp_inclusive_scan(lane < nwarps ? s_warp[lane] : 0LL);
    __syncthreads();
    long long before = (warp ? s_warp[warp - 1] : 0) + inclusive - x;
    *total = s_warp[nwarps - 1];
    __syncthreads();
    return before;
}

// The out-edges of entries[0..count) (frontier.cuh's spread bin: vertices of at least GBLA_HUGE
// out-edges in indptr) spread over the whole grid, a thread an edge: visit(u, e) for edge e of
// entry u. A batch of GBLA_SPREAD_BATCH entries at a time: each block reads the batch's degrees
// and scans them into shared memory (its barriers), then takes every (grid size)-th edge of the
// batch, a binary search finding its entry. count is the same for every thread of the block.
#define GBLA_SPREAD_BATCH 256
template <class I, class Visit>
__device__ __forceinline__ void gbla_grid_for_each_spread_edge(const I* entries, long long count,
                                                               const I* indptr, Visit visit)
{
    __shared__ long long s_entry[GBLA_SPREAD_BATCH], s_first[GBLA_SPREAD_BATCH],
        s_at[GBLA_SPREAD_BATCH], s_warp[32];
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long threads = (long long)gridDim.x * blockDim.x;
    for (long long base = 0; base < count; base += GBLA_SPREAD_BATCH) {
        const int m = (int)min((long long)GBLA_SPREAD_BATCH, count - base);
        long long degree = 0;
        if ((int)threadIdx.x < m) {
            const long long u = (long long)entries[base + threadIdx.x];
            const long long first = (long long)indptr[u];
            degree = (long long)indptr[u + 1] - first;
            s_entry[threadIdx.x] = u;
            s_first[threadIdx.x] = first;
        }
        long long total;
        const long long at = gbla_block_exclusive_scan(degree, s_warp, &total);
        if ((int)threadIdx.x < m) s_at[threadIdx.x] = at;
        __syncthreads();
        for (long long e = tid; e < total; e += threads) {
            int lo = 0, hi = m - 1;  // the last entry whose edges start at or before e
            while (lo < hi) {
                const int mid = (lo + hi + 1) >> 1;
                if (s_at[mid] <= e) lo = mid;
                else hi = mid - 1;
            }
            visit(s_entry[lo], s_first[lo] + (e - s_at[lo]));
        }
        __syncthreads();  // the batch read by every thread before the next is laid out
    }
}

// ------------------------------------------------------------------ a relaxation's window
// gbla.relax(..., window=t): only the input's entries no worse than t (u <= t under a min
// monoid, u >= t under a max one) are expanded; the others are carried into the product's
// output as they are. `kind` (_spmv.window_kind): 0 none; bit 0 on, bit 1 the max monoid's
// (u >= t), bits 4-6 u's dtype for a reader that has only its bytes (1 float64, 2 float32,
// 3 int64, 4 int32). t is t[0] plus shift[0] where shift is given (a Scalar plus a number),
// added in u's type as the select kernel adds its thunk's. A NaN u is never within (as the
// comparison of gbla.split, which the window stands for, has it). Bits 8-15: gbla.relax's
// `hops`, how many edges deep a direct push may relax from u's entries inside the window (0 or
// 1: one, the product's own; spmv.cu's gbla_push_direct).
#define GBLA_WINDOW_ON 1
#define GBLA_WINDOW_ABOVE 2
template <class U>
struct gbla_window {
    U t;
    bool on, above;
    int hops;
    // u expanded (else carried, where the window is on: callers test `on` first, so that
    // without a window u's values are never loaded)
    __device__ __forceinline__ bool within(U u) const { return above ? u >= t : u <= t; }
};

template <class U>
__device__ __forceinline__ gbla_window<U> gbla_window_of(const void* t, const void* shift,
                                                         int kind)
{
    gbla_window<U> w;
    w.on = (kind & GBLA_WINDOW_ON) != 0;
    w.above = (kind & GBLA_WINDOW_ABOVE) != 0;
    w.hops = (kind >> 8) & 0xff;
    w.t = U();
    if (w.on) {
        w.t = *static_cast<const U*>(t);
        if (shift != nullptr) w.t = (U)(w.t + *static_cast<const U*>(shift));
    }
    return w;
}

// Whether entry k of values `v` (of the dtype `kind` names) is expanded.
__device__ __forceinline__ bool gbla_window_expands_at(const void* v, long long k, const void* t,
                                                      const void* shift, int kind)
{
    if (!(kind & GBLA_WINDOW_ON)) return true;
    switch ((kind >> 4) & 7) {
    case 1: return gbla_window_of<double>(t, shift, kind).within(((const double*)v)[k]);
    case 2: return gbla_window_of<float>(t, shift, kind).within(((const float*)v)[k]);
    case 3:
        return gbla_window_of<long long>(t, shift, kind).within(((const long long*)v)[k]);
    case 4: return gbla_window_of<int>(t, shift, kind).within(((const int*)v)[k]);
    }
    return true;
}
