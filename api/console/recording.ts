// The recording player's source: a session's recording file, but only a file:// URL that
// resolves (symlinks followed) to a regular file inside the recordings folder. Anything else is
// refused the same way as a missing file, so the route cannot be used to read other files.
import { fileURLToPath } from "node:url";
import { sep as SEPARATOR } from "node:path";

/** The real path of the recording `url` names when it lies inside `dir`; else undefined. */
export async function resolveRecording(url: string, dir: string): Promise<string | undefined> {
  let path: string;
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== "file:" || (parsed.host && parsed.host !== "localhost")) {
      return undefined;
    }
    path = fileURLToPath(parsed);
  } catch {
    return undefined;
  }
  try {
    const [realDir, realFile] = await Promise.all([Deno.realPath(dir), Deno.realPath(path)]);
    if (!realFile.startsWith(realDir.endsWith(SEPARATOR) ? realDir : realDir + SEPARATOR)) {
      return undefined;
    }
    const info = await Deno.stat(realFile);
    return info.isFile ? realFile : undefined;
  } catch {
    return undefined;
  }
}

const TYPES: Record<string, string> = {
  wav: "audio/wav",
  ogg: "audio/ogg",
  opus: "audio/ogg",
  mp3: "audio/mpeg",
  webm: "audio/webm",
  flac: "audio/flac",
};

export function audioType(path: string): string {
  return TYPES[path.split(".").pop()?.toLowerCase() ?? ""] ?? "application/octet-stream";
}

/** `bytes=a-b`, `bytes=a-` or `bytes=-n` against a file of `size` bytes; null if unsatisfiable. */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | null | undefined {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === "" && m[2] === "")) return undefined; // not one we read: send it all
  let start: number, end: number;
  if (m[1] === "") {
    start = Math.max(0, size - Number(m[2]));
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  return start > end || start >= size ? null : { start, end };
}

/** Streams bytes [start, start + length) of the file and closes it at the end or on cancel. */
function fileSlice(file: Deno.FsFile, start: number, length: number): ReadableStream<Uint8Array> {
  let left = length;
  let positioned = false;
  return new ReadableStream({
    async pull(ctrl) {
      if (!positioned) {
        await file.seek(start, Deno.SeekMode.Start);
        positioned = true;
      }
      if (left <= 0) {
        file.close();
        ctrl.close();
        return;
      }
      const buf = new Uint8Array(Math.min(64 * 1024, left));
      const n = await file.read(buf);
      if (n === null) {
        file.close();
        ctrl.close();
        return;
      }
      left -= n;
      ctrl.enqueue(buf.subarray(0, n));
    },
    cancel() {
      file.close();
    },
  });
}

/** A 200 or 206 response streaming the file (Range lets the player seek). */
export async function fileResponse(path: string, range: string | undefined): Promise<Response> {
  const file = await Deno.open(path, { read: true });
  const size = (await file.stat()).size;
  const wanted = parseRange(range, size);
  const headers = new Headers({
    "content-type": audioType(path),
    "accept-ranges": "bytes",
    "cache-control": "private, no-store",
  });
  if (wanted === null) {
    file.close();
    headers.set("content-range", `bytes */${size}`);
    return new Response(null, { status: 416, headers });
  }
  const { start, end } = wanted ?? { start: 0, end: size - 1 };
  const length = Math.max(0, end - start + 1);
  headers.set("content-length", String(length));
  if (wanted) headers.set("content-range", `bytes ${start}-${end}/${size}`);
  return new Response(fileSlice(file, start, length), { status: wanted ? 206 : 200, headers });
}
