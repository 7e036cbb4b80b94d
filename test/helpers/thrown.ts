/** What `run` throws, or undefined: for an exact check of its message, where t.throws matches a part of it. */
export function thrown (run: () => unknown): Error | undefined {
  try {
    run()
  } catch (error) {
    return error as Error
  }
  return undefined
}
