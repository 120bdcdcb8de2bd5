/**
 * werift configuration for the worker's peers (and the test caller): IPv4 only, ICE sockets
 * bound to and advertised on the configured addresses, Opus 48 kHz/2 as PT 111 and VP8 as
 * PT 96 so the Pipecat client's two video m-lines are answered rather than rejected.
 */

import { networkInterfaces } from "node:os";
import { type RTCPeerConnectionConfig, RTCRtpCodecParameters } from "werift";

export const OPUS_PAYLOAD_TYPE = 111;
/** Chromium's payload type for audio RED (RFC 2198) over Opus. */
export const RED_PAYLOAD_TYPE = 63;
export const VP8_PAYLOAD_TYPE = 96;

/**
 * Opus format parameters both ends use: in-band FEC (the decoder can rebuild a lost frame from
 * the next packet) and 10 ms minimum packets, as browsers offer. werift answers with the offer's
 * own parameters for a matched codec, so these are what a werift caller offers.
 */
export const OPUS_FMTP = "minptime=10;useinbandfec=1";

export interface IceOptions {
  /** IPv4 addresses ICE binds and advertises (ICE_ADDRESSES), e.g. ["127.0.0.1"]. */
  iceAddresses: string[];
  /** Optional UDP port range [min, max] (min < max). */
  icePortRange?: [number, number];
  /**
   * Lists RED before Opus (the worker's answer): a browser sends what comes first, so it sends
   * each Opus frame again inside the next packet, and werift's sender does the same for the
   * bot's voice. Without it (the test caller's offer, like a browser's) Opus comes first.
   */
  preferRed?: boolean;
  /**
   * Gathers TCP candidates too (RFC 6544): passive ones listen for a caller whose network blocks
   * UDP. Its media then goes over TCP, still straight to the worker (never a relay).
   */
  iceTcp?: boolean;
}

function isLocalAddress(addr: string): boolean {
  if (addr === "127.0.0.1") return true;
  return Object.values(networkInterfaces()).some((list) => list?.some((i) => i.address === addr));
}

export function peerConfig(options: IceOptions): RTCPeerConnectionConfig {
  const addresses = options.iceAddresses;
  if (addresses.length === 0) throw new Error("iceAddresses must list at least one address");
  const bad = addresses.find((a) => !/^\d{1,3}(\.\d{1,3}){3}$/.test(a));
  if (bad) throw new Error(`iceAddresses: ${bad} is not an IPv4 address`);
  const allowed = new Set(addresses);
  // Bind to the address when it is this host's own (e.g. loopback); an advertised address that
  // is not local (1:1 NAT public IP) needs the socket on 0.0.0.0.
  const bind = addresses.length === 1 && isLocalAddress(addresses[0]) ? addresses[0] : undefined;
  return {
    iceUseIpv4: true,
    iceUseIpv6: false,
    iceUseTcp: options.iceTcp ?? false,
    iceInterfaceAddresses: bind ? { udp4: bind } : undefined,
    iceAdditionalHostAddresses: [...addresses],
    iceFilterCandidatePair: (pair) => allowed.has(pair.localCandidate.host),
    icePortRange: options.icePortRange,
    bundlePolicy: "max-bundle",
    // Same as aiortc/Pipecat: the client sizes its own messages from a=max-message-size.
    maxMessageSize: 65536,
    codecs: {
      audio: options.preferRed ? [red(), opus()] : [opus(), red()],
      video: [
        new RTCRtpCodecParameters({
          mimeType: "video/VP8",
          clockRate: 90000,
          payloadType: VP8_PAYLOAD_TYPE,
        }),
      ],
    },
  };
}

function opus(): RTCRtpCodecParameters {
  return new RTCRtpCodecParameters({
    mimeType: "audio/opus",
    clockRate: 48000,
    channels: 2,
    payloadType: OPUS_PAYLOAD_TYPE,
    parameters: OPUS_FMTP,
  });
}

/** RED carrying Opus frames (one redundant block per packet in werift's encoder). */
function red(): RTCRtpCodecParameters {
  return new RTCRtpCodecParameters({
    mimeType: "audio/red",
    clockRate: 48000,
    channels: 2,
    payloadType: RED_PAYLOAD_TYPE,
    parameters: `${OPUS_PAYLOAD_TYPE}/${OPUS_PAYLOAD_TYPE}`,
  });
}
