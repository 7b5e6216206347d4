// Hand-written SSSP kernels, drop-in methods of gbla.sssp (driven by _sssp.py): d = min over
// paths, relaxed as d(v) = min(d(v), d(u) + w(u, v)) with atomicMin by compare-and-swap. T is
// float or double, ids and offsets int32, +inf unreached, a null weight pointer weight 1.
// Mappings: a thread per edge (edge_bellman_ford), a thread / warp / block per frontier vertex
// (frontier, persistent, near_far); each section below gives its launch contract.
//
// Bellman-Ford converges in any order of relaxations, and without a negative cycle no distance
// falls after n - 1 rounds (a round relaxes every edge that could matter at least once, with
// values at least as new as a synchronous round's), so a change in round n proves one.
#include "frontier.cuh"
#include "atomics.cuh"

// LDG: through the read-only (non-coherent) path; else an ordinary load. The pointer is not
// __restrict__, so the compiler never takes the read-only path on its own.
template <class T, bool LDG>
__device__ __forceinline__ T gbla_read_dist(const T* dist, int v) {
    if (LDG) return __ldg(dist + v);
    return dist[v];
}

__device__ __forceinline__ void gbla_set_inf(float* x) { *x = __int_as_float(0x7f800000); }
__device__ __forceinline__ void gbla_set_inf(double* x) {
    *x = __longlong_as_double(0x7ff0000000000000LL);
}

__device__ __forceinline__ float gbla_floor(float x) { return floorf(x); }
__device__ __forceinline__ double gbla_floor(double x) { return floor(x); }
__device__ __forceinline__ float gbla_next_up(float x) {
    return nextafterf(x, __int_as_float(0x7f800000));
}
__device__ __forceinline__ double gbla_next_up(double x) {
    return nextafter(x, __longlong_as_double(0x7ff0000000000000LL));
}

template <class T>
__device__ __forceinline__ T gbla_weight(const T* __restrict__ w, long long e) {
    return w == nullptr ? (T)1 : w[e];
}

// One relaxation u -> v of weight we; true when it lowered dist[v].
template <class T, bool LDG>
__device__ __forceinline__ bool gbla_relax(int u, int v, T we, const T* read, T* dist) {
    const T du = gbla_read_dist<T, LDG>(read, u);
    const T candidate = du + we;  // +inf stays +inf: an unreached u lowers nothing
    return candidate < gbla_read_dist<T, LDG>(read, v) && gbla_atomic_min(dist + v, candidate);
}

// ------------------------------------------------------------------ 1. edge_bellman_ford
// The classic GPU Bellman-Ford: round `round` (1-based) over m edges src[e] -> dst[e] (and back
// when `both`: a symmetric graph stores each undirected edge once). `read` and `dist` are the
// same array, read through the read-only path (LDG) and written through another alias: a
// stale read is only larger, so it can waste an atomic, never miss an improvement. A thread
// that lowers a distance writes the round number into *modified (one word the host reads); a
// round that finds *modified below round - 1 (the round before lowered nothing) returns at
// once, so that the host may launch rounds ahead of its test.
// With `fell` (a byte a vertex: did its distance fall last round), an edge is relaxed from an
// endpoint only when that endpoint's distance fell last round (the others would offer what
// they offered before). With `falls`, a lowered vertex is marked there for the next round.
// With `counts`, counts[0] += the relaxations, counts[1] += the distances lowered (one add a
// block each). With `gate` (a slot of gbla_sssp_hybrid_gather), the round runs only when that
// slot asks for a streamed round.
template <class T, bool LDG>
__global__ void gbla_sssp_edge(long long m, const int* __restrict__ src,
                               const int* __restrict__ dst, const T* __restrict__ w, int both,
                               const T* read, T* dist, int round, int* modified,
                               const unsigned char* __restrict__ fell, unsigned char* falls,
                               u64* counts, const u64* gate, long long light) {
    if (gate != nullptr) {
        // the hybrid's gate: this round streams only when gbla_sssp_hybrid_gather found more
        // than `light` out-edges to relax from (else its light round runs, or nothing is left)
        if (gate[0] == 0 || gate[1] <= (u64)light) return;
    } else if (*modified < round - 1) {
        return;  // round - 1 lowered nothing: the search is done, this round was launched ahead
    }
    __shared__ unsigned long long s_relaxed, s_lowered;
    if (threadIdx.x == 0) s_relaxed = s_lowered = 0;
    __syncthreads();
    bool changed = false;
    unsigned long long mine = 0, lowered = 0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < m; e += stride) {
        const int u = src[e], v = dst[e];
        const bool from_u = fell == nullptr || fell[u];
        const bool from_v = both && (fell == nullptr || fell[v]);
        if (!from_u && !from_v) continue;
        const T we = gbla_weight(w, e);
        if (from_u && gbla_relax<T, LDG>(u, v, we, read, dist)) {
            changed = true;
            ++lowered;
            if (falls != nullptr) falls[v] = 1;
        }
        if (from_v && gbla_relax<T, LDG>(v, u, we, read, dist)) {
            changed = true;
            ++lowered;
            if (falls != nullptr) falls[u] = 1;
        }
        mine += (unsigned long long)from_u + (unsigned long long)from_v;
    }
    // every thread of the block reaches this point (no early return): one write a warp
    if (__ballot_sync(0xffffffffu, changed) && (threadIdx.x & 31) == 0) *modified = round;
    if (counts != nullptr) {
        if (mine) atomicAdd(&s_relaxed, mine);
        if (lowered) atomicAdd(&s_lowered, lowered);
        __syncthreads();
        if (threadIdx.x == 0 && s_relaxed) atomicAdd(counts, s_relaxed);
        if (threadIdx.x == 0 && s_lowered) atomicAdd(counts + 1, s_lowered);
    }
}

// edge_bellman_ford's hybrid, a round as three launches that the host never waits on:
// gbla_sssp_hybrid_gather lists the out-edges of the vertices marked since they last relaxed, in
// items of at most `chunk` edges (a hub is split over many), and sums them; then either
// gbla_sssp_hybrid_light pushes along those items (at most `light` edges) or the edge kernel,
// gated by the same slot, streams every edge. Either marks the vertices it lowers for the next
// round. A slot: u64[GBLA_HYBRID_SLOT] = (items listed, their edges); round r uses slot r & 1
// and its light launch zeroes the other for round r + 1.
#define GBLA_HYBRID_SLOT 2

