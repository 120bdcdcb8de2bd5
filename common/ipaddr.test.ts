// Addresses and ranges as sockets, proxies and operators write them, and which forwarded address
// is the client's.
import { assert, assertEquals } from "../tests/helpers/assert.ts";
import {
  addressKey,
  clientAddress,
  inCidr,
  parseCidr,
  parseIp,
  TrustedProxies,
  UNKNOWN_ADDRESS,
} from "./ipaddr.ts";

const key = (s: string) => {
  const ip = parseIp(s);
  return ip && addressKey(ip);
};

Deno.test("addresses parse in the forms sockets and proxies write", () => {
  assertEquals(key("203.0.113.5"), "203.0.113.5");
  assertEquals(key(" 203.0.113.5:4431 "), "203.0.113.5");
  assertEquals(key("::ffff:203.0.113.5"), "203.0.113.5", "IPv4-mapped is the IPv4 address");
  assertEquals(key("[::ffff:cb00:7105]:80"), "203.0.113.5");
  assertEquals(key("2001:db8::1"), "2001:db8:0:0::/64");
  assertEquals(key("[2001:db8:0:0:1:2:3:4]:443"), "2001:db8:0:0::/64");
  assertEquals(key("fe80::1%eth0"), "fe80:0:0:0::/64");
  assertEquals(key("::1"), "0:0:0:0::/64");
  assertEquals(key("64:ff9b::192.0.2.33"), "64:ff9b:0:0::/64");
  assertEquals(parseIp("2001:db8::1")!.bits, parseIp("2001:0db8:0:0:0:0:0:1")!.bits);
  for (
    const bad of [
      "",
      "unknown",
      "1.2.3",
      "1.2.3.4.5",
      "256.1.1.1",
      "01.2.3.4",
      "1.2.3.4:",
      "2001:db8::1::2",
      "1:2:3:4:5:6:7:8:9",
      "1:2:3:4:5:6:7::8",
      "12345::1",
      "::ffff:1.2.3.256",
      "g::1",
    ]
  ) {
    assertEquals(parseIp(bad), undefined, bad);
  }
});

Deno.test("ranges match the addresses inside them", () => {
  const ten = parseCidr("10.0.0.0/8")!;
  assert(inCidr(parseIp("10.200.3.4")!, ten));
  assert(!inCidr(parseIp("11.0.0.1")!, ten));
  assert(inCidr(parseIp("::ffff:10.0.0.1")!, ten), "a mapped address is in the IPv4 range");
  assert(!inCidr(parseIp("::a00:1")!, ten), "an IPv6 address is not");
  const one = parseCidr("192.0.2.7")!;
  assert(inCidr(parseIp("192.0.2.7")!, one) && !inCidr(parseIp("192.0.2.8")!, one));
  const v6 = parseCidr("2001:db8::/32")!;
  assert(inCidr(parseIp("2001:db8:ffff::1")!, v6) && !inCidr(parseIp("2001:db9::1")!, v6));
  assert(inCidr(parseIp("10.1.1.1")!, parseCidr("::ffff:10.0.0.0/104")!));
  assert(inCidr(parseIp("8.8.8.8")!, parseCidr("0.0.0.0/0")!));
  for (const bad of ["10.0.0.0/33", "10.0.0.0/", "10.0.0.0/8/8", "[::1]", "1.2.3.4:80", "x/8"]) {
    assertEquals(parseCidr(bad), undefined, bad);
  }
});

Deno.test("TRUSTED_PROXIES with a typo is refused, naming it", () => {
  let message = "";
  try {
    TrustedProxies.parse(["10.0.0.0/8", "10.0.0.0/80"]);
  } catch (err) {
    message = (err as Error).message;
  }
  assert(message.includes('"10.0.0.0/80"'), message);
});

Deno.test("the client is the right-most forwarded address that is not a trusted proxy", () => {
  const none = TrustedProxies.parse([]);
  const proxies = TrustedProxies.parse(["10.0.0.0/8", "192.0.2.1"]);
  // No trusted proxy, or a peer that is not one: the peer, whatever is forwarded.
  assertEquals(clientAddress("198.51.100.1", "203.0.113.9", none), "198.51.100.1");
  assertEquals(clientAddress("198.51.100.1", "203.0.113.9", proxies), "198.51.100.1");
  // A trusted peer: the address it received the request from.
  assertEquals(clientAddress("10.0.0.2", "203.0.113.9", proxies), "203.0.113.9");
  assertEquals(clientAddress("10.0.0.2", "1.1.1.1, 203.0.113.9", proxies), "203.0.113.9");
  assertEquals(
    clientAddress("10.0.0.2", "1.1.1.1, 203.0.113.9, 192.0.2.1", proxies),
    "203.0.113.9",
  );
  assertEquals(clientAddress("10.0.0.2", "203.0.113.9:5555 , 10.9.9.9", proxies), "203.0.113.9");
  // Only proxies on the way: the left-most; no header: the peer itself.
  assertEquals(clientAddress("10.0.0.2", "10.1.1.1, 10.2.2.2", proxies), "10.1.1.1");
  assertEquals(clientAddress("10.0.0.2", undefined, proxies), "10.0.0.2");
  // Something that is not an address where the client should be: the last address seen.
  assertEquals(clientAddress("10.0.0.2", "203.0.113.9, unknown", proxies), "10.0.0.2");
  assertEquals(clientAddress("10.0.0.2", "junk, 10.3.3.3", proxies), "10.3.3.3");
  assertEquals(clientAddress("::ffff:10.0.0.2", "2001:db8::5", proxies), "2001:db8:0:0::/64");
  assertEquals(clientAddress(undefined, "203.0.113.9", proxies), UNKNOWN_ADDRESS);
});
