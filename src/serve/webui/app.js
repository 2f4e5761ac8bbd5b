// app.js — wick's built-in web chat: conversations kept in localStorage, a
// streamed /v1/chat/completions per turn (SSE, stop = abort the fetch, which
// the server notices and cancels), markdown through marked and DOMPurify,
// attached text files sent as span messages ("span": true) so the server
// caches them position-independently, and per-reply usage (tokens/s, cached
// and span-cached prompt tokens). No build step, no other host.
'use strict';

const $ = (id) => document.getElementById(id);
const store = {
  get(key, dflt) {
    try { const v = localStorage.getItem('wick.' + key); return v === null ? dflt : JSON.parse(v); } catch { return dflt; }
  },
  set(key, v) { localStorage.setItem('wick.' + key, JSON.stringify(v)); },
};

const DEFAULTS = { apiKey: '', system: '', temperature: 0.8, top_p: 0.95, max_tokens: 512, seed: '' };
const settings = Object.assign({}, DEFAULTS, store.get('settings', {}));
let convs = store.get('conversations', []); // [{id, title, docs: [{name, text}], messages: [...]}]
let currentId = store.get('current', null);
let controller = null;
const MAX_DOC_BYTES = 4 << 20;

const save = () => { store.set('conversations', convs); store.set('current', currentId); };
const current = () => convs.find((c) => c.id === currentId) || null;
const newId = () => Date.now().toString(36) + Math.random().toString(36).slice(2, 8);

function headers() {
  const h = { 'Content-Type': 'application/json' };
  if (settings.apiKey) h.Authorization = 'Bearer ' + settings.apiKey;
  return h;
}

function setStatus(text) { $('status').textContent = text || ''; }

// ---- markdown (sanitized: the model's text is untrusted HTML)
const escapeHtml = (s) => s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[ch]));
function markdown(text) {
  if (!window.marked || !window.DOMPurify) return null;
  return window.DOMPurify.sanitize(window.marked.parse(text));
}
function renderText(el, text) {
  const html = markdown(text);
  if (html === null) el.textContent = text;
  else el.innerHTML = html;
}

// ---- models
async function loadModels() {
  const sel = $('model');
  let res;
  try { res = await fetch('/v1/models', { headers: headers() }); } catch (e) { setStatus('cannot reach the server: ' + e.message); return; }
  if (res.status === 401) {
    setStatus('The server needs an API key: set it in Settings.');
    showSettings(true);
    return;
  }
  if (!res.ok) { setStatus('GET /v1/models: ' + res.status); return; }
  const list = (await res.json()).data || [];
  const want = store.get('model', null);
  sel.replaceChildren(...list.map((m) => new Option(m.id, m.id)));
  if (want && list.some((m) => m.id === want)) sel.value = want;
  setStatus(list.length ? '' : 'the server has no model');
}

// ---- settings
function showSettings(on) {
  $('settings').hidden = !on;
  $('settings-toggle').setAttribute('aria-expanded', String(on));
}
function bindSettings() {
  const fields = { 'api-key': 'apiKey', system: 'system', temperature: 'temperature', top_p: 'top_p', max_tokens: 'max_tokens', seed: 'seed' };
  for (const [id, key] of Object.entries(fields)) {
    const el = $(id);
    el.value = settings[key];
    el.addEventListener('change', () => {
      settings[key] = el.value;
      store.set('settings', settings);
      if (key === 'apiKey') loadModels();
    });
  }
  $('settings-toggle').addEventListener('click', () => showSettings($('settings').hidden));
}
function numberSetting(key, int) {
  const v = String(settings[key]).trim();
  if (v === '') return undefined;
  const n = int ? parseInt(v, 10) : parseFloat(v);
  return Number.isFinite(n) ? n : undefined;
}

// ---- conversations
function renderConversations() {
  const ul = $('conversations');
  ul.replaceChildren(...convs.map((c) => {
    const li = document.createElement('li');
    li.className = c.id === currentId ? 'current' : '';
    li.dataset.id = c.id;
    const t = document.createElement('span');
    t.className = 'title';
    t.textContent = c.title || 'New chat';
    const del = document.createElement('button');
    del.type = 'button';
    del.className = 'delete';
    del.title = 'Delete this conversation';
    del.textContent = '×';
    del.addEventListener('click', (e) => { e.stopPropagation(); deleteConversation(c.id); });
    li.append(t, del);
    li.addEventListener('click', () => { if (!controller) { currentId = c.id; save(); renderAll(); } });
    return li;
  }));
}
function newConversation() {
  const c = { id: newId(), title: '', docs: [], messages: [] };
  convs.unshift(c);
  currentId = c.id;
  save();
  renderAll();
  return c;
}
function deleteConversation(id) {
  if (controller && id === currentId) return;
  convs = convs.filter((c) => c.id !== id);
  if (currentId === id) currentId = convs.length ? convs[0].id : null;
  save();
  renderAll();
}

