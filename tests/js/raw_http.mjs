// raw_http.mjs — HTTP/1.1 over plain sockets for the serve_*.mjs checks that
// send what fetch cannot (malformed requests, odd framing, slow or stalled
// clients) or need to see exactly when the server answers.
//
//   const { raw, req, send } = rawClient(host, port);
//   await raw(bytes, {timeoutMs, halfClose})  one request on its own connection;
//       resolves {status, headers, body (Buffer, unchunked), why, bytes}
//   req(method, path, body, extraHeaders)     the bytes of a request (Content-Length framing)
//   send(chunks, {gapMs, timeoutMs})          writes chunks with pauses between them and
//       resolves like raw, plus `written` (chunks the server let through before it answered or closed)
import net from 'node:net';

export function unchunk(b) {
  const out = []; let i = 0;
  while (i < b.length) {
    const e = b.indexOf('\r\n', i); if (e < 0) break;
    const n = parseInt(b.subarray(i, e).toString('latin1'), 16); if (!(n > 0)) break;
    out.push(b.subarray(e + 2, e + 2 + n)); i = e + 2 + n + 2;
  }
  return Buffer.concat(out);
}

function parse(buf, why) {
  const sep = buf.indexOf('\r\n\r\n');
  const head = (sep >= 0 ? buf.subarray(0, sep) : buf).toString('latin1');
  const m = head.match(/^HTTP\/1\.[01] (\d{3})/);
  const headers = {};
  for (const line of head.split('\r\n').slice(1)) { const i = line.indexOf(':'); if (i > 0) headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim(); }
  let body = sep >= 0 ? buf.subarray(sep + 4) : Buffer.alloc(0);
  if (/chunked/i.test(headers['transfer-encoding'] || '')) body = unchunk(body);
  return { status: m ? Number(m[1]) : 0, headers, body, why, bytes: buf.length };
}

export function rawClient(host, port) {
  const raw = (bytes, { timeoutMs = 10_000, halfClose = false } = {}) => send([bytes], { timeoutMs, halfClose });

  function send(parts, { gapMs = 0, timeoutMs = 10_000, halfClose = false } = {}) {
    return new Promise((resolve) => {
      const s = net.connect(port, host);
      const chunks = [];
      let done = false, written = 0;
      const finish = (why) => {
        if (done) return; done = true;
        clearTimeout(t);
        s.destroy();
        resolve({ ...parse(Buffer.concat(chunks), why), written });
      };
      const t = setTimeout(() => finish('timeout'), timeoutMs);
      s.on('data', (d) => chunks.push(d));
      s.on('end', () => finish('end'));
      s.on('close', () => finish('close'));
      s.on('error', () => finish('error'));
      const next = (i) => {
        if (done) return;
        if (i === parts.length) { if (halfClose) s.end(); return; }
        if (chunks.length) return; /* answered already: stop sending */
        s.write(parts[i], (err) => {
          if (err) return;
          written++;
          if (gapMs) setTimeout(() => next(i + 1), gapMs); else next(i + 1);
        });
      };
      s.on('connect', () => next(0));
    });
  }

  const req = (method, path, body, extra = '') => {
    const b = body === undefined ? Buffer.alloc(0) : Buffer.isBuffer(body) ? body : Buffer.from(body);
    return Buffer.concat([Buffer.from(`${method} ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${b.length}\r\nConnection: close\r\n${extra}\r\n`), b]);
  };
  return { raw, req, send };
}
