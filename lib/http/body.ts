/**
 * Node writes a body string of up to this many characters from its stack. A longer one it first
 * copies into a buffer of three bytes a character (UTF-8's most), and Node before 26.10 also keeps
 * the string itself in the heap until the client has taken it all: a long body is sent as a
 * Buffer, which holds its own length, outside the heap.
 */
export const STACK_WRITE_CHARS = 16 * 1024 / 3

/** A body as it is best written: text while Node writes it from its stack, else bytes. */
export function written (body: Buffer | string): Buffer | string {
  return typeof body === 'string' && body.length > STACK_WRITE_CHARS ? Buffer.from(body) : body
}
