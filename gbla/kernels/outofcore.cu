// The device steps of a traversal over a graph kept in host memory (gbla/outofcore, driven by
// _outofcore.py): the frontier {v : pred(v)} grouped by subgraph, with each subgraph's active
// count and out-degree sum (what the scheduler plans from), then, subgraph by subgraph,
//   BFS:  levels<!visited>(v) = depth for v an out-neighbour of the frontier (parent: any u),
//   SSSP: dist(v) = min(dist(v), dist(u) + w(u, v)), v marked pending when it fell,
// over edges wherever the plan put them (a resident subgraph, a compacted batch, mapped host
// memory). Count and fill: a thread per vertex, grid-stride, warp-aggregated atomics; expand and
// relax: a warp per frontier vertex. Ids are int32 or int64 (Idx), offsets int64.
#include "atomics.cuh"

#define GBLA_FULL 0xffffffffu

// The subgraph of v: bounds (parts + 1 row bounds, ascending) by binary search.
__device__ __forceinline__ int gbla_ooc_part(long long v, const long long* bounds, int parts) {
    int lo = 0, hi = parts;  // bounds[lo] <= v < bounds[hi]
    while (hi - lo > 1) {
        int mid = (lo + hi) >> 1;
        if (bounds[mid] <= v) lo = mid; else hi = mid;
    }
    return lo;
}

// BFS: the vertices of the last level.
struct gbla_level_is {
    const int* levels;
    int want;
    __device__ bool operator()(long long v) const { return levels[v] == want; }
    __device__ void take(long long) const {}
};

// SSSP: the pending vertices below the bucket's end; taking one clears its pending mark.
template <class T>
struct gbla_pending_below {
    unsigned char* pending;
    const T* dist;
    T top;
    __device__ bool operator()(long long v) const { return pending[v] && dist[v] < top; }
    __device__ void take(long long v) const { pending[v] = 0; }
};

// Counts (fill == false) or lists (fill == true) the vertices pred selects, grouped by subgraph:
// count[p] and value[p] (out-degree sums) gain the selected vertices of subgraph p; fill writes
// them to out[offset[p] + ...] (cursor[p] zeroed before), in no particular order within p.
template <bool FILL, class Pred>
__device__ void gbla_ooc_select(Pred pred, long long n, const long long* bounds, int parts,
                                const int* degrees, unsigned long long* count,
                                unsigned long long* value, const long long* offset,
                                unsigned long long* cursor, int* out) {
    const int lane = threadIdx.x & 31;
    const long long stride = (long long)gridDim.x * blockDim.x;
    // the loop's test is the warp's first vertex, so every lane runs the warp-wide steps
    for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v - lane < n;
         v += stride) {
        const bool on = v < n && pred(v);
        // every lane takes part in the match (the others under subgraph -1), so no lane is
        // in another iteration's warp-wide step
        const int p = on ? gbla_ooc_part(v, bounds, parts) : -1;
        const unsigned peers = __match_any_sync(GBLA_FULL, p);
        if (!on) continue;
        const int leader = __ffs(peers) - 1;
        if (FILL) {
            unsigned long long at = 0;
            if (lane == leader) at = atomicAdd(cursor + p, (unsigned long long)__popc(peers));
            at = __shfl_sync(peers, at, leader);
            const unsigned below = peers & ((1u << lane) - 1u);
            out[offset[p] + (long long)at + __popc(below)] = (int)v;
            pred.take(v);
        } else {
            // a degree's low and high 16 bits summed apart: a sum of 32 never overflows
            const unsigned d = (unsigned)degrees[v];
            const unsigned lo16 = __reduce_add_sync(peers, d & 0xffffu);
            const unsigned hi16 = __reduce_add_sync(peers, d >> 16);
            if (lane == leader) {
                atomicAdd(count + p, (unsigned long long)__popc(peers));
                atomicAdd(value + p, ((unsigned long long)hi16 << 16) + lo16);
            }
        }
    }
}

template <bool FILL>
__global__ void gbla_ooc_select_level(const int* levels, int want, long long n,
                                      const long long* bounds, int parts, const int* degrees,
                                      unsigned long long* count, unsigned long long* value,
                                      const long long* offset, unsigned long long* cursor,
                                      int* out) {
    gbla_ooc_select<FILL>(gbla_level_is{levels, want}, n, bounds, parts, degrees, count, value,
                          offset, cursor, out);
}

