/* origin.c — the Origin and Host checks of `wick serve` (see origin.h). */
#include "serve/origin.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char *const APP_SCHEMES[] = {"app://", "tauri://", "vscode-webview://", "vscode-file://"};

int origin_policy_init(origin_policy *p, const char *patterns, const char *bind_host) {
    memset(p, 0, sizeof *p);
    const char *h = bind_host && *bind_host ? bind_host : "127.0.0.1";
    size_t hl = strlen(h);
    if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') h++, hl -= 2;
    p->check_host = origin_is_loopback_name(h, (int)hl);
    if (hl < sizeof p->bound_host) {
        memcpy(p->bound_host, h, hl);
        p->bound_host[hl] = 0;
    }
    if (gethostname(p->machine, sizeof p->machine) != 0) p->machine[0] = 0;
    p->machine[sizeof p->machine - 1] = 0;
    if (!patterns || !*patterns) return 0;
    if (!(p->list = strdup(patterns))) return -1;
    for (char *save = NULL, *t = strtok_r(p->list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        while (*t == ' ' || *t == '\t') t++;
        char *e = t + strlen(t);
        while (e > t && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '/')) *--e = 0;
        if (!*t) continue;
        if (p->n == ORIGIN_MAX_PATTERNS) {
            origin_policy_free(p);
            return -1;
        }
        p->patterns[p->n++] = t;
    }
    return 0;
}

void origin_policy_free(origin_policy *p) {
    free(p->list);
    p->list = NULL;
    p->n = 0;
}

bool origin_is_loopback_name(const char *name, int len) {
    char buf[256];
    if (len <= 0 || len >= (int)sizeof buf) return false;
    memcpy(buf, name, (size_t)len);
    buf[len] = 0;
    if (strcasecmp(buf, "localhost") == 0) return true;
    if (len > 10 && strcasecmp(buf + len - 10, ".localhost") == 0) return true;
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, buf, &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, buf, &a6) == 1) return IN6_IS_ADDR_LOOPBACK(&a6);
    return false;
}

/* Glob match where '*' stands for any run of characters (case-insensitive). */
static bool glob(const char *pat, const char *s) {
    const char *star = NULL, *mark = NULL;
    while (*s) {
        if (*pat == '*') {
            star = pat++;
            mark = s;
        } else if (*pat && tolower((unsigned char)*pat) == tolower((unsigned char)*s)) {
            pat++;
            s++;
        } else if (star) {
            pat = star + 1;
            s = ++mark;
        } else {
            return false;
        }
    }
    while (*pat == '*') pat++;
    return *pat == 0;
}

/* scheme://host[:port] with a loopback host (or 0.0.0.0), http or https. */
static bool loopback_origin(const char *o) {
    const char *h;
    if (strncasecmp(o, "http://", 7) == 0) h = o + 7;
    else if (strncasecmp(o, "https://", 8) == 0) h = o + 8;
    else return false;
    const char *end;
    if (*h == '[') {
        end = strchr(h, ']');
        if (!end) return false;
        if (!origin_is_loopback_name(h + 1, (int)(end - h - 1))) return false;
        end++;
    } else {
        end = h + strcspn(h, ":/");
        if (!origin_is_loopback_name(h, (int)(end - h)) && !(end - h == 7 && strncmp(h, "0.0.0.0", 7) == 0))
            return false;
    }
    if (*end == ':') {
        end++;
        if (!*end) return false;
        while (*end >= '0' && *end <= '9') end++;
    }
    return *end == 0;
}

bool origin_allowed(const origin_policy *p, const char *origin) {
    if (!origin) return true;
    for (int i = 0; i < p->n; i++)
        if (glob(p->patterns[i], origin)) return true;
    if (loopback_origin(origin)) return true;
    for (size_t i = 0; i < sizeof APP_SCHEMES / sizeof APP_SCHEMES[0]; i++)
        if (strncasecmp(origin, APP_SCHEMES[i], strlen(APP_SCHEMES[i])) == 0) return true;
    return false;
}

bool origin_host_allowed(const origin_policy *p, const char *host) {
    if (!host || !p->check_host) return true;
    const char *end;
    const char *h = host;
    if (*h == '[') {
        end = strchr(h, ']');
        if (!end) return false;
        h++;
    } else {
        end = h + strcspn(h, ":");
    }
    const int len = (int)(end - h);
    if (origin_is_loopback_name(h, len)) return true;
    if (len > 0 && (size_t)len == strlen(p->bound_host) && strncasecmp(h, p->bound_host, (size_t)len) == 0) return true;
    return len > 0 && (size_t)len == strlen(p->machine) && strncasecmp(h, p->machine, (size_t)len) == 0;
}

/* An IP address literal, a loopback name, the bound name or this machine's
 * name: what a DNS-rebinding page cannot pose as. */
static bool address_or_own_name(const origin_policy *p, const char *h, int len) {
    if (len <= 0) return false;
    if (h[0] == '[') return true; /* IPv6 literal */
    bool ip = true;
    for (int i = 0; i < len; i++) ip = ip && ((h[i] >= '0' && h[i] <= '9') || h[i] == '.');
    if (ip || origin_is_loopback_name(h, len)) return true;
    if ((size_t)len == strlen(p->bound_host) && strncasecmp(h, p->bound_host, (size_t)len) == 0) return true;
    return (size_t)len == strlen(p->machine) && strncasecmp(h, p->machine, (size_t)len) == 0;
}

bool origin_same_site(const origin_policy *p, const char *origin, const char *host) {
    if (!origin || !host) return false;
    const char *o = strncasecmp(origin, "http://", 7) == 0 ? origin + 7 : strncasecmp(origin, "https://", 8) == 0 ? origin + 8 : NULL;
    if (!o || strcasecmp(o, host) != 0) return false;
    const int len = host[0] == '[' ? (int)strlen(host) : (int)strcspn(host, ":");
    return address_or_own_name(p, host, len);
}
