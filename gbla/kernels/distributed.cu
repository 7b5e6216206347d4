// One rank's part of a level of the distributed bitmap BFS (gbla/distributed/bitmap.py): push
// next<!known> |= q any.pair A (atomicOr into a bitmap of all n vertices); claim new = (OR of
// every rank's next words for this range) & ~known, levels<new> = depth; pull and parents: the
// first in-neighbour (A.T's rows) in the gathered frontier. Push: a warp a vertex (a row past
// `hub` edges: the grid); claim: a word, pull, parents: a vertex a thread. Blocks of whole
// warps, any grid; tally zeroed first. Then the steps of a round of push_sssp, the distributed
// Bellman-Ford (gbla/distributed/relax.py). At the end, the kernels of the BFS's level loop
// on the device (one thread each), compiled behind a DirectionPolicy's rule (gbla_direction).

// A tally grows by gbla_warp_reserve (frontier.cuh), one atomic a warp (the pull's queue: one a
// block, from a block scan); every lane of a warp calls it, since the loops that do stride by
// whole blocks (a warp's lanes run the same iterations).
#include "frontier.cuh"
#define GBLA_DBFS_FULL 0xffffffffu

// Bit v of a bitmap: bit v & 31 of uint32 word v >> 5, as bitmap.py lays them out. A tally is
// u64[2]: the vertices a claim or pull labelled, and their out-edges (the direction's inputs).
// O: the offset type, I: the global id type (int or long long; every instantiation is listed in
// _distributed.py).
__device__ __forceinline__ bool gbla_dbfs_bit(const unsigned* words, long long v) {
    return (words[v >> 5] >> (v & 31)) & 1u;
}

// Push: the out-neighbours of queue[0, count) (local rows) into next, a bitmap over all n
// vertices. A neighbour known visited (its owner said so, or it is this rank's) or already set
// costs no atomic: the plain read of next may be stale, which only costs a redundant atomicOr.
// A row of more than `hub` edges is not the warp's: it is appended to hubs (hub_count counts
// them) for gbla_dbfs_push_hubs, which spreads their edges over the whole grid; one warp on a
// row of millions of edges would be the level's time, on one rank however many there are.
__device__ __forceinline__ void gbla_dbfs_set(long long v, const unsigned* known,
                                              unsigned* next) {
    const unsigned bit = 1u << (v & 31);
    if ((known[v >> 5] | next[v >> 5]) & bit) return;
    atomicOr(&next[v >> 5], bit);
}

// count_at: where the frontier's size lies on the device (the tally of the claim or pull that
// built it), or NULL: `count` is the size.
template <class O, class I>
__global__ void gbla_dbfs_push(const int* queue, long long count, const u64* count_at,
                               const O* indptr, const I* indices, const unsigned* known,
                               unsigned* next, long long hub, int* hubs,
                               unsigned long long* hub_count) {
    if (count_at) count = (long long)*count_at;
    const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
    const int lane = threadIdx.x & 31;
    for (long long i = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; i < count;
         i += warps) {
        const int u = queue[i];
        const O start = indptr[u], end = indptr[u + 1];
        if ((long long)(end - start) > hub) {
            if (lane == 0) hubs[atomicAdd(hub_count, 1ull)] = u;
            continue;
        }
        for (O e = start + lane; e < end; e += 32)
            gbla_dbfs_set((long long)indices[e], known, next);
    }
}

// The hubs' edges as one range, spread over the grid's warps (a hub row strided over the whole
// grid in turn, as these kernels once ran each, left most threads idle on a row of 16 K edges
// and took a memory round trip a row). gbla_hub_scan (one block) writes hub_first[h], the first
// of row hubs[h]'s edges in the range (an exclusive scan of their degrees), and
// hub_first[*hub_count], the range's size; gbla_hub_edges gives each warp GBLA_HUB_CHUNK edges
// at a time, their first row found by one binary search (each lane the same), its lanes
// striding over them: edge(u, e) for each edge e of hub row u.
template <class O>
__global__ void gbla_hub_scan(const int* hubs, const unsigned long long* hub_count,
                              const O* indptr, long long* hub_first) {
    __shared__ long long s_warp[32];
    __shared__ long long s_total;
    const long long count = (long long)*hub_count;
    long long carry = 0;
    for (long long base = 0; base < count; base += blockDim.x) {
        const long long h = base + threadIdx.x;
        long long degree = 0;
        if (h < count) degree = (long long)(indptr[hubs[h] + 1] - indptr[hubs[h]]);
        const long long before = gbla_block_exclusive_scan(degree, s_warp, &s_total);
        if (h < count) hub_first[h] = carry + before;
        carry += s_total;  // (read before the next scan's barriers let anyone write it)
    }
    if (threadIdx.x == 0) hub_first[count] = carry;
}

