// Hand-written BFS kernels: one level computes  q' = q any.pair A  masked by the unvisited
// vertices, then levels<q'> = depth (and parents<q'> = the claiming vertex), the same product
// the algebraic method runs with vxm. Vertex ids and edge offsets are int32 (CSR: indptr,
// indices; CSC: t_indptr, t_indices); levels[v] == -1 means unvisited.
// Launch contracts are written above each kernel; the Python drivers are in _bfs.py.
#include "frontier.cuh"

// The first in-neighbour of v (CSC) in level depth-1, or -1: the pull step, stopping early.
__device__ __forceinline__ int gbla_pull_parent(long long v, int depth, const int* levels,
                                                const int* t_indptr, const int* t_indices) {
    for (int e = t_indptr[v]; e < t_indptr[v + 1]; ++e) {
        int u = t_indices[e];
        if (levels[u] == depth - 1) return u;
    }
    return -1;
}

// ------------------------------------------------------------------ 1. vertex_push
// One thread per vertex (grid-stride); a vertex of level depth-1 labels its unvisited
// out-neighbours. Plain stores: racing writers store the same level and each a valid parent.
// flag[0] = depth when anything was labelled.
extern "C" __global__ void gbla_bfs_vertex_push(int n, int depth, int* levels, int* parents,
                                                const int* indptr, const int* indices,
                                                int* flag) {
    for (int u = blockIdx.x * blockDim.x + threadIdx.x; u < n; u += gridDim.x * blockDim.x) {
        if (levels[u] != depth - 1) continue;
        for (int e = indptr[u]; e < indptr[u + 1]; ++e) {
            int v = indices[e];
            if (levels[v] == -1) {
                levels[v] = depth;
                if (parents) parents[v] = u;
                flag[0] = depth;
            }
        }
    }
}

// ------------------------------------------------------------------ 2. vertex_pull
// One thread per unvisited vertex (grid-stride) scanning its in-neighbours (CSC) and stopping at
// the first of level depth-1. Only thread v writes v, so no atomics. With slot == NULL a level
// sets flag[0] = depth when it labels anything; with a slot (direction_optimized) it counts
// the claims there instead, and queues nothing (see gbla_bfs_gather).
extern "C" __global__ void gbla_bfs_vertex_pull(int n, int depth, int* levels, int* parents,
                                                const int* t_indptr, const int* t_indices,
                                                int* flag, u64* slot, u64* clear) {
    if (slot) gbla_clear_slot(clear);
    unsigned claimed = 0;
    for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x) {
        if (levels[v] != -1) continue;
        int found = gbla_pull_parent(v, depth, levels, t_indptr, t_indices);
        if (found < 0) continue;
        levels[v] = depth;
        if (parents) parents[v] = found;
        claimed += 1;
    }
    if (slot) gbla_count_claims(claimed, slot);
    else if (claimed) flag[0] = depth;
}

// The frontier of level `depth` (every v with levels[v] == depth) into bins, when a push level
// follows pull levels.
extern "C" __global__ void gbla_bfs_gather(int n, int depth, const int* levels,
                                           const int* indptr, int* bins, u64* slot,
                                           u64* clear) {
    gbla_clear_slot(clear);
    for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += gridDim.x * blockDim.x)
        if (levels[v] == depth) gbla_append_binned(v, n, indptr, bins, slot);
}

// ------------------------------------------------------------------ 3. edge_centric
// One thread per stored edge (COO: rows[e] -> indices[e]), grid-stride: source of level
// depth-1, destination unvisited. Plain stores as in vertex_push.
extern "C" __global__ void gbla_bfs_edge_centric(int nnz, int depth, int* levels, int* parents,
                                                 const int* rows, const int* indices, int* flag) {
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < nnz; e += gridDim.x * blockDim.x) {
        int u = rows[e];
        if (levels[u] != depth - 1) continue;
        int v = indices[e];
        if (levels[v] == -1) {
            levels[v] = depth;
            if (parents) parents[v] = u;
            flag[0] = depth;
        }
    }
}

// ------------------------------------------------------------------ 4. frontier_queue
// One thread per vertex of the explicit frontier q_in[0, n_in): atomicCAS on levels claims a
// neighbour, atomicAdd on one global tail (slot[0]) appends it to q_out.
extern "C" __global__ void gbla_bfs_frontier_queue(const int* q_in, int n_in, int depth,
                                                   int* levels, int* parents, const int* indptr,
                                                   const int* indices, int* q_out, u64* slot,
                                                   u64* clear) {
    gbla_clear_slot(clear);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n_in; i += gridDim.x * blockDim.x) {
        int u = q_in[i];
        for (int e = indptr[u]; e < indptr[u + 1]; ++e) {
            int v = indices[e];
            if (gbla_claim(levels, v, depth)) {
                if (parents) parents[v] = u;
                q_out[atomicAdd(&slot[0], 1ULL)] = v;
            }
        }
    }
}

