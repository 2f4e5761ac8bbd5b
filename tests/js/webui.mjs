// webui.mjs — the built-in web chat of `wick serve` in a real headless
// Chromium (puppeteer-core, /usr/bin/chromium), and CORS as a browser sees
// it; run by tests/serve_webui.test.sh against a server started with
// --api-key KEY --allowed-origins 'http://app.test:*'.
//   node webui.mjs --url URL --key KEY --model M --doc FILE --shot PNG [--docs-shot PNG]
// One line per check; the closing line is "webui: P passed, F failed".
import http from 'node:http';
import fs from 'node:fs';
import puppeteer from 'puppeteer-core';
import { checker, parseArgs, metrics, sleep } from './serve_util.mjs';

const a = parseArgs();
const c = checker('webui');
const url = a.url, key = a.key, model = a.model;
const WAIT = 30000;

const api = async (path, body) => {
  const r = await fetch(url + path, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: 'Bearer ' + key }, body: JSON.stringify(body) });
  return r.json();
};
const running = (m) => m.byName['vllm:num_requests_running'] || 0;

// a tiny static server for the CORS pages (app.test and evil.test map to it)
const site = http.createServer((req, res) => { res.writeHead(200, { 'Content-Type': 'text/html' }); res.end('<!doctype html><title>other site</title>'); });
await new Promise((r) => site.listen(0, '127.0.0.1', r));
const sitePort = site.address().port;

const browser = await puppeteer.launch({
  executablePath: a.chromium || '/usr/bin/chromium',
  headless: true,
  protocolTimeout: WAIT,
  args: ['--no-sandbox', '--disable-gpu', '--host-resolver-rules=MAP app.test 127.0.0.1, MAP evil.test 127.0.0.1'],
});
const done = async () => {
  await browser.close().catch(() => {});
  site.close();
  c.done();
};
const watchdog = setTimeout(() => { console.log('FAIL: webui: the whole run took longer than 240 s'); process.exit(1); }, 240000);

const page = await browser.newPage();
page.setDefaultTimeout(WAIT);
await page.setViewport({ width: 1100, height: 720 });
const problems = [];
page.on('pageerror', (e) => problems.push('pageerror: ' + e.message));
page.on('console', (m) => { if (m.type() === 'error') problems.push('console: ' + m.text()); });

// the reply the page shows last, once it is no longer streaming
const lastReply = () => page.evaluate(() => {
  const els = document.querySelectorAll('.msg.assistant');
  const el = els[els.length - 1];
  const convs = JSON.parse(localStorage.getItem('wick.conversations') || '[]');
  const cur = convs.find((x) => x.id === JSON.parse(localStorage.getItem('wick.current')));
  const m = cur && cur.messages[cur.messages.length - 1];
  const st = el && el.querySelector('.stats');
  return el && { state: el.dataset.state, html: el.querySelector('.content').innerHTML, text: m && m.content, stored: m,
    stats: st && st.textContent, completion: st && st.dataset.completionTokens, cached: st && st.dataset.cachedTokens,
    span: st && st.dataset.spanCachedTokens };
});
const waitIdle = () => page.waitForFunction(() => document.body.dataset.busy === '0' &&
  [...document.querySelectorAll('.msg.assistant')].every((e) => e.dataset.state !== 'streaming'));
async function setField(id, value) {
  await page.$eval('#' + id, (el, v) => { el.value = v; el.dispatchEvent(new Event('change')); }, String(value));
}
const replies = () => page.$$eval('.msg.assistant', (l) => l.length);
async function ask(text) {
  const n = await replies();
  await page.type('#input', text);
  await page.keyboard.press('Enter');
  await page.waitForFunction((k) => document.querySelectorAll('.msg.assistant').length > k, {}, n);
  await waitIdle();
  return lastReply();
}
const SETTINGS = { temperature: 0, top_p: 1, max_tokens: 40, seed: 7 };

