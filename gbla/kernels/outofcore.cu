// The device steps of a traversal over a graph kept in host memory (gbla/outofcore, driven by
// _outofcore.py): the frontier {v : pred(v)} grouped by subgraph, with each subgraph's active
// count and out-degree sum (what the scheduler plans from), then, subgraph by subgraph,
//   BFS:  levels<!visited>(v) = depth for v an out-neighbour of the frontier (parent: any u),
//   SSSP: dist(v) = min(dist(v), dist(u) + w(u, v)), v marked pending when it fell,
// over edges wherever the plan put them (a resident subgraph, a compacted batch, mapped host
// memory). Count and fill: a thread per vertex, grid-stride, warp-aggregated atomics; expand and
// relax: a warp per frontier vertex, a heavy vertex's edges past its first chunk spread over the
// grid by a second launch; a level's blocks that need no staging walked in one launch. Ids are int32 or int64 (Idx), offsets int64.
#include "atomics.cuh"
#include "lists.cuh"  // gbla_list_append: a warp's appends to a list, one atomic

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

// The warp's lanes `peers` (leader the lowest), each with a vertex of subgraph p of `degree`
// out-edges: count[p] and value[p] gain them.
__device__ __forceinline__ void gbla_ooc_tally(unsigned peers, int lane, int leader, int p,
                                               int degree, unsigned long long* count,
                                               unsigned long long* value) {
    // a degree's low and high 16 bits summed apart: a sum of 32 never overflows
    const unsigned d = (unsigned)degree;
    const unsigned lo16 = __reduce_add_sync(peers, d & 0xffffu);
    const unsigned hi16 = __reduce_add_sync(peers, d >> 16);
    if (lane == leader) {
        atomicAdd(count + p, (unsigned long long)__popc(peers));
        atomicAdd(value + p, ((unsigned long long)hi16 << 16) + lo16);
    }
}

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
            gbla_ooc_tally(peers, lane, leader, p, degrees[v], count, value);
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

// The smallest distance of a pending vertex into *out (a thread a vertex, grid-stride, a
// warp's least one atomic); *out unchanged where none is smaller.
template <class T>
__device__ __forceinline__ void gbla_ooc_least_pending(const unsigned char* pending, const T* dist,
                                                       long long n, T* out) {
    T best = *out;
    for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < n;
         v += (long long)gridDim.x * blockDim.x)
        if (pending[v] && dist[v] < best) best = dist[v];
    for (int step = 16; step; step >>= 1) {
        const T other = __shfl_down_sync(GBLA_FULL, best, step);
        if (other < best) best = other;
    }
    if ((threadIdx.x & 31) == 0) gbla_atomic_min(out, best);
}

// The smallest distance of a pending vertex (out: +inf before the launch; stays +inf when none).
template <class T>
__global__ void gbla_ooc_pending_min(const unsigned char* pending, const T* dist, long long n,
                                     T* out) {
    gbla_ooc_least_pending(pending, dist, n, out);
}

// A block of edges: vertex u's out-edges, u at list position i, are offsets[r] - base to
// offsets[r + 1] - base of targets (Idx) and weights (T; null: weight 1), r = i (a compacted
// batch, by_position) or u - lo (a whole subgraph's row pointers, or the whole host CSR read in
// place with lo = 0). Six 64-bit words: a row of the level's table (_outofcore.Level).
struct gbla_ooc_block {
    long long offsets, targets, weights, base, lo, by_position;
};

// What a warp walks: vertex u's edges first to end of targets and weights.
struct gbla_ooc_edges {
    int u;
    long long first, end;
    const void* targets;
    const void* weights;
};

__device__ __forceinline__ gbla_ooc_edges gbla_ooc_find(const gbla_ooc_block& b, long long r,
                                                        int u) {
    const long long* offsets = (const long long*)b.offsets;
    return gbla_ooc_edges{u, offsets[r] - b.base, offsets[r + 1] - b.base,
                          (const void*)b.targets, (const void*)b.weights};
}

