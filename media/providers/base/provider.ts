// The provider base: what every cloud speech provider's engine shares, so that a provider's own
// module holds its protocol and nothing else (LiveKit agents-js draws the same line: its
// `SpeechStream.mainTask` owns retries and error events, a plugin writes `run()`). It owns:
// - the connection a provider is given (a base URL over its default, a key, a connect timeout)
//   and its opening: `openSocket` waits, within that timeout, for the provider to accept;
// - error mapping: a failure becomes the leg's error (RecognitionError or SynthesisError) with a
//   `fault` when reaching the provider was the problem (a refused key, an unreachable host, a
//   5xx): the one thing the breakers (media/engines/breaker.ts) read;
// - key redaction: every message passes through redactKey (redact.ts) on its way into an error.
// Retries are the router's, not this base's: a failed utterance or unit is replayed on the route's
// next engine (media/engines/routing.ts, which also gives a failed engine one fresh try when no
// other is left); a retry here as well would only lengthen the wait before that fallback.
import type { RecognitionError } from "../../stt/engine.ts";
import type { SynthesisError } from "../../tts/engine.ts";
import { type EngineFault, handshakeFault, handshakeStatus, statusFault } from "./fault.ts";
import { redactKey } from "./redact.ts";
import { providerSocket } from "./socket.ts";

/** How a provider accepts a socket, beyond the handshake; and what to say while it has not. */
export interface SocketAcceptance {
  /**
   * A message before acceptance: true accepts the socket (a session begun), `refused` rejects it,
   * undefined waits for more. Without it, the socket is accepted once open.
   */
  onMessage?(data: unknown): true | { refused: string; fault?: EngineFault } | undefined;
  /** The fault of a close before acceptance, by its code (a policy close may refuse the key). */
  closeFault?(code: number): EngineFault | undefined;
  /** The timeout's message; default "could not connect to <provider> in <ms> ms". */
  timeoutMessage?: string;
  /** Sees the socket as soon as it exists (to follow its close, to set its binaryType). */
  created?(ws: WebSocket): void;
  /** Gives up the wait: the socket is closed, the rejection is the signal's reason. */
  signal?: AbortSignal;
}

export interface ProviderConnection {
  /** Base URL, without a trailing slash. */
  url: string;
  /** Sent as a header only; never in a URL, a log line or an error message. */
  apiKey?: string;
  /** Until the provider has accepted the connection (a session begun, a socket open). */
  connectTimeoutMs: number;
}

/** The error of a leg: what its streams and units fail with. */
export type LegError = RecognitionError | SynthesisError;
type LegErrorClass<E extends LegError> = new (
  message: string,
  options?: ErrorOptions & { fault?: EngineFault },
) => E;

/** The connection's base URL: `url` (trailing slashes cut) or the provider's own. */
export function baseUrl(url: string | undefined, fallback: string): string {
  return (url ?? fallback).replace(/\/+$/, "");
}

export class ProviderBase<E extends LegError> {
  constructor(
    /** The provider as messages name it ("Sarvam", "Indic Parler"). */
    readonly provider: string,
    private leg: LegErrorClass<E>,
    readonly connection: ProviderConnection,
  ) {}

  /** `text` without the key. */
  redact(text: string): string {
    return redactKey(text, this.connection.apiKey);
  }

  /** The leg's error, its message redacted. */
  error(message: string, options: { fault?: EngineFault; cause?: unknown } = {}): E {
    const { fault, cause } = options;
    return new this.leg(this.redact(message), {
      ...(cause !== undefined ? { cause } : {}),
      ...(fault ? { fault } : {}),
    });
  }

  /** A WebSocket handshake that failed, with the HTTP status when the runtime says it. */
  handshakeError(detail: string): E {
    const fault = handshakeFault(detail);
    const status = handshakeStatus(detail);
    if (!status) return this.error(`could not connect to ${this.provider}: ${detail}`, { fault });
    return this.error(
      `${this.provider} refused the connection: HTTP ${status}${keyHint(status)}`,
      { fault },
    );
  }

  /** An HTTP answer that is not a success: its status, and what the body said. */
  statusError(status: number, said: string): E {
    return this.error(`${this.provider} answered HTTP ${status}${said}`, {
      fault: statusFault(status),
    });
  }

  /**
   * A WebSocket the provider accepted within the connect timeout: opened with `headers` and, with
   * `accept.onMessage`, given the provider's go-ahead. Otherwise the socket is closed and this
   * rejects with the leg's error: a handshake refused (its fault by the HTTP status), a close or
   * a refusal before acceptance, or the timeout (a connection fault). Once accepted the socket is
   * the caller's: its handlers are unset, and are the caller's to set before its next task.
   */
  openSocket(url: string, headers: Record<string, string>, accept: SocketAcceptance = {}) {
    const signal = accept.signal, ms = this.connection.connectTimeoutMs;
    if (signal?.aborted) return Promise.reject(signal.reason);
    let ws: WebSocket;
    try {
      ws = providerSocket(url, headers);
    } catch (err) {
      return Promise.reject(this.error(`bad ${this.provider} URL: ${(err as Error).message}`));
    }
    accept.created?.(ws);
    return new Promise<WebSocket>((resolve, reject) => {
      const settle = (error?: unknown) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        ws.onopen =
          ws.onmessage =
          ws.onerror =
          ws.onclose =
            null;
        if (error === undefined) return resolve(ws);
        if (ws.readyState < WebSocket.CLOSING) ws.close(1000);
        reject(error);
      };
      const onAbort = () => settle(signal!.reason);
      signal?.addEventListener("abort", onAbort, { once: true });
      const timer = setTimeout(
        () =>
          settle(
            this.error(
              accept.timeoutMessage ?? `could not connect to ${this.provider} in ${ms} ms`,
              {
                fault: "connection",
              },
            ),
          ),
        ms,
      );
      ws.onopen = () => {
        if (!accept.onMessage) settle();
      };
      ws.onmessage = (e) => {
        const said = accept.onMessage?.(e.data);
        if (said === true) settle();
        else if (said) settle(this.error(said.refused, { fault: said.fault }));
      };
      ws.onerror = (e) => settle(this.handshakeError(e instanceof ErrorEvent ? e.message : ""));
      ws.onclose = (e) => {
        const why = `code ${e.code}${e.reason ? `: ${e.reason}` : ""}`;
        settle(this.error(`${this.provider} refused the connection (${why})`, {
          fault: accept.closeFault?.(e.code) ?? "connection",
        }));
      };
    });
  }
}

function keyHint(status: number): string {
  return status === 401 || status === 403 ? " (the API key was not accepted)" : "";
}
