/** A count with its noun, singular for one: `1 plugin`, `2 plugins`. */
export const plural = (count: number, noun: string, nouns = `${noun}s`): string => `${count} ${count === 1 ? noun : nouns}`