// One block for the whole list (a step of its own).
struct gbla_ooc_one {
    const int* verts;
    gbla_ooc_block b;
    __device__ bool find(long long i, gbla_ooc_edges& x) const {
        const int u = verts[i];
        x = gbla_ooc_find(b, b.by_position ? i : u - b.lo, u);
        return true;
    }
};

// A level's blocks in one launch: the list grouped by subgraph (group: parts + 1 starts), the
// vertices of subgraph p walked in table[p]; a subgraph whose row has no offsets is walked by a
// step of its own.
struct gbla_ooc_many {
    const int* verts;
    const gbla_ooc_block* table;
    const long long* group;
    int parts;
    __device__ bool find(long long i, gbla_ooc_edges& x) const {
        int lo = 0, hi = parts;  // group[lo] <= i < group[hi]
        while (hi - lo > 1) {
            const int mid = (lo + hi) >> 1;
            if (group[mid] <= i) lo = mid; else hi = mid;
        }
        const gbla_ooc_block b = table[lo];
        if (!b.offsets) return false;
        const int u = verts[i];
        x = gbla_ooc_find(b, b.by_position ? i - group[lo] : u - b.lo, u);
        return true;
    }
};

// Edges first to end of x, lane by lane, the warp's reads starting on a multiple of `align`
// edges (a power of two; 32 4-byte ids make a 128-byte line: over the bus, one request where an
// unaligned start makes two).
template <class Edge>
__device__ __forceinline__ void gbla_ooc_run(const gbla_ooc_edges& x, int align, int lane,
                                             const Edge& edge) {
    for (long long e = x.first - (x.first & (align - 1)) + lane; e < x.end; e += 32)
        if (e >= x.first) edge(e);
}

// A warp a vertex; visit.at(x) makes what each of the vertex's edges e is then given to. A vertex
// of more than `chunk` edges (chunk > 0) walks only its first chunk: the rest go to queue as
// (i, k) pairs, chunk k of list position i, counted by *queued, for gbla_ooc_walk_chunks to
// spread over the whole grid (one hub of 100,000 edges is otherwise one warp's 3,000 steps while
// the grid waits).
template <class Rows, class Visit>
__device__ __forceinline__ void gbla_ooc_walk(Rows rows, long long nverts, int chunk,
                                              int align, int2* queue, unsigned* queued,
                                              Visit visit) {
    const int lane = threadIdx.x & 31;
    const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
    for (long long i = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; i < nverts;
         i += warps) {
        gbla_ooc_edges x;
        if (!rows.find(i, x)) continue;  // the same for the whole warp
        if (chunk && x.end - x.first > chunk) {
            const int more = (int)((x.end - x.first - 1) / chunk);  // chunks after the first
            unsigned at = 0;
            if (lane == 0) at = atomicAdd(queued, (unsigned)more);
            at = __shfl_sync(GBLA_FULL, at, 0);
            for (int k = lane; k < more; k += 32) queue[at + k] = make_int2((int)i, k + 1);
            x.end = x.first + chunk;
        }
        const auto edge = visit.at(x);
        gbla_ooc_run(x, align, lane, edge);
    }
}

// The queued chunks, a warp a chunk.
template <class Rows, class Visit>
__device__ __forceinline__ void gbla_ooc_walk_chunks(Rows rows, int chunk, int align,
                                                     const int2* queue, const unsigned* queued,
                                                     Visit visit) {
    const int lane = threadIdx.x & 31;
    const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
    const long long total = *queued;
    for (long long c = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; c < total;
         c += warps) {
        const int2 q = queue[c];
        gbla_ooc_edges x;
        rows.find(q.x, x);  // a queued vertex was found
        x.first += (long long)q.y * chunk;
        x.end = min(x.first + chunk, x.end);
        const auto edge = visit.at(x);
        gbla_ooc_run(x, align, lane, edge);
    }
}

