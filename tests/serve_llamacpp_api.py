#!/usr/bin/env python3
"""serve_llamacpp_api.py — the checks of tests/serve_llamacpp_api.test.sh:
llama-server's native API on `wick serve` (stdlib only). One line per check;
the last line is "NAME: P passed, F failed".

  --part stories URL      /completion vs /v1/completions (greedy, byte
                          identity of text and token ids), ids / mixed /
                          several prompts, streaming, n_probs,
                          post_sampling_probs, return_tokens,
                          stop words, /tokenize pieces, /detokenize, /props,
                          /slots, /apply-template, /models, aliases, the 400s,
                          llama.cpp's chat fields (n with id_slot,
                          return_progress, timings_per_token, the context
                          error, the stream's role chunk)
  --part infill URL       /infill on a model with FIM tokens = /completion of
                          the FIM layout built by hand; bad input_extra 400s
  --part nofim URL        /infill on a model without FIM tokens is a 501
  --part slots URL DIR    save -> erase -> restore: the next request reads
                          cached tokens and answers the same
  --part noslots URL      GET /slots 501, slot actions 501 without a save path
"""
import json
import math
import sys
import urllib.error
import urllib.request

PASS = FAIL = 0


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


def call(url, path, body=None, method=None, raw=False):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url + path, data=data, method=method or ("POST" if body is not None else "GET"))
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            text = r.read().decode()
            return r.status, text if raw else json.loads(text)
    except urllib.error.HTTPError as e:
        text = e.read().decode()
        try:
            return e.code, json.loads(text)
        except ValueError:
            return e.code, text


def sse(url, path, body):
    status, text = call(url, path, body, raw=True)
    events = []
    for block in text.split("\n\n"):
        if block.startswith("data: "):
            events.append(json.loads(block[6:]))
    return status, events, text


def post_sampling(url, prompt, text, greedy_ids):
    """post_sampling_probs: probabilities after the sampler chain, as prob / top_probs."""
    # greedy, as llama-server's test_n_probs_post_sampling asks: 1 for the token, runners-up after it
    st, r = call(url, "/completion", {"prompt": prompt, "n_predict": 5, "temperature": 0, "n_probs": 10,
                                      "post_sampling_probs": True})
    expect("post_sampling_probs answers 200", st, 200)
    probs = r.get("completion_probabilities", [])
    expect("post_sampling_probs: an entry per token", len(probs), 5)
    expect("post_sampling_probs: the greedy tokens", [p["id"] for p in probs], greedy_ids[:5])
    expect("post_sampling_probs: entry fields", sorted(probs[0]) if probs else None,
           ["bytes", "id", "prob", "token", "top_probs"])
    expect("post_sampling_probs: top entry fields", sorted(probs[0]["top_probs"][0]) if probs else None,
           ["bytes", "id", "prob", "token"])
    expect("greedy: each token's prob is 1", [p["prob"] for p in probs], [1.0] * 5)
    expect("greedy: n_probs candidates, the token first with 1, then 0s",
           [(len(p["top_probs"]), p["top_probs"][0]["id"] == p["id"], [t["prob"] for t in p["top_probs"]])
            for p in probs], [(10, True, [1.0] + [0.0] * 9)] * 5)
    expect("generation_settings post_sampling_probs", r["generation_settings"].get("post_sampling_probs"), True)

    # sampled: the same text with or without it; top_k 5 survivors at temperature 0.7, whose
    # probabilities are the softmax of the raw top logprobs / 0.7 (to 1e-4)
    body = {"prompt": prompt, "n_predict": 16, "temperature": 0.7, "top_k": 5, "top_p": 1, "min_p": 0,
            "repeat_penalty": 1, "presence_penalty": 0, "frequency_penalty": 0, "seed": 42, "n_probs": 10}
    st, plain = call(url, "/completion", {**body, "n_probs": 0})
    st, raw = call(url, "/completion", body)
    st, post = call(url, "/completion", {**body, "post_sampling_probs": True})
    expect("sampled: the same text with post_sampling_probs", (raw.get("content"), post.get("content")),
           (plain.get("content"), plain.get("content")))
    pp, rp = post.get("completion_probabilities", []), raw.get("completion_probabilities", [])
    expect("sampled: an entry per token", (len(pp), len(rp)), (16, 16))
    worst, shape = 0.0, True
    for p, q in zip(pp, rp):
        top = q["top_logprobs"][:5]
        z = sum(math.exp(t["logprob"] / 0.7) for t in top)
        want = {t["id"]: math.exp(t["logprob"] / 0.7) / z for t in top}
        got = {t["id"]: t["prob"] for t in p["top_probs"]}
        shape &= len(p["top_probs"]) == 5 and set(got) == set(want) and p["id"] in got
        shape &= all(a["prob"] >= b["prob"] for a, b in zip(p["top_probs"], p["top_probs"][1:]))
        if set(got) == set(want):
            worst = max([worst, abs(sum(got.values()) - 1)] + [abs(got[i] - want[i]) for i in want])
            worst = max(worst, abs(p["prob"] - want.get(p["id"], -1)))
    expect("sampled: the 5 top-k survivors, best first, the token among them", shape, True)
    expect("sampled: probs = softmax(top logprobs / T), summing to 1 (1e-4)", worst <= 1e-4, True)

    # streamed: each chunk's entries in the same shape, the same ids as whole
    st, ev, _ = sse(url, "/completion", {**body, "post_sampling_probs": True, "stream": True})
    sp = [p for e in ev[:-1] for p in e.get("completion_probabilities", [])]
    expect("streamed post_sampling_probs = whole", [(p["id"], p["prob"], [t["prob"] for t in p["top_probs"]]) for p in sp],
           [(p["id"], p["prob"], [t["prob"] for t in p["top_probs"]]) for p in pp])
    expect("streamed entries carry prob / top_probs", all("prob" in p and "logprob" not in p for p in sp) and len(sp) == 16, True)

    st, e = call(url, "/completion", {"prompt": prompt, "post_sampling_probs": "yes"})
    expect("post_sampling_probs of the wrong type is a 400", st, 400)
    st, e = call(url, "/v1/completions", {"prompt": prompt, "post_sampling_probs": True})
    msg = e.get("error", {}).get("message", "") if isinstance(e, dict) else ""
    expect("/v1/completions: post_sampling_probs is a 400 naming it", (st, "post_sampling_probs" in msg), (400, True))


