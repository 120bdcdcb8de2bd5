// FAKE Twilio and Plivo REST APIs for tests: not the providers, a local stand-in on 127.0.0.1 that
// answers the two calls the worker makes, as documented:
// - Twilio "Update a Call resource" (https://www.twilio.com/docs/voice/api/call-resource
//   #update-a-call-resource): POST /2010-04-01/Accounts/{AccountSid}/Calls/{CallSid}.json, HTTP
//   Basic (account SID, auth token), form Status=completed or Twiml=...; 200 with the call as
//   JSON, 401 with Twilio's error JSON (code 20003) for bad credentials, 404 (code 20404) for a
//   call it does not know.
// - Plivo "Hang up a call" (https://www.plivo.com/docs/voice/api/call/hang-up-a-call):
//   DELETE /v1/Account/{auth_id}/Call/{call_uuid}/, HTTP Basic (auth ID, token); 204, or 401/404.
// - Plivo "Transfer a call" (https://www.plivo.com/docs/voice/api/call/transfer-a-call): POST on
//   the same Call with legs=aleg, aleg_url, aleg_method (default POST); 202 {"message": "call
//   transferred", "api_id"}, 400 without aleg_url. Then, as Plivo does, it fetches the call's new
//   XML from aleg_url, POSTing the call's parameters signed with X-Plivo-Signature-V3
//   (https://www.plivo.com/docs/voice/concepts/signature-validation), and records what it got
//   (`transfers`). XML with a `<Dial>` ends the stream (the call now runs the Dial); anything else
//   leaves the call as it was (what Plivo does with a failed fetch is not documented for this
//   case, so the fake does not guess).
// A live call's stream ends as the provider's would after a hang-up or a redirect (`onCallEnded`).
import { signPlivo } from "./plivo_audio_stream.ts";

export interface RestRequest {
  method: string;
  path: string;
  form: Record<string, string>;
}

/** One XML fetch a Plivo transfer made. */
export interface PlivoTransferFetch {
  callUuid: string;
  url: string;
  status: number;
  xml: string;
}

export interface FakeTelephonyRest {
  url: string;
  requests: RestRequest[];
  /** Calls the fake knows (placed through it); others are 404. */
  calls: Set<string>;
  /** Plivo transfers' XML fetches, in order. */
  transfers: PlivoTransferFetch[];
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
    transfers: [],
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
      if (plivo && req.method === "POST") {
        const [, authId, callUuid] = plivo;
        if (authId !== creds.plivo.authId || auth !== basic(authId, creds.plivo.authToken)) {
          return Response.json({ error: "authentication failed" }, { status: 401 });
        }
        if (!fake.calls.has(callUuid)) {
          return Response.json({ error: "not found" }, { status: 404 });
        }
        if ((form.legs ?? "aleg") !== "aleg" || !form.aleg_url) {
          return Response.json({ error: "aleg_url parameter must be present" }, { status: 400 });
        }
        // Plivo acknowledges first, then fetches the new XML.
        setTimeout(() => void fetchTransferXml(callUuid, form.aleg_url, form.aleg_method), 0);
        return Response.json({ message: "call transferred", api_id: crypto.randomUUID() }, {
          status: 202,
        });
      }
      return Response.json({ error: "no such resource" }, { status: 404 });
    },
  );
  async function fetchTransferXml(callUuid: string, url: string, method = "POST") {
    const params = {
      CallUUID: callUuid,
      CallStatus: "in-progress",
      Direction: "inbound",
      Event: "Transfer",
    };
    const nonce = String(Math.floor(Math.random() * 1e15));
    const get = method.toUpperCase() === "GET";
    const target = get
      ? `${url}${url.includes("?") ? "&" : "?"}${new URLSearchParams(params)}`
      : url;
    let status = 0, xml = "";
    try {
      const r = await fetch(target, {
        method: get ? "GET" : "POST",
        headers: {
          "Content-Type": "application/x-www-form-urlencoded",
          "X-Plivo-Signature-V3": signPlivo(
            creds.plivo.authToken,
            target,
            get ? {} : params,
            nonce,
          ),
          "X-Plivo-Signature-V3-Nonce": nonce,
        },
        body: get ? undefined : new URLSearchParams(params),
      });
      status = r.status;
      xml = await r.text();
    } catch (err) {
      xml = (err as Error).message;
    }
    fake.transfers.push({ callUuid, url, status, xml });
    if (status === 200 && /<Response>\s*<Dial\b/.test(xml)) fake.onCallEnded?.(callUuid);
  }
  fake.url = `http://127.0.0.1:${server.addr.port}`;
  return fake;
}
