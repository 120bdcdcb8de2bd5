// agent_input.pipeline.noise_suppression through the real HTTP server and database: a known
// suppressor is signed into the token (where the worker reads it), an unknown one is a clear 400
// that writes nothing.
import { assertEquals } from "./helpers/assert.ts";
import { makeTenant, rowCounts, startTestApi } from "./helpers/api_server.ts";
import { settingOrCreate } from "../db/service_settings.ts";
import { TokenVerifier } from "../common/token.ts";
import { noiseSuppressionOf } from "../common/noise_suppression.ts";

const CONNECT = "/api/v1/sessions.connect";

Deno.test("noise suppression is chosen per call and an unknown one is refused before anything is written", async (t) => {
  const api = await startTestApi();
  try {
    const acme = await makeTenant(api);

    await t.step("an unknown suppressor is 400 unsupported_config naming the field", async () => {
      const before = await rowCounts(api.db);
      const r = await api.post(CONNECT, {
        agent_id: acme.agent_id,
        agent_input: { pipeline: { noise_suppression: "krisp" } },
      }, acme.sk);
      assertEquals(r.status, 400);
      assertEquals(r.body.error.code, "unsupported_config");
      assertEquals(r.body.error.details.field, "agent_input.pipeline.noise_suppression");
      assertEquals(r.body.error.details.allowed, ["off", "rnnoise"]);
      assertEquals(await rowCounts(api.db), before, "a refused request wrote rows");
    });

    await t.step("a known one is signed into the token the worker reads", async () => {
      const jwk = await settingOrCreate(api.db.sql, "token_signing_key", () => "unused");
      const verifier = await TokenVerifier.fromJwk(jwk);
      for (
        const [pipeline, expected] of [[{ noise_suppression: "rnnoise" }, "rnnoise"], [
          {},
          "off",
        ]] as const
      ) {
        const r = await api.post(CONNECT, {
          agent_id: acme.agent_id,
          agent_input: { pipeline },
        }, acme.sk);
        assertEquals(r.status, 200, JSON.stringify(r.body));
        const token = r.body.webrtc_request_params.headers.Authorization.slice("Bearer ".length);
        const claims = await verifier.verify(token, "node-test-1");
        assertEquals(noiseSuppressionOf((claims.input as { config: unknown }).config), expected);
      }
    });
  } finally {
    await api.close();
  }
});
