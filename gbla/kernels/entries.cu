// Entry lists of the dense vectors of a loop recorded on the device (gbla/runtime): `ids`, a
// vector's positions in no order, and `count` (a u64 on the device, GBLA_UNKNOWN where no list is
// kept), so that a traversal's level costs its frontier, not n. Products (spmv.cu) and the ops
// here make and read them: z<m> = f(a, b) at shared entries (apply, ewise_mult: _map), z = a
// where f(a, thunk) (_select), z<m> = a (+) b (ewise_add: _union), out<m> = t as a new value
// (_merge) or in place (gbla_assign_entries), a value at each set bit of a word of bits
// (gbla_assign_bits), a monoid's reduction (_reduce), a state's store.
// A thread per entry of the shortest list holding every entry the result can have, grid-stride;
// where no such count is known, one pass over all n positions, which makes a list anyway.
// Contract: the loop's test (loop.cu, lists.cuh's gbla_clear_sites) empties the op sites'
// outputs after each iteration's store, before any op of the next iteration writes them again.
// F (_codegen.map_struct, from an op's CUDA expression): A, B operands' storage, T computation,
// Z result, USES_A/USES_B, f(a, b, i), a monoid's identity(). T, O: values; I: ids; W: a word
// of bits.

#include "lists.cuh"

// Of two lists that each hold every entry a result can have, the one to walk: the shorter known
// one (both unknown: the pass over n).
__device__ __forceinline__ gbla_list gbla_shorter(gbla_list a, gbla_list b)
{
    if (!a.known()) return b;
    if (!b.known()) return a;
    return b.count < a.count ? b : a;
}

__device__ __forceinline__ bool gbla_has(const bool* __restrict__ present, long long i)
{
    return present == nullptr || present[i];  // null: every position present
}

// Whether mask m allows position i: mp its vector's presence (null: all), mv its values for a
// value mask, read as C's cast to bool reads them (nonzero, NaN included), m_type saying their
// dtype (0: a structural mask, whose values are not read; else _entries.MASK_TYPES').
// No mask at all: mp null, m_type 0, not complemented.
__device__ __forceinline__ bool gbla_mask_allows(const bool* __restrict__ mp, const void* mv,
                                                 int m_type, int complement, long long i)
{
    bool on = gbla_has(mp, i);
    if (on) {
        switch (m_type) {
        case 1: on = ((const bool*)mv)[i]; break;
        case 2: on = (bool)((const int*)mv)[i]; break;
        case 3: on = (bool)((const long long*)mv)[i]; break;
        case 4: on = (bool)((const float*)mv)[i]; break;
        case 5: on = (bool)((const double*)mv)[i]; break;
        default: break;
        }
    }
    return on != (complement != 0);
}

// Entry i of an op's output: its value, its presence, and i in its list (ids of int or, where
// wide, long long; a uniform branch, so the coalesced group of the append is unchanged).
template <class Z>
__device__ __forceinline__ void gbla_emit(Z* __restrict__ zv, bool* __restrict__ zp, void* z_ids,
                                          int z_wide, u64* z_count, long long i, Z z)
{
    zv[i] = z;
    zp[i] = true;
    if (z_wide) gbla_list_append((long long*)z_ids, z_count, i);
    else gbla_list_append((int*)z_ids, z_count, i);
}

// min (fold 1) or max (fold 2) of two values as gbla's min and max monoids take them (a NaN
// ignored: semirings/_builtin.py's _MIN_CUDA and _MAX_CUDA).
template <class T>
__device__ __forceinline__ T gbla_min_max(int fold, T x, T y)
{
    if (x != x) return y;
    if (y != y) return x;
    return fold == 1 ? (y < x ? y : x) : (y > x ? y : x);
}

// op over the block's values (blockDim.x a multiple of 32, at most 1024), in a fixed order:
// each warp's by shuffles, then the warps' by warp 0 (two barriers, where a tree through
// shared memory took one a halving: a reduction's launch was the slowest of delta-stepping's
// window, benchmarks/results/ab/algebra_round_kernels_h200.log); `identity` where a warp has
// none. The result in every thread; every thread of the block calls it, and the caller's
// barrier separates two calls. op(a, b): the fold (a monoid's F::f, gbla_min_max's).
// gbla_warp_reduce: the warp's values into lane 0's, in a fixed order (lane l takes lane l +
// offset's); every lane of the warp calls it.
template <class T, class Op>
__device__ __forceinline__ T gbla_warp_reduce(T acc, Op op)
{
    for (int offset = 16; offset > 0; offset >>= 1) {
        const T other = gbla_shfl_down(acc, offset);
        if ((threadIdx.x & 31) + offset < 32) acc = op(acc, other);
    }
    return acc;
}

