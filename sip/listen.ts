// The SIP transport a server opens (RFC 3261 section 18): UDP and TCP on one port number, as
// trunks expect, and where a response over UDP goes. The worker's UAS and the control plane's
// redirect server both listen this way.
import { parseVia } from "./headers.ts";
import { headerList, type SipRequest } from "./message.ts";
import {
  DEFAULT_STREAM_BOUNDS,
  listenTcp,
  type StreamBounds,
  type StreamHandlers,
  type StreamListener,
} from "./tcp.ts";
import { bindUdp, type DatagramSocket, type Peer } from "./udp.ts";

/** Binds UDP and TCP on one port number (any free one when `port` is 0). */
export async function listenUdpAndTcp(
  host: string,
  port: number,
  receive: (bytes: Uint8Array, from: Peer) => void,
  stream: StreamHandlers,
  bounds: StreamBounds = DEFAULT_STREAM_BOUNDS,
): Promise<{ udp: DatagramSocket; tcp: StreamListener }> {
  for (let attempt = 0;; attempt++) {
    const udp = await bindUdp(host, port, receive);
    try {
      return { udp, tcp: listenTcp(host, udp.port, stream, bounds) };
    } catch (err) {
      await udp.close();
      // An ephemeral UDP port whose TCP twin is taken: try another.
      if (!(err instanceof Deno.errors.AddrInUse) || port || attempt >= 8) throw err;
    }
  }
}

/** Section 18.2.2: a response goes to the request's source address, at the Via's port unless rport. */
export function responsePeer(request: SipRequest, from: Peer): Peer {
  const via = parseVia(headerList(request, "Via")[0] ?? "");
  // A Via we cannot read (RFC 4475 badvers' SIP/7.0) names no port: the source's is the best guess.
  if (!via) return from;
  return { address: from.address, port: via.params.has("rport") ? from.port : via.port ?? 5060 };
}
