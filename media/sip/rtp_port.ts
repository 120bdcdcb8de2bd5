// The RTP port a call's SDP answer names. Until the call pipeline takes phone audio (issue 27,
// docs/sip.md) it only counts what arrives, so the port in the answer is a real open one.
import { bindUdp, type DatagramSocket } from "../../sip/udp.ts";

export interface RtpPort {
  readonly port: number;
  /** RTP packets received so far. */
  readonly packets: number;
  close(): Promise<void>;
}

export async function openRtpPort(host: string): Promise<RtpPort> {
  let packets = 0;
  const socket: DatagramSocket = await bindUdp(host, 0, () => void packets++);
  return {
    port: socket.port,
    get packets() {
      return packets;
    },
    close: () => socket.close(),
  };
}
