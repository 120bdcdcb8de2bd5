// The console's page for an agent's redaction (issue 37): a checkbox per category, saved as
// agents.redaction.set saves it (the whole list; none checked turns redaction off).
import { Hono } from "hono";
import type { Context } from "hono";
import type { FC } from "hono/jsx";
import { type Agent, getAgent } from "../../db/agents.ts";
import { getAgentRedaction, setAgentRedaction } from "../../db/agent_redaction.ts";
import { CATEGORIES, type Category } from "../../common/redaction.ts";
import type { ApiDeps } from "../context.ts";
import { checked, type Form } from "./forms.ts";
import { Layout } from "./layout.tsx";

/** What each category takes, as the page says it (docs/redaction.md has the whole story). */
const MEANING: Record<Category, string> = {
  card: "card numbers (13-19 digits passing the Luhn check), written or spoken",
  account: "bank account numbers (9-18 digits), UPI ids and IFSC codes",
  phone: "phone numbers: Indian mobiles (+91, 0 or none), E.164",
  email: "e-mail addresses, written or spoken (at … dot com)",
  aadhaar: "Aadhaar numbers (12 digits passing the Verhoeff check)",
  pan: "PAN (AAAAA9999A)",
  keypad: "every key the caller presses, kept as *",
};

const RedactionPage: FC<{ agent: Agent; categories: Category[]; saved: boolean }> = (
  { agent, categories, saved },
) => (
  <Layout title={`${agent.name}: redaction`}>
    <p class="small">
      <a href={`/console/agents/${agent.agent_id}`}>{agent.name}</a> / redaction
    </p>
    <h1>Redaction</h1>
    <p>
      What is checked is replaced by a placeholder such as <span class="mono">[card]</span>{" "}
      in this agent's session records, transcripts and logs before they are written. The brain still
      hears the caller's words; recordings' audio is not redacted. Calls that start after saving are
      redacted.
    </p>
    {saved && <p class="notice">Saved.</p>}
    <form class="stack" method="post" action={`/console/redaction/${agent.agent_id}`}>
      {CATEGORIES.map((c) => (
        <label class="check">
          <input type="checkbox" name={c} value="on" checked={categories.includes(c)} />
          <span class="mono">{c}</span>: {MEANING[c]}
        </label>
      ))}
      <div>
        <button type="submit">Save</button>
      </div>
    </form>
  </Layout>
);

export function redactionConsole(deps: ApiDeps): Hono {
  const ui = new Hono();
  const render = async (c: Context, agent: Agent) =>
    c.html(
      "<!doctype html>" + String(
        await (
          <RedactionPage
            agent={agent}
            categories={(await getAgentRedaction(deps.sql, agent.agent_id)).categories}
            saved={c.req.query("saved") === "1"}
          />
        ),
      ),
    );
  ui.get("/:agent_id", async (c) => {
    const agent = await getAgent(deps.sql, c.req.param("agent_id"));
    return agent ? render(c, agent) : c.notFound();
  });
  ui.post("/:agent_id", async (c) => {
    const agent = await getAgent(deps.sql, c.req.param("agent_id"));
    if (!agent) return c.notFound();
    const f = (await c.req.parseBody({ all: true })) as Form;
    await setAgentRedaction(deps.sql, agent.agent_id, CATEGORIES.filter((x) => checked(f, x)));
    return c.redirect(`/console/redaction/${agent.agent_id}?saved=1`, 303);
  });
  return ui;
}
