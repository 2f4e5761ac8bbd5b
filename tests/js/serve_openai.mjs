// serve_openai.mjs — checks a running `wick serve` through the real `openai`
// npm client (v6). Driven by tests/serve_openai.test.sh.
//
//   node serve_openai.mjs --name N --url http://127.0.0.1:PORT --ref REF.json
//        [--ctx N] [--chat] [--stop-from-ref] [--sections a,b,...]
//
// REF.json: {"prompt": "...", "n": 40, "gen": <`wick generate --temp 0 --json` object>}
// for the same model: the greedy completion must give the same text and count.
import OpenAI from 'openai';
import { readFileSync } from 'node:fs';
import { checker, parseArgs, words } from './serve_util.mjs';

const a = parseArgs();
const name = a.name || 'serve_openai';
const c = checker(name);
const ref = JSON.parse(readFileSync(a.ref, 'utf8'));
const client = new OpenAI({ baseURL: `${a.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 60_000 });
const all = ['models', 'completions', 'stream', 'stop', 'length', 'seed', 'logprobs', 'errors', 'chat'];
const sections = new Set(a.sections ? a.sections.split(',') : all.filter((s) => s !== 'chat' || a.chat));
const P = ref.prompt, N = ref.n, G = ref.gen;
const tag = (s) => `[${name}] ${s}`;
const isInt = (x) => Number.isInteger(x) && x >= 0;
let model;

await c.step(tag('models.list()'), async () => {
  const list = await client.models.list();
  const data = list.data;
  c.ok(tag('models.list(): at least one model'), Array.isArray(data) && data.length >= 1, data);
  model = data[0].id;
  c.ok(tag('models.list(): id, object "model", created, owned_by'),
    typeof model === 'string' && data[0].object === 'model' && Number.isInteger(data[0].created) &&
    typeof data[0].owned_by === 'string', data[0]);
});
if (!model) c.done();

function usageOk(label, u, promptTokens, completionTokens) {
  c.ok(tag(`${label}: usage fields`), u && isInt(u.prompt_tokens) && isInt(u.completion_tokens) &&
    u.total_tokens === u.prompt_tokens + u.completion_tokens &&
    u.prompt_tokens_details && isInt(u.prompt_tokens_details.cached_tokens) &&
    u.prompt_tokens_details.cached_tokens <= u.prompt_tokens, u);
  if (promptTokens !== undefined) c.eq(tag(`${label}: usage.prompt_tokens`), u && u.prompt_tokens, promptTokens);
  if (completionTokens !== undefined) c.eq(tag(`${label}: usage.completion_tokens`), u && u.completion_tokens, completionTokens);
}

// ---- completions, greedy, against `wick generate --temp 0`
let greedyText;
if (sections.has('completions')) await c.step(tag('completions greedy'), async () => {
  const r = await client.completions.create({ model, prompt: P, max_tokens: N, temperature: 0 });
  greedyText = r.choices[0].text;
  c.ok(tag('completions: object "text_completion", id, one choice'),
    r.object === 'text_completion' && typeof r.id === 'string' && r.choices.length === 1 && r.choices[0].index === 0, r);
  c.eq(tag(`completions greedy text = wick generate --temp 0 -n ${N}`), greedyText, G.text);
  c.eq(tag('completions greedy finish_reason = wick generate'), r.choices[0].finish_reason, G.finish_reason);
  usageOk('completions', r.usage, G.prompt_tokens, G.tokens.length);
  // the same request again: the prompt is cached now, the output must not change
  const r2 = await client.completions.create({ model, prompt: P, max_tokens: N, temperature: 0 });
  c.eq(tag('completions greedy again (prefix cached) same text'), r2.choices[0].text, G.text);
  c.ok(tag('completions again: cached_tokens reported (number)'),
    isInt(r2.usage?.prompt_tokens_details?.cached_tokens), r2.usage);
  // the prompt as token ids (OpenAI accepts an array of ints)
  const ids = ref.prompt_ids;
  if (ids) {
    const r3 = await client.completions.create({ model, prompt: ids, max_tokens: N, temperature: 0 });
    c.eq(tag('completions with prompt as token ids: same text'), r3.choices[0].text, G.text);
  }
});

// ---- streaming completions
if (sections.has('stream')) await c.step(tag('completions stream'), async () => {
  const s = await client.completions.create({ model, prompt: P, max_tokens: N, temperature: 0, stream: true,
    stream_options: { include_usage: true } });
  let text = '', ids = new Set(), finish = null, usage = null, usageChunks = 0, nullUsage = 0, chunks = 0, afterUsage = 0;
  for await (const ch of s) {
    chunks++;
    ids.add(ch.id);
    if (usage) afterUsage++;
    if (ch.usage) { usage = ch.usage; usageChunks++; c.ok(tag('stream: usage chunk has choices []'), Array.isArray(ch.choices) && ch.choices.length === 0, ch); }
    else nullUsage++;
    for (const choice of ch.choices || []) {
      text += choice.text || '';
      if (choice.finish_reason) finish = choice.finish_reason;
    }
  }
  c.eq(tag('stream: concatenated text = wick generate'), text, G.text);
  c.ok(tag('stream: one id for all chunks'), ids.size === 1, [...ids]);
  c.ok(tag('stream: more than one chunk'), chunks > 2, chunks);
  c.eq(tag('stream: finish_reason in the last choice chunk'), finish, G.finish_reason);
  c.ok(tag('stream_options.include_usage: exactly one usage chunk, the last'), usageChunks === 1 && afterUsage === 0, { usageChunks, afterUsage });
  usageOk('stream', usage, G.prompt_tokens, G.tokens.length);
  // without include_usage: no usage anywhere
  const s2 = await client.completions.create({ model, prompt: P, max_tokens: 5, temperature: 0, stream: true });
  let anyUsage = false, t2 = '';
  for await (const ch of s2) { if (ch.usage) anyUsage = true; for (const ch2 of ch.choices) t2 += ch2.text || ''; }
  c.ok(tag('stream without include_usage: no usage chunk'), !anyUsage);
});

// ---- stop strings
if (sections.has('stop')) await c.step(tag('stop'), async () => {
  // a stop string from the middle of the greedy text, spanning token boundaries
  const t = G.text;
  // (printable ASCII only: U+FFFD in the text may stand for bytes that are not it)
  const k = Math.floor(t.length / 2);
  const run = /[ -~]{5,}/g;
  run.lastIndex = k;
  const mm = run.exec(t) || /[ -~]{5,}/.exec(t);
  if (!mm) { c.ok(tag('stop: the greedy text has a run of 5 printable ASCII characters'), false, t); return; }
  const stop = mm[0].slice(1, 5);
  const want = t.slice(0, t.indexOf(stop));
  const r = await client.completions.create({ model, prompt: P, max_tokens: N, temperature: 0, stop: [stop, '@@never@@'] });
  c.eq(tag(`stop ${JSON.stringify(stop)}: text ends right before it`), r.choices[0].text, want);
  c.eq(tag('stop: finish_reason "stop"'), r.choices[0].finish_reason, 'stop');
  const r2 = await client.completions.create({ model, prompt: P, max_tokens: N, temperature: 0, stop });
  c.eq(tag('stop as a plain string'), r2.choices[0].text, want);
  // streamed: the stop string never appears, the text is the same
  const s = await client.completions.create({ model, prompt: P, max_tokens: N, temperature: 0, stop: [stop], stream: true });
  let st = '', fin = null;
  for await (const ch of s) for (const x of ch.choices) { st += x.text || ''; if (x.finish_reason) fin = x.finish_reason; }
  c.eq(tag('stop streamed: same text, finish "stop"'), [st, fin], [want, 'stop']);
  if (a.chat) {
    const m = [{ role: 'user', content: 'Tell me a story.' }];
    const full = await client.chat.completions.create({ model, messages: m, max_completion_tokens: 24, temperature: 0 });
    const ft = full.choices[0].message.content;
    const asciiRun = ft.match(/[ -~]{4,}/);
    if (asciiRun) {
      const cs = asciiRun[0].slice(1, 4);
      const cw = ft.slice(0, ft.indexOf(cs));
      const r3 = await client.chat.completions.create({ model, messages: m, max_completion_tokens: 24, temperature: 0, stop: [cs] });
      c.eq(tag(`chat stop ${JSON.stringify(cs)}: content ends right before it, finish "stop"`),
        [r3.choices[0].message.content, r3.choices[0].finish_reason], [cw, 'stop']);
    }
  }
});

// ---- max_tokens → finish "length" with exactly that many tokens
if (sections.has('length')) await c.step(tag('length'), async () => {
  for (const n of [1, 7]) {
    const r = await client.completions.create({ model, prompt: P, max_tokens: n, temperature: 0, ignore_eos: true });
    c.eq(tag(`max_tokens ${n}: finish_reason "length", completion_tokens ${n}`),
      [r.choices[0].finish_reason, r.usage.completion_tokens], ['length', n]);
    const want = G.tokens.length >= n ? undefined : null;
    if (want === undefined && n < G.tokens.length) {
      c.ok(tag(`max_tokens ${n}: text is a prefix of the ${N}-token greedy text`), G.text.startsWith(r.choices[0].text), r.choices[0].text);
    }
  }
  if (a.chat) {
    const m = [{ role: 'user', content: 'Hello' }];
    const r = await client.chat.completions.create({ model, messages: m, max_completion_tokens: 5, temperature: 0, ignore_eos: true });
    c.eq(tag('chat max_completion_tokens 5: finish "length", 5 tokens'), [r.choices[0].finish_reason, r.usage.completion_tokens], ['length', 5]);
    const r2 = await client.chat.completions.create({ model, messages: m, max_tokens: 3, temperature: 0, ignore_eos: true });
    c.eq(tag('chat max_tokens 3 (deprecated name): finish "length", 3 tokens'), [r2.choices[0].finish_reason, r2.usage.completion_tokens], ['length', 3]);
  }
});

// ---- seed reproducibility
if (sections.has('seed')) await c.step(tag('seed'), async () => {
  const req = (seed, stream = false) => client.completions.create({ model, prompt: P, max_tokens: 24, temperature: 1, top_p: 1, seed, stream });
  const t1 = (await req(42)).choices[0].text;
  const t2 = (await req(42)).choices[0].text;
  c.eq(tag('seed 42 twice at temperature 1: same text'), t2, t1);
  let st = '';
  for await (const ch of await req(42, true)) for (const x of ch.choices) st += x.text || '';
  c.eq(tag('seed 42 streamed: same text as not streamed'), st, t1);
  const others = [];
  for (const s of [43, 44, 45]) others.push((await req(s)).choices[0].text);
  c.ok(tag('seeds 43/44/45: at least one differs from seed 42'), others.some((t) => t !== t1), { t1, others });
});

// ---- logprobs
if (sections.has('logprobs')) await c.step(tag('logprobs'), async () => {
  const r = await client.completions.create({ model, prompt: P, max_tokens: 12, temperature: 0, logprobs: 2 });
  const lp = r.choices[0].logprobs;
  const n = r.usage.completion_tokens;
  c.ok(tag('completions logprobs:2: tokens, token_logprobs, top_logprobs, text_offset of completion_tokens entries'),
    lp && [lp.tokens, lp.token_logprobs, lp.top_logprobs, lp.text_offset].every((x) => Array.isArray(x) && x.length === n), lp);
  if (lp && Array.isArray(lp.token_logprobs)) {
    c.ok(tag('completions logprobs: every value finite and <= 0'),
      lp.token_logprobs.every((v) => Number.isFinite(v) && v <= 0) &&
      lp.top_logprobs.every((o) => Object.values(o).every((v) => Number.isFinite(v) && v <= 0)), lp);
    c.ok(tag('completions logprobs: 2 alternatives per token'), lp.top_logprobs.every((o) => Object.keys(o).length === 2), lp.top_logprobs);
    c.ok(tag('completions logprobs (greedy): sampled token is the top-1, same logprob'),
      lp.tokens.every((t, i) => {
        const o = lp.top_logprobs[i] || {};
        const best = Math.max(...Object.values(o));
        return Math.abs(lp.token_logprobs[i] - best) < 1e-5 && Math.abs((o[t] ?? NaN) - best) < 1e-5;
      }), lp);
    c.eq(tag('completions logprobs: tokens join to the text'), lp.tokens.join(''), r.choices[0].text);
    c.ok(tag('completions logprobs: text_offset non-decreasing integers'),
      lp.text_offset.every((v, i) => Number.isInteger(v) && (i === 0 || v >= lp.text_offset[i - 1])), lp.text_offset);
  }
  if (a.chat) {
    const m = [{ role: 'user', content: 'Hello there' }];
    const rc = await client.chat.completions.create({ model, messages: m, max_completion_tokens: 10, temperature: 0, logprobs: true, top_logprobs: 3 });
    const content = rc.choices[0].logprobs?.content;
    c.ok(tag('chat logprobs: content[] has completion_tokens entries'), Array.isArray(content) && content.length === rc.usage.completion_tokens, rc.choices[0].logprobs);
    if (Array.isArray(content)) {
      c.ok(tag('chat logprobs: each {token, logprob<=0, bytes[], top_logprobs[3] sorted}'),
        content.every((e) => typeof e.token === 'string' && Number.isFinite(e.logprob) && e.logprob <= 0 &&
          Array.isArray(e.bytes) && e.bytes.every((b) => Number.isInteger(b) && b >= 0 && b < 256) &&
          Array.isArray(e.top_logprobs) && e.top_logprobs.length === 3 &&
          e.top_logprobs.every((t, i) => typeof t.token === 'string' && Number.isFinite(t.logprob) && t.logprob <= 0 &&
            (i === 0 || t.logprob <= e.top_logprobs[i - 1].logprob))), content);
      c.ok(tag('chat logprobs (greedy): token = top_logprobs[0], same logprob'),
        content.every((e) => e.top_logprobs?.[0] && e.top_logprobs[0].token === e.token && Math.abs(e.top_logprobs[0].logprob - e.logprob) < 1e-5), content);
      const bytes = Buffer.from(content.flatMap((e) => e.bytes));
      c.eq(tag('chat logprobs: bytes concatenate to the content'), bytes.toString('utf8'), rc.choices[0].message.content);
    }
    const rn = await client.chat.completions.create({ model, messages: m, max_completion_tokens: 4, temperature: 0 });
    c.ok(tag('chat without logprobs: logprobs null/absent'), rn.choices[0].logprobs == null, rn.choices[0].logprobs);
  }
});

// ---- chat completions
if (sections.has('chat') && a.chat) await c.step(tag('chat'), async () => {
  const m = [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Name three colors.' }];
  const r = await client.chat.completions.create({ model, messages: m, max_completion_tokens: 16, temperature: 0 });
  const ch = r.choices[0];
  c.ok(tag('chat: object "chat.completion", one choice, role assistant, string content'),
    r.object === 'chat.completion' && r.choices.length === 1 && ch.message.role === 'assistant' && typeof ch.message.content === 'string', r);
  c.ok(tag('chat: finish_reason stop|length'), ['stop', 'length'].includes(ch.finish_reason), ch.finish_reason);
  usageOk('chat', r.usage);
  const s = await client.chat.completions.create({ model, messages: m, max_completion_tokens: 16, temperature: 0, stream: true, stream_options: { include_usage: true } });
  let text = '', first = null, ids = new Set(), fin = null, usage = null, objs = new Set();
  for await (const k of s) {
    ids.add(k.id); objs.add(k.object);
    if (k.usage) usage = k.usage;
    for (const x of k.choices) {
      if (first === null) first = x.delta;
      text += x.delta?.content || '';
      if (x.finish_reason) fin = x.finish_reason;
    }
  }
  c.eq(tag('chat stream: concatenated deltas = non-streamed content'), text, ch.message.content);
  c.ok(tag('chat stream: role "assistant" in the first delta'), first && first.role === 'assistant', first);
  c.ok(tag('chat stream: one id, object chat.completion.chunk'), ids.size === 1 && objs.size === 1 && objs.has('chat.completion.chunk'), { ids: [...ids], objs: [...objs] });
  c.eq(tag('chat stream: same finish_reason'), fin, ch.finish_reason);
  c.eq(tag('chat stream: include_usage = non-streamed usage (token counts)'),
    usage && [usage.prompt_tokens, usage.completion_tokens], [r.usage.prompt_tokens, r.usage.completion_tokens]);
  // multi-turn: prompt grows, the earlier turn is cached
  const m2 = [...m, { role: 'assistant', content: ch.message.content }, { role: 'user', content: 'And three more.' }];
  const r2 = await client.chat.completions.create({ model, messages: m2, max_completion_tokens: 8, temperature: 0 });
  c.ok(tag('chat second turn: prompt_tokens larger, answers'), r2.usage.prompt_tokens > r.usage.prompt_tokens && typeof r2.choices[0].message.content === 'string', r2.usage);
});

// ---- errors
if (sections.has('errors')) await c.step(tag('errors'), async () => {
  const body = (e) => e && e.error && typeof e.error.message === 'string';
  await c.throws(tag('unknown model → NotFoundError 404 with error.message'),
    () => client.completions.create({ model: 'no-such-model', prompt: 'hi', max_tokens: 2 }),
    (e) => e instanceof OpenAI.NotFoundError && e.status === 404 && body(e), 'NotFoundError 404');
  await c.throws(tag('chat with unknown model → 404'),
    () => client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }),
    (e) => e instanceof OpenAI.NotFoundError && e.status === 404, 'NotFoundError 404');
  await c.throws(tag('n above --parallel → BadRequestError 400'),
    () => client.completions.create({ model, prompt: 'hi', max_tokens: 2, n: 4096 }),
    (e) => e instanceof OpenAI.BadRequestError && e.status === 400 && body(e), 'BadRequestError 400');
  await c.throws(tag('max_tokens "x" → 400'),
    () => client.completions.create({ model, prompt: 'hi', max_tokens: 'x' }),
    (e) => e instanceof OpenAI.BadRequestError && body(e), 'BadRequestError 400');
  await c.throws(tag('temperature "hot" → 400'),
    () => client.completions.create({ model, prompt: 'hi', max_tokens: 2, temperature: 'hot' }),
    (e) => e instanceof OpenAI.BadRequestError, 'BadRequestError 400');
  await c.throws(tag('chat messages missing → 400'),
    () => client.chat.completions.create({ model, max_tokens: 2 }),
    (e) => e instanceof OpenAI.BadRequestError, 'BadRequestError 400');
  await c.throws(tag('completions prompt missing → 400'),
    () => client.completions.create({ model, max_tokens: 2 }),
    (e) => e instanceof OpenAI.BadRequestError, 'BadRequestError 400');
  if (a.ctx) {
    const ctx = Number(a.ctx);
    await c.throws(tag(`prompt longer than the context (${ctx}) → 400`),
      () => client.completions.create({ model, prompt: words(ctx * 2, 7), max_tokens: 4 }),
      (e) => e instanceof OpenAI.BadRequestError && body(e), 'BadRequestError 400');
    await c.throws(tag('prompt longer than the context, streamed → 400 before the stream'),
      async () => { const s = await client.completions.create({ model, prompt: words(ctx * 2, 8), max_tokens: 4, stream: true }); for await (const _ of s); },
      (e) => e instanceof OpenAI.BadRequestError, 'BadRequestError 400');
    // max_tokens beyond the context: a 400, or generation clamped to the context ("length")
    try {
      const r = await client.completions.create({ model, prompt: 'hi', max_tokens: ctx * 4, ignore_eos: true });
      c.ok(tag(`max_tokens beyond the context (${ctx * 4}): clamped, finish "length", within the context`),
        r.choices[0].finish_reason === 'length' && r.usage.prompt_tokens + r.usage.completion_tokens <= ctx, r.usage);
    } catch (e) {
      c.ok(tag(`max_tokens beyond the context (${ctx * 4}) → 400`), e instanceof OpenAI.BadRequestError, `${e.status} ${e.message}`);
    }
  }
  // after all that the server still answers
  const r = await client.completions.create({ model, prompt: P, max_tokens: N, temperature: 0 });
  c.eq(tag('after the errors: greedy completion unchanged'), r.choices[0].text, G.text);
});

c.done();