def stories(url):
    prompt = "Once upon a time"
    st, oai = call(url, "/v1/completions", {"prompt": prompt, "max_tokens": 24, "temperature": 0, "logprobs": 0})
    expect("/v1/completions answers", st, 200)
    st, r = call(url, "/completion", {"prompt": prompt, "n_predict": 24, "temperature": 0, "return_tokens": True,
                                      "n_probs": 2})
    expect("/completion answers 200", st, 200)
    text = oai["choices"][0]["text"]
    expect("/completion content = /v1/completions text", r["content"], text)
    for k in ["index", "content", "tokens", "id_slot", "stop", "model", "tokens_predicted", "tokens_evaluated",
              "generation_settings", "prompt", "has_new_line", "truncated", "stop_type", "stopping_word",
              "tokens_cached", "timings", "completion_probabilities"]:
        if k not in r:
            bad(f"/completion answer has {k}")
            break
    else:
        ok("/completion answer has llama-server's fields")
    expect("stop is true", r["stop"], True)
    expect("stop_type limit at n_predict", r["stop_type"], "limit")
    expect("tokens_predicted", r["tokens_predicted"], 24)
    expect("tokens_evaluated = prompt tokens", r["tokens_evaluated"], oai["usage"]["prompt_tokens"])
    expect("return_tokens gives 24 ids", len(r["tokens"]), 24)
    st, detok = call(url, "/detokenize", {"tokens": r["tokens"]})
    expect("the tokens detokenize to the content", detok.get("content"), text)
    tm = r["timings"]
    expect("timings fields", sorted(tm), sorted(["cache_n", "prompt_n", "prompt_ms", "prompt_per_token_ms",
                                                 "prompt_per_second", "predicted_n", "predicted_ms",
                                                 "predicted_per_token_ms", "predicted_per_second"]))
    expect("timings prompt_n + cache_n = tokens_evaluated", tm["prompt_n"] + tm["cache_n"], r["tokens_evaluated"])
    expect("timings predicted_n", tm["predicted_n"], 24)
    probs = r["completion_probabilities"]
    expect("completion_probabilities per token", len(probs), 24)
    p0 = probs[0]
    expect("probability entry fields", sorted(p0), ["bytes", "id", "logprob", "token", "top_logprobs"])
    expect("n_probs top entries", len(p0["top_logprobs"]), 2)
    expect("greedy token is the top one", p0["top_logprobs"][0]["id"], p0["id"])
    expect("probability ids = returned tokens", [p["id"] for p in probs], r["tokens"])
    expect("logprob = /v1/completions' logprob", round(p0["logprob"], 4), round(oai["choices"][0]["logprobs"]["token_logprobs"][0], 4))
    gs = r["generation_settings"]
    expect("generation_settings temperature", gs["temperature"], 0)
    expect("generation_settings n_probs", gs["n_probs"], 2)
    expect("generation_settings n_predict", gs["n_predict"], 24)

    # /completions alias, ids and mixed prompts give the same text
    st, tok = call(url, "/tokenize", {"content": prompt, "add_special": True})
    ids = tok["tokens"]
    st, r2 = call(url, "/completions", {"prompt": ids, "n_predict": 24, "temperature": 0})
    expect("/completions with token ids = text prompt", r2.get("content"), text)
    st, tok2 = call(url, "/tokenize", {"content": " time"})
    st, r3 = call(url, "/completion", {"prompt": ["Once upon a", tok2["tokens"][0]], "n_predict": 24, "temperature": 0})
    st, ref3 = call(url, "/v1/completions", {"prompt": [ids[:-1] + tok2["tokens"][:1]], "max_tokens": 24, "temperature": 0})
    st, t3 = call(url, "/tokenize", {"content": "Once upon a", "add_special": True})
    if t3["tokens"] + tok2["tokens"][:1] == ids[:-1] + tok2["tokens"][:1]:
        expect("mixed prompt [text, id] = its ids", r3.get("content"), ref3["choices"][0]["text"])
    else:
        ok("mixed prompt answered (tokenization differs at the seam)")
    expect("mixed prompt evaluates BOS + text + id", r3.get("tokens_evaluated"), len(t3["tokens"]) + 1)

    # several prompts: an array of results, in order
    st, many = call(url, "/completion", {"prompt": ["Once upon a time", "The cat"], "n_predict": 8, "temperature": 0})
    expect("several prompts: an array", isinstance(many, list) and len(many), 2)
    st, one = call(url, "/completion", {"prompt": "The cat", "n_predict": 8, "temperature": 0})
    if isinstance(many, list) and len(many) == 2:
        expect("several prompts: indexes", [m["index"] for m in many], [0, 1])
        expect("several prompts: second = alone", many[1]["content"], one["content"])

    # llama-server's object prompt: prompt_string alone reads as text; media are a 400 here
    st, ob = call(url, "/completion", {"prompt": {"prompt_string": prompt}, "n_predict": 24, "temperature": 0})
    expect("object prompt {prompt_string} = text prompt", (st, ob.get("content")), (200, text))
    st, obs = call(url, "/completion", {"prompt": [ids, {"prompt_string": prompt}], "n_predict": 8, "temperature": 0})
    expect("[ids, {prompt_string}]: two equal answers",
           isinstance(obs, list) and len(obs) == 2 and obs[0]["content"] == obs[1]["content"], True)
    st, e = call(url, "/completion", {"prompt": {"prompt_string": prompt, "multimodal_data": ["AAAA"]}})
    expect("multimodal_data on a text-only model is a 400", st, 400)

    # logit_bias: ids or text (every token the text encodes to), as an object or [key, bias] pairs; false = never
    first, piece = None, None
    for t in r["tokens"][:8]:  # a token of the greedy answer whose text (maybe less its space) encodes to it alone
        st, pc = call(url, "/detokenize", {"tokens": [t]})
        for cand in (pc.get("content", ""), pc.get("content", "").lstrip(" ")):
            st, pt = call(url, "/tokenize", {"content": cand})
            if first is None and cand and pt.get("tokens") == [t]:
                first, piece = t, cand
    if first is not None:
        outs = []
        for lb in ([[first, False]], {str(first): False}, [[piece, False]], {piece: False}):
            st, bb = call(url, "/completion", {"prompt": prompt, "n_predict": 8, "temperature": 0,
                                               "return_tokens": True, "logit_bias": lb})
            outs.append((st, bb.get("content"), first in bb.get("tokens", [first])))
        expect("logit_bias by id / text, object / pairs: the same answer without the token",
               [o == outs[0] for o in outs] + [outs[0][0], outs[0][2]], [True] * 4 + [200, False])
        gsb = bb.get("generation_settings", {}).get("logit_bias")
        expect("generation_settings shows the text's token id with bias null (never)", gsb, [{"bias": None, "token": first}])
    else:
        bad("no greedy token's piece tokenizes back to it")
    # ignore_eos: the end tokens get -inf biases (never sampled), listed in generation_settings
    st, ie = call(url, "/completion", {"prompt": prompt, "n_predict": 4, "temperature": 0, "ignore_eos": True})
    expect("ignore_eos lists the EOS token with bias null", ie.get("generation_settings", {}).get("logit_bias"),
           [{"bias": None, "token": 2}])
    st, ne = call(url, "/completion", {"prompt": prompt, "n_predict": 4, "temperature": 0})
    expect("no ignore_eos, no biases listed", ne.get("generation_settings", {}).get("logit_bias"), [])

    # streaming: chunks with stop false, then one with stop true; same text
    st, ev, raw = sse(url, "/completion", {"prompt": prompt, "n_predict": 24, "temperature": 0, "stream": True,
                                            "n_probs": 1, "return_tokens": True})
    expect("stream 200", st, 200)
    expect("stream ends with stop:true", ev[-1].get("stop") if ev else None, True)
    expect("no [DONE] in the native stream", "[DONE]" in raw, False)
    expect("streamed content = whole", "".join(e["content"] for e in ev[:-1]), text)
    expect("stream chunks have stop:false", all(e["stop"] is False for e in ev[:-1]), True)
    expect("streamed tokens = whole", sum((e["tokens"] for e in ev[:-1]), []), r["tokens"])
    expect("stream chunks carry completion_probabilities",
           all(len(e.get("completion_probabilities", [])) == 1 for e in ev[:-1] if e["tokens"]), True)
    expect("last chunk has timings", "timings" in ev[-1], True)

    post_sampling(url, prompt, text, r["tokens"])

    st, ev2, _ = sse(url, "/completion", {"prompt": prompt, "n_predict": 4, "temperature": 0, "stream": True})
    expect("stream chunks carry their token ids without return_tokens", all(len(e["tokens"]) == 1 for e in ev2[:-1]), True)

    # response_fields: only those paths, each under its path
    st, rf = call(url, "/completion", {"prompt": prompt, "n_predict": 4, "temperature": 0,
                                       "response_fields": ["content", "generation_settings/n_predict", "nope/x"]})
    expect("response_fields keeps those paths", sorted(rf), ["content", "generation_settings/n_predict"])
    expect("response_fields nested value", rf.get("generation_settings/n_predict"), 4)
    expect("response_fields content is the output's start", text.startswith(rf.get("content", "?")), True)

    # stop word
    words = text.split()
    word = words[3] if len(words) > 3 else words[-1]
    st, sw = call(url, "/completion", {"prompt": prompt, "n_predict": 24, "temperature": 0, "stop": [word]})
    expect("stop word: stop_type", sw.get("stop_type"), "word")
    expect("stop word: stopping_word", sw.get("stopping_word"), word)
    expect("stop word: content ends before it", sw.get("content"), text[:text.find(word)])
    st, lim = call(url, "/v1/completions", {"prompt": prompt, "max_tokens": 24, "temperature": 0, "stop": [word]})
    expect("stop word = /v1/completions", sw.get("content"), lim["choices"][0]["text"])

    # samplers leaving out top_k etc. keeps greedy output the same; unknown sampler 400
    st, s1 = call(url, "/completion", {"prompt": prompt, "n_predict": 24, "temperature": 0, "samplers": ["top_k", "temperature"]})
    expect("samplers list accepted", s1.get("content"), text)
    expect("generation_settings samplers", s1["generation_settings"]["samplers"], ["temperature", "top_k"])
    st, e = call(url, "/completion", {"prompt": prompt, "samplers": ["bogus"]})
    expect("unknown sampler is a 400", st, 400)

    # fields wick cannot honour: 400 naming them
    for field, value in [("mirostat", 2), ("typical_p", 0.5), ("dry_multiplier", 0.8),
                         ("n_keep", 4), ("return_progress", True), ("lora", [{"id": 0, "scale": 1}])]:
        st, e = call(url, "/completion", {"prompt": prompt, field: value})
        msg = e.get("error", {}).get("message", "") if isinstance(e, dict) else ""
        expect(f"{field} is a 400 naming it", (st, field in msg), (400, True))
    st, e = call(url, "/completion", {"prompt": prompt, "mirostat": 0, "typical_p": 1, "cache_prompt": False})
    expect("values that ask for nothing are accepted", st, 200)
    st, e = call(url, "/completion", {"n_predict": 2})
    expect("missing prompt is a 400", st, 400)
    st, e = call(url, "/completion", {"prompt": prompt, "n_probs": "x"})
    expect("n_probs of the wrong type is a 400", st, 400)
    st, e = call(url, "/completion", {"prompt": prompt, "id_slot": 99})
    expect("id_slot out of range is a 400", st, 400)
    st, e = call(url, "/completion", {"prompt": ["a", "b"], "stream": True})
    expect("several prompts streamed is a 400", st, 400)

    # tokenize / detokenize
    st, t = call(url, "/tokenize", {"content": "Hello world", "with_pieces": True})
    expect("/tokenize with_pieces", all(set(p) == {"id", "piece"} for p in t["tokens"]), True)
    # (SentencePiece: the first piece carries the leading space, as in llama-server)
    expect("pieces join to the text", "".join(p["piece"] for p in t["tokens"] if isinstance(p["piece"], str)).lstrip(), "Hello world")
    st, t1 = call(url, "/tokenize", {"content": "Hello", "add_special": True})
    st, t0 = call(url, "/tokenize", {"content": "Hello"})
    expect("add_special adds BOS", len(t1["tokens"]), len(t0["tokens"]) + 1)
    st, tp = call(url, "/tokenize", {"content": "<s>Hello", "parse_special": False})
    st, ts = call(url, "/tokenize", {"content": "<s>Hello", "parse_special": True})
    expect("parse_special false keeps special text as text", len(tp["tokens"]) > len(ts["tokens"]), True)

    st, tm = call(url, "/tokenize", {"content": [5, "Hello"], "add_special": True})
    expect("/tokenize of ids and text (no BOS after a leading id)", tm.get("tokens"), [5] + t0["tokens"])

    # props, slots, models, apply-template, aliases
    st, props = call(url, "/props")
    expect("/props 200", st, 200)
    for k in ["default_generation_settings", "total_slots", "model_path", "chat_template", "modalities", "build_info"]:
        if k not in props:
            bad(f"/props has {k}")
    expect("/props n_ctx", props["default_generation_settings"]["n_ctx"], 128)
    expect("/props total_slots", props["total_slots"], 2)
    st, e = call(url, "/props", {"n_ctx": 1})
    expect("POST /props is a 501", st, 501)
    st, slots = call(url, "/slots")
    expect("/slots lists total_slots", len(slots), 2)
    expect("/slots fields", all({"id", "n_ctx", "is_processing"} <= set(s) for s in slots), True)
    expect("a slot that served a task shows its params with the seed",
           all("seed" in s["params"] and "next_token" in s for s in slots if "id_task" in s), True)
    st, full = call(url, "/completion", {"prompt": "Once upon a time", "n_predict": -1, "temperature": 0})
    expect("n_predict -1 ended by the full context: truncated",
           (st, full.get("truncated"), full["tokens_evaluated"] + full["tokens_predicted"]), (200, True, 128))
    st, short = call(url, "/completion", {"prompt": "Once upon a time", "n_predict": 4, "temperature": 0})
    expect("a generation its n_predict ended: not truncated", (st, short.get("truncated")), (200, False))
    st, e = call(url, "/slots/0?action=save", {"filename": "x.json"})
    expect("without a save path slot actions are a 501", st, 501)
    st, models = call(url, "/v1/models")
    expect("/v1/models has models and data", ("models" in models, models.get("object"), len(models.get("data", []))),
           (True, "list", 1))
    expect("/v1/models keeps owned_by and max_model_len", (models["data"][0]["owned_by"], models["data"][0].get("max_model_len")), ("wick", 128))
    st, m2 = call(url, "/models")
    expect("/models = /v1/models", m2, models)
    st, at = call(url, "/apply-template", {"messages": [{"role": "user", "content": "Hi"}]})
    st2, rd = call(url, "/v1/chat/completions/render", {"messages": [{"role": "user", "content": "Hi"}]})
    st3, tk = call(url, "/tokenize", {"content": at.get("prompt", ""), "parse_special": True, "add_special": True})
    expect("/apply-template renders what the chat route tokenizes (BOS added as the model adds it)", tk.get("tokens"),
           rd.get("token_ids"))
    st, it = call(url, "/v1/chat/completions/input_tokens", {"messages": [{"role": "user", "content": "Hi"}]})
    expect("/v1/chat/completions/input_tokens counts the rendered prompt", it,
           {"object": "response.input_tokens", "input_tokens": len(rd.get("token_ids", []))})
    st, ch = call(url, "/chat/completions", {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "temperature": 0})
    st2, ch2 = call(url, "/v1/chat/completions", {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "temperature": 0})
    expect("/chat/completions = /v1/chat/completions", ch["choices"][0]["message"]["content"], ch2["choices"][0]["message"]["content"])
    chat_fields(url)


