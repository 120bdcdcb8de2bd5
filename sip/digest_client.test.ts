// The digest client against the RFCs' worked examples: RFC 2617 section 3.5 (MD5, qop=auth) and
// RFC 7616 section 3.9.1 (the same request in MD5 and SHA-256).
import { assert, assertEquals } from "../tests/helpers/assert.ts";
import {
  chooseChallenge,
  digestAuthorization,
  digestResponse,
  parseChallenge,
} from "./digest_client.ts";

Deno.test("RFC 2617 section 3.5's example gives its response", () => {
  const challenge = parseChallenge(
    'Digest realm="testrealm@host.com", qop="auth,auth-int", ' +
      'nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41"',
  )!;
  assertEquals(challenge.algorithm, "MD5");
  assertEquals(challenge.qop, "auth");
  const input = {
    challenge,
    username: "Mufasa",
    password: "Circle Of Life",
    method: "GET",
    uri: "/dir/index.html",
    cnonce: "0a4f113b",
    nc: 1,
  };
  assertEquals(digestResponse(input), "6629fae49393a05397450978507c4ef1");
  const header = digestAuthorization(input);
  assert(header.includes('response="6629fae49393a05397450978507c4ef1"'), header);
  assert(header.includes("nc=00000001") && header.includes('cnonce="0a4f113b"'), header);
  assert(header.includes('opaque="5ccc069c403ebaf9f0171e9517f40e41"'), header);
});

Deno.test("RFC 7616 section 3.9.1's example gives its MD5 and SHA-256 responses", () => {
  const common = 'realm="http-auth@example.org", qop="auth, auth-int", ' +
    'nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", ' +
    'opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"';
  const md5 = `Digest ${common}, algorithm=MD5`;
  const sha = `Digest ${common}, algorithm=SHA-256`;
  const input = {
    username: "Mufasa",
    password: "Circle of Life",
    method: "GET",
    uri: "/dir/index.html",
    cnonce: "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ",
    nc: 1,
  };
  assertEquals(
    digestResponse({ ...input, challenge: parseChallenge(md5)! }),
    "8ca523f5e9506fed4657c9700eebdbec",
  );
  assertEquals(
    digestResponse({ ...input, challenge: parseChallenge(sha)! }),
    "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1",
  );
  // Offered both (as RFC 7616's server does), the client takes SHA-256.
  assertEquals(chooseChallenge([md5, sha])?.algorithm, "SHA-256");
});

Deno.test("challenges the client cannot answer are not taken", () => {
  assertEquals(parseChallenge('Basic realm="x"'), undefined);
  assertEquals(parseChallenge('Digest realm="x", nonce="n", algorithm=SHA-512-256'), undefined);
  assertEquals(parseChallenge('Digest realm="x", nonce="n", qop="auth-int"'), undefined);
  assertEquals(parseChallenge('Digest realm="x"'), undefined);
  // RFC 2069 style (no qop): the response is H(HA1:nonce:HA2) and no nc/cnonce are sent.
  const old = parseChallenge('Digest realm="x", nonce="n"')!;
  const header = digestAuthorization({
    challenge: old,
    username: "u",
    password: "p",
    method: "INVITE",
    uri: "sip:+15550100@example.com",
  });
  assert(!header.includes("qop") && !header.includes("cnonce"), header);
});
