// What the worker asks of a carrier whose calls come over its media WebSocket: one descriptor per
// carrier (NAME/carrier.ts), found by name in registry.ts. Shared code (the stream route and its
// upgrade guard in media/signaling/, stream_line.ts) asks the descriptor and never compares a
// carrier's name, as Pipecat's serializers keep each provider's wire in its own module.
import type { StreamCarrier } from "../../../common/carrier.ts";
import type { TelephonySettings } from "../../../common/telephony_settings.ts";
import type { StreamDialect } from "./dialect.ts";
import type { CallControl } from "./stream_line.ts";

export interface LineCarrier {
  /** Its name: the stream route's `/telephony/{name}/...` and the session's `phone_carrier`. */
  readonly name: StreamCarrier;
  /** Its stream's messages, audio and framing. */
  readonly dialect: StreamDialect;
  /**
   * Where its stream brings the session token: the stream URL's query (checked before the
   * upgrade), or the start message's parameters, for a carrier whose stream URL takes no query
   * (the upgrade then needs a session waiting on this node: media/signaling/stream_guard.ts).
   */
  readonly sessionToken: "url" | "start";
  /** Hang-up and transfer through its REST API, when the settings hold its credentials. */
  control(settings: TelephonySettings, sessionId: string): CallControl | undefined;
}