// ---- messages
function statsText(s) {
  if (!s) return '';
  const parts = [`${s.completion_tokens} tokens`];
  if (s.tps !== undefined) parts.push(`${s.tps.toFixed(1)} tok/s`);
  let p = `prompt ${s.prompt_tokens}, cached ${s.cached_tokens}`;
  if (s.span_cached_tokens !== undefined) p += `, from the span cache ${s.span_cached_tokens}`;
  parts.push(p);
  return parts.join(' · ');
}
function messageElement(m) {
  const div = document.createElement('div');
  div.className = 'msg ' + m.role;
  const role = document.createElement('div');
  role.className = 'role';
  role.textContent = m.role === 'user' ? 'You' : 'Assistant' + (m.model ? ` (${m.model})` : '');
  div.append(role);
  if (m.docs && m.docs.length) {
    const note = document.createElement('div');
    note.className = 'docs-note';
    note.textContent = 'with ' + m.docs.join(', ') + ' (spans)';
    div.append(note);
  }
  const details = document.createElement('details');
  details.className = 'reasoning';
  const summary = document.createElement('summary');
  summary.textContent = 'Reasoning';
  const rtext = document.createElement('div');
  rtext.className = 'reasoning-text';
  details.append(summary, rtext);
  const content = document.createElement('div');
  content.className = 'content';
  const stats = document.createElement('div');
  stats.className = 'stats';
  div.append(details, content, stats);
  updateMessage(div, m);
  return div;
}
function updateMessage(div, m) {
  const details = div.querySelector('.reasoning');
  details.hidden = !m.reasoning;
  if (m.reasoning) div.querySelector('.reasoning-text').textContent = m.reasoning;
  const content = div.querySelector('.content');
  if (m.role === 'user') content.textContent = m.content;
  else renderText(content, m.content || '');
  if (m.error) {
    const e = document.createElement('div');
    e.className = 'error';
    e.textContent = m.error;
    content.append(e);
  }
  const stats = div.querySelector('.stats');
  stats.textContent = statsText(m.stats) + (m.stopped ? ' · stopped' : '');
  if (m.stats) {
    stats.dataset.completionTokens = m.stats.completion_tokens;
    stats.dataset.cachedTokens = m.stats.cached_tokens;
    if (m.stats.span_cached_tokens !== undefined) stats.dataset.spanCachedTokens = m.stats.span_cached_tokens;
  }
  div.dataset.state = m.pending ? 'streaming' : m.stopped ? 'stopped' : m.error ? 'error' : 'done';
}
function renderMessages() {
  const c = current();
  const box = $('messages');
  box.replaceChildren(...(c ? c.messages.map(messageElement) : []));
  box.scrollTop = box.scrollHeight;
}
function renderDocs() {
  const c = current();
  const box = $('docs');
  box.replaceChildren(...(c ? c.docs : []).map((d, i) => {
    const s = document.createElement('span');
    s.className = 'doc';
    s.title = `${d.text.length} characters, sent as a span (cached position-independently)`;
    s.textContent = d.name + ' (span) ';
    const x = document.createElement('button');
    x.type = 'button';
    x.textContent = '×';
    x.title = 'Remove';
    x.addEventListener('click', () => { c.docs.splice(i, 1); save(); renderDocs(); });
    s.append(x);
    return s;
  }));
}
function renderAll() { renderConversations(); renderMessages(); renderDocs(); }

// ---- attached files: read here, sent as span messages on every turn
async function attach(files) {
  const c = current() || newConversation();
  for (const f of files) {
    if (f.size > MAX_DOC_BYTES) { setStatus(`${f.name}: larger than ${MAX_DOC_BYTES >> 20} MiB`); continue; }
    const text = await f.text();
    if (text.includes('\0')) { setStatus(`${f.name}: not a text file`); continue; }
    if (!text.trim()) { setStatus(`${f.name}: empty`); continue; }
    c.docs.push({ name: f.name, text });
  }
  save();
  renderDocs();
}

// The request's messages: the system prompt, the documents as consecutive
// span messages (so they sit at the same place every turn and their KV comes
// back from the span cache), then the turns.
function requestMessages(c) {
  const out = [];
  if (settings.system.trim()) out.push({ role: 'system', content: settings.system });
  for (const d of c.docs) out.push({ role: 'user', content: d.text, span: true });
  for (const m of c.messages) {
    if (m.pending || (!m.content && m.role === 'assistant')) continue;
    out.push({ role: m.role, content: m.content });
  }
  return out;
}

