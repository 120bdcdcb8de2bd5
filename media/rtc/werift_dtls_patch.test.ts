import { assertEquals } from "../../tests/helpers/assert.ts";
import { coalescing, HANDSHAKE_DATAGRAM_BYTES } from "./werift_dtls_patch.ts";

const record = (type: number, bytes: number) => new Uint8Array(bytes).fill(type, 0, 1);

Deno.test("a DTLS flight's records sent in one go leave in one datagram, whole or not at all", async () => {
  const sent: Uint8Array[] = [];
  const send = coalescing((buf) => (sent.push(buf), Promise.resolve()));
  // flight 4: server_hello, certificate, server_key_exchange, certificate_request, hello_done
  await Promise.all([100, 450, 160, 40, 25].map((n) => send(record(22, n))));
  assertEquals(sent.map((d) => d.length), [775]);
  // flight 6: change_cipher_spec then the encrypted Finished, again together
  await Promise.all([send(record(20, 14)), send(record(22, 61))]);
  assertEquals(sent.map((d) => d.length), [775, 75]);
  assertEquals([sent[1][0], sent[1][14]], [20, 22]);
});

Deno.test("a flight larger than a datagram is split at record boundaries under the size", async () => {
  const sent: Uint8Array[] = [];
  const send = coalescing((buf) => (sent.push(buf), Promise.resolve()));
  await Promise.all([700, 700, 2000, 10].map((n) => send(record(22, n))));
  assertEquals(sent.map((d) => d.length), [700, 700, 2000, 10]);
  assert1200(sent.filter((d) => d.length !== 2000));
});

Deno.test("application data is sent at once, not held for a flight", () => {
  const sent: Uint8Array[] = [];
  const send = coalescing((buf) => (sent.push(buf), Promise.resolve()));
  send(record(23, 300));
  assertEquals(sent.length, 1);
});

function assert1200(datagrams: Uint8Array[]) {
  for (const d of datagrams) assertEquals(d.length <= HANDSHAKE_DATAGRAM_BYTES, true);
}
