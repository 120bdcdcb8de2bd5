// The words a printed command starts with so that it runs as printed in the shell that started
// this process. After the README's quick start (`npx -y deno@2.9.6 task run`) there is no `deno`
// on the caller's PATH: a bare `deno task call ...` would fail with "command not found".
//
// What this process sees of PATH is not the caller's: npx puts its own bin folder first, and
// `deno task` puts the project's node_modules/.bin there. Those entries are left out before
// looking for `deno`.

export interface Launch {
  /** This process's environment (PATH, and npm's markers when npx started it). */
  env: Record<string, string | undefined>;
  /** The Deno executable running now (Deno.execPath()). */
  execPath: string;
  /** Deno.version.deno. */
  version: string;
  /** The real path of an executable file, or undefined when there is none at `path`. */
  resolve(path: string): string | undefined;
}

/** PATH entries added by npx or `deno task`, not by the caller's shell. */
function addedByLauncher(dir: string): boolean {
  return /[\\/]_npx[\\/]/.test(dir) || /node_modules[\\/]\.bin[\\/]?$/.test(dir);
}

/**
 * The caller's own PATH folders. npm's exec puts its folders first (the package's bin folder,
 * which is the global one when the package is installed globally, then node_modules/.bin up
 * the tree) and ends them with its node-gyp-bin folder; the caller's PATH follows.
 */
function callerPath(path: string): string[] {
  const dirs = path.split(":").filter(Boolean);
  const npmEnd = dirs.findLastIndex((d) => /node-gyp-bin[\\/]?$/.test(d));
  return dirs.slice(npmEnd + 1).filter((d) => !addedByLauncher(d));
}

/** Single-quoted for a POSIX shell when it holds anything but safe characters. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * `deno` when the caller's PATH finds this same executable; `npx -y deno@<version>` when npx
 * started this process and PATH has no such deno; otherwise this executable's full path.
 */
export function denoCommand(launch: Launch): string {
  const self = launch.resolve(launch.execPath) ?? launch.execPath;
  for (const dir of callerPath(launch.env.PATH ?? "")) {
    const found = launch.resolve(`${dir}/deno`);
    if (found) {
      if (found === self) return "deno";
      break; // the caller's `deno` is another executable: name this one in full
    }
  }
  const viaNpx = launch.env.npm_lifecycle_event === "npx" || launch.env.npm_command === "exec";
  if (viaNpx) return `npx -y deno@${launch.version}`;
  return shellWord(launch.execPath);
}

function realExecutable(path: string): string | undefined {
  try {
    const real = Deno.realPathSync(path);
    const info = Deno.statSync(real);
    return info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0 ? real : undefined;
  } catch {
    return undefined;
  }
}

/** denoCommand for this process. */
export function thisDenoCommand(): string {
  return denoCommand({
    env: Deno.env.toObject(),
    execPath: Deno.execPath(),
    version: Deno.version.deno,
    resolve: realExecutable,
  });
}
