// What a brain may name as a transfer target on a provider's call: a phone number in E.164 or a
// SIP URI. Checked before it is written into the provider's instructions, so a target can never
// carry markup of its own.

export type TransferTarget = { kind: "number"; value: string } | { kind: "sip"; value: string };

const E164 = /^\+[1-9][0-9]{6,14}$/;
const SIP_URI = /^sips?:[A-Za-z0-9._~+\-]+@[A-Za-z0-9.\-]+(:[0-9]{1,5})?(;[A-Za-z0-9=._\-]+)*$/;

export function transferTarget(target: string): TransferTarget | undefined {
  // tel:+E.164 (RFC 3966), as a brain may write a number, is the number.
  const t = target.trim().replace(/^tel:/i, "");
  if (E164.test(t)) return { kind: "number", value: t };
  if (SIP_URI.test(t)) return { kind: "sip", value: t };
  return undefined;
}
