// Side-effect module, imported by peer.ts: two fixes to how werift 0.25.2 takes the ports of a
// call's ICE sockets, so that a worker holds one UDP port of RTC_PORTS per call and never dies of
// a port another socket took.
//
// 1. werift takes a UDP port of a range (its icePortRange) by binding a probe socket to each port
// in turn, closing the first that binds, and only then binding its real socket to that port, with
// no 'error' listener on it. In between, another socket can take the port: a call gathers on
// several addresses at once, each scanning from the range's first port, and calls arrive together.
// The real bind then fails with EADDRINUSE, emitted as an 'error' nobody listens to: an uncaught
// exception that ended the worker process and every call on it (CI: "Uncaught Error: bind
// EADDRINUSE 127.0.0.1:25492" in tests/a_calls_webrtc_ports_fall_in_rtc_ports.test.ts). A
// transport with a range now binds its real socket straight to a port, and tries the next one if
// the port is taken, as werift's own passive TCP candidates already do: the bind is the claim, so
// no other socket can come between. Ports are tried from a cursor the process shares, so a port a
// call has just let go is the last one the next call tries (a late packet from the last caller
// does not reach the next one's socket). A range with no free port rejects the transport's init,
// which werift takes as no candidate from that address.
//
// 2. werift gathers on every address of the host as well as on the ones it is told to add
// (iceAdditionalHostAddresses), one UDP socket and one TCP listener each. peerConfig adds the
// worker's ICE_ADDRESSES, and the worker advertises and pairs only those, so the others' sockets
// were never used: yet each held a port of RTC_PORTS, two or three per call where one was meant
// (a range sized to WORKER_CAPACITY filled at half of it). A connection told its addresses now
// gathers on those alone.
//
// Patched, not forked: two methods are wrapped, and a werift upgrade reruns their tests, which
// fail if a member moves.
import type { Socket } from "node:dgram";
import { Connection, UdpTransport } from "werift";

/** Bind errors that mean "this port, not the socket": try the next port. */
const PORT_TAKEN = new Set(["EADDRINUSE", "EACCES"]);

let cursor = 0;

/**
 * Binds `socket` to a free port of [first, last] on `address` (undefined: every address) and
 * returns the port. Rejects, leaving the socket unbound, when every port of the range is taken.
 */
export async function bindInRange(
  socket: Socket,
  address: string | undefined,
  [first, last]: readonly [number, number],
): Promise<number> {
  const span = last - first + 1;
  const start = cursor % span;
  for (let i = 0; i < span; i++) {
    const port = first + (start + i) % span;
    const err = await bind(socket, port, address);
    if (!err) {
      cursor = start + i + 1;
      return port;
    }
    if (!PORT_TAKEN.has(err.code ?? "")) throw err;
  }
  throw new Error(`no free UDP port in ${first}-${last}`);
}

function bind(socket: Socket, port: number, address: string | undefined) {
  return new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    const done = (err?: NodeJS.ErrnoException) => {
      socket.off("error", done);
      socket.off("listening", listening);
      resolve(err);
    };
    const listening = () => done();
    socket.once("error", done);
    socket.once("listening", listening);
    try {
      socket.bind({ port, address });
    } catch (e) {
      done(e as NodeJS.ErrnoException);
    }
  });
}

interface RangedTransport {
  socket: Socket;
  socketType: "udp4" | "udp6";
  options: {
    port?: number;
    portRange?: [number, number];
    interfaceAddresses?: Partial<Record<"udp4" | "udp6", string>>;
  };
}

// deno-lint-ignore no-explicit-any
const proto = UdpTransport.prototype as any;
const init: (this: RangedTransport) => Promise<void> = proto.init;
proto.init = async function (this: RangedTransport): Promise<void> {
  const range = this.options?.portRange;
  if (!range || this.options.port) return await init.call(this);
  await bindInRange(this.socket, this.options.interfaceAddresses?.[this.socketType], range);
};

interface GatheringConnection {
  options?: { additionalHostAddresses?: string[] };
}

// deno-lint-ignore no-explicit-any
const connection = Connection.prototype as any;
const getCandidatePromises: (
  this: GatheringConnection,
  addresses: string[],
  ...rest: unknown[]
) => unknown = connection.getCandidatePromises;
connection.getCandidatePromises = function (
  this: GatheringConnection,
  addresses: string[],
  ...rest: unknown[]
) {
  const own = this.options?.additionalHostAddresses;
  const kept = own?.length ? addresses.filter((a) => own.includes(a)) : addresses;
  return getCandidatePromises.call(this, kept, ...rest);
};
