// What the brain asks to happen once the bot has said what it was saying: its EndSession ends the
// call, its Transfer hands the caller on ("I'll put you through" is heard first). Each waits for
// the bot to fall quiet, bounded by PLAY_OUT_MS so a stuck voice cannot hold the call.
import type { TransferResult } from "../phone/line.ts";
import { PLAY_OUT_MS } from "./bot_voice.ts";
import type { SessionLog } from "./session_log.ts";
import {
  reasonOfDetail,
  type TransferFailReason,
  transferRefusal,
  WARM_RING_DEFAULT_MS,
  type WarmRequest,
} from "./transfer.ts";

export interface WhenQuietHooks {
  log: SessionLog;
  /** The bot is speaking or has speech queued. */
  botBusy(): boolean;
  endCall(status: "ended", reason: "brain_ended" | "transferred"): void;
  /** Hands the caller on (the call's line); absent, a Transfer is refused (a web call). */
  transfer?(target: string, warm?: WarmRequest): Promise<TransferResult>;
  /** A TransferFailed to the brain. */
  transferFailed(target: string, detail: string, reason: TransferFailReason): void;
  /** The whisper in the call's voice and language (48 kHz), for a warm transfer. */
  speak(text: string): Promise<Int16Array>;
}

export class WhenQuiet {
  /** The brain ended the session, or the call is finishing: nothing new starts. */
  ending = false;
  /** The brain's own reason for ending: the record keeps it beside the service's. */
  brainEndReason?: string;
  /** The brain's Transfer waiting for the bot to finish what it says, or being carried out. */
  private transferring?: { target: string; underWay: boolean; warm?: WarmRequest };
  private stopped = false;
  private endTimer?: ReturnType<typeof setTimeout>;
  private transferTimer?: ReturnType<typeof setTimeout>;

  constructor(private readonly hooks: WhenQuietHooks) {}

  get transferPending(): boolean {
    return this.transferring !== undefined;
  }

  /** The brain's EndSession: the call ends once the bot is quiet. */
  end(reason: string): void {
    if (this.ending) return;
    this.ending = true;
    this.brainEndReason = reason;
    const h = this.hooks;
    h.log.add("worker", "end_requested", { reason });
    if (!h.botBusy()) h.endCall("ended", "brain_ended");
    else this.endTimer = setTimeout(() => h.endCall("ended", "brain_ended"), PLAY_OUT_MS);
  }

  /**
   * The brain's Transfer: refused at once where it cannot be done (a web call, a bad target, one
   * already under way); otherwise carried out once the bot has said what it was saying.
   */
  transfer(target: string, whisper = "", ringTimeoutMs = 0): void {
    const h = this.hooks;
    const asked = { whisper, ringTimeoutMs };
    const refusal = transferRefusal(target, h.transfer !== undefined, !!this.transferring, asked);
    if (refusal) {
      h.log.add("worker", "transfer_refused", { target, detail: refusal });
      h.transferFailed(target, refusal, "refused");
      return;
    }
    // The whisper itself is never written: it may hold what the caller told the bot.
    h.log.add("worker", "transfer_requested", { target, warm: whisper !== "" });
    const warm: WarmRequest | undefined = whisper
      ? { whisper, ringTimeoutMs: ringTimeoutMs || WARM_RING_DEFAULT_MS, speak: h.speak }
      : undefined;
    const pending = this.transferring = { target, underWay: false, warm };
    if (!h.botBusy()) return void this.transferNow();
    // quiet() starts it when the bot falls quiet; this bounds the wait.
    this.transferTimer = setTimeout(
      () => this.transferring === pending && void this.transferNow(),
      PLAY_OUT_MS,
    );
  }

  /** The bot fell quiet: what waited for it happens now. */
  quiet(): void {
    if (this.ending) this.hooks.endCall("ended", "brain_ended");
    else if (this.transferring) void this.transferNow();
  }

  private async transferNow(): Promise<void> {
    const t = this.transferring, h = this.hooks;
    if (!t || t.underWay || this.stopped || this.ending) return;
    t.underWay = true;
    clearTimeout(this.transferTimer);
    const result: TransferResult = await h.transfer!(t.target, t.warm).catch((err) => ({
      ok: false,
      detail: (err as Error).message,
    }));
    this.transferring = undefined;
    if (this.stopped) return;
    if (result.ok) {
      h.log.add("worker", "transferred", { target: t.target, detail: result.detail });
      h.endCall("ended", "transferred");
      return;
    }
    const reason = result.reason ?? reasonOfDetail(result.detail);
    h.log.add("worker", "transfer_failed", { target: t.target, detail: result.detail, reason });
    h.transferFailed(t.target, result.detail, reason);
  }

  /** The call is finishing: nothing waits any more. */
  stop(): void {
    this.stopped = true;
    this.ending = true;
    clearTimeout(this.endTimer);
    clearTimeout(this.transferTimer);
  }
}
