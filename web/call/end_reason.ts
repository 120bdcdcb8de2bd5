// Why a call ended, in words for the demo page. The service's reasons are the session's
// end_reason (the console shows the same codes); an unknown one is shown as its code.
import type { CallEnd } from "./call.ts";

const REASONS: Record<string, string> = {
  brain_ended: "the brain ended the call",
  disconnect_bot: "the page asked the bot to leave",
  hangup: "you hung up",
  no_ping: "the service heard nothing from this page for too long",
  worker_shutdown: "the media worker was shut down",
  worker_restarted: "the media worker restarted",
  worker_lost: "the media worker was lost",
  connect_timeout: "the connection could not be set up in time",
  ice_failed: "the network path to the worker failed",
  brain_unreachable: "the brain could not be reached",
  brain_disconnected: "the brain closed its connection",
  engine_unavailable: "no speech engine was available",
  recognition_failed: "speech recognition failed",
  synthesis_failed: "speech synthesis failed",
};

/** "Call ended: the brain ended the call (brain_ended)." and the like. */
export function describeEnd(end: CallEnd | undefined): string {
  if (!end) return "";
  if (end.status === "disconnected") {
    return "The connection closed before the service said why the call ended.";
  }
  const verb = end.status === "failed" ? "failed" : "ended";
  const why = REASONS[end.reason];
  return why ? `Call ${verb}: ${why} (${end.reason}).` : `Call ${verb} (${end.reason}).`;
}
