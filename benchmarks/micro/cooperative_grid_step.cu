// Microbenchmark: a step of a list op between grid-wide barriers in one cooperative kernel.
// Build and run (sm_90 or newer): nvcc -arch=sm_90 -O2 -o /tmp/cooperative_grid_step benchmarks/micro/cooperative_grid_step.cu && /tmp/cooperative_grid_step
// Results and what they decided: benchmarks/results/ab/algebra_round_kernels_h200.log
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cooperative_groups.h>
#include <cuda_runtime.h>
namespace cg = cooperative_groups;
typedef unsigned long long u64;
#define CK(x) do { cudaError_t err_ = (x); if (err_ != cudaSuccess) { printf("ERR %s at %s:%d\n", cudaGetErrorString(err_), __FILE__, __LINE__); exit(1);} } while (0)

__global__ void steps(int K, int iters, u64 L, u64* counts, int** ids, float* vals)
{
    cg::grid_group grid = cg::this_grid();
    for (int it = 0; it < iters; it++) {
        if (grid.thread_rank() < K) counts[grid.thread_rank() + 1] = 0;
        if (grid.thread_rank() == 0) counts[0] = L;
        grid.sync();
        for (int k = 0; k < K; k++) {
            const u64 c = *(volatile u64*)&counts[k];
            for (u64 i = grid.thread_rank(); i < c; i += grid.size()) {
                int id = ids[k][i];
                float v = vals[id];
                vals[id] = v + 1.0f;
                u64 p = atomicAdd(&counts[k + 1], 1ull);
                ids[k + 1][p] = id;
            }
            grid.sync();
        }
    }
}

int main()
{
    const int K = 12, ITERS = 2000, N = 1 << 20;
    int* hids[K + 1]; int** ids; u64* counts; float* vals;
    CK(cudaMalloc(&counts, (K + 1) * sizeof(u64)));
    CK(cudaMalloc(&vals, N * sizeof(float)));
    CK(cudaMalloc(&ids, (K + 1) * sizeof(int*)));
    std::vector<int> h(N);
    for (int i = 0; i < N; i++) h[i] = (int)((i * 2654435761u) % N);
    for (int k = 0; k <= K; k++) { CK(cudaMalloc(&hids[k], N * sizeof(int))); CK(cudaMemcpy(hids[k], h.data(), N * sizeof(int), cudaMemcpyHostToDevice)); }
    CK(cudaMemcpy(ids, hids, sizeof(hids), cudaMemcpyHostToDevice));
    int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    for (int threads : {256, 1024})
    for (int per_sm : {1, 2})
    for (u64 L : {0ull, 512ull, 4096ull}) {
        if (threads * per_sm > 2048) continue;
        int grid = sms * per_sm, K_ = K, it = ITERS;
        void* args[] = {&K_, &it, &L, &counts, &ids, &vals};
        float best = 1e30f;
        for (int rep = 0; rep < 3; rep++) {
            cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
            cudaEventRecord(a); CK(cudaLaunchCooperativeKernel((void*)steps, grid, threads, args, 0, 0)); cudaEventRecord(b);
            CK(cudaDeviceSynchronize());
            float ms; cudaEventElapsedTime(&ms, a, b); if (ms < best) best = ms;
        }
        printf("coop grid %4d x %4d list %5llu %8.3f us/iteration %6.3f us/step\n", grid, threads, L,
               best * 1000 / ITERS, best * 1000 / ITERS / (K + 1));
    }
    return 0;
}
