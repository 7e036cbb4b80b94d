/** The char codes of the lower-case hex digits, by value: String.fromCharCode makes one flat string of them. */
export const HEX_DIGITS: readonly number[] = Array.from('0123456789abcdef', (digit) => digit.charCodeAt(0))
