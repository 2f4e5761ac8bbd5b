// serve_ollama.mjs — checks a running `wick serve`'s Ollama API (/api/*)
// through the real `ollama` npm client. Driven by tests/serve_ollama.test.sh.
//
//   node serve_ollama.mjs --name N --url http://127.0.0.1:PORT --ref REF.json [--chat]
//
// REF.json as for serve_openai.mjs ({prompt, n, gen: `wick generate --temp 0 --json`}).
import { Ollama } from 'ollama';
import { readFileSync } from 'node:fs';
import { checker, parseArgs, sleep } from './serve_util.mjs';

const a = parseArgs();
const name = a.name || 'serve_ollama';
const c = checker(name);
const ref = JSON.parse(readFileSync(a.ref, 'utf8'));
const P = ref.prompt, N = ref.n, G = ref.gen;
const tag = (s) => `[${name}] ${s}`;
const ol = new Ollama({ host: a.url });
const isInt = (x) => Number.isInteger(x) && x >= 0;
let model;

function finalOk(label, r, { promptTokens, evalCount, reason } = {}) {
  c.ok(tag(`${label}: done true`), r && r.done === true, r);
  c.ok(tag(`${label}: done_reason stop|length`), r && ['stop', 'length'].includes(r.done_reason), r && r.done_reason);
  if (reason) c.eq(tag(`${label}: done_reason ${reason}`), r.done_reason, reason);
  const f = ['total_duration', 'load_duration', 'prompt_eval_count', 'prompt_eval_duration', 'eval_count', 'eval_duration'];
  c.ok(tag(`${label}: ${f.join(', ')} are integers >= 0`), r && f.every((k) => isInt(r[k])), r && Object.fromEntries(f.map((k) => [k, r[k]])));
  // nanoseconds: a request on a tiny model takes more than 10 µs and far less than 100 s;
  // milliseconds or seconds would fall outside
  c.ok(tag(`${label}: durations in nanoseconds (10 µs < total < 100 s, eval parts <= total)`),
    r && r.total_duration > 1e4 && r.total_duration < 1e11 &&
    r.prompt_eval_duration <= r.total_duration && r.eval_duration <= r.total_duration &&
    r.load_duration <= r.total_duration, r && { total: r.total_duration, load: r.load_duration, pe: r.prompt_eval_duration, ev: r.eval_duration });
  c.ok(tag(`${label}: model and created_at`), r && r.model === model && !Number.isNaN(Date.parse(r.created_at)), r && [r.model, r.created_at]);
  if (promptTokens !== undefined) c.eq(tag(`${label}: prompt_eval_count = prompt tokens`), r.prompt_eval_count, promptTokens);
  if (evalCount !== undefined) c.eq(tag(`${label}: eval_count`), r.eval_count, evalCount);
}

await c.step(tag('version/list/show/ps'), async () => {
  const v = await ol.version();
  c.ok(tag('version(): {version: string}'), v && typeof v.version === 'string' && v.version.length > 0, v);
  const l = await ol.list();
  c.ok(tag('list(): one or more models'), Array.isArray(l.models) && l.models.length >= 1, l);
  const m0 = l.models[0];
  model = m0.name || m0.model;
  c.ok(tag('list(): name, model, modified_at, size, digest, details{format, family, parameter_size, quantization_level}'),
    typeof m0.name === 'string' && typeof m0.model === 'string' && !Number.isNaN(Date.parse(m0.modified_at)) &&
    isInt(m0.size) && m0.size > 0 && typeof m0.digest === 'string' && m0.details &&
    ['format', 'family', 'parameter_size', 'quantization_level'].every((k) => typeof m0.details[k] === 'string'), m0);
  c.ok(tag('list(): details.quantization_level names the weight type (F32, F16, Q8_0, Q4_0, ...)'),
    /^(F32|F16|BF16|Q8_0|Q4_0|Q6_K)$/i.test(m0.details?.quantization_level || ''), m0.details);
  const s = await ol.show({ model });
  c.ok(tag('show(): details, model_info, capabilities'), s && s.details && typeof s.model_info === 'object' && Array.isArray(s.capabilities), s && Object.keys(s));
  c.ok(tag('show(): capabilities include "completion"'), s && Array.isArray(s.capabilities) && s.capabilities.includes('completion'), s && s.capabilities);
});
if (!model) c.done();