// Clears the marks of the n vertices, listing each marked vertex u's out-edges as items
// (u << 32 | k: edges k * chunk .. of u's row) in items[slot[0]..] and adding them to slot[1];
// *modified = round when it lists one. Launch: any grid of whole warps.
__global__ void gbla_sssp_hybrid_gather(int n, unsigned char* marks, const int* __restrict__ indptr,
                                        long long chunk, u64* items, u64* slot, int round,
                                        int* modified) {
    const int lane = threadIdx.x & 31;
    const long long stride = (long long)gridDim.x * blockDim.x;
    // the warp's threads take the same trips (the bound is tested inside), so that its
    // shuffles see every lane
    for (long long base = (long long)blockIdx.x * blockDim.x; base < n; base += stride) {
        const long long u = base + threadIdx.x;
        const bool marked = u < n && marks[u];
        if (!__ballot_sync(0xffffffffu, marked)) continue;
        long long degree = 0;
        if (marked) {
            marks[u] = 0;
            degree = (long long)indptr[u + 1] - indptr[u];
        }
        const long long chunks = (degree + chunk - 1) / chunk;
        long long before = chunks, edges = degree;  // inclusive sums over the warp's lanes
        for (int d = 1; d < 32; d <<= 1) {
            const long long c = __shfl_up_sync(0xffffffffu, before, d);
            if (lane >= d) before += c;
            edges += __shfl_xor_sync(0xffffffffu, edges, d);
        }
        const long long all = __shfl_sync(0xffffffffu, before, 31);
        if (all == 0) continue;  // marked vertices without out-edges: nothing to relax
        u64 at = 0;
        if (lane == 31) {
            at = atomicAdd(slot, (u64)all);
            atomicAdd(slot + 1, (u64)edges);
            *modified = round;
        }
        at = __shfl_sync(0xffffffffu, at, 31) + (u64)(before - chunks);
        for (long long k = 0; k < chunks; ++k) items[at + k] = ((u64)u << 32) | (u64)k;
    }
}

// The light round: `group` threads (a power of two, at most 32) an item of `slot` (when its
// edges are at most `light`), relaxing along its edges; a vertex it lowers is marked.
// counts[0] += the edges. Zeroes `next`, the slot of the round after. Launch: any grid.
template <class T>
__global__ void gbla_sssp_hybrid_light(const u64* __restrict__ items, const u64* slot, u64* next,
                                       long long light, long long chunk, int group,
                                       const int* __restrict__ indptr,
                                       const int* __restrict__ indices, const T* __restrict__ w,
                                       T* dist, unsigned char* marks, u64* counts) {
    if (blockIdx.x == 0 && threadIdx.x < GBLA_HYBRID_SLOT) next[threadIdx.x] = 0;
    const u64 listed = slot[0], edges = slot[1];
    if (listed == 0 || edges > (u64)light) return;
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(counts, edges);
    const int lane = threadIdx.x & (group - 1);
    const long long groups = (long long)gridDim.x * blockDim.x / group;
    for (long long k = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / group;
         k < (long long)listed; k += groups) {
        const u64 item = items[k];
        const int u = (int)(item >> 32);
        const long long start = (long long)indptr[u] + (long long)(item & 0xffffffffu) * chunk;
        const long long end = min(start + chunk, (long long)indptr[u + 1]);
        const T du = __ldcg(dist + u);
        for (long long e = start + lane; e < end; e += group) {
            const int v = indices[e];
            const T candidate = du + gbla_weight(w, e);
            if (candidate < __ldcg(dist + v) && gbla_atomic_min(dist + v, candidate)) marks[v] = 1;
        }
    }
}

// ------------------------------------------------------------------ 2. frontier_bellman_ford
// Only the vertices whose distance fell last round push (CSR), binned by out-degree as the BFS
// kernels. Vertex u pushes along its out-edges, `lane` of `group` threads; a v it lowers is
// queued for the next round unless already queued in this one (stamp[v] == round).
template <class T>
__device__ __forceinline__ void gbla_sssp_push_group(int u, int lane, int group, int round,
                                                     int n, T* dist, int* stamp,
                                                     const int* __restrict__ indptr,
                                                     const int* __restrict__ indices,
                                                     const T* __restrict__ w, int* bins,
                                                     u64* slot) {
    const T du = dist[u];
    for (int e = indptr[u] + lane; e < indptr[u + 1]; e += group) {
        const int v = indices[e];
        const T candidate = du + gbla_weight(w, e);
        if (candidate < dist[v] && gbla_atomic_min(dist + v, candidate) &&
            atomicExch(stamp + v, round) != round)
            gbla_append_binned<int>(v, n, indptr, bins, slot);
    }
}

// One bin of the frontier (n_in vertices, `group` threads each: 1, 32 or the block). Builds the
// next frontier in bins, described in slot; clears the slot the round after next will write.
template <class T>
__global__ void gbla_sssp_frontier_expand(const int* __restrict__ q_in, int n_in, int group,
                                          int round, int n, T* dist, int* stamp,
                                          const int* __restrict__ indptr,
                                          const int* __restrict__ indices,
                                          const T* __restrict__ w, int* bins, u64* slot,
                                          u64* clear) {
    gbla_clear_slot(clear);
    gbla_for_each_in_bin(q_in, n_in, group, [&](int u, int lane) {
        gbla_sssp_push_group<T>(u, lane, group, round, n, dist, stamp, indptr, indices, w, bins,
                                slot);
    });
}

