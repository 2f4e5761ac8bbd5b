// serve_robustness.mjs — bad and hostile requests against a running
// `wick serve`, with node's built-in fetch and raw sockets only (no npm).
// Driven by tests/serve_robustness.test.sh.
//
//   node serve_robustness.mjs --url http://127.0.0.1:PORT --ctx N --body-limit BYTES
//        [--want-text TEXT --prompt P --n N]   (a greedy completion that must still work)
//
// Every bad request must get a clean 4xx with a JSON error body (OpenAI shape
// {"error":{"message",...}} on /v1, Ollama shape {"error":"..."} on /api), or
// just a closed connection where the request is not HTTP; afterwards /health is
// 200, nothing is left running, and a normal completion gives the same text.
import { checker, parseArgs, metrics, sleep } from './serve_util.mjs';
import net from 'node:net';
import { rawClient } from './raw_http.mjs';

const a = parseArgs();
const c = checker(a.name || 'serve_robustness');
const url = new URL(a.url);
const host = url.hostname, port = Number(url.port);
const ctx = Number(a.ctx || 128);
const bodyLimit = Number(a['body-limit'] || 0);

const { raw, req } = rawClient(host, port);
const jsonOf = (buf) => { try { return JSON.parse(buf.toString('utf8')); } catch { return undefined; } };
const validUtf8 = (buf) => { try { new TextDecoder('utf-8', { fatal: true }).decode(buf); return true; } catch { return false; } };

let model;
await c.step('model', async () => { model = (await (await fetch(`${a.url}/v1/models`)).json()).data[0].id; });
if (!model) c.done();

// a 4xx with the API's JSON error shape
async function bad(label, method, path, body, { codes = [400], extra = '', ollama = path.startsWith('/api/') } = {}) {
  const r = await raw(req(method, path, body, extra));
  const j = jsonOf(r.body);
  const shapeOk = ollama ? j && typeof j.error === 'string' && j.error.length > 0
    : j && j.error && typeof j.error.message === 'string' && j.error.message.length > 0;
  c.ok(`${label} → ${codes.join('|')} + JSON error`, codes.includes(r.status) && shapeOk && validUtf8(r.body) &&
    /json/.test(r.headers['content-type'] || ''), { status: r.status, ct: r.headers['content-type'], body: r.body.toString('utf8').slice(0, 200), why: r.why });
  return r;
}
const M = JSON.stringify(model);
const P = '/v1/completions', CH = '/v1/chat/completions';

// ---- malformed bodies
await bad('malformed JSON "{"', 'POST', P, '{');
await bad('malformed JSON (trailing garbage)', 'POST', P, `{"model":${M},"prompt":"hi"} xyz`);
await bad('not JSON at all', 'POST', P, 'hello world');
await bad('empty body', 'POST', P, '');
await bad('JSON array instead of an object', 'POST', P, '[1,2,3]');
await bad('JSON null', 'POST', P, 'null');
await bad('deeply nested JSON (100,000 levels)', 'POST', P, `{"model":${M},"prompt":${'['.repeat(100000)}${']'.repeat(100000)}}`);
await bad('chat: malformed JSON', 'POST', CH, '{"messages": [');
await bad('ollama generate: malformed JSON', 'POST', '/api/generate', '{"model":');
await bad('ollama chat: malformed JSON', 'POST', '/api/chat', '[');