// ------------------------------------------------------------------ 5. block_queue
// As frontier_queue, but each block appends to a private shared-memory queue (overflow goes
// straight to the global queue) and copies it out at the end with one atomicAdd on the global
// tail and coalesced stores. One frontier vertex per thread: grid = ceil(n_in / blockDim).
#define GBLA_BQ_CAP 2048
extern "C" __global__ void gbla_bfs_block_queue(const int* q_in, int n_in, int depth,
                                                int* levels, int* parents, const int* indptr,
                                                const int* indices, int* q_out, u64* slot,
                                                u64* clear) {
    __shared__ int s_q[GBLA_BQ_CAP];
    __shared__ int s_n;
    __shared__ u64 s_base;
    gbla_clear_slot(clear);
    if (threadIdx.x == 0) s_n = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n_in) {
        int u = q_in[i];
        for (int e = indptr[u]; e < indptr[u + 1]; ++e) {
            int v = indices[e];
            if (gbla_claim(levels, v, depth)) {
                if (parents) parents[v] = u;
                int pos = atomicAdd(&s_n, 1);
                if (pos < GBLA_BQ_CAP) s_q[pos] = v;
                else q_out[atomicAdd(&slot[0], 1ULL)] = v;
            }
        }
    }
    __syncthreads();
    int count = min(s_n, GBLA_BQ_CAP);
    if (threadIdx.x == 0 && count) s_base = atomicAdd(&slot[0], (u64)count);
    __syncthreads();
    for (int j = threadIdx.x; j < count; j += blockDim.x) q_out[s_base + j] = s_q[j];
}

// ------------------------------------------------------------------ 6. warp_queue
// Hierarchical queues (PMPP ch. 15): GBLA_WQ_N warp-level sub-queues chosen by the low lane
// bits, so that only the threads of one lane class contend on a counter; they are merged into
// the block queue, which is copied to the global queue. Each level overflows to the next.
#define GBLA_WQ_N 8
#define GBLA_WQ_CAP 128
extern "C" __global__ void gbla_bfs_warp_queue(const int* q_in, int n_in, int depth,
                                               int* levels, int* parents, const int* indptr,
                                               const int* indices, int* q_out, u64* slot,
                                               u64* clear) {
    __shared__ int w_q[GBLA_WQ_N][GBLA_WQ_CAP];
    __shared__ int w_n[GBLA_WQ_N];
    __shared__ int w_off[GBLA_WQ_N];
    __shared__ int b_q[GBLA_BQ_CAP];
    __shared__ int b_n;
    __shared__ u64 b_base;
    gbla_clear_slot(clear);
    if (threadIdx.x < GBLA_WQ_N) w_n[threadIdx.x] = 0;
    if (threadIdx.x == 0) b_n = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int k = threadIdx.x & (GBLA_WQ_N - 1);
    if (i < n_in) {
        int u = q_in[i];
        for (int e = indptr[u]; e < indptr[u + 1]; ++e) {
            int v = indices[e];
            if (!gbla_claim(levels, v, depth)) continue;
            if (parents) parents[v] = u;
            int pos = atomicAdd(&w_n[k], 1);
            if (pos < GBLA_WQ_CAP) { w_q[k][pos] = v; continue; }
            int bpos = atomicAdd(&b_n, 1);
            if (bpos < GBLA_BQ_CAP) b_q[bpos] = v;
            else q_out[atomicAdd(&slot[0], 1ULL)] = v;
        }
    }
    __syncthreads();
    // Merge: each sub-queue gets a contiguous range of the block queue after its overflow.
    if (threadIdx.x < GBLA_WQ_N) {
        int count = min(w_n[threadIdx.x], GBLA_WQ_CAP);
        w_n[threadIdx.x] = count;
        w_off[threadIdx.x] = atomicAdd(&b_n, count);
    }
    __syncthreads();
    for (int q = 0; q < GBLA_WQ_N; ++q) {
        for (int j = threadIdx.x; j < w_n[q]; j += blockDim.x) {
            int pos = w_off[q] + j;
            if (pos < GBLA_BQ_CAP) b_q[pos] = w_q[q][j];
            else q_out[atomicAdd(&slot[0], 1ULL)] = w_q[q][j];
        }
    }
    __syncthreads();
    int count = min(b_n, GBLA_BQ_CAP);
    if (threadIdx.x == 0 && count) b_base = atomicAdd(&slot[0], (u64)count);
    __syncthreads();
    for (int j = threadIdx.x; j < count; j += blockDim.x) q_out[b_base + j] = b_q[j];
}

