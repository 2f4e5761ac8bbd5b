// serve_attack.mjs — a bounded attack on a running `wick serve`, as a hostile
// client would make it; driven by tests/serve_attack.test.sh (loopback only).
//
//   node serve_attack.mjs --url URL --slow N --want-text TEXT --prompt P --n K --body-limit B
//
//  1. malformed bodies on every POST route: each a 4xx with the API's JSON
//     error shape (or a closed connection), never a 5xx, a hang or a crash;
//  2. N slow connections (idle, or trickling a request a byte a second)
//     held open while a normal completion must still succeed and give the
//     known text, and /health answer;
//  3. a disconnect storm: 200 requests (streamed or not, OpenAI and Ollama)
//     whose clients leave at random moments;
//  4. afterwards /health is 200, nothing is running or waiting, and the
//     greedy completion still gives the known text.
import net from 'node:net';
import { checker, parseArgs, metrics, sleep } from './serve_util.mjs';
import { rawClient } from './raw_http.mjs';

const a = parseArgs();
const c = checker(a.name || 'attack');
const url = new URL(a.url);
const host = url.hostname, port = Number(url.port);
const { raw, req } = rawClient(host, port);
const nSlow = Number(a.slow || 1100), bodyLimit = Number(a['body-limit'] || 1 << 20);
const jsonOf = (buf) => { try { return JSON.parse(buf.toString('utf8')); } catch { return undefined; } };

let seed = 12345;
const rand = () => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return (seed >>> 8) / (1 << 24); };

async function greedy() {
  const r = await fetch(`${a.url}/v1/completions`, { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ prompt: a.prompt, max_tokens: Number(a.n), temperature: 0 }), signal: AbortSignal.timeout(60_000) });
  const j = await r.json();
  return { status: r.status, text: j.choices && j.choices[0].text };
}

async function idle(timeoutMs = 30_000) {
  const t0 = Date.now();
  let m;
  while (Date.now() - t0 < timeoutMs) {
    m = await metrics(a.url).catch(() => undefined);
    if (m && m.byName['vllm:num_requests_running'] === 0 && m.byName['vllm:num_requests_waiting'] === 0) return true;
    await sleep(100);
  }
  return false;
}

// ---- 1. malformed bodies on every POST route
const ROUTES = ['/v1/completions', '/v1/chat/completions', '/v1/completions/render', '/v1/chat/completions/render',
  '/v1/query/execute', '/tokenize', '/detokenize', '/api/generate', '/api/chat', '/api/show'];
const deep = '['.repeat(5000) + ']'.repeat(5000);
const BODIES = [
  ['empty', ''], ['truncated', '{"prompt": "a'], ['trailing garbage', '{"prompt":"a"} x'], ['not JSON', 'hello'],
  ['an array', '[1,2,3]'], ['a string', '"prompt"'], ['null', 'null'], ['nested 5,000 deep', deep],
  ['a raw control character', '{"prompt":"a\u0001b"}'], ['a NUL then garbage', '{"prompt":"a"}\u0000GARBAGE'],
  ['a lone surrogate', '{"prompt":"\\udc00"}'], ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d])],
  ['a huge number', '{"prompt":"a","max_tokens":1e999,"messages":1e999,"tokens":1e999,"model":1e999}'],
  ['every field the wrong type', '{"prompt":{},"messages":{},"tokens":"x","model":[],"stream":"yes","options":[]}'],
  ['random bytes', Buffer.from(Array.from({ length: 300 }, () => Math.floor(rand() * 256)))],
  ['over the body limit', 'x'.repeat(bodyLimit + 1)],
];
{
  const jobs = [];
  for (const route of ROUTES) for (const [label, body] of BODIES) jobs.push([route, label, body]);
  let bad = [], next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const [route, label, body] = jobs[next++];
      const r = await raw(req('POST', route, body), { timeoutMs: 15_000 });
      const j = jsonOf(r.body);
      const shape = route.startsWith('/api/') ? j && typeof j.error === 'string' : j && j.error && typeof j.error.message === 'string';
      const good = (r.status >= 400 && r.status < 500 && shape) || (r.status === 0 && r.why !== 'timeout');
      if (!good) bad.push({ route, label, status: r.status, why: r.why, body: r.body.toString().slice(0, 120) });
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  c.ok(`malformed bodies on every POST route (${jobs.length}): each a 4xx with a JSON error`, bad.length === 0, bad.slice(0, 5));
  c.eq('afterwards /health', (await fetch(`${a.url}/health`)).status, 200);
}

