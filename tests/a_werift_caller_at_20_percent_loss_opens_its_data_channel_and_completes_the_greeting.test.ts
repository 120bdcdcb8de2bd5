// A werift caller survives loss as a browser does (issue 25): with 20 % of its packets lost in
// both directions from the first one (ICE checks, the DTLS handshake, SCTP's setup, the RTVI
// exchange, the greeting), its chat channel opens and the greeting arrives whole. Before
// media/rtc/werift_dtls_patch.ts packed each DTLS flight into one datagram and made the server
// answer a retransmitted Finished, these seeded links left DTLS unfinished (a flight taken without
// its lost CertificateRequest, or a lost last flight never resent) and the channel never opened;
// before media/rtc/werift_sctp_patch.ts, a late DTLS on the worker's side ended the call.
import { assert } from "./helpers/assert.ts";
import { startInProcessCallService } from "./helpers/call_harness.ts";
import { LossyLink } from "./helpers/lossy_link.ts";
import { rawBrain } from "./helpers/raw_brain.ts";
import { TestCaller } from "../caller/caller.ts";

Deno.test("a werift caller at 20 % random loss in both directions opens its data channel and completes the greeting", async () => {
  const brain = rawBrain(async (call) => {
    await call.next("session_start");
    call.send("greeting", { text: "Hello there, this is a greeting of a few words." });
  });
  const service = await startInProcessCallService(brain);
  try {
    // Seeds whose links failed the call before the fix, each in its own way: 7919 and 15838 left
    // DTLS unfinished; 63352 lost the caller's last DTLS flight, so the worker's DTLS connected
    // after the caller's SCTP had set up the association, and the worker's connection never
    // reported connected (connect_timeout mid-greeting).
    for (const seed of [7919, 15838, 63352]) {
      const r = await service.api.post(
        "/api/v1/sessions.connect",
        { agent_id: service.tenant.agent_id },
        service.tenant.sk,
      );
      const link = new LossyLink(seed);
      link.setLoss(0.2);
      const caller = await TestCaller.connect({
        offerUrl: r.body.webrtc_request_params.endpoint,
        headers: r.body.webrtc_request_params.headers,
        onSockets: (pc) => link.attach(pc),
      });
      try {
        await caller.waitOpen(20_000);
        caller.sendClientReady();
        await caller.waitForMessage((m) => m.type === "bot-ready", 20_000);
        caller.openMicrophone();
        await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 20_000);
        const started = caller.messages.findIndex((m) => m.type === "bot-started-speaking");
        assert(started >= 0, "the greeting's bot-started-speaking never arrived");
        assert(
          link.counts.dropped.in > 0 && link.counts.dropped.out > 0,
          `the link dropped too little to prove anything: ${JSON.stringify(link.counts)}`,
        );
      } finally {
        await caller.hangUp();
      }
    }
  } finally {
    await service.close();
  }
});