// BFS: an unvisited target takes the level depth (and u as its parent).
template <class Idx>
struct gbla_ooc_claim {
    int* levels; int depth; int* parents; const Idx* targets; int u;
    __device__ gbla_ooc_claim at(const gbla_ooc_edges& x) const {
        gbla_ooc_claim edges = *this;
        edges.targets = (const Idx*)x.targets;
        edges.u = x.u;
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
    T* dist; unsigned char* pending; const Idx* targets; const T* weights; T du;
    __device__ gbla_ooc_lower at(const gbla_ooc_edges& x) const {
        gbla_ooc_lower edges = *this;
        edges.targets = (const Idx*)x.targets;
        edges.weights = (const T*)x.weights;
        edges.du = dist[x.u];
        return edges;
    }
    __device__ void operator()(long long e) const {
        const long long v = (long long)targets[e];
        const T candidate = du + (weights ? weights[e] : (T)1);
        if (candidate < dist[v] && gbla_atomic_min(dist + v, candidate)) pending[v] = 1;
    }
};

// CHUNKS false: the list's walk (its heavy vertices' chunks queued); true: the queued chunks.
template <bool CHUNKS, class Rows, class Visit>
__device__ __forceinline__ void gbla_ooc_visit(Rows rows, long long nverts, int chunk,
                                               int align, int2* queue, unsigned* queued,
                                               Visit visit) {
    if (CHUNKS) gbla_ooc_walk_chunks(rows, chunk, align, queue, queued, visit);
    else gbla_ooc_walk(rows, nverts, chunk, align, queue, queued, visit);
}

// The walks' entry points: one block (a step), or a level's table of blocks (Level), then what
// each edge does: claim (BFS) or lower (SSSP).
#define GBLA_OOC_ONE                                                                          \
    const int *verts, long long nverts, long long offsets, long long base, long long targets,   \
        long long weights, long long lo, int by_position, int chunk, int align, int2 *queue,   \
        unsigned *queued
#define GBLA_OOC_ONE_ROWS gbla_ooc_one{verts, {offsets, targets, weights, base, lo, by_position}}
#define GBLA_OOC_MANY                                                                         \
    const int *verts, long long nverts, const gbla_ooc_block *table, const long long *group,    \
        int parts, int chunk, int align, int2 *queue, unsigned *queued
#define GBLA_OOC_MANY_ROWS gbla_ooc_many{verts, table, group, parts}

template <bool CHUNKS, class Idx>
__global__ void gbla_ooc_bfs_expand(GBLA_OOC_ONE, int* levels, int depth, int* parents) {
    gbla_ooc_visit<CHUNKS>(GBLA_OOC_ONE_ROWS, nverts, chunk, align, queue, queued,
                           gbla_ooc_claim<Idx>{levels, depth, parents, nullptr, 0});
}

template <bool CHUNKS, class Idx>
__global__ void gbla_ooc_bfs_expand_level(GBLA_OOC_MANY, int* levels, int depth, int* parents) {
    gbla_ooc_visit<CHUNKS>(GBLA_OOC_MANY_ROWS, nverts, chunk, align, queue, queued,
                           gbla_ooc_claim<Idx>{levels, depth, parents, nullptr, 0});
}

template <bool CHUNKS, class T, class Idx>
__global__ void gbla_ooc_relax(GBLA_OOC_ONE, T* dist, unsigned char* pending) {
    gbla_ooc_visit<CHUNKS>(GBLA_OOC_ONE_ROWS, nverts, chunk, align, queue, queued,
                           gbla_ooc_lower<T, Idx>{dist, pending, nullptr, nullptr, (T)0});
}

template <bool CHUNKS, class T, class Idx>
__global__ void gbla_ooc_relax_level(GBLA_OOC_MANY, T* dist, unsigned char* pending) {
    gbla_ooc_visit<CHUNKS>(GBLA_OOC_MANY_ROWS, nverts, chunk, align, queue, queued,
                           gbla_ooc_lower<T, Idx>{dist, pending, nullptr, nullptr, (T)0});
}

// ------------------------------------------------------------------ levels on the device
// A span of BFS levels run on the device with the plan fixed (gpu.py's _DeviceLevels): the
// resident subgraphs walked where they are held, every other active subgraph's edges read in
// place (mapped host memory), as the host's differential plan reads them once no subgraph is
// worth sending whole. Each level: begin (zero the tally), count (select, fill false), decide,
// fill (select, fill true), walk (expand, then the heavy vertices' chunks). Every kernel
// returns at once once loop[GBLA_OOC_STOP] is set, so a batch of levels launched ahead of
// the host's reading ends where the search ends or where a level needs the host's plan.
// loop[] (int64), written by gbla_ooc_loop_decide and the host:
#define GBLA_OOC_STOP 0      // 0 go on; 1 the level at WANT needs the host's plan (not run); 2 done
#define GBLA_OOC_WANT 1      // the frontier's level (after decide: the level being made)
#define GBLA_OOC_RUN 2       // levels run since the batch began
#define GBLA_OOC_H2D 3       // bytes the in-place reads moved, as the scheduler counts them
#define GBLA_OOC_COMPACT 4   // in-place steps (the scheduler's compact transfers)
#define GBLA_OOC_HITS 5      // resident hits
#define GBLA_OOC_LIMIT 6     // the depth limit, -1 for none
#define GBLA_OOC_FREE 7      // the scheduler's room for residents left, and its capacity
#define GBLA_OOC_CAPACITY 8
// SSSP's (below):
#define GBLA_OOC_BUCKET 9    // 1: the round found nothing below TOP; the bucket moves on
#define GBLA_OOC_TOP 10      // the bucket's end (the bits of a T)
#define GBLA_OOC_LEAST 11    // the smallest pending distance (bits of a T; +inf between uses)
#define GBLA_OOC_ROUNDS 12   // rounds over the search; Bellman-Ford past n stops with 3
// BFS's frontier as a list (the span's vertices in the order they were reached, in the
// groups' ids): the level's at FROM to TO, the next level's appended from TO to NEXT
#define GBLA_OOC_FROM 13
#define GBLA_OOC_TO 14
#define GBLA_OOC_NEXT 15
#define GBLA_OOC_BYTES 16    // from here, each level's bytes, GBLA_OOC_RUN of them

// The batch's start: no level run yet in it.
extern "C" __global__ void gbla_ooc_loop_batch(long long* loop) { loop[GBLA_OOC_RUN] = 0; }

// A level's start: the tally (counts, then out-degree sums), the cursors and the chunk queue
// zeroed, and the level's list the vertices the last one appended: BFS's (lists 1) after the
// last's in one list, SSSP's (lists 2) the other of two from its start (and the bucket's
// move, if the last round made one, done). One block.
extern "C" __global__ void gbla_ooc_loop_begin(long long* loop, unsigned long long* tally,
                                               unsigned long long* cursor, int parts,
                                               unsigned* queued, int lists) {
    if (loop[GBLA_OOC_STOP]) return;
    for (int k = threadIdx.x; k < 2 * parts; k += blockDim.x) tally[k] = 0;
    for (int k = threadIdx.x; k < parts; k += blockDim.x) cursor[k] = 0;
    if (threadIdx.x != 0) return;
    if (queued != nullptr) *queued = 0;
    loop[GBLA_OOC_FROM] = lists == 1 ? loop[GBLA_OOC_TO] : 0;
    loop[GBLA_OOC_TO] = loop[GBLA_OOC_NEXT];
    if (lists == 2) {
        loop[GBLA_OOC_NEXT] = 0;
        loop[GBLA_OOC_BUCKET] = 0;
    }
}

// The span's first list: the vertices at level WANT appended to list from NEXT (a thread a
// vertex, grid-stride, a warp's appends one atomic).
extern "C" __global__ void gbla_ooc_loop_list_level(const int* levels, long long* loop,
                                                    long long n, int* list) {
    const int want = (int)loop[GBLA_OOC_WANT];
    unsigned long long* next = (unsigned long long*)(loop + GBLA_OOC_NEXT);
    for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < n;
         v += (long long)gridDim.x * blockDim.x)
        if (levels[v] == want) gbla_list_append(list, next, v);
}

