// Compiled by build.sh, beside it, for WebAssembly; not by go build (this
// directory holds no Go package).

/*
 * Permission bits for CPython on WASI.
 *
 * WASI's file status has no permission bits and WASI has no chmod, so
 * os.stat's st_mode carried the file's type alone and os.chmod did
 * nothing. The files of /workspace and /tmp are files of the host's, with
 * real modes: the host module "codeport_fs" reports a file's bits and sets
 * them, by absolute guest path, within the same rules as the bash tool's
 * chmod (nothing group- or world-writable, no set-id or sticky bit, a
 * directory keeps its owner's rwx, a mount's root keeps its mode).
 *
 * codeport_stat and codeport_lstat are stat and lstat with the bits filled
 * in; patches/cpython-3.13.5-wasi-filemode.patch makes posixmodule.c call
 * them for os.stat, os.lstat and os.DirEntry.stat. chmod is the libc
 * function wasi-libc lacks (build.sh tells configure it exists). A status
 * taken through a descriptor (os.fstat, or a dir_fd) keeps no bits: the
 * host cannot tell which file a descriptor is.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define IMPORT(name) __attribute__((import_module("codeport_fs"), import_name(#name)))

/* mode(path, len) -> the permission bits of the file at the absolute
 * guest path, or -1 when the host has none to give (outside the mounts,
 * where everything is read-only: r-x for a directory, r-- for a file). */
IMPORT(mode) int32_t codeport_fs_mode(const char *path, uint32_t len);
/* chmod(path, len, mode) -> 0, or the errno (WASI's numbering, which is
 * wasi-libc's) of a refusal. */
IMPORT(chmod) int32_t codeport_fs_chmod(const char *path, uint32_t len, uint32_t mode);

/* absolute writes the guest path of path (relative to the working
 * directory unless absolute) into buf; 0 if it does not fit. The host
 * resolves "." and "..". */
static int absolute(const char *path, char *buf, size_t cap) {
    size_t m = strlen(path);
    if (path[0] == '/') {
        if (m >= cap) {
            return 0;
        }
        memcpy(buf, path, m + 1);
        return 1;
    }
    if (getcwd(buf, cap) == NULL) {
        return 0;
    }
    size_t n = strlen(buf);
    if (n + 1 + m >= cap) {
        return 0;
    }
    if (n == 0 || buf[n - 1] != '/') {
        buf[n++] = '/';
    }
    memcpy(buf + n, path, m + 1);
    return 1;
}

static int with_bits(int r, const char *path, struct stat *st) {
    char abs[PATH_MAX];
    if (r == 0 && absolute(path, abs, sizeof abs)) {
        int32_t bits = codeport_fs_mode(abs, (uint32_t)strlen(abs));
        if (bits < 0) {
            /* Outside the mounts: the system's files, which nothing here
             * can write (shutil.copy copies these bits). */
            bits = S_ISDIR(st->st_mode) ? 0555 : 0444;
        }
        st->st_mode = (st->st_mode & S_IFMT) | (mode_t)(bits & 07777);
    }
    return r;
}

int codeport_stat(const char *path, struct stat *st) {
    return with_bits(stat(path, st), path, st);
}

int codeport_lstat(const char *path, struct stat *st) {
    return with_bits(lstat(path, st), path, st);
}

int chmod(const char *path, mode_t mode) {
    struct stat st;
    char abs[PATH_MAX];
    if (stat(path, &st) != 0) {
        return -1; /* a missing file is ENOENT, as natively */
    }
    if (!absolute(path, abs, sizeof abs)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int32_t e = codeport_fs_chmod(abs, (uint32_t)strlen(abs), (uint32_t)mode & 07777);
    if (e != 0) {
        errno = e;
        return -1;
    }
    return 0;
}
