/* The fsync floor (and the unsafe baseline) of a commit, as a process: the same n
 * files written to temps, fsynced, renamed, directory fsynced; no journal.
 *
 *   ue-floor sync|nosync|pool|like DIR N CONTENT [DIRS]
 *
 * writes CONTENT to a temp beside each target for i < N, renames each onto its target,
 * then fsyncs the directories. The target of file i is DIR/f<i:04>.rs, or with DIRS > 1
 * DIR/d<i % DIRS>/f<i:05>.rs (the directories must exist).
 *
 *   sync    temps written and fsynced one by one, renamed, the directories fsynced
 *   nosync  the same without any fsync (the unsafe baseline)
 *   pool    the temps written and fsynced on 8 threads at once (as ultra-edit's pool,
 *           src/batch/pool.rs), then renamed in order, then the directories fsynced
 *   like    pool with each temp's metadata set as ultra-edit sets it before the fsync
 *           (inherited ACL removed, fchown to the process's ids, fchmod 0644), and the
 *           install as ultra-edit's (src/batch/protocol.rs, step 5):
 *           before each rename the target is opened, read and closed (the pre-image
 *           check), and held by an O_PATH descriptor (the first 256), which are
 *           closed after the directory fsyncs (the completion's drop)
 *
 * Prints one line to stdout: "floor-phases stage=<ms> install=<ms> dirsync=<ms>
 * release=<ms>" (wall ms of each phase). Built by benches/compare.sh and
 * benches/large.py with gcc -O2 -pthread; benches/compare.rs does "sync" in-process. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#define THREADS 8
#define HOLD_MAX 256

static int dfd, n, dirs, sync_on, like;
static const char *content;
static size_t len;
static atomic_int next_i, failed;

static int fail(const char *what) {
    perror(what);
    return 1;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void names(int i, char *tmp, char *dst, size_t cap) {
    if (dirs > 1) {
        snprintf(tmp, cap, "d%d/.floor-%d.tmp", i % dirs, i);
        snprintf(dst, cap, "d%d/f%05d.rs", i % dirs, i);
    } else {
        snprintf(tmp, cap, ".floor-%d.tmp", i);
        snprintf(dst, cap, "f%04d.rs", i);
    }
}

/* One temp: created, written, fsynced (when sync_on), closed. */
static int stage_one(int i) {
    char tmp[64], dst[64];
    names(i, tmp, dst, sizeof tmp);
    int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return fail("open temp");
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, content + off, len - off);
        if (w < 0) return fail("write");
        off += (size_t)w;
    }
    if (like) {
        /* What ultra-edit sets on each temp before its fsync (src/batch/image.rs): the
         * inherited ACL removed, the owner kept, the mode set. */
        if (fremovexattr(fd, "system.posix_acl_access") != 0 && errno != ENODATA &&
            errno != EOPNOTSUPP)
            return fail("fremovexattr");
        if (fchown(fd, geteuid(), getegid()) != 0) return fail("fchown");
        if (fchmod(fd, 0644) != 0) return fail("fchmod");
    }
    if (sync_on && fsync(fd) != 0) return fail("fsync");
    if (close(fd) != 0) return fail("close");
    return 0;
}

static void *worker(void *arg) {
    (void)arg;
    for (;;) {
        int i = atomic_fetch_add(&next_i, 1);
        if (i >= n || atomic_load(&failed)) return NULL;
        if (stage_one(i) != 0) atomic_store(&failed, 1);
    }
}

int main(int argc, char **argv) {
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: ue-floor sync|nosync|pool|like DIR N CONTENT [DIRS]\n");
        return 2;
    }
    const char *mode = argv[1];
    int pool = strcmp(mode, "pool") == 0 || strcmp(mode, "like") == 0;
    like = strcmp(mode, "like") == 0;
    sync_on = strcmp(mode, "nosync") != 0;
    n = atoi(argv[3]);
    content = argv[4];
    len = strlen(content);
    dirs = argc == 6 ? atoi(argv[5]) : 1;
    if (dirs < 1) dirs = 1;
    char tmp[64], dst[64];
    dfd = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return fail("open dir");

    double t0 = now_ms();
    if (pool) {
        pthread_t th[THREADS - 1];
        int started = 0;
        for (; started < THREADS - 1 && started < n - 1; started++)
            if (pthread_create(&th[started], NULL, worker, NULL) != 0) break;
        worker(NULL);
        for (int k = 0; k < started; k++) pthread_join(th[k], NULL);
        if (atomic_load(&failed)) return 1;
    } else {
        for (int i = 0; i < n; i++)
            if (stage_one(i) != 0) return 1;
    }

    double t1 = now_ms();
    int held[HOLD_MAX], nheld = 0;
    char buf[65536];
    for (int i = 0; i < n; i++) {
        names(i, tmp, dst, sizeof tmp);
        if (like) {
            int fd = openat(dfd, dst, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
            if (fd < 0 && errno != ENOENT) return fail("open target");
            if (fd >= 0) {
                while (read(fd, buf, sizeof buf) > 0) {
                }
                close(fd);
            }
            if (fd >= 0 && nheld < HOLD_MAX) {
                int h = openat(dfd, dst, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (h >= 0) held[nheld++] = h;
            }
        }
        if (renameat(dfd, tmp, dfd, dst) != 0) return fail("rename");
    }

    double t2 = now_ms();
    if (sync_on) {
        if (dirs > 1) {
            for (int d = 0; d < dirs; d++) {
                char sub[32];
                snprintf(sub, sizeof sub, "d%d", d);
                int sfd = openat(dfd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (sfd < 0) return fail("open subdir");
                if (fsync(sfd) != 0) return fail("fsync dir");
                close(sfd);
            }
        } else if (fsync(dfd) != 0) {
            return fail("fsync dir");
        }
    }

    double t3 = now_ms();
    for (int k = 0; k < nheld; k++) close(held[k]);
    double t4 = now_ms();
    printf("floor-phases stage=%.1f install=%.1f dirsync=%.1f release=%.1f\n", t1 - t0, t2 - t1,
           t3 - t2, t4 - t3);
    return 0;
}
