import neostandard from 'neostandard'

export default [
  ...neostandard({ ts: true, ignores: ['dist/**', 'coverage/**', '.ci/node/**'] }),
  // A TypeBox schema and its Static type share one name by design; TypeScript itself catches real redeclarations.
  { rules: { '@typescript-eslint/no-redeclare': 'off' } },
]
