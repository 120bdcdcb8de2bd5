// The signature Plivo puts on its webhooks (X-Plivo-Signature-V3), checked with the account's auth
// token (../signatures.ts: why written here rather than taken from Plivo's SDK).
import type { Context } from "hono";
import type { ApiDeps } from "../../context.ts";
import { badSignature, notConfigured, signedForm } from "../admit.ts";
import { hmacBase64, sameSecret } from "../signatures.ts";

/**
 * Plivo's X-Plivo-Signature-V3 ("Signature validation V3",
 * https://www.plivo.com/docs/voice/concepts/signature-validation, as its SDKs compute it, e.g.
 * plivo-node lib/utils/v3Security.js): base64 HMAC-SHA256, keyed with the auth token, of
 * `base.nonce`, where for a POST the base is the URL without its query, then `?` and the URL's
 * query parameters sorted `k=v` joined by `&` (a `.` after them when there are POST parameters
 * too), then the POST parameters sorted by name, each name then its value, with no separators;
 * for a GET, the URL with its query sorted. The header may hold several signatures, comma
 * separated (one per active auth token): any may match.
 */
export function plivoSignatureV3(
  authToken: string,
  method: "GET" | "POST",
  url: string,
  params: [string, string][],
  nonce: string,
): Promise<string> {
  const u = new URL(url);
  const byName = (a: [string, string], b: [string, string]) =>
    a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0;
  const query = [...u.searchParams.entries()].sort(byName).map(([k, v]) => `${k}=${v}`).join("&");
  let base = `${u.protocol}//${u.host}${u.pathname}`;
  const post = method === "POST" ? [...params].sort(byName) : [];
  if (query.length > 0 || post.length > 0) base += `?${query}`;
  if (query.length > 0 && post.length > 0) base += ".";
  base += post.map(([k, v]) => k + v).join("");
  return hmacBase64("SHA-256", authToken, `${base}.${nonce}`);
}

/**
 * A Plivo webhook's form, once its X-Plivo-Signature-V3 verifies against PLIVO_AUTH_TOKEN (the
 * answer URL's and the transfer XML's check): the form, the nonce and Plivo's settings.
 */
export async function verifiedPlivoForm(c: Context, deps: ApiDeps) {
  const plivo = deps.telephony?.plivo;
  if (!plivo?.authToken) throw notConfigured("Plivo", "PLIVO_AUTH_TOKEN");
  const { params, url } = await signedForm(c, deps);
  const nonce = c.req.header("x-plivo-signature-v3-nonce") ?? "";
  const expected = await plivoSignatureV3(plivo.authToken, "POST", url, params, nonce);
  const sent = (c.req.header("x-plivo-signature-v3") ?? "").split(",").map((s) => s.trim());
  if (!nonce || !sent.some((s) => sameSecret(s, expected))) throw badSignature("Plivo");
  return { plivo: { ...plivo, authToken: plivo.authToken }, params, nonce };
}