// Claims the head of edge e of u at `depth`, binning it for the next level (SPREAD:
// frontier.cuh's spread bin too).
template <bool SPREAD = false>
__device__ __forceinline__ void gbla_push_edge_to(int u, long long e, int depth, int n,
                                                  int* levels, int* parents, const int* indptr,
                                                  const int* indices, int* out, u64* slot) {
    int v = indices[e];
    if (gbla_claim(levels, v, depth)) {
        if (parents) parents[v] = u;
        gbla_append_binned<int, SPREAD>(v, n, indptr, out, slot);
    }
}

template <bool SPREAD = false>
__device__ __forceinline__ void gbla_push_group(int u, int lane, int group, int depth, int n,
                                                int* levels, int* parents, const int* indptr,
                                                const int* indices, int* out, u64* slot) {
    for (int e = indptr[u] + lane; e < indptr[u + 1]; e += group)
        gbla_push_edge_to<SPREAD>(u, e, depth, n, levels, parents, indptr, indices, out, slot);
}

// ------------------------------------------------------------------ 9. load_balanced
// One launch per non-empty bin of the binned frontier: group = 1 (small bin: a thread per
// vertex), 32 (medium: a warp) or blockDim.x (large: a block). Groups stride over the bin;
// lanes of a group stride over the vertex's edges. Claimed vertices go to the next bins.
extern "C" __global__ void gbla_bfs_binned_expand(const int* q_in, int n_in, int group,
                                                  int depth, int n, int* levels, int* parents,
                                                  const int* indptr, const int* indices,
                                                  int* bins, u64* slot,
                                                  u64* clear) {
    gbla_clear_slot(clear);
    gbla_for_each_in_bin(q_in, n_in, group, [&](int u, int lane) {
        gbla_push_group(u, lane, group, depth, n, levels, parents, indptr, indices, bins, slot);
    });
}

// Puts the source in the small bin (bins are read whole, whatever the bin) and describes it in
// slot: one vertex, its out-edges, depth 0. One thread.
extern "C" __global__ void gbla_bfs_init(int source, int* levels, int* parents, int* bins,
                                         const int* indptr, u64* slot) {
    levels[source] = 0;
    if (parents) parents[source] = source;
    bins[0] = source;
    for (int j = 0; j < GBLA_SLOT; ++j) slot[j] = 0;
    slot[0] = 1;
    slot[3] = indptr[source + 1] - indptr[source];
}

// ------------------------------------------------------------------ 7. single_block
// One block runs level after level inside one launch while the frontier holds at most `cap`
// vertices and `max_edges` edges: the frontier lives in shared memory with each vertex's row
// start and degree (read when the vertex is claimed, so that a level begins with no load), and
// __syncthreads() separates levels, so a level costs no launch and no host round trip. A level
// runs one of three ways:
// - a warp's (an edge a lane covers it: the frontier's vertices of degree at most g, count << lg
//   at most 32): warp 0 alone runs it and the next ones while they stay that small, each ended
//   by a __syncwarp() (gbla_sb_warp_levels), the other warps waiting at one barrier;
// - thin (every frontier vertex of out-degree at most GBLA_SB_THIN, which the block tracks as
//   it appends), no scan and one barrier a level: g lanes a frontier vertex, g the power of
//   two at or above the largest degree, a lane an edge, where that takes at most two passes
//   of the block; else, degrees at most GBLA_SB_UNROLL, a thread a vertex, its edges' loads
//   issued together (a long frontier: fewer passes, each a chain of dependent loads).
// - even: the frontier's edges spread evenly over the block (a block scan of the degrees, then
//   a binary search per edge), for frontiers with a vertex of higher degree.
// With `words` > 0 the visited set is a bitmap of n bits in shared memory (built from the
// levels on entry): a claim is then a shared-memory atomicOr. The block hands over (returns)
// when the frontier outgrows it, leaving the frontier in out_bins and its description in slot;
// slot[6] = 1 when the search is finished.
// Input: the binned frontier in_bins with sizes c0, c1, c2 (c0 + c1 + c2 <= cap) at level
// depth; or, with source >= 0, a new search from source at depth 0 (in_bins unread), the
// levels (and parents) already -1 everywhere, or set here when `fill` is 1. A launch that
// cannot hand over (cap >= n and max_edges >= the edge count) may pass null out_bins, slot
// and clear, and with `resident` 1 copies the graph (indptr, then indices) into shared memory
// after the bitmap first, so that a level's loads are all from shared memory. Launch: grid 1,
// block GBLA_SB_THREADS, dynamic shared memory (6 * (cap + 1) + words) * 4 bytes, and
// (n + 1 + edges) * 4 more when resident; cap <= GBLA_SB_PER * GBLA_SB_THREADS, words 0 or
// (n + 31) / 32.
#define GBLA_SB_THREADS 1024
#define GBLA_SB_PER 16
#define GBLA_SB_THIN 32
#define GBLA_SB_UNROLL 8

