/*
 * Counter-based random numbers of the pipesched runtime (plain C).
 *
 * Every value is a pure function of (key, counter): any rank, and any model
 * library, regenerates the same inputs, targets and initial weights without
 * communication. A model library that wants the built-in MLP's initial
 * weights uses the same keys (see stage_abi.h).
 */
#ifndef PIPESCHED_RUNTIME_RNG_H
#define PIPESCHED_RUNTIME_RNG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Host and device: compiled by nvcc, the functions are __host__ __device__,
 * so that the CUDA backend generates data on the GPU with the same bits. */
#if defined(__CUDACC__)
#define PIPESCHED_RNG_FN static inline __host__ __device__
#else
#define PIPESCHED_RNG_FN static inline
#endif

/* Key domains: what a key is for. */
enum {
  PIPESCHED_RNG_WEIGHTS = 1, /* key (seed, WEIGHTS, stage, layer) */
  PIPESCHED_RNG_INPUT = 2,   /* key (seed, INPUT, step, microbatch) */
  PIPESCHED_RNG_TARGET = 3   /* key (seed, TARGET, step, microbatch) */
};

/* The splitmix64 finalizer: a bijection that mixes all 64 bits. */
PIPESCHED_RNG_FN uint64_t pipesched_mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

PIPESCHED_RNG_FN uint64_t pipesched_rng_key(uint64_t seed, uint64_t domain,
                                         uint64_t a, uint64_t b) {
  return pipesched_mix64(pipesched_mix64(pipesched_mix64(pipesched_mix64(seed) ^ domain) ^ a) ^ b);
}

/* The counter-th 64-bit value of the stream `key`. */
PIPESCHED_RNG_FN uint64_t pipesched_rng_u64(uint64_t key, uint64_t counter) {
  return pipesched_mix64(key ^ pipesched_mix64(counter));
}

/* Uniform in [-1, 1): 24 random bits, so the value is exact in float. */
PIPESCHED_RNG_FN float pipesched_rng_uniform(uint64_t key, uint64_t counter) {
  return (float)(int32_t)(pipesched_rng_u64(key, counter) >> 40) *
             (1.0f / 8388608.0f) -
         1.0f;
}

#ifdef __cplusplus
}
#endif

#endif /* PIPESCHED_RUNTIME_RNG_H */