#define GBLA_HUB_CHUNK 1024
template <class O, class Edge>
__device__ __forceinline__ void gbla_hub_edges(const int* hubs,
                                               const unsigned long long* hub_count,
                                               const long long* hub_first, const O* indptr,
                                               Edge edge) {
    const long long count = (long long)*hub_count;
    if (!count) return;
    const long long total = hub_first[count];
    const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
    const int lane = threadIdx.x & 31;
    const long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    for (long long k0 = warp * GBLA_HUB_CHUNK; k0 < total; k0 += warps * GBLA_HUB_CHUNK) {
        long long a = 0, b = count - 1;  // the last row whose first edge is at or before k0
        while (a < b) {
            const long long mid = (a + b + 1) >> 1;
            if (hub_first[mid] <= k0) a = mid; else b = mid - 1;
        }
        long long h = a, next = hub_first[a + 1];
        int u = hubs[a];
        long long shift = (long long)indptr[u] - hub_first[a];
        const long long end = k0 + GBLA_HUB_CHUNK < total ? k0 + GBLA_HUB_CHUNK : total;
        for (long long k = k0 + lane; k < end; k += 32) {
            while (k >= next) {
                ++h;
                next = hub_first[h + 1];
                u = hubs[h];
                shift = (long long)indptr[u] - hub_first[h];
            }
            edge(u, k + shift);
        }
    }
}

// The rows gbla_dbfs_push left in hubs[0, *hub_count), their edges spread over the grid.
template <class O, class I>
__global__ void gbla_dbfs_push_hubs(const int* hubs, const unsigned long long* hub_count,
                                    const long long* hub_first, const O* indptr,
                                    const I* indices, const unsigned* known, unsigned* next) {
    gbla_hub_edges(hubs, hub_count, hub_first, indptr, [&](int, long long e) {
        gbla_dbfs_set((long long)indices[e], known, next);
    });
}

// Claim: word w of the rank's range is global word w0 + w; received holds `ranks` arrays of
// `words` words, one from each rank (what its push set in this range). The bits of [lo, hi)
// that no one knew visited become the new frontier (front, written whole: one thread a word),
// labelled depth, appended to queue (local offsets) and counted in tally.
template <class O>
__global__ void gbla_dbfs_claim(const unsigned* received, int ranks, long long words,
                                long long w0, long long lo, long long hi, int depth,
                                const long long* depth_at, const O* indptr, unsigned* known,
                                unsigned* front, int* levels, int* queue, u64* tally,
                                const long long* slots) {
    if (depth_at) depth = (int)*depth_at;
    if (slots) levels = reinterpret_cast<int*>(slots[0]);
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long base = (long long)blockIdx.x * blockDim.x; base < words; base += stride) {
        const long long w = base + threadIdx.x;
        unsigned bits = 0;
        long long first = 0;  // the vertex of bit 0 of word w
        if (w < words) {
            for (int r = 0; r < ranks; ++r) bits |= received[(long long)r * words + w];
            first = (w0 + w) << 5;
            // the boundary words hold the neighbouring ranks' vertices too: keep [lo, hi) only
            // (lo - first is 1..31 in the first word, hi - first 1..32 in the last)
            if (first < lo) bits &= GBLA_DBFS_FULL << (lo - first);
            if (hi - first < 32) bits &= (1u << (hi - first)) - 1u;
            bits &= ~known[w0 + w];
            front[w] = bits;
            known[w0 + w] |= bits;  // this thread's word alone
        }
        const u64 at = gbla_warp_reserve((u64)__popc(bits), &tally[0]);
        long long edges = 0;
        int k = 0;
        for (unsigned rest = bits; rest; rest &= rest - 1u, ++k) {
            const long long v = first + (__ffs(rest) - 1) - lo;
            levels[v] = depth;
            queue[at + k] = (int)v;
            edges += (long long)(indptr[v + 1] - indptr[v]);
        }
        gbla_warp_reserve((u64)edges, &tally[1]);
    }
}

