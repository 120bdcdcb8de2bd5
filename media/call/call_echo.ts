// A call's echo cancellation (issue 35): on a line whose agent wants it (common/echo_cancellation.ts:
// 'auto' is phone lines only), the caller's frames go through the canceller before anything hears
// them (the VAD, recognition, the machine watch, the recording's caller channel), and the bot's
// frames the line sends are its reference. Elsewhere both pass through untouched.
import { cancelsEcho } from "../../common/echo_cancellation.ts";
import { EchoCanceller } from "../caller_audio/echo_canceller.ts";
import type { CallLine } from "./line.ts";
import type { SessionLog } from "./session_log.ts";

type Sent = (pcm: Int16Array | undefined) => void;

export class CallEcho {
  #canceller?: EchoCanceller;
  #log?: SessionLog;

  /** `deliver` gets each caller frame, echo-free where the canceller runs (a reused buffer). */
  constructor(private readonly deliver: (pcm16k: Int16Array) => void) {}

  /** Decides for this call from the agent's setting and the line; says so in the session log. */
  open(setting: string | undefined, line: Pick<CallLine, "phone">, log: SessionLog): void {
    const on = cancelsEcho(setting, line.phone !== undefined);
    this.#log = log;
    if (on) {
      try {
        this.#canceller = new EchoCanceller(this.deliver);
      } catch (err) {
        // Without the library the call still runs, as it did before: said once, in the record.
        log.add("worker", "echo_unavailable", { detail: (err as Error).message });
        return;
      }
    }
    log.add("worker", "echo_cancellation", { setting: setting ?? "auto", on });
  }

  /** The caller's 16 kHz frame: to `deliver` with the bot's echo taken out, or as it came. */
  push(frame: Int16Array): void {
    if (this.#canceller) this.#canceller.push(frame);
    else this.deliver(frame);
  }

  /** The line's `sent` tap, also feeding the canceller's reference when it runs. */
  tap(sent?: Sent): Sent | undefined {
    const canceller = this.#canceller;
    if (!canceller) return sent;
    return (pcm) => {
      canceller.sent(pcm);
      sent?.(pcm);
    };
  }

  /** At the end, what the canceller did (zeros where it did not run: every call says the same). */
  close(): void {
    const canceller = this.#canceller;
    this.#canceller = undefined;
    const counts = canceller?.counts ?? { frames: 0, realigned: 0, gated: 0 };
    this.#log?.add("worker", "echo_cancelled", counts);
    this.#log = undefined;
    canceller?.close();
  }
}