template <class T, class Op>
__device__ __forceinline__ T gbla_block_reduce(T acc, T identity, Op op)
{
    __shared__ T part[32];
    __shared__ T all;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    acc = gbla_warp_reduce(acc, op);
    if (lane == 0) part[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        acc = gbla_warp_reduce(lane < (int)(blockDim.x >> 5) ? part[lane] : identity, op);
        if (lane == 0) all = acc;
    }
    __syncthreads();
    return all;
}

// gbla_min_max over the block's values (gbla_block_reduce).
template <class T>
__device__ __forceinline__ T gbla_block_min_max(int fold, T acc, T identity)
{
    return gbla_block_reduce(acc, identity, [fold](T x, T y) { return gbla_min_max(fold, x, y); });
}

// A state's store at the end of an iteration: buffer (bv, bp; its list ids_b, count_b) := the
// new value w (wv, wp; its list ids_w, count_w), in one launch. Thread j takes old entry j and
// new entry j: it drops the old one where w lacks it and writes the new one, value, presence and
// list, so the buffer's list is read before its entry is overwritten, by the thread that
// overwrites it. A drop skips the positions w has, so no position is written twice. With
// either list unknown, the whole value is copied (and the new list, where known). Every thread
// reads the buffer's count first; the last block to finish writes the new one, and sets its
// count of finished blocks (`arrived`, zero) back to 0.
// With `fold` (1 min, 2 max; 0 none: gbla.iterate's test_reduce), the new value's min or max
// (`identity` where it has no entry) goes to *fold_out as well: a partial a block in
// fold_partial (at least a slot a block), folded by the last block. The reduction the loop's
// next iteration starts with, at no launch of its own.
template <class T, class I>
__global__ void gbla_store(long long n, const I* __restrict__ ids_w,
                           const u64* __restrict__ count_w, const T* __restrict__ wv,
                           const bool* __restrict__ wp, T* __restrict__ bv, bool* __restrict__ bp,
                           I* ids_b, u64* count_b, u64* arrived, int fold, T identity,
                           T* fold_out, T* fold_partial)
{
    const u64 old_count = *count_b, new_count = *count_w;
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
    T acc = identity;
    if (old_count == GBLA_UNKNOWN || new_count == GBLA_UNKNOWN) {
        for (long long i = tid; i < n; i += stride) {
            const T v = wv[i];
            const bool p = wp[i];
            bv[i] = v;
            bp[i] = p;
            if (fold && p) acc = gbla_min_max(fold, acc, v);
        }
        if (new_count != GBLA_UNKNOWN)
            for (long long j = tid; j < (long long)new_count; j += stride) ids_b[j] = ids_w[j];
    } else {
        const long long end = (long long)(old_count > new_count ? old_count : new_count);
        for (long long j = tid; j < end; j += stride) {
            const long long gone = j < (long long)old_count ? (long long)ids_b[j] : -1;
            const long long fresh = j < (long long)new_count ? (long long)ids_w[j] : -1;
            if (gone >= 0 && !wp[gone]) bp[gone] = false;
            if (fresh >= 0) {
                const T v = wv[fresh];
                bv[fresh] = v;
                bp[fresh] = true;
                ids_b[j] = (I)fresh;
                if (fold) acc = gbla_min_max(fold, acc, v);
            }
        }
    }
    if (fold) {  // the same for every thread of the grid: each block's partial, then the last's
        acc = gbla_block_min_max(fold, acc, identity);
        if (threadIdx.x == 0) fold_partial[blockIdx.x] = acc;
    }
    if (!gbla_last_block(arrived)) return;
    if (fold) {
        acc = identity;
        for (unsigned k = threadIdx.x; k < gridDim.x; k += blockDim.x)
            acc = gbla_min_max(fold, acc, fold_partial[k]);
        acc = gbla_block_min_max(fold, acc, identity);
    }
    if (threadIdx.x == 0) {
        if (fold) *fold_out = acc;
        *count_b = new_count;
        *arrived = 0;
    }
}