await c.step('page, API key and model picker', async () => {
  const res = await page.goto(url + '/', { waitUntil: 'load' });
  c.eq('GET / in a browser: 200 text/html', [res.status(), res.headers()['content-type']], [200, 'text/html; charset=utf-8']);
  c.ok('GET / in a browser: a Content-Security-Policy', /default-src 'none'/.test(res.headers()['content-security-policy'] || ''), res.headers());
  c.eq('page title', await page.title(), 'wick chat');
  await page.waitForFunction(() => /API key/.test(document.getElementById('status').textContent));
  c.ok('without a key: the page says the server needs one and opens the settings', !(await page.$eval('#settings', (e) => e.hidden)));
  await setField('api-key', key);
  await page.waitForFunction(() => document.querySelectorAll('#model option').length > 0);
  const opts = await page.$$eval('#model option', (os) => os.map((o) => o.value));
  c.ok('with the key: the model picker lists /v1/models', opts.includes(model), opts);
  await page.select('#model', model);
  for (const [k, v] of Object.entries(SETTINGS)) await setField(k, v);
  c.eq('the key is kept in localStorage', await page.evaluate(() => JSON.parse(localStorage.getItem('wick.settings')).apiKey), key);
});

await c.step('a streamed reply = the same request through the API', async () => {
  const q = 'Once upon a time';
  const r = await ask(q);
  const want = await api('/v1/chat/completions', { model, messages: [{ role: 'user', content: q }], ...SETTINGS });
  c.eq('reply text = /v1/chat/completions with the same settings', r.text, want.choices[0].message.content);
  c.eq('reply stats: completion tokens = the API\'s', Number(r.completion), want.usage.completion_tokens);
  c.ok('reply stats show tokens/s and cached tokens', /tok\/s/.test(r.stats) && /cached \d+/.test(r.stats), r.stats);
  c.ok('the reply is rendered as markdown (a <p>)', /<p>/.test(r.html), r.html.slice(0, 200));
});

await c.step('documents attached as spans', async () => {
  await page.click('#new-chat');
  const input = await page.$('#attach');
  await input.uploadFile(a.doc);
  await page.waitForFunction(() => document.querySelectorAll('#docs .doc').length === 1);
  c.ok('the attached file shows as a chip', (await page.$eval('#docs', (e) => e.textContent)).includes(a.doc.split('/').pop()));
  const doc = fs.readFileSync(a.doc, 'utf8');
  const q1 = 'What did Lily have?';
  const r1 = await ask(q1);
  const want = await api('/v1/chat/completions', { model, messages: [{ role: 'user', content: doc, span: true }, { role: 'user', content: q1 }], ...SETTINGS });
  c.eq('first question: reply = the API\'s span request (the document as a "span": true message)', r1.text, want.choices[0].message.content);
  c.ok('first question: the reply shows span-cached tokens', r1.span !== undefined && /span cache \d+/.test(r1.stats), r1.stats);
  const r2 = await ask('And what did she like?');
  const spanTokens = want.usage.prompt_tokens_details.span_cached_tokens;
  c.ok('the API request (after the page\'s) found the span cached', spanTokens > 0, want.usage);
  c.eq('second question: the page shows the document\'s tokens from the span cache', Number(r2.span), spanTokens);
  c.ok('second question: cached tokens >= span-cached tokens', Number(r2.cached) >= Number(r2.span), r2);
  if (!(await page.$eval('#settings', (e) => e.hidden))) await page.click('#settings-toggle');
  await page.screenshot({ path: a.shot });
  if (a['docs-shot']) await page.screenshot({ path: a['docs-shot'] });
  c.ok('screenshot saved', fs.statSync(a.shot).size > 1000);
});

await c.step('stop a long generation', async () => {
  await setField('max_tokens', 3500);
  const m0 = await metrics(url);
  const gen0 = m0.byName['vllm:generation_tokens_total'] || 0;
  await page.type('#input', 'Tell me a very long story');
  await page.keyboard.press('Enter');
  // the reply's text while it streams: it shows, then grows, before the stop
  const streamed = () => page.evaluate(() => {
    const els = document.querySelectorAll('.msg.assistant');
    const el = els[els.length - 1];
    return el.dataset.state === 'streaming' ? el.querySelector('.content').textContent.length : -1;
  });
  await page.waitForFunction(() => {
    const els = document.querySelectorAll('.msg.assistant');
    return els.length && els[els.length - 1].querySelector('.content').textContent.length > 0;
  });
  const len1 = await streamed();
  await page.waitForFunction((l) => {
    const els = document.querySelectorAll('.msg.assistant');
    const el = els[els.length - 1];
    return el.dataset.state !== 'streaming' || el.querySelector('.content').textContent.length > l;
  }, {}, len1);
  const len2 = await streamed();
  c.ok('the reply shows while it streams, and grows', len1 > 0 && len2 > len1, [len1, len2]);
  await page.click('#stop');
  await waitIdle();
  const r = await lastReply();
  c.eq('after stop: the reply is marked stopped', r.state, 'stopped');
  c.ok('after stop: the send button is back', await page.$eval('#send', (e) => !e.hidden));
  let m1 = await metrics(url);
  for (let i = 0; i < 100 && running(m1) > 0; i++) { await sleep(100); m1 = await metrics(url); }
  c.eq('after stop: the server runs no request', running(m1), 0);
  const gen = (m1.byName['vllm:generation_tokens_total'] || 0) - gen0;
  c.ok('after stop: the server cancelled the generation (fewer than max_tokens generated)', gen < 3500, gen);
  await setField('max_tokens', SETTINGS.max_tokens);
  const r2 = await ask('Once upon a time');
  c.ok('the next request is served', r2.state === 'done' && r2.text.length > 0, r2);
});

