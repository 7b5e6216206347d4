// Microbenchmark: what a tiny list kernel costs in a CUDA graph WHILE body, with the
// last-block pattern (threadfence + atomic count) as gbla's kernels use it, and cheaper fences.
// Build and run (sm_90 or newer): nvcc -arch=sm_90 -O2 -o /tmp/graph_node_last_block benchmarks/micro/graph_node_last_block.cu && /tmp/graph_node_last_block
// Results and what they decided: benchmarks/results/ab/algebra_round_kernels_h200.log
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
typedef unsigned long long u64;
#define CK(x) do { cudaError_t err_ = (x); if (err_ != cudaSuccess) { printf("ERR %s at %s:%d\n", cudaGetErrorString(err_), __FILE__, __LINE__); exit(1);} } while (0)

__device__ __forceinline__ bool last_sc(u64* arrived) {
    __syncthreads();
    __shared__ bool last;
    if (threadIdx.x == 0) { __threadfence(); last = atomicAdd(arrived, 1ull) == gridDim.x - 1; }
    __syncthreads();
    if (last) __threadfence();
    return last;
}
__device__ __forceinline__ bool last_acqrel(u64* arrived) {
    __syncthreads();
    __shared__ bool last;
    if (threadIdx.x == 0) {
        u64 old;
        asm volatile("atom.acq_rel.gpu.global.add.u64 %0, [%1], 1;" : "=l"(old) : "l"(arrived) : "memory");
        last = old == gridDim.x - 1;
    }
    __syncthreads();
    return last;
}
__device__ __forceinline__ bool last_fence_acqrel(u64* arrived) {
    __syncthreads();
    __shared__ bool last;
    if (threadIdx.x == 0) {
        asm volatile("fence.acq_rel.gpu;" ::: "memory");
        last = atomicAdd(arrived, 1ull) == gridDim.x - 1;
        if (last) asm volatile("fence.acq_rel.gpu;" ::: "memory");
    }
    __syncthreads();
    return last;
}

// mode: 0 count only; 1 list op; 2 list op + last block (sc); 3 + last block (atom acq_rel);
// 4 + last block (fence.acq_rel); 5 list op with a degree read (gather-like) + last block sc
__global__ void op(int mode, const u64* count_in, const int* ids_in, const float* vals, const int* indptr,
                   int* ids_out, u64* count_out, float* out_vals, u64* arrived, u64* tally)
{
    const u64 c = *count_in;
    if (mode == 0) { if (c == 12345678) out_vals[0] = 1; return; }
    u64 local = 0;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < c; i += (u64)gridDim.x * blockDim.x) {
        int id = ids_in[i];
        float v = vals[id];
        if (mode == 5) local += indptr[id + 1] - indptr[id];
        out_vals[id] = v + 1.0f;
        u64 p = atomicAdd(count_out, 1ull);
        ids_out[p] = id;
    }
    if (mode == 5 && local) atomicAdd(tally, local);
    if (mode == 1) return;
    bool last = mode == 3 ? last_acqrel(arrived) : mode == 4 ? last_fence_acqrel(arrived) : last_sc(arrived);
    if (last && threadIdx.x == 0) { *arrived = 0; tally[1] = *count_out; }
}

__global__ void reset(u64* counts, int k, u64 L) {
    int t = threadIdx.x;
    if (t < k) counts[t + 1] = 0;
    if (t == 0) counts[0] = L;
}
__global__ void tick(cudaGraphConditionalHandle h, int* left) {
    if (threadIdx.x == 0) { int l = --*left; cudaGraphSetConditional(h, l > 0 ? 1 : 0); }
}

int main()
{
    const int K = 12, ITERS = 2000, N = 1 << 20;
    int* ids[K + 1]; u64 *counts, *arrived, *tally; float* vals; int *left, *indptr;
    CK(cudaMalloc(&counts, (K + 1) * sizeof(u64)));
    CK(cudaMalloc(&arrived, K * sizeof(u64))); CK(cudaMemset(arrived, 0, K * sizeof(u64)));
    CK(cudaMalloc(&tally, 2 * sizeof(u64)));
    CK(cudaMalloc(&vals, N * sizeof(float)));
    CK(cudaMalloc(&left, sizeof(int)));
    std::vector<int> h(N + 1);
    for (int i = 0; i <= N; i++) h[i] = i * 3;
    CK(cudaMalloc(&indptr, (N + 1) * sizeof(int))); CK(cudaMemcpy(indptr, h.data(), (N + 1) * sizeof(int), cudaMemcpyHostToDevice));
    for (int i = 0; i < N; i++) h[i] = (int)((i * 2654435761u) % N);
    for (int k = 0; k <= K; k++) { CK(cudaMalloc(&ids[k], N * sizeof(int))); CK(cudaMemcpy(ids[k], h.data(), N * sizeof(int), cudaMemcpyHostToDevice)); }
    cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const char* names[] = {"count only", "list op", "+last sc", "+last atom.acq_rel", "+last fence.acq_rel", "degree+last sc"};
    for (int grid : {sms, 2 * sms, 8 * sms})
    for (u64 L : {0ull, 512ull, 4096ull})
    for (int mode = 0; mode < 6; mode++) {
        cudaGraph_t g; CK(cudaGraphCreate(&g, 0));
        cudaGraphConditionalHandle hnd;
        CK(cudaGraphConditionalHandleCreate(&hnd, g, 1, cudaGraphCondAssignDefault));
        cudaGraphNodeParams p = {};
        p.type = cudaGraphNodeTypeConditional;
        p.conditional.handle = hnd; p.conditional.type = cudaGraphCondTypeWhile; p.conditional.size = 1;
        cudaGraphNode_t node;
        CK(cudaGraphAddNode(&node, g, nullptr, nullptr, 0, &p));
        cudaGraph_t body = p.conditional.phGraph_out[0];
        CK(cudaStreamBeginCaptureToGraph(s, body, nullptr, nullptr, 0, cudaStreamCaptureModeRelaxed));
        reset<<<1, 32, 0, s>>>(counts, K, L);
        for (int k = 0; k < K; k++)
            op<<<grid, 256, 0, s>>>(mode, counts + k, ids[k], vals, indptr, ids[k + 1], counts + k + 1, vals, arrived + k, tally);
        tick<<<1, 32, 0, s>>>(hnd, left);
        cudaGraph_t got; CK(cudaStreamEndCapture(s, &got));
        cudaGraphExec_t ex; CK(cudaGraphInstantiate(&ex, g, 0));
        float best = 1e30f;
        for (int rep = 0; rep < 5; rep++) {
            int it = ITERS; CK(cudaMemcpy(left, &it, sizeof(int), cudaMemcpyHostToDevice));
            cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
            cudaEventRecord(a, s); CK(cudaGraphLaunch(ex, s)); cudaEventRecord(b, s);
            CK(cudaStreamSynchronize(s));
            float ms; cudaEventElapsedTime(&ms, a, b); if (ms < best) best = ms;
        }
        u64 hc[K + 1]; CK(cudaMemcpy(hc, counts, sizeof(hc), cudaMemcpyDeviceToHost));
        printf("grid %5d list %5llu %-20s %8.3f us/iteration %6.3f us/kernel (count %llu)\n", grid, L, names[mode],
               best * 1000 / ITERS, best * 1000 / ITERS / (K + 2), mode == 0 ? 0 : hc[K]);
        cudaGraphExecDestroy(ex); cudaGraphDestroy(g);
    }
    return 0;
}
