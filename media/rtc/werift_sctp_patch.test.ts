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