// Pull: each unvisited vertex v of the rank's m scans its in-edges (t_indptr, t_indices: A.T's
// rows lo..hi) and stops at the first in the gathered frontier, its parent: levels(v) = depth;
// v joins front (the rank's words, w0 first), known, queue and the tally. parents may be NULL.
// Every thread of a block runs every iteration (the loop strides by whole blocks), as the
// ballot and the block's scan need.
template <class O, class I>
__global__ void gbla_dbfs_pull(long long m, long long lo, long long w0, int depth,
                               const long long* depth_at, const O* t_indptr, const I* t_indices,
                               const unsigned* frontier, const O* indptr, unsigned* known,
                               unsigned* front, int* levels, long long* parents, int* queue,
                               u64* tally, const long long* slots) {
    if (depth_at) depth = (int)*depth_at;
    if (slots) {
        levels = reinterpret_cast<int*>(slots[0]);
        parents = reinterpret_cast<long long*>(slots[1]);
    }
    // the tally's two words are every block's: a block reserves its queue slots with one
    // atomic an iteration (a warp's each took one, on the same word, which serialised the
    // level: 0.4 M atomics on rmat(23)'s largest pull) and a thread adds its out-edges once
    __shared__ long long s_warp[32];
    __shared__ u64 s_at;
    u64 edges = 0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long base = (long long)blockIdx.x * blockDim.x; base < m; base += stride) {
        const long long v = base + threadIdx.x;
        long long found = -1;
        if (v < m && levels[v] == -1) {
            const O end = t_indptr[v + 1];
            for (O e = t_indptr[v]; e < end; ++e) {
                const long long u = (long long)t_indices[e];
                if (gbla_dbfs_bit(frontier, u)) { found = u; break; }
            }
        }
        const bool hit = found >= 0;
        if (hit) {
            levels[v] = depth;
            if (parents) parents[v] = found;
        }
        // a warp's 32 vertices lie in one word or two (lo need not be aligned): its lane 0 sets
        // their bits with at most two atomics a bitmap, where a thread a hit would take up to 32
        // on one word
        const unsigned hits = __ballot_sync(GBLA_DBFS_FULL, hit);
        if ((threadIdx.x & 31) == 0 && hits) {
            const long long g = lo + v;  // lane 0's vertex, bit 0 of hits
            const int shift = (int)(g & 31);
            const unsigned low = hits << shift, high = shift ? hits >> (32 - shift) : 0u;
            if (low) {
                atomicOr(&front[(g >> 5) - w0], low);
                atomicOr(&known[g >> 5], low);
            }
            if (high) {
                atomicOr(&front[(g >> 5) + 1 - w0], high);
                atomicOr(&known[(g >> 5) + 1], high);
            }
        }
        long long found_here;
        const long long before = gbla_block_exclusive_scan(hit ? 1 : 0, s_warp, &found_here);
        if (threadIdx.x == 0 && found_here) s_at = atomicAdd(&tally[0], (u64)found_here);
        __syncthreads();
        if (hit) {
            queue[s_at + before] = (int)v;
            edges += (u64)(indptr[v + 1] - indptr[v]);
        }
        __syncthreads();  // s_at read before the next iteration's block writes it
    }
    gbla_warp_reserve(edges, &tally[1]);
}

// (depth_at: where the depth lies on the device, read instead of `depth`, or NULL; slots: where
// the addresses of levels and parents lie, read instead of those arguments, or NULL: the level
// loop on the device writes each search's results into arrays made for it.)

// Parents after a push: each vertex queue[0, *count) just claimed (count: the claim's tally)
// takes the first in-neighbour in the gathered frontier of the level before (one exists: some
// rank's push reached it along that edge).
template <class O, class I>
__global__ void gbla_dbfs_parents(const int* queue, const u64* count, const O* t_indptr,
                                  const I* t_indices, const unsigned* frontier,
                                  long long* parents, const long long* slots) {
    if (slots) parents = reinterpret_cast<long long*>(slots[1]);
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long claimed = (long long)*count;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < claimed;
         i += stride) {
        const int v = queue[i];
        const O end = t_indptr[v + 1];
        for (O e = t_indptr[v]; e < end; ++e) {
            const long long u = (long long)t_indices[e];
            if (gbla_dbfs_bit(frontier, u)) { parents[v] = u; break; }
        }
    }
}

// ------------------------------------------------------------------ push_sssp
// One rank's steps of a round of the distributed Bellman-Ford (gbla/distributed/relax.py).
// dist holds a distance for each of the n vertices: the rank's own range [lo, hi) its
// distances, every other vertex the lowest offer this rank has made it (its owner's distance is
// at most that, so an offer no lower is never made again). An offer that lowers dist[v] sets
// bit v of `changed` (a bitmap over all n, laid out as the BFS's). T: float or double (weights
// cast to it, a null weight pointer weight 1); O, I as above.
template <class T>
__device__ __forceinline__ void gbla_dsssp_offer(long long v, T candidate, T* dist,
                                                 unsigned* changed) {
    if (candidate < dist[v] && gbla_atomic_min(dist + v, candidate)) {
        const unsigned bit = 1u << (v & 31);
        if (!(changed[v >> 5] & bit)) atomicOr(&changed[v >> 5], bit);
    }
}

