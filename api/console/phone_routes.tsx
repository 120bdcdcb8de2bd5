// The console's phone page: numbers and trunks, checked by the same readers as the admin routes
// (api/admin/phone_input.ts), so a refusal reads the same and writes nothing.
import { Hono } from "hono";
import type { Context } from "hono";
import { getAgent, listAgents } from "../../db/agents.ts";
import {
  createPhoneNumber,
  deletePhoneNumber,
  listPhoneNumbers,
  updatePhoneNumber,
} from "../../db/phone_numbers.ts";
import {
  createTrunk,
  deleteTrunk,
  getOutboundTrunk,
  getTrunk,
  listTrunks,
  updateTrunk,
} from "../../db/trunks.ts";
import { readOutbound, sealOutbound } from "../admin/trunk_outbound.ts";
import { ApiError } from "../../common/http/errors.ts";
import { logger } from "../../common/log.ts";
import { checkNumber, readTrunkCreate, readTrunkUpdate } from "../admin/phone_input.ts";
import type { ApiDeps } from "../context.ts";
import { checked, field, type Form } from "./forms.ts";
import {
  type NumberForm,
  PhonePage,
  type PhonePageProps,
  type TrunkForm,
  TrunkPage,
} from "./phone.tsx";

const log = logger("console");

function refusal(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  throw err;
}

