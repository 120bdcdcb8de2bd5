// The Session a brain's handlers get for one call: its verbs encode frames through the
// connection's `send`. Inside an unconfirmed speculative turn a verb that is not a speech unit is
// held until the turn is confirmed (speculative.ts).
import type { BrainFrameKind } from "../../proto/frames.ts";
import { applyConfig, type ConfigJson, configJson, configMessage } from "./config.ts";
import { Says } from "./says.ts";
import {
  checkCollectDigits,
  type CollectDigitsOptions,
  CollectedDigits,
  Keypad,
} from "./keypad.ts";
import { act, CANCELLED, holdingTurn } from "./speculative.ts";
import { warmFields } from "./transfer.ts";
import type {
  HeardText,
  JsonObject,
  PhoneInfo,
  ReplayInfo,
  SayOutcome,
  Session,
  TraceContext,
  TransferOptions,
} from "./types.ts";

export type Body = Record<string, unknown>;
export type Send = (kind: BrainFrameKind, body: Body) => void;

/** One call's Session. */
export class CallSession implements Session {
  heard: HeardText[] = [];
  ended = false;
  private endSent = false;
  readonly says = new Says();
  readonly keypad: Keypad = new Keypad({
    ended: () => this.ended,
    sensitiveNow: () => this.config.keypad?.sensitive === true,
    setSensitive: (on) => this.configure({ keypad: { sensitive: on } }),
    say: (text) => this.say(text),
  });

  readonly id: string;
  readonly agentId: string;
  readonly init: JsonObject;
  config: ConfigJson;
  /** Its machineDetection is set when MachineDetected comes. */
  phone: PhoneInfo | null;
  readonly replay: ReplayInfo | null;
  /** Set from SessionStart, like the fields above (kept out of the constructor's list). */
  traceContext: TraceContext = {};
  private readonly send: Send;

  // No parameter properties here or below: Node's type stripping cannot run them.
  constructor(
    id: string,
    agentId: string,
    init: JsonObject,
    config: ConfigJson,
    phone: PhoneInfo | null,
    replay: ReplayInfo | null,
    send: Send,
  ) {
    this.id = id;
    this.agentId = agentId;
    this.init = init;
    this.config = config;
    this.phone = phone;
    this.replay = replay;
    this.send = send;
  }

  // Each verb checks its arguments at once (throwing before anything is sent) and then acts, or,
  // inside an unconfirmed speculative turn, is held until the turn is confirmed (speculative.ts).
  configure(config: ConfigJson): void {
    const message = configMessage(config); // throws before anything is sent
    act("config", () => {
      this.config = applyConfig(this.config, configJson(message));
      this.send("config", message as unknown as Body);
    });
  }

  dispatch(type: string, data?: unknown): void {
    if (typeof type !== "string" || type === "") {
      throw new Error("session.dispatch: type must be a non-empty string");
    }
    const json = JSON.stringify(data ?? null);
    act("action", () => this.send("action", { type, json }));
  }

  end(reason = "ended_by_brain"): void {
    act("end_session", () => {
      if (this.endSent) return;
      this.endSent = true;
      this.send("end_session", { reason });
    });
  }

  transfer(target: string, options: TransferOptions = {}): void {
    if (typeof target !== "string" || target.trim() === "") {
      throw new Error("session.transfer: target must be a tel: or sip: URI or an E.164 number");
    }
    const body = { target: target.trim(), ...warmFields(options) };
    act("transfer", () => this.send("transfer", body));
  }

  say(text: string): Promise<SayOutcome> {
    if (typeof text !== "string" || text.trim() === "") {
      throw new Error("session.say: text must be a non-empty string");
    }
    const turn = holdingTurn();
    if (!turn) return this.sayNow(text);
    return new Promise((resolve) =>
      turn.hold(
        "say",
        () => resolve(this.sayNow(text)),
        () => resolve({ turnId: "", heard: "", cutOff: false, refused: CANCELLED }),
      )
    );
  }

  private sayNow(text: string): Promise<SayOutcome> {
    const { sayId, outcome } = this.says.open();
    if (this.ended) this.says.end([]);
    else this.send("say", { say_id: sayId, text });
    return outcome;
  }

  collectDigits(options: CollectDigitsOptions): Promise<CollectedDigits> {
    const turn = holdingTurn();
    if (!turn) return this.keypad.collect(options);
    checkCollectDigits(options); // bad options throw now, as outside a speculative turn
    return new Promise((resolve, reject) =>
      turn.hold("collect_digits", () => {
        try {
          resolve(this.keypad.collect(options));
        } catch (err) {
          reject(err); // another collection started meanwhile
        }
      }, () => resolve(new CollectedDigits("", "cancelled", options.sensitive === true)))
    );
  }
}
