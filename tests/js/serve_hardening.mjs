// serve_hardening.mjs — the HTTP-level defences of `wick serve`, one mode per
// server configuration; driven by tests/serve_hardening.test.sh.
//
//   node serve_hardening.mjs --mode http   --url URL --body-limit N
//        HTTP edges (chunked body over the limit answered before its end, an
//        unsupported Transfer-Encoding, %00 in paths and queries, 405s),
//        strict JSON (raw control characters, NUL, trailing bytes after a
//        NUL, the last of duplicate keys, Content-Type), browser origins and
//        Host names (403, CORS headers, preflights), fields another engine
//        defines and wick does not implement (400 naming them), logit_bias,
//        seeds at the ends of their range, the prompt param of context
//        errors, /tokenize's default, the counters' _total suffix.
//   node serve_hardening.mjs --mode keys   --url URL --key K --metrics-key M
//        API key before 404, x-api-key, the metrics key, --allowed-origins.
//   node serve_hardening.mjs --mode conns  --url URL --max-conn N --header-timeout S
//        the connection caps (eviction of idle ones, 503 when all are busy)
//        and the whole-request deadline for byte-trickling clients.
import net from 'node:net';
import { checker, parseArgs, metrics, sleep } from './serve_util.mjs';
import { rawClient } from './raw_http.mjs';

const a = parseArgs();
const c = checker(a.name || `hardening-${a.mode}`);
const url = new URL(a.url);
const host = url.hostname, port = Number(url.port);
const { raw, req, send } = rawClient(host, port);
const jsonOf = (buf) => { try { return JSON.parse(buf.toString('utf8')); } catch { return undefined; } };
const post = (path, body, headers = {}) => fetch(`${a.url}${path}`, {
  method: 'POST', headers: { 'Content-Type': 'application/json', ...headers },
  body: typeof body === 'string' ? body : JSON.stringify(body),
});
const errMsg = (j) => (j && (typeof j.error === 'string' ? j.error : j.error && j.error.message)) || '';