// ---- wrong types and missing fields
await bad('prompt is a number', 'POST', P, `{"model":${M},"prompt":5,"max_tokens":2}`);
await bad('prompt is an object', 'POST', P, `{"model":${M},"prompt":{"a":1},"max_tokens":2}`);
await bad('prompt missing', 'POST', P, `{"model":${M},"max_tokens":2}`);
await bad('max_tokens a string', 'POST', P, `{"model":${M},"prompt":"hi","max_tokens":"x"}`);
await bad('max_tokens negative (-5)', 'POST', P, `{"model":${M},"prompt":"hi","max_tokens":-5}`);
await bad('max_tokens fractional (2.5)', 'POST', P, `{"model":${M},"prompt":"hi","max_tokens":2.5}`);
await bad('max_tokens huge (1e30)', 'POST', P, `{"model":${M},"prompt":"hi","max_tokens":1e30}`);
await bad('max_tokens 2^63', 'POST', P, `{"model":${M},"prompt":"hi","max_tokens":9223372036854775808}`);
await bad('temperature negative', 'POST', P, `{"model":${M},"prompt":"hi","max_tokens":2,"temperature":-1}`);
await bad('temperature 1e999 (overflows to infinity)', 'POST', P, `{"model":${M},"prompt":"hi","max_tokens":2,"temperature":1e999}`);
await bad('top_logprobs 1000', 'POST', CH, `{"model":${M},"messages":[{"role":"user","content":"hi"}],"max_tokens":2,"logprobs":true,"top_logprobs":1000}`);
await bad('stop is a number', 'POST', P, `{"model":${M},"prompt":"hi","max_tokens":2,"stop":7}`);
await bad('prompt token id out of the vocabulary', 'POST', P, `{"model":${M},"prompt":[1,99999999],"max_tokens":2}`);
await bad('prompt token ids negative', 'POST', P, `{"model":${M},"prompt":[-3],"max_tokens":2}`);
await bad('chat: messages not an array', 'POST', CH, `{"model":${M},"messages":"hi","max_tokens":2}`);
await bad('chat: a message without content/role', 'POST', CH, `{"model":${M},"messages":[{"x":1}],"max_tokens":2}`);
await bad('chat: messages empty', 'POST', CH, `{"model":${M},"messages":[],"max_tokens":2}`);
await bad('stream is a string', 'POST', P, `{"model":${M},"prompt":"hi","max_tokens":2,"stream":"yes"}`);
await bad('ollama: prompt a number', 'POST', '/api/generate', `{"model":${M},"prompt":3}`);
await bad('ollama: options.num_predict a string', 'POST', '/api/generate', `{"model":${M},"prompt":"hi","options":{"num_predict":"x"}}`);
await bad('prompt longer than the context', 'POST', P, JSON.stringify({ model, prompt: 'once upon a time '.repeat(ctx), max_tokens: 2 }));

// ---- invalid UTF-8 inside the JSON: a 400, or a 200 whose JSON is valid UTF-8
{
  const body = Buffer.concat([Buffer.from(`{"model":${M},"prompt":"ab`), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('cd","max_tokens":3,"temperature":0}')]);
  const r = await raw(req('POST', P, body));
  const j = jsonOf(r.body);
  c.ok('invalid UTF-8 bytes in the prompt → 400 JSON error, or 200 with valid UTF-8 JSON',
    ((r.status === 400 && j?.error?.message) || (r.status === 200 && typeof j?.choices?.[0]?.text === 'string')) && validUtf8(r.body),
    { status: r.status, body: r.body.toString('latin1').slice(0, 200) });
  const body2 = Buffer.concat([Buffer.from('{"mo'), Buffer.from([0xc0, 0x80]), Buffer.from(`del":${M},"prompt":"x","max_tokens":2}`)]);
  const r2 = await raw(req('POST', P, body2));
  c.ok('invalid UTF-8 in a key → 4xx, valid UTF-8 JSON', r2.status >= 400 && r2.status < 500 && validUtf8(r2.body) && jsonOf(r2.body) !== undefined,
    { status: r2.status, body: r2.body.toString('latin1').slice(0, 200) });
}

