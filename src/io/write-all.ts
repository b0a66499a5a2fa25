/** Writing a whole text through a file handle, however many calls the kernel takes to accept it. */

import type { FileHandle } from 'node:fs/promises'

/** Writes all of `text` at the handle's position (the end, for a handle opened to append); answers the bytes. */
export async function writeAll(handle: FileHandle, text: string): Promise<number> {
  const bytes = Buffer.from(text, 'utf8')
  let written = 0
  while (written < bytes.length) written += (await handle.write(bytes, written, bytes.length - written)).bytesWritten
  return bytes.length
}