async function httpMode() {
  const limit = Number(a['body-limit']);
  // ---- HTTP edges
  {
    // a chunked body past the limit: the 413 comes while the client still has bytes to send
    const head = `POST /v1/completions HTTP/1.1\r\nHost: ${host}:${port}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const piece = 'x'.repeat(64 * 1024);
    const parts = [Buffer.from(head)];
    for (let sent = 0; sent < limit * 3; sent += piece.length) parts.push(Buffer.from(`${piece.length.toString(16)}\r\n${piece}\r\n`));
    const r = await send(parts, { gapMs: 5, timeoutMs: 20_000 });
    c.ok('chunked body over --body-limit → 413 before the body ends', r.status === 413 && r.written < parts.length,
      { status: r.status, written: r.written, of: parts.length, why: r.why });
  }
  {
    const r = await raw(Buffer.from(`POST /v1/completions HTTP/1.1\r\nHost: ${host}:${port}\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip\r\n\r\n{"prompt":"x"}`), { timeoutMs: 10_000 });
    c.ok('Transfer-Encoding: gzip → 501 (no hang)', r.status === 501, { status: r.status, why: r.why });
  }
  for (const [label, path, codes] of [
    ['%00 in a model path', '/v1/models/NAME%00junk', [400]],
    ['%00 in a query value', '/v1/models?x=a%00b', [400]],
    ['%2500 (an escaped percent) is not a NUL', '/v1/models/NAME%2500junk', [404]],
  ]) {
    const r = await raw(req('GET', path));
    c.ok(`${label} → ${codes.join('|')}`, codes.includes(r.status) && errMsg(jsonOf(r.body)).length > 0,
      { status: r.status, body: r.body.toString().slice(0, 200) });
  }
  {
    const r = await raw(req('POST', '/v1/models/anything', '{}'));
    c.ok('POST /v1/models/{id} → 405 with Allow', r.status === 405 && /GET/.test(r.headers.allow || ''), { status: r.status, allow: r.headers.allow });
  }

  // ---- strict JSON
  const model = (await (await fetch(`${a.url}/v1/models`)).json()).data[0].id;
  for (const [label, body] of [
    ['a raw newline inside a string', Buffer.from('{"prompt":"a\nb","max_tokens":1}')],
    ['a raw NUL inside a string', Buffer.from('{"prompt":"a\u0000b","max_tokens":1}')],
    ['text after a NUL byte', Buffer.concat([Buffer.from('{"prompt":"a","max_tokens":1}'), Buffer.from([0]), Buffer.from('GARBAGE')])],
    ['\\u0000 in a string', Buffer.from('{"prompt":"a\\u0000b","max_tokens":1}')],
    ['a lone surrogate \\ud800', Buffer.from('{"prompt":"a\\ud800b","max_tokens":1}')],
    ['an invalid escape \\x', Buffer.from('{"prompt":"a\\xb","max_tokens":1}')],
    ['a leading zero 01', Buffer.from('{"prompt":"a","max_tokens":01}')],
    ['NaN', Buffer.from('{"prompt":"a","temperature":NaN}')],
    ['a single-quoted string', Buffer.from("{'prompt':'a'}")],
    ['a trailing comma', Buffer.from('{"prompt":"a",}')],
  ]) {
    const r = await raw(req('POST', '/v1/completions', body));
    c.ok(`JSON: ${label} → 400`, r.status === 400 && /JSON/.test(errMsg(jsonOf(r.body))), { status: r.status, body: r.body.toString().slice(0, 200) });
  }
  {
    const r = await post('/v1/completions', `{"model":"${model}","prompt":"Once upon a time","max_tokens":1,"temperature":0,"max_tokens":3}`);
    const j = await r.json();
    c.ok('JSON: of duplicate keys the last wins (max_tokens 1 then 3 → 3 tokens)', r.status === 200 && j.usage.completion_tokens === 3, j);
  }
  for (const [ct, want] of [['text/plain', 415], ['multipart/form-data; boundary=x', 415], ['application/json; charset=utf-8', 200],
    ['application/x-www-form-urlencoded', 200], ['application/vnd.api+json', 200]]) {
    const r = await fetch(`${a.url}/v1/completions`, { method: 'POST', headers: { 'Content-Type': ct }, body: '{"prompt":"a","max_tokens":1}' });
    c.eq(`Content-Type ${ct} → ${want}`, r.status, want);
  }

  // ---- origins and Host names
  for (const [origin, ok] of [['http://evil.example', false], ['null', false], ['http://localhost:3000', true],
    ['http://127.0.0.1:5173', true], ['https://[::1]:8443', true], ['http://localhost.evil.example', false],
    ['http://127.0.0.1.evil.example', false], ['app://desktop', true]]) {
    const r = await fetch(`${a.url}/v1/models`, { headers: { Origin: origin } });
    const acao = r.headers.get('access-control-allow-origin');
    c.ok(`Origin ${origin} → ${ok ? '200 with CORS headers' : '403'}`, ok ? r.status === 200 && acao === origin : r.status === 403 && !acao,
      { status: r.status, acao });
  }
  {
    const r = await raw(req('POST', '/v1/completions', '{"prompt":"a","max_tokens":1}', 'Origin: http://evil.example\r\n'));
    c.ok('a cross-site POST from a web page → 403 (nothing generated)', r.status === 403, { status: r.status });
  }
  {
    const r = await fetch(`${a.url}/v1/chat/completions`, { method: 'OPTIONS', headers: {
      Origin: 'http://localhost:3000', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization, content-type' } });
    c.ok('preflight from an allowed origin → 200 with Allow-Origin/Methods/Headers', r.status === 200 &&
      r.headers.get('access-control-allow-origin') === 'http://localhost:3000' && /POST/.test(r.headers.get('access-control-allow-methods') || '') &&
      /authorization/i.test(r.headers.get('access-control-allow-headers') || ''), Object.fromEntries(r.headers));
    const r2 = await fetch(`${a.url}/v1/chat/completions`, { method: 'OPTIONS', headers: { Origin: 'http://evil.example', 'Access-Control-Request-Method': 'POST' } });
    c.ok('preflight from another origin → 403', r2.status === 403 && !r2.headers.get('access-control-allow-origin'), { status: r2.status });
  }
  for (const [h, ok] of [['evil.example', false], ['evil.example:8080', false], ['localhost', true], [`127.0.0.1:${port}`, true],
    ['[::1]', true], ['app.localhost:8080', true]]) {
    const r = await raw(Buffer.from(`GET /v1/models HTTP/1.1\r\nHost: ${h}\r\nConnection: close\r\n\r\n`));
    c.ok(`Host ${h} → ${ok ? 200 : 403} (DNS rebinding)`, r.status === (ok ? 200 : 403), { status: r.status });
  }

  // ---- fields recognised and not implemented → 400 naming them
  for (const [path, extra, field] of [
    ['/v1/completions', { guided_json: { type: 'object' }, guided_whitespace_pattern: ' *' }, 'guided_whitespace_pattern'],
    ['/v1/completions', { use_beam_search: true }, 'use_beam_search'],
    ['/v1/completions', { min_tokens: 5 }, 'min_tokens'],
    ['/v1/completions', { mirostat: 2 }, 'mirostat'],
    ['/v1/completions', { n_probs: 3 }, 'n_probs'],
    ['/v1/completions', { add_special_tokens: false }, 'add_special_tokens'],
    ['/v1/chat/completions', { reasoning_effort: 'high' }, 'reasoning_effort'],
    ['/v1/chat/completions', { tool_choice: 'required', response_format: { type: 'json_object' }, tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }] }, 'tool_choice'],
    ['/v1/chat/completions', { prediction: { type: 'content', content: 'x' } }, 'prediction'],
    ['/v1/chat/completions', { structured_outputs: { structural_tag: '{}' } }, 'structured_outputs.structural_tag'],
    ['/api/generate', { template: '{{ .Prompt }}' }, 'template'],
    ['/api/chat', { think: 'high' }, 'think'],
    ['/api/chat', { think: 5 }, 'think'],
    ['/api/generate', { options: { mirostat: 1 } }, 'options.mirostat'],
  ]) {
    const chat = /chat/.test(path);
    const base = chat ? { messages: [{ role: 'user', content: 'hi' }] } : { prompt: 'hi' };
    const r = await post(path, { ...base, max_tokens: 1, stream: false, ...extra });
    const j = await r.json().catch(() => undefined);
    c.ok(`${path} ${JSON.stringify(extra).slice(0, 60)} → 400 naming ${field}`, r.status === 400 && errMsg(j).includes(`"${field}"`), { status: r.status, j });
  }
  for (const [path, extra] of [['/v1/completions', { use_beam_search: false, min_tokens: 0, typical_p: 1, cache_prompt: true, n_keep: 4, store: false, id_slot: -1 }],
    ['/v1/chat/completions', { tool_choice: 'auto', skip_special_tokens: true, parallel_tool_calls: true, user: 'u', metadata: { a: 'b' } }],
    ['/api/generate', { think: true }],
    ['/api/generate', { think: false, options: { num_thread: 2, num_gpu: 0, use_mmap: true, typical_p: 1, mirostat: 0 } }]]) {
    const chat = /chat/.test(path);
    const r = await post(path, { ...(chat ? { messages: [{ role: 'user', content: 'hi' }] } : { prompt: 'hi' }), max_tokens: 1, stream: false, ...extra });
    c.eq(`${path}: the no-op values of those fields are accepted`, r.status, 200);
  }

  // ---- logit_bias (OpenAI semantics) and the llama.cpp spellings
  {
    const base = { model, prompt: 'Once upon a time', max_tokens: 4, temperature: 0, logprobs: 1 };
    const j0 = await (await post('/v1/completions', base)).json();
    const first = j0.choices[0].logprobs.tokens[0];
    const tp = (await (await post('/tokenize', { content: base.prompt, add_special: true })).json()).tokens;
    const tf = (await (await post('/tokenize', { content: base.prompt + first, add_special: true })).json()).tokens;
    const id = tf[tp.length];
    const j1 = await (await post('/v1/completions', { ...base, logit_bias: { [id]: -100 } })).json();
    c.ok('logit_bias -100 bans the greedy first token', j1.choices[0].logprobs.tokens[0] !== first, { first, got: j1.choices[0].logprobs.tokens[0] });
    const j2 = await (await post('/v1/completions', { ...base, logit_bias: [[id, false]] })).json();
    c.eq('llama.cpp\'s [[id, false]] bans it too', j2.choices[0].text, j1.choices[0].text);
    const j3 = await (await post('/v1/completions', { ...base, logit_bias: { 100: 100 } })).json();
    c.ok('logit_bias +100 forces a token', j3.choices[0].logprobs.tokens.every((t) => t === j3.choices[0].logprobs.tokens[0]), j3.choices[0].logprobs.tokens);
    for (const [lb, label] of [[{ 100: 101 }, 'a bias over 100'], [{ x: 1 }, 'a key that is not a token id'], [{ 99999999: 1 }, 'a token id out of range'], [[1, 2], 'an array of numbers']]) {
      const r = await post('/v1/completions', { ...base, logit_bias: lb });
      c.ok(`logit_bias: ${label} → 400`, r.status === 400 && (await r.json()).error.param === 'logit_bias');
    }
  }

  // ---- smaller ones
  for (const seed of ['18446744073709551615', '-9223372036854775808', '0']) {
    const r = await post('/v1/completions', `{"prompt":"a","max_tokens":1,"seed":${seed}}`);
    c.eq(`seed ${seed} accepted`, r.status, 200);
  }
  {
    const r = await post('/v1/completions', `{"prompt":"a","max_tokens":1,"seed":36893488147419103232}`);
    c.eq('seed 2^65 → 400', r.status, 400);
  }
  for (const id of [3000000000, -3000000000, 1e300, 2.5]) {
    const r = await post('/v1/completions', { prompt: [id], max_tokens: 1 });
    c.eq(`token id ${id} in a prompt → 400`, r.status, 400);
  }
  {
    const r = await post('/v1/completions', { prompt: 'once upon a time '.repeat(2000), max_tokens: 1 });
    const j = await r.json();
    c.ok('context overflow on /v1/completions names param "prompt"', r.status === 400 && j.error.param === 'prompt' && j.error.code === 'context_length_exceeded', j);
  }
  {
    const plain = (await (await post('/tokenize', { content: 'Hello' })).json()).tokens;
    const special = (await (await post('/tokenize', { content: 'Hello', add_special: true })).json()).tokens;
    c.ok('/tokenize adds no BOS unless add_special is true (llama.cpp\'s default)', special.length === plain.length + 1 && special.slice(1).join() === plain.join(), { plain, special });
  }
  {
    const m = await metrics(a.url);
    const types = [...m.text.matchAll(/^# TYPE (\S+) (\S+)$/gm)];
    const counters = types.filter((t) => t[2] === 'counter').map((t) => t[1]);
    c.ok('every counter family ends in _total (Prometheus text format)', counters.length > 5 && counters.every((n) => n.endsWith('_total')), counters.filter((n) => !n.endsWith('_total')));
    c.ok('vLLM\'s spec-decode counter names', ['vllm:spec_decode_num_drafts_total', 'vllm:spec_decode_num_draft_tokens_total', 'vllm:spec_decode_num_accepted_tokens_total'].every((n) => counters.includes(n)), counters);
  }
}

async function keysMode() {
  const key = a.key, mkey = a['metrics-key'];
  for (const [path, method] of [['/no/such/route', 'GET'], ['/v1/nothing', 'POST'], ['/api/nothing', 'GET']]) {
    const r = await fetch(`${a.url}${path}`, { method });
    c.eq(`${method} ${path} without a key → 401 (not 404)`, r.status, 401);
    const r2 = await fetch(`${a.url}${path}`, { method, headers: { Authorization: `Bearer ${key}` } });
    c.eq(`${method} ${path} with the key → 404`, r2.status, 404);
  }
  c.eq('x-api-key accepted', (await fetch(`${a.url}/v1/models`, { headers: { 'x-api-key': key } })).status, 200);
  c.eq('a key that is the right one plus a byte → 401', (await fetch(`${a.url}/v1/models`, { headers: { Authorization: `Bearer ${key}x` } })).status, 401);
  c.eq('a prefix of the key → 401', (await fetch(`${a.url}/v1/models`, { headers: { Authorization: `Bearer ${key.slice(0, -1)}` } })).status, 401);
  c.eq('/health stays open', (await fetch(`${a.url}/health`)).status, 200);
  c.eq('/metrics without the metrics key → 401', (await fetch(`${a.url}/metrics`)).status, 401);
  c.eq('/metrics with the API key (not the metrics key) → 401', (await fetch(`${a.url}/metrics`, { headers: { Authorization: `Bearer ${key}` } })).status, 401);
  c.eq('/metrics with the metrics key → 200', (await fetch(`${a.url}/metrics`, { headers: { Authorization: `Bearer ${mkey}` } })).status, 200);
  for (const [origin, ok] of [['https://app.example.com', true], ['https://other.example.com', false], ['https://a.b.example.org', true], ['http://localhost:1', true]]) {
    const r = await fetch(`${a.url}/v1/models`, { headers: { Origin: origin, Authorization: `Bearer ${key}` } });
    c.ok(`--allowed-origins: ${origin} → ${ok ? 200 : 403}`, r.status === (ok ? 200 : 403) && (!ok || r.headers.get('access-control-allow-origin') === origin), { status: r.status });
  }
}

async function connsMode() {
  const maxConn = Number(a['max-conn']), hdrTimeout = Number(a['header-timeout']);
  // idle and half-sent connections up to three times the cap: each new one evicts the oldest
  const socks = [];
  for (let i = 0; i < maxConn * 3; i++) {
    const s = net.connect(port, host);
    s.on('error', () => {});
    s.closedAt = 0;
    s.on('close', () => { s.closedAt = Date.now(); });
    if (i % 2) s.write('GET /health HTTP/1.1\r\nHo');
    socks.push(s);
    await sleep(5);
  }
  await sleep(300);
  const r = await fetch(`${a.url}/health`).then((x) => x.status).catch((e) => String(e));
  c.eq(`${maxConn * 3} idle or half-sent connections open (cap ${maxConn}): a normal request still succeeds`, r, 200);
  const closed = socks.filter((s) => s.closedAt).length;
  c.ok('the oldest of them were evicted to make room', closed >= maxConn, { closed, of: socks.length });
  for (const s of socks) s.destroy();
  await sleep(300);

  // every connection busy with a request: the next one is answered 503, not left hanging
  const model = (await (await fetch(`${a.url}/v1/models`)).json()).data[0].id;
  const ctl = new AbortController();
  const streams = [];
  for (let i = 0; i < maxConn; i++)
    streams.push(fetch(`${a.url}/v1/completions`, { method: 'POST', signal: ctl.signal, headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ model, prompt: 'Once upon a time', max_tokens: 100000, ignore_eos: true, stream: true }) }).catch(() => {}));
  await sleep(500);
  const over = await raw(req('GET', '/health'), { timeoutMs: 5000 });
  c.ok('all connections busy: a new one gets 503 with Retry-After', over.status === 503 && over.headers['retry-after'] && errMsg(jsonOf(over.body)).length > 0,
    { status: over.status, why: over.why, headers: over.headers });
  ctl.abort();
  await Promise.all(streams);
  for (let i = 0; i < 50; i++) {
    const m = await metrics(a.url).catch(() => undefined);
    if (m && m.byName['vllm:num_requests_running'] === 0 && m.byName['vllm:num_requests_waiting'] === 0) break;
    await sleep(100);
  }

  // a client trickling its headers a byte at a time is closed at the deadline
  const t0 = Date.now();
  const line = Buffer.from('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ' + 'a'.repeat(1000));
  const parts = [...line].map((b) => Buffer.from([b]));
  const slow = await send(parts, { gapMs: 100, timeoutMs: (hdrTimeout + 20) * 1000 });
  const took = (Date.now() - t0) / 1000;
  c.ok(`a byte every 100 ms: closed at --header-timeout ${hdrTimeout} s, not kept open`, slow.status === 0 && slow.why !== 'timeout' && took < hdrTimeout + 10 && slow.written < parts.length,
    { why: slow.why, took, written: slow.written });
  // a slow but steady body is given time in proportion to its size
  const body = JSON.stringify({ model, prompt: 'Once upon a time', max_tokens: 2 });
  const head = `POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
  const ok = await send([Buffer.from(head), Buffer.from(body)], { gapMs: 200, timeoutMs: 10_000 });
  c.eq('a request sent in two parts still succeeds', ok.status, 200);
}

await c.step(a.mode, async () => {
  if (a.mode === 'http') await httpMode();
  else if (a.mode === 'keys') await keysMode();
  else if (a.mode === 'conns') await connsMode();
  else throw new Error(`unknown mode ${a.mode}`);
});
c.done();
