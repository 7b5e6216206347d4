// The atomic updates the traversal kernels share: claiming an unvisited vertex for a level, and
// atomicMin on a float or double. Included by frontier.cuh, sssp.cu and outofcore.cu (the loader
// in _launch.py inlines it for NVRTC).
#pragma once

// Sets levels[v] to depth when it is still -1 (unvisited); true for the one thread that did.
__device__ __forceinline__ bool gbla_claim(int* levels, long long v, int depth) {
    return levels[v] == -1 && atomicCAS(&levels[v], -1, depth) == -1;
}

// atomicMin on a float or double (any sign). True when this call lowered the value. A value
// whose sign bit is clear (+0 and up) orders as its bits do as a signed integer against any
// stored value (a negative's bits are negative), so one integer atomicMin on them does it: one
// trip to L2. Only a negative value takes the compare-and-swap loop (a read, then the swap,
// retried under contention).
__device__ __forceinline__ bool gbla_atomic_min(double* addr, double value) {
    const long long vb = __double_as_longlong(value);
    if (vb >= 0) return atomicMin(reinterpret_cast<long long*>(addr), vb) > vb;
    unsigned long long* bits = (unsigned long long*)addr;
    unsigned long long old = *(volatile unsigned long long*)bits;
    while (value < __longlong_as_double((long long)old)) {
        unsigned long long seen =
            atomicCAS(bits, old, (unsigned long long)__double_as_longlong(value));
        if (seen == old) return true;
        old = seen;
    }
    return false;
}

__device__ __forceinline__ bool gbla_atomic_min(float* addr, float value) {
    const int vb = __float_as_int(value);
    if (vb >= 0) return atomicMin(reinterpret_cast<int*>(addr), vb) > vb;
    unsigned int* bits = (unsigned int*)addr;
    unsigned int old = *(volatile unsigned int*)bits;
    while (value < __int_as_float((int)old)) {
        unsigned int seen = atomicCAS(bits, old, (unsigned int)__float_as_int(value));
        if (seen == old) return true;
        old = seen;
    }
    return false;
}
