// Compiled by build.sh, beside it, for WebAssembly; not by go build (this
// directory holds no Go package).

/*
 * Local time for wasi-libc: the TZ environment variable and tzset().
 *
 * wasi-libc's localtime_r, mktime and strftime ask three internal symbols
 * of musl's time-zone code for the zone: __secs_to_zone, __tm_to_tzname and
 * __utc. wasi-libc's own definitions answer UTC always, and it has no
 * tzset, so CPython builds without time.tzset and ignores TZ. This file
 * defines those symbols (so the linker never takes wasi-libc's object that
 * holds them) and tzset, reading TZ as glibc does:
 *
 *   - unset or empty: UTC;
 *   - a zone name such as "Europe/Paris" (optionally after ':'): the TZif
 *     file of that name in the tzdata package of the standard library zip,
 *     the same bytes zoneinfo reads (there is no /usr/share/zoneinfo in the
 *     guest); an absolute path: that file;
 *   - otherwise a POSIX rule such as "EST+05EDT,M4.1.0,M10.5.0"; as glibc,
 *     a name without an offset ("Luna/Tycho" gives "Luna") is UTC under
 *     that name.
 *
 * TZ is read again at every conversion when its value changed, as musl
 * does, and tzset() does the same. The guest is single-threaded: no lock.
 * Every byte of TZ and of a TZif file is untrusted (a program sets TZ and
 * can write the file an absolute path names): counts and indexes are
 * checked against the data before use and a file is read up to a bound.
 */
#define _GNU_SOURCE /* struct tm's tm_gmtoff and tm_zone, strdup */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zlib.h>

#ifndef CODEPORT_TZ_ZIP
#define CODEPORT_TZ_ZIP "/usr/local/lib/python313.zip"
#endif
#define TZ_ZIP_PREFIX "tzdata/zoneinfo/"
/* The largest TZif file read (the largest in tzdata is under 4 KiB). */
#define TZ_MAX_FILE (256 * 1024)
/* The longest TZ value considered; longer ones are UTC. */
#define TZ_MAX_SPEC 1024

#ifdef CODEPORT_TZ_TEST
/* The native test harness calls these under other names beside glibc's. */
#define __secs_to_zone codeport_secs_to_zone
#define __tm_to_tzname codeport_tm_to_tzname
#define __utc codeport_utc
#define tzset codeport_tzset
#endif

const char __utc[] = "UTC";

/* A POSIX rule's date: Jn (1-365, February 29 never counted), n (0-365)
 * or Mm.w.d; and the time of day, in seconds, at which it applies. */
struct rule {
    char kind; /* 'J', 'N' or 'M' */
    int month, week, day;
    long time;
};

struct ttype {
    int32_t off; /* seconds east of UTC */
    int isdst;
    const char *name;
};

/* The zone in force: transitions from a TZif file (possibly none), then a
 * POSIX rule for all later times (the TZif footer, or TZ itself). */
static struct {
    char *spec;      /* the TZ value this was built from; NULL: unset */
    int valid;       /* built at least once */
    char *pool;      /* every name below points in here */
    size_t pool_len, pool_cap;
    int64_t *times;  /* transition instants, increasing */
    unsigned char *idx;
    size_t ntimes;
    struct ttype *types;
    size_t ntypes;
    int has_rule;
    struct ttype std, dst;
    int has_dst;
    struct rule start, end;
} zone;

/* ---- names ---- */

static const char *pool_add(const char *s, size_t n) {
    if (zone.pool_len + n + 1 > zone.pool_cap) {
        return NULL;
    }
    char *p = zone.pool + zone.pool_len;
    memcpy(p, s, n);
    p[n] = '\0';
    zone.pool_len += n + 1;
    return p;
}

/* ---- POSIX TZ rules ---- */

/* parse_name reads a zone name: letters, or <...> of letters, digits and
 * signs. Returns the end, or NULL. */
