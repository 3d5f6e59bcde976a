/* The fsync floor (and the unsafe baseline) of a commit, as a process: the same n
 * files written to temps, fsynced, renamed, directory fsynced; no journal.
 *
 *   ue-floor sync|nosync DIR N CONTENT
 *
 * writes CONTENT to DIR/.floor-<i>.tmp for i < N (fsync each when "sync"), renames each
 * to DIR/f<i:04>.rs, then fsyncs DIR (when "sync"). Built by benches/compare.sh with
 * gcc -O2; benches/compare.rs does the same in-process. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fail(const char *what) {
    perror(what);
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: ue-floor sync|nosync DIR N CONTENT\n");
        return 2;
    }
    int sync = strcmp(argv[1], "sync") == 0;
    int n = atoi(argv[3]);
    const char *content = argv[4];
    size_t len = strlen(content);
    char tmp[64], dst[64];
    int dfd = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return fail("open dir");
    for (int i = 0; i < n; i++) {
        snprintf(tmp, sizeof tmp, ".floor-%d.tmp", i);
        int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0) return fail("open temp");
        for (size_t off = 0; off < len;) {
            ssize_t w = write(fd, content + off, len - off);
            if (w < 0) return fail("write");
            off += (size_t)w;
        }
        if (sync && fsync(fd) != 0) return fail("fsync");
        if (close(fd) != 0) return fail("close");
    }
    for (int i = 0; i < n; i++) {
        snprintf(tmp, sizeof tmp, ".floor-%d.tmp", i);
        snprintf(dst, sizeof dst, "f%04d.rs", i);
        if (renameat(dfd, tmp, dfd, dst) != 0) return fail("rename");
    }
    if (sync && fsync(dfd) != 0) return fail("fsync dir");
    return 0;
}