// out<m> = t, out written in place, for a mask m (m.S or m.V, not complemented) at its listed
// entries (every position where its list is unknown). t: values tv (tv[0] for every position
// when tv_scalar) with presence tp (null: every entry present); where t has no entry, out loses
// its own.
template <class T, class O>
__global__ void gbla_assign_entries(long long n, const void* m_ids, int m_wide,
                                    const u64* m_count, const bool* __restrict__ mp,
                                    const void* mv, int m_type, const T* __restrict__ tv,
                                    int tv_scalar, const bool* __restrict__ tp,
                                    O* __restrict__ ov, bool* __restrict__ op)
{
    const gbla_list walk = gbla_list_of(m_ids, m_wide, m_count);
    const long long end = walk.known() ? walk.count : n;
    const long long stride = (long long)gridDim.x * blockDim.x;
    const O scalar = tv_scalar ? (O)tv[0] : O();  // read once, beside the list's count
    for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < end; j += stride) {
        const long long i = gbla_walk_id(walk, j);
        if (!gbla_mask_allows(mp, mv, m_type, 0, i)) continue;
        const bool present = gbla_has(tp, i);
        if (present) ov[i] = tv_scalar ? scalar : (O)tv[i];
        op[i] = present;
    }
}

// out(b, i) = t for every entry i of u and every bit b < width set in u(i), out written in
// place as a row-major (width, n) array of values ov and presence op (ops.assign_bits): a
// thread per listed entry of u (every position where its list is unknown) writes that entry's
// bits, bit b into row b. W: u's word (int or long long), bit b its b-th lowest;
// t: tv[0] (a host value kept at the op site, or a device scalar such as a loop's iteration).
template <class T, class W, class O>
__global__ void gbla_assign_bits(long long n, int width, const void* u_ids, int u_wide,
                                 const u64* u_count, const W* __restrict__ uv,
                                 const bool* __restrict__ up, const T* __restrict__ tv,
                                 O* __restrict__ ov, bool* __restrict__ op)
{
    const gbla_list walk = gbla_list_of(u_ids, u_wide, u_count);
    const long long end = walk.known() ? walk.count : n;
    const long long stride = (long long)gridDim.x * blockDim.x;
    const O value = (O)tv[0];
    // the bits a row holds; the word is read unsigned, so an int's sign does not spread
    const u64 keep = width >= 64 ? ~0ull : ((1ull << width) - 1ull);
    for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < end; j += stride) {
        const long long i = gbla_walk_id(walk, j);
        if (!gbla_has(up, i)) continue;
        u64 bits;
        if constexpr (sizeof(W) == 4) bits = (u64)(unsigned int)uv[i];
        else bits = (u64)uv[i];
        bits &= keep;
        // every lane steps through every bit, so a warp's stores for bit b go to one row, at
        // the columns of its entries: coalesced when the walk's ids are near each other
        for (int b = 0; b < width; ++b) {
            if ((bits >> b) & 1ull) {
                ov[(long long)b * n + i] = value;
                op[(long long)b * n + i] = true;
            }
        }
    }
}

// z<m> = f(a, b) where a and b both have an entry and m allows: apply (b a scalar, b_step 0 and
// bp null; or no b for a unary op) and ewise_mult. Walks the shortest known of a's, b's and the
// mask's lists (the mask's only when it is not complemented: a complement allows positions it
// does not list; the launcher passes no list then).
template <class F>
__global__ void gbla_entries_map(long long n, const void* a_ids, int a_wide, const u64* a_count,
                                 const void* b_ids, int b_wide, const u64* b_count,
                                 const void* m_ids, int m_wide, const u64* m_count,
                                 const typename F::A* __restrict__ av,
                                 const bool* __restrict__ ap,
                                 const typename F::B* __restrict__ bv, long long b_step,
                                 const bool* __restrict__ bp, const bool* __restrict__ mp,
                                 const void* mv, int m_type, int m_complement,
                                 typename F::Z* __restrict__ zv, bool* __restrict__ zp,
                                 void* z_ids, int z_wide, u64* z_count)
{
    typedef typename F::T T;
    const gbla_list walk = gbla_shorter(gbla_shorter(gbla_list_of(a_ids, a_wide, a_count),
                                                     gbla_list_of(b_ids, b_wide, b_count)),
                                        gbla_list_of(m_ids, m_wide, m_count));
    const long long end = walk.known() ? walk.count : n;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < end; j += stride) {
        const long long i = gbla_walk_id(walk, j);
        if (!gbla_has(ap, i) || !gbla_has(bp, i) ||
            !gbla_mask_allows(mp, mv, m_type, m_complement, i)) continue;
        const T a = F::USES_A ? (T)av[i] : T();
        const T b = F::USES_B ? (T)bv[b_step * i] : T();
        gbla_emit(zv, zp, z_ids, z_wide, z_count, i, F::f(a, b, i));
    }
}

