// Header names and the structured values a UAS reads: Via (section 20.42), name-addr with tags
// (From/To/Contact, section 20.10) and the user part of a SIP URI (the dialled number).

/** Compact forms (section 7.3.3 and the RFCs that added letters) and the canonical spellings. */
const COMPACT: Record<string, string> = {
  i: "Call-ID",
  m: "Contact",
  e: "Content-Encoding",
  l: "Content-Length",
  c: "Content-Type",
  f: "From",
  s: "Subject",
  k: "Supported",
  t: "To",
  v: "Via",
  o: "Event",
  r: "Refer-To",
  b: "Referred-By",
  u: "Allow-Events",
  x: "Session-Expires",
};
const CANONICAL = new Map(
  [
    "Via",
    "From",
    "To",
    "Call-ID",
    "CSeq",
    "Contact",
    "Content-Length",
    "Content-Type",
    "Content-Encoding",
    "Max-Forwards",
    "Allow",
    "Supported",
    "Require",
    "Unsupported",
    "Accept",
    "Record-Route",
    "Route",
    "User-Agent",
    "Server",
    "Subject",
    "Event",
    "Refer-To",
    "Referred-By",
    "Allow-Events",
    "Session-Expires",
    "Min-SE",
    "Retry-After",
    "Warning",
    "WWW-Authenticate",
    "Authorization",
    "Proxy-Authenticate",
    "Proxy-Authorization",
    "Reason",
    "Date",
  ].map((n) => [n.toLowerCase(), n]),
);

/** Header names are case-insensitive (section 7.3.1): one spelling inside, whatever came in. */
export function canonicalName(name: string): string {
  const lower = name.toLowerCase();
  return COMPACT[lower] ?? CANONICAL.get(lower) ?? lower;
}

/** Splits a comma-separated header value, leaving commas inside quotes and <...> alone. */
export function splitList(value: string): string[] {
  const out: string[] = [];
  let quoted = false, angled = false, from = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (quoted) {
      if (c === "\\") i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === "<") angled = true;
    else if (c === ">") angled = false;
    else if (c === "," && !angled) {
      out.push(value.slice(from, i).trim());
      from = i + 1;
    }
  }
  out.push(value.slice(from).trim());
  return out.filter((v) => v !== "");
}

/** `;name=value;flag` parameters, names lowercased; a flag's value is "". */
export function parseParams(text: string): Map<string, string> {
  const params = new Map<string, string>();
  for (const part of text.split(";")) {
    const p = part.trim();
    if (p === "") continue;
    const eq = p.indexOf("=");
    if (eq < 0) params.set(p.toLowerCase(), "");
    else {params.set(
        p.slice(0, eq).trim().toLowerCase(),
        p.slice(eq + 1).trim().replace(/^"|"$/g, ""),
      );}
  }
  return params;
}

const DISPLAY_TOKENS = /^[A-Za-z0-9\-.!%*_+`'~\s]*$/;
const URI = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/**
 * What is wrong with a From, To or Contact value (section 20.10 and 25.1), or undefined: an
 * unterminated quoted display name, an unquoted one that is not tokens, spaces inside <...>, or a
 * bare URI holding the "," or "?" that section 20.10 says need angle brackets (RFC 4475 quotbal,
 * baddn, badaspec, regbadct).
 */
export function addressFault(value: string): string | undefined {
  let i = 0;
  while (value[i] === " " || value[i] === "\t") i++;
  let lt: number;
  if (value[i] === '"') {
    for (i++; i < value.length && value[i] !== '"'; i++) if (value[i] === "\\") i++;
    if (i >= value.length) return "unterminated quoted display name";
    lt = value.indexOf("<", i);
    if (lt < 0 || value.slice(i + 1, lt).trim() !== "") return "quoted display name without <URI>";
  } else {
    lt = value.indexOf("<");
    if (lt >= 0 && !DISPLAY_TOKENS.test(value.slice(0, lt))) return "display name is not tokens";
  }
  if (lt < 0) {
    const uri = value.split(";")[0].trim();
    if (!URI.test(uri)) return "not a URI";
    return /[,?\s]/.test(uri) ? "a URI with , ? or spaces outside <...>" : undefined;
  }
  const gt = value.indexOf(">", lt);
  if (gt < 0) return "< without >";
  const uri = value.slice(lt + 1, gt);
  if (/\s/.test(uri)) return "spaces inside <...>";
  return URI.test(uri) ? undefined : "not a URI inside <...>";
}

export interface Via {
  transport: string;
  host: string;
  port?: number;
  params: Map<string, string>;
}

/** `SIP/2.0/UDP host[:port];params`; undefined when it is not one. */
export function parseVia(value: string): Via | undefined {
  const m = /^SIP\s*\/\s*2\.0\s*\/\s*([A-Za-z]+)\s+(\[[^\]]+\]|[^;:\s]+)(?:\s*:\s*(\d+))?\s*(.*)$/
    .exec(
      value,
    );
  if (!m) return undefined;
  return {
    transport: m[1].toUpperCase(),
    host: m[2],
    port: m[3] ? Number(m[3]) : undefined,
    params: parseParams(m[4]),
  };
}

export interface NameAddr {
  uri: string;
  params: Map<string, string>;
}

/** `"Name" <uri>;tag=x` or `uri;tag=x` (without brackets, parameters belong to the header). */
export function parseNameAddr(value: string): NameAddr | undefined {
  const open = value.indexOf("<");
  if (open >= 0) {
    const close = value.indexOf(">", open);
    if (close < 0) return undefined;
    return {
      uri: value.slice(open + 1, close).trim(),
      params: parseParams(value.slice(close + 1)),
    };
  }
  const semi = value.indexOf(";");
  const uri = (semi < 0 ? value : value.slice(0, semi)).trim();
  if (uri === "") return undefined;
  return { uri, params: parseParams(semi < 0 ? "" : value.slice(semi)) };
}

/** The `tag` parameter of a From or To value, or undefined. */
export function tagOf(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  return parseNameAddr(value)?.params.get("tag") || undefined;
}

/**
 * The user part of a sip:/sips:/tel: URI, percent-decoded, with visual separators of a phone
 * number (RFC 3966: "-", ".", "(", ")") dropped: what the caller dialled.
 */
export function dialledUser(uri: string): string | undefined {
  // A SIP user may hold ";" and "?" (user-unreserved, RFC 4475 intmeth and semiuri); a number's
  // own parameters (";npdi", ";phone-context=...", RFC 3966) are not what was dialled.
  const m = /^(?:sips?:([^@]+)@|tel:([^;?]+))/i.exec(uri);
  let user = m?.[1] ?? m?.[2];
  if (user === undefined) return undefined;
  if (/^\+?[\d\-.()]+;/.test(user)) user = user.slice(0, user.indexOf(";"));
  let decoded: string;
  try {
    decoded = decodeURIComponent(user.split(":")[0]);
  } catch {
    return undefined;
  }
  return /^\+?[\d\-.()]+$/.test(decoded) ? decoded.replace(/[\-.()]/g, "") : decoded;
}