// ------------------------------------------------------------------ 3. persistent_bellman_ford
// Every round of frontier_bellman_ford in one launch. Counter slots rotate as the persistent
// BFS's: round r reads slot (r-1)%3, appends to r%3 and clears (r+1)%3; bins0 holds the frontier
// of odd rounds. Stops when a round's frontier is empty, or when round n + 1 would start with
// one (a negative cycle). result[0] = rounds run, result[1] = 1 when stopped by the bound,
// result[2] = edges relaxed (the frontiers' out-edges). Launch: cooperative, grid <= the
// co-resident block count; slots[0] and bins0 from gbla_sssp_init, the other slots zeroed.
template <class T>
__global__ void gbla_sssp_persistent(int n, T* dist, int* stamp, const int* __restrict__ indptr,
                                     const int* __restrict__ indices, const T* __restrict__ w,
                                     int* bins0, int* bins1, u64* slots, long long* result) {
    const gbla_grid grid;
    const long long tid = grid.thread_rank();
    int round = 1;
    bool bounded = false;
    long long edges = 0;
    for (;; ++round) {
        const u64* cur = slots + GBLA_SLOT * ((round - 1) % 3);
        u64* nxt = slots + GBLA_SLOT * (round % 3);
        u64* clr = slots + GBLA_SLOT * ((round + 1) % 3);
        const long long c0 = (long long)cur[0], c1 = (long long)cur[1], c2 = (long long)cur[2];
        if (c0 + c1 + c2 == 0) break;
        if (round > n) {
            bounded = true;
            break;
        }
        edges += (long long)cur[3];
        if (tid < GBLA_SLOT) clr[tid] = 0;
        const int* q = (round & 1) ? bins0 : bins1;
        int* out = (round & 1) ? bins1 : bins0;
        gbla_grid_for_each_binned(q, n, c0, c1, c2, [&](int u, int lane, int group) {
            gbla_sssp_push_group<T>(u, lane, group, round, n, dist, stamp, indptr, indices, w,
                                    out, nxt);
        });
        grid.sync();
    }
    if (tid == 0) {
        result[0] = round - 1;
        result[1] = bounded ? 1 : 0;
        result[2] = edges;
    }
}

// ------------------------------------------------------------------ 4. near_far
// Davidson et al.'s near-far pile (IPDPS 2014): a vertex lowered below the split distance joins
// the near frontier, one lowered to it or beyond is set aside once in the far pile (a flag per
// vertex); when the near frontier empties, the split moves past the pile's smallest distance
// (gbla_sssp_far_min) and the pile is split (gbla_sssp_far_split). Non-negative weights.
// As gbla_sssp_push_group, but a lowered v joins the near frontier only below `split`; at or
// beyond it, v goes to the far pile unless it is there already (far_flag[v]). The edges pushed
// are u's in (indptr, indices, w); the frontier is binned by the out-degrees of bin_indptr
// (delta-stepping pushes heavy edges into a frontier that relaxes light ones).
template <class T>
__device__ __forceinline__ void gbla_sssp_near_group(int u, int lane, int group, int round,
                                                     int n, T* dist, int* stamp, int* far_flag,
                                                     const int* __restrict__ indptr,
                                                     const int* __restrict__ indices,
                                                     const T* __restrict__ w, T split,
                                                     const int* __restrict__ bin_indptr,
                                                     int* bins, u64* slot, int* far,
                                                     u64* far_count) {
    const T du = dist[u];
    for (int e = indptr[u] + lane; e < indptr[u + 1]; e += group) {
        const int v = indices[e];
        const T candidate = du + gbla_weight(w, e);
        if (!(candidate < dist[v] && gbla_atomic_min(dist + v, candidate))) continue;
        if (candidate < split) {
            if (atomicExch(stamp + v, round) != round)
                gbla_append_binned<int>(v, n, bin_indptr, bins, slot);
        } else if (atomicExch(far_flag + v, 1) == 0) {
            far[atomicAdd(far_count, 1ULL)] = v;
        }
    }
}

template <class T>
__global__ void gbla_sssp_near_expand(const int* __restrict__ q_in, int n_in, int group,
                                      int round, int n, T* dist, int* stamp, int* far_flag,
                                      const int* __restrict__ indptr,
                                      const int* __restrict__ indices, const T* __restrict__ w,
                                      T split, int* bins, u64* slot, u64* clear, int* far,
                                      u64* far_count) {
    gbla_clear_slot(clear);
    gbla_for_each_in_bin(q_in, n_in, group, [&](int u, int lane) {
        gbla_sssp_near_group<T>(u, lane, group, round, n, dist, stamp, far_flag, indptr,
                                indices, w, split, indptr, bins, slot, far, far_count);
    });
}

// The smallest distance at or beyond `lo` among the far pile's `count` entries, into *out
// (+inf before the launch; entries below lo are stale and skipped).
template <class T>
__global__ void gbla_sssp_far_min(const int* __restrict__ far, long long count,
                                  const T* __restrict__ dist, T lo, T* out) {
    T best;
    gbla_set_inf(&best);
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
        const T d = dist[far[i]];
        if (d >= lo && d < best) best = d;
    }
    for (int off = 16; off > 0; off >>= 1) {
        const T other = __shfl_down_sync(0xffffffffu, best, off);
        if (other < best) best = other;
    }
    if ((threadIdx.x & 31) == 0) gbla_atomic_min(out, best);  // +inf lowers nothing
}

// Splits the far pile at [lo, hi): entries below lo are stale and dropped, those below hi join
// the near frontier (bins, described in slot), the rest go to far_out (counted in *out_count).
// A vertex leaving the pile has its flag cleared.
template <class T>
__global__ void gbla_sssp_far_split(const int* __restrict__ far, long long count,
                                    const T* __restrict__ dist, T lo, T hi, int* far_flag,
                                    int n, const int* __restrict__ indptr, int* bins, u64* slot,
                                    int* far_out, u64* out_count) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count;
         i += stride) {
        const int v = far[i];
        const T d = dist[v];
        if (d >= hi) {
            far_out[atomicAdd(out_count, 1ULL)] = v;
            continue;
        }
        far_flag[v] = 0;
        if (d >= lo) gbla_append_binned<int>(v, n, indptr, bins, slot);
    }
}