static const char *parse_name(const char *s, const char **name, size_t *len) {
    if (*s == '<') {
        const char *p = ++s;
        while ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
               *p == '+' || *p == '-') {
            p++;
        }
        if (*p != '>' || p == s) {
            return NULL;
        }
        *name = s;
        *len = (size_t)(p - s);
        return p + 1;
    }
    const char *p = s;
    while ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z')) {
        p++;
    }
    if (p == s) {
        return NULL;
    }
    *name = s;
    *len = (size_t)(p - s);
    return p;
}

/* parse_num reads up to two decimal digits (three for hours when wide),
 * at most max. */
static const char *parse_num(const char *s, int digits, long max, long *out) {
    long v = 0;
    int n = 0;
    while (n < digits && *s >= '0' && *s <= '9') {
        v = v * 10 + (*s++ - '0');
        n++;
    }
    if (n == 0 || v > max) {
        return NULL;
    }
    *out = v;
    return s;
}

/* parse_hms reads [+-]hh[:mm[:ss]] with hours up to max_hours, as seconds. */
static const char *parse_hms(const char *s, long max_hours, long *out) {
    long sign = 1, h, m = 0, sec = 0;
    if (*s == '+' || *s == '-') {
        sign = *s++ == '-' ? -1 : 1;
    }
    if ((s = parse_num(s, 3, max_hours, &h)) == NULL) {
        return NULL;
    }
    if (*s == ':') {
        if ((s = parse_num(s + 1, 2, 59, &m)) == NULL) {
            return NULL;
        }
        if (*s == ':' && (s = parse_num(s + 1, 2, 59, &sec)) == NULL) {
            return NULL;
        }
    }
    *out = sign * (h * 3600 + m * 60 + sec);
    return s;
}

static const char *parse_rule(const char *s, struct rule *r) {
    long a, b, c;
    if (*s == 'M') {
        if ((s = parse_num(s + 1, 2, 12, &a)) == NULL || a < 1 || *s != '.' ||
            (s = parse_num(s + 1, 1, 5, &b)) == NULL || b < 1 || *s != '.' ||
            (s = parse_num(s + 1, 1, 6, &c)) == NULL) {
            return NULL;
        }
        r->kind = 'M';
        r->month = (int)a;
        r->week = (int)b;
        r->day = (int)c;
    } else if (*s == 'J') {
        if ((s = parse_num(s + 1, 3, 365, &a)) == NULL || a < 1) {
            return NULL;
        }
        r->kind = 'J';
        r->day = (int)a;
    } else {
        if ((s = parse_num(s, 3, 365, &a)) == NULL) {
            return NULL;
        }
        r->kind = 'N';
        r->day = (int)a;
    }
    r->time = 7200;
    if (*s == '/' && (s = parse_hms(s + 1, 167, &r->time)) == NULL) {
        return NULL;
    }
    return s;
}

/* parse_posix sets zone's rule from s. Lenient as glibc: a name without a
 * valid offset is that name at UTC, and a malformed daylight-saving part
 * leaves standard time only. Returns 0 if s does not start with a name. */
static int parse_posix(const char *s) {
    const char *name;
    size_t len;
    long off;
    s = parse_name(s, &name, &len);
    if (s == NULL) {
        return 0;
    }
    zone.has_rule = 1;
    zone.has_dst = 0;
    zone.std.isdst = 0;
    zone.std.name = pool_add(name, len);
    zone.std.off = 0;
    if ((s = parse_hms(s, 24, &off)) == NULL) {
        return 1;
    }
    zone.std.off = (int32_t)-off; /* POSIX offsets are west of UTC */
    struct ttype dst = {zone.std.off + 3600, 1, NULL};
    const char *p = parse_name(s, &name, &len);
    if (p == NULL) {
        return 1;
    }
    s = p;
    if (*s != ',' && *s != '\0') {
        if ((s = parse_hms(s, 24, &off)) == NULL) {
            return 1;
        }
        dst.off = (int32_t)-off;
    }
    struct rule start = {'M', 3, 2, 0, 7200}, end = {'M', 11, 1, 0, 7200};
    if (*s == ',') {
        if ((s = parse_rule(s + 1, &start)) == NULL || *s != ',' ||
            (s = parse_rule(s + 1, &end)) == NULL) {
            return 1;
        }
    }
    if (*s != '\0') {
        return 1;
    }
    dst.name = pool_add(name, len);
    zone.dst = dst;
    zone.start = start;
    zone.end = end;
    zone.has_dst = 1;
    return 1;
}