// slots: NULL, or where the search's own arrays lie (int64 addresses, read by the device loop's
// kernels, which a CUDA graph made once holds, in place of the arrays they were recorded with):
#define GBLA_DSSSP_DIST 0
#define GBLA_DSSSP_CHANGED 1
#define GBLA_DSSSP_QUEUE 2
#define GBLA_DSSSP_OFFSETS 3
#define GBLA_DSSSP_VALUES 4
#define GBLA_DSSSP_RELAXED 5  // the edges relaxed (one uint64, added to)
template <class P>
__device__ __forceinline__ P* gbla_dsssp_slot(const long long* slots, int which) {
    return reinterpret_cast<P*>(slots[which]);
}

template <class T>
__device__ __forceinline__ T gbla_dsssp_weight(const T* weights, long long e) {
    return weights == nullptr ? (T)1 : weights[e];
}

// Relax: the out-edges of queue[0, count) (local rows; count_at: where the count lies on the
// device, or NULL), a block's worth of rows at a time: the block scans their degrees into
// shared memory and its threads stride over the rows' edges together, each finding its row by
// a binary search there (an R-MAT frontier is mostly rows of a few edges, which a warp a row
// would run with most lanes idle). A row past `hub` edges is left in hubs for
// gbla_dsssp_relax_hubs, as the BFS's push leaves it. Every edge relaxed (or left to the
// hubs') is counted into *relaxed where it is given. Blocks of at most GBLA_DSSSP_BLOCK
// threads, a multiple of 32.
#define GBLA_DSSSP_BLOCK 256
template <class O, class I, class T>
__global__ void __launch_bounds__(GBLA_DSSSP_BLOCK)
    gbla_dsssp_relax(const int* queue, long long count, const u64* count_at, long long lo,
                     const O* indptr, const I* indices, const T* weights, T* dist,
                     unsigned* changed, long long hub, int* hubs,
                     unsigned long long* hub_count, const long long* slots, u64* relaxed) {
    __shared__ long long s_first[GBLA_DSSSP_BLOCK];  // a row's first edge's place in the block's
    __shared__ long long s_start[GBLA_DSSSP_BLOCK];  // its first edge in indices
    __shared__ T s_du[GBLA_DSSSP_BLOCK];
    __shared__ long long s_warp[32];
    __shared__ long long s_total;
    if (count_at) count = (long long)*count_at;
    if (slots) {
        queue = gbla_dsssp_slot<int>(slots, GBLA_DSSSP_QUEUE);
        dist = gbla_dsssp_slot<T>(slots, GBLA_DSSSP_DIST);
        changed = gbla_dsssp_slot<unsigned>(slots, GBLA_DSSSP_CHANGED);
        relaxed = gbla_dsssp_slot<u64>(slots, GBLA_DSSSP_RELAXED);
    }
    const long long stride = (long long)gridDim.x * blockDim.x;
    u64 edges = 0;  // the block's rows' edges (thread 0's count), added once at the end
    for (long long base = (long long)blockIdx.x * blockDim.x; base < count; base += stride) {
        const long long i = base + threadIdx.x;
        long long degree = 0, start = 0;
        T du = (T)0;
        if (i < count) {
            const int u = queue[i];
            start = (long long)indptr[u];
            degree = (long long)indptr[u + 1] - start;
            if (degree > hub) {
                hubs[atomicAdd(hub_count, 1ull)] = u;
                if (relaxed) atomicAdd(relaxed, (u64)degree);
                degree = 0;
            } else {
                du = dist[lo + u];
            }
        }
        const long long first = gbla_block_exclusive_scan(degree, s_warp, &s_total);
        s_first[threadIdx.x] = first;
        s_start[threadIdx.x] = start;
        s_du[threadIdx.x] = du;
        __syncthreads();
        const long long total = s_total;
        edges += (u64)total;
        for (long long k = threadIdx.x; k < total; k += blockDim.x) {
            int a = 0, b = blockDim.x - 1;  // the last row whose first edge is at or before k
            while (a < b) {
                const int mid = (a + b + 1) >> 1;
                if (s_first[mid] <= k) a = mid; else b = mid - 1;
            }
            const long long e = s_start[a] + (k - s_first[a]);
            gbla_dsssp_offer((long long)indices[e], s_du[a] + gbla_dsssp_weight(weights, e), dist,
                             changed);
        }
        __syncthreads();  // the shared rows are read before the next ones overwrite them
    }
    if (relaxed && threadIdx.x == 0 && edges) atomicAdd(relaxed, edges);
}