// ------------------------------------------------------------------ 5. delta_stepping_kernel
// Meyer and Sanders' delta-stepping in one cooperative launch: buckets [lo, hi) of width delta
// at least, the edges split once into a light (w <= delta) and a heavy CSR. A bucket
// runs light rounds (each vertex of the frontier joins the settled list R once a pass and
// pushes its light edges: a v lowered below hi joins the next frontier, one lowered to hi or
// beyond the pending pile), then a heavy pass pushes R's heavy edges the same way; light rounds
// and heavy passes repeat until both are empty (a heavy edge lands beyond hi but for rounding).
// The next bucket starts at the pile's smallest distance m (a grid-wide minimum): hi moves to
// the end of m's bucket, at least delta further and always past m, and the pile splits into
// the frontier (below the new hi), the other pile (beyond) and stale entries (below the old hi,
// settled already), dropped. No host round trip in the whole run.
// Every step that builds a frontier is a "round" r: it appends to slot r%3 and clears
// (r+1)%3; bins0 holds the frontier of odd rounds. R is double-buffered the same way over
// passes (pass p appends to rbins[p&1], rslots slot p&1; the pass clears the other slot), as
// are the piles (pile_counts[0..1]) and the minima (smallest[0..1], +inf at launch).
// result[0] = light rounds, result[1] = heavy passes, result[2] = buckets, result[3] = edges
// relaxed (light rounds' light out-edges, heavy passes' heavy ones).
// Launch: cooperative, grid <= the co-resident block count; slots[0] and bins0 from
// gbla_sssp_init (with the light CSR), every other slot and count zeroed; stamps and flags 0.
template <class T>
__global__ void gbla_sssp_delta(int n, T delta, T* dist, int* stamp, int* rstamp, int* far_flag,
                                const int* __restrict__ lindptr, const int* __restrict__ lindices,
                                const T* __restrict__ lw, const int* __restrict__ hindptr,
                                const int* __restrict__ hindices, const T* __restrict__ hw,
                                int heavy, int* bins0, int* bins1, u64* slots, int* rbins0,
                                int* rbins1, u64* rslots, int* pile0, int* pile1,
                                u64* pile_counts, T* smallest, long long* result) {
    const gbla_grid grid;
    const long long tid = grid.thread_rank(), threads = grid.size();
    T inf;
    gbla_set_inf(&inf);
    T hi = delta;  // the first bucket [0, delta)
    int round = 1, pass = 1, pile = 0;
    long long light_rounds = 0, passes = 0, buckets = 1, edges = 0;
    for (;; ++buckets) {
        int* far = pile ? pile1 : pile0;
        u64* far_count = pile_counts + pile;
        for (;;) {  // the light rounds and heavy passes of this bucket
            int* r_bins = (pass & 1) ? rbins1 : rbins0;
            u64* r_slot = rslots + GBLA_SLOT * (pass & 1);
            for (;; ++round, ++light_rounds) {  // light rounds
                const u64* cur = slots + GBLA_SLOT * ((round - 1) % 3);
                u64* nxt = slots + GBLA_SLOT * (round % 3);
                u64* clr = slots + GBLA_SLOT * ((round + 1) % 3);
                const long long c0 = (long long)cur[0], c1 = (long long)cur[1],
                                c2 = (long long)cur[2];
                if (c0 + c1 + c2 == 0) break;
                edges += (long long)cur[3];
                if (tid < GBLA_SLOT) clr[tid] = 0;
                const int* q = (round & 1) ? bins0 : bins1;
                int* out = (round & 1) ? bins1 : bins0;
                gbla_grid_for_each_binned(q, n, c0, c1, c2, [&](int u, int lane, int group) {
                    if (heavy && lane == 0 && atomicExch(rstamp + u, pass) != pass)
                        gbla_append_binned<int>(u, n, hindptr, r_bins, r_slot);
                    gbla_sssp_near_group<T>(u, lane, group, round, n, dist, stamp, far_flag,
                                            lindptr, lindices, lw, hi, lindptr, out, nxt, far,
                                            far_count);
                });
                grid.sync();
            }
            if (!heavy) break;
            const long long r0 = (long long)r_slot[0], r1 = (long long)r_slot[1],
                            r2 = (long long)r_slot[2];
            if (r0 + r1 + r2 == 0) break;
            edges += (long long)r_slot[3];
            // the heavy pass: a round that reads R instead of a frontier
            u64* nxt = slots + GBLA_SLOT * (round % 3);
            if (tid < GBLA_SLOT) {
                slots[GBLA_SLOT * ((round + 1) % 3) + tid] = 0;
                rslots[GBLA_SLOT * ((pass + 1) & 1) + tid] = 0;  // the next pass's R
            }
            int* out = (round & 1) ? bins1 : bins0;
            gbla_grid_for_each_binned(r_bins, n, r0, r1, r2, [&](int u, int lane, int group) {
                gbla_sssp_near_group<T>(u, lane, group, round, n, dist, stamp, far_flag, hindptr,
                                        hindices, hw, hi, lindptr, out, nxt, far, far_count);
            });
            grid.sync();
            ++round;
            ++pass;
            ++passes;
        }
        // the next bucket: the smallest pending distance at or beyond hi
        const long long count = (long long)pile_counts[pile];
        T* m_out = smallest + (buckets & 1);
        if (tid == 0) {
            pile_counts[1 - pile] = 0;
            smallest[1 - (buckets & 1)] = inf;  // the next bucket's, read a bucket ago
        }
        T best = inf;
        for (long long i = tid; i < count; i += threads) {
            const T d = dist[far[i]];
            if (d >= hi && d < best) best = d;
        }
        for (int off = 16; off > 0; off >>= 1) {
            const T other = __shfl_down_sync(0xffffffffu, best, off);
            if (other < best) best = other;
        }
        if ((threadIdx.x & 31) == 0 && best < inf) gbla_atomic_min(m_out, best);
        grid.sync();
        const T m = *m_out;
        if (!(m < inf)) break;
        T next = (gbla_floor(m / delta) + (T)1) * delta;
        if (next < hi + delta) next = hi + delta;
        if (!(next > m)) next = gbla_next_up(m);
        // the split: a round that builds the frontier from the pile
        u64* nxt = slots + GBLA_SLOT * (round % 3);
        if (tid < GBLA_SLOT) slots[GBLA_SLOT * ((round + 1) % 3) + tid] = 0;
        int* out = (round & 1) ? bins1 : bins0;
        int* far_out = pile ? pile0 : pile1;
        for (long long i = tid; i < count; i += threads) {
            const int v = far[i];
            const T d = dist[v];
            if (d >= next) {
                far_out[atomicAdd(pile_counts + 1 - pile, 1ULL)] = v;
                continue;
            }
            far_flag[v] = 0;
            if (d >= hi) {
                stamp[v] = round;
                gbla_append_binned<int>(v, n, lindptr, out, nxt);
            }
        }
        grid.sync();
        ++round;
        hi = next;
        pile = 1 - pile;
    }
    if (tid == 0) {
        result[0] = light_rounds;
        result[1] = passes;
        result[2] = buckets;
        result[3] = edges;
    }
}