/* ---- calendar ---- */

static int is_leap(int64_t y) {
    return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

/* days_from_civil: days since 1970-01-01 of a proleptic Gregorian date. */
static int64_t days_from_civil(int64_t y, int m, int d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int64_t year_of(int64_t t) {
    int64_t days = t / 86400 - (t % 86400 < 0);
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    return yoe + era * 400 + (mp >= 10);
}

/* rule_local: the rule's moment in year y, in seconds since the epoch of
 * the local clock then in force. */
static int64_t rule_local(int64_t y, const struct rule *r) {
    int64_t days;
    if (r->kind == 'J') {
        days = days_from_civil(y, 1, 1) + r->day - 1 + (is_leap(y) && r->day >= 60);
    } else if (r->kind == 'N') {
        days = days_from_civil(y, 1, 1) + r->day;
    } else {
        static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        int64_t first = days_from_civil(y, r->month, 1);
        int wday = (int)(((first + 4) % 7 + 7) % 7); /* 1970-01-01 was a Thursday */
        int64_t d = (r->day - wday + 7) % 7 + 7 * (r->week - 1);
        int len = mdays[r->month - 1] + (r->month == 2 && is_leap(y));
        while (d >= len) {
            d -= 7;
        }
        days = first + d;
    }
    return days * 86400 + r->time;
}

/* rule_at: the rule's local time type at instant t (UTC). */
static const struct ttype *rule_at(int64_t t, const struct ttype **opp) {
    if (!zone.has_dst) {
        *opp = &zone.std;
        return &zone.std;
    }
    int64_t y = year_of(t + zone.std.off);
    int64_t start = rule_local(y, &zone.start) - zone.std.off;
    int64_t end = rule_local(y, &zone.end) - zone.dst.off;
    int in_dst = start < end ? (t >= start && t < end) : !(t >= end && t < start);
    *opp = in_dst ? &zone.std : &zone.dst;
    return in_dst ? &zone.dst : &zone.std;
}

/* ---- TZif ---- */

static uint32_t be32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const unsigned char *p) {
    return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

/* parse_tzif sets zone from a TZif file's bytes; 0 if they are not one. */
static int parse_tzif(const unsigned char *d, size_t n) {
    if (n < 44 || memcmp(d, "TZif", 4) != 0) {
        return 0;
    }
    int v2 = d[4] >= '2';
    size_t tsize = 4;
    const unsigned char *h = d, *end = d + n;
    for (int pass = 0; pass < 1 + v2; pass++) {
        if ((size_t)(end - h) < 44 || memcmp(h, "TZif", 4) != 0) {
            return 0;
        }
        uint32_t isut = be32(h + 20), isstd = be32(h + 24), leap = be32(h + 28), tcnt = be32(h + 32),
                 tycnt = be32(h + 36), ccnt = be32(h + 40);
        uint64_t body = (uint64_t)tcnt * (tsize + 1) + (uint64_t)tycnt * 6 + ccnt +
                        (uint64_t)leap * (tsize + 4) + isstd + isut;
        if (body > (uint64_t)(end - h - 44)) {
            return 0;
        }
        if (pass == 0 && v2) {
            h += 44 + body;
            tsize = 8;
            continue;
        }
        if (tycnt == 0 || tycnt > 256 || ccnt == 0) {
            return 0;
        }
        const unsigned char *times = h + 44, *idx = times + (size_t)tcnt * tsize,
                            *types = idx + tcnt, *chars = types + (size_t)tycnt * 6;
        const unsigned char *footer = h + 44 + body;
        size_t flen = 0;
        if (v2) {
            /* "\n" rule "\n" */
            if (footer >= end || *footer != '\n') {
                return 0;
            }
            const unsigned char *nl = memchr(footer + 1, '\n', (size_t)(end - footer - 1));
            if (nl == NULL) {
                return 0;
            }
            flen = (size_t)(nl - footer - 1);
            footer++;
        }
        size_t cap = ccnt + 1 + 2 * (flen + 1);
        zone.pool = malloc(cap);
        zone.times = malloc(tcnt ? tcnt * sizeof(int64_t) : 1);
        zone.idx = malloc(tcnt ? tcnt : 1);
        zone.types = malloc(tycnt * sizeof(struct ttype));
        if (zone.pool == NULL || zone.times == NULL || zone.idx == NULL || zone.types == NULL) {
            return 0;
        }
        zone.pool_cap = cap;
        zone.pool_len = 0;
        const char *names = pool_add((const char *)chars, ccnt);
        for (uint32_t i = 0; i < tcnt; i++) {
            zone.times[i] = tsize == 8 ? be64(times + 8 * i) : (int32_t)be32(times + 4 * i);
            if (idx[i] >= tycnt || (i > 0 && zone.times[i] <= zone.times[i - 1])) {
                return 0;
            }
            zone.idx[i] = idx[i];
        }
        for (uint32_t i = 0; i < tycnt; i++) {
            const unsigned char *ty = types + 6 * i;
            int32_t off = (int32_t)be32(ty);
            if (ty[5] >= ccnt || off <= -25 * 3600 || off >= 26 * 3600) {
                return 0;
            }
            zone.types[i].off = off;
            zone.types[i].isdst = ty[4] != 0;
            zone.types[i].name = names + ty[5];
        }
        zone.ntimes = tcnt;
        zone.ntypes = tycnt;
        if (flen > 0) {
            char rule[TZ_MAX_SPEC + 1];
            if (flen > TZ_MAX_SPEC) {
                return 0;
            }
            memcpy(rule, footer, flen);
            rule[flen] = '\0';
            parse_posix(rule);
        }
        return 1;
    }
    return 0;
}

/* ---- reading the file ---- */

static unsigned char *read_all(FILE *f, size_t *n) {
    unsigned char *d = malloc(TZ_MAX_FILE + 1);
    if (d == NULL) {
        return NULL;
    }
    *n = fread(d, 1, TZ_MAX_FILE + 1, f);
    if (*n > TZ_MAX_FILE || ferror(f)) {
        free(d);
        return NULL;
    }
    return d;
}

static uint16_t le16(const unsigned char *p) {
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* zip_read returns the bytes of member name of the zip at path (stored or
 * deflated, CRC checked), or NULL. */
static unsigned char *zip_read(const char *path, const char *name, size_t *out_len) {
    FILE *f = fopen(path, "rb");
    unsigned char *tail = NULL, *cd = NULL, *raw = NULL, *data = NULL;
    if (f == NULL) {
        return NULL;
    }
    /* The end of central directory record, and a comment of up to 64 KiB. */
    const long tail_max = 22 + 0xffff;
    long size;
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 22 || (tail = malloc(tail_max)) == NULL) {
        goto fail;
    }
    long tail_len = size < tail_max ? size : tail_max;
    if (fseek(f, size - tail_len, SEEK_SET) != 0 || fread(tail, 1, (size_t)tail_len, f) != (size_t)tail_len) {
        goto fail;
    }
    const unsigned char *eocd = NULL;
    for (long i = tail_len - 22; i >= 0; i--) {
        if (le32(tail + i) == 0x06054b50) {
            eocd = tail + i;
            break;
        }
    }
    if (eocd == NULL) {
        goto fail;
    }
    uint32_t cd_size = le32(eocd + 12), cd_off = le32(eocd + 16);
    if ((uint64_t)cd_off + cd_size > (uint64_t)size || (cd = malloc(cd_size ? cd_size : 1)) == NULL ||
        fseek(f, (long)cd_off, SEEK_SET) != 0 || fread(cd, 1, cd_size, f) != cd_size) {
        goto fail;
    }
    size_t name_len = strlen(name);
    for (uint32_t p = 0; p + 46 <= cd_size;) {
        const unsigned char *e = cd + p;
        if (le32(e) != 0x02014b50) {
            goto fail;
        }
        uint16_t nlen = le16(e + 28), elen = le16(e + 30), clen = le16(e + 32);
        if ((uint64_t)p + 46 + nlen + elen + clen > cd_size) {
            goto fail;
        }
        if (nlen == name_len && memcmp(e + 46, name, name_len) == 0) {
            uint16_t method = le16(e + 10);
            uint32_t crc = le32(e + 16), csize = le32(e + 20), usize = le32(e + 24), lho = le32(e + 42);
            unsigned char lh[30];
            if ((method != 0 && method != 8) || usize > TZ_MAX_FILE || csize > TZ_MAX_FILE ||
                fseek(f, (long)lho, SEEK_SET) != 0 || fread(lh, 1, 30, f) != 30 || le32(lh) != 0x04034b50 ||
                fseek(f, (long)lho + 30 + le16(lh + 26) + le16(lh + 28), SEEK_SET) != 0 ||
                (raw = malloc(csize ? csize : 1)) == NULL || fread(raw, 1, csize, f) != csize ||
                (data = malloc(usize ? usize : 1)) == NULL) {
                goto fail;
            }
            if (method == 0) {
                if (csize != usize) {
                    goto fail;
                }
                memcpy(data, raw, usize);
            } else {
                z_stream zs;
                memset(&zs, 0, sizeof zs);
                if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) {
                    goto fail;
                }
                zs.next_in = raw;
                zs.avail_in = csize;
                zs.next_out = data;
                zs.avail_out = usize;
                int rc = inflate(&zs, Z_FINISH);
                uLong got = zs.total_out;
                inflateEnd(&zs);
                if (rc != Z_STREAM_END || got != usize) {
                    goto fail;
                }
            }
            if (crc32(crc32(0L, Z_NULL, 0), data, usize) != crc) {
                goto fail;
            }
            free(raw);
            free(cd);
            free(tail);
            fclose(f);
            *out_len = usize;
            return data;
        }
        p += 46 + nlen + elen + clen;
    }
fail:
    free(data);
    free(raw);
    free(cd);
    free(tail);
    fclose(f);
    return NULL;
}

/* valid_key: a zone key as zoneinfo accepts it, relative, no "." or ".."
 * component, nothing but the characters IANA names use. */
static int valid_key(const char *k) {
    size_t n = strlen(k);
    if (n == 0 || n > 255 || k[0] == '/' || k[n - 1] == '/') {
        return 0;
    }
    for (const char *c = k; *c; c++) {
        if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
              *c == '/' || *c == '_' || *c == '-' || *c == '+' || *c == '.')) {
            return 0;
        }
        if (*c == '.' && (c == k || c[-1] == '/')) {
            return 0;
        }
    }
    return 1;
}

