// Dialling a brain: its ws:// or wss:// URL, TCP (and TLS), and the WebSocket opening handshake
// (RFC 6455 §4), within one time limit. A failure is a BrainDialError whose reason is the call's
// end reason: `brain_unreachable` (refused, bad URL, not a WebSocket) or `brain_connect_timeout`.
import { type Conn, Reader, writeAll } from "./ws_wire.ts";

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
/** Largest HTTP response head the handshake reads. */
const MAX_HEAD_BYTES = 16 * 1024;

const encoder = new TextEncoder();

export type DialFailure = "brain_unreachable" | "brain_connect_timeout";

/** The brain could not be dialled: `reason` is the call's end reason. */
export class BrainDialError extends Error {
  constructor(readonly reason: DialFailure, message: string) {
    super(message);
    this.name = "BrainDialError";
  }
}

export interface DialOptions {
  /** TCP connect plus the WebSocket handshake must be done within this. */
  timeoutMs: number;
  /** Largest message accepted (a fragmented message counts whole). */
  maxFrameBytes: number;
  /** For wss://: CA certificates (PEM) trusted besides the process's store (DENO_CERT, system). */
  caCerts?: string[];
}

/**
 * Dials `url`: TCP (and TLS for wss://), then the WebSocket upgrade, all within
 * `opts.timeoutMs`; rejects with BrainDialError naming why the brain cannot be used.
 */
export async function dialBrain(
  url: string,
  opts: DialOptions,
): Promise<{ conn: Conn; reader: Reader }> {
  const target = targetOf(url);
  const abort = new AbortController();
  let conn: Conn | undefined;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort();
    try {
      conn?.close();
    } catch { /* closed already */ }
  }, opts.timeoutMs);
  try {
    const tcp = await Deno.connect({
      hostname: target.hostname,
      port: target.port,
      signal: abort.signal,
    });
    conn = tcp;
    if (timedOut) throw new Error("timed out");
    if (target.tls) {
      conn = undefined; // startTls takes the TCP connection over
      const tls = Deno.startTls(tcp, { hostname: target.hostname, caCerts: opts.caCerts });
      conn = await Promise.race([
        tls,
        new Promise<never>((_, reject) =>
          abort.signal.addEventListener("abort", () => {
            tls.then((c) => c.close(), () => {});
            reject(new Error("timed out"));
          }, { once: true })
        ),
      ]);
    }
    const reader = new Reader(conn);
    await handshake(conn, reader, target);
    if (timedOut) throw new Error("timed out");
    return { conn, reader };
  } catch (err) {
    try {
      conn?.close();
    } catch { /* closed already */ }
    if (timedOut) {
      throw new BrainDialError(
        "brain_connect_timeout",
        `the brain did not complete the WebSocket handshake within ${opts.timeoutMs} ms`,
      );
    }
    if (err instanceof BrainDialError) throw err;
    throw new BrainDialError(
      "brain_unreachable",
      `the brain could not be reached: ${(err as Error).message}`,
    );
  } finally {
    clearTimeout(timer);
  }
}

function base64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

interface Target {
  tls: boolean;
  hostname: string;
  port: number;
  /** The Host header. */
  host: string;
  /** Path and query of the request line. */
  path: string;
}

function targetOf(url: string): Target {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new BrainDialError("brain_unreachable", `bad brain URL: ${url}`);
  }
  if (u.protocol !== "ws:" && u.protocol !== "wss:") {
    throw new BrainDialError(
      "brain_unreachable",
      `a brain URL is ws:// or wss://, not ${u.protocol}`,
    );
  }
  const tls = u.protocol === "wss:";
  const hostname = u.hostname.replace(/^\[(.*)\]$/, "$1");
  return {
    tls,
    hostname,
    port: u.port ? Number(u.port) : tls ? 443 : 80,
    host: u.host,
    path: (u.pathname || "/") + u.search,
  };
}

/** Sends the upgrade request and checks the 101 answer; returns bytes read past its head. */
async function handshake(conn: Conn, reader: Reader, target: Target): Promise<void> {
  const key = base64(crypto.getRandomValues(new Uint8Array(16)));
  const request = `GET ${target.path} HTTP/1.1\r\nHost: ${target.host}\r\n` +
    "Upgrade: websocket\r\nConnection: Upgrade\r\n" +
    `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`;
  await writeAll(conn, encoder.encode(request));
  let end = -1;
  while (end < 0) {
    if (!await reader.fill(reader.buf.length + 1)) {
      throw new Error("the brain closed the connection during the WebSocket handshake");
    }
    end = indexOfHeadEnd(reader.buf);
    if (end < 0 && reader.buf.length > MAX_HEAD_BYTES) {
      throw new Error("the brain's handshake answer is not HTTP");
    }
  }
  const head = new TextDecoder().decode(reader.take(end + 4)).split("\r\n");
  const status = /^HTTP\/1\.1 (\d{3})/.exec(head[0]);
  if (!status) throw new Error(`the brain's handshake answer is not HTTP: ${head[0].slice(0, 80)}`);
  if (status[1] !== "101") {
    throw new Error(`the brain answered HTTP ${status[1]}, not a WebSocket upgrade`);
  }
  const headers = new Map<string, string>();
  for (const line of head.slice(1)) {
    const colon = line.indexOf(":");
    if (colon > 0) {
      headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
  }
  const digest = await crypto.subtle.digest("SHA-1", encoder.encode(key + GUID));
  if (headers.get("sec-websocket-accept") !== base64(new Uint8Array(digest))) {
    throw new Error("the brain's handshake answer has a wrong Sec-WebSocket-Accept");
  }
  if (headers.get("upgrade")?.toLowerCase() !== "websocket") {
    throw new Error("the brain's handshake answer does not upgrade to websocket");
  }
  if (headers.has("sec-websocket-extensions")) {
    throw new Error("the brain accepted a WebSocket extension that was not offered");
  }
}

function indexOfHeadEnd(b: Uint8Array): number {
  for (let i = 0; i + 3 < b.length; i++) {
    if (b[i] === 13 && b[i + 1] === 10 && b[i + 2] === 13 && b[i + 3] === 10) return i;
  }
  return -1;
}
