/* tool_parse_int.h — the parts of tool_parse.c's parser that its helper
 * files share: the parser's state, the event senders, the incremental JSON
 * reader of call objects (tool_parse_json.c), the reader of Llama's
 * built-in tool code (tool_parse_py.c) and of the XML form of calls
 * (tool_parse_xml.c). Not for use outside src/serve/tool_parse*.c. */
#ifndef WICK_SERVE_TOOL_PARSE_INT_H
#define WICK_SERVE_TOOL_PARSE_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "serve/tool_parse.h"

/* One open JSON container (or the top level, kind 'T'). */
typedef struct tp_frame {
    unsigned char kind;  /* 'T', '{', '[' */
    unsigned char st;    /* what comes next (TPS_*) */
    unsigned char key;   /* objects: the key of the value being read (TPK_*) */
    unsigned char role;  /* TPR_*: what the container means for the calls */
    unsigned char vtype; /* the type of the value being read: '"', '{', '[', 'b' (bare) */
    size_t vstart;       /* where that value starts in the call text */
} tp_frame;

/* The call object being read. */
typedef struct tp_call {
    bool open;       /* a call object is being read */
    bool begun;      /* CALL_BEGIN was sent */
    bool args_key;   /* its "arguments"/"parameters" key was seen */
    bool has_name, has_id;
    size_t owner;    /* stack index of its object */
    wbuf name, id;
    bool args_set, args_done;
    unsigned char args_type; /* '{', '[', '"', 'b' */
    size_t args_start, args_end, args_sent; /* offsets in the call text */
    wbuf acc;        /* the arguments text sent so far */
} tp_call;

struct tool_parser {
    tool_format f;
    tool_parse_opts o;
    int mode;
    wbuf pend;  /* bytes fed and not yet decided */
    size_t pos; /* how much of pend was consumed */
    wbuf ws;    /* content whitespace held back (it goes away if a call follows) */
    wbuf rws;   /* reasoning whitespace held back (dropped before the close tag) */
    bool drop_ws, bare_start, rsn_started, final;
    int rc; /* a callback's nonzero return or -1 (out of memory): sticky */
    tool_ev_fn fn;
    void *user;
    int n_calls;
    char idbuf[48];

    /* a call region: the raw text since its tag (or its first byte) */
    wbuf cb;
    size_t json_base, py_start;
    wbuf mname, mid; /* Mistral's name and id; the XML form's name or key, and value */
    bool x_in_name, x_any; /* XML: past "<function="; a parameter was sent */

    /* the JSON reader */
    tp_frame *stk;
    size_t nstk, capstk;
    bool in_str, esc, in_bare, str_key;
    size_t kstart;
    bool args_mode; /* the top value is the arguments of the begun call */
    bool tagged;    /* a call tag came first: a name is enough to begin */
    bool any_begun; /* a call began in this region */
    tp_call c;
};

/* What the parser is reading. */
enum {
    M_TEXT, M_REASON,
    M_AFTER_TAG, /* after a call tag: what the call's syntax is */
    M_JSON,      /* JSON of calls (tool_parse_json.c) */
    M_CLOSE,     /* Hermes: </tool_call> */
    M_SEP,       /* Llama: ';' before another call */
    M_MNAME, M_MID, /* Mistral: name[CALL_ID]id[ARGS] */
    M_PY,        /* Llama: <|python_tag|> code, read at the end */
    M_XNAME, M_XBODY, M_XPKEY, M_XPVAL, /* <function=name><parameter=key>value... (tool_parse_xml.c) */
};

enum { TPJ_MORE, TPJ_DONE, TPJ_DONE_BACK, TPJ_ERR }; /* tp_json_byte's answers */

/* Events (they record a callback's stop in p->rc). */
void tp_emit(tool_parser *p, tool_ev_kind k, const char *s, size_t n);
void tp_content(tool_parser *p, const char *s, size_t n);
/* A call with this name starts: id NULL = a generated one. */
void tp_call_begin(tool_parser *p, const char *name, const char *id);
void tp_call_args(tool_parser *p, const char *s, size_t n);
void tp_call_end(tool_parser *p);

/* The tag at s[0, n): 2 whole, 1 a prefix cut by the end of the pending
 * text (0 once the turn ended), 0 no. */
int tp_tag_at(const tool_parser *p, const char *s, size_t n, const char *tag);
void tp_put_cb(tool_parser *p, const char *s, size_t n); /* to the call region's raw text */
/* The call region failed before any call began: its raw text is content. */
void tp_release_region(tool_parser *p);
/* Calls ended: content again, after whitespace. */
void tp_after_calls(tool_parser *p);

/* The XML form, one step at p->pos (false: wait for more text); and the
 * end of the turn inside it. */
bool tp_step_xml(tool_parser *p);
void tp_xml_end(tool_parser *p);

/* The JSON reader over p->cb from p->json_base. args_mode: the value read
 * is the arguments of a call the caller begins right after. */
void tp_json_start(tool_parser *p, bool args_mode, bool tagged);
/* The byte at p->cb.data[p->cb.len - 1]: TPJ_DONE_BACK and TPJ_ERR leave
 * that byte unread (the caller takes it off cb). */
int tp_json_byte(tool_parser *p);
/* Send the arguments read so far of a begun call. */
void tp_json_flush(tool_parser *p);
/* The text ended inside the JSON: close a bare value that may be complete
 * and end a begun call with what arrived. */
void tp_json_finish(tool_parser *p);
void tp_json_free(tool_parser *p);

/* Llama's <|python_tag|> text that is no JSON: a call name.call(k=v, ...)
 * or else code for "python"; sends the call's events. */
void tp_py_call(tool_parser *p, const char *s, size_t n);

static inline bool tp_isws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

#endif