// Claims v for this block: the bitmap's bit, or levels[v] itself when there is no bitmap.
__device__ __forceinline__ bool gbla_sb_claim(unsigned* bitmap, int words, int* levels, int v,
                                              int depth) {
    if (!words) return gbla_claim(levels, v, depth);
    unsigned bit = 1u << (v & 31);
    if (bitmap[v >> 5] & bit) return false;
    if (atomicOr(&bitmap[v >> 5], bit) & bit) return false;
    levels[v] = depth;
    return true;
}

// The single block's next queue: its vertices, row starts and degrees, its count and the
// largest degree in it (both in the level's rotating counters), and where a vertex past its
// capacity goes (the out bins, described in slot).
struct GblaSbQueue {
    int *v, *start, *deg, *count, *max_deg;
    int cap, n;
    const int* indptr;
    int* out_bins;
    u64* slot;
};

// Puts v (its row start and degree read already) at place pos of the queue, or in the out
// bins past its capacity.
__device__ __forceinline__ void gbla_sb_put(const GblaSbQueue& q, int pos, int v, int start,
                                            int deg) {
    if (pos < q.cap) {
        q.v[pos] = v;
        q.start[pos] = start;
        q.deg[pos] = deg;
    } else {
        gbla_append_binned(v, q.n, q.indptr, q.out_bins, q.slot);
    }
}

// Raises the queue's largest degree to the warp's `top`. All 32 lanes call it.
__device__ __forceinline__ void gbla_sb_top(const GblaSbQueue& q, int top) {
    top = __reduce_max_sync(0xffffffffu, top);
    if ((threadIdx.x & 31) == 0 && top) atomicMax(q.max_deg, top);
}

// Appends this thread's claimed vertices (bit j of `won`: vertex[j], its row start[j] and
// degree deg[j] read already) to the queue. All 32 lanes call it.
template <int K>
__device__ __forceinline__ void gbla_sb_append_each(const GblaSbQueue& q, unsigned won,
                                                    const int* vertex, const int* start,
                                                    const int* deg) {
    const int base = gbla_warp_reserve(__popc(won), q.count);
    int top = 0;
    #pragma unroll
    for (int j = 0; j < K; ++j)
        if (won >> j & 1u) {
            gbla_sb_put(q, base + __popc(won & ((1u << j) - 1u)), vertex[j], start[j], deg[j]);
            top = max(top, deg[j]);
        }
    gbla_sb_top(q, top);
}

// Appends v (when `won`, its row start and degree read already) to the queue. All 32 lanes
// call it.
__device__ __forceinline__ void gbla_sb_append(const GblaSbQueue& q, bool won, int v, int start,
                                               int deg) {
    const int pos = gbla_warp_reserve_one(won, q.count);
    if (won) gbla_sb_put(q, pos, v, start, deg);
    gbla_sb_top(q, won ? deg : 0);
}

// Levels whose edges a warp's lanes cover (count << lg <= 32, a lane an edge) run in warp 0
// alone, one after another while that holds: a __syncwarp() ends a level, not a block barrier,
// and the queue is compacted with a ballot, not an atomic. The lanes that found the same vertex
// elect one (__match_any_sync), which claims it: the bitmap's bit (a shared atomicOr), or, with
// no bitmap, levels[v] read and written plainly (no other warp runs meanwhile, and a
// __syncwarp() orders the lanes' accesses). On return the warp's lane 0 has left the frontier
// reached (its queue `cur`, count, largest degree, depth, levels run) in `state`.
// Input: the frontier in queue `cur` (count entries, largest degree max_deg) at depth `depth`.
__device__ void gbla_sb_warp_levels(int* shared, int stride, int cur, int count, int max_deg,
                                    int depth, int depth_limit, int max_edges, int* levels,
                                    int* parents, const int* indptr, const int* indices,
                                    unsigned* bitmap, int words, int* state) {
    const int lane = threadIdx.x & 31;
    int run = 0;
    while (count > 0 && depth != depth_limit) {
        const int lg = max_deg <= 1 ? 0 : 32 - __clz(max_deg - 1);
        if (max_deg > GBLA_SB_THIN || (long long)count * max_deg > max_edges || count << lg > 32)
            break;
        const int* qv = shared + 3 * cur * stride;
        const int i = lane >> lg, j = lane & ((1 << lg) - 1);
        int u = 0, v = -1;
        if (i < count && j < qv[2 * stride + i]) {
            u = qv[i];
            v = indices[qv[stride + i] + j];
        }
        const unsigned same = __match_any_sync(0xffffffffu, v);
        bool won = false;
        if (v >= 0 && __ffs(same) - 1 == lane) {
            if (words) {
                const unsigned bit = 1u << (v & 31);
                won = !(atomicOr(&bitmap[v >> 5], bit) & bit);
            } else {
                won = levels[v] == -1;
            }
            if (won) {
                levels[v] = depth + 1;
                if (parents) parents[v] = u;
            }
        }
        int start = 0, d = 0;
        if (won) {
            start = indptr[v];
            d = indptr[v + 1] - start;
        }
        const unsigned all = __ballot_sync(0xffffffffu, won);
        const int nxt = cur ^ 1;
        int* nv = shared + 3 * nxt * stride;
        if (won) {
            const int pos = __popc(all & ((1u << lane) - 1u));
            nv[pos] = v;
            nv[stride + pos] = start;
            nv[2 * stride + pos] = d;
        }
        max_deg = __reduce_max_sync(0xffffffffu, d);
        count = __popc(all);
        cur = nxt;
        depth += 1;
        run += 1;
        __syncwarp();
    }
    if (lane == 0) {
        state[0] = cur;
        state[1] = count;
        state[2] = max_deg;
        state[3] = depth;
        state[4] = run;
    }
}

