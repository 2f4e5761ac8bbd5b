#!/usr/bin/env python3
"""serve_ctx_shift.py — the checks of tests/serve_ctx_shift.test.sh: context
shift (`wick serve --context-shift`, llama-server's) on stories260K with
-c 256 -np 2 (128 positions per sequence). One line per check; the last line
is "NAME: P passed, F failed".

  --part shift URL   on a server with --context-shift: llama.cpp's suite case
                     (a 301-token prompt, n_predict 64: prompt_n 109,
                     predicted_n 64, truncated); the truncated prompt is the
                     one llama-server's block arithmetic keeps (its output =
                     that prompt's, sent as ids); after a generation shift the
                     rest of the output = the output of a fresh request whose
                     prompt is exactly the kept tokens (n_keep, n_discard, the
                     BOS kept as llama-server keeps it); /v1/completions, chat
                     and a stream answer a long prompt too
  --part off URL     without the flag nothing changes: a long prompt is a 400
                     "exceeds the available context size", n_keep is refused,
                     a short prompt with n_predict -1 ends at the full context
"""
import json
import sys
import urllib.error
import urllib.request

PASS = FAIL = 0
N_CTX = 128  # -c 256 -np 2

LONG_TEXT = """
Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.
Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat.
Duis aute irure dolor in reprehenderit in voluptate velit esse cillum dolore eu fugiat nulla pariatur.
Excepteur sint occaecat cupidatat non proident, sunt in culpa qui officia deserunt mollit anim id est laborum.
""".strip()


def ok(what):
    global PASS
    PASS += 1
    print("ok:", what)


def bad(what):
    global FAIL
    FAIL += 1
    print("FAIL:", what)


def expect(what, got, want):
    if got == want:
        ok(what)
    else:
        bad(f"{what}\n  got:  {got!r}\n  want: {want!r}")


def call(url, path, body=None, raw=False):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url + path, data=data, method="POST" if body is not None else "GET")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            text = r.read().decode()
            return r.status, text if raw else json.loads(text)
    except urllib.error.HTTPError as e:
        text = e.read().decode()
        try:
            return e.code, json.loads(text)
        except ValueError:
            return e.code, text


def greedy(url, prompt, n_predict, **extra):
    body = {"prompt": prompt, "n_predict": n_predict, "temperature": 0, "return_tokens": True, "ignore_eos": True}
    body.update(extra)
    return call(url, "/completion", body)


def truncate(ids, n_keep):
    """llama-server's prompt truncation (n_prompt >= n_ctx)."""
    n_left = N_CTX - n_keep
    block = n_left // 2
    erased = (len(ids) - n_keep - block) // block
    return ids[:n_keep] + ids[n_keep + erased * block:]


def shift(hist, n_keep, n_discard):
    """llama-server's generation shift of a full history (n_past + 1 = n_ctx);
    n_keep counts the BOS the model adds."""
    n_past = len(hist) - 1
    n_left = n_past - n_keep
    d = n_discard or n_left // 2
    return hist[:n_keep] + hist[n_keep + d:], d


