/**
 * SDP text helpers. werift advertises every host address it finds (and binds them all to the
 * configured interface), so the worker keeps only the candidates of its configured addresses.
 */

/** Connection address of an `a=candidate:` / `candidate:` line, or undefined if unparsable. */
export function candidateAddress(line: string): string | undefined {
  const body = line.replace(/^a=/, "").trim();
  if (!body.startsWith("candidate:")) return undefined;
  // candidate:<foundation> <component> <transport> <priority> <address> <port> typ <type> ...
  const parts = body.split(/\s+/);
  return parts.length >= 8 ? parts[4] : undefined;
}

/** Removes `a=candidate` lines whose address is not in `allowed`. Other lines are untouched. */
export function keepCandidates(sdp: string, allowed: ReadonlySet<string>): string {
  const eol = sdp.includes("\r\n") ? "\r\n" : "\n";
  return sdp
    .split(eol)
    .filter((line) => {
      if (!line.startsWith("a=candidate:")) return true;
      const addr = candidateAddress(line);
      return addr !== undefined && allowed.has(addr);
    })
    .join(eol);
}

/**
 * Removes every `a=candidate` and `a=end-of-candidates` line: an offer like a browser's, whose
 * candidates follow by trickle. (Leaving end-of-candidates would tell the answerer there are none.)
 */
export function stripCandidates(sdp: string): string {
  const eol = sdp.includes("\r\n") ? "\r\n" : "\n";
  return keepCandidates(sdp, new Set()).split(eol).filter((l) => l !== "a=end-of-candidates")
    .join(eol);
}

/** Removes UDP `a=candidate` lines: what a caller behind a UDP-blocking firewall can use is left. */
export function withoutUdpCandidates(sdp: string): string {
  const eol = sdp.includes("\r\n") ? "\r\n" : "\n";
  return sdp.split(eol).filter((line) =>
    !(line.startsWith("a=candidate:") && line.split(/\s+/)[2]?.toLowerCase() === "udp")
  ).join(eol);
}

/** The `a=candidate:` lines of an SDP, without the `a=` prefix. */
export function listCandidates(sdp: string): string[] {
  return sdp.split(/\r?\n/).filter((l) => l.startsWith("a=candidate:")).map((l) => l.slice(2));
}

/** Media sections as `{kind, port, direction, mid}` (for checks and logs). */
export interface MediaSection {
  kind: string;
  port: number;
  mid?: string;
  direction?: string;
  rtpmap: string[];
}

export function mediaSections(sdp: string): MediaSection[] {
  const out: MediaSection[] = [];
  for (const line of sdp.split(/\r?\n/)) {
    const m = /^m=(\w+) (\d+) /.exec(line);
    if (m) {
      out.push({ kind: m[1], port: Number(m[2]), rtpmap: [] });
      continue;
    }
    const cur = out[out.length - 1];
    if (!cur) continue;
    if (line.startsWith("a=mid:")) cur.mid = line.slice(6);
    else if (/^a=(sendrecv|sendonly|recvonly|inactive)$/.test(line)) cur.direction = line.slice(2);
    else if (line.startsWith("a=rtpmap:")) cur.rtpmap.push(line.slice(9));
  }
  return out;
}

/** Hash functions werift checks a peer's certificate with, and their length in bytes. */
const FINGERPRINT_BYTES: Record<string, number> = {
  "sha-1": 20,
  "sha-224": 28,
  "sha-256": 32,
  "sha-384": 48,
  "sha-512": 64,
};

/** The hash an `a=fingerprint:` value names, lower-cased. */
const hashOf = (value: string) => value.trim().split(/\s+/)[0].toLowerCase();

/** Whether an `a=fingerprint:` value of a hash werift knows is written out in full. */
function wellFormedFingerprint(value: string): boolean {
  const [, hex, ...rest] = value.trim().split(/\s+/);
  const bytes = FINGERPRINT_BYTES[hashOf(value)];
  return rest.length === 0 &&
    new RegExp(`^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){${bytes - 1}}$`).test(hex ?? "");
}

interface Section {
  /** `m=` kind, port, protocol and formats. */
  kind: string;
  port: number;
  formats: string[];
  /** `a=` lines, without the `a=` prefix. */
  attributes: string[];
}

/** The session part and the media sections of an SDP, attribute lines kept whole. */
function parseSections(sdp: string): { session: string[]; sections: Section[] } {
  const session: string[] = [];
  const sections: Section[] = [];
  for (const line of sdp.split(/\r?\n/)) {
    const m = /^m=(\S+) (\d+)(?:\/\d+)? \S+(.*)$/.exec(line);
    if (m) {
      sections.push({
        kind: m[1],
        port: Number(m[2]),
        formats: m[3].trim().split(/\s+/),
        attributes: [],
      });
    } else if (line.startsWith("a=")) {
      (sections.at(-1)?.attributes ?? session).push(line.slice(2));
    }
  }
  return { session, sections };
}

/** Values of attribute `name` (`a=name:value`) in a list of attribute lines. */
function values(attributes: string[], name: string): string[] {
  const prefix = `${name}:`;
  return attributes.filter((a) => a.startsWith(prefix)).map((a) => a.slice(prefix.length));
}

/**
 * What a call needs that this offer lacks, named, or undefined when it has all of it. werift
 * accepts an offer without these and the call then fails unseen (connect_timeout 20 s later,
 * the token spent); every browser offer has them (JSEP, RFC 8829 §5.2.1): an audio section with
 * Opus (the call's voice, RFC 7874), the data channel (RTVI), and in each section in use the
 * DTLS fingerprint (RFC 8122; one at session level counts for every section without its own)
 * and the ICE credentials (RFC 8839; likewise). A section with port 0 is not in use.
 */
export function missingForACall(sdp: string): string | undefined {
  const { session, sections } = parseSections(sdp);
  const audio = sections.find((s) => s.kind === "audio" && s.port !== 0);
  if (!audio) return "the offer has no audio m-line";
  if (!values(audio.attributes, "rtpmap").some((r) => /^\d+ opus\/48000(\/2)?$/i.test(r.trim()))) {
    return "the offer's audio section does not offer Opus (a=rtpmap:<pt> opus/48000/2)";
  }
  const dataChannel = sections.some((s) =>
    s.kind === "application" && s.port !== 0 && s.formats.includes("webrtc-datachannel")
  );
  if (!dataChannel) {
    return "the offer has no data channel (m=application ... webrtc-datachannel), which the call's RTVI messages need";
  }
  for (const s of sections) {
    if (s.port === 0) continue;
    const name = `media section ${values(s.attributes, "mid")[0] ?? "?"} (${s.kind})`;
    const own = (attr: string) => {
      const here = values(s.attributes, attr);
      return here.length ? here : values(session, attr);
    };
    const fingerprints = own("fingerprint");
    if (fingerprints.length === 0) {
      return `${name} has no a=fingerprint (DTLS needs one, RFC 8122), nor has the session`;
    }
    // werift checks the certificate against the strongest SHA hash offered, and ignores others.
    const known = fingerprints.filter((f) => hashOf(f) in FINGERPRINT_BYTES);
    if (known.length === 0 || !known.every(wellFormedFingerprint)) {
      return `${name} has no usable a=fingerprint (a SHA hash, sha-1 to sha-512, written out in full)`;
    }
    for (const attr of ["ice-ufrag", "ice-pwd"]) {
      if (!own(attr).some((v) => v.trim() !== "")) {
        return `${name} has no a=${attr} (ICE needs it, RFC 8839), nor has the session`;
      }
    }
  }
  return undefined;
}
