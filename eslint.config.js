import neostandard from 'neostandard'

export default [
  ...neostandard({ ts: true, ignores: ['dist/**', 'coverage/**', '.ci/node/**'] }),
  // A TypeBox schema and its Static type share one name by design; TypeScript itself catches real redeclarations.
  { rules: { '@typescript-eslint/no-redeclare': 'off' } },
  // TypeBox's Type object holds every builder, so a bundle keeps them all: the builders imported one
  // by one (`import * as Type`) left 70 KB out of what a start loads (docs/performance.md).
  {
    rules: {
      'no-restricted-syntax': ['error', {
        selector: "ImportDeclaration[source.value='@sinclair/typebox'] > ImportSpecifier[imported.name='Type']",
        message: 'import * as Type from \'@sinclair/typebox\': the Type object would bring every builder into the bundle.',
      }],
    },
  },
]