def part_shift(url):
    st, tk = call(url, "/tokenize", {"content": LONG_TEXT, "add_special": True})
    ids = tk["tokens"]
    expect("the long prompt is 301 tokens (with BOS)", len(ids), 301)
    st, plain = call(url, "/tokenize", {"content": LONG_TEXT, "add_special": False})
    bos = len(ids) - len(plain["tokens"])  # the BOS the model adds, which a shift keeps as llama-server does
    expect("the model adds a BOS", bos, 1)

    # llama.cpp's test_ctx_shift_enabled
    st, r = call(url, "/completion", {"n_predict": 64, "prompt": LONG_TEXT})
    expect("suite case: 200", st, 200)
    if st != 200:
        return
    expect("suite case: timings.prompt_n", r["timings"]["prompt_n"], 109)
    expect("suite case: timings.predicted_n", r["timings"]["predicted_n"], 64)
    expect("suite case: truncated", r["truncated"], True)
    expect("suite case: tokens_cached = 109 + 64 - the 63 one shift dropped", r["tokens_cached"], 110)

    # the truncated prompt is llama-server's: the same output as that prompt sent as ids
    kept = truncate(ids, 0)
    expect("truncation keeps 109 tokens (ids[192:])", (len(kept), kept == ids[192:]), (109, True))
    st, a = greedy(url, LONG_TEXT, 64)
    st2, b = greedy(url, kept, 64)
    expect("long prompt answers 200", (st, st2), (200, 200))
    expect("long prompt: truncated, its kept ids evaluated", (a["truncated"], a["tokens_evaluated"]), (True, 109))
    expect("output = the output of the kept ids as the prompt", a["tokens"], b["tokens"])
    expect("kept ids as the prompt: no prompt cut, but shifted (truncated)", (b["tokens_evaluated"], b["truncated"]),
           (109, True))

    # after the first generation shift (history 109 + 19 = 128): the rest of
    # the output = a fresh request whose prompt is the kept tokens
    gen = a["tokens"]
    first = N_CTX - len(kept)
    hist, d = shift(kept + gen[:first], bos, 0)
    expect("the first shift drops 63 tokens", d, 63)
    st, c = greedy(url, hist, 64 - first)
    expect("after a shift: the rest = a fresh request of the kept tokens", c["tokens"], gen[first:])
    expect("the next greedy token after the shift", c["tokens"][:1], gen[first:first + 1])

    # n_keep: the first n_keep prompt tokens survive the cut and every shift
    kept10 = truncate(ids, 10)
    expect("n_keep 10: 10 + 114 tokens kept", len(kept10), 124)
    st, a = greedy(url, LONG_TEXT, 40, n_keep=10)
    expect("n_keep 10: prompt_n", (st, a.get("timings", {}).get("prompt_n")), (200, 124))
    expect("n_keep 10: generation_settings.n_keep", a["generation_settings"]["n_keep"], 10)
    st, b = greedy(url, kept10, 40, n_keep=10)
    expect("n_keep 10: output = the kept ids' output", a["tokens"], b["tokens"])
    gen = a["tokens"]
    first = N_CTX - len(kept10)
    hist, d = shift(kept10 + gen[:first], 10 + bos, 0)
    st, c = greedy(url, hist, 40 - first, n_keep=10)
    expect("n_keep 10: after a shift = a fresh request of the kept tokens", c["tokens"], gen[first:])

    # n_discard, several shifts, a short prompt
    st, a = greedy(url, "Once upon a time", 200, n_discard=20)
    expect("n_discard 20: 200 tokens past a 128-token context", (st, a.get("tokens_predicted"), a.get("truncated")),
           (200, 200, True))
    st, tk = call(url, "/tokenize", {"content": "Once upon a time", "add_special": True})
    p = tk["tokens"]
    gen = a["tokens"]
    first = N_CTX - len(p)
    hist, d = shift(p + gen[:first], bos, 20)
    expect("n_discard 20: the shift drops 20", (d, len(hist)), (20, 108))
    st, c = greedy(url, hist, 200 - first, n_discard=20)
    expect("n_discard 20: the rest (3 more shifts) = a fresh request of the kept tokens", c["tokens"], gen[first:])
    st, e = greedy(url, "Once upon a time", 10, n_discard=-1)
    expect("n_discard -1: 400", st, 400)
    st, e = greedy(url, "Once upon a time", 10, n_keep=-2)
    expect("n_keep -2: 400", st, 400)

    # the other routes take a long prompt too; a stream ends truncated
    st, o = call(url, "/v1/completions", {"prompt": LONG_TEXT, "max_tokens": 64, "temperature": 0})
    expect("/v1/completions: long prompt cut to 109, 64 tokens", (st, o.get("usage", {}).get("prompt_tokens"),
                                                                  o.get("usage", {}).get("completion_tokens")),
           (200, 109, 64))
    st, o = call(url, "/v1/chat/completions", {"messages": [{"role": "user", "content": LONG_TEXT * 2}],
                                               "max_tokens": 64, "temperature": 0})
    expect("chat: a long conversation answers 200", (st, o.get("usage", {}).get("completion_tokens")), (200, 64))
    st, text = call(url, "/completion", {"prompt": LONG_TEXT, "n_predict": 64, "stream": True}, raw=True)
    last = [json.loads(b[6:]) for b in text.split("\n\n") if b.startswith("data: ")][-1]
    expect("stream: the last chunk says truncated, 64 predicted", (st, last.get("truncated"),
                                                                  last.get("timings", {}).get("predicted_n")),
           (200, True, 64))


def part_off(url):
    st, r = call(url, "/completion", {"n_predict": 64, "prompt": LONG_TEXT})
    msg = r.get("error", {}).get("message", "") if isinstance(r, dict) else ""
    expect("no shift: a long prompt is a 400", st, 400)
    expect("no shift: the context error", "exceeds the available context size" in msg, True)
    st, r = call(url, "/completion", {"n_predict": 8, "prompt": "Hi", "n_keep": 4})
    expect("no shift: n_keep is refused", st, 400)
    st, r = greedy(url, "Hi how are you", -1)
    expect("no shift: n_predict -1 ends at the full context", (st, r.get("timings", {}).get("predicted_n"),
                                                              r.get("truncated")),
           (200, N_CTX - r.get("tokens_evaluated", 0), True))
    st, r = greedy(url, "Hi how are you", 64)
    expect("no shift: 64 tokens, not truncated", (st, r.get("timings", {}).get("predicted_n"), r.get("truncated")),
           (200, 64, False))
    st, o = call(url, "/v1/completions", {"prompt": LONG_TEXT, "max_tokens": 8})
    expect("no shift: /v1/completions long prompt 400", st, 400)


def main():
    args = sys.argv[1:]
    name = args[args.index("--name") + 1]
    part = args[args.index("--part") + 1]
    url = args[args.index("--url") + 1]
    try:
        {"shift": part_shift, "off": part_off}[part](url)
    except Exception as e:  # a crash is a failure, with the counts still printed
        bad(f"{part}: {type(e).__name__}: {e}")
    print(f"{name}: {PASS} passed, {FAIL} failed")


if __name__ == "__main__":
    main()
