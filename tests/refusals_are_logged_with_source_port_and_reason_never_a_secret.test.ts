// Issue 32: a webhook signature refusal left no line, and the redirect's digest refusal named
// neither the username nor the reason. Now each refusal is a line with the source address, its
// port and the reason (rate-limited, common/refusal_log.ts), and never a password, digest response
// or signature.
import { assert, assertMatch } from "./helpers/assert.ts";
import { setQuiet } from "../common/log.ts";
import {
  authorization,
  nonceOf,
  redirectOverUdp,
  requestUri,
} from "./helpers/redirect_over_udp.ts";
import { postTwilioVoiceWebhook, twilioCall } from "./fakes/twilio_media_stream.ts";
import { fakeCarrierAccounts, TWILIO_ACCOUNT } from "./fakes/carrier_accounts.ts";
import { makeTenant, startTestApi } from "./helpers/api_server.ts";

/** The log lines written while `fn` runs (the API's logger writes to console.log). */
async function linesDuring(fn: () => Promise<void>): Promise<string[]> {
  const lines: string[] = [];
  const original = console.log;
  console.log = (...args: unknown[]) => void lines.push(args.map(String).join(" "));
  setQuiet(false);
  try {
    await fn();
  } finally {
    setQuiet(true);
    console.log = original;
  }
  return lines;
}

Deno.test("a refused digest answer is logged with source, port, reason and username, never the password", async () => {
  const t = await redirectOverUdp();
  try {
    const guesser = await t.sender("127.0.0.7");
    const nonce = nonceOf(await guesser.ask("+15550101", "log0"));
    const header = authorization(nonce, requestUri("+15550101", t.sip.port), "hunter2-guess");
    const response = /response="([0-9a-f]+)"/.exec(header)![1];
    const lines = await linesDuring(async () => {
      assertMatch(await guesser.ask("+15550101", "log1", header), /^SIP\/2\.0 403 /);
    });
    const line = lines.find((l) => l.includes("INVITE refused"));
    assert(line, `no refusal line in:\n${lines.join("\n")}`);
    assertMatch(line, /source=127\.0\.0\.7 /);
    assertMatch(line, /port=\d+/);
    assertMatch(line, /reason="wrong credentials"/);
    assertMatch(line, /username=acme/);
    for (const l of lines) {
      assert(!l.includes("hunter2-guess") && !l.includes(response), `a secret in: ${l}`);
    }
  } finally {
    await t.close();
  }
});

Deno.test("a webhook whose signature does not verify is logged with source, port and code", async () => {
  const api = await startTestApi({}, { telephony: fakeCarrierAccounts() });
  try {
    const { agent_id } = await makeTenant(api);
    const url = `${api.url}/api/v1/telephony/twilio/${agent_id}`;
    const lines = await linesDuring(async () => {
      const r = await postTwilioVoiceWebhook(url, "not-the-token", twilioCall(TWILIO_ACCOUNT));
      assert(r.status === 403, r.body);
    });
    const line = lines.find((l) => l.includes("webhook refused"));
    assert(line, `no refusal line in:\n${lines.join("\n")}`);
    assertMatch(line, /source=127\.0\.0\.1 /);
    assertMatch(line, /port=\d+/);
    assertMatch(line, /reason=invalid_signature/);
    assertMatch(line, /carrier=twilio/);
  } finally {
    await api.close();
  }
});