// The rows gbla_dsssp_relax left in hubs[0, *hub_count), their edges spread over the grid.
template <class O, class I, class T>
__global__ void gbla_dsssp_relax_hubs(const int* hubs, const unsigned long long* hub_count,
                                      const long long* hub_first, long long lo, const O* indptr,
                                      const I* indices, const T* weights, T* dist,
                                      unsigned* changed, const long long* slots) {
    if (slots) {
        dist = gbla_dsssp_slot<T>(slots, GBLA_DSSSP_DIST);
        changed = gbla_dsssp_slot<unsigned>(slots, GBLA_DSSSP_CHANGED);
    }
    gbla_hub_edges(hubs, hub_count, hub_first, indptr, [&](int u, long long e) {
        gbla_dsssp_offer((long long)indices[e], dist[lo + u] + gbla_dsssp_weight(weights, e),
                         dist, changed);
    });
}

// Pack: the set bits of changed in [lo, hi) (global words w0 .. w0 + words) counted into
// *tally; with `offsets`, each listed there as its offset from lo (and its distance in
// `values`, when given), from *tally's value before on; with `clear`, those bits cleared (the
// boundary words keep the neighbouring range's). With `sent`, the first `capacity` listed are
// also written to sent and sent_values (the device loop's message, whose size is fixed). With
// slots, `list` says what is listed: 0 nothing, 1 the queue (from its start), 2 the offers to
// the range (offsets and values, from `at` on). With `window` only the bits of a distance
// below the window's end are taken (counted, listed, cleared); with `bins` as well, each other
// one is counted in bin min(floor((distance - end) / width), GBLA_DSSSP_BINS - 1) of bins
// (end_at: NULL, or where the end and the width lie, two doubles' bits, read in place of
// `end` and `width`: the device loop's control words). Launches over different
// ranges run one after the other (a boundary word is two ranges').
#define GBLA_DSSSP_BINS 8
template <class T>
__global__ void gbla_dsssp_pack(unsigned* changed, long long w0, long long words, long long lo,
                                long long hi, const T* dist, int* offsets, T* values,
                                u64* tally, int clear, int* sent, T* sent_values,
                                long long capacity, const long long* slots, int list,
                                long long at_slot, int window, double end,
                                const long long* end_at, u64* bins, double width) {
    __shared__ u64 s_bins[GBLA_DSSSP_BINS];
    if (slots) {
        changed = gbla_dsssp_slot<unsigned>(slots, GBLA_DSSSP_CHANGED);
        dist = gbla_dsssp_slot<T>(slots, GBLA_DSSSP_DIST);
        offsets = list == 1   ? gbla_dsssp_slot<int>(slots, GBLA_DSSSP_QUEUE)
                  : list == 2 ? gbla_dsssp_slot<int>(slots, GBLA_DSSSP_OFFSETS) + at_slot
                              : nullptr;
        values = list == 2 ? gbla_dsssp_slot<T>(slots, GBLA_DSSSP_VALUES) + at_slot : nullptr;
    }
    if (end_at) {
        end = __longlong_as_double(end_at[0]);
        width = __longlong_as_double(end_at[1]);
    }
    // no window's end: every bit below it, no distance read
    window = window && end < __longlong_as_double(0x7ff0000000000000ll);
    if (bins) {
        if (threadIdx.x < GBLA_DSSSP_BINS) s_bins[threadIdx.x] = 0;
        __syncthreads();
    }
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long base = (long long)blockIdx.x * blockDim.x; base < words; base += stride) {
        const long long w = base + threadIdx.x;
        unsigned bits = 0;
        long long first = 0;
        if (w < words) {
            bits = changed[w0 + w];
            first = (w0 + w) << 5;
            if (first < lo) bits &= GBLA_DBFS_FULL << (lo - first);
            if (hi - first < 32) bits &= (1u << (hi - first)) - 1u;
            if (window) {  // the bits below the window's end; the others binned
                unsigned near = 0;
                for (unsigned rest = bits; rest; rest &= rest - 1u) {
                    const int b = __ffs(rest) - 1;
                    const double d = (double)dist[first + b];
                    if (d < end) {
                        near |= 1u << b;
                    } else if (bins) {
                        const double j = floor((d - end) / width);
                        atomicAdd(&s_bins[j < GBLA_DSSSP_BINS - 1 ? (int)j : GBLA_DSSSP_BINS - 1],
                                  1ull);
                    }
                }
                bits = near;
            }
            if (clear && bits) changed[w0 + w] &= ~bits;
        }
        const u64 at = gbla_warp_reserve((u64)__popc(bits), tally);
        if (offsets == nullptr) continue;
        int k = 0;
        for (unsigned rest = bits; rest; rest &= rest - 1u, ++k) {
            const long long v = first + (__ffs(rest) - 1);
            offsets[at + k] = (int)(v - lo);
            if (values != nullptr) values[at + k] = dist[v];
            if (sent != nullptr && (long long)(at + k) < capacity) {
                sent[at + k] = (int)(v - lo);
                sent_values[at + k] = dist[v];
            }
        }
    }
    if (bins) {
        __syncthreads();
        if (threadIdx.x < GBLA_DSSSP_BINS && s_bins[threadIdx.x])
            atomicAdd(&bins[threadIdx.x], s_bins[threadIdx.x]);
    }
}

