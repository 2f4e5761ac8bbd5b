// serve_util.mjs — shared by the serve_*.mjs check scripts: a tiny checker
// (one line per check, closing line "NAME: P passed, F failed"), argument
// parsing, /metrics scraping and small helpers.

export function checker(name) {
  let pass = 0, fail = 0;
  const short = (v) => {
    const s = typeof v === 'string' ? v : JSON.stringify(v);
    return s === undefined ? String(v) : (s.length > 300 ? s.slice(0, 300) + '…' : s);
  };
  const c = {
    ok(label, cond, detail) {
      if (cond) { pass++; console.log(`ok: ${label}`); }
      else { fail++; console.log(`FAIL: ${label}${detail !== undefined ? ' — ' + short(detail) : ''}`); }
      return !!cond;
    },
    eq(label, got, want) {
      const same = JSON.stringify(got) === JSON.stringify(want);
      return c.ok(label, same, same ? undefined : `got ${short(got)}, want ${short(want)}`);
    },
    // run fn; an exception is one failure named by label
    async step(label, fn) {
      try { await fn(); }
      catch (e) { fail++; console.log(`FAIL: ${label}: threw ${e && e.constructor && e.constructor.name}: ${short(e && (e.stack || e.message) || e)}`); }
    },
    // fn must throw; pred(e) says whether the error is the right one
    async throws(label, fn, pred, want) {
      try { const r = await fn(); c.ok(label, false, `did not throw; returned ${short(r)}`); }
      catch (e) {
        const good = pred(e);
        c.ok(label, good, good ? undefined : `threw ${e && e.constructor && e.constructor.name} status=${e && e.status} ${short(e && e.message)}; want ${want}`);
        return e;
      }
    },
    done() {
      console.log(`${name}: ${pass} passed, ${fail} failed`);
      process.exit(fail ? 1 : 0);
    },
    get failed() { return fail; },
  };
  return c;
}

// --key value pairs (and bare --flag = true)
export function parseArgs(argv = process.argv.slice(2)) {
  const a = {};
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    if (!k.startsWith('--')) continue;
    const key = k.slice(2);
    if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) a[key] = argv[++i];
    else a[key] = true;
  }
  return a;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Prometheus text → { 'name{labels}': value, ... } plus sums by bare name
export async function metrics(base, timeoutMs = 5000) {
  const r = await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(timeoutMs) });
  const text = await r.text();
  const series = {}, byName = {};
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/);
    if (!m) continue;
    const v = Number(m[3]);
    series[m[1] + (m[2] || '')] = v;
    byName[m[1]] = (byName[m[1]] || 0) + v;
  }
  return { status: r.status, text, series, byName, contentType: r.headers.get('content-type') };
}

// a prompt of about n words, deterministic in (n, salt)
const WORDS = ('the a little girl boy dog cat saw big red ball park play sun tree happy ' +
  'went home mom said one day time friend toy box blue bird sky fly run jump').split(' ');
export function words(n, salt = 0) {
  let x = (salt * 2654435761 + 12345) >>> 0;
  const out = [];
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out.push(WORDS[(x >>> 16) % WORDS.length]);
  }
  return out.join(' ');
}

export function percentile(xs, p) {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const i = (s.length - 1) * p;
  const lo = Math.floor(i), hi = Math.ceil(i);
  return s[lo] + (s[hi] - s[lo]) * (i - lo);
}