template <bool FILL, class T>
__global__ void gbla_ooc_select_pending(unsigned char* pending, const T* dist, T top,
                                        long long n, const long long* bounds, int parts,
                                        const int* degrees, unsigned long long* count,
                                        unsigned long long* value, const long long* offset,
                                        unsigned long long* cursor, int* out) {
    gbla_ooc_select<FILL>(gbla_pending_below<T>{pending, dist, top}, n, bounds, parts, degrees,
                          count, value, offset, cursor, out);
}

// The smallest distance of a pending vertex (out: +inf before the launch; stays +inf when none).
template <class T>
__global__ void gbla_ooc_pending_min(const unsigned char* pending, const T* dist, long long n,
                                     T* out) {
    T best = out[0];
    for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < n;
         v += (long long)gridDim.x * blockDim.x)
        if (pending[v] && dist[v] < best) best = dist[v];
    for (int step = 16; step; step >>= 1) {
        const T other = __shfl_down_sync(GBLA_FULL, best, step);
        if (other < best) best = other;
    }
    if ((threadIdx.x & 31) == 0) gbla_atomic_min(out, best);
}

// Vertex i of the list, u = verts[i], has its out-edges at offsets[r] - base to
// offsets[r + 1] - base of targets (and weights), r = i for a compacted batch (by_position), else
// u - lo (a whole subgraph's row pointers, or the whole host CSR read in place with lo = 0).
// A warp a vertex: visit.at(u) makes what each of u's edges e is then given to.
template <class Visit>
__device__ __forceinline__ void gbla_ooc_walk(const int* verts, long long nverts,
                                              const long long* offsets, long long base,
                                              long long lo, int by_position, Visit visit) {
    const int lane = threadIdx.x & 31;
    const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
    for (long long i = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; i < nverts;
         i += warps) {
        const int u = verts[i];
        const long long r = by_position ? i : u - lo;
        const long long end = offsets[r + 1] - base;
        const auto edge = visit.at(u);
        for (long long e = offsets[r] - base + lane; e < end; e += 32) edge(e);
    }
}

// BFS: an unvisited target takes the level depth (and u as its parent).
template <class Idx>
struct gbla_ooc_claim {
    const Idx* targets; int* levels; int depth; int* parents; int u;
    __device__ gbla_ooc_claim at(int from) const {
        gbla_ooc_claim edges = *this;
        edges.u = from;
        return edges;
    }
    __device__ void operator()(long long e) const {
        const long long v = (long long)targets[e];
        if (gbla_claim(levels, v, depth) && parents) parents[v] = u;
    }
};

// SSSP: a target whose distance falls is marked pending; weights null is weight 1.
template <class T, class Idx>
struct gbla_ooc_lower {
    const Idx* targets; const T* weights; T* dist; unsigned char* pending; T du;
    __device__ gbla_ooc_lower at(int from) const {
        gbla_ooc_lower edges = *this;
        edges.du = dist[from];
        return edges;
    }
    __device__ void operator()(long long e) const {
        const long long v = (long long)targets[e];
        const T candidate = du + (weights ? weights[e] : (T)1);
        if (candidate < dist[v] && gbla_atomic_min(dist + v, candidate)) pending[v] = 1;
    }
};

template <class Idx>
__global__ void gbla_ooc_bfs_expand(const int* verts, long long nverts, const long long* offsets,
                                    long long base, const Idx* targets, long long lo,
                                    int by_position, int* levels, int depth, int* parents) {
    gbla_ooc_walk(verts, nverts, offsets, base, lo, by_position,
                  gbla_ooc_claim<Idx>{targets, levels, depth, parents, 0});
}

template <class T, class Idx>
__global__ void gbla_ooc_relax(const int* verts, long long nverts, const long long* offsets,
                               long long base, const Idx* targets, const T* weights,
                               long long lo, int by_position, T* dist,
                               unsigned char* pending) {
    gbla_ooc_walk(verts, nverts, offsets, base, lo, by_position,
                  gbla_ooc_lower<T, Idx>{targets, weights, dist, pending, (T)0});
}