/* load_file tries spec as a zone name or an absolute path. */
static unsigned char *load_file(const char *s, size_t *n) {
    if (*s == ':') {
        s++;
    }
    if (*s == '/') {
        FILE *f = fopen(s, "rb");
        if (f == NULL) {
            return NULL;
        }
        unsigned char *d = read_all(f, n);
        fclose(f);
        return d;
    }
    if (!valid_key(s)) {
        return NULL;
    }
    char member[sizeof TZ_ZIP_PREFIX + 256];
    snprintf(member, sizeof member, "%s%s", TZ_ZIP_PREFIX, s);
    return zip_read(CODEPORT_TZ_ZIP, member, n);
}

/* ---- the state ---- */

/* clear frees the zone built, keeping what it was built from. */
static void clear(void) {
    free(zone.pool);
    free(zone.times);
    free(zone.idx);
    free(zone.types);
    char *spec = zone.spec;
    int valid = zone.valid;
    memset(&zone, 0, sizeof zone);
    zone.spec = spec;
    zone.valid = valid;
}

static void set_utc(void) {
    clear();
    zone.has_rule = 1;
    zone.std.name = __utc;
}

/* do_tzset rebuilds zone if TZ changed since it was last built. */
static void do_tzset(void) {
    const char *s = getenv("TZ");
    if (zone.valid && (s == NULL ? zone.spec == NULL : (zone.spec != NULL && strcmp(s, zone.spec) == 0))) {
        return;
    }
    free(zone.spec);
    zone.spec = s == NULL ? NULL : strdup(s);
    zone.valid = 1;
    if (s == NULL || *s == '\0' || zone.spec == NULL || strlen(s) > TZ_MAX_SPEC) {
        set_utc();
        return;
    }
    size_t n;
    unsigned char *d = load_file(s, &n);
    if (d != NULL) {
        clear();
        int ok = parse_tzif(d, n);
        free(d);
        if (ok) {
            return;
        }
    }
    /* Names (and paths) that are not a POSIX rule were tried as files. */
    clear();
    zone.pool_cap = strlen(s) + 2;
    if ((zone.pool = malloc(zone.pool_cap)) == NULL || !parse_posix(*s == ':' ? s + 1 : s)) {
        set_utc();
    }
}

