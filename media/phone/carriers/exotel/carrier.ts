// Exotel's Voicebot stream as the worker sees it (carrier.ts): its dialect and its token in the
// stream URL's query. Exotel has no API to end or move a flow's call, so no REST control: closing
// the stream ends the call (its dialect says why a transfer cannot be made).
import type { LineCarrier } from "../carrier.ts";
import { exotelDialect } from "./dialect.ts";

export const exotel: LineCarrier = {
  name: "exotel",
  dialect: exotelDialect,
  sessionToken: "url",
  control: () => undefined,
};
