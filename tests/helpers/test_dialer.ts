// A test dialer: the campaign scheduler's Dial seam (api/campaigns/scheduler.ts) answered the way
// api/dial/'s dialNumber does, with real session rows (status `created`, direction `outbound`,
// dial state `dialing`), which the test then ends with the outcome its plan gives each attempt.
import type { CampaignDial, Dial } from "../../api/campaigns/scheduler.ts";
import type { Sql } from "../../db/client.ts";
import { finishSession } from "../../db/sessions.ts";
import { newId } from "../../common/ids.ts";

/** How one attempt goes: refused before dialling, or a session ended with this status/reason. */
export type PlannedEnd = { status: "ended" | "failed"; reason: string };
export type PlannedOutcome = { refuse: string } | PlannedEnd;

export interface PlacedCall {
  request: CampaignDial;
  contact_index: number;
  attempt: number;
  session_id?: string;
}

export class TestDialer {
  /** Every dial asked for, in order (refused ones included). */
  readonly calls: PlacedCall[] = [];
  /** Sessions placed and not ended yet, by id, with the outcome they will end with. */
  readonly open = new Map<string, PlannedEnd>();
  /** The most sessions open at once, counted as each dial is placed. */
  maxOpen = 0;

  constructor(
    private readonly sql: Sql,
    private readonly plan: (contactIndex: number, attempt: number) => PlannedOutcome,
  ) {}

  readonly dial: Dial = async (request) => {
    const contact_index = Number(request.metadata.contact_index);
    const attempt = Number(request.metadata.attempt);
    const placed: PlacedCall = { request, contact_index, attempt };
    this.calls.push(placed);
    const planned = this.plan(contact_index, attempt);
    if ("refuse" in planned) {
      return { refused: { code: planned.refuse, message: "Refused by the test dialer." } };
    }
    const id = newId("ses");
    await this.sql`insert into sessions (id, agent_id, workspace_id, status, direction,
        dial_state, agent_input, metadata)
      values (${id}, ${request.agent_id}, ${request.workspace_id}, 'created', 'outbound',
        'dialing', ${this.sql.json(request.agent_input as never)},
        ${this.sql.json(request.metadata)})`;
    placed.session_id = id;
    this.open.set(id, planned);
    this.maxOpen = Math.max(this.maxOpen, this.open.size);
    return { session_id: id };
  };

  /** Ends every open session with its planned outcome (the calls finished). */
  async finishAll(): Promise<void> {
    for (const [id, planned] of this.open) {
      await finishSession(this.sql, id, planned.status, planned.reason);
    }
    this.open.clear();
  }

  /** (contact, attempt) pairs dialled more than once; empty when none was. */
  dialledTwice(others: TestDialer[] = []): string[] {
    const seen = new Map<string, number>();
    for (const c of [this, ...others].flatMap((d) => d.calls)) {
      const key = `${c.request.metadata.campaign_id}/${c.contact_index}/${c.attempt}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    return [...seen].filter(([, n]) => n > 1).map(([k]) => k);
  }
}