def oai_sse(url, path, body):
    """An OpenAI stream's events, [DONE] left out."""
    status, text = call(url, path, body, raw=True)
    if status != 200:
        return status, [], text
    return status, [json.loads(b[6:]) for b in text.split("\n\n") if b.startswith("data: ") and b != "data: [DONE]"], text


def chat_fields(url):
    """llama.cpp's fields and shapes on /v1/chat/completions (the server runs -b 32)."""
    sse = oai_sse
    msgs = [{"role": "system", "content": "Book"}, {"role": "user", "content": "What is the best book"}]
    base = {"messages": msgs, "max_tokens": 8, "temperature": 0.8, "seed": 42}
    # n = 2 (with llama.cpp's id_slot): choice j is the request alone with seed 42 + j
    st, two = call(url, "/v1/chat/completions", dict(base, n=2, id_slot=0))
    alone = [call(url, "/v1/chat/completions", dict(base, seed=42 + j))[1]["choices"][0]["message"]["content"] for j in range(2)]
    expect("n = 2: two choices, each = the request alone with seed + index", (st, [c["message"]["content"] for c in two["choices"]]),
           (200, alone))
    expect("n = 2: the prompt counted once", two["usage"]["prompt_tokens"],
           call(url, "/v1/chat/completions", base)[1]["usage"]["prompt_tokens"])
    st, ev, _ = sse(url, "/v1/chat/completions", dict(base, n=2, stream=True))
    got = ["".join(e["choices"][0]["delta"].get("content") or "" for e in ev if e["choices"] and e["choices"][0]["index"] == j)
           for j in range(2)]
    expect("n = 2 streamed = whole", (st, got), (200, alone))
    st, e = call(url, "/v1/chat/completions", dict(base, id_slot=2))
    expect("id_slot past --parallel is a 400 naming it", (st, e["error"]["param"]), (400, "id_slot"))
    # the stream's shape: the role chunk with content null, one id, the finish chunk without content
    st, ev, _ = sse(url, "/v1/chat/completions", dict(base, stream=True))
    expect("first chunk: role and content null", ev[0]["choices"][0]["delta"], {"role": "assistant", "content": None})
    expect("one id on every chunk", len({e["id"] for e in ev}), 1)
    expect("the finish chunk has no content", (ev[-1]["choices"][0]["finish_reason"], ev[-1]["choices"][0]["delta"]), ("length", {}))
    # a prompt over the context: llama-server's error type and counts, OpenAI's code
    long_msgs = msgs * 40
    for stream in (False, True):
        st, e = call(url, "/v1/chat/completions", {"messages": long_msgs, "stream": stream})
        err = e.get("error", {})
        expect(f"prompt over the context (stream {stream}): 400 exceed_context_size_error, n_ctx, n_prompt_tokens",
               (st, err.get("type"), err.get("code"), err.get("n_ctx"), err.get("n_prompt_tokens", 0) >= 128),
               (400, "exceed_context_size_error", "context_length_exceeded", 128, True))
    # return_progress: a record before the first chunk of 32 and after each
    pbody = {"messages": [{"role": "user", "content": "This is a test" * 5}], "max_tokens": 2, "stream": True, "return_progress": True}
    caches = []
    for run in ("first", "again"):
        st, ev, _ = sse(url, "/v1/chat/completions", pbody)
        pr = [e["prompt_progress"] for e in ev if "prompt_progress" in e]
        if not pr:
            bad(f"return_progress ({run}): no prompt_progress")
            continue
        total, cache = pr[0]["total"], pr[0]["cache"]
        want = [cache] + [min(total, cache + 32 * (i + 1)) for i in range((total - cache + 31) // 32)]
        expect(f"return_progress ({run}): processed from the cached count by chunks of 32 to the total",
               ([p["processed"] for p in pr], {p["total"] for p in pr}, {p["cache"] for p in pr}), (want, {total}, {cache}))
        caches.append((cache, total))
    expect("return_progress: the same prompt again is read from cache but its last token",
           len(caches) == 2 and caches[1][0] == caches[1][1] - 1 and caches[0][0] < caches[1][0], True)
    st, e = call(url, "/v1/chat/completions", dict(pbody, stream=False))
    expect("return_progress without stream is a 400 naming it", (st, e["error"]["param"]), (400, "return_progress"))
    # timings_per_token: every chunk but the role one carries timings; the usage chunk's are the request's
    st, ev, _ = sse(url, "/v1/chat/completions", dict(base, stream=True, timings_per_token=True, stream_options={"include_usage": True}))
    last = ev[-1]
    expect("timings_per_token: none on the role chunk, on all others", ("timings" in ev[0], all("timings" in e for e in ev[1:])),
           (False, True))
    expect("timings_per_token: the usage chunk's counts", (last["timings"]["predicted_n"], last["timings"]["prompt_n"]),
           (last["usage"]["completion_tokens"],
            last["usage"]["prompt_tokens"] - last["usage"]["prompt_tokens_details"]["cached_tokens"]))
    st, e = call(url, "/v1/completions", {"prompt": "Hi", "max_tokens": 2, "timings_per_token": True})
    expect("/v1/completions: timings_per_token is a 400 naming it", (st, e["error"]["param"]), (400, "timings_per_token"))
    st, e = call(url, "/v1/chat/completions", {"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}],
                                               "max_tokens": 2, "add_generation_prompt": True, "continue_final_message": True})
    expect("add_generation_prompt with continue_final_message is a 400", st, 400)


def infill(url):
    body = {
        "input_extra": [{"filename": "llama.h", "text": "LLAMA_API int32_t llama_n_threads();\n"}],
        "input_prefix": "#include <cstdio>\n#include \"llama.h\"\n\nint main() {\n",
        "prompt": "    int n_threads = llama_",
        "input_suffix": "}\n",
        "n_predict": 12, "temperature": 0, "return_tokens": True,
    }
    st, r = call(url, "/infill", body)
    expect("/infill 200", st, 200)

    def toks(text, special=False):
        return call(url, "/tokenize", {"content": text, "parse_special": special})[1]["tokens"]

    sp = lambda name: toks(name, True)[0]
    ids = [sp("<|repo_name|>")] + toks("myproject\n") + [sp("<|file_sep|>")] + toks("llama.h\n") + \
        toks(body["input_extra"][0]["text"]) + [sp("<|file_sep|>")] + toks("filename\n") + [sp("<|fim_prefix|>")] + \
        toks(body["input_prefix"]) + toks(body["prompt"]) + [sp("<|fim_suffix|>")] + toks(body["input_suffix"]) + \
        [sp("<|fim_middle|>")]
    st, ref = call(url, "/completion", {"prompt": ids, "n_predict": 12, "temperature": 0, "return_tokens": True})
    expect("/infill evaluates the FIM layout", r.get("tokens_evaluated"), len(ids))
    expect("/infill = /completion of the FIM layout (ids)", r.get("tokens"), ref.get("tokens"))
    expect("/infill = /completion of the FIM layout (text)", r.get("content"), ref.get("content"))
    b2 = dict(body)
    del b2["input_extra"]
    st, r2 = call(url, "/infill", b2)
    expect("/infill without input_extra", st, 200)
    b4 = dict(body)
    b4["input_extra"] = [{"text": "int x;\n"}]
    st, r4 = call(url, "/infill", b4)
    expect("/infill input_extra without filename", st, 200)
    for extra in [{}, {"filename": "ok"}, {"filename": 123}, {"filename": 123, "text": "abc"}, {"filename": 123, "text": 456}]:
        b3 = dict(body)
        b3["input_extra"] = [extra]
        st, e = call(url, "/infill", b3)
        expect(f"/infill input_extra {json.dumps(extra)} is a 400", (st, "error" in e), (400, True))


def nofim(url):
    st, e = call(url, "/infill", {"input_prefix": "a", "input_suffix": "b"})
    expect("/infill on a model without FIM tokens is a 501 (llama-server's not_supported_error)", st, 501)
    st, e = call(url, "/infill", {"input_suffix": "b"})
    expect("/infill without input_prefix is a 400", st, 400)


def slots(url, _dir):
    prompt = "Once upon a time, there was a little girl"
    st, sl = call(url, "/slots")
    expect("a slot that has served no task shows no task, params, prompt or next token (as llama-server)",
           [sorted({"id_task", "params", "prompt", "next_token"} & set(s)) for s in sl], [[] for _ in sl])
    st, r1 = call(url, "/completion", {"prompt": prompt, "n_predict": 16, "temperature": 0, "id_slot": 1})
    expect("first request on slot 1", (st, r1.get("id_slot")), (200, 1))
    st, sl = call(url, "/slots")
    expect("after it only slot 1 shows its params", ["params" in s for s in sl][:2], [False, True])
    st, sv = call(url, "/slots/1?action=save", {"filename": "slot1.json"})
    expect("save 200", st, 200)
    # the KV the slot holds: the last generated token was never fed back
    expect("n_saved = prompt + generated - 1", sv.get("n_saved"), r1["tokens_evaluated"] + r1["tokens_predicted"] - 1)
    expect("save answer fields", sorted(sv), ["filename", "id_slot", "n_saved", "n_written", "timings"])
    st, er = call(url, "/slots/1?action=erase", method="POST")
    expect("erase 200", (st, er.get("n_erased")), (200, sv.get("n_saved")))
    st, sl = call(url, "/slots")
    expect("erased slot holds no prompt", sl[1].get("n_prompt_tokens"), 0)
    st, r3 = call(url, "/completion", {"prompt": prompt, "n_predict": 16, "temperature": 0, "id_slot": 1})
    expect("after erase the prompt is computed again (its cached KV is gone)",
           (r3["timings"]["cache_n"], r3["timings"]["prompt_n"]), (0, r1["tokens_evaluated"]))
    expect("after erase the output is the same", r3.get("content"), r1.get("content"))
    st, rs = call(url, "/slots/0?action=restore", {"filename": "slot1.json"})
    expect("restore 200", st, 200)
    expect("n_restored = n_saved", rs.get("n_restored"), sv.get("n_saved"))
    st, r2 = call(url, "/completion", {"prompt": prompt, "n_predict": 16, "temperature": 0, "id_slot": 0})
    expect("after restore the prompt is read from cache", r2["timings"]["cache_n"] > 0, True)
    expect("after restore the output is the same", r2.get("content"), r1.get("content"))
    with open(f"{_dir}/ref.json", "w") as f:
        json.dump({"prompt": prompt, "content": r1.get("content"), "n": sv.get("n_saved")}, f)
    for bad_name in ["../x", "a/b", "", ".hidden"]:
        st, e = call(url, "/slots/0?action=save", {"filename": bad_name})
        expect(f"filename {bad_name!r} is a 400", st, 400)
    st, e = call(url, "/slots/0?action=restore", {"filename": "missing.json"})
    expect("restoring a missing file is a 400", st, 400)
    st, e = call(url, "/slots/0?action=dance", {"filename": "slot1.json"})
    expect("unknown action is a 400", st, 400)
    st, e = call(url, "/slots/7?action=save", {"filename": "x.json"})
    expect("unknown slot is a 400", st, 400)


def slots_fresh(url, _dir):
    """A fresh server (nothing cached): restore alone makes the next request a cache hit."""
    with open(f"{_dir}/ref.json") as f:
        ref = json.load(f)
    st, rs = call(url, "/slots/1?action=restore", {"filename": "slot1.json"})
    expect("fresh server: restore 200", (st, rs.get("n_restored")), (200, ref["n"]))
    st, r = call(url, "/completion", {"prompt": ref["prompt"], "n_predict": 16, "temperature": 0})
    expect("fresh server: the whole prompt but its last token is read from cache",
           r["timings"]["cache_n"], r["tokens_evaluated"] - 1)
    expect("fresh server: the output is the saved run's", r.get("content"), ref["content"])
    st, r3 = call(url, "/completion", {"prompt": "The dog ran to the park and", "n_predict": 4, "temperature": 0})
    expect("fresh server: an unrelated prompt shares only BOS", r3["timings"]["cache_n"] <= 1, True)


def noslots(url):
    st, e = call(url, "/slots")
    expect("--no-slots: GET /slots is a 501", st, 501)


def main():
    name = sys.argv[sys.argv.index("--name") + 1]
    part = sys.argv[sys.argv.index("--part") + 1]
    url = sys.argv[sys.argv.index("--url") + 1]
    try:
        if part == "stories":
            stories(url)
        elif part == "infill":
            infill(url)
        elif part == "nofim":
            nofim(url)
        elif part == "slots":
            slots(url, sys.argv[sys.argv.index("--dir") + 1])
        elif part == "slots_fresh":
            slots_fresh(url, sys.argv[sys.argv.index("--dir") + 1])
        elif part == "noslots":
            noslots(url)
    except Exception as ex:  # a crash is one failure, with its cause
        import traceback
        traceback.print_exc()
        bad(f"{part}: {ex!r}")
    print(f"{name}: {PASS} passed, {FAIL} failed")


main()