extern "C" __global__ void __launch_bounds__(GBLA_SB_THREADS)
gbla_bfs_single_block(const int* in_bins, int c0, int c1, int c2, int depth, int depth_limit,
                      int cap, int max_edges, int n, int* levels, int* parents,
                      const int* indptr, const int* indices, int* out_bins, u64* slot,
                      u64* clear, int words, int source, int fill, int resident) {
    extern __shared__ int gbla_sb_shared[];
    // two queues, each of vertices, row starts and degrees (cap + 1 each: a queue's degrees
    // become its edge offsets, count + 1 of them; queue q's three arrays start at
    // (3 q + 0, 1, 2) (cap + 1)), then the bitmap
    const int stride = cap + 1;
#define GBLA_SB_V(q) (gbla_sb_shared + 3 * (q) * stride)
#define GBLA_SB_START(q) (gbla_sb_shared + (3 * (q) + 1) * stride)
#define GBLA_SB_DEG(q) (gbla_sb_shared + (3 * (q) + 2) * stride)
    unsigned* bitmap = (unsigned*)(gbla_sb_shared + 6 * stride);
    __shared__ long long s_warp[32];
    // counters of three rotating levels: the level read, the one built, the one cleared
    __shared__ int s_count[3], s_max_deg[3];
    __shared__ int s_state[5];  // what warp 0's levels leave (gbla_sb_warp_levels)
    int t = threadIdx.x, lane = t & 31;
    if (t < 3) { s_count[t] = 0; s_max_deg[t] = 0; }
    if (slot && t < GBLA_SLOT) { slot[t] = 0; clear[t] = 0; }
    if (resident) {  // read by the first level after a barrier below
        int* s_indptr = (int*)(bitmap + words);
        int* s_indices = s_indptr + n + 1;
        const int edges = indptr[n];
        for (int i = t; i <= n; i += blockDim.x) s_indptr[i] = indptr[i];
        #pragma unroll 4
        for (int i = t; i < edges; i += blockDim.x) s_indices[i] = indices[i];
        indptr = s_indptr;
        indices = s_indices;
    }
    int count;
    if (source >= 0) {
        if (fill)
            for (int i = t; i < n; i += blockDim.x) {
                levels[i] = i == source ? 0 : -1;
                if (parents) parents[i] = i == source ? source : -1;
            }
        else if (t == 0) {
            levels[source] = 0;
            if (parents) parents[source] = source;
        }
        for (int i = t; i < words; i += blockDim.x)
            bitmap[i] = i == source >> 5 ? 1u << (source & 31) : 0u;
        count = 1;
        __syncthreads();
        if (t == 0) {
            int start = indptr[source];
            GBLA_SB_V(0)[0] = source;
            GBLA_SB_START(0)[0] = start;
            GBLA_SB_DEG(0)[0] = s_max_deg[0] = indptr[source + 1] - start;
        }
    } else {
        count = c0 + c1 + c2;
        int top = 0;
        __syncthreads();
        for (int i = t; i < count; i += blockDim.x) {
            int u = i < c0 ? in_bins[i]
                  : i < c0 + c1 ? in_bins[(long long)n + (i - c0)]
                  : in_bins[2LL * n + (i - c0 - c1)];
            int start = indptr[u];
            GBLA_SB_V(0)[i] = u;
            GBLA_SB_START(0)[i] = start;
            GBLA_SB_DEG(0)[i] = indptr[u + 1] - start;
            top = max(top, GBLA_SB_DEG(0)[i]);
        }
        top = __reduce_max_sync(0xffffffffu, top);
        if (lane == 0) atomicMax(&s_max_deg[0], top);
        // the visited set: a warp reads 32 consecutive levels and writes their word
        for (int base = t - lane; base < words * 32; base += blockDim.x) {
            int i = base + lane;
            unsigned seen = __ballot_sync(0xffffffffu, i < n && levels[i] != -1);
            if (lane == 0) bitmap[base >> 5] = seen;
        }
    }
    __syncthreads();
    int cur = 0, r = 0, levels_run = 0;
    bool finished = false;
    while (true) {
        if (count == 0 || depth == depth_limit) { finished = true; break; }
        const int built = r == 2 ? 0 : r + 1, cleared = built == 2 ? 0 : built + 1;
        const int nxt = cur ^ 1;
        GblaSbQueue q{GBLA_SB_V(nxt), GBLA_SB_START(nxt), GBLA_SB_DEG(nxt), &s_count[built],
                      &s_max_deg[built], cap, n, indptr, out_bins, slot};
        const int max_deg = s_max_deg[r];
        // g lanes a frontier vertex: the power of two at or above its largest degree
        const int lg = max_deg <= 1 ? 0 : 32 - __clz(max_deg - 1), g = 1 << lg;
        const bool thin = max_deg <= GBLA_SB_THIN && (long long)count * max_deg <= max_edges;
        if (thin && count << lg <= 32 && cap >= 32) {
            // warp 0 alone while the levels fit its lanes; then the block takes over again,
            // its level counters set as a level of its own leaves them
            if (t < 32)
                gbla_sb_warp_levels(gbla_sb_shared, stride, cur, count, max_deg, depth,
                                    depth_limit, max_edges, levels, parents, indptr, indices,
                                    bitmap, words, s_state);
            __syncthreads();
            cur = s_state[0];
            count = s_state[1];
            depth = s_state[3];
            levels_run += s_state[4];
            if (t < 3) {
                s_count[t] = t == r ? count : 0;
                s_max_deg[t] = t == r ? s_state[2] : 0;
            }
            __syncthreads();
            continue;
        }
        if (thin && count << lg <= 2 * GBLA_SB_THREADS) {
            // a lane an edge (at most two passes)
            depth += 1;
            for (int k0 = t - lane; k0 < count << lg; k0 += blockDim.x) {
                const int k = k0 + lane, i = k >> lg, j = k & (g - 1);
                int u = 0, v = 0, start = 0, d = 0;
                bool won = false;
                if (i < count && j < GBLA_SB_DEG(cur)[i]) {
                    u = GBLA_SB_V(cur)[i];
                    v = indices[GBLA_SB_START(cur)[i] + j];
                    won = gbla_sb_claim(bitmap, words, levels, v, depth);
                }
                if (won) {
                    if (parents) parents[v] = u;
                    start = indptr[v];
                    d = indptr[v + 1] - start;
                }
                gbla_sb_append(q, won, v, start, d);
            }
        } else if (thin && max_deg <= GBLA_SB_UNROLL) {
            // a thread a frontier vertex: all its edges' loads at once, its claims, then all
            // its claimed vertices' row loads at once
            depth += 1;
            for (int i0 = t - lane; i0 < count; i0 += blockDim.x) {
                const int i = i0 + lane;
                const bool has = i < count;
                const int u = has ? GBLA_SB_V(cur)[i] : 0;
                const int first = has ? GBLA_SB_START(cur)[i] : 0;
                const int d = has ? GBLA_SB_DEG(cur)[i] : 0;
                int nb[GBLA_SB_UNROLL], start[GBLA_SB_UNROLL], deg[GBLA_SB_UNROLL];
                unsigned won = 0;
                #pragma unroll
                for (int j = 0; j < GBLA_SB_UNROLL; ++j) nb[j] = j < d ? indices[first + j] : 0;
                #pragma unroll
                for (int j = 0; j < GBLA_SB_UNROLL; ++j)
                    if (j < d && gbla_sb_claim(bitmap, words, levels, nb[j], depth)) {
                        if (parents) parents[nb[j]] = u;
                        won |= 1u << j;
                    }
                #pragma unroll
                for (int j = 0; j < GBLA_SB_UNROLL; ++j)
                    if (won >> j & 1u) {
                        start[j] = indptr[nb[j]];
                        deg[j] = indptr[nb[j] + 1] - start[j];
                    } else {
                        start[j] = deg[j] = 0;
                    }
                gbla_sb_append_each<GBLA_SB_UNROLL>(q, won, nb, start, deg);
            }
        } else {
            // Each thread takes `per` consecutive frontier entries; the block scan of their
            // degrees gives their edge offsets, written over the degrees.
            const int per = (count + GBLA_SB_THREADS - 1) / GBLA_SB_THREADS;
            int deg[GBLA_SB_PER];
            long long mine = 0;
            #pragma unroll
            for (int j = 0; j < GBLA_SB_PER; ++j) {
                int i = t * per + j;
                deg[j] = j < per && i < count ? GBLA_SB_DEG(cur)[i] : 0;
                mine += deg[j];
            }
            long long total;
            long long off = gbla_block_exclusive_scan(mine, s_warp, &total);  // synchronizes
            if (total > max_edges) break;  // too much work for one block: hand over
            int* s_off = GBLA_SB_DEG(cur);
            #pragma unroll
            for (int j = 0; j < GBLA_SB_PER; ++j) {
                int i = t * per + j;
                if (j < per && i < count) s_off[i] = (int)off;
                off += deg[j];
            }
            if (t == 0) s_off[count] = (int)total;
            __syncthreads();
            depth += 1;
            for (int k0 = t - lane; k0 < total; k0 += blockDim.x) {
                const int k = k0 + lane;
                int v = -1, lo = 0;
                if (k < total) {
                    int hi = count;  // the last i with s_off[i] <= k
                    while (hi - lo > 1) {
                        int mid = (lo + hi) >> 1;
                        if (s_off[mid] <= k) lo = mid; else hi = mid;
                    }
                    v = indices[GBLA_SB_START(cur)[lo] + (k - s_off[lo])];
                }
                bool won = false;
                int start = 0, d = 0;
                if (v >= 0 && gbla_sb_claim(bitmap, words, levels, v, depth)) {
                    if (parents) parents[v] = GBLA_SB_V(cur)[lo];
                    won = true;
                    start = indptr[v];
                    d = indptr[v + 1] - start;
                }
                gbla_sb_append(q, won, v, start, d);
            }
        }
        if (t == 0) { s_count[cleared] = 0; s_max_deg[cleared] = 0; }
        __syncthreads();
        count = s_count[built];
        cur = nxt;
        r = built;
        levels_run += 1;
        if (count > cap) { count = cap; break; }  // overflowed: hand over
    }
    // The frontier still in shared memory joins the out bins (the overflow is there already).
    if (!finished)
        for (int i = t; i < count; i += blockDim.x)
            gbla_append_binned(GBLA_SB_V(cur)[i], n, indptr, out_bins, slot);
    __syncthreads();
    if (t == 0 && slot) {
        slot[5] = depth;
        slot[6] = finished;
        slot[7] = levels_run;
    }
}
#undef GBLA_SB_V
#undef GBLA_SB_START
#undef GBLA_SB_DEG

