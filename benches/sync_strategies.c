/* How to make n freshly written files durable, measured: the choice of the staging
 * step of a commit (docs/commit-protocol.md, step 4; docs/benchmarks.md, "Sync
 * strategies").
 *
 *   ue-syncs DIR N REPS [SIZE]
 *
 * For each strategy, REPS times: write N files of SIZE bytes (default 4096) into a
 * fresh subdirectory of DIR, then time only making them durable:
 *   seq     fsync each file, one after another (what the fsync floor does)
 *   par4    fsync each file, on 4 threads at once
 *   par8    fsync each file, on 8 threads at once
 *   sfr     sync_file_range(WRITE) on every file (start writeback of all), then
 *           fdatasync each
 *   syncfs  one syncfs(2) on the filesystem (also flushes every other process's data)
 * and print the median and the minimum in microseconds. Built and run by
 * benches/sync_strategies.sh with gcc -O2 -pthread. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int *fds;
static int nfiles;
static int next_index;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void die(const char *what) {
    perror(what);
    exit(1);
}

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void *worker(void *arg) {
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&mu);
        int i = next_index++;
        pthread_mutex_unlock(&mu);
        if (i >= nfiles) return NULL;
        if (fsync(fds[i]) != 0) die("fsync");
    }
}

static void sync_parallel(int threads) {
    pthread_t t[16];
    next_index = 0;
    if (threads > nfiles) threads = nfiles;
    for (int i = 0; i < threads; i++)
        if (pthread_create(&t[i], NULL, worker, NULL) != 0) die("pthread_create");
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: ue-syncs DIR N REPS [SIZE]\n");
        return 2;
    }
    const char *dir = argv[1];
    nfiles = atoi(argv[2]);
    int reps = atoi(argv[3]);
    size_t size = argc > 4 ? (size_t)atol(argv[4]) : 4096;
    char *content = malloc(size);
    for (size_t i = 0; i < size; i++) content[i] = 'a' + (char)(i % 26);
    fds = calloc((size_t)nfiles, sizeof(int));
    const char *names[] = {"seq", "par4", "par8", "sfr", "syncfs"};
    double *times = calloc((size_t)reps, sizeof(double));
    char path[4096];
    for (int s = 0; s < 5; s++) {
        for (int r = 0; r < reps; r++) {
            snprintf(path, sizeof path, "%s/%s-%d", dir, names[s], r);
            if (mkdir(path, 0755) != 0) die("mkdir");
            int dfd = open(path, O_RDONLY | O_DIRECTORY);
            if (dfd < 0) die("open dir");
            for (int i = 0; i < nfiles; i++) {
                char name[32];
                snprintf(name, sizeof name, "f%d", i);
                fds[i] = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL, 0644);
                if (fds[i] < 0) die("open");
                if (write(fds[i], content, size) != (ssize_t)size) die("write");
            }
            double t0 = now_us();
            switch (s) {
            case 0:
                for (int i = 0; i < nfiles; i++)
                    if (fsync(fds[i]) != 0) die("fsync");
                break;
            case 1: sync_parallel(4); break;
            case 2: sync_parallel(8); break;
            case 3:
                for (int i = 0; i < nfiles; i++)
                    if (sync_file_range(fds[i], 0, 0, SYNC_FILE_RANGE_WRITE) != 0)
                        die("sync_file_range");
                for (int i = 0; i < nfiles; i++)
                    if (fdatasync(fds[i]) != 0) die("fdatasync");
                break;
            case 4:
                if (syncfs(dfd) != 0) die("syncfs");
                break;
            }
            times[r] = now_us() - t0;
            for (int i = 0; i < nfiles; i++) close(fds[i]);
            close(dfd);
        }
        qsort(times, (size_t)reps, sizeof(double), cmp);
        printf("%d\t%s\t%.0f\t%.0f\n", nfiles, names[s], times[reps / 2], times[0]);
        fflush(stdout);
    }
    return 0;
}
