// Twilio Media Streams as the worker sees them (carrier.ts): its dialect, its token in the start
// message (a `<Stream>` URL takes no query string: api/telephony/twilio/ passes the token as a
// `<Parameter>`), and its REST API's hang-up and transfer.
import type { LineCarrier } from "../carrier.ts";
import { twilioDialect } from "./dialect.ts";
import { TwilioCallControl } from "./rest.ts";

export const twilio: LineCarrier = {
  name: "twilio",
  dialect: twilioDialect,
  sessionToken: "start",
  control(settings) {
    const t = settings.twilio;
    if (!t?.accountSid || !t.authToken) return undefined;
    return new TwilioCallControl({
      accountSid: t.accountSid,
      authToken: t.authToken,
      apiUrl: t.apiUrl,
    });
  },
};
