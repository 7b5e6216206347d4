// Entry lists of the dense vectors in a loop recorded on the device (gbla/runtime): beside its
// dense values and presence, a vector there may carry `ids`, the positions of its entries in no
// particular order, and `count`, how many (one u64 on the device; GBLA_UNKNOWN when no list is
// kept, as after a run's start state is loaded or an op wrote the vector in place). A device
// product makes the list as it finds entries; the kernels here read it, so that a level of a
// traversal touches its frontier, not every vertex:
//   gbla_store_clear, gbla_store_set: a state vector's buffers take a new value with a list,
//     clearing only the old entries the new value lacks (the old list), then writing the new
//     ones and their list (two launches: the second overwrites the list the first reads);
//   gbla_assign_entries: out<m.S> = t for a mask with a list, out written in place.
// Where a count is GBLA_UNKNOWN, each falls back to a pass over all n positions.
// I is the id type (int or long long), T and O value types.

typedef unsigned long long u64;
#define GBLA_UNKNOWN 0xffffffffffffffffull

// An old entry of the buffer that the new value lacks loses its presence; with no list on
// either side, the whole value is copied instead.
template <class T, class I>
__global__ void gbla_store_clear(long long n, const I* __restrict__ ids_b,
                                 const u64* __restrict__ count_b, const u64* __restrict__ count_w,
                                 const T* __restrict__ wv, const bool* __restrict__ wp,
                                 T* __restrict__ bv, bool* __restrict__ bp)
{
    const u64 old_count = *count_b, new_count = *count_w;
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
    if (old_count == GBLA_UNKNOWN || new_count == GBLA_UNKNOWN) {
        for (long long i = tid; i < n; i += stride) {
            bv[i] = wv[i];
            bp[i] = wp[i];
        }
        return;
    }
    for (long long j = tid; j < (long long)old_count; j += stride) {
        const long long i = (long long)ids_b[j];
        if (!wp[i]) bp[i] = false;
    }
}

// The new value's entries into the buffer, and its list as the buffer's.
template <class T, class I>
__global__ void gbla_store_set(const I* __restrict__ ids_w, const u64* __restrict__ count_w,
                               const T* __restrict__ wv, T* __restrict__ bv,
                               bool* __restrict__ bp, I* __restrict__ ids_b,
                               u64* __restrict__ count_b)
{
    const u64 new_count = *count_w;
    if (blockIdx.x == 0 && threadIdx.x == 0) *count_b = new_count;  // no thread here reads it
    if (new_count == GBLA_UNKNOWN) return;  // gbla_store_clear copied everything
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
         j < (long long)new_count; j += stride) {
        const I i = ids_w[j];
        bv[i] = wv[i];
        bp[i] = true;
        ids_b[j] = i;
    }
}

// out<m.S> = t, out written in place, at the mask's listed entries (all n positions of m when
// its count is unknown). t: values tv (tv[0] for every position when tv_scalar) with presence
// tp (null: every entry present); where t has no entry, out loses its own.
template <class T, class O, class I>
__global__ void gbla_assign_entries(long long n, const I* __restrict__ ids,
                                    const u64* __restrict__ count, const bool* __restrict__ m,
                                    const T* __restrict__ tv, int tv_scalar,
                                    const bool* __restrict__ tp, O* __restrict__ ov,
                                    bool* __restrict__ op)
{
    const u64 c = *count;
    const bool listed = c != GBLA_UNKNOWN;
    const long long end = listed ? (long long)c : n;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < end; j += stride) {
        const long long i = listed ? (long long)ids[j] : j;
        if (!listed && !m[i]) continue;
        const bool present = tp == nullptr || tp[i];
        if (present) ov[i] = (O)(tv_scalar ? tv[0] : tv[i]);
        op[i] = present;
    }
}
