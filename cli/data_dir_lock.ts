// One `deno task run` per data folder. Two runs on one folder would share the embedded database
// and overwrite each other's demo key (the first run's printed key then gets 401), so the second
// is refused before it touches anything. The lock is the operating system's (flock on
// `run.lock`): it goes with the process, so a run that crashed or was killed never leaves a stale
// lock behind, and no pid check or clean-up is needed.
import { join } from "node:path";

export const LOCK_FILE = "run.lock";

/** The data folder is another run's: the message says which folder, which process, what to do. */
export class DataDirInUse extends Error {
  constructor(readonly dataDir: string, readonly holder: string | undefined) {
    super(
      `The data folder ${dataDir} is in use by another \`deno task run\`` +
        (holder ? ` (process ${holder})` : "") +
        ". Stop that run (Ctrl-C in its terminal), or give this one its own folder: " +
        `DATA_DIR=data-2 with other ports (API_PORT, WORKER_PORT, BRAIN_PORT).`,
    );
    this.name = "DataDirInUse";
  }
}

export interface DataDirLock {
  /** Frees the folder for the next run (the OS also frees it when the process ends). */
  release(): void;
}

/** Takes the data folder for this process, or throws DataDirInUse without changing anything. */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  await Deno.mkdir(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, LOCK_FILE);
  // Not truncated on open: the holder's pid stays readable for the refusal's message.
  const file = await Deno.open(path, { read: true, write: true, create: true, mode: 0o600 });
  if (!await file.tryLock(true)) {
    const holder = (await Deno.readTextFile(path).catch(() => "")).trim();
    file.close();
    throw new DataDirInUse(dataDir, /^\d+$/.test(holder) ? holder : undefined);
  }
  await file.truncate(0);
  await file.write(new TextEncoder().encode(`${Deno.pid}\n`));
  return {
    release() {
      try {
        file.close(); // closing the last descriptor drops the lock
      } catch { /* already closed */ }
    },
  };
}