void tzset(void) {
    do_tzset();
}

/* type_at: the local time type at instant t (UTC), and the nearest one on
 * the other side of daylight saving time (mktime's oppoff). */
static const struct ttype *type_at(int64_t t, const struct ttype **opp) {
    size_t n = zone.ntimes;
    if (n == 0 || t >= zone.times[n - 1]) {
        if (zone.has_rule) {
            return rule_at(t, opp);
        }
        if (n == 0) {
            *opp = &zone.types[0];
            return &zone.types[0];
        }
    }
    const struct ttype *ty;
    size_t i = 0;
    if (t < zone.times[0]) {
        ty = &zone.types[0];
    } else {
        size_t lo = 0, hi = n; /* times[lo] <= t < times[hi] */
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if (zone.times[mid] <= t) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        i = lo;
        ty = &zone.types[zone.idx[i]];
    }
    *opp = ty;
    for (size_t k = 1; k <= 8; k++) {
        if (i >= k && zone.types[zone.idx[i - k]].isdst != ty->isdst) {
            *opp = &zone.types[zone.idx[i - k]];
            break;
        }
        if (i + k < n && zone.types[zone.idx[i + k]].isdst != ty->isdst) {
            *opp = &zone.types[zone.idx[i + k]];
            break;
        }
    }
    return ty;
}