export function phoneConsole(deps: ApiDeps): Hono {
  const ui = new Hono();
  const form = async (c: Context) => (await c.req.parseBody({ all: true })) as Form;
  const render = async (c: Context, extra: Partial<PhonePageProps> = {}, status: 200 | 400 = 200) =>
    c.html(
      "<!doctype html>" + String(
        await (
          <PhonePage
            numbers={await listPhoneNumbers(deps.sql)}
            trunks={await listTrunks(deps.sql)}
            agents={await listAgents(deps.sql)}
            {...extra}
          />
        ),
      ),
      status,
    );
  const back = (c: Context, anchor = "") => c.redirect(`/console/phone${anchor}`, 303);

  ui.get("/", (c) => render(c));

  ui.post("/numbers", async (c) => {
    const f = await form(c);
    const input: NumberForm = {
      number: field(f, "number"),
      agent_id: field(f, "agent_id"),
      trunk_id: field(f, "trunk_id"),
    };
    const fail = (numberError: string) => render(c, { numberForm: input, numberError }, 400);
    try {
      checkNumber(input.number!);
    } catch (err) {
      return fail(refusal(err));
    }
    if (!await getAgent(deps.sql, input.agent_id!)) return fail("No such agent.");
    if (input.trunk_id && !await getTrunk(deps.sql, input.trunk_id)) return fail("No such trunk.");
    const made = await createPhoneNumber(deps.sql, {
      number: input.number!,
      agent_id: input.agent_id!,
      trunk_id: input.trunk_id || null,
      enabled: true,
    });
    if (!made) return fail("This number already leads to an agent.");
    log.info("console added phone number", { number: made.number, agent_id: made.agent_id });
    return back(c, `#number-${made.number}`);
  });

  ui.post("/numbers/enabled", async (c) => {
    const f = await form(c);
    await updatePhoneNumber(deps.sql, field(f, "number"), {
      enabled: field(f, "enabled") === "on",
    });
    return back(c);
  });

  ui.post("/numbers/delete", async (c) => {
    const f = await form(c);
    await deletePhoneNumber(deps.sql, field(f, "number"));
    return back(c);
  });

  ui.post("/trunks", async (c) => {
    const f = await form(c);
    const input: TrunkForm = {
      name: field(f, "name"),
      sources: field(f, "sources"),
      auth_username: field(f, "auth_username"),
      auth_realm: field(f, "auth_realm"),
    };
    const password = field(f, "auth_password");
    // The form's empty fields are "not given", as the admin route's absent ones.
    const body: Record<string, unknown> = {
      name: input.name,
      allowed_sources: input.sources!.split(/[\s,]+/).filter(Boolean),
    };
    if (input.auth_username) body.auth_username = input.auth_username;
    if (password) body.auth_password = password;
    if (input.auth_realm) body.auth_realm = input.auth_realm;
    let trunk;
    try {
      trunk = await createTrunk(deps.sql, readTrunkCreate(body));
    } catch (err) {
      // The password is never put back into the form.
      return render(c, { trunkForm: input, trunkError: refusal(err) }, 400);
    }
    log.info("console created trunk", { trunk_id: trunk.trunk_id });
    return back(c, `#trunk-${trunk.trunk_id}`);
  });

  const trunkPage = async (c: Context, props: Parameters<typeof TrunkPage>[0], status: 200 | 400) =>
    c.html("<!doctype html>" + String(await <TrunkPage {...props} />), status);

  ui.get("/trunks/:trunk_id{trk_[A-Za-z0-9]+}", async (c) => {
    const trunk = await getTrunk(deps.sql, c.req.param("trunk_id"));
    if (!trunk) return c.text("No such trunk.", 404);
    return trunkPage(c, { trunk, saved: c.req.query("saved") === "1" }, 200);
  });

  ui.post("/trunks/:trunk_id{trk_[A-Za-z0-9]+}", async (c) => {
    const trunk = await getTrunk(deps.sql, c.req.param("trunk_id"));
    if (!trunk) return c.text("No such trunk.", 404);
    const f = await form(c);
    // As trunks.update: the fields the form shows are "given"; an empty password keeps it.
    const body: Record<string, unknown> = {
      name: field(f, "name"),
      allowed_sources: field(f, "sources").split(/[\s,]+/).filter(Boolean),
    };
    const username = field(f, "auth_username");
    const realm = field(f, "auth_realm");
    const password = field(f, "auth_password");
    if (checked(f, "remove_auth")) body.remove_auth = true;
    else if (password) {
      body.auth_password = password;
      if (username) body.auth_username = username;
      if (realm) body.auth_realm = realm;
    } else {
      if (username && username !== trunk.auth_username) body.auth_username = username;
      if (realm && realm !== trunk.auth_realm) body.auth_realm = realm;
    }
    // The outbound fields as trunks.update reads them: the address is always given (empty: none).
    body.outbound_address = field(f, "outbound_address") || null;
    body.outbound_transport = field(f, "outbound_transport") || undefined;
    const outUser = field(f, "outbound_username");
    const outPassword = field(f, "outbound_password");
    if (checked(f, "remove_outbound_credentials")) body.remove_outbound_credentials = true;
    else if (outPassword) {
      body.outbound_password = outPassword;
      if (outUser) body.outbound_username = outUser;
    } else if (outUser && outUser !== trunk.outbound_username) body.outbound_username = outUser;
    try {
      const outbound = readOutbound(body, trunk);
      const kept = outbound.username === undefined
        ? undefined
        : (await getOutboundTrunk(deps.sql, trunk.trunk_id))?.outbound_password_sealed;
      await updateTrunk(deps.sql, trunk.trunk_id, {
        ...readTrunkUpdate(body, trunk),
        outbound: await sealOutbound(deps.trunkKey, trunk.trunk_id, outbound, kept),
      });
    } catch (err) {
      return trunkPage(c, { trunk, error: refusal(err) }, 400);
    }
    log.info("console updated trunk", { trunk_id: trunk.trunk_id });
    return c.redirect(`/console/phone/trunks/${trunk.trunk_id}?saved=1`, 303);
  });

  ui.post("/trunks/delete", async (c) => {
    const f = await form(c);
    const result = await deleteTrunk(deps.sql, field(f, "trunk_id"));
    if (result === "in_use") {
      return render(c, {
        rowError: "Phone numbers still use this trunk; move or delete them first.",
      }, 400);
    }
    return back(c, "#trunks");
  });
  return ui;
}
