/**
 * The TIFF header, on its own (the registry's sniffer uses it without loading any decoder): the
 * byte order mark, the magic number 42, and the offset of the first image file directory.
 */

/** Whether bytes start with a classic TIFF header (little- or big-endian). */
export function isTiff(b: Uint8Array): boolean {
  return b.length >= 8 && ((b[0] === 0x49 && b[1] === 0x49 && b[2] === 0x2a && b[3] === 0) || (b[0] === 0x4d && b[1] === 0x4d && b[2] === 0 && b[3] === 0x2a))
}

/**
 * Whether a file's leading bytes are a TIFF header whose first directory lies inside a file of
 * `size` bytes (the directory itself may be anywhere, the end of the file included).
 */
export function tiffHeaderAgrees(head: Uint8Array, size: number): boolean {
  if (!isTiff(head)) return false
  const first = new DataView(head.buffer, head.byteOffset, head.byteLength).getUint32(4, head[0] === 0x49)
  return first >= 8 && first + 2 <= size
}