// z = a where f(a, thunk) holds (select; thunk null where f reads none, as for "nonzero"). With
// t_step 1 the thunk is a vector (values thunk, presence tp, null: all present): entry i of a is
// kept where the thunk has entry i and f(a_i, thunk_i) holds; with t_step 0, thunk[0] for all.
// With rv (split), every other entry of a goes to the second output r in the same pass. With
// t_shift (a Scalar plus a number, s + c), the thunk is thunk[0] + *t_shift in its own type.
template <class F>
__global__ void gbla_entries_select(long long n, const void* a_ids, int a_wide,
                                    const u64* a_count, const typename F::A* __restrict__ av,
                                    const bool* __restrict__ ap,
                                    const typename F::B* __restrict__ thunk,
                                    const bool* __restrict__ tp, int t_step,
                                    typename F::A* __restrict__ zv, bool* __restrict__ zp,
                                    void* z_ids, int z_wide, u64* z_count,
                                    typename F::A* __restrict__ rv, bool* __restrict__ rp,
                                    void* r_ids, int r_wide, u64* r_count,
                                    const typename F::B* __restrict__ t_shift)
{
    typedef typename F::T T;
    typedef typename F::B B;
    const gbla_list walk = gbla_list_of(a_ids, a_wide, a_count);
    const B shifted = F::USES_B && t_shift != nullptr ? (B)(thunk[0] + *t_shift) : B();
    const long long end = walk.known() ? walk.count : n;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < end; j += stride) {
        const long long i = gbla_walk_id(walk, j);
        if (!gbla_has(ap, i)) continue;
        const typename F::A x = av[i];
        bool keep = !t_step || gbla_has(tp, i);
        if (keep) {
            const T y = !F::USES_B ? T() : t_shift ? (T)shifted : (T)thunk[t_step ? i : 0];
            keep = F::f(F::USES_A ? (T)x : T(), y, i);
        }
        if (keep) gbla_emit(zv, zp, z_ids, z_wide, z_count, i, x);
        else if (rv != nullptr) gbla_emit(rv, rp, r_ids, r_wide, r_count, i, x);
    }
}

// out<f(a, out) or no out entry> = a in place at a's entries, z those entries (a's values):
// improve, a relaxation's test and write in one pass. out's values ov (of F::B, a's value cast
// there where written) and presence op (null: every entry present) are read and written at
// entry i by the one thread that holds i (a's list names each position once), so nothing else
// orders them.
template <class F>
__global__ void gbla_entries_improve(long long n, const void* a_ids, int a_wide,
                                     const u64* a_count, const typename F::A* __restrict__ av,
                                     const bool* __restrict__ ap, typename F::B* ov, bool* op,
                                     typename F::A* __restrict__ zv, bool* __restrict__ zp,
                                     void* z_ids, int z_wide, u64* z_count)
{
    typedef typename F::T T;
    const gbla_list walk = gbla_list_of(a_ids, a_wide, a_count);
    const long long end = walk.known() ? walk.count : n;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < end; j += stride) {
        const long long i = gbla_walk_id(walk, j);
        if (!gbla_has(ap, i)) continue;
        const typename F::A x = av[i];
        if (gbla_has(op, i) && !F::f((T)x, (T)ov[i], i)) continue;
        ov[i] = (typename F::B)x;
        if (op != nullptr) op[i] = true;
        gbla_emit(zv, zp, z_ids, z_wide, z_count, i, x);
    }
}

// z<m> = a (+) b over the union: f(a, b) where both have an entry, the lone value (cast to Z)
// where one has. With both lists known (and no shorter list of a mask that is not
// complemented), a's entries, then b's where a has none: a thread for each of count_a +
// count_b; else the mask's list, or the pass over n.
template <class F>
__global__ void gbla_entries_union(long long n, const void* a_ids, int a_wide, const u64* a_count,
                                   const void* b_ids, int b_wide, const u64* b_count,
                                   const void* m_ids, int m_wide, const u64* m_count,
                                   const typename F::A* __restrict__ av,
                                   const bool* __restrict__ ap,
                                   const typename F::B* __restrict__ bv,
                                   const bool* __restrict__ bp, const bool* __restrict__ mp,
                                   const void* mv, int m_type, int m_complement,
                                   typename F::Z* __restrict__ zv, bool* __restrict__ zp,
                                   void* z_ids, int z_wide, u64* z_count)
{
    typedef typename F::T T;
    typedef typename F::Z Z;
    const gbla_list a = gbla_list_of(a_ids, a_wide, a_count);
    const gbla_list b = gbla_list_of(b_ids, b_wide, b_count);
    const gbla_list m = gbla_list_of(m_ids, m_wide, m_count);
    const bool both = a.known() && b.known() && (!m.known() || a.count + b.count <= m.count);
    const long long end = both ? a.count + b.count : (m.known() ? m.count : n);
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < end; j += stride) {
        long long i;
        if (!both) {
            i = gbla_walk_id(m, j);
        } else if (j < a.count) {
            i = a.id(j);
        } else {
            i = b.id(j - a.count);
            if (gbla_has(ap, i)) continue;  // a's walk has it
        }
        const bool in_a = gbla_has(ap, i), in_b = gbla_has(bp, i);
        if (!(in_a || in_b) || !gbla_mask_allows(mp, mv, m_type, m_complement, i)) continue;
        Z z;
        if (in_a && in_b)
            z = F::f(F::USES_A ? (T)av[i] : T(), F::USES_B ? (T)bv[i] : T(), i);
        else
            z = in_a ? (Z)av[i] : (Z)bv[i];
        gbla_emit(zv, zp, z_ids, z_wide, z_count, i, z);
    }
}

