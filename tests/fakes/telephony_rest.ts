// FAKE Twilio and Plivo REST APIs for tests: not the providers, a local stand-in on 127.0.0.1 that
// answers the two calls the worker makes, as documented:
// - Twilio "Update a Call resource" (https://www.twilio.com/docs/voice/api/call-resource
//   #update-a-call-resource): POST /2010-04-01/Accounts/{AccountSid}/Calls/{CallSid}.json, HTTP
//   Basic (account SID, auth token), form Status=completed or Twiml=...; 200 with the call as
//   JSON, 401 with Twilio's error JSON (code 20003) for bad credentials, 404 (code 20404) for a
//   call it does not know.
// - Plivo "Hang up a call" (https://www.plivo.com/docs/voice/api/call/hang-up-a-call):
//   DELETE /v1/Account/{auth_id}/Call/{call_uuid}/, HTTP Basic (auth ID, token); 204, or 401/404.
// A live call's stream ends as the provider's would after either (`onCallEnded`).

export interface RestRequest {
  method: string;
  path: string;
  form: Record<string, string>;
}

export interface FakeTelephonyRest {
  url: string;
  requests: RestRequest[];
  /** Calls the fake knows (placed through it); others are 404. */
  calls: Set<string>;
  /** Called with a call id the API hung up or redirected (its stream should now end). */
  onCallEnded?: (callId: string) => void;
  close(): Promise<void>;
}

export function startFakeTelephonyRest(creds: {
  twilio: { accountSid: string; authToken: string };
  plivo: { authId: string; authToken: string };
}): FakeTelephonyRest {
  const ac = new AbortController();
  const fake: FakeTelephonyRest = {
    url: "",
    requests: [],
    calls: new Set(),
    close: async () => {
      ac.abort();
      await server.finished;
    },
  };
  const basic = (user: string, pass: string) => `Basic ${btoa(`${user}:${pass}`)}`;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    async (req) => {
      const path = new URL(req.url).pathname;
      const form = Object.fromEntries(new URLSearchParams(await req.text()));
      fake.requests.push({ method: req.method, path, form });
      const auth = req.headers.get("authorization");
      const twilio = /^\/2010-04-01\/Accounts\/([^/]+)\/Calls\/([^/]+)\.json$/.exec(path);
      if (twilio && req.method === "POST") {
        const [, account, callSid] = twilio;
        if (
          account !== creds.twilio.accountSid ||
          auth !== basic(creds.twilio.accountSid, creds.twilio.authToken)
        ) {
          return Response.json({ code: 20003, message: "Authenticate", status: 401 }, {
            status: 401,
          });
        }
        if (!fake.calls.has(callSid)) {
          return Response.json({
            code: 20404,
            message: `The requested resource ${path} was not found`,
            status: 404,
          }, { status: 404 });
        }
        if (form.Status !== "completed" && !form.Twiml && !form.Url) {
          return Response.json({ code: 21218, message: "Invalid ApiVersion", status: 400 }, {
            status: 400,
          });
        }
        queueMicrotask(() => fake.onCallEnded?.(callSid));
        return Response.json({
          sid: callSid,
          account_sid: account,
          status: form.Status === "completed" ? "completed" : "in-progress",
        });
      }
      const plivo = /^\/v1\/Account\/([^/]+)\/Call\/([^/]+)\/$/.exec(path);
      if (plivo && req.method === "DELETE") {
        const [, authId, callUuid] = plivo;
        if (authId !== creds.plivo.authId || auth !== basic(authId, creds.plivo.authToken)) {
          return Response.json({ error: "authentication failed" }, { status: 401 });
        }
        if (!fake.calls.has(callUuid)) {
          return Response.json({ error: "not found" }, { status: 404 });
        }
        queueMicrotask(() => fake.onCallEnded?.(callUuid));
        return new Response(null, { status: 204 });
      }
      return Response.json({ error: "no such resource" }, { status: 404 });
    },
  );
  fake.url = `http://127.0.0.1:${server.addr.port}`;
  return fake;
}