// The level's list counted by subgraph: count[p] and value[p] (out-degree sums) as
// gbla_ooc_select counts. A fixed grid striding over the list.
extern "C" __global__ void gbla_ooc_loop_count_list(const long long* loop, const int* list,
                                                    const long long* bounds, int parts,
                                                    const int* degrees, unsigned long long* count,
                                                    unsigned long long* value) {
    if (loop[GBLA_OOC_STOP]) return;
    const int lane = threadIdx.x & 31;
    const long long from = loop[GBLA_OOC_FROM], to = loop[GBLA_OOC_TO];
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = from + (long long)blockIdx.x * blockDim.x + threadIdx.x; i - lane < to;
         i += stride) {
        const bool on = i < to;
        const int v = on ? list[i] : 0;
        const int p = on ? gbla_ooc_part(v, bounds, parts) : -1;
        const unsigned peers = __match_any_sync(GBLA_FULL, p);
        if (!on) continue;
        gbla_ooc_tally(peers, lane, __ffs(peers) - 1, p, degrees[v], count, value);
    }
}

// Whether the level the tally counted runs on the device, as the scheduler's differential
// plan would decide it (schedule.py's Scheduler._differential): it does unless the frontier is
// empty or the depth limit reached (done), or an active subgraph that is not resident would be
// sent whole, there being room for it, or its active edges being at least whole_ratio of its
// edges with room to be made by evicting residents this level does not use (handed back).
// Then the group offsets (an exclusive scan of the counts), the accounts (each active
// resident a hit; each other active subgraph an in-place step of its active edges and one
// index a vertex, plus one), and WANT moved on to the level being made. facts: the subgraphs'
// sizes, edges and resident flags (3 x parts). One warp, a lane every 32nd subgraph: the
// subgraphs' tests are independent, and one thread's walk over them is a chain of dependent
// reads a subgraph.
// SSSP (rounds: 1 delta-stepping, 2 Bellman-Ford over n vertices): an empty frontier moves the
// bucket on (delta-stepping) or ends the search, and a Bellman-Ford round past the n-th stops
// with 3 (a negative cycle) before it runs.
__device__ __forceinline__ long long gbla_ooc_warp_sum(long long x) {
    for (int step = 16; step; step >>= 1) x += __shfl_xor_sync(GBLA_FULL, x, step);
    return x;
}