// ------------------------------------------------------------------ 6. single_block_bellman_ford
// frontier_bellman_ford's rounds inside one block of one launch: __syncthreads() separates
// rounds, so a round costs no launch, no grid barrier and no host round trip. The distances
// (copied out to dist at the end) and the stamps (the round a vertex was last queued in, so at
// most once a round; 0 never) live in shared memory; so do the two frontier queues (n vertices
// each) where `queues_shared`, else they are global_queues (2 n ints). (The row offsets in
// shared memory too were tried: no difference on OL, TG, rome99 or jagmesh7.)
// A round gives each frontier vertex g = 2^lg lanes (g at or above the graph's largest
// out-degree, at most 32: a warp then strides along a longer row), a lane an edge, and a
// lowered vertex is appended with one shared atomic a warp. Tried and left out: fewer lanes a
// vertex where a frontier would take several passes (no gain on the road networks, 2x slower
// on email-Eu-core, whose hub rows a warp then strides in many more steps); a thread a vertex
// for out-degrees at most 8, its edges' loads issued together (OL 15% faster, TG and rome99
// 10-20% slower: a thread's relaxations are a chain of shared-memory atomics).
// Stops when a round's frontier is empty, or when round n + 1 would start with one (a negative
// cycle): result[0] = rounds run, result[1] = 1 when stopped by the bound, result[2] = edges
// relaxed (the frontiers' out-edges). Launch: grid 1,
// block GBLA_SB_SSSP_THREADS, dynamic shared memory n (sizeof(T) + 4) bytes, 8 n more when
// queues_shared.
#define GBLA_SB_SSSP_THREADS 1024
template <class T>
__global__ void __launch_bounds__(GBLA_SB_SSSP_THREADS)
gbla_sssp_single_block(int n, int source, int lg, int queues_shared, T* dist, int* global_queues,
                       const int* __restrict__ indptr, const int* __restrict__ indices,
                       const T* __restrict__ w, long long* result) {
    extern __shared__ __align__(16) unsigned char gbla_sssp_sb_shared[];
    T* d = (T*)gbla_sssp_sb_shared;
    int* stamp = (int*)(d + n);
    const int t = threadIdx.x, lane = t & 31, g = 1 << lg;
    // the queue of odd rounds' frontiers, then of even rounds'
    int* queues = queues_shared ? stamp + n : global_queues;
    __shared__ int s_count[3];  // rotating: the round's frontier, the next, the one cleared
    __shared__ unsigned long long s_edges;
    for (int i = t; i < n; i += blockDim.x) {
        if (i == source) d[i] = (T)0; else gbla_set_inf(d + i);
        stamp[i] = 0;
    }
    if (t < 3) s_count[t] = t == 0;
    if (t == 0) {
        queues[0] = source;
        s_edges = 0;
    }
    __syncthreads();
    int round = 1, r = 0, count = 1;
    bool bounded = false;
    for (;; ++round) {
        if (count == 0) break;
        if (round > n) { bounded = true; break; }
        const int built = r == 2 ? 0 : r + 1, cleared = built == 2 ? 0 : built + 1;
        const int* cur = queues + ((round - 1) & 1) * n;
        int* nxt = queues + (round & 1) * n;
        for (int k0 = t - lane; k0 < count << lg; k0 += blockDim.x) {
            const int k = k0 + lane, i = k >> lg, j = k & (g - 1);
            int first = 0, deg = 0;
            T du = (T)0;
            if (i < count) {
                const int u = cur[i];
                first = indptr[u];
                deg = indptr[u + 1] - first;
                du = d[u];
                if (j == 0) atomicAdd(&s_edges, (unsigned long long)deg);
            }
            const int mine = j < deg ? (deg - j + g - 1) >> lg : 0;  // this lane's edges
            const int steps = __reduce_max_sync(0xffffffffu, mine);
            for (int step = 0; step < steps; ++step) {
                bool queued = false;
                int v = 0;
                if (step < mine) {
                    const int e = first + j + (step << lg);
                    v = indices[e];
                    const T candidate = du + gbla_weight(w, e);
                    queued = candidate < d[v] && gbla_atomic_min(d + v, candidate) &&
                             atomicExch(stamp + v, round) != round;
                }
                const int pos = gbla_warp_reserve_one(queued, &s_count[built]);
                if (queued) nxt[pos] = v;
            }
        }
        if (t == 0) s_count[cleared] = 0;
        __syncthreads();
        count = s_count[built];
        r = built;
    }
    for (int i = t; i < n; i += blockDim.x) dist[i] = d[i];
    if (t == 0) {
        result[0] = round - 1;
        result[1] = bounded ? 1 : 0;
        result[2] = (long long)s_edges;
    }
}