// ---- generate
let greedy;
await c.step(tag('generate'), async () => {
  const r = await ol.generate({ model, prompt: P, raw: true, options: { num_predict: N, temperature: 0 } });
  greedy = r.response;
  c.eq(tag(`generate greedy (num_predict ${N}, temperature 0) = wick generate --temp 0`), r.response, G.text);
  finalOk('generate', r, { promptTokens: G.prompt_tokens, evalCount: G.tokens.length, reason: G.finish_reason });
  // the same through the OpenAI completions endpoint
  const o = await (await fetch(`${a.url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, prompt: P, max_tokens: N, temperature: 0 }) })).json();
  c.eq(tag('generate greedy = /v1/completions greedy text'), r.response, o.choices?.[0]?.text);
  if (a.chat) {
    // without raw the prompt goes through the chat template as one user message, as Ollama does
    const t = await ol.generate({ model, prompt: P, options: { num_predict: 12, temperature: 0 } });
    const ch = await ol.chat({ model, messages: [{ role: 'user', content: P }], options: { num_predict: 12, temperature: 0 } });
    c.eq(tag('generate without raw (templated) = chat with one user message'), t.response, ch.message.content);
    // the same prompt again (now cached): prompt_eval_count counts only the tokens evaluated, so
    // with all but the last prompt token reused from the KV cache it is 1
    c.eq(tag('chat of the same prompt (cached now): prompt_eval_count = tokens evaluated (1)'), ch.prompt_eval_count, 1);
    c.ok(tag('generate without raw: the template adds tokens to the prompt'), t.prompt_eval_count > G.prompt_tokens, [t.prompt_eval_count, G.prompt_tokens]);
  }

  const parts = [];
  for await (const p of await ol.generate({ model, prompt: P, raw: true, stream: true, options: { num_predict: N, temperature: 0 } })) parts.push(p);
  const last = parts[parts.length - 1];
  c.eq(tag('generate stream: concatenated responses = non-streamed'), parts.map((p) => p.response || '').join(''), r.response);
  c.ok(tag('generate stream: several parts, done false until the last'), parts.length > 2 && parts.slice(0, -1).every((p) => p.done === false), parts.length);
  finalOk('generate stream final', last, { evalCount: G.tokens.length });
});

await c.step(tag('generate options'), async () => {
  const r = await ol.generate({ model, prompt: P, raw: true, options: { num_predict: 5, temperature: 0 } });
  c.eq(tag('num_predict 5: done_reason "length", eval_count 5, prefix of the greedy text'),
    [r.done_reason, r.eval_count, G.text.startsWith(r.response)], ['length', 5, true]);
  const t = G.text;
  const mm = /[ -~]{5,}/g; mm.lastIndex = Math.floor(t.length / 2);
  const run = mm.exec(t) || /[ -~]{5,}/.exec(t);
  if (run) {
    const stop = run[0].slice(1, 5);
    const want = t.slice(0, t.indexOf(stop));
    const rs = await ol.generate({ model, prompt: P, raw: true, options: { num_predict: N, temperature: 0, stop: [stop] } });
    c.eq(tag(`options.stop ${JSON.stringify(stop)}: response ends right before it, done_reason "stop"`), [rs.response, rs.done_reason], [want, 'stop']);
    let st = '';
    for await (const p of await ol.generate({ model, prompt: P, raw: true, stream: true, options: { num_predict: N, temperature: 0, stop: [stop] } })) st += p.response || '';
    c.eq(tag('options.stop streamed: same'), st, want);
  }
  const s1 = await ol.generate({ model, prompt: P, raw: true, options: { num_predict: 20, temperature: 1, seed: 7 } });
  const s2 = await ol.generate({ model, prompt: P, raw: true, options: { num_predict: 20, temperature: 1, seed: 7 } });
  c.eq(tag('options.seed 7 twice at temperature 1: same response'), s2.response, s1.response);
  const others = [];
  for (const seed of [8, 9, 10]) others.push((await ol.generate({ model, prompt: P, raw: true, options: { num_predict: 20, temperature: 1, seed } })).response);
  c.ok(tag('options.seed 8/9/10: at least one differs'), others.some((x) => x !== s1.response), { s1: s1.response, others });
});

// ---- chat
if (a.chat) await c.step(tag('chat'), async () => {
  const messages = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say hello.' }];
  const r = await ol.chat({ model, messages, options: { num_predict: 12, temperature: 0 } });
  c.ok(tag('chat: message {role assistant, content string}'), r.message && r.message.role === 'assistant' && typeof r.message.content === 'string', r.message);
  finalOk('chat', r);
  const parts = [];
  for await (const p of await ol.chat({ model, messages, stream: true, options: { num_predict: 12, temperature: 0 } })) parts.push(p);
  c.eq(tag('chat stream: concatenated contents = non-streamed'), parts.map((p) => p.message?.content || '').join(''), r.message.content);
  c.ok(tag('chat stream: parts carry message.role assistant, done false until the last'),
    parts.length > 1 && parts.slice(0, -1).every((p) => p.done === false && p.message && p.message.role === 'assistant'), parts.slice(0, 2));
  finalOk('chat stream final', parts[parts.length - 1], { evalCount: r.eval_count });
  // the same conversation again: its prompt is cached but for the last token, which alone is evaluated
  c.eq(tag('chat stream final: prompt_eval_count = tokens evaluated (1)'), parts[parts.length - 1].prompt_eval_count, 1);
  // the same conversation on /v1/chat/completions
  const o = await (await fetch(`${a.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages, max_tokens: 12, temperature: 0 }) })).json();
  c.eq(tag('chat = /v1/chat/completions greedy content'), r.message.content, o.choices?.[0]?.message?.content);
});

