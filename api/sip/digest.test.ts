// Digest computation against the RFCs' own examples, and the stateless nonce's three states.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import {
  challenges,
  digestCredentials,
  DigestNonces,
  parseAuthorization,
  responseMatches,
} from "./digest.ts";

Deno.test("RFC 2617 section 3.5's MD5 example verifies, and a changed field does not", () => {
  const creds = digestCredentials("Mufasa", "testrealm@host.com", "Circle Of Life");
  const d = parseAuthorization(
    `Digest username="Mufasa", realm="testrealm@host.com", ` +
      `nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", uri="/dir/index.html", qop=auth, ` +
      `nc=00000001, cnonce="0a4f113b", response="6629fae49393a05397450978507c4ef1", ` +
      `opaque="5ccc069c403ebaf9f0171e9517f40e41"`,
  )!;
  assert(d, "did not parse");
  assertEquals(d.algorithm, "MD5");
  assert(responseMatches(d, "GET", creds));
  assert(!responseMatches(d, "INVITE", creds), "the method is part of the hash");
  assert(!responseMatches({ ...d, nc: "00000002" }, "GET", creds));
  assert(!responseMatches(d, "GET", digestCredentials("Mufasa", "testrealm@host.com", "x")));
});

Deno.test("RFC 7616 section 3.9.1's SHA-256 example verifies", () => {
  const creds = digestCredentials("Mufasa", "http-auth@example.org", "Circle of Life");
  const d = parseAuthorization(
    `Digest username="Mufasa", realm="http-auth@example.org", uri="/dir/index.html", ` +
      `algorithm=SHA-256, nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", nc=00000001, ` +
      `cnonce="f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ", qop=auth, ` +
      `response="753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1", ` +
      `opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"`,
  )!;
  assert(responseMatches(d, "GET", creds));
  assert(!responseMatches({ ...d, algorithm: "MD5" }, "GET", creds));
  assert(!responseMatches({ ...d, algorithm: "SHA-256-sess" }, "GET", creds), "-sess refused");
});

Deno.test("the stored credentials are hashes: the password appears nowhere in them", () => {
  const creds = digestCredentials("trunk", "voice", "a password of mine");
  assert(!JSON.stringify(creds).includes("a password of mine"));
  assertEquals([creds.ha1_md5.length, creds.ha1_sha256.length], [32, 64]);
});

Deno.test("a nonce is fresh until it expires, then stale; a forged or foreign one is invalid", () => {
  let now = 1_000_000_000_000;
  const nonces = new DigestNonces("secret-a", 300, () => now);
  const nonce = nonces.issue();
  assertEquals(nonces.check(nonce), "fresh");
  now += 299_000;
  assertEquals(nonces.check(nonce), "fresh");
  now += 2_000;
  assertEquals(nonces.check(nonce), "stale");
  assertEquals(new DigestNonces("secret-b", 300, () => now).check(nonce), "invalid");
  // A later expiry with the old MAC: the MAC covers the expiry.
  const [expiry, random, mac] = nonce.split(".");
  const later = (parseInt(expiry, 36) + 10_000).toString(36);
  assertEquals(nonces.check(`${later}.${random}.${mac}`), "invalid");
  assertEquals(nonces.check("not a nonce"), "invalid");
});

Deno.test("a nonce issued to one address is invalid from another", () => {
  const nonces = new DigestNonces("secret-a", 300);
  const nonce = nonces.issue("192.0.2.10");
  assertEquals(nonces.check(nonce, "192.0.2.10"), "fresh");
  assertEquals(nonces.check(nonce, "192.0.2.11"), "invalid");
  assertEquals(nonces.check(nonce), "invalid");
});

Deno.test("challenges name the realm and nonce, MD5 first, stale=true when asked", () => {
  const [md5, sha] = challenges("voice", "n1", true);
  assert(md5.startsWith('Digest realm="voice", nonce="n1", algorithm=MD5, qop="auth"'));
  assert(sha.includes("algorithm=SHA-256") && sha.endsWith("stale=true"));
  assert(!challenges("voice", "n1")[0].includes("stale"));
});
