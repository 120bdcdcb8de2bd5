// The console's campaigns page: every campaign with its progress (contacts by state, attempts by
// outcome), and pause / resume / cancel through the same status change the admin routes make.
import { Hono } from "hono";
import type { Context } from "hono";
import type { FC } from "hono/jsx";
import {
  type Campaign,
  campaignProgress,
  type CampaignStatus,
  changeCampaignStatus,
  listCampaigns,
  type Progress,
} from "../../db/campaigns.ts";
import type { ApiDeps } from "../context.ts";
import { ErrorNotice, Layout, Status, Time } from "./layout.tsx";
import { field, type Form } from "./forms.ts";

type Shown = Campaign & { progress: Progress };

/** What each button does: the statuses it moves from, and to. */
const ACTIONS: Record<string, { from: CampaignStatus[]; to: CampaignStatus; label: string }> = {
  pause: { from: ["scheduled", "running"], to: "paused", label: "Pause" },
  resume: { from: ["paused"], to: "running", label: "Resume" },
  cancel: { from: ["scheduled", "running", "paused"], to: "cancelled", label: "Cancel" },
};

const ProgressCell: FC<{ progress: Progress }> = ({ progress }) => {
  const c = progress.contacts;
  const outcomes = Object.entries(progress.attempts).sort(([a], [b]) => a.localeCompare(b));
  return (
    <td>
      <div>
        {`${c.done + c.failed + c.cancelled} of ${c.total} finished: ${c.done} done, ` +
          `${c.failed} failed, ${c.cancelled} cancelled; ${c.dialing} dialling, ` +
          `${c.pending} pending`}
      </div>
      <div class="muted small">
        {outcomes.length ? outcomes.map(([o, n]) => `${o} ${n}`).join(", ") : "no attempts yet"}
      </div>
    </td>
  );
};

export const CampaignsPage: FC<{ campaigns: Shown[]; error?: string }> = (
  { campaigns, error },
) => (
  <Layout title="Campaigns" signedIn>
    <h1>Campaigns</h1>
    <p class="muted">
      Outbound campaigns, newest first. Made with <code>campaigns.create</code>,{" "}
      <code>deno task admin campaigns create</code> or the <code>create_campaign</code> tool.
    </p>
    <ErrorNotice message={error} />
    {campaigns.length === 0 ? <p class="muted">No campaigns yet.</p> : (
      <table>
        <thead>
          <tr>
            <th>Name</th>
            <th>Status</th>
            <th>Progress</th>
            <th>From</th>
            <th>Window</th>
            <th>At once</th>
            <th>Created</th>
            <th></th>
          </tr>
        </thead>
        <tbody>
          {campaigns.map((c) => (
            <tr id={`campaign-${c.campaign_id}`}>
              <td>
                {c.name}
                <div class="mono muted small">{c.campaign_id}</div>
              </td>
              <td>
                <Status status={c.status} />
              </td>
              <ProgressCell progress={c.progress} />
              <td class="mono">{c.from}</td>
              <td>{`${c.window_start}-${c.window_end} ${c.time_zone}`}</td>
              <td>{c.concurrency}</td>
              <td>
                <Time at={c.created_at} />
              </td>
              <td class="row">
                {Object.entries(ACTIONS).filter(([, a]) => a.from.includes(c.status)).map((
                  [verb, a],
                ) => (
                  <form method="post" action={`/console/campaigns/${verb}`}>
                    <input type="hidden" name="campaign_id" value={c.campaign_id} />
                    <button class={verb === "cancel" ? "danger" : "plain"} type="submit">
                      {a.label}
                    </button>
                  </form>
                ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
  </Layout>
);

export function campaignConsole(deps: ApiDeps): Hono {
  const ui = new Hono();
  const render = async (c: Context, error?: string, status: 200 | 409 = 200) => {
    const campaigns = await listCampaigns(deps.sql);
    const progress = await campaignProgress(deps.sql, campaigns.map((x) => x.campaign_id));
    const shown = campaigns.map((x) => ({ ...x, progress: progress.get(x.campaign_id)! }));
    return c.html(
      "<!doctype html>" + String(await <CampaignsPage campaigns={shown} error={error} />),
      status,
    );
  };
  ui.get("/", (c) => render(c));
  ui.post("/:verb", async (c) => {
    const action = ACTIONS[c.req.param("verb")];
    if (!action) return c.notFound();
    const f = (await c.req.parseBody({ all: true })) as Form;
    const id = field(f, "campaign_id");
    const changed = await changeCampaignStatus(deps.sql, id, action.from, action.to, new Date());
    if (!changed) return render(c, `That campaign cannot be ${action.to} now.`, 409);
    return c.redirect(`/console/campaigns#campaign-${id}`, 303);
  });
  return ui;
}