// ---- size limit
if (bodyLimit > 0) {
  const big = Buffer.alloc(bodyLimit + 1024, 0x61);
  const body = Buffer.concat([Buffer.from(`{"model":${M},"prompt":"`), big, Buffer.from('","max_tokens":2}')]);
  const r = await raw(req('POST', P, body), { timeoutMs: 30_000 });
  const j = jsonOf(r.body);
  c.ok(`body over the limit (${body.length} > ${bodyLimit} bytes) → 413 + JSON error`, r.status === 413 && j?.error?.message,
    { status: r.status, why: r.why, body: r.body.toString('utf8').slice(0, 200) });
  // far over the limit: the answer is sent while the body still arrives; the
  // server must read and drop the rest (lingering close), or the client gets a
  // connection reset instead of the 413
  {
    const huge = Buffer.concat([Buffer.from(`{"model":${M},"prompt":"`), Buffer.alloc(bodyLimit * 8, 0x61), Buffer.from('"}')]);
    const got = [];
    for (let i = 0; i < 10; i++) got.push((await raw(req('POST', P, huge), { timeoutMs: 30_000 })).status);
    c.ok(`10 bodies 8× over the limit → 413 each (not a reset)`, got.every((s) => s === 413), { statuses: got });
  }
  // Content-Length announcing more than the limit, body never sent: answered without waiting for it
  const r2 = await raw(Buffer.from(`POST ${P} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${bodyLimit * 4}\r\n\r\n{"model":`), { timeoutMs: 10_000 });
  c.ok('Content-Length over the limit, body withheld → 413 (or the connection closed) within 10 s', r2.status === 413 || (r2.status === 0 && r2.why !== 'timeout'),
    { status: r2.status, why: r2.why });
} else console.log('SKIP: the 413 checks: no --body-limit given');

// ---- routes and methods
await bad('unknown route GET /v1/nope', 'GET', '/v1/nope', undefined, { codes: [404] });
await bad('unknown route POST /v1/engines/x/completions', 'POST', '/v1/engines/x/completions', '{}', { codes: [404] });
await bad('unknown route GET /api/nope', 'GET', '/api/nope', undefined, { codes: [404] });
{
  const r = await raw(req('GET', '/nope'));
  c.ok('unknown route GET /nope → 404', r.status === 404, { status: r.status });
}
await bad('wrong method GET /v1/completions', 'GET', P, undefined, { codes: [404, 405] });
await bad('wrong method PUT /v1/chat/completions', 'PUT', CH, '{}', { codes: [404, 405] });
await bad('wrong method DELETE /v1/models', 'DELETE', '/v1/models', undefined, { codes: [404, 405] });
await bad('wrong method GET /api/generate', 'GET', '/api/generate', undefined, { codes: [404, 405] });

// ---- not HTTP, huge headers
{
  const r = await raw(Buffer.from('GARBAGE\r\n\r\n'), { timeoutMs: 5000 });
  c.ok('a garbage request line → 400 or the connection closed (no hang)', (r.status >= 400 && r.status < 500) || (r.status === 0 && r.why !== 'timeout'), { status: r.status, why: r.why });
  const r2 = await raw(Buffer.from(`GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(200_000)}\r\n\r\n`), { timeoutMs: 5000 });
  c.ok('a 200 KB header → 4xx or the connection closed (no hang)', (r2.status >= 400 && r2.status < 500) || (r2.status === 0 && r2.why !== 'timeout'), { status: r2.status, why: r2.why });
  const body = `{"model":${M},"prompt":"hi","max_tokens":2,"temperature":0}`;
  const chunked = `POST ${P} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n` +
    `${(10).toString(16)}\r\n${body.slice(0, 10)}\r\n${(body.length - 10).toString(16)}\r\n${body.slice(10)}\r\n0\r\n\r\n`;
  const r3 = await raw(Buffer.from(chunked));
  c.ok('a chunked request body → 200', r3.status === 200 && jsonOf(r3.body)?.choices, { status: r3.status, body: r3.body.toString().slice(0, 200) });
}

