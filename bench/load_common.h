/* What the daemons' load generators share (bench_policyd, bench_milter). */
#ifndef SPFKIT_BENCH_LOAD_COMMON_H
#define SPFKIT_BENCH_LOAD_COMMON_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t load_now_ns(void);
/* A connected stream socket to the UNIX socket at path, or -1. */
int load_connect_unix(const char *path);
/* qsort() order of uint64_t samples. */
int load_cmp_u64(const void *a, const void *b);

#endif
