// The provider base: what every cloud speech provider's engine shares, so that a provider's own
// module holds its protocol and nothing else (LiveKit agents-js draws the same line: its
// `SpeechStream.mainTask` owns retries and error events, a plugin writes `run()`). It owns:
// - the connection a provider is given: a base URL over its default, a key, a connect timeout;
// - error mapping: a failure becomes the leg's error (RecognitionError or SynthesisError) with a
//   `fault` when reaching the provider was the problem (a refused key, an unreachable host, a
//   5xx): the one thing the breakers (media/engines/breaker.ts) read;
// - key redaction: every message passes through redactKey (redact.ts) on its way into an error.
// Retries are the router's, not this base's: a failed utterance or unit is replayed on the route's
// next engine (media/engines/routing.ts, which also gives a failed engine one fresh try when no
// other is left); a retry here as well would only lengthen the wait before that fallback.
import { RecognitionError } from "../../stt/engine.ts";
import { SynthesisError } from "../../tts/engine.ts";
import { type EngineFault, handshakeFault, handshakeStatus, statusFault } from "./fault.ts";
import { redactKey } from "./redact.ts";

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

  /** A connect that did not finish within the connect timeout. */
  connectTimeoutError(what = `could not connect to ${this.provider}`): E {
    return this.error(`${what} in ${this.connection.connectTimeoutMs} ms`, { fault: "connection" });
  }
}

function keyHint(status: number): string {
  return status === 401 || status === 403 ? " (the API key was not accepted)" : "";
}
