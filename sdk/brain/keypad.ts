// The keypad collection step: `session.collectDigits(...)` gathers the caller's keys until enough
// are in, a terminator key, a timeout or the call's end. The Python SDK's voice_brain/keypad.py
// behaves alike (sdk/python/python_and_typescript_sdks_say_and_report_events_alike.test.ts).
// Written here rather than taken from a library: it is a few timers over the SDK's own frames.

/** The keys a phone sends (RFC 4733 events 0-15). */
const KEYS = "0123456789*#ABCD";
const MAX_DIGITS = 64;
const TIMEOUT_RANGE_MS: [number, number] = [100, 600_000];

/**
 * Why a collection stopped. `"cancelled"`: it was asked for in a speculative turn that was
 * cancelled before it was confirmed, so nothing was said or collected.
 */
export type CollectStop =
  | "max_digits"
  | "terminator"
  | "digit_timeout"
  | "total_timeout"
  | "ended"
  | "cancelled";

/** What {@link Session.collectDigits} takes. Give `maxDigits`, `terminator` or both. */
export interface CollectDigitsOptions {
  /** Stop once this many keys are in (1-64). */
  maxDigits?: number;
  /** A key that ends the collection, e.g. `"#"`; it is not part of the digits. */
  terminator?: string;
  /**
   * How long to wait for the next key, from the last one (or, for the first, from the start:
   * the end of the prompt when there is one). Default 5000 ms; 100 to 600000.
   */
  digitTimeoutMs?: number;
  /** The longest the whole collection may take, from the same start. Default 30000 ms. */
  totalTimeoutMs?: number;
  /**
   * Spoken first, as a `session.say(...)`. Keys pressed while it plays count (type-ahead) and the
   * clocks start when it is over; a collection its keys fill early resolves once the prompt is
   * over too (the brain cannot stop a Say, and what it says next would be refused meanwhile). A Say is refused while the bot holds the floor (inside a turn):
   * then the clocks start at once and {@link CollectedDigits.promptRefused} says why.
   */
  prompt?: string;
  /**
   * A PIN, card or account number: the SDK sends Config `keypad.sensitive` true for the
   * collection's duration (the worker then writes "*" for each key in everything it keeps) and
   * puts back what was in effect after; the result's `toString`, `toJSON` and inspection mask the
   * digits. Your own code must not log `digits` either.
   */
  sensitive?: boolean;
}

const INSPECT = [Symbol.for("Deno.customInspect"), Symbol.for("nodejs.util.inspect.custom")];

/**
 * The keys a collection gathered and why it stopped. With `sensitive`, `digits` is readable only
 * by name: printing, `JSON.stringify` and `console.log` show `*` per digit.
 */
export class CollectedDigits {
  readonly #digits: string;
  /** Why it stopped. */
  readonly reason: CollectStop;
  /** The collection was marked sensitive. */
  readonly sensitive: boolean;
  /** Why the prompt's Say was refused (the caller did not hear it); absent when it was not. */
  readonly promptRefused?: string;

  constructor(digits: string, reason: CollectStop, sensitive: boolean, promptRefused?: string) {
    this.#digits = digits;
    this.reason = reason;
    this.sensitive = sensitive;
    if (promptRefused !== undefined) this.promptRefused = promptRefused;
    for (const symbol of INSPECT) {
      Object.defineProperty(this, symbol, { value: () => this.toString(), enumerable: false });
    }
  }

  /** The keys pressed, in order, without the terminator (`""` when none). */
  get digits(): string {
    return this.#digits;
  }