// ---- clients that go away or stall
async function running() { const m = await metrics(a.url); return Object.entries(m.series).filter(([k]) => k.startsWith('vllm:num_requests_running') || k.startsWith('vllm:num_requests_waiting')).reduce((s, [, v]) => s + v, 0); }
const genTokens = async () => (await metrics(a.url)).byName['vllm:generation_tokens_total'] ?? NaN;
// wait until nothing runs; with (gen0, maxTokens): the requests must have been
// cancelled, i.e. generated less than half of what they asked for
async function settle(label, gen0, maxTokens) {
  let n = await running(), waited = 0;
  while (n !== 0 && waited < 10_000) { await sleep(50); waited += 50; n = await running(); }
  c.ok(`${label}: nothing running or waiting afterwards (${waited} ms)`, n === 0, n);
  if (gen0 !== undefined) {
    const d = (await genTokens()) - gen0;
    c.ok(`${label}: cancelled (${d} tokens generated of ${maxTokens} asked)`, d < maxTokens / 2, d);
  }
}
const longMax = Math.max(8, ctx - 16);
const longBody = JSON.stringify({ model, prompt: 'Once upon a time', max_tokens: longMax, temperature: 0, ignore_eos: true, stream: true });
{
  let g0 = await genTokens();
  // a stream read for a moment, then the socket destroyed
  await new Promise((resolve) => {
    const s = net.connect(port, host, () => s.write(req('POST', P, longBody)));
    let got = 0;
    s.on('data', (d) => { got += d.length; if (got > 200) { s.destroy(); resolve(); } });
    s.on('error', resolve); s.on('close', resolve);
    setTimeout(() => { s.destroy(); resolve(); }, 5000);
  });
  await settle('client disconnects mid-stream', g0, longMax);
  g0 = await genTokens();
  // the request sent, the socket closed at once (before any answer); streamed and not
  for (const stream of [true, false]) {
    await new Promise((resolve) => { const s = net.connect(port, host, () => s.end(req('POST', P, JSON.stringify({ ...JSON.parse(longBody), stream })), () => { s.destroy(); resolve(); })); s.on('error', resolve); });
  }
  await sleep(200); // let them be admitted
  await settle('clients close right after sending (streamed and not)', g0, 2 * longMax);
  g0 = await genTokens();
  // a fetch aborted while waiting for a non-streamed answer
  const ac = new AbortController();
  const p = fetch(`${a.url}${P}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...JSON.parse(longBody), stream: false }), signal: ac.signal }).catch((e) => e);
  await sleep(5); ac.abort(); await p;
  await settle('non-streamed request aborted by the client', g0, longMax);
}
{
  // headers sent, then stall (slowloris); a body announced but never finished
  const stalled = [];
  for (const bytes of [`POST ${P} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl`,
    `POST ${P} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"model":`,
    `GET /health HTTP/1.1\r\n`]) {
    const s = net.connect(port, host, () => s.write(bytes));
    s.on('error', () => {});
    stalled.push(s);
  }
  await sleep(300);
  const t0 = performance.now();
  const h = await fetch(`${a.url}/health`, { signal: AbortSignal.timeout(5000) }).then((r) => r.status).catch((e) => String(e));
  c.ok('3 stalled connections open: /health still answers 200 at once', h === 200 && performance.now() - t0 < 2000, { h, ms: performance.now() - t0 });
  const r = await fetch(`${a.url}${P}`, { method: 'POST', headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(20_000),
    body: JSON.stringify({ model, prompt: a.prompt || 'Once upon a time', max_tokens: Number(a.n || 8), temperature: 0 }) }).then((x) => x.json()).catch((e) => ({ e: String(e) }));
  c.ok('3 stalled connections open: a completion still works', typeof r?.choices?.[0]?.text === 'string', r);
  for (const s of stalled) s.destroy();
}

// ---- afterwards
await sleep(100);
{
  const h = await fetch(`${a.url}/health`);
  c.eq('afterwards: GET /health = 200', h.status, 200);
  const r = await (await fetch(`${a.url}${P}`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, prompt: a.prompt || 'Once upon a time', max_tokens: Number(a.n || 8), temperature: 0 }) })).json();
  if (a['want-text'] !== undefined) c.eq('afterwards: the greedy completion gives the known text', r?.choices?.[0]?.text, a['want-text']);
  else c.ok('afterwards: a completion works', typeof r?.choices?.[0]?.text === 'string', r);
  await settle('afterwards');
}
c.done();
