// serve_concurrency.mjs — continuous batching through the `openai` client:
// every request's output under concurrent load must be byte-identical to the
// same request run alone. Driven by tests/serve_concurrency.test.sh.
//
//   node serve_concurrency.mjs --name N --url URL --ctx CTX
//        [--requests 24] [--concurrency 8] [--chat] [--sampled]
//        [--long MAXTOK]        every request generates MAXTOK tokens (ignore_eos)
//        [--expect-preemption]  /metrics must count preemptions during the load
//        [--abort MAXTOK]       then the aborted-stream scenario with a MAXTOK stream
import OpenAI from 'openai';
import { checker, parseArgs, metrics, words, sleep } from './serve_util.mjs';

const a = parseArgs();
const name = a.name || 'serve_concurrency';
const c = checker(name);
const tag = (s) => `[${name}] ${s}`;
const ctx = Number(a.ctx || 128);
const nReq = Number(a.requests || 24), conc = Number(a.concurrency || 8);
const client = new OpenAI({ baseURL: `${a.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 120_000 });
const deadline = Date.now() + Number(a['time-limit-s'] || 240) * 1000;
let model;

const running = (m) => Object.entries(m.series).filter(([k]) => k.startsWith('vllm:num_requests_running')).reduce((s, [, v]) => s + v, 0);
const counter = (m, n) => m.byName[n] ?? m.byName[n.replace(/_total$/, '')] ?? NaN;

// the request set: mixed prompt lengths and max_tokens, greedy (and seeded samples with --sampled)
function requests() {
  const out = [];
  const shared = a['shared-prefix'] ? words(Math.floor(ctx / 12), 4242) + ' ' : '';
  const maxPromptWords = Math.max(4, Math.floor(ctx / (shared ? 12 : 5)));
  for (let i = 0; i < nReq; i++) {
    const nw = 1 + ((i * 7919) % maxPromptWords);
    const prompt = shared + words(nw, i + 1);
    let max = a.long ? Number(a.long) : 4 + ((i * 104729) % Math.max(8, Math.floor(ctx / 2) - 4));
    const r = { i, prompt, max_tokens: max, temperature: 0, stream: i % 2 === 1, chat: !!a.chat && i % 3 === 2 };
    if (a.long) r.ignore_eos = true;
    if (a.sampled && i % 4 === 3) { r.temperature = 0.9; r.seed = 1000 + i; }
    if (i % 5 === 4) r.stop = [' the', 'a'];               // stop strings
    if (i % 6 === 5 && !r.chat) r.logprobs = 2;             // logprobs must not depend on the batch either
    out.push(r);
  }
  return out;
}

async function run(r, signal) {
  const common = { model, max_tokens: r.max_tokens, temperature: r.temperature };
  if (r.seed !== undefined) common.seed = r.seed;
  if (r.ignore_eos) common.ignore_eos = true;
  if (r.stop) common.stop = r.stop;
  const t0 = performance.now();
  let text = '', finish = null, usage = null, lp = null;
  if (r.chat) {
    const params = { ...common, messages: [{ role: 'user', content: r.prompt }] };
    if (r.stream) {
      const s = await client.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } }, { signal });
      for await (const ch of s) { if (ch.usage) usage = ch.usage; for (const x of ch.choices) { text += x.delta?.content || ''; if (x.finish_reason) finish = x.finish_reason; } }
    } else {
      const res = await client.chat.completions.create(params, { signal });
      text = res.choices[0].message.content; finish = res.choices[0].finish_reason; usage = res.usage;
    }
  } else {
    const params = { ...common, prompt: r.prompt };
    if (r.logprobs) params.logprobs = r.logprobs;
    if (r.stream) {
      const s = await client.completions.create({ ...params, stream: true, stream_options: { include_usage: true } }, { signal });
      for await (const ch of s) {
        if (ch.usage) usage = ch.usage;
        for (const x of ch.choices) {
          text += x.text || ''; if (x.finish_reason) finish = x.finish_reason;
          if (x.logprobs) (lp ||= []).push(...x.logprobs.token_logprobs, ...x.logprobs.top_logprobs.map((o) => JSON.stringify(o)));
        }
      }
    } else {
      const res = await client.completions.create(params, { signal });
      text = res.choices[0].text; finish = res.choices[0].finish_reason; usage = res.usage;
      const l = res.choices[0].logprobs;
      if (l) lp = [...l.token_logprobs, ...l.top_logprobs.map((o) => JSON.stringify(o))];
    }
  }
  return { text, finish, tokens: usage?.completion_tokens, lp: lp && JSON.stringify(lp), t0, t1: performance.now() };
}

await c.step(tag('model'), async () => { model = (await client.models.list()).data[0].id; });
if (!model) c.done();

const m0 = await metrics(a.url);
c.ok(tag('/metrics: 200, has vllm:num_preemptions_total, vllm:num_requests_running, vllm:num_requests_waiting'),
  m0.status === 200 && /^vllm:num_preemptions_total[{ ]/m.test(m0.text) && /^vllm:num_requests_running[{ ]/m.test(m0.text) &&
  /^vllm:num_requests_waiting[{ ]/m.test(m0.text), m0.text.split('\n').filter((l) => l.startsWith('vllm:')).map((l) => l.split(/[{ ]/)[0]));

{
  // the router contract (llm-d's default names) and the vLLM series
  const t = m0.text;
  const has = (n) => new RegExp(`^${n}[{ ]`, 'm').test(t);
  const need = ['vllm:num_requests_running', 'vllm:num_requests_waiting', 'vllm:kv_cache_usage_perc', 'vllm:lora_requests_info',
    'vllm:cache_config_info', 'vllm:prompt_tokens_total', 'vllm:generation_tokens_total', 'vllm:request_success_total',
    'vllm:time_to_first_token_seconds_bucket', 'vllm:e2e_request_latency_seconds_count', 'vllm:inter_token_latency_seconds_sum'];
  const missing = need.filter((n) => !has(n));
  c.ok(tag('/metrics: the llm-d default series and the vLLM counters and histograms are there'), missing.length === 0, missing);
  const cfg = t.match(/^vllm:cache_config_info\{([^}]*)\}/m);
  c.ok(tag('/metrics: cache_config_info has block_size and num_gpu_blocks labels'), cfg && /block_size="\d+"/.test(cfg[1]) && /num_gpu_blocks="\d+"/.test(cfg[1]), cfg && cfg[0]);
  const kv = m0.byName['vllm:kv_cache_usage_perc'];
  c.ok(tag('/metrics: kv_cache_usage_perc within [0, 1]'), kv >= 0 && kv <= 1, kv);
  c.ok(tag('/metrics: Content-Type text/plain; version=0.0.4'), /text\/plain/.test(m0.contentType || 'text/plain'), m0.contentType);
}

const reqs = requests();
// 1. each request alone, one after another
const solo = [];
await c.step(tag('solo runs'), async () => {
  for (const r of reqs) solo.push(await run(r));
});
if (solo.length !== reqs.length) c.done();
const mSolo = await metrics(a.url);

// 2. all of them, `conc` at a time, with a /metrics poller
const conc_ = new Array(reqs.length);
let maxRunning = 0, maxWaiting = 0, polling = true;
const poller = (async () => {
  while (polling) {
    try {
      const m = await metrics(a.url, 2000);
      maxRunning = Math.max(maxRunning, running(m));
      maxWaiting = Math.max(maxWaiting, Object.entries(m.series).filter(([k]) => k.startsWith('vllm:num_requests_waiting')).reduce((s, [, v]) => s + v, 0));
    } catch { /* the check below reports */ }
    await sleep(20);
  }
})();
const tLoad = performance.now();
await c.step(tag(`${reqs.length} requests at concurrency ${conc}`), async () => {
  let next = 0;
  const worker = async () => { while (next < reqs.length && Date.now() < deadline) { const k = next++; conc_[k] = await run(reqs[k]); } };
  await Promise.all(Array.from({ length: conc }, worker));
});
const loadMs = performance.now() - tLoad;
polling = false; await poller;
const mLoad = await metrics(a.url);

let same = 0;
const diffs = [];
for (let k = 0; k < reqs.length; k++) {
  const s = solo[k], p = conc_[k];
  if (p && p.text === s.text && p.finish === s.finish && p.tokens === s.tokens && p.lp === s.lp) same++;
  else diffs.push({ i: k, req: { ...reqs[k], prompt: reqs[k].prompt.slice(0, 40) }, solo: s && [s.text, s.finish, s.tokens, s.lp?.slice(0, 80)],
    concurrent: p && [p.text, p.finish, p.tokens, p.lp?.slice(0, 80)] });
}
c.ok(tag(`all ${reqs.length} outputs under load byte-identical to solo (text, finish_reason, completion_tokens, logprobs)`), same === reqs.length,
  { same, diffs: diffs.slice(0, 3) });
// overlap seen by the client, and requests running at once seen by the server
const ev = conc_.filter(Boolean).flatMap((p) => [[p.t0, 1], [p.t1, -1]]).sort((x, y) => x[0] - y[0] || x[1] - y[1]);
let cur = 0, maxOverlap = 0; for (const [, d] of ev) { cur += d; maxOverlap = Math.max(maxOverlap, cur); }
const gen = counter(mLoad, 'vllm:generation_tokens_total') - counter(mSolo, 'vllm:generation_tokens_total');
const wantGen = conc_.filter(Boolean).reduce((s, p) => s + (p.tokens || 0), 0);
console.log(`info: load ${loadMs.toFixed(0)} ms, client overlap ${maxOverlap}, server max running ${maxRunning}, max waiting ${maxWaiting}, ` +
  `generation tokens ${gen}, preemptions +${counter(mLoad, 'vllm:num_preemptions_total') - counter(mSolo, 'vllm:num_preemptions_total')}`);
c.ok(tag(`requests overlapped (client side max ${maxOverlap} >= 2)`), maxOverlap >= 2, maxOverlap);
c.ok(tag('/metrics: num_requests_running never above --parallel'), maxRunning <= conc, maxRunning);
c.eq(tag('/metrics: generation_tokens_total grew by the completion tokens of the load'), gen, wantGen);
if (a['expect-preemption']) {
  const pre = counter(mLoad, 'vllm:num_preemptions_total') - counter(mSolo, 'vllm:num_preemptions_total');
  c.ok(tag(`tiny KV budget: preemptions during the load > 0 (got ${pre})`), pre > 0, pre);
}
{
  let m = mLoad;
  for (let i = 0; i < 50 && running(m) !== 0; i++) { await sleep(100); m = await metrics(a.url); }
  c.eq(tag('after the load: vllm:num_requests_running 0'), running(m), 0);
}

// 3. an aborted stream: the request must be cancelled, its sequence freed, the server fine
if (a.abort) await c.step(tag('aborted stream'), async () => {
  const big = Number(a.abort);
  const before = await metrics(a.url);
  const ac = new AbortController();
  let chunks = 0, aborted = false, finished = false;
  try {
    const s = await client.completions.create({ model, prompt: 'Once upon a time', max_tokens: big, temperature: 0, ignore_eos: true, stream: true }, { signal: ac.signal });
    // (the v6 client ends the iteration quietly when its signal aborts)
    for await (const ch of s) { if (ch.choices?.[0]?.text !== undefined) chunks++; if (ch.choices?.[0]?.finish_reason) finished = true; if (chunks === 3) ac.abort(); }
    aborted = ac.signal.aborted && !finished;
  } catch (e) { aborted = e instanceof OpenAI.APIUserAbortError || e.name === 'AbortError'; if (!aborted) throw e; }
  c.ok(tag('abort after 3 chunks: the stream ends early, without a finish_reason'), aborted && chunks >= 3 && chunks < big, { aborted, chunks, finished });
  let m = await metrics(a.url), waited = 0;
  while (running(m) !== 0 && waited < 10_000) { await sleep(50); waited += 50; m = await metrics(a.url); }
  c.ok(tag(`after the abort: vllm:num_requests_running back to 0 (within ${waited} ms)`), running(m) === 0, running(m));
  const gen2 = counter(m, 'vllm:generation_tokens_total') - counter(before, 'vllm:generation_tokens_total');
  c.ok(tag(`the aborted request was cancelled: ${gen2} of ${big} tokens generated`), gen2 < big, gen2);
  const again = await run(reqs[0]);
  c.eq(tag('a request after the abort: same output as solo'), [again.text, again.finish], [solo[0].text, solo[0].finish]);
  // abort while waiting in the queue: fill every slot, abort a queued one
  const acs = Array.from({ length: conc + 2 }, () => new AbortController());
  const ps = acs.map((ac2) => client.completions.create({ model, prompt: 'Once upon a time', max_tokens: big, temperature: 0, ignore_eos: true, stream: true },
    { signal: ac2.signal }).then(async (s) => { for await (const _ of s); }).catch((e) => e));
  await sleep(300);
  for (const ac2 of acs) ac2.abort();
  await Promise.all(ps);
  m = await metrics(a.url); waited = 0;
  const queued = (mm) => Object.entries(mm.series).filter(([k]) => k.startsWith('vllm:num_requests_waiting')).reduce((s2, [, v]) => s2 + v, 0);
  while ((running(m) !== 0 || queued(m) !== 0) && waited < 10_000) { await sleep(50); waited += 50; m = await metrics(a.url); }
  c.ok(tag(`${conc + 2} streams (some queued) aborted at once: running and waiting back to 0 (${waited} ms)`), running(m) === 0 && queued(m) === 0,
    { running: running(m), waiting: queued(m) });
  const again2 = await run(reqs[1]);
  c.eq(tag('a request after the mass abort: same output as solo'), [again2.text, again2.finish], [solo[1].text, solo[1].finish]);
});

c.done();