  /** The digits as logs may show them: `*` per digit when sensitive. */
  get shown(): string {
    return this.sensitive ? "*".repeat(this.#digits.length) : this.#digits;
  }

  /** `CollectedDigits { digits: "...", reason: "..." }`, the digits as {@link shown} has them. */
  toString(): string {
    const refused = this.promptRefused === undefined
      ? ""
      : `, promptRefused: "${this.promptRefused}"`;
    return `CollectedDigits { digits: "${this.shown}", reason: "${this.reason}"${refused} }`;
  }

  /** What `JSON.stringify` writes: the digits as {@link shown} has them. */
  toJSON(): Record<string, unknown> {
    return { digits: this.shown, reason: this.reason, sensitive: this.sensitive };
  }
}

/** What a collection needs of its session. */
export interface KeypadSession {
  ended(): boolean;
  /** The keypad.sensitive flag in effect. */
  sensitiveNow(): boolean;
  setSensitive(on: boolean): void;
  /** `session.say`: its outcome's `refused` is set when the Say was refused. */
  say(text: string): Promise<{ readonly refused?: string }>;
}

function checkTimeout(name: string, v: unknown, fallback: number): number {
  if (v === undefined) return fallback;
  if (
    !Number.isInteger(v) || (v as number) < TIMEOUT_RANGE_MS[0] ||
    (v as number) > TIMEOUT_RANGE_MS[1]
  ) {
    throw new Error(
      `session.collectDigits: ${name} must be an integer of ${TIMEOUT_RANGE_MS[0]} to ${
        TIMEOUT_RANGE_MS[1]
      } ms, got ${JSON.stringify(v)}`,
    );
  }
  return v as number;
}

/**
 * Checks a collection's options as `session.collectDigits` does; throws naming the fault. (A
 * collection asked for inside an unconfirmed speculative turn is checked at once, started later.)
 */
export function checkCollectDigits(o: CollectDigitsOptions): void {
  checked(o);
}

/** Checks the options; throws naming the fault. */
function checked(o: CollectDigitsOptions): Required<Omit<CollectDigitsOptions, "prompt">> & {
  prompt: string;
  maxDigits: number;
  terminator: string;
} {
  const fail = (why: string) => new Error(`session.collectDigits: ${why}`);
  if (typeof o !== "object" || o === null) throw fail("options must be an object");
  const known = [
    "maxDigits",
    "terminator",
    "digitTimeoutMs",
    "totalTimeoutMs",
    "prompt",
    "sensitive",
  ];
  for (const key of Object.keys(o)) {
    if (!known.includes(key)) throw fail(`unknown option ${key}; expected ${known.join(", ")}`);
  }
  const { maxDigits, terminator, prompt, sensitive } = o;
  if (
    maxDigits !== undefined &&
    (!Number.isInteger(maxDigits) || maxDigits < 1 || maxDigits > MAX_DIGITS)
  ) {
    throw fail(
      `maxDigits must be an integer of 1 to ${MAX_DIGITS}, got ${JSON.stringify(maxDigits)}`,
    );
  }
  if (
    terminator !== undefined &&
    (typeof terminator !== "string" || terminator.length !== 1 || !KEYS.includes(terminator))
  ) {
    throw fail(`terminator must be one key of ${KEYS}, got ${JSON.stringify(terminator)}`);
  }
  if (maxDigits === undefined && terminator === undefined) {
    throw fail("give maxDigits, terminator or both");
  }
  if (prompt !== undefined && (typeof prompt !== "string" || prompt.trim() === "")) {
    throw fail("prompt must be a non-empty string");
  }
  if (sensitive !== undefined && typeof sensitive !== "boolean") {
    throw fail(`sensitive must be a boolean, got ${JSON.stringify(sensitive)}`);
  }
  return {
    maxDigits: maxDigits ?? MAX_DIGITS,
    terminator: terminator ?? "",
    digitTimeoutMs: checkTimeout("digitTimeoutMs", o.digitTimeoutMs, 5000),
    totalTimeoutMs: checkTimeout("totalTimeoutMs", o.totalTimeoutMs, 30_000),
    prompt: prompt ?? "",
    sensitive: sensitive ?? false,
  };
}

/** One session's keypad: at most one collection at a time. */
export class Keypad {
  #session: KeypadSession;
  #current: Collection | null = null;