// The first in-neighbour of v (CSC) in the frontier bitmap `front` (bit u & 31 of word u >> 5),
// or -1: the pull step of a level whose frontier is a bitmap, one bit a vertex (n / 8 bytes,
// which caches hold) where the levels are 4 bytes a vertex read at random.
__device__ __forceinline__ int gbla_pull_parent_bit(long long v, const unsigned* front,
                                                    const int* t_indptr, const int* t_indices) {
    for (int e = t_indptr[v]; e < t_indptr[v + 1]; ++e) {
        int u = t_indices[e];
        if ((front[u >> 5] >> (u & 31)) & 1u) return u;
    }
    return -1;
}

// ------------------------------------------------------------------ 8. persistent
// One cooperative launch runs every level: grid.sync() separates levels and the frontier size
// never leaves the device. Each level is push (binned frontier: thread / warp / block per
// vertex, the edges of the largest spread over the grid: frontier.cuh's spread bin) or pull
// (thread per unvisited vertex, early exit, claims only counted), chosen on
// the device by gbla_direction, the DirectionPolicy rule generated by gbla/direction.py and
// put before this file by the loader (mode 1: push only, mode 2: pull only), with m_u counted
// as direction.py defines it. A push level after pull levels first gathers its frontier from
// the levels into bins (one more grid.sync).
// A pull reads its frontier as a bitmap: bitmaps holds three of `words` words, level d's
// frontier in bitmap d % 3. A pull level writes its own (a warp's 32 vertices are one word: a
// store of the warp's ballot) and clears bitmap (d + 1) % 3, which the next level writes and
// this one neither reads nor writes; the first pull after push levels (whose frontier is in
// bins) clears its two bitmaps and sets the frontier's bits from the bins first (two more
// grid.syncs, once a switch).
// Counter slots: slots[0..2] rotate (a level reads slot (d-1)%3, appends to d%3, clears
// (d+1)%3); slots[3..5] rotate over the gathers the same way.
// Launch: cooperative, grid <= the co-resident block count, blocks of whole warps; slots zeroed
// but for slots[0], bins0 holding the source (gbla_bfs_init); bitmaps need no initial value.
extern "C" __global__ void gbla_bfs_persistent(int n, int depth_limit, int* levels,
                                               int* parents, const int* indptr,
                                               const int* indices, const int* t_indptr,
                                               const int* t_indices, int* bins0, int* bins1,
                                               u64* slots, long long unexplored, int mode,
                                               unsigned* bitmaps, long long words) {
    const gbla_grid grid;
    long long tid = grid.thread_rank(), threads = grid.size();
    bool pulling = false;
    int gathers = 0;
    for (int depth = 1; depth_limit < 0 || depth <= depth_limit; ++depth) {
        const u64* cur = slots + GBLA_SLOT * ((depth - 1) % 3);
        u64* nxt = slots + GBLA_SLOT * (depth % 3);
        u64* clr = slots + GBLA_SLOT * ((depth + 1) % 3);
        long long c0 = cur[0], c1 = cur[1], c2 = cur[2], c3 = cur[GBLA_SLOT_HUGE];
        long long nf = c0 + c1 + c2 + c3;
        if (nf == 0) break;
        bool was_pulling = pulling;
        long long mf = (long long)cur[3];
        pulling = mode == 0 ? gbla_direction::pull(was_pulling, nf, mf, unexplored, n, true)
                            : mode == 2;
        unexplored = gbla_direction::unexplored_after(was_pulling, pulling, unexplored, mf);
        if (tid < GBLA_SLOT) clr[tid] = 0;
        const int* q = (depth & 1) ? bins0 : bins1;
        int* out = (depth & 1) ? bins1 : bins0;
        if (pulling) {
            unsigned* front = bitmaps + words * ((depth - 1) % 3);
            unsigned* built = bitmaps + words * (depth % 3);
            unsigned* later = bitmaps + words * ((depth + 1) % 3);
            if (!was_pulling) {  // the frontier is in the bins: its bits set first
                for (long long w = tid; w < words; w += threads) {
                    front[w] = 0u;
                    built[w] = 0u;
                }
                grid.sync();
                gbla_grid_for_each_binned(q, n, c0, c1, c2, [&](int u, int lane, int group) {
                    if (lane == 0) atomicOr(&front[u >> 5], 1u << (u & 31));
                });
                for (long long i = tid; i < c3; i += threads) {
                    const int u = q[3 * (long long)n - 1 - i];
                    atomicOr(&front[u >> 5], 1u << (u & 31));
                }
                grid.sync();
            }
            for (long long w = tid; w < words; w += threads) later[w] = 0u;
            // a warp's lanes take 32 consecutive vertices, one word of `built` (threads is a
            // multiple of 32): every lane runs every pass, for the ballot
            unsigned claimed = 0;
            for (long long base = tid - (tid & 31); base < n; base += threads) {
                const long long v = base + (tid & 31);
                int found = -1;
                if (v < n && levels[v] == -1)
                    found = gbla_pull_parent_bit(v, front, t_indptr, t_indices);
                const unsigned hits = __ballot_sync(0xffffffffu, found >= 0);
                if (found >= 0) {
                    levels[v] = depth;
                    if (parents) parents[v] = found;
                    claimed += 1;
                }
                if ((tid & 31) == 0) built[base >> 5] = hits;
            }
            gbla_count_claims(claimed, nxt);
            grid.sync();
            continue;
        }
        if (was_pulling) {  // the frontier exists only as levels == depth - 1: bin it
            u64* g = slots + GBLA_SLOT * (3 + gathers % 3);
            u64* g_clr = slots + GBLA_SLOT * (3 + (gathers + 1) % 3);
            gathers += 1;
            if (tid < GBLA_SLOT) g_clr[tid] = 0;
            for (long long v = tid; v < n; v += threads)
                if (levels[v] == depth - 1)
                    gbla_append_binned<int, true>((int)v, n, indptr, (int*)q, g);
            grid.sync();
            c0 = g[0]; c1 = g[1]; c2 = g[2]; c3 = g[GBLA_SLOT_HUGE];
        }
        gbla_grid_for_each_binned(q, n, c0, c1, c2, [&](int u, int lane, int group) {
            gbla_push_group<true>(u, lane, group, depth, n, levels, parents, indptr, indices, out,
                                  nxt);
        });
        if (c3)
            gbla_grid_for_each_spread_edge(q + 3 * (long long)n - c3, c3, indptr,
                                           [&](long long u, long long e) {
                                               gbla_push_edge_to<true>((int)u, e, depth, n,
                                                                       levels, parents, indptr,
                                                                       indices, out, nxt);
                                           });
        grid.sync();
    }
}
