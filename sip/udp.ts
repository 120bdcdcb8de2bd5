// The UDP side of the SIP transport (RFC 3261 section 18): one socket on a port, a datagram is one
// message. node:dgram because Deno.listenDatagram still needs --unstable-net.
import dgram from "node:dgram";

export interface Peer {
  address: string;
  port: number;
}

export interface DatagramSocket {
  readonly port: number;
  send(bytes: Uint8Array, to: Peer): void;
  close(): Promise<void>;
}

/** Binds `host:port` (0 for any free port) and hands each datagram to `receive`. */
export function bindUdp(
  host: string,
  port: number,
  receive: (bytes: Uint8Array, from: Peer) => void,
): Promise<DatagramSocket> {
  const socket = dgram.createSocket(host.includes(":") ? "udp6" : "udp4");
  socket.on(
    "message",
    (msg, rinfo) => receive(new Uint8Array(msg), { address: rinfo.address, port: rinfo.port }),
  );
  return new Promise((resolve, reject) => {
    // A port already taken fails the bind: the socket is closed, not leaked, and the caller told.
    socket.once("error", (err) => {
      try {
        socket.close();
      } catch {
        // Never bound: nothing to close.
      }
      reject(err);
    });
    socket.bind(port, host, () => {
      socket.removeAllListeners("error");
      // A send to a peer gone away surfaces here as ICMP; it must not crash the process.
      socket.on("error", () => {});
      resolve({
        port: socket.address().port,
        send: (bytes, to) => socket.send(bytes, to.port, to.address),
        close: () => new Promise<void>((done) => socket.close(() => done())),
      });
    });
  });
}
