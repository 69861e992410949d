// Google Benchmark entry point for bench/engine_cpu.
#include <benchmark/benchmark.h>

BENCHMARK_MAIN();