  constructor(session: KeypadSession) {
    this.#session = session;
  }

  /** Starts a collection; throws (sending nothing) for bad options or one already running. */
  collect(options: CollectDigitsOptions): Promise<CollectedDigits> {
    const o = checked(options);
    if (this.#current) {
      throw new Error(
        "session.collectDigits: a collection is already running on this call; await it first",
      );
    }
    if (this.#session.ended()) {
      return Promise.resolve(new CollectedDigits("", "ended", o.sensitive));
    }
    const collection = new Collection(this.#session, o, () => (this.#current = null));
    this.#current = collection;
    return collection.result;
  }

  /** A key from the worker: true when a collection took it (it then skips onDtmf). */
  press(digit: string): boolean {
    if (!this.#current) return false;
    this.#current.press(digit);
    return true;
  }

  /** The call ended: a running collection stops with what it has. */
  end(): void {
    this.#current?.stop("ended");
  }
}

class Collection {
  readonly result: Promise<CollectedDigits>;
  #resolve!: (r: CollectedDigits) => void;
  #digits = "";
  #done = false;
  #clocks = false;
  #digitTimer?: ReturnType<typeof setTimeout>;
  #totalTimer?: ReturnType<typeof setTimeout>;
  #promptRefused?: string;
  #wasSensitive = false;
  /** Settles when the prompt is over (played, cut off or refused); at once without one. */
  #promptOver: Promise<void> = Promise.resolve();
  private readonly session: KeypadSession;
  private readonly o: ReturnType<typeof checked>;
  private readonly release: () => void;

  // No parameter properties: Node's type stripping cannot run them.
  constructor(session: KeypadSession, o: ReturnType<typeof checked>, release: () => void) {
    this.session = session;
    this.o = o;
    this.release = release;
    this.result = new Promise((r) => (this.#resolve = r));
    if (o.sensitive) {
      this.#wasSensitive = session.sensitiveNow();
      if (!this.#wasSensitive) session.setSensitive(true); // before the prompt and any key
    }
    if (o.prompt) {
      this.#promptOver = session.say(o.prompt).then((said) => {
        if (said.refused !== undefined) this.#promptRefused = said.refused;
        this.#startClocks();
      });
    } else {
      this.#startClocks();
    }
  }

  #startClocks(): void {
    if (this.#done || this.#clocks) return;
    this.#clocks = true;
    this.#totalTimer = setTimeout(() => this.stop("total_timeout"), this.o.totalTimeoutMs);
    this.#armDigitTimer();
  }

  #armDigitTimer(): void {
    clearTimeout(this.#digitTimer);
    this.#digitTimer = setTimeout(() => this.stop("digit_timeout"), this.o.digitTimeoutMs);
  }

  press(digit: string): void {
    if (this.#done) return;
    if (this.o.terminator && digit === this.o.terminator) return this.stop("terminator");
    this.#digits += digit;
    if (this.#digits.length >= this.o.maxDigits) return this.stop("max_digits");
    if (this.#clocks) this.#armDigitTimer(); // before the prompt ends, the clocks wait for it
  }

  stop(reason: CollectStop): void {
    if (this.#done) return;
    this.#done = true;
    clearTimeout(this.#digitTimer);
    clearTimeout(this.#totalTimer);
    this.release();
    // Put back the flag before resolving, so whatever the brain sends next is not masked.
    if (this.o.sensitive && !this.#wasSensitive && !this.session.ended()) {
      this.session.setSensitive(false);
    }
    // Keys typed ahead may fill the collection while its prompt still plays; the result waits for
    // the prompt to end, or what the brain says next would be refused ("the bot is speaking").
    this.#promptOver.then(() =>
      this.#resolve(
        new CollectedDigits(this.#digits, reason, this.o.sensitive, this.#promptRefused),
      )
    );
  }
}