// ---- one turn
async function send(text) {
  const model = $('model').value;
  if (!model) { setStatus('no model selected'); return; }
  const c = current() || newConversation();
  store.set('model', model);
  const user = { role: 'user', content: text };
  if (c.docs.length) user.docs = c.docs.map((d) => d.name);
  c.messages.push(user);
  if (!c.title) c.title = text.slice(0, 40);
  const body = { model, messages: requestMessages(c), stream: true, stream_options: { include_usage: true } };
  for (const [key, int] of [['temperature', false], ['top_p', false], ['max_tokens', true], ['seed', true]]) {
    const v = numberSetting(key, int);
    if (v !== undefined) body[key] = v;
  }
  const m = { role: 'assistant', model, content: '', reasoning: '', pending: true };
  c.messages.push(m);
  save();
  renderConversations();
  renderMessages();
  const div = $('messages').lastElementChild;
  controller = new AbortController();
  busy(true);
  const t0 = performance.now();
  let tFirst = 0, usage = null;
  try {
    const res = await fetch('/v1/chat/completions', { method: 'POST', headers: headers(), body: JSON.stringify(body), signal: controller.signal });
    if (!res.ok) {
      let msg = `${res.status} ${res.statusText}`;
      try { const j = await res.json(); if (j.error && j.error.message) msg = j.error.message; } catch { /* not JSON */ }
      if (res.status === 401) showSettings(true);
      throw new Error(msg);
    }
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i).replace(/\r$/, '');
        buf = buf.slice(i + 1);
        if (!line.startsWith('data:')) continue;
        const data = line.slice(5).trim();
        if (data === '[DONE]') continue;
        const j = JSON.parse(data);
        if (j.error) throw new Error(j.error.message || 'error');
        const ch = j.choices && j.choices[0];
        if (ch && ch.delta) {
          if (ch.delta.content) m.content += ch.delta.content;
          if (ch.delta.reasoning_content) m.reasoning += ch.delta.reasoning_content;
          if (!tFirst && (ch.delta.content || ch.delta.reasoning_content)) tFirst = performance.now();
        }
        if (j.usage) usage = j.usage;
      }
      updateMessage(div, m);
      $('messages').scrollTop = $('messages').scrollHeight;
    }
  } catch (e) {
    if (e.name === 'AbortError') m.stopped = true;
    else m.error = e.message;
  }
  const t1 = performance.now();
  if (usage) {
    const d = usage.prompt_tokens_details || {};
    const n = usage.completion_tokens;
    const secs = (n > 1 && tFirst ? t1 - tFirst : t1 - t0) / 1000;
    m.stats = { prompt_tokens: usage.prompt_tokens, completion_tokens: n, cached_tokens: d.cached_tokens || 0, tps: secs > 0 ? (n > 1 && tFirst ? n - 1 : n) / secs : undefined };
    if (d.span_cached_tokens !== undefined) m.stats.span_cached_tokens = d.span_cached_tokens;
  }
  delete m.pending;
  controller = null;
  save();
  updateMessage(div, m);
  busy(false);
}

function busy(on) {
  $('send').hidden = on;
  $('stop').hidden = !on;
  document.body.dataset.busy = on ? '1' : '0';
}

// ---- wiring
function main() {
  // raw HTML in the model's markdown is shown as text (DOMPurify then only
  // sees the tags marked writes)
  if (window.marked) window.marked.use({ gfm: true, renderer: { html: (html) => escapeHtml(typeof html === 'string' ? html : html.text) } });
  bindSettings();
  // a reply left streaming by a closed tab
  for (const c of convs) for (const m of c.messages) if (m.pending) { delete m.pending; m.stopped = true; }
  if (!current() && convs.length) currentId = convs[0].id;
  renderAll();
  busy(false);
  $('new-chat').addEventListener('click', () => { if (!controller) newConversation(); });
  $('composer').addEventListener('submit', (e) => {
    e.preventDefault();
    const text = $('input').value;
    if (!text.trim() || controller) return;
    $('input').value = '';
    send(text);
  });
  $('input').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); $('composer').requestSubmit(); }
  });
  $('stop').addEventListener('click', () => { if (controller) controller.abort(); });
  $('attach').addEventListener('change', (e) => { attach([...e.target.files]); e.target.value = ''; });
  $('model').addEventListener('change', () => store.set('model', $('model').value));
  loadModels();
}
main();