// ---- 2. slow connections
{
  const socks = [];
  let opened = 0, refusedOrClosed = 0;
  const line = 'POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Pad: ';
  for (let i = 0; i < nSlow; i++) {
    const s = net.connect(port, host);
    s.on('error', () => {});
    s.on('connect', () => { opened++; });
    s.on('close', () => { refusedOrClosed++; });
    s.kind = i % 3; /* 0 idle, 1 a byte a second, 2 whole headers and a trickled body */
    socks.push(s);
    if (i % 50 === 49) await sleep(20);
  }
  await sleep(500);
  let pos = 0;
  const trickle = setInterval(() => {
    pos++;
    for (const s of socks) {
      if (s.destroyed) continue;
      if (s.kind === 1) s.write(line[pos % line.length] === '\r' ? 'a' : line[pos % line.length]);
      if (s.kind === 2) s.write(pos === 1 ? `${line}x\r\nContent-Length: 100000\r\n\r\n{` : ' ');
    }
  }, 1000);
  await sleep(1500);
  /* on new connections of their own (not one kept alive from before) */
  const body = JSON.stringify({ prompt: a.prompt, max_tokens: Number(a.n), temperature: 0 });
  const g = await raw(req('POST', '/v1/completions', body), { timeoutMs: 30_000 });
  const gj = jsonOf(g.body);
  c.ok(`${nSlow} slow connections open (${opened} connected): a normal completion on a new connection succeeds with the known text`,
    g.status === 200 && gj && gj.choices[0].text === a['want-text'], { status: g.status, why: g.why, body: g.body.toString().slice(0, 200) });
  const h = await raw(req('GET', '/health'), { timeoutMs: 20_000 });
  c.eq(`${nSlow} slow connections open: /health on a new connection`, h.status, 200);
  console.log(`info: ${opened} of ${nSlow} slow connections connected, ${refusedOrClosed} closed by the server so far`);
  clearInterval(trickle);
  for (const s of socks) s.destroy();
  await sleep(300);
}

// ---- 3. a disconnect storm
{
  const kinds = [
    ['/v1/completions', (stream) => ({ prompt: 'Once upon a time', max_tokens: 300, ignore_eos: true, stream })],
    ['/v1/chat/completions', (stream) => ({ messages: [{ role: 'user', content: 'Tell me a story' }], max_tokens: 300, ignore_eos: true, stream })],
    ['/api/generate', (stream) => ({ prompt: 'Once upon a time', stream, options: { num_predict: 300 } })],
    ['/api/chat', (stream) => ({ messages: [{ role: 'user', content: 'Hi' }], stream, options: { num_predict: 300 } })],
  ];
  const jobs = Array.from({ length: 200 }, (_, i) => i);
  let next = 0, errors = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      const [path, body] = kinds[i % kinds.length];
      const ctl = new AbortController();
      const after = Math.floor(rand() * 300);
      const t = setTimeout(() => ctl.abort(), after);
      try {
        const r = await fetch(`${a.url}${path}`, { method: 'POST', signal: ctl.signal, headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(body(i % 2 === 0)) });
        if (r.status >= 500) errors++;
        await r.arrayBuffer();
      } catch { /* aborted */ }
      clearTimeout(t);
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  c.eq('disconnect storm: no 5xx among the answers that came', errors, 0);
  c.ok('disconnect storm: running and waiting back to 0', await idle(), 'requests still running or waiting after 30 s');
}

// ---- 4. afterwards
c.eq('afterwards: GET /health', (await fetch(`${a.url}/health`)).status, 200);
const m = await metrics(a.url);
c.ok('afterwards: nothing running or waiting', m.byName['vllm:num_requests_running'] === 0 && m.byName['vllm:num_requests_waiting'] === 0,
  { running: m.byName['vllm:num_requests_running'], waiting: m.byName['vllm:num_requests_waiting'] });
const g = await greedy();
c.ok('afterwards: the greedy completion gives the known text', g.status === 200 && g.text === a['want-text'], g);
c.done();