extern "C" __global__ void gbla_ooc_loop_decide(long long* loop, const unsigned long long* tally,
                                                long long* offset, int parts,
                                                const long long* facts, double whole_ratio,
                                                long long edge_bytes, long long index_bytes,
                                                int rounds, long long n) {
    const int lane = threadIdx.x;
    if (loop[GBLA_OOC_STOP] || blockIdx.x != 0 || lane >= 32) return;
    const unsigned long long* count = tally;
    const unsigned long long* value = tally + parts;
    const long long *size = facts, *edges = facts + parts, *resident = facts + 2 * parts;
    const long long limit = loop[GBLA_OOC_LIMIT];
    if (limit >= 0 && loop[GBLA_OOC_WANT] >= limit) {
        if (lane == 0) loop[GBLA_OOC_STOP] = 2;
        return;
    }
    const long long free_bytes = loop[GBLA_OOC_FREE], capacity = loop[GBLA_OOC_CAPACITY];
    long long idle = 0, active = 0;
    for (int p = lane; p < parts; p += 32) {
        if (count[p]) active += (long long)count[p];
        else if (resident[p]) idle += size[p];
    }
    active = gbla_ooc_warp_sum(active);
    idle = gbla_ooc_warp_sum(idle);
    if (!active) {
        if (lane == 0) {
            if (rounds == 1) loop[GBLA_OOC_BUCKET] = 1;
            else loop[GBLA_OOC_STOP] = 2;
        }
        return;
    }
    long long bytes = 0, compact = 0, hits = 0;
    bool whole = false;
    for (int p = lane; p < parts; p += 32) {
        if (!count[p]) continue;
        if (resident[p]) {
            ++hits;
            continue;
        }
        const bool room = size[p] <= free_bytes;
        const bool worth = (double)value[p] >= whole_ratio * (double)edges[p] &&
                           size[p] <= capacity && free_bytes + idle >= size[p];
        whole |= room || worth;
        bytes += (long long)value[p] * edge_bytes + ((long long)count[p] + 1) * index_bytes;
        ++compact;
    }
    if (__any_sync(GBLA_FULL, whole)) {
        if (lane == 0) loop[GBLA_OOC_STOP] = 1;
        return;
    }
    bytes = gbla_ooc_warp_sum(bytes);
    compact = gbla_ooc_warp_sum(compact);
    hits = gbla_ooc_warp_sum(hits);
    long long round = 0;
    if (rounds && lane == 0) round = ++loop[GBLA_OOC_ROUNDS];
    round = __shfl_sync(GBLA_FULL, round, 0);
    if (rounds == 2 && round > n) {
        if (lane == 0) loop[GBLA_OOC_STOP] = 3;
        return;
    }
    // the offsets: an exclusive scan of the counts, 32 subgraphs a step
    long long at = 0;
    for (int first = 0; first < parts; first += 32) {
        const int p = first + lane;
        const long long c = p < parts ? (long long)count[p] : 0;
        long long sum = c;  // inclusive, over the lanes up to this one
        for (int step = 1; step < 32; step <<= 1) {
            const long long below = __shfl_up_sync(GBLA_FULL, sum, step);
            if (lane >= step) sum += below;
        }
        if (p < parts) offset[p] = at + sum - c;
        at += __shfl_sync(GBLA_FULL, sum, 31);
    }
    if (lane == 0) {
        offset[parts] = at;
        loop[GBLA_OOC_H2D] += bytes;
        loop[GBLA_OOC_COMPACT] += compact;
        loop[GBLA_OOC_HITS] += hits;
        loop[GBLA_OOC_BYTES + loop[GBLA_OOC_RUN]] = bytes;
        loop[GBLA_OOC_RUN] += 1;
        loop[GBLA_OOC_WANT] += 1;
    }
}

