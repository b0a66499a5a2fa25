/** Arguments every command takes, and resolving the configuration from them like `serve` does. */

import { openAdmin } from '../admin-access.ts'
import { type Config, loadConfig } from '../config.ts'
import type { AdminApi } from '../services/admin-service.ts'

/** `--config` and `--data-dir`, shared by every command. */
export const configArgs = {
  config: {
    type: 'string',
    description: 'Config file, TypeScript or .json (default: ./flagd.config.ts or ./flagd.config.json when present)',
  },
  'data-dir': { type: 'string', description: 'Data directory (default: ./data, or FLAGD_DATA_DIR)' },
} as const

/** Loads the configuration with the command's flags on top. */
export function configFromArgs(args: {
  config?: string | undefined
  'data-dir'?: string | undefined
  host?: string | undefined
  port?: string | undefined
}): Promise<Config> {
  return loadConfig({ configPath: args.config, flags: { dataDir: args['data-dir'], host: args.host, port: args.port } })
}

/** Runs `work` with the admin API of the configured data directory (daemon running or not). */
export async function withAdmin<T>(
  args: Parameters<typeof configFromArgs>[0],
  work: (admin: AdminApi, viaDaemon: boolean) => Promise<T>,
  options: { mayInitialise?: boolean } = {},
): Promise<T> {
  const { admin, close, viaDaemon } = await openAdmin(await configFromArgs(args), options.mayInitialise)
  try {
    return await work(admin, viaDaemon)
  } finally {
    await close()
  }
}