// Apply: the offers another rank sent (offsets from lo, their distances; count_at: where their
// number lies on the device, or NULL) to this rank's vertices, each lowered one's bit set.
template <class T>
__global__ void gbla_dsssp_apply(const int* offsets, const T* values, long long count,
                                 const long long* count_at, long long lo, T* dist,
                                 unsigned* changed, const long long* slots) {
    if (count_at) count = *count_at;
    if (slots) {
        dist = gbla_dsssp_slot<T>(slots, GBLA_DSSSP_DIST);
        changed = gbla_dsssp_slot<unsigned>(slots, GBLA_DSSSP_CHANGED);
    }
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride)
        gbla_dsssp_offer(lo + offsets[i], values[i], dist, changed);
}

// ------------------------------------------------------------------ the level loop on the device
// A search's levels in one CUDA graph (bitmap.py's _Graphed): a WHILE node whose body runs two
// levels, each an IF node for a push and one for a pull, which gbla_dbfs_decide chooses from
// the level before's tally summed over the ranks, as DirectionPolicy.choose does on the host
// (gbla_direction, direction.py's rule, compiled in front of this file). control (int64):
#define GBLA_DBFS_FOUND 0       // the last level's tally summed over the ranks: vertices found,
#define GBLA_DBFS_EDGES 1       //   and their out-edges (NCCL sums the two words where they lie)
#define GBLA_DBFS_DEPTH 2       // the last level's depth
#define GBLA_DBFS_LAST 3        // the last choice: 0 none yet, 1 push, 2 pull
#define GBLA_DBFS_UNEXPLORED 4  // GAP's unexplored edges, -1 until the first choice
#define GBLA_DBFS_DONE 5        // 1: the search is over
#define GBLA_DBFS_LOGGED 6      // the levels this launch ran (the log's length)
#define GBLA_DBFS_LIMIT 7       // the depth limit, -1 for none
#define GBLA_DBFS_SOURCE 8      // the search's source
#define GBLA_DBFS_SLOTS 9       // [9] the levels' address, [10] the parents' (0: none)
#ifdef __CUDACC_RTC__  // nvcc declares it in cuda_runtime.h; NVRTC (through CuPy) sees no header
typedef u64 cudaGraphConditionalHandle;
extern "C" __device__ void cudaGraphSetConditional(cudaGraphConditionalHandle handle,
                                                   unsigned int value);
#endif

// The log of a launch's levels (int64, GBLA_DBFS_LOG words a level): its vertices found over
// every rank, and the device's clock (ns) when its direction was chosen and when its sum was in.
#define GBLA_DBFS_LOG 3
__device__ __forceinline__ long long gbla_dbfs_now() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return (long long)t;
}

// The next level's direction (fixed: 1 push, 2 pull, 0 the policy's), or the end: the last
// level found nothing, or the depth limit is reached. One thread.
extern "C" __global__ void gbla_dbfs_decide(long long* control, long long n, long long edges,
                                            int fixed, int* log_directions, long long* log,
                                            cudaGraphConditionalHandle push,
                                            cudaGraphConditionalHandle pull) {
    const long long found = control[GBLA_DBFS_FOUND], depth = control[GBLA_DBFS_DEPTH];
    const long long limit = control[GBLA_DBFS_LIMIT];
    const bool go = !control[GBLA_DBFS_DONE] && found > 0 && (limit < 0 || depth < limit);
    bool pulls = false;
    if (go) {
        const bool was_pulling = control[GBLA_DBFS_LAST] == 2;
        const long long unexplored =
            control[GBLA_DBFS_UNEXPLORED] < 0 ? edges : control[GBLA_DBFS_UNEXPLORED];
        const long long frontier_edges = control[GBLA_DBFS_EDGES];
        pulls = fixed ? fixed == 2
                      : gbla_direction::pull(was_pulling, found, frontier_edges, unexplored, n,
                                             true);
        if (!fixed)
            control[GBLA_DBFS_UNEXPLORED] =
                gbla_direction::unexplored_after(was_pulling, pulls, unexplored, frontier_edges);
        control[GBLA_DBFS_LAST] = pulls ? 2 : 1;
        control[GBLA_DBFS_DEPTH] = depth + 1;
        log_directions[control[GBLA_DBFS_LOGGED]] = pulls ? 2 : 1;
        log[control[GBLA_DBFS_LOGGED] * GBLA_DBFS_LOG + 1] = gbla_dbfs_now();
    } else {
        control[GBLA_DBFS_DONE] = 1;
    }
    cudaGraphSetConditional(push, go && !pulls ? 1u : 0u);
    cudaGraphSetConditional(pull, go && pulls ? 1u : 0u);
}