/* __secs_to_zone (musl's internal interface): the zone at t, an instant
 * (local = 0) or a reading of the local clock (local = 1, for mktime; in a
 * gap the offset before it, so that mktime moves the reading forward as
 * glibc does). */
void __secs_to_zone(long long t, int local, int *isdst, long *offset, long *oppoff, const char **zonename) {
    do_tzset();
    const struct ttype *ty, *opp;
    if (local) {
        const struct ttype *first = type_at(t, &opp);
        const struct ttype *guess = type_at(t - first->off, &opp);
        ty = type_at(t - guess->off, &opp);
    } else {
        ty = type_at(t, &opp);
    }
    *isdst = ty->isdst;
    *offset = ty->off;
    if (oppoff != NULL) {
        *oppoff = opp->off;
    }
    *zonename = ty->name != NULL ? ty->name : __utc;
}

/* __tm_to_tzname (musl's internal interface): strftime's %Z, the name
 * the struct carries, as glibc gives it (musl gives "" for a name it did
 * not hand out, and CPython's time.strftime passes its own), or without
 * one the zone's name for the struct's tm_isdst. */
const char *__tm_to_tzname(const struct tm *tm) {
    if (tm->tm_zone != NULL) {
        return tm->tm_zone;
    }
    do_tzset();
    const char *name;
    if (zone.has_rule) {
        name = tm->tm_isdst > 0 && zone.has_dst ? zone.dst.name : zone.std.name;
    } else { /* a TZif file without a rule: its last type (parse_tzif ensures one) */
        name = zone.types[zone.ntimes > 0 ? zone.idx[zone.ntimes - 1] : 0].name;
    }
    return name != NULL ? name : __utc;
}
