// Entry lists (entries.cu): a vector's positions in no order, ids[0..*count), the count
// GBLA_UNKNOWN where none is kept; what the kernels that make lists share (spmv.cu, through
// frontier.cuh, and entries.cu). A header of its own, without cooperative_groups: those headers
// add about 1.5 s to each NVRTC module, and entries.cu is compiled once per op and dtypes.
#pragma once

typedef unsigned long long u64;
#define GBLA_UNKNOWN 0xffffffffffffffffull

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
