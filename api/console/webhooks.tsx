// The console's webhooks pages: endpoints (made here or through webhooks.create, the secret shown
// once), and each endpoint's delivery log with every attempt and a redeliver button, over the
// same functions the admin routes use.
import { Hono } from "hono";
import type { Context } from "hono";
import type { FC } from "hono/jsx";
import {
  type AttemptRow,
  type DeliveryRow,
  getEndpoint,
  listAttempts,
  listDeliveries,
  listEndpoints,
  redeliver,
  type WebhookEndpoint,
} from "../../db/webhooks.ts";
import { ApiError } from "../../common/http/errors.ts";
import { WEBHOOK_EVENT_TYPES } from "../../common/webhooks/events.ts";
import type { ApiDeps } from "../context.ts";
import { makeEndpoint } from "../admin/webhooks.ts";
import { ErrorNotice, Layout, Status, Time } from "./layout.tsx";
import { field, type Form } from "./forms.ts";

const EndpointsPage: FC<{ endpoints: WebhookEndpoint[]; error?: string; secret?: string }> = (
  { endpoints, error, secret },
) => (
  <Layout title="Webhooks" signedIn>
    <h1>Webhooks</h1>
    <p class="muted">
      Endpoints the service POSTs events to, signed as Standard Webhooks says (docs/webhooks.md).
    </p>
    <ErrorNotice message={error} />
    {secret && (
      <div class="notice secret" role="alert">
        <p>
          <strong>Signing secret</strong>: copy it now. It is kept sealed and will not be shown
          again.
        </p>
        <p>
          <code id="webhook-secret" class="shown-once">{secret}</code>{" "}
          <button type="button" class="plain" data-copy="webhook-secret">Copy</button>
        </p>
      </div>
    )}
    {endpoints.length === 0 ? <p class="muted">No endpoints yet.</p> : (
      <table>
        <thead>
          <tr>
            <th>URL</th>
            <th>For</th>
            <th>Events</th>
            <th>State</th>
            <th>Created</th>
          </tr>
        </thead>
        <tbody>
          {endpoints.map((e) => (
            <tr>
              <td>
                <a href={`/console/webhooks/${e.endpoint_id}`}>{e.url}</a>
                <div class="mono muted small">{e.endpoint_id} {e.description}</div>
              </td>
              <td>{e.agent_id ? <span class="mono">{e.agent_id}</span> : `all of ${e.tenant}`}</td>
              <td>{e.event_types.length ? e.event_types.join(", ") : "all"}</td>
              <td>{e.enabled ? "enabled" : "disabled"}</td>
              <td>
                <Time at={e.created_at} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
    <h2>New endpoint</h2>
    <form method="post" action="/console/webhooks">
      <label>
        URL <input name="url" required placeholder="https://crm.example.com/voice" />
      </label>
      <label>
        Tenant (every agent) <input name="tenant" />
      </label>
      <label>
        or agent id <input name="agent_id" />
      </label>
      <label>
        Events (blank: all; {WEBHOOK_EVENT_TYPES.join(", ")}) <input name="event_types" />
      </label>
      <button type="submit">Create</button>
    </form>
  </Layout>
);

const DeliveriesPage: FC<{
  endpoint: WebhookEndpoint;
  deliveries: DeliveryRow[];
  attempts?: { delivery_id: string; rows: AttemptRow[] };
  error?: string;
}> = ({ endpoint, deliveries, attempts, error }) => (
  <Layout title="Webhook deliveries" signedIn>
    <h1>Deliveries to {endpoint.url}</h1>
    <p class="muted mono">{endpoint.endpoint_id}</p>
    <ErrorNotice message={error} />
    {deliveries.length === 0 ? <p class="muted">Nothing sent yet.</p> : (
      <table>
        <thead>
          <tr>
            <th>Event</th>
            <th>Session</th>
            <th>Status</th>
            <th>Attempts</th>
            <th>Last reply</th>
            <th>Queued</th>
            <th></th>
          </tr>
        </thead>
        <tbody>
          {deliveries.map((d) => (
            <tr id={`delivery-${d.delivery_id}`}>
              <td>
                {d.type}
                <div class="mono muted small">{d.event_id}</div>
              </td>
              <td class="mono">{d.session_id ?? "—"}</td>
              <td>
                <Status status={d.status} />
              </td>
              <td>
                <a href={`/console/webhooks/${endpoint.endpoint_id}?delivery=${d.delivery_id}`}>
                  {d.attempts}
                </a>
              </td>
              <td>{d.last_status_code ?? d.last_error ?? "—"}</td>
              <td>
                <Time at={d.created_at} />
              </td>
              <td>
                <form method="post" action="/console/webhooks/redeliver">
                  <input type="hidden" name="endpoint_id" value={endpoint.endpoint_id} />
                  <input type="hidden" name="delivery_id" value={d.delivery_id} />
                  <button class="plain" type="submit">Redeliver</button>
                </form>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
    {attempts && (
      <section>
        <h2>Attempts of delivery {attempts.delivery_id}</h2>
        <table>
          <thead>
            <tr>
              <th>At</th>
              <th>Code</th>
              <th>Latency</th>
              <th>Error</th>
              <th>Reply (first bytes)</th>
            </tr>
          </thead>
          <tbody>
            {attempts.rows.map((a) => (
              <tr>
                <td>
                  <Time at={a.attempted_at} />
                </td>
                <td>{a.status_code ?? "—"}</td>
                <td>{`${a.latency_ms} ms`}</td>
                <td>{a.error ?? ""}</td>
                <td class="mono small">{a.response_excerpt ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    )}
  </Layout>
);

export function webhookConsole(deps: ApiDeps): Hono {
  const ui = new Hono();
  const page = (c: Context, el: Promise<string> | string, status: 200 | 400 | 404 | 500 = 200) =>
    Promise.resolve(el).then((html) => c.html("<!doctype html>" + String(html), status));
  const list = async (c: Context, error?: string, secret?: string, status?: 400 | 404 | 500) =>
    page(
      c,
      <EndpointsPage endpoints={await listEndpoints(deps.sql)} error={error} secret={secret} />,
      status,
    );
  ui.get("/", (c) => list(c));
  ui.post("/", async (c) => {
    const f = (await c.req.parseBody({ all: true })) as Form;
    const types = field(f, "event_types").split(/[\s,]+/).filter(Boolean);
    try {
      const made = await makeEndpoint(deps, {
        url: field(f, "url"),
        tenant: field(f, "tenant") || undefined,
        agent_id: field(f, "agent_id") || undefined,
        event_types: types,
      });
      return list(c, undefined, made.secret);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      return list(c, err.message, undefined, err.status === 404 ? 404 : 400);
    }
  });
  ui.post("/redeliver", async (c) => {
    const f = (await c.req.parseBody({ all: true })) as Form;
    const endpointId = field(f, "endpoint_id");
    const done = await redeliver(deps.sql, field(f, "delivery_id"));
    if (!done) return list(c, "No such delivery, or its endpoint was deleted.", undefined, 404);
    return c.redirect(`/console/webhooks/${endpointId}#delivery-${done.delivery_id}`, 303);
  });
  ui.get("/:id", async (c) => {
    const endpoint = await getEndpoint(deps.sql, c.req.param("id"));
    if (!endpoint) return list(c, "No such webhook endpoint.", undefined, 404);
    const deliveries = await listDeliveries(deps.sql, {
      endpoint_id: endpoint.endpoint_id,
      limit: 100,
    });
    const chosen = c.req.query("delivery");
    const attempts = chosen && deliveries.some((d) => d.delivery_id === chosen)
      ? { delivery_id: chosen, rows: await listAttempts(deps.sql, chosen) }
      : undefined;
    return page(
      c,
      <DeliveriesPage endpoint={endpoint} deliveries={deliveries} attempts={attempts} />,
    );
  });
  return ui;
}
