// The campaign scheduler: each API process runs one (api/service.ts). A tick settles attempts
// whose calls ended, claims due contacts inside their windows up to each campaign's free
// concurrency (db/campaign_dialing.ts: the claim is committed before the dial), then dials them.
// Every process's ticks may overlap on one database: the claim's locks keep them apart.
import type { Pool } from "../../db/client.ts";
import {
  abandonClaim,
  beat,
  type Claim,
  claimDue,
  finishCampaigns,
  forgetScheduler,
  recordDialled,
  recordRefused,
  runningCampaigns,
  schedulerIdle,
  settleAttempts,
} from "../../db/campaign_dialing.ts";
import type { MachineDetection } from "../../common/dial.ts";
import { randomBase62 } from "../../common/ids.ts";
import { logger } from "../../common/log.ts";

const log = logger("campaigns");

/** One call a campaign asks for: what POST /api/v1/calls.dial takes, from the campaign's rows. */
export interface CampaignDial {
  workspace_id: string;
  agent_id: string;
  /** E.164. */
  to: string;
  /** E.164, a number of the workspace. */
  from: string;
  trunk_id?: string;
  ring_timeout_seconds: number;
  machine_detection: MachineDetection;
  /** The contact's data: the session's agent_input, what the brain is given. */
  agent_input: Record<string, unknown>;
  language?: string;
  /** On the session, so a call can be traced to its campaign attempt. */
  metadata: { campaign_id: string; contact_index: string; attempt: string };
}

export type DialResult =
  | { session_id: string }
  | { refused: { code: string; message: string } };

/** The seam to api/dial/'s dialNumber: places one call, or says why it will not. */
export type Dial = (request: CampaignDial) => Promise<DialResult>;

/** A scheduler not seen for this long is gone: its claims with no session end `dial_lost`. */
export const SCHEDULER_STALE_SECONDS = 30;

export interface SchedulerOptions {
  /** The clock every stored instant and every window reads (tests move it). */
  now?: () => Date;
  staleSeconds?: number;
}

export interface TickReport {
  settled: number;
  dialled: number;
  refused: number;
  /** Dials that threw: their attempts end `dial_lost` on the next settle. */
  lost: number;
  finished: string[];
}

function dialRequest(claim: Claim): CampaignDial {
  return {
    workspace_id: claim.workspace_id,
    agent_id: claim.agent_id,
    to: claim.to,
    from: claim.from,
    ...(claim.trunk_id ? { trunk_id: claim.trunk_id } : {}),
    ring_timeout_seconds: claim.ring_timeout_seconds,
    machine_detection: claim.machine_detection,
    agent_input: claim.data,
    ...(claim.language ? { language: claim.language } : {}),
    metadata: {
      campaign_id: claim.campaign_id,
      contact_index: String(claim.contact_index),
      attempt: String(claim.attempt),
    },
  };
}

export class CampaignScheduler {
  /** Names this scheduler's claims (campaign_attempts.claimed_by); new for every instance. */
  readonly id = `sch_${randomBase62(16)}`;
  private readonly now: () => Date;
  private readonly staleSeconds: number;
  private timer: ReturnType<typeof setInterval> | undefined;
  private ticking: Promise<unknown> | undefined;
  private stopped = false;

  constructor(
    private readonly sql: Pool,
    private readonly dial: Dial,
    options: SchedulerOptions = {},
  ) {
    this.now = options.now ?? (() => new Date());
    this.staleSeconds = options.staleSeconds ?? SCHEDULER_STALE_SECONDS;
  }

  /** Says this scheduler is alive, so its claims in flight are not taken for lost. */
  beat(): Promise<void> {
    return beat(this.sql, this.id, this.now());
  }

  /** Settle, claim, dial: one pass over every campaign. */
  async tick(): Promise<TickReport> {
    const report: TickReport = { settled: 0, dialled: 0, refused: 0, lost: 0, finished: [] };
    // Idle, it holds no claim, so there is nothing for a beat to keep alive either.
    if (await schedulerIdle(this.sql)) return report;
    await this.beat();
    report.settled = await settleAttempts(this.sql, this.id, this.now(), this.staleSeconds);
    for (const campaignId of await runningCampaigns(this.sql, this.now())) {
      if (this.stopped) break;
      const claims = await claimDue(this.sql, campaignId, this.id, this.now());
      // One after another: a dial is a reservation and one request to a worker (tens of ms), and
      // the embedded PGlite cannot take interleaved statements from concurrent dials.
      for (const claim of claims) await this.place(claim, report);
    }
    report.finished = await finishCampaigns(this.sql, this.now());
    return report;
  }

  private async place(claim: Claim, report: TickReport): Promise<void> {
    let result: DialResult;
    try {
      result = await this.dial(dialRequest(claim));
    } catch (err) {
      report.lost++;
      log.warn("campaign dial threw; the attempt ends dial_lost", {
        campaign_id: claim.campaign_id,
        contact_index: claim.contact_index,
        attempt: claim.attempt,
        cause: (err as Error).message,
      });
      await abandonClaim(this.sql, claim);
      return;
    }
    if ("session_id" in result) {
      report.dialled++;
      if (!await recordDialled(this.sql, claim, result.session_id)) {
        log.warn("a campaign dial came back after its attempt was settled as lost", {
          campaign_id: claim.campaign_id,
          contact_index: claim.contact_index,
          attempt: claim.attempt,
          session_id: result.session_id,
        });
      }
      return;
    }
    report.refused++;
    await recordRefused(this.sql, claim, result.refused.code, this.now());
  }

  /** Ticks every `intervalMs` (a tick still running is not overlapped) and beats meanwhile. */
  start(intervalMs = 1000): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => {
      if (this.ticking) {
        // A long dial holds the tick; the beat keeps its claims from being taken for lost.
        this.beat().catch((err) => log.warn("scheduler beat failed", { cause: err.message }));
        return;
      }
      this.ticking = this.tick()
        .catch((err) => log.warn("campaign tick failed", { cause: (err as Error).message }))
        .finally(() => this.ticking = undefined);
    }, intervalMs);
  }

  /**
   * Stops ticking and waits (up to `waitMs`) for the tick in flight to record its dials. Stopped
   * cleanly, it leaves no claim in flight and forgets its heartbeat; otherwise its claims without
   * a session are settled `dial_lost` once it has not been seen for staleSeconds.
   */
  async stop(waitMs = 10_000): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.ticking) {
      let timeout: ReturnType<typeof setTimeout> | undefined;
      const gaveUp = await Promise.race([
        this.ticking.then(() => false),
        new Promise<boolean>((resolve) => timeout = setTimeout(() => resolve(true), waitMs)),
      ]);
      clearTimeout(timeout);
      if (gaveUp) return;
    }
    await forgetScheduler(this.sql, this.id).catch(() => {});
  }
}
