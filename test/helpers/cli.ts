import { type CliIo, runCli } from '../../client/cli/main.ts';

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI in-process with captured output; `env` is all the environment it sees. */
export async function runCliCaptured(
  args: readonly string[],
  options: { env: Record<string, string>; cwd: string; stdin?: string; now?: () => Date },
): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    readStdin: async () => options.stdin ?? '',
    env: options.env,
    now: options.now ?? (() => new Date()),
    cwd: options.cwd,
  };
  const code = await runCli(args, io);
  return { code, stdout, stderr };
}