// The search's start, on every rank: the source labelled where it lives (its words of known
// and of the first front zeroed before), the rank's tally its count and out-edges there. One
// thread.
template <class O>
__global__ void gbla_dbfs_start(const long long* control, long long lo, long long hi,
                                long long w0, const O* indptr, int* queue, unsigned* front,
                                unsigned* known, u64* tally) {
    const long long source = control[GBLA_DBFS_SOURCE];
    if (source < lo || source >= hi) {
        tally[0] = tally[1] = 0;
        return;
    }
    const long long v = source - lo;
    reinterpret_cast<int*>(control[GBLA_DBFS_SLOTS])[v] = 0;
    long long* parents = reinterpret_cast<long long*>(control[GBLA_DBFS_SLOTS + 1]);
    if (parents) parents[v] = source;
    queue[0] = (int)v;
    const unsigned bit = 1u << (source & 31);
    front[(source >> 5) - w0] = bit;
    known[source >> 5] = bit;
    tally[0] = 1;
    tally[1] = (u64)(indptr[v + 1] - indptr[v]);
}

// Whether this launch starts the search (no level run yet) or goes on with it (the host
// launched the graph again to read the log). One thread.
extern "C" __global__ void gbla_dbfs_begin(const long long* control,
                                           cudaGraphConditionalHandle start) {
    cudaGraphSetConditional(start, control[GBLA_DBFS_DEPTH] == 0 ? 1u : 0u);
}

// A level's tally into the sum's words, before NCCL sums them over the ranks. One thread.
extern "C" __global__ void gbla_dbfs_to_sum(const u64* tally, long long* control) {
    control[GBLA_DBFS_FOUND] = (long long)tally[0];
    control[GBLA_DBFS_EDGES] = (long long)tally[1];
}

// After the sum: the level's vertices found and its end logged. One thread.
extern "C" __global__ void gbla_dbfs_logged(long long* control, long long* log) {
    long long* level = log + control[GBLA_DBFS_LOGGED] * GBLA_DBFS_LOG;
    level[0] = control[GBLA_DBFS_FOUND];
    level[2] = gbla_dbfs_now();
    control[GBLA_DBFS_LOGGED] += 1;
}

// At the body's end: another two levels while the search goes on and the log has room for
// them (else the host reads the log and launches the graph again). One thread.
extern "C" __global__ void gbla_dbfs_again(const long long* control, long long capacity,
                                           cudaGraphConditionalHandle loop) {
    const bool again = !control[GBLA_DBFS_DONE] && control[GBLA_DBFS_LOGGED] + 2 <= capacity;
    cudaGraphSetConditional(loop, again ? 1u : 0u);
}

// ------------------------------------------------------------------ push_sssp's round loop
// Rounds of push_sssp in one CUDA graph (relax.py's _GraphedRelax): a WHILE node whose body is
// a round: the offers exchanged in messages of one of three fixed sizes (an IF node each, the
// smallest that holds every count of the table), applied, the frontier listed and relaxed; the
// new offers packed and their p x p table summed over the ranks; the loop goes on while every
// count fits the largest message. control (int64):
#define GBLA_DSSSP_ROUNDS 0  // rounds with offers so far (the host's count goes on in it)
#define GBLA_DSSSP_STOP 1    // why the loop stopped: 0 not yet, 1 no offers (the search is
                             // over), 2 a count of the table too large, 3 the log full,
                             // 4 more rounds than vertices (a negative cycle)
