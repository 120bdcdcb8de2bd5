// A Twilio webhook's form, once its X-Twilio-Signature checks out with TWILIO_AUTH_TOKEN and it is
// this account's: what the voice webhook and the status callbacks of our own calls both read.
import type { Context } from "hono";
import type { ApiDeps } from "../../context.ts";
import { badSignature, notConfigured, signedForm } from "../admit.ts";
import { sameSecret } from "../signatures.ts";
import { twilioSignature } from "./signature.ts";

export async function twilioForm(c: Context, deps: ApiDeps): Promise<Record<string, string>> {
  const twilio = deps.telephony?.twilio;
  if (!twilio?.authToken) throw notConfigured("Twilio", "TWILIO_AUTH_TOKEN");
  const { params, url } = await signedForm(c, deps);
  const expected = await twilioSignature(twilio.authToken, url, params);
  if (!sameSecret(c.req.header("x-twilio-signature") ?? "", expected)) {
    throw badSignature("Twilio");
  }
  const form = Object.fromEntries(params);
  // Another account's call, signed with its own token, would not verify: this is belt and braces.
  if (twilio.accountSid && form.AccountSid !== twilio.accountSid) throw badSignature("Twilio");
  return form;
}
