/**
 * Reads a byte stream to the end, refusing to buffer more than `limit` bytes: counted as the bytes
 * arrive, so a missing or lying length header cannot get past it. Used for request bodies and for
 * remote migration documents.
 */

/** Reads `stream` whole, or calls `tooLarge()` (which throws) once more than `limit` bytes arrived. */
export async function readLimited(stream: ReadableStream<Uint8Array> | null, limit: number, tooLarge: () => Error): Promise<Uint8Array> {
  if (!stream) return new Uint8Array(0)
  const reader = stream.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      throw tooLarge()
    }
    chunks.push(value)
  }
  if (chunks.length === 1) return chunks[0] as Uint8Array
  const all = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    all.set(chunk, offset)
    offset += chunk.byteLength
  }
  return all
}
