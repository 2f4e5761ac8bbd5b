/* origin.h — which browser origins and Host names `wick serve` answers, as
 * Ollama decides it: a key-less server on a loopback address must not be
 * usable by any web page the user happens to open (cross-site requests) nor
 * by a name that resolves to it (DNS rebinding).
 *  - Origin (sent by browsers): allowed when it is a loopback origin
 *    (http/https on localhost, *.localhost, 127.0.0.0/8, [::1], 0.0.0.0, any
 *    port), a desktop-app scheme (app:, tauri:, vscode-webview:,
 *    vscode-file:), or matches a pattern of --allowed-origins / WICK_ORIGINS
 *    ("*" matches any run: "*.example.com", "http://host:*", "*"). "null"
 *    (sandboxed frames, file pages) is never allowed by default.
 *  - Host: while the server listens on a loopback address, only loopback
 *    names and addresses, the name it was bound to and the machine's own
 *    host name are answered. */
#ifndef WICK_SERVE_ORIGIN_H
#define WICK_SERVE_ORIGIN_H

#include <stdbool.h>

#define ORIGIN_MAX_PATTERNS 32

typedef struct origin_policy {
    const char *patterns[ORIGIN_MAX_PATTERNS]; /* point into list (owned) */
    int n;
    char *list;          /* the comma-separated patterns, split in place */
    bool check_host;     /* bound to a loopback address */
    char bound_host[256];
    char machine[256];   /* this machine's host name (also answered) */
} origin_policy;

/* patterns: comma-separated (NULL = none beyond the defaults). -1 if there
 * are too many. */
int origin_policy_init(origin_policy *p, const char *patterns, const char *bind_host);
void origin_policy_free(origin_policy *p);

bool origin_allowed(const origin_policy *p, const char *origin);
/* A page this server sent making a request to it: origin is http(s)://
 * followed by exactly the Host header, and that host is an IP address, a
 * loopback name, the bound name or the machine's name (a name a
 * DNS-rebinding page cannot take). The web chat opened at a LAN address. */
bool origin_same_site(const origin_policy *p, const char *origin, const char *host);
/* host: the Host header (NULL = absent, allowed: HTTP/1.0). */
bool origin_host_allowed(const origin_policy *p, const char *host);
/* True for a loopback host name or address (no port). */
bool origin_is_loopback_name(const char *name, int len);

#endif