// The level's list walked, each vertex in its subgraph's row of the table (a resident's
// copy, or the host CSR read in place: never a compacted batch), found by its row bounds.
struct gbla_ooc_list {
    const int* verts;  // the level's list, from FROM
    const long long* bounds;
    const gbla_ooc_block* table;
    int parts;
    __device__ bool find(long long i, gbla_ooc_edges& x) const {
        const int u = verts[i];
        const gbla_ooc_block b = table[gbla_ooc_part(u, bounds, parts)];
        if (!b.offsets) return false;
        x = gbla_ooc_find(b, u - b.lo, u);
        return true;
    }
};

// BFS: an unvisited target takes the level depth (and u as its parent) and is appended to the
// next level's list.
template <class Idx>
struct gbla_ooc_claim_next {
    gbla_ooc_claim<Idx> claim; int* list; unsigned long long* next;
    __device__ gbla_ooc_claim_next at(const gbla_ooc_edges& x) const {
        return gbla_ooc_claim_next{claim.at(x), list, next};
    }
    __device__ void operator()(long long e) const {
        const long long v = (long long)claim.targets[e];
        if (!gbla_claim(claim.levels, v, claim.depth)) return;
        if (claim.parents) claim.parents[v] = claim.u;
        gbla_list_append(list, next, v);
    }
};