#define GBLA_DSSSP_LOGGED 2  // rounds this launch logged (the log's length)
#define GBLA_DSSSP_STAMP 3   // the device's clock (ns) at the launch
#define GBLA_DSSSP_SLOTS 4   // [4, 10): the search's arrays (GBLA_DSSSP_DIST ...)
#define GBLA_DSSSP_END 10    // the window's end (a double's bits; +inf: no window)
#define GBLA_DSSSP_WIDTH 11  // the window's width (a double's bits)
// The log, GBLA_DSSSP_LOG words a round: its offers over every rank, the device's clock at its
// end, the size of message it exchanged (0, 1, 2: smallest to largest)
#define GBLA_DSSSP_LOG 3

// The launch's start: the clock read, the log emptied. One thread.
extern "C" __global__ void gbla_dsssp_begin(long long* control) {
    control[GBLA_DSSSP_STAMP] = gbla_dbfs_now();
    control[GBLA_DSSSP_STOP] = 0;
    control[GBLA_DSSSP_LOGGED] = 0;
}

// The round's message: the smallest of the sizes (small <= middle <= the largest, which holds
// every count here) that holds every count of the table, its IF node's handle set, logged.
// One thread.
extern "C" __global__ void gbla_dsssp_choose(const long long* control, const long long* table,
                                             int p, long long small, long long middle,
                                             long long* log, cudaGraphConditionalHandle first,
                                             cudaGraphConditionalHandle second,
                                             cudaGraphConditionalHandle third) {
    long long most = 0;
    for (int i = 0; i < p * p; ++i) most = table[i] > most ? table[i] : most;
    const int size = most <= small ? 0 : most <= middle ? 1 : 2;
    log[GBLA_DSSSP_LOG * control[GBLA_DSSSP_LOGGED] + 2] = size;
    cudaGraphSetConditional(first, size == 0 ? 1u : 0u);
    cudaGraphSetConditional(second, size == 1 ? 1u : 0u);
    cudaGraphSetConditional(third, size == 2 ? 1u : 0u);
}

// This rank's counts of offers (tally[0, p)) as its row of the table, every other row zero,
// and its bins (tally[p + 1, p + 1 + GBLA_DSSSP_BINS)) after the table, before NCCL sums
// them over the ranks. One thread.
extern "C" __global__ void gbla_dsssp_to_table(const u64* tally, long long* table, int p,
                                               int me) {
    for (int i = 0; i < p * p; ++i) table[i] = i / p == me ? (long long)tally[i % p] : 0;
    for (int j = 0; j < GBLA_DSSSP_BINS; ++j) table[p * p + j] = (long long)tally[p + 1 + j];
}

// After the sum: the round logged (its offers over every rank, the device's clock), and
// another round while there are offers, every count fits `capacity` (the largest message),
// the rounds are at most n and the log (`log_capacity` rounds) has room. A round without
// offers while vertices wait past the window (the bins after the table) moves the window's
// end past the first bin that holds any (that bin's count written into the table's diagonal),
// and goes on. One thread.
extern "C" __global__ void gbla_dsssp_decide(long long* control, long long* table, int p,
                                             long long capacity, long long n, long long* log,
                                             long long log_capacity,
                                             cudaGraphConditionalHandle loop) {
    long long total = 0;
    bool fits = true;
    for (int i = 0; i < p * p; ++i) {
        total += table[i];
        fits = fits && table[i] <= capacity;
    }
    int first = -1;
    for (int j = GBLA_DSSSP_BINS - 1; j >= 0; --j)
        if (table[p * p + j]) first = j;
    const long long logged = control[GBLA_DSSSP_LOGGED];
    log[GBLA_DSSSP_LOG * logged] = total;
    log[GBLA_DSSSP_LOG * logged + 1] = gbla_dbfs_now();
    control[GBLA_DSSSP_LOGGED] = logged + 1;
    long long stop = 1;
    if (total > 0) {
        const long long rounds = control[GBLA_DSSSP_ROUNDS] + 1;
        control[GBLA_DSSSP_ROUNDS] = rounds;
        stop = rounds > n ? 4 : !fits ? 2 : logged + 1 >= log_capacity ? 3 : 0;
    } else if (first >= 0) {
        const double end = __longlong_as_double(control[GBLA_DSSSP_END]);
        const double width = __longlong_as_double(control[GBLA_DSSSP_WIDTH]);
        control[GBLA_DSSSP_END] = __double_as_longlong(end + (first + 1) * width);
        // what a rank lists next is at most the first bin's count over the ranks: in the
        // table's diagonal, where the message's size and the relax's grid are read from
        const long long next = table[p * p + first];
        for (int r = 0; r < p; ++r) table[r * p + r] = next;
        stop = next > capacity ? 2 : logged + 1 >= log_capacity ? 3 : 0;
    }
    control[GBLA_DSSSP_STOP] = stop;
    cudaGraphSetConditional(loop, stop == 0 ? 1u : 0u);
}
