import { RTCSctpTransport } from "werift";
import { assertEquals } from "../../tests/helpers/assert.ts";
import { SCTP_INITIAL_RTO_S } from "./werift_sctp_patch.ts";

Deno.test("a werift SCTP association starts at a 1 s retransmission timeout, not 3 s", () => {
  const transport = new RTCSctpTransport();
  // The association is made when the transport gets its DTLS transport; it sends nothing yet.
  // deno-lint-ignore no-explicit-any
  (transport as any).setDtlsTransport({
    id: "dtls-1",
    onStateChange: { subscribe: () => ({ unSubscribe: () => {} }) },
  });
  // deno-lint-ignore no-explicit-any
  assertEquals((transport as any).sctp.rto, SCTP_INITIAL_RTO_S);
  assertEquals(SCTP_INITIAL_RTO_S, 1);
});

Deno.test("an association the peer established before this side's start() is announced connected", async () => {
  const transport = new RTCSctpTransport();
  // deno-lint-ignore no-explicit-any
  const t = transport as any;
  t.setDtlsTransport({
    id: "dtls-1",
    onStateChange: { subscribe: () => ({ unSubscribe: () => {} }) },
  });
  // The peer's INIT .. COOKIE-ECHO came before this side's DTLS reported connected.
  t.sctp.isServer = true;
  t.sctp.associationState = 4; // ESTABLISHED
  // What werift's connectSctp does: start, then wait for `connected`.
  await t.sctp.start(5000);
  const connected = await Promise.race([
    t.sctp.stateChanged.connected.asPromise().then(() => true),
    new Promise((r) => setTimeout(() => r(false), 200)),
  ]);
  assertEquals(connected, true);
  assertEquals(t.sctp.state, "connected");
  t.sctp.heartbeatCancel?.();
  await t.sctp.stop?.().catch(() => {});
});