// The level's walk over its list, its depth WANT: a fixed grid, each warp striding over the
// list; the vertices reached appended from NEXT.
template <bool CHUNKS, class Idx>
__global__ void gbla_ooc_bfs_expand_list(long long* loop, int* list, const long long* bounds,
                                         const gbla_ooc_block* table, int parts, int chunk,
                                         int align, int2* queue, unsigned* queued, int* levels,
                                         int* parents) {
    if (loop[GBLA_OOC_STOP]) return;
    const long long from = loop[GBLA_OOC_FROM], to = loop[GBLA_OOC_TO];
    const gbla_ooc_claim<Idx> claim{levels, (int)loop[GBLA_OOC_WANT], parents, nullptr, 0};
    gbla_ooc_visit<CHUNKS>(
        gbla_ooc_list{list + from, bounds, table, parts}, to - from, chunk, align, queue, queued,
        gbla_ooc_claim_next<Idx>{claim, list, (unsigned long long*)(loop + GBLA_OOC_NEXT)});
}

// SSSP rounds on the device, the same span's structure (_DeviceRounds), the frontier a list
// as BFS's: a round relaxes the vertices its list holds, and a vertex it lowers below the
// bucket's end TOP goes to the next round's list (the two lists alternate, a round's own at
// FROM = 0 to TO, the next's to NEXT). A pending mark is 0 (not pending), 1 (pending: above
// TOP, or marked by the host's plan) or 2 (pending and in the next round's list, once: the
// mark changes by a compare-and-swap on the word that holds it). A round whose list is empty
// moves a delta-stepping bucket on (the smallest pending distance, the bucket's end, then the
// pending vertices below it listed: a pass over every vertex, in a few rounds of a search),
// and ends Bellman-Ford. The walk clears a vertex's mark before it reads its distance, and a
// thread that lowers a distance fences before it reads the mark: a vertex lowered while its
// edges are walked is either walked at its new distance or listed again.

template <class T>
__device__ __forceinline__ T gbla_ooc_word(const long long* loop, int k) {
    return *reinterpret_cast<const T*>(loop + k);
}

// Vertex v's mark after its distance fell to a value below TOP (near) or not: 0 or 1 become 2
// (near: true returned, the caller lists v), 0 becomes 1 (not near); 2 stays.
__device__ __forceinline__ bool gbla_ooc_mark(unsigned char* pending, long long v, bool near) {
    const unsigned long long at = (unsigned long long)(pending + v);
    unsigned* word = (unsigned*)(at & ~3ull);
    const int shift = (int)(at & 3ull) * 8;
    unsigned old = *(volatile unsigned*)word;
    while (true) {
        const unsigned mark = (old >> shift) & 0xffu;
        const unsigned want = near ? 2u : (mark ? mark : 1u);
        if (mark == 2u || want == mark) return false;
        const unsigned seen = atomicCAS(word, old, (old & ~(0xffu << shift)) | (want << shift));
        if (seen == old) return want == 2u;
        old = seen;
    }
}

// SSSP over a list: u's mark cleared before its distance is read (CLEAR: the list's walk, not
// a heavy vertex's later chunks), a lowered target marked, and listed when below TOP.
template <bool CLEAR, class T, class Idx>
struct gbla_ooc_lower_next {
    T* dist; unsigned char* pending; const Idx* targets; const T* weights; T du; T top;
    int* list; unsigned long long* next;
    __device__ gbla_ooc_lower_next at(const gbla_ooc_edges& x) const {
        gbla_ooc_lower_next edges = *this;
        edges.targets = (const Idx*)x.targets;
        edges.weights = (const T*)x.weights;
        if (CLEAR) {
            pending[x.u] = 0;
            __threadfence();  // the mark cleared before the distance is read
        }
        edges.du = __ldcg(dist + x.u);
        return edges;
    }
    __device__ void operator()(long long e) const {
        const long long v = (long long)targets[e];
        const T candidate = du + (weights ? weights[e] : (T)1);
        if (!(candidate < dist[v] && gbla_atomic_min(dist + v, candidate))) return;
        __threadfence();  // the distance written before the mark is read
        if (gbla_ooc_mark(pending, v, candidate < top)) gbla_list_append(list, next, v);
    }
};