// ---- ps and keep_alive
await c.step(tag('ps/keep_alive'), async () => {
  const inPs = async () => ((await ol.ps()).models || []).some((m) => m.name === model || m.model === model);
  const ps = await ol.ps();
  const e = (ps.models || []).find((m) => m.name === model || m.model === model);
  c.ok(tag('ps(): lists the loaded model'), !!e, ps);
  if (e) c.ok(tag('ps(): size, expires_at, context_length'), isInt(e.size) && !Number.isNaN(Date.parse(e.expires_at)) && isInt(e.context_length), e);
  const r = await ol.generate({ model, prompt: P, raw: true, keep_alive: 0, options: { num_predict: 4, temperature: 0 } });
  c.ok(tag('generate with keep_alive 0: answers'), r.done === true && G.text.startsWith(r.response), r);
  let gone = false;
  for (let i = 0; i < 50 && !gone; i++) { gone = !(await inPs()); if (!gone) await sleep(100); }
  c.ok(tag('keep_alive 0: ps() no longer lists the model (within 5 s)'), gone, await ol.ps());
  const r2 = await ol.generate({ model, prompt: P, raw: true, options: { num_predict: N, temperature: 0 } });
  c.eq(tag('after unloading: the next request loads it again, same greedy text'), r2.response, G.text);
  c.ok(tag('after reloading: ps() lists it again'), await inPs(), await ol.ps());
  const u = await ol.generate({ model, prompt: '', keep_alive: 0 });
  c.eq(tag('empty prompt + keep_alive 0: done, done_reason "unload"'), [u.done, u.done_reason], [true, 'unload']);
  gone = false;
  for (let i = 0; i < 50 && !gone; i++) { gone = !(await inPs()); if (!gone) await sleep(100); }
  c.ok(tag('empty prompt + keep_alive 0: ps() no longer lists it'), gone);
  const l = await ol.generate({ model, prompt: '' });
  c.eq(tag('empty prompt: loads, done_reason "load"'), [l.done, l.done_reason], [true, 'load']);
  c.ok(tag('after "load": ps() lists it'), await inPs());
});

// ---- errors
await c.step(tag('errors'), async () => {
  await c.throws(tag('generate with an unknown model throws (404)'), () => ol.generate({ model: 'no-such-model', prompt: 'hi' }),
    (e) => e && e.name === 'ResponseError' && e.status_code === 404 && typeof e.error === 'string', 'ResponseError 404');
  await c.throws(tag('chat with an unknown model throws (404)'), () => ol.chat({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }),
    (e) => e && e.name === 'ResponseError' && e.status_code === 404, 'ResponseError 404');
  await c.throws(tag('streamed generate with an unknown model throws'),
    async () => { for await (const _ of await ol.generate({ model: 'no-such-model', prompt: 'hi', stream: true })); },
    (e) => e && e.name === 'ResponseError', 'ResponseError');
  await c.throws(tag('show() of an unknown model throws (404)'), () => ol.show({ model: 'no-such-model' }),
    (e) => e && e.name === 'ResponseError' && e.status_code === 404, 'ResponseError 404');
  const r = await ol.generate({ model, prompt: P, raw: true, options: { num_predict: N, temperature: 0 } });
  c.eq(tag('after the errors: greedy generate unchanged'), r.response, G.text);
});

c.done();