// ------------------------------------------------------------------ 7. async_delta_stepping
// Asynchronous delta-stepping after ADDS (Wang, Fussell, Lin, PPoPP 2021): resident blocks take
// vertices from a bucketed worklist and relax their out-edges, with no grid barrier anywhere.
// The worklist is a window of nb buckets of `width` from base_dist (a distance past it joins
// the top bucket, one below it the lowest), each a ring of 2^cap_log2 slots with a head (ids
// taken) and a tail (places reserved), queues[QSTRIDE b] and the word after. A slot is tagged
// with the place it serves: (p << 32 | 0xffffffff) free for place p, (p << 32 | v) holding v,
// so neither a producer nor a consumer of place p can mistake a slot of another lap for its
// own. Warp 0 of a block takes up to max_take ids from the lowest non-empty bucket (moving the
// window up to it); the block's warps each claim a share of them, expand their out-edges
// together (a lane an edge) and queue every vertex they lower in the bucket of its new
// distance, the window read afresh for the pushes; then the block fetches again. One fetcher a
// block keeps the contention on the buckets' heads low (a fetcher a warp was 2-4x slower).
// Up to local_cap of the vertices a block lowers into the window's lowest keep_below buckets
// (1: the base bucket) it keeps in a shared buffer and expands next, before it fetches: on a
// road network the front is a few hundred vertices, and each hop through a ring (reserve,
// write, another block's poll and take) costs more than the relaxation it carries. *held
// counts the ids blocks keep so (updated as each expansion ends); with `hold`, the window does
// not move past the base bucket while it is above 0 (fetchers wait), so that no block runs
// the next buckets ahead of the kept ids' distances.
// queued[v] (INT_MAX when v is in no bucket) holds the key floor(d / key_width) v was last
// queued with: a lowering is queued only when its key is below; a consumer claims v by swapping
// queued[v] to INT_MAX before it reads dist[v]. So while queued[v] != INT_MAX an id of v is in a
// ring or a block's buffer, and whoever claims it reads every lowering made before: any order
// of relaxations is correct (Bellman-Ford), the buckets only order the work. *pending counts
// ids queued or being expanded (raised before an id is written, lowered after its expansion):
// 0 ends the run.
// With `dynamic`, the warp that moves the window doubles the width when more than half the
// queued ids sit in the top bucket (the window is too short) and halves it when none lies past
// the lowest quarter (too coarse to order the work), within [min_width, max_width].
// A ring that would overflow sets flags[0] and every warp stops (the driver reruns with larger
// rings). counters += (edges relaxed, ids pushed, vertices expanded, stale ids, window moves,
// ids kept by their block).
// Launch: blocks of GBLA_ASYNC_THREADS, max_take at most that, any grid (fetchers that find no
// work back off, and every block ends when *pending is 0); rings from gbla_sssp_async_rings,
// queued all INT_MAX, then gbla_sssp_async_init. A clean run leaves rings, queues and queued
// ready for the next. pending, window, flags and held each on a 128-byte line of its own.
#define GBLA_ASYNC_NONE 0x7fffffff
#define GBLA_ASYNC_FREE 0xffffffffull
#define GBLA_ASYNC_THREADS 256
#define GBLA_ASYNC_QSTRIDE 16  // u64 words between two buckets' heads: a 128-byte line each

template <class T>
__device__ __forceinline__ int gbla_async_key(T d, T key_width) {
    const T q = d / key_width;  // +inf for a width below the distances' spacing
    return q < (T)(GBLA_ASYNC_NONE - 1) ? (int)q : GBLA_ASYNC_NONE - 1;
}

__device__ __forceinline__ u64 gbla_async_tag(u64 place) { return (place & 0xffffffffull) << 32; }

// Orders this thread's accesses before it against those after it, for the other threads of
// the GPU: what the claim / lowering / counting protocol needs (message passing, never a
// store-buffering pattern), and lighter than __threadfence's sequentially consistent fence.
__device__ __forceinline__ void gbla_async_fence() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

// atomicMin on a distance that is never negative (+inf included): its bits order as integers
// do, so one atomic, no compare-and-swap loop. True when this call lowered it.
__device__ __forceinline__ bool gbla_async_lower(float* addr, float value) {
    const int bits = __float_as_int(value);
    return atomicMin((int*)addr, bits) > bits;
}

__device__ __forceinline__ bool gbla_async_lower(double* addr, double value) {
    const long long bits = __double_as_longlong(value);
    return atomicMin((long long*)addr, bits) > bits;
}

// The window (base bucket, base_dist, width) read whole by lane 0 and given to the warp; false
// while a move holds it (base -1). All 32 lanes call it.
template <class T>
__device__ __forceinline__ bool gbla_async_window(const int* window, const T* window_f,
                                                  int* base, T* base_dist, T* width) {
    int b = 0;
    T lo = (T)0, wd = (T)1;
    if ((threadIdx.x & 31) == 0) {
        b = *(volatile const int*)window;
        lo = *(volatile const T*)window_f;
        wd = *(volatile const T*)(window_f + 1);
        if (*(volatile const int*)window != b) b = -1;
    }
    *base = __shfl_sync(0xffffffffu, b, 0);
    *base_dist = __shfl_sync(0xffffffffu, lo, 0);
    *width = __shfl_sync(0xffffffffu, wd, 0);
    return *base >= 0;
}

__device__ __forceinline__ void gbla_async_backoff(int* ns) {
    *ns = *ns ? min(*ns * 2, 2048) : 64;
    __nanosleep(*ns);
}