// The round's walk over its list (CHUNKS: the heavy vertices' queued chunks).
template <bool CHUNKS, class T, class Idx>
__global__ void gbla_ooc_relax_list(long long* loop, const int* list, int* other,
                                    const long long* bounds, const gbla_ooc_block* table,
                                    int parts, int chunk, int align, int2* queue,
                                    unsigned* queued, T* dist, unsigned char* pending) {
    if (loop[GBLA_OOC_STOP] || loop[GBLA_OOC_BUCKET]) return;
    const long long to = loop[GBLA_OOC_TO];
    gbla_ooc_visit<CHUNKS>(
        gbla_ooc_list{list, bounds, table, parts}, to, chunk, align, queue, queued,
        gbla_ooc_lower_next<!CHUNKS, T, Idx>{dist, pending, nullptr, nullptr, (T)0,
                                             gbla_ooc_word<T>(loop, GBLA_OOC_TOP), other,
                                             (unsigned long long*)(loop + GBLA_OOC_NEXT)});
}

// The smallest pending distance into LEAST, where the bucket moves on.
template <class T>
__global__ void gbla_ooc_loop_pending_min(long long* loop, const unsigned char* pending,
                                          const T* dist, long long n) {
    if (loop[GBLA_OOC_STOP] || !loop[GBLA_OOC_BUCKET]) return;
    gbla_ooc_least_pending(pending, dist, n, reinterpret_cast<T*>(loop + GBLA_OOC_LEAST));
}

// The next bucket's end from LEAST, as gpu.sssp computes it on the host: the end of the
// delta-wide bucket holding it, at least just past it (in T's arithmetic); none pending: done.
// One thread; BUCKET stays set for the listing (the next round's begin clears it).
template <class T>
__global__ void gbla_ooc_loop_top(long long* loop, double delta) {
    if (loop[GBLA_OOC_STOP] || !loop[GBLA_OOC_BUCKET]) return;
    T* least = reinterpret_cast<T*>(loop + GBLA_OOC_LEAST);
    const T m = *least, inf = (T)__longlong_as_double(0x7ff0000000000000LL);
    *least = inf;
    if (!(m < inf)) {
        loop[GBLA_OOC_STOP] = 2;
        return;
    }
    const T d = (T)delta;
    const T a = (floor(m / d) + (T)1) * d, b = nextafter(m, inf);
    *reinterpret_cast<T*>(loop + GBLA_OOC_TOP) = a > b ? a : b;
}

// The pending vertices below TOP marked 2 and appended to list from NEXT: a span's first list
// (START), or the next round's where the bucket moved on. A thread a vertex, grid-stride.
template <bool START, class T>
__global__ void gbla_ooc_loop_list_pending(long long* loop, unsigned char* pending,
                                           const T* dist, long long n, int* list) {
    if (!START && (loop[GBLA_OOC_STOP] || !loop[GBLA_OOC_BUCKET])) return;
    const T top = gbla_ooc_word<T>(loop, GBLA_OOC_TOP);
    unsigned long long* next = (unsigned long long*)(loop + GBLA_OOC_NEXT);
    for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < n;
         v += (long long)gridDim.x * blockDim.x)
        if (pending[v] && dist[v] < top) {
            pending[v] = 2;
            gbla_list_append(list, next, v);
        }
}
