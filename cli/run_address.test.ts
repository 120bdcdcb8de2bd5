// HOST as a laptop run reads it: one address for every listener, loopback unless opened up, and
// an announced address others can reach.
import { assertEquals, assertMatch, assertThrows } from "../tests/helpers/assert.ts";
import { runAddress } from "./run_address.ts";

Deno.test("a laptop run listens on loopback unless HOST opens it, and announces a reachable address", () => {
  assertEquals(runAddress(undefined, "192.168.1.20"), {
    listen: "127.0.0.1",
    announce: "127.0.0.1",
  });
  assertEquals(runAddress("", "192.168.1.20").listen, "127.0.0.1");
  // Every interface: announced as this machine's network address, never as 0.0.0.0.
  assertEquals(runAddress("0.0.0.0", "192.168.1.20"), {
    listen: "0.0.0.0",
    announce: "192.168.1.20",
  });
  assertEquals(runAddress("0.0.0.0", null).announce, "127.0.0.1", "no network: loopback");
  assertEquals(runAddress("10.0.0.5", "192.168.1.20"), {
    listen: "10.0.0.5",
    announce: "10.0.0.5",
  });
  for (const bad of ["localhost", "::", "300.1.1.1", "example.com"]) {
    assertMatch(assertThrows(() => runAddress(bad), Error).message, /^HOST must be an IPv4/);
  }
});
