/** Writing a whole text through a file handle, however many calls the kernel takes to accept it. */

import type { FileHandle } from 'node:fs/promises'

/**
 * Writes all of `text` at the handle's position (the end, for a handle opened to append); answers the
 * bytes. The text goes to the handle as it is, which encodes it on the way out (a copy into a Buffer
 * first cost an import of 10,000 flags more than the writes, docs/performance.md#imports); only the
 * part a short write left is made into bytes.
 */
export async function writeAll(handle: Pick<FileHandle, 'write'>, text: string): Promise<number> {
  const length = Buffer.byteLength(text, 'utf8')
  let written = (await handle.write(text)).bytesWritten
  if (written >= length) return length
  const bytes = Buffer.from(text, 'utf8')
  while (written < length) written += (await handle.write(bytes, written, length - written)).bytesWritten
  return length
}
