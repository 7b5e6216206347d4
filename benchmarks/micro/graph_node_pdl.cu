// Microbenchmark: per-node cost of a chain of dependent list-walking kernels in a CUDA graph
// WHILE body, with ordinary edges and with programmatic dependent launch (PDL).
// Build and run (sm_90 or newer): nvcc -arch=sm_90 -O2 -o /tmp/graph_node_pdl benchmarks/micro/graph_node_pdl.cu && /tmp/graph_node_pdl
// Results and what they decided: benchmarks/results/ab/algebra_round_kernels_h200.log
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
typedef unsigned long long u64;
#define CK(x) do { cudaError_t err_ = (x); if (err_ != cudaSuccess) { printf("ERR %s at %s:%d\n", cudaGetErrorString(err_), __FILE__, __LINE__); exit(1);} } while (0)

__device__ __forceinline__ void wait_prior() {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void let_next() {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__global__ void listop(const u64* count_in, const int* ids_in, const float* vals, int* ids_out,
                       u64* count_out, float* out_vals, int mode)
{
    if (mode >= 1) wait_prior();
    if (mode >= 2) let_next();
    const u64 c = *count_in;
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < c; i += (u64)gridDim.x * blockDim.x) {
        int id = ids_in[i];
        float v = vals[id];
        out_vals[id] = v + 1.0f;
        u64 p = atomicAdd(count_out, 1ull);
        ids_out[p] = id;
    }
}

__global__ void reset(u64* counts, int k, u64* first, u64 L, int mode)
{
    if (mode >= 1) wait_prior();
    if (mode >= 2) let_next();
    int t = threadIdx.x;
    if (t < k) counts[t + 1] = 0;
    if (t == 0) counts[0] = L;
}

__global__ void tick(cudaGraphConditionalHandle h, int* left, int mode)
{
    if (mode >= 1) wait_prior();
    if (threadIdx.x == 0) {
        int l = --*left;
        cudaGraphSetConditional(h, l > 0 ? 1 : 0);
    }
}

template <class K, class... A>
void launch(cudaStream_t s, K kernel, dim3 g, dim3 b, int pdl, A... args)
{
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = g; cfg.blockDim = b; cfg.stream = s;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = at; cfg.numAttrs = pdl ? 1 : 0;
    CK(cudaLaunchKernelEx(&cfg, kernel, args...));
}

int main(int argc, char** argv)
{
    const int K = 12, ITERS = 2000, N = 1 << 20;
    int* ids[K + 1]; u64* counts; float* vals; int* left;
    CK(cudaMalloc(&counts, (K + 1) * sizeof(u64)));
    CK(cudaMalloc(&vals, N * sizeof(float)));
    CK(cudaMalloc(&left, sizeof(int)));
    std::vector<int> h(N);
    for (int i = 0; i < N; i++) h[i] = (int)((i * 2654435761u) % N);
    for (int k = 0; k <= K; k++) { CK(cudaMalloc(&ids[k], N * sizeof(int))); CK(cudaMemcpy(ids[k], h.data(), N * sizeof(int), cudaMemcpyHostToDevice)); }
    cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const char* names[] = {"plain", "pdl wait", "pdl wait+trigger", "rewrite prog", "rewrite launch"};
    for (int grid : {2, 2 * sms, 8 * sms})
    for (u64 L : {0ull, 512ull, 8192ull})
    for (int mode = 0; mode < 5; mode++) {
        int km = mode >= 3 ? 1 : mode;
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
        int pdl = mode == 1 || mode == 2;
        launch(s, reset, dim3(1), dim3(32), 0, counts, K, counts, L, km);
        for (int k = 0; k < K; k++)
            launch(s, listop, dim3(grid), dim3(256), pdl, (const u64*)(counts + k), (const int*)ids[k], (const float*)vals, ids[k + 1], counts + k + 1, vals, km);
        launch(s, tick, dim3(1), dim3(32), pdl, hnd, left, km);
        cudaGraph_t got; CK(cudaStreamEndCapture(s, &got));
        if (mode >= 3) {
            size_t ne = 0; CK(cudaGraphGetEdges(body, nullptr, nullptr, nullptr, &ne));
            std::vector<cudaGraphNode_t> from(ne), to(ne); std::vector<cudaGraphEdgeData> ed(ne);
            CK(cudaGraphGetEdges(body, from.data(), to.data(), ed.data(), &ne));
            int changed = 0;
            for (size_t e = 0; e < ne; e++) {
                cudaGraphNodeType ta, tb; CK(cudaGraphNodeGetType(from[e], &ta)); CK(cudaGraphNodeGetType(to[e], &tb));
                if (ta != cudaGraphNodeTypeKernel || tb != cudaGraphNodeTypeKernel) continue;
                CK(cudaGraphRemoveDependencies(body, &from[e], &to[e], &ed[e], 1));
                cudaGraphEdgeData d = {};
                d.from_port = mode == 3 ? cudaGraphKernelNodePortProgrammatic : cudaGraphKernelNodePortLaunchCompletion;
                d.type = cudaGraphDependencyTypeProgrammatic;
                CK(cudaGraphAddDependencies(body, &from[e], &to[e], &d, 1));
                changed++;
            }
            if (grid == 2 && L == 0) printf("rewrote %d of %zu edges\n", changed, ne);
        }
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
        printf("grid %5d list %5llu %-17s %8.3f us/iteration %6.3f us/node (last count %llu)\n", grid, L, names[mode],
               best * 1000 / ITERS, best * 1000 / ITERS / (K + 2), hc[K]);
        cudaGraphExecDestroy(ex); cudaGraphDestroy(g);
    }
    return 0;
}
