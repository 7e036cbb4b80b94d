import * as Type from '@sinclair/typebox'

/**
 * A tokens file in its JSON form: a list of tokens. (The other form is one token a line.)
 * A token is what follows `Token ` or `Bearer ` in an Authorization header: no white space.
 */
export const TokenList = Type.Array(Type.String({ pattern: '^\\S+$', description: 'a token: no white space' }), {
  minItems: 1,
  description: 'at least one token',
})
