#!/usr/bin/env node
// serve_bench.mjs — a serving benchmark on the `openai` npm client (v6,
// streaming): N concurrent streams against OpenAI-compatible servers, with
// per-request TTFT, inter-token latency (ITL), TPOT, E2E and aggregates, plus
// /metrics deltas. Loopback only; bounded in requests.
//
//   node bench/serve_bench.mjs --url http://127.0.0.1:PORT/v1 [--model NAME]
//   node bench/serve_bench.mjs --wick build/wick --wick-model M.gguf [--wick-args "-t 2 --parallel 8"]
//                              --llama-server PATH --llama-model M.gguf [--llama-args "..."]
//     [--concurrency 8 | --concurrency 1,8] [--requests 32] [--prompt-tokens 128]
//     [--max-tokens 128] [--repeats 1] [--seed 1] [--ctx 1024] [--threads 2]
//     [--shared-prefixes K [--suffix-tokens 16]]
//     [--json-out FILE]
//
// Every request is a /v1/completions stream whose prompt is prompt-tokens
// random token ids (the same ids for every server; distinct per request, so no
// prefix is shared) and which generates exactly max-tokens tokens
// (ignore_eos). With --wick / --llama-server the servers are started here
// (wick serve --host 127.0.0.1 --port 0; llama-server --parallel P
// -c P×ctx --cont-batching -t THREADS --metrics on a free port), loaded in
// turn with the same requests (targets alternate within each repeat), and
// killed at the end. --requests is per concurrency level, capped at
// 4 × concurrency for concurrency 1. With --repeats R every figure is the median
// of the R runs. Prints a Markdown table and one JSON line ("serve_bench {...}").
import { createRequire } from 'node:module';
import { spawn, execFileSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { pathToFileURL } from 'node:url';

const require = createRequire(new URL('../tests/js/package.json', import.meta.url));
let OpenAI;
try { OpenAI = (await import(pathToFileURL(require.resolve('openai')).href)).default; }
catch {
  console.error('serve_bench: the openai client is not installed; run: npm install --prefix tests/js --no-package-lock');
  process.exit(2);
}

// ---- arguments
const argv = process.argv.slice(2);
const A = {};
for (let i = 0; i < argv.length; i++) {
  if (!argv[i].startsWith('--')) continue;
  const k = argv[i].slice(2);
  if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) A[k] = argv[++i]; else A[k] = true;
}
const concList = String(A.concurrency || 8).split(',').map(Number);
const nReq = Number(A.requests || 32);
const promptTokens = Number(A['prompt-tokens'] || 128);
const maxTokens = Number(A['max-tokens'] || 128);
const repeats = Number(A.repeats || 1);
const seed = Number(A.seed || 1);
const threads = Number(A.threads || 2);
const maxConc = Math.max(...concList);
const ctx = Number(A.ctx || Math.max(256, Math.ceil((promptTokens + (A['shared-prefixes'] ? Number(A['suffix-tokens'] || 16) : 0) + maxTokens + 8) / 128) * 128));
const vocabLo = Number(A['vocab-lo'] || 100), vocabHi = Number(A['vocab-hi'] || 500);
const timeLimitMs = Number(A['time-limit-s'] || 900) * 1000;
const tStart = Date.now();
const splitArgs = (s) => (s && s !== true ? String(s).match(/(?:[^\s"']+|"[^"]*"|'[^']*')+/g).map((x) => x.replace(/^["']|["']$/g, '')) : []);

// ---- helpers
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function pct(xs, p) {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const i = (s.length - 1) * p, lo = Math.floor(i), hi = Math.ceil(i);
  return s[lo] + (s[hi] - s[lo]) * (i - lo);
}
const median = (xs) => pct(xs.filter((x) => Number.isFinite(x)), 0.5);
// xorshift64 seeded through splitmix64, so nearby seeds give unrelated streams
function rng(s) {
  const M = (1n << 64n) - 1n;
  let z = (BigInt(s) + 0x9e3779b97f4a7c15n) & M;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & M;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & M;
  let x = (z ^ (z >> 31n)) | 1n;
  return () => { x ^= x << 13n; x &= (1n << 64n) - 1n; x ^= x >> 7n; x ^= x << 17n; x &= (1n << 64n) - 1n; return Number(x % 1000000007n) / 1000000007; }; }
// n prompts of promptTokens random ids; salt (repeat, concurrency) makes every
// load's prompts its own, so no request finds another's prefix cached
function prompts(n, salt = 0) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const r = rng(seed * 1000003 + salt * 100003 + i + 1);
    out.push(Array.from({ length: promptTokens }, () => vocabLo + Math.floor(r() * (vocabHi - vocabLo))));
  }
  return out;
}
// --shared-prefixes K: request i is system prompt i mod K (promptTokens ids,
// the same for every request of the load) + its own suffixTokens ids: K
// clients' system prompts taken round-robin, for the prefix cache
const sharedPrefixes = Number(A['shared-prefixes'] || 0);
const suffixTokens = Number(A['suffix-tokens'] || 16);
function loadPrompts(n, salt) {
  if (!sharedPrefixes) return prompts(n, salt);
  const sys = prompts(sharedPrefixes, salt);
  return Array.from({ length: n }, (_, i) => {
    const r = rng(seed * 7919 + salt * 104729 + i + 1);
    return sys[i % sharedPrefixes].concat(Array.from({ length: suffixTokens }, () => vocabLo + Math.floor(r() * (vocabHi - vocabLo))));
  });
}
function freePort() {
  return new Promise((res, rej) => { const s = net.createServer(); s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => res(p)); }); s.on('error', rej); });
}
async function metrics(base) {
  try {
    const r = await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(3000) });
    if (r.status !== 200) return null;
    const byName = {}, series = {};
    for (const line of (await r.text()).split('\n')) {
      if (!line || line[0] === '#') continue;
      const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/);
      if (m) { byName[m[1]] = (byName[m[1]] || 0) + Number(m[3]); series[m[1] + (m[2] || '')] = Number(m[3]); }
    }
    return { byName, series };
  } catch { return null; }
}
function procStatus(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k) => Number((s.match(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm')) || [])[1] || NaN);
    return { hwm: kb('VmHWM') / 1024, rss: kb('VmRSS') / 1024 };
  } catch { return { hwm: NaN, rss: NaN }; }
}

// weights and KV bytes per position of the wick model (from `wick info`), for
// "peak RSS vs weights + KV in use"
function wickModelInfo() {
  if (!A.wick || !A['wick-model']) return null;
  try {
    const t = execFileSync(A.wick, ['info', '-m', A['wick-model']], { encoding: 'utf8' });
    const layers = Number(t.match(/^layers:\s+(\d+)/m)[1]);
    const h = t.match(/^heads:\s+\d+ \(kv (\d+), head_dim (\d+)\)/m);
    const wmib = Number((t.match(/([\d.]+) MiB of weights/) || [])[1]);
    const kvType = (String(A['wick-args'] || '').match(/--kv-type\s+(f16|f32)/) || [])[1] || 'f32';
    return { weights_mib: wmib, kv_bytes_per_token: layers * 2 * Number(h[1]) * Number(h[2]) * (kvType === 'f16' ? 2 : 4) };
  } catch { return null; }
}
const wickInfo = wickModelInfo();

// ---- servers
const children = [];
function killAll() { for (const ch of children) { try { process.kill(ch.pid, 'SIGTERM'); } catch { } } }
process.on('exit', killAll);
process.on('SIGINT', () => { killAll(); process.exit(130); });
process.on('SIGTERM', () => { killAll(); process.exit(143); });

async function waitHealth(base, child, log, what) {
  for (let i = 0; i < 1200; i++) {
    if (child.exitCode !== null) throw new Error(`${what} exited (${child.exitCode}):\n${log.join('').slice(-2000)}`);
    try { const r = await fetch(`${base}/health`, { signal: AbortSignal.timeout(2000) }); if (r.status === 200) return; } catch { }
    await sleep(100);
  }
  throw new Error(`${what}: /health not 200 after 120 s:\n${log.join('').slice(-2000)}`);
}
async function startWick() {
  const args = ['serve', '-m', A['wick-model'], '--host', '127.0.0.1', '--port', '0',
    ...(A['wick-args'] ? splitArgs(A['wick-args']) : ['-t', String(threads), '--parallel', String(maxConc), '--ctx', String(ctx)])];
  const child = spawn(A.wick, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const log = [];
  let port = 0;
  const onData = (d) => { log.push(d.toString()); const m = log.join('').match(/(?:127\.0\.0\.1|localhost|0\.0\.0\.0):(\d+)/); if (m && !port) port = Number(m[1]); };
  child.stdout.on('data', onData); child.stderr.on('data', onData);
  for (let i = 0; i < 1200 && !port; i++) { if (child.exitCode !== null) break; await sleep(100); }
  if (!port) throw new Error(`wick serve printed no port:\n${log.join('').slice(-2000)}`);
  const base = `http://127.0.0.1:${port}`;
  await waitHealth(base, child, log, 'wick serve');
  return { label: 'wick', base, child, log, cmd: `${A.wick} ${args.join(' ')}`, modelFile: A['wick-model'] };
}
async function startLlama() {
  const port = await freePort();
  const args = ['-m', A['llama-model'], '--host', '127.0.0.1', '--port', String(port),
    '--parallel', String(maxConc), '-c', String(maxConc * ctx), '--cont-batching', '-t', String(threads), '--metrics',
    ...splitArgs(A['llama-args'])];
  const child = spawn(A['llama-server'], args, { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const log = [];
  child.stdout.on('data', (d) => log.push(d.toString())); child.stderr.on('data', (d) => log.push(d.toString()));
  const base = `http://127.0.0.1:${port}`;
  await waitHealth(base, child, log, 'llama-server');
  return { label: 'llama-server', base, child, log, cmd: `${A['llama-server']} ${args.join(' ')}`, modelFile: A['llama-model'] };
}

// ---- one load: `conc` workers over `reqs`
async function load(t, conc, reqs) {
  const client = new OpenAI({ baseURL: `${t.base}/v1`, apiKey: 'sk-bench', maxRetries: 0, timeout: 600_000 });
  const per = [];
  let next = 0, kvMax = 0, rssMax = 0, polling = true, kvPositions = 0, kvBlockSize = 0, residentMax = 0;
  const m0 = await metrics(t.base);
  const poller = (async () => {
    while (polling) {
      const m = await metrics(t.base);
      if (m) {
        kvMax = Math.max(kvMax, m.byName['vllm:kv_cache_usage_perc'] ?? 0);
        for (const k of Object.keys(m.series)) {
          const b = k.match(/^vllm:cache_config_info\{.*block_size="(\d+)".*num_gpu_blocks="(\d+)"/) || k.match(/^vllm:cache_config_info\{.*num_gpu_blocks="(\d+)".*block_size="(\d+)"/);
          if (b) kvPositions = Number(b[1]) * Number(b[2]);
          const bs = k.match(/^vllm:cache_config_info\{.*block_size="(\d+)"/), nb = k.match(/^vllm:cache_config_info\{.*num_gpu_blocks="(\d+)"/);
          if (bs && nb) {
            kvBlockSize = Number(bs[1]);
            // blocks resident: held by running requests + kept by the prefix cache
            residentMax = Math.max(residentMax, (m.byName['vllm:kv_cache_usage_perc'] ?? 0) * Number(nb[1]) + (m.byName['wick:kv_cache_cached_blocks'] ?? 0));
          }
        }
      }
      if (t.child) rssMax = Math.max(rssMax, procStatus(t.child.pid).rss || 0);
      await sleep(100);
    }
  })();
  const one = async (ids) => {
    const t0 = performance.now();
    let first = 0, last = 0, out = 0, chunks = 0;
    const itl = [], times = [];
    const s = await client.completions.create({ model: t.model, prompt: ids, max_tokens: maxTokens, temperature: 0, ignore_eos: true,
      stream: true, stream_options: { include_usage: true } });
    for await (const ch of s) {
      if (ch.usage) out = ch.usage.completion_tokens;
      const text = ch.choices?.[0]?.text;
      if (text === undefined || text === null) continue;
      const now = performance.now();
      if (!first) first = now; else itl.push(now - last);
      last = now; chunks++; times.push(now);
    }
    const t1 = performance.now();
    if (!out) out = chunks;
    const ttft = first - t0, e2e = t1 - t0;
    const tpot = out > 1 ? (e2e - ttft) / (out - 1) : NaN;
    per.push({ ttft, e2e, tpot, itl, out, first, last, times, end: t1, tok_s: out > 1 ? (out - 1) / ((e2e - ttft) / 1000) : NaN });
  };
  const tl = performance.now();
  let errors = 0, firstError = '';
  await Promise.all(Array.from({ length: conc }, async () => {
    while (next < reqs.length) {
      const k = next++;
      try { await one(reqs[k]); } catch (e) { errors++; if (!firstError) firstError = `${e.message}${e.cause ? ': ' + e.cause.message : ''}`; }
    }
  }));
  if (errors) {
    console.error(`serve_bench: ${t.label} c=${conc}: ${errors} of ${reqs.length} requests failed (${firstError}); ` +
      `server ${t.child && t.child.exitCode !== null ? `exited with ${t.child.exitCode ?? t.child.signalCode}` : 'still running'}; its log ends:\n` +
      (t.log || []).join('').slice(-1500));
  }
  const wall = performance.now() - tl;
  polling = false; await poller;
  const m1 = await metrics(t.base);
  const delta = {};
  if (m0 && m1) {
    for (const n of ['vllm:prompt_tokens_total', 'vllm:generation_tokens_total', 'vllm:num_preemptions_total', 'vllm:prefix_cache_hits_total',
      'vllm:prefix_cache_queries_total', 'vllm:prefix_cache_hits', 'vllm:prefix_cache_queries', 'llamacpp:prompt_tokens_total', 'llamacpp:tokens_predicted_total'])
      if (n in m1.byName) delta[n.replace(/^(vllm|llamacpp):/, '')] = m1.byName[n] - (m0.byName[n] ?? 0);
  }
  const allItl = per.flatMap((p) => p.itl);
  // decode throughput: tokens after each stream's first, over the time during
  // which at least one stream was past its first token (the union of the
  // [first token, end] intervals; prefill of later requests inside it counts)
  const iv = per.filter((p) => p.first).map((p) => [p.first, p.end]).sort((x, y) => x[0] - y[0]);
  let union = 0, cs = -1, ce = -1;
  for (const [a0, a1] of iv) { if (a0 > ce) { if (ce > cs) union += ce - cs; cs = a0; ce = a1; } else ce = Math.max(ce, a1); }
  if (ce > cs) union += ce - cs;
  const decodeTok = per.reduce((s2, p) => s2 + Math.max(0, p.out - 1), 0);
  // steady decode throughput: text chunks over the time during which all
  // `conc` streams were past their first chunk and before their last (no
  // prompt of this load is prefilled then); at concurrency 1, each stream's
  // own decode rate
  const ev = [];
  for (const p of per) if (p.first && p.last > p.first) ev.push([p.first, 1], [p.last, -1]);
  ev.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  const full = [];
  let act = 0, from = 0;
  for (const [t0, d] of ev) {
    const was = act;
    act += d;
    if (was < conc && act >= conc) from = t0;
    else if (was >= conc && act < conc && t0 > from) full.push([from, t0]);
  }
  let steadyMs = 0, steadyChunks = 0;
  for (const [a, b] of full) {
    steadyMs += b - a;
    for (const p of per) for (const tt of p.times) if (tt > a && tt <= b) steadyChunks++;
  }
  const outTotal = per.reduce((s, p) => s + p.out, 0);
  return {
    target: t.label, concurrency: conc, requests: reqs.length, wall_s: wall / 1000, output_tokens: outTotal,
    ttft_p50: pct(per.map((p) => p.ttft), 0.5), ttft_p90: pct(per.map((p) => p.ttft), 0.9),
    itl_p50: pct(allItl, 0.5), itl_p90: pct(allItl, 0.9),
    tpot_p50: pct(per.map((p) => p.tpot), 0.5), e2e_p50: pct(per.map((p) => p.e2e), 0.5),
    stream_tok_s_p50: pct(per.map((p) => p.tok_s), 0.5), stream_tok_s_p90: pct(per.map((p) => p.tok_s), 0.9),
    agg_tok_s: outTotal / (wall / 1000),
    agg_decode_tok_s: union > 0 ? decodeTok / (union / 1000) : NaN,
    steady_decode_tok_s: steadyMs > 0 ? steadyChunks / (steadyMs / 1000) : NaN,
    short_outputs: per.filter((p) => p.out !== maxTokens).length, failed: errors,
    kv_usage_max: kvMax, rss_max_mib: rssMax || NaN,
    kv_in_use_mib: t.label === 'wick' && wickInfo && kvPositions ? kvMax * kvPositions * wickInfo.kv_bytes_per_token / 1048576 : NaN,
    kv_resident_mib: t.label === 'wick' && wickInfo && kvBlockSize ? Math.round(residentMax) * kvBlockSize * wickInfo.kv_bytes_per_token / 1048576 : NaN,
    hwm_mib: t.child ? procStatus(t.child.pid).hwm : NaN,
    metrics_delta: delta,
  };
}

// ---- main
const targets = [];
try {
  if (A.url) targets.push({ label: A.label || 'server', base: String(A.url).replace(/\/v1\/?$/, ''), child: null, modelFile: null });
  if (A.wick) targets.push(await startWick());
  if (A['llama-server']) targets.push(await startLlama());
  if (!targets.length) { console.error('serve_bench: give --url, or --wick/--wick-model and/or --llama-server/--llama-model'); process.exit(2); }
  for (const t of targets) {
    const client = new OpenAI({ baseURL: `${t.base}/v1`, apiKey: 'sk-bench', maxRetries: 0 });
    t.model = A.model && targets.length === 1 ? A.model : (await client.models.list()).data[0].id;
    // warm-up: one short request
    await client.completions.create({ model: t.model, prompt: prompts(1, 999999)[0].slice(0, 8), max_tokens: 4, temperature: 0 });
  }
} catch (e) { console.error(`serve_bench: ${e.message}`); killAll(); process.exit(1); }

const runs = [];
for (let rep = 0; rep < repeats; rep++) {
  for (const conc of concList) {
    const n = conc === 1 ? Math.min(nReq, 4) : nReq;
    const reqs = loadPrompts(n, 1 + rep * 1000 + conc);
    const order = rep % 2 ? [...targets].reverse() : targets;
    for (const t of order) {
      if (Date.now() - tStart > timeLimitMs) { console.error('serve_bench: time limit reached'); break; }
      const r = await load(t, conc, reqs);
      r.repeat = rep;
      runs.push(r);
      console.error(`# rep ${rep} ${t.label} c=${conc}: ${r.agg_tok_s.toFixed(1)} tok/s aggregate, TTFT p50 ${r.ttft_p50.toFixed(0)} ms, ` +
        `ITL p50 ${r.itl_p50.toFixed(1)} ms, wall ${r.wall_s.toFixed(1)} s, RSS peak ${r.hwm_mib.toFixed(0)} MiB`);
    }
  }
}

// medians over repeats
const keys = ['ttft_p50', 'ttft_p90', 'itl_p50', 'itl_p90', 'tpot_p50', 'e2e_p50', 'stream_tok_s_p50', 'stream_tok_s_p90', 'agg_tok_s', 'agg_decode_tok_s', 'steady_decode_tok_s', 'wall_s', 'kv_usage_max', 'kv_in_use_mib', 'kv_resident_mib', 'rss_max_mib', 'hwm_mib', 'short_outputs'];
const summary = [];
for (const t of targets) for (const conc of concList) {
  const rs = runs.filter((r) => r.target === t.label && r.concurrency === conc);
  if (!rs.length) continue;
  const s = { target: t.label, concurrency: conc, requests: rs[0].requests, repeats: rs.length };
  for (const k of keys) s[k] = median(rs.map((r) => r[k]));
  s.agg_tok_s_runs = rs.map((r) => +r.agg_tok_s.toFixed(1));
  s.ttft_p50_runs = rs.map((r) => +r.ttft_p50.toFixed(1));
  s.metrics_delta = rs[rs.length - 1].metrics_delta;
  if (t.modelFile) s.model_mib = statSync(t.modelFile).size / 1048576;
  summary.push(s);
}
const f = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '—');
console.log(`\nserve_bench: ${promptTokens} prompt tokens, ${maxTokens} generated (ignore_eos), ${nReq} requests per level (4 at concurrency 1), ` +
  `${repeats} repeat(s), medians; agg out = all output tokens / wall time of the load; agg decode = tokens after each stream's first / time any stream ` +
  `was past its first token; steady decode = chunks while all streams of the level were past their first chunk and before their last, over that time (no prompt prefilled then); ITL from chunk arrival times; TPOT = (E2E − TTFT)/(out − 1); per-stream tok/s = 1/TPOT\n`);
console.log('| server | conc | agg out tok/s | agg decode tok/s | steady decode tok/s | per-stream tok/s p50 / p90 | TTFT p50 / p90 ms | ITL p50 / p90 ms | TPOT p50 ms | E2E p50 ms | RSS max MiB (sampled) | KV use max | runs (agg out tok/s) |');
console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
for (const s of summary) {
  console.log(`| ${s.target} | ${s.concurrency} | ${f(s.agg_tok_s)} | ${f(s.agg_decode_tok_s)} | ${f(s.steady_decode_tok_s)} | ${f(s.stream_tok_s_p50)} / ${f(s.stream_tok_s_p90)} | ${f(s.ttft_p50, 0)} / ${f(s.ttft_p90, 0)} | ` +
    `${f(s.itl_p50, 2)} / ${f(s.itl_p90, 2)} | ${f(s.tpot_p50, 2)} | ${f(s.e2e_p50, 0)} | ${f(s.rss_max_mib, 0)} | ${s.kv_usage_max ? f(s.kv_usage_max * 100, 0) + '%' : '—'} | ${s.agg_tok_s_runs.join(', ')} |`);
}
const get = (t, c) => summary.find((s) => s.target === t && s.concurrency === c);
const ratios = {};
const w1 = get('wick', 1), w8 = get('wick', maxConc), l8 = get('llama-server', maxConc), l1 = get('llama-server', 1);
if (w1 && w8 && maxConc > 1) { ratios[`wick_c${maxConc}_over_c1`] = w8.agg_tok_s / w1.agg_tok_s; ratios[`wick_decode_c${maxConc}_over_c1`] = w8.agg_decode_tok_s / w1.agg_decode_tok_s; ratios[`wick_steady_decode_c${maxConc}_over_c1`] = w8.steady_decode_tok_s / w1.steady_decode_tok_s; }
if (l1 && l8 && maxConc > 1) ratios[`llama_c${maxConc}_over_c1`] = l8.agg_tok_s / l1.agg_tok_s;
if (w8 && l8) { ratios[`wick_over_llama_c${maxConc}`] = w8.agg_tok_s / l8.agg_tok_s; ratios[`wick_over_llama_decode_c${maxConc}`] = w8.agg_decode_tok_s / l8.agg_decode_tok_s; ratios[`ttft_p50_c${maxConc}_wick_over_llama`] = w8.ttft_p50 / l8.ttft_p50; }
for (const s of summary) if (s.target === 'wick' && s.concurrency === maxConc && wickInfo && Number.isFinite(s.kv_in_use_mib))
  console.log(`wick c=${s.concurrency}: peak RSS of the process (VmHWM, after every load) ${f(s.hwm_mib, 0)} MiB vs weights ${f(wickInfo.weights_mib, 0)} + KV in use ${f(s.kv_in_use_mib, 0)} MiB ` +
    `= ${f(wickInfo.weights_mib + s.kv_in_use_mib, 0)} MiB (${f((s.hwm_mib / (wickInfo.weights_mib + s.kv_in_use_mib) - 1) * 100, 1)}% over)` +
    (Number.isFinite(s.kv_resident_mib) ? `; vs weights + KV resident (running + prefix-cached blocks) ${f(s.kv_resident_mib, 0)} MiB = ` +
      `${f(wickInfo.weights_mib + s.kv_resident_mib, 0)} MiB (${f((s.hwm_mib / (wickInfo.weights_mib + s.kv_resident_mib) - 1) * 100, 1)}% over)` : ''));
if (Object.keys(ratios).length) console.log('\n' + Object.entries(ratios).map(([k, v]) => `${k} = ${v.toFixed(2)}`).join(', '));
for (const s of summary) if (Object.keys(s.metrics_delta || {}).length) console.log(`metrics delta ${s.target} c=${s.concurrency} (last run): ${JSON.stringify(s.metrics_delta)}`);
for (const s of summary) {
  const d = s.metrics_delta || {};
  if (d.prefix_cache_queries_total > 0)
    console.log(`prefix cache ${s.target} c=${s.concurrency} (last run): ${d.prefix_cache_hits_total} of ${d.prefix_cache_queries_total} prompt tokens cached (${(100 * d.prefix_cache_hits_total / d.prefix_cache_queries_total).toFixed(1)}% hit rate)`);
}
const out = { wick_model: wickInfo, prompt_tokens: promptTokens, max_tokens: maxTokens, requests: nReq, repeats, threads, ctx, summary, ratios, runs,
  commands: targets.map((t) => t.cmd).filter(Boolean) };
console.log('serve_bench ' + JSON.stringify(out));
if (A['json-out']) writeFileSync(A['json-out'], JSON.stringify(out, null, 1));
killAll();
await sleep(200);
for (const ch of children) { try { process.kill(ch.pid, 'SIGKILL'); } catch { } }
process.exit(0);