// Warp 0 of the block fetches: up to `max_take` ids (at most the block's threads) from the
// lowest non-empty bucket, read into s_ids; false when the run is over (nothing pending, or a
// ring overflowed). All 32 lanes of warp 0 call it.
template <class T>
__device__ __forceinline__ bool gbla_async_fetch(int nb, int cap_log2, int max_take,
                                                 int dynamic, int hold, T min_width,
                                                 T max_width, u64* rings, u64* queues,
                                                 long long* pending, const long long* held, int* window, T* window_f,
                                                 int* flags, int* s_ids, int* got_out,
                                                 u64* moves, int* idle, int* lost) {
    const unsigned FULL = 0xffffffffu;
    const int lane = threadIdx.x & 31;
    const u64 cap = 1ull << cap_log2, mask = cap - 1;
    volatile int* vflags = flags;
    for (;;) {
        if (vflags[0]) return false;
        int base;
        T base_dist, width;
        if (!gbla_async_window(window, window_f, &base, &base_dist, &width)) continue;
        // lane k looks at the k-th bucket from the window's base
        u64 h = 0, t = 0;
        const int phys = (base + lane) % nb;
        if (lane < nb) {
            h = *(volatile u64*)(queues + GBLA_ASYNC_QSTRIDE * phys);
            t = *(volatile u64*)(queues + GBLA_ASYNC_QSTRIDE * phys + 1);
        }
        const unsigned nonempty = __ballot_sync(FULL, lane < nb && t > h);
        if (!nonempty) {
            if (*(volatile long long*)pending == 0) return false;
            gbla_async_backoff(idle);
            continue;
        }
        *idle = 0;
        const int k = __ffs(nonempty) - 1;
        if (hold && k > 0 && *(volatile const long long*)held > 0) {
            // the base bucket's rings are empty but blocks hold some of its ids: the window
            // waits for them (moving past them would run the next buckets ahead of their
            // distances, and every vertex they settle early would be relaxed again)
            gbla_async_backoff(idle);
            continue;
        }
        if (k > 0) {  // the buckets below k are empty: the window starts at k
            T next_width = width;
            if (dynamic) {
                const u64 here = lane < nb ? t - h : 0;
                u64 total = here;
                for (int off = 16; off > 0; off >>= 1) total += __shfl_xor_sync(FULL, total, off);
                const u64 top = __shfl_sync(FULL, here, nb - 1);
                const int highest = 31 - __clz(nonempty) - k;  // relative to the new base
                if (2 * top > total && width * 2 <= max_width) next_width = width * 2;
                else if (4 * highest < nb && width / 2 >= min_width) next_width = width / 2;
            }
            if (lane == 0 && atomicCAS(window, base, -1) == base) {
                *(volatile T*)window_f = base_dist + (T)k * width;
                *(volatile T*)(window_f + 1) = next_width;
                __threadfence();
                atomicExch(window, base + k);
                ++*moves;
            }
        }
        // take up to max_take ids from bucket k
        const int b = __shfl_sync(FULL, phys, k);
        const u64 hk = __shfl_sync(FULL, h, k), tk = __shfl_sync(FULL, t, k);
        int got = 0;
        if (lane == 0) {
            const int take = (int)min((u64)max_take, tk - hk);
            if (atomicCAS(queues + GBLA_ASYNC_QSTRIDE * b, hk, hk + take) == hk) got = take;
        }
        got = __shfl_sync(FULL, got, 0);
        if (!got) {  // another block took them: step aside a moment, then look again
            gbla_async_backoff(lost);
            continue;
        }
        *lost = 0;
        for (int i = lane; i < got; i += 32) {
            const u64 place = hk + i;
            volatile u64* slot = rings + ((u64)b << cap_log2) + (place & mask);
            u64 x;
            // its producer has reserved the place and is writing it
            while (((x = *slot) & ~GBLA_ASYNC_FREE) != gbla_async_tag(place) ||
                   (x & GBLA_ASYNC_FREE) == GBLA_ASYNC_FREE) {
                if (vflags[0]) break;
            }
            *slot = gbla_async_tag(place + cap) | GBLA_ASYNC_FREE;  // free for the next lap
            s_ids[i] = (x & ~GBLA_ASYNC_FREE) == gbla_async_tag(place)
                ? (int)(x & GBLA_ASYNC_FREE) : -1;
        }
        *got_out = got;
        return true;
    }
}

