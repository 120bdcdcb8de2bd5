// A new session's token for the node its reservation chose: every way a session is made (connect,
// a phone call's admission, calls.dial) signs the same claims from the same row.
import type { TokenSigner } from "../common/token.ts";
import type { NewSession } from "../db/sessions.ts";

/** Signs `session`'s token for `nodeId`; `now` is the clock reading its expiry came from. */
export async function sessionToken(
  signer: TokenSigner,
  session: NewSession,
  nodeId: string,
  now: number,
): Promise<string> {
  const { token } = await signer.mint(
    {
      sid: session.session_id,
      aud: nodeId,
      sub: session.agent_id,
      ten: session.workspace_id,
      input: session.agent_input,
    },
    { jti: session.token_id, expiresAt: session.token_expires_at },
    now,
  );
  return token;
}
