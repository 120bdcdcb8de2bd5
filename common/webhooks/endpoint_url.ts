// Which URLs an endpoint may have: https anywhere; plain http only to this machine (127.0.0.1,
// ::1, localhost), for development. Returns the refusal's text, or undefined when acceptable.

const LOCAL_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);

export function endpointUrlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `${JSON.stringify(text)} is not a URL.`;
  }
  if (url.username || url.password) return "A webhook URL must not carry credentials.";
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:" && LOCAL_HOSTS.has(url.hostname)) return undefined;
  if (url.protocol === "http:") {
    return "A webhook URL must be https:// (plain http:// is allowed only to 127.0.0.1, " +
      "[::1] or localhost, for development): events carry transcripts.";
  }
  return `A webhook URL must be https://, not ${url.protocol}//.`;
}