template <class T>
__global__ void __launch_bounds__(GBLA_ASYNC_THREADS)
gbla_sssp_async(int n, int nb, int cap_log2, int max_take, int local_cap, int keep_below,
                int hold, int precheck, T key_width, int dynamic, T min_width, T max_width, T* dist, int* queued,
                const int* __restrict__ indptr,
                const int* __restrict__ indices, const T* __restrict__ w, u64* rings,
                u64* queues, long long* pending, long long* held, int* window, T* window_f,
                int* flags, u64* counters) {
    const unsigned FULL = 0xffffffffu;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const u64 cap = 1ull << cap_log2, mask = cap - 1;
    volatile int* vflags = flags;
    // two id buffers: the block expands one (s_ids[cur]) while it queues into the other the
    // vertices it lowers into the window's base bucket, s_count[cur ^ 1] of them
    __shared__ int s_ids[2][GBLA_ASYNC_THREADS];
    __shared__ int s_count[2];
    __shared__ int s_got, s_go, s_own;
    u64 relaxed = 0, pushed = 0, expanded = 0, stale = 0, moves = 0, kept = 0;
    int idle = 0, lost = 0;  // warp 0's backoff (ns): no bucket has ids, another block took them
    int cur = 0;
    if (threadIdx.x == 0) s_count[0] = s_count[1] = 0;
    __syncthreads();
    for (;;) {
        const int own = s_count[cur ^ 1];  // read by every thread before any write below
        if (own > 0) {
            // what this block queued for itself: the lowest bucket's work, taken without the
            // rings' round trip (claimed as any id is)
            cur ^= 1;
            if (threadIdx.x == 0) {
                s_count[cur ^ 1] = 0;
                s_got = min(own, local_cap);
                s_go = !vflags[0];
                s_own = 1;
            }
        } else if (warp == 0) {
            int got = 0;
            const bool go = gbla_async_fetch(nb, cap_log2, max_take, dynamic, hold, min_width,
                                             max_width, rings, queues, pending, held, window,
                                             window_f, flags, s_ids[cur], &got, &moves, &idle,
                                             &lost);
            if (lane == 0) {
                s_got = got;
                s_go = go;
                s_own = 0;
            }
        }
        __syncthreads();
        if (!s_go) break;
        const int got = s_got;
        // warp w expands ids w, w + warps, ...: a lane an id
        const int idx = warp + warps * lane;
        const int u = idx < got ? s_ids[cur][idx] : -1;
        const int mine = got > warp ? (got - warp + warps - 1) / warps : 0;
        // claim: the id is stale when v was claimed since it was queued
        const bool active = u >= 0 && atomicExch(queued + u, GBLA_ASYNC_NONE) != GBLA_ASYNC_NONE;
        gbla_async_fence();  // the claim before the read of dist[u]
        int first = 0, deg = 0;
        T du = (T)0;
        if (active) {
            du = __ldcg(dist + u);
            first = indptr[u];
            deg = indptr[u + 1] - first;
        }
        const unsigned act = __ballot_sync(FULL, active);
        const int incl = gbla_warp_inclusive_scan(deg), excl = incl - deg;
        const int total = __shfl_sync(FULL, incl, 31);
        if (lane == 0) {
            relaxed += total;
            expanded += __popc(act);
            stale += mine - __popc(act);
        }
        bool placed = false;  // the window read for this expansion's pushes
        int now = 0;
        T lo = (T)0, wd = (T)1;
        for (int e0 = 0; e0 < total; e0 += 32) {
            const int i = e0 + lane;
            // the owner of edge i: the last lane whose first edge is at or before i
            int o = 0;
            for (int step = 16; step > 0; step >>= 1) {
                const int ex = __shfl_sync(FULL, excl, o + step);
                if (ex <= i) o += step;
            }
            const int ofirst = __shfl_sync(FULL, first, o), oexcl = __shfl_sync(FULL, excl, o);
            const T odu = __shfl_sync(FULL, du, o);
            bool push = false;
            int v = 0;
            T cand = (T)0;
            if (i < total) {
                const int e = ofirst + i - oexcl;
                v = indices[e];
                cand = odu + gbla_weight(w, e);
                if ((!precheck || cand < __ldcg(dist + v)) && gbla_async_lower(dist + v, cand)) {
                    gbla_async_fence();  // the lowering before the key
                    const int key = gbla_async_key(cand, key_width);
                    push = key < atomicMin(queued + v, key);
                }
            }
            const unsigned pm = __ballot_sync(FULL, push);
            if (!pm) continue;
            if (lane == 0) pushed += __popc(pm);
            // the bucket of each new distance in the window as it is now (not as it was when
            // the ids were fetched: it moves meanwhile)
            while (!placed) placed = gbla_async_window(window, window_f, &now, &lo, &wd);
            int rel = 0;
            if (push) {
                const T x = (cand - lo) / wd;
                rel = x >= (T)(nb - 1) ? nb - 1 : (x >= (T)1 ? (int)x : 0);
            }
            // a vertex for the window's lowest keep_below buckets stays with this block while
            // there is room (at most local_cap): the next hop of a road network's short front
            // then costs no ring round trip; the rest, and the other buckets', go to the rings
            const unsigned lm = __ballot_sync(FULL, push && rel < keep_below && local_cap > 0);
            if (lm) {
                int at = 0;
                if (lane == 0) at = atomicAdd(&s_count[cur ^ 1], __popc(lm));
                at = __shfl_sync(FULL, at, 0) + __popc(lm & ((1u << lane) - 1u));
                if ((lm >> lane) & 1u && at < local_cap) {
                    s_ids[cur ^ 1][at] = v;
                    push = false;
                    ++kept;
                }
            }
            const unsigned gm = __ballot_sync(FULL, push);
            if (!gm) continue;
            if (lane == 0) {
                atomicAdd((unsigned long long*)pending, (u64)__popc(gm));
                gbla_async_fence();  // counted before any of them can be taken
            }
            const int target = push ? (now + rel) % nb : -1;
            const unsigned peers = __match_any_sync(FULL, target) & gm;
            const int leader = peers ? __ffs(peers) - 1 : 0;
            u64 place = 0;
            if (push && lane == leader)
                place = atomicAdd(queues + GBLA_ASYNC_QSTRIDE * target + 1, (u64)__popc(peers));
            place = __shfl_sync(FULL, place, leader) + __popc(peers & ((1u << lane) - 1u));
            if (push) {
                volatile u64* slot = rings + ((u64)target << cap_log2) + (place & mask);
                const u64 free = gbla_async_tag(place) | GBLA_ASYNC_FREE;
                // the id of place - cap leaves once a consumer has taken it (head past it)
                while (*slot != free) {
                    if (place >= *(volatile u64*)(queues + GBLA_ASYNC_QSTRIDE * target) + cap) {
                        atomicExch(flags, 1);  // the ring is full
                        break;
                    }
                    if (vflags[0]) break;
                }
                *slot = gbla_async_tag(place) | (u64)(unsigned)v;
            }
        }
        __syncthreads();  // every warp's pushes counted (each fenced), and s_ids read
        if (threadIdx.x == 0) {
            // the ids expanded leave, those kept come in (counted only now: until this add,
            // the expanded ones kept pending above 0, and no other block can take them)
            const int keeps = min(s_count[cur ^ 1], local_cap);
            if (keeps != got) atomicAdd((unsigned long long*)pending, (u64)(long long)(keeps - got));
            const int holds = keeps - (s_own ? got : 0);
            if (hold && holds) atomicAdd((unsigned long long*)held, (u64)(long long)holds);
        }
    }
    if (lane == 0) {
        atomicAdd(counters + 0, relaxed);
        atomicAdd(counters + 1, pushed);
        atomicAdd(counters + 2, expanded);
        atomicAdd(counters + 3, stale);
        atomicAdd(counters + 4, moves);
    }
    if (kept) atomicAdd(counters + 5, kept);  // per lane: each lane keeps its own
}

// Every slot of the nb rings free for its place of the first lap (grid-stride).
__global__ void gbla_sssp_async_rings(u64* rings, long long slots, int cap_log2) {
    const u64 mask = (1ull << cap_log2) - 1;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < slots; i += stride)
        rings[i] = gbla_async_tag((u64)i & mask) | GBLA_ASYNC_FREE;
}

// The source at distance 0, queued in bucket 0 at its tail; the window at 0 with `width`,
// nothing else pending, the flag and the six counters cleared. One thread.
template <class T>
__global__ void gbla_sssp_async_init(int source, T width, int cap_log2, T* dist, int* queued,
                                     u64* rings, u64* queues, long long* pending,
                                     long long* held, int* window, T* window_f, int* flags,
                                     u64* counters) {
    const u64 place = queues[1];
    dist[source] = (T)0;
    queued[source] = 0;
    rings[place & ((1ull << cap_log2) - 1)] = gbla_async_tag(place) | (u64)(unsigned)source;
    queues[1] = place + 1;
    *pending = 1;
    *held = 0;
    *window = 0;
    window_f[0] = (T)0;
    window_f[1] = width;
    *flags = 0;
    for (int i = 0; i < 6; ++i) counters[i] = 0;
}

// The source at distance 0 in the small bin, described in slot (one vertex, its out-edges).
// One thread.
template <class T>
__global__ void gbla_sssp_init(int source, T* dist, int* bins, const int* indptr, u64* slot) {
    dist[source] = (T)0;
    bins[0] = source;
    for (int j = 0; j < GBLA_SLOT; ++j) slot[j] = 0;
    slot[0] = 1;
    slot[3] = indptr[source + 1] - indptr[source];
}
