// The core of the data generator (data.h): every element of an input or a
// target as a pure function of its counter-based key (rng.h), for the host
// (data.cpp) and, compiled by nvcc, the device (cuda/cuda_kernels.cu), so
// that the CUDA backend makes its data on the GPU with the host's bits
// (--verify compares it with the CPU reference). Plain integer arithmetic
// and exact float operations: no rounding differs between the two.
#pragma once

#include "pipesched/runtime/rng.h"

#include <cstdint>

#if defined(__CUDACC__)
#define PIPESCHED_HOST_DEVICE __host__ __device__
#else
#define PIPESCHED_HOST_DEVICE
#endif

namespace pipesched::runtime::datagen {

// The key of the inputs of (step, microbatch); the targets derive from them.
PIPESCHED_HOST_DEVICE inline uint64_t key(uint64_t seed, int step, int microbatch) {
  return pipesched_rng_key(seed, PIPESCHED_RNG_INPUT, uint64_t(step), uint64_t(microbatch));
}

// Element k of the inputs (row-major rows x hidden), uniform in [-1, 1):
// 24 random bits, exact in float.
PIPESCHED_HOST_DEVICE inline float input(uint64_t key, int64_t k) {
  return pipesched_rng_uniform(key, uint64_t(k));
}

// MSE's target of element k: x / 2 (exact: a power of two).
PIPESCHED_HOST_DEVICE inline float mseTarget(uint64_t key, int64_t k) {
  return 0.5f * input(key, k);
}

// A cross-entropy row's candidate class: its input and its index.
struct Candidate {
  float value;
  int64_t index;
};

PIPESCHED_HOST_DEVICE inline Candidate candidate(uint64_t key, int64_t row, int64_t hidden,
                                                 int64_t k) {
  return Candidate{input(key, row * hidden + k), k};
}

// The larger input, the lower index of equal ones. Associative and
// commutative (the inputs are never NaN), so the device's tree over a row
// picks what the host's scan picks: the first largest input.
PIPESCHED_HOST_DEVICE inline Candidate better(Candidate a, Candidate b) {
  return b.value > a.value || (b.value == a.value && b.index < a.index) ? b : a;
}

// Cross-entropy's target of a row: the index of its largest input.
PIPESCHED_HOST_DEVICE inline int64_t ceTarget(uint64_t key, int64_t row, int64_t hidden) {
  Candidate best = candidate(key, row, hidden, 0);
  for (int64_t k = 1; k < hidden; ++k)
    best = better(best, candidate(key, row, hidden, k));
  return best.index;
}

} // namespace pipesched::runtime::datagen
