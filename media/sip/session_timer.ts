// Session timers (RFC 4028) for the UAS: a call whose INVITE asks for them ends with our BYE when
// the caller stops refreshing it (a trunk that lost the call without a BYE). We never refresh
// (the UAS sends no INVITE or UPDATE), so we take them only with refresher=uac; a caller that
// cannot refresh (no "timer" in Supported) or asks us to (refresher=uas) gets a UAS without the
// extension, which RFC 4028 section 9 allows: no Session-Expires in the 200.
import type { SipClock } from "../../sip/clock.ts";
import { type Header, header, headerList, type SipRequest } from "../../sip/message.ts";
import { parseParams } from "../../sip/headers.ts";

/** The smallest interval we take (RFC 4028 section 4 recommends 90 s as the floor). */
export const MIN_SE = 90;

/** Session-Expires in seconds, undefined when absent or unreadable. */
function asked(request: SipRequest): number | undefined {
  const value = header(request, "Session-Expires");
  const m = value === undefined ? null : /^\s*(\d{1,9})\s*(;.*)?$/.exec(value);
  return m ? Number(m[1]) : undefined;
}

/** The Require values we do not support: "timer" is one we do. */
export function unsupported(required: string[]): string[] {
  return required.filter((r) => r.toLowerCase() !== "timer");
}

/** The 422's headers (section 8) when the INVITE asks for a shorter interval than MIN_SE. */
export function tooShort(request: SipRequest): Header[] | undefined {
  const seconds = asked(request);
  if (seconds === undefined || seconds >= MIN_SE) return undefined;
  return [{ name: "Min-SE", value: String(MIN_SE) }];
}

export class SessionTimer {
  private timer?: { cancel(): void };

  private constructor(
    private readonly clock: SipClock,
    private seconds: number,
    private readonly expired: () => void,
  ) {
    this.arm();
  }

  /** The timer an answered INVITE asks for, or undefined (no timer: see the top of the file). */
  static start(request: SipRequest, clock: SipClock, expired: () => void) {
    const seconds = asked(request);
    const supported = [...headerList(request, "Supported"), ...headerList(request, "Require")]
      .some((v) => v.toLowerCase() === "timer");
    const refresher = parseParams(header(request, "Session-Expires")?.replace(/^[^;]*/, "") ?? "")
      .get("refresher");
    if (seconds === undefined || !supported || refresher === "uas") return undefined;
    return new SessionTimer(clock, Math.max(seconds, MIN_SE), expired);
  }

  /** A refresh (re-INVITE or UPDATE): the interval starts again, at the new length if asked. */
  refresh(request: SipRequest): void {
    const seconds = asked(request);
    if (seconds !== undefined && seconds >= MIN_SE) this.seconds = seconds;
    this.arm();
  }

  /** What a 2xx says (section 9): the caller refreshes, and must understand timers to. */
  headers(): Header[] {
    return [
      { name: "Session-Expires", value: `${this.seconds};refresher=uac` },
      { name: "Require", value: "timer" },
      { name: "Supported", value: "timer" },
    ];
  }

  stop(): void {
    this.timer?.cancel();
  }

  /** Section 10: the side that does not refresh sends BYE min(32, SE/3) s before expiry. */
  private arm(): void {
    this.timer?.cancel();
    const ms = (this.seconds - Math.min(32, this.seconds / 3)) * 1000;
    this.timer = this.clock.after(ms, this.expired);
  }
}