await c.step('conversations kept in the browser', async () => {
  const n = await page.$$eval('#conversations li', (l) => l.length);
  c.eq('two conversations listed', n, 2);
  await page.click('#conversations li:last-child .title');
  c.ok('switching shows the first conversation', (await page.$eval('#messages', (e) => e.textContent)).includes('Once upon a time'));
  // markdown and sanitizing: an assistant message with code and an HTML attack, then reload
  await page.evaluate(() => {
    const convs = JSON.parse(localStorage.getItem('wick.conversations'));
    convs.push({ id: 'md', title: 'markdown', docs: [], messages: [{ role: 'user', content: 'md' },
      { role: 'assistant', content: '**bold** and\n\n```c\nint x;\n```\n\n<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>', reasoning: 'I thought' }] });
    localStorage.setItem('wick.conversations', JSON.stringify(convs));
    localStorage.setItem('wick.current', JSON.stringify('md'));
  });
  await page.reload({ waitUntil: 'load' });
  await page.waitForFunction(() => document.querySelectorAll('#conversations li').length === 3);
  const md = await page.$eval('.msg.assistant', (e) => ({ html: e.querySelector('.content').innerHTML, reasoning: e.querySelector('details.reasoning').textContent,
    pwned: window.__pwned, live: e.querySelectorAll('.content [onerror], .content script, .content img').length }));
  c.ok('markdown: bold and a code block', /<strong>bold<\/strong>/.test(md.html) && /<pre><code[^>]*>int x;/.test(md.html), md.html);
  c.ok('raw HTML from the model is shown as text: no element, no handler run', md.live === 0 && md.pwned === undefined && /&lt;img/.test(md.html), md);
  c.ok('reasoning shown in a collapsible block', md.reasoning.includes('I thought'), md.reasoning);
  await page.click('#conversations li[data-id="md"] .delete');
  c.eq('delete: two conversations left', await page.$$eval('#conversations li', (l) => l.length), 2);
  c.eq('after a reload the API key is still set (models listed)', await page.waitForFunction(() => document.querySelectorAll('#model option').length > 0).then(() => true), true);
  // the one expected: GET /v1/models answered 401 before the key was set
  const unexpected = problems.filter((p, i) => !(i === 0 && /status of 401/.test(p)));
  c.eq('no other console errors (CSP violations, failed loads, exceptions)', unexpected, []);
});

// CORS as a browser does it: a fetch with Authorization and a JSON body
// (a preflight first) from another origin
async function crossFetch(origin) {
  const p = await browser.newPage();
  p.setDefaultTimeout(WAIT);
  await p.goto(`${origin}/`, { waitUntil: 'load' });
  const out = await p.evaluate(async (u, k, m) => {
    try {
      const r = await fetch(u + '/v1/chat/completions', { method: 'POST', headers: { Authorization: 'Bearer ' + k, 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: m, messages: [{ role: 'user', content: 'Hi' }], max_tokens: 4, temperature: 0 }) });
      return { status: r.status, ok: r.ok, object: (await r.json()).object };
    } catch (e) { return { error: e.name }; }
  }, url, key, model);
  await p.close();
  return out;
}
await c.step('CORS in the browser', async () => {
  const good = await crossFetch(`http://app.test:${sitePort}`);
  c.eq('from an allowed origin (http://app.test:*): the preflighted fetch works', good, { status: 200, ok: true, object: 'chat.completion' });
  const evil = await crossFetch(`http://evil.test:${sitePort}`);
  c.eq('from another origin: the fetch is refused', evil, { error: 'TypeError' });
});

clearTimeout(watchdog);
await done();
