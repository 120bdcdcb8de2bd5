// Plivo Audio Streams as the worker sees them (carrier.ts): its dialect, its token in the stream
// URL's query, and its REST API's hang-up and transfer (a transfer needs PUBLIC_API_URL: rest.ts).
import type { LineCarrier } from "../carrier.ts";
import { plivoDialect } from "./dialect.ts";
import { PlivoCallControl } from "./rest.ts";

export const plivo: LineCarrier = {
  name: "plivo",
  dialect: plivoDialect,
  sessionToken: "url",
  control(settings, sessionId) {
    const p = settings.plivo;
    if (!p?.authId || !p.authToken) return undefined;
    return new PlivoCallControl({
      authId: p.authId,
      authToken: p.authToken,
      apiUrl: p.apiUrl,
      publicApiUrl: settings.publicApiUrl,
    }, sessionId);
  },
};