// A new value of out<m> = t (m not complemented) for an out that is not written in place: out's
// entries where m does not allow, t's where it does. With both lists known, out's entries the m
// does not allow, then m's entries it allows: a thread for each of count_out + count_m, every
// position written once; else the pass over n. t as for gbla_assign_entries.
template <class T, class O>
__global__ void gbla_entries_merge(long long n, const void* o_ids, int o_wide,
                                   const u64* o_count, const void* m_ids, int m_wide,
                                   const u64* m_count, const bool* __restrict__ mp,
                                   const void* mv, int m_type, const T* __restrict__ tv,
                                   int tv_scalar, const bool* __restrict__ tp,
                                   const O* __restrict__ ov, const bool* __restrict__ op,
                                   O* __restrict__ zv, bool* __restrict__ zp, void* z_ids,
                                   int z_wide, u64* z_count)
{
    const gbla_list o = gbla_list_of(o_ids, o_wide, o_count);
    const gbla_list m = gbla_list_of(m_ids, m_wide, m_count);
    const bool listed = o.known() && m.known();
    const long long end = listed ? o.count + m.count : n;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < end; j += stride) {
        const bool from_out = listed && j < o.count;
        const long long i = !listed ? j : (from_out ? o.id(j) : m.id(j - o.count));
        const bool allowed = gbla_mask_allows(mp, mv, m_type, 0, i);
        if (listed && from_out == allowed) continue;  // the other walk's position
        if (allowed) {
            if (gbla_has(tp, i))
                gbla_emit(zv, zp, z_ids, z_wide, z_count, i, (O)(tv_scalar ? tv[0] : tv[i]));
        } else if (gbla_has(op, i)) {
            gbla_emit(zv, zp, z_ids, z_wide, z_count, i, ov[i]);
        }
    }
}

// ------------------------------------------------------------------ reductions
// F::f over the block's accumulators (gbla_block_reduce).
template <class F>
__device__ __forceinline__ typename F::Z gbla_block_fold(typename F::Z acc)
{
    typedef typename F::Z Z;
    return gbla_block_reduce(acc, F::identity(), [](Z x, Z y) { return F::f(x, y, 0); });
}

// The monoid F's reduction of a vector's listed entries (the present ones where the list is
// unknown) into *out, in one launch: a partial per block, and the last block to finish folds
// them in block order (so the result depends only on the list) and sets its count of finished
// blocks (`arrived`, zero) back to 0.
template <class F>
__global__ void gbla_entries_reduce(long long n, const void* ids, int wide, const u64* count,
                                    const typename F::A* __restrict__ v,
                                    const bool* __restrict__ p, typename F::Z* partial,
                                    typename F::Z* __restrict__ out, u64* arrived)
{
    typedef typename F::T T;
    const gbla_list walk = gbla_list_of(ids, wide, count);
    const long long end = walk.known() ? walk.count : n;
    const long long stride = (long long)gridDim.x * blockDim.x;
    typename F::Z acc = F::identity();
    for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < end; j += stride) {
        const long long i = gbla_walk_id(walk, j);
        if (gbla_has(p, i)) acc = F::f(acc, (T)v[i], i);
    }
    acc = gbla_block_fold<F>(acc);
    if (threadIdx.x == 0) partial[blockIdx.x] = acc;
    if (!gbla_last_block(arrived)) return;
    acc = F::identity();
    for (unsigned k = threadIdx.x; k < gridDim.x; k += blockDim.x) acc = F::f(acc, partial[k], 0);
    acc = gbla_block_fold<F>(acc);
    if (threadIdx.x == 0) {
        *out = acc;
        *arrived = 0;
    }
}
