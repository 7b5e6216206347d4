// Entry lists (entries.cu): a vector's positions in no order, ids[0..*count), the count
// GBLA_UNKNOWN where none is kept; what the kernels that make lists share (spmv.cu, through
// frontier.cuh, and entries.cu). A header of its own, without cooperative_groups: those headers
// add about 1.5 s to each NVRTC module, and entries.cu is compiled once per op and dtypes.
#pragma once

typedef unsigned long long u64;
#define GBLA_UNKNOWN 0xffffffffffffffffull
// a device product's info slot (spmv.cu, loop.cu): the word that says it pulls (1) or pushes,
// and the word that says its push walks its input's list itself (loop.cu's direct push: 1, or 2
// where the direction rule spends the edges it pushes)
#define GBLA_INFO_PULL 4
#define GBLA_INFO_DIRECT 5

// Lane + offset's value of the warp (a 1-byte value through an int: the shuffles take 4- and
// 8-byte values). Every lane of the warp calls it.
template <class Z>
__device__ __forceinline__ Z gbla_shfl_down(Z v, int offset)
{
    if constexpr (sizeof(Z) == 1) return (Z)__shfl_down_sync(0xffffffffu, (int)v, offset);
    else return __shfl_down_sync(0xffffffffu, v, offset);
}

// Appends i to ids[0..*count), one atomic per group of converged threads of a warp (blocks are
// 1-D and whole warps). I: the list's id type.
template <class I>
__device__ __forceinline__ void gbla_list_append(I* ids, u64* count, long long i)
{
    const unsigned group = __activemask();
    const int lane = threadIdx.x & 31, leader = __ffs(group) - 1;
    u64 base = 0;
    if (lane == leader) base = atomicAdd(count, (u64)__popc(group));
    base = __shfl_sync(group, base, leader);
    ids[base + __popc(group & ((1u << lane) - 1u))] = (I)i;
}

// Whether this block is the last of its grid to get here: a barrier (every thread of the block
// past what came before), then a count of arrivals in *arrived, fenced on both sides so that
// the last block sees what the others wrote before arriving. Every thread of the block calls it
// and gets the answer; the caller resets *arrived where it reuses it. In the fused block
// (fused.cu: one block, GBLA_FUSED) the block is the last, and the count is not kept.
// One atom.acq_rel.gpu add in place of the fence, the add and the fence was measured and not
// kept: 0.1-0.2 us slower a launch of gbla_gather_decide and gbla_store under ncu on an H200
// (benchmarks/results/ab/algebra_loop_product_reset_in_the_test_h200.log).
__device__ __forceinline__ bool gbla_last_block(u64* arrived)
{
    __syncthreads();
#ifdef GBLA_FUSED
    return true;
#else
    __shared__ bool last;
    if (threadIdx.x == 0) {
        __threadfence();
        last = atomicAdd(arrived, 1ull) == gridDim.x - 1;
    }
    __syncthreads();
    if (last) __threadfence();
    return last;
#endif
}

// A list as the kernels read it (entries.cu, the op sites below): ids of int or, where wide, of
// long long (a product's list has its matrix's index type, an op's own the type of n: one op may
// read both), and its count, -1 where unknown (no list passed, or GBLA_UNKNOWN).
struct gbla_list {
    const void* ids;
    int wide;
    long long count;

    __device__ __forceinline__ bool known() const { return count >= 0; }
    __device__ __forceinline__ long long id(long long j) const
    {
        return wide ? ((const long long*)ids)[j] : (long long)((const int*)ids)[j];
    }
};

__device__ __forceinline__ gbla_list gbla_list_of(const void* ids, int wide, const u64* count)
{
    const u64 c = count == nullptr ? GBLA_UNKNOWN : *count;
    return {ids, wide, c == GBLA_UNKNOWN ? -1ll : (long long)c};
}

// Position j of a walk: the list's j-th id, or j itself in the pass over n.
__device__ __forceinline__ long long gbla_walk_id(const gbla_list& walk, long long j)
{
    return walk.known() ? walk.id(j) : j;
}

// ------------------------------------------------------------------ an op site's output
// An element-wise op's output inside a loop lives in buffers of its op site, kept from one
// iteration to the next (present zeroed when they are made and at each run's start), and read
// until the iteration's state is stored. Then, in the loop's test (loop.cu), the entries of
// each site's output lose their presence, along its list (all n where it is unknown), and the
// last block to finish empties every list (count[0] = 0) and sets its count of finished blocks
// back to 0. A device product's output (spmv.cu) is taken back there too: its values at the
// listed entries go back to its monoid's identity (`identity`, the bits of a value of `bytes`
// bytes; 0 bytes: values left as they are) and its info slot's `info_words` words to zero but
// for info[4], its direction (`pull`), so that the next product starts from an empty output in
// the graph's next node, without a launch of its own. A site: its list's ids and width (long
// long ids where wide, else int), its count, its presence, n, and those (gbla_site;
// _entries.site_table lays the table out).
struct gbla_site {
    const void* ids;
    long long wide;
    u64* count;
    bool* present;
    long long n;
    void* values;
    long long bytes;
    u64 identity;
    u64* info;
    long long info_words;
    u64 pull;
};

// A value of `bytes` bytes (1, 4 or 8) at position i of values, from the low bits of `bits`.
__device__ __forceinline__ void gbla_put_bits(void* values, long long bytes, long long i, u64 bits)
{
    if (bytes == 8) ((u64*)values)[i] = bits;
    else if (bytes == 4) ((unsigned int*)values)[i] = (unsigned int)bits;
    else ((unsigned char*)values)[i] = (unsigned char)bits;
}

// Every thread of the grid calls it, before any returns.
__device__ __forceinline__ void gbla_clear_sites(const gbla_site* sites, int k, u64* arrived)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (int s = 0; s < k; ++s) {
        const gbla_site site = sites[s];
        const gbla_list old = gbla_list_of(site.ids, (int)site.wide, site.count);
        const long long end = old.known() ? old.count : site.n;
        for (long long j = tid; j < end; j += stride) {
            const long long i = gbla_walk_id(old, j);
            site.present[i] = false;
            if (site.bytes) gbla_put_bits(site.values, site.bytes, i, site.identity);
        }
    }
    // every thread of every block has read the counts
    if (gbla_last_block(arrived)) {
        for (int s = threadIdx.x; s < k; s += blockDim.x) {
            sites[s].count[0] = 0;
            for (long long w = 0; w < sites[s].info_words; ++w)
                sites[s].info[w] = w == GBLA_INFO_PULL ? sites[s].pull : 0ull;
        }
        if (threadIdx.x == 0) *arrived = 0;
    }
}
