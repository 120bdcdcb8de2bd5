// Why sessions.connect refused the call, in the service's own words, and what to do about it,
// for the demo page: a wrong key or origin must not read as a bare "refused".
import type { CallState } from "./call.ts";

export type Refusal = NonNullable<CallState["refusal"]>;

/** What the page shows: the service's message (with its status and code) and the next step. */
export interface RefusalText {
  said: string;
  todo: string;
}

/** The next step per refusal code; `origin` is the page's own, `retry` the seconds to wait. */
function todoFor(r: Refusal, origin: string): string {
  const sent = typeof r.details?.origin === "string" ? r.details.origin : origin;
  switch (r.code) {
    case "origin_not_allowed":
      return `Give this page a publishable key whose allowed origins include ${sent} (made on ` +
        "the agent's page in the console), or open this page from an origin its key allows.";
    case "invalid_api_key":
    case "unauthorized":
      return "Give this page a current publishable key (pk_…) of the agent: in demo-config.js or " +
        "as ?key= in the address. A revoked or mistyped key is refused.";
    case "forbidden":
      return "Use a publishable key (pk_…) made for this agent.";
    case "agent_not_found":
      return "Set the agent id the key was made for (demo-config.js or ?agent=): a key starts " +
        "calls to its own agent only.";
    case "rate_limited": {
      const wait = r.details?.retry_after_seconds;
      return `Wait ${typeof wait === "number" ? `${wait} s` : "a moment"} and call again.`;
    }
    case "recording_not_permitted":
      return "Leave recording to the agent's setting: a page's key cannot turn it on.";
    case "invalid_request":
      return `Fix what the page sends${
        typeof r.details?.field === "string" && r.details.field ? ` (${r.details.field})` : ""
      }: see the service's message above.`;
  }
  if (r.status >= 500) return "The service could not take the call now: try again shortly.";
  return "See the service's message above; the call log below has the whole answer.";
}

export function describeRefusal(r: Refusal, pageOrigin: string): RefusalText {
  const code = r.code ? ` ${r.code}` : "";
  const message = r.message ? `: ${r.message}` : "";
  return {
    said: `The service refused the call (${r.status}${code})${message}`,
    todo: todoFor(r, pageOrigin),
  };
}

/** sessions.connect could not be sent at all (the API is down, or CORS refused it). */
export function describeUnreachable(apiUrl: string, error: string): RefusalText {
  return {
    said: `The service at ${apiUrl} could not be reached (${error}).`,
    todo: "Check that the API is running at that address and lets this page's origin call it.",
  };
}
