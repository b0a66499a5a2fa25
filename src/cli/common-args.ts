/** Arguments every command takes, and resolving the configuration from them like `serve` does. */

import { loadConfig, type Config } from '../config.ts'

/** `--config` and `--data-dir`, shared by every command. */
export const configArgs = {
  config: { type: 'string', description: 'Config file (default: ./flagd.config.ts when present)' },
  'data-dir': { type: 'string', description: 'Data directory (default: ./data, or FLAGD_DATA_DIR)' },
} as const

/** Loads the configuration with the command's flags on top. */
export function configFromArgs(args: { config?: string | undefined; 'data-dir'?: string | undefined; host?: string | undefined; port?: string | undefined }): Promise<Config> {
  return loadConfig({ configPath: args.config, flags: { dataDir: args['data-dir'], host: args.host, port: args.port } })
}
