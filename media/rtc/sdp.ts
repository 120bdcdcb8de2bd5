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
