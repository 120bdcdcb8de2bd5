// A raw HTTP/1.1 exchange over TCP, for what fetch() will not send: Content-Length lies,
// duplicate or conflicting framing headers, control characters, header blocks past the
// server's limits, unknown methods, a body cut short by the client.

export interface RawReply {
  /** 0 when the server answered nothing (closed, or the client gave up first). */
  status: number;
  /** The status of every final response read (pipelined requests are answered in turn). */
  statuses: number[];
  headers: Headers;
  body: string;
  /** What happened on the wire when there was no answer. */
  note?: string;
}

export interface RawSend {
  bytes: Uint8Array;
  /**
   * After writing: "keep" waits for the answer with the connection open; "half" closes the
   * writing side (the server sees EOF: a Content-Length it never gets in full); "close" closes
   * the connection at once, without reading (the client went away).
   */
  after: "keep" | "half" | "close";
  /** Give up waiting for an answer after this long (default 3000 ms). */
  timeoutMs?: number;
  /** How many final responses to wait for (pipelined requests; default 1). */
  responses?: number;
}

/** The index just past the head (the blank line) of the response starting at `from`, or -1. */
function headEnd(raw: Uint8Array, from: number): number {
  for (let i = from; i + 3 < raw.length; i++) {
    if (raw[i] === 13 && raw[i + 1] === 10 && raw[i + 2] === 13 && raw[i + 3] === 10) return i + 4;
  }
  return -1;
}

interface Parsed {
  status: number;
  headers: Headers;
  bodyStart: number;
  /** Where the next response starts, when the body's length is known and it is all here. */
  next?: number;
}

function parseAt(raw: Uint8Array, from: number): Parsed | undefined {
  const end = headEnd(raw, from);
  if (end < 0) return undefined;
  // Header values are bytes (latin1 keeps them a ByteString); only the body is UTF-8.
  const [statusLine, ...headerLines] = new TextDecoder("latin1").decode(raw.subarray(from, end - 4))
    .split("\r\n");
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
  const headers = new Headers();
  for (const line of headerLines) {
    const i = line.indexOf(":");
    try {
      if (i > 0) headers.append(line.slice(0, i).trim(), line.slice(i + 1).trim());
    } catch { /* a header Headers cannot hold: not one this client reads */ }
  }
  const cl = headers.get("content-length");
  const interim = status >= 100 && status < 200;
  const length = interim ? 0 : cl === null ? undefined : Number(cl);
  const next = length !== undefined && end + length <= raw.length ? end + length : undefined;
  return { status, headers, bodyStart: end, next };
}

/**
 * Every response in `raw` (pipelined requests get several; 1xx interim ones are skipped):
 * the last one is returned, with the statuses of all of them.
 */
function parse(raw: Uint8Array): RawReply {
  const statuses: number[] = [];
  let at = 0;
  let last: Parsed | undefined;
  for (;;) {
    const p = parseAt(raw, at);
    if (!p) break;
    if (p.status >= 200 || p.status === 0) {
      statuses.push(p.status);
      last = p;
    }
    if (p.next === undefined || p.next >= raw.length) break;
    at = p.next;
  }
  if (!last) {
    return { status: 0, statuses, headers: new Headers(), body: "", note: "no complete head" };
  }
  const body = new TextDecoder().decode(raw.subarray(last.bodyStart, last.next ?? raw.length));
  return { status: last.status, statuses, headers: last.headers, body };
}

/** Whether `raw` holds a complete final response (more may follow when pipelined). */
function complete(raw: Uint8Array, expected: number): boolean {
  let at = 0;
  let finals = 0;
  for (;;) {
    const p = parseAt(raw, at);
    if (!p || p.next === undefined) return false;
    if (p.status >= 200) finals++;
    if (finals >= expected) return true;
    at = p.next;
  }
}

export async function rawRequest(port: number, send: RawSend): Promise<RawReply> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    try {
      // Written in slices so a server that answers early (413) and closes does not lose the
      // whole write; a failed write just ends the sending.
      for (let at = 0; at < send.bytes.length; at += 16 * 1024) {
        await conn.write(send.bytes.subarray(at, at + 16 * 1024));
      }
    } catch { /* the server stopped reading: its answer, if any, is still readable */ }
    if (send.after === "close") {
      return { status: 0, statuses: [], headers: new Headers(), body: "", note: "client closed" };
    }
    if (send.after === "half") await conn.closeWrite().catch(() => {});
    const buf = new Uint8Array(256 * 1024);
    let length = 0;
    const timedOut = new Promise<"timeout">((r) => {
      timer = setTimeout(() => r("timeout"), send.timeoutMs ?? 3000);
    });
    for (;;) {
      const step = await Promise.race([
        conn.read(buf.subarray(length)).catch(() => null),
        timedOut,
      ]);
      if (step === "timeout") {
        const reply = parse(buf.subarray(0, length));
        return reply.status ? reply : { ...reply, note: "timed out waiting" };
      }
      if (step === null || step === 0) break;
      length += step;
      if (complete(buf.subarray(0, length), send.responses ?? 1) || length === buf.length) break;
    }
    const reply = parse(buf.subarray(0, length));
    return reply.status ? reply : { ...reply, note: "closed without an answer" };
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* already closed */ }
  }
}
