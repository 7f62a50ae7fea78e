// Lint as Temporal's samples do: typescript-eslint with the rules that catch real bugs in this kind
// of code (a promise nobody awaits, a deprecated SDK call), and workflow code kept free of I/O.
// Formatting is Prettier's job (.prettierrc.json); eslint-config-prettier turns off clashing rules.
import { builtinModules } from 'node:module';
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((name) => `node:${name}`)];

export default tseslint.config(
  { ignores: ['node_modules/**', '.data/**', 'dist/**', 'bench/results/**', 'test/fixtures/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-deprecated': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // Tests and the API's JSON handling read untyped bodies on purpose.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // Workflow code is replayed: no I/O, nothing that reaches the database, providers, webhooks or
    // the HTTP layer. Types may still be shared (they vanish at build).
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'Workflow code must not do I/O: use activities.' })),
          patterns: [
            {
              group: ['**/src/data/**', '**/src/telephony/**', '**/src/webhooks/**', '**/src/api/**'],
              message: 'Workflows reach data, providers, webhooks and the API only through activities.',
              allowTypeImports: true,
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.mjs', '**/*.mts'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // The `oco` launcher: plain CommonJS that loads tsx, then the TypeScript entry point.
    files: ['bin/**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      sourceType: 'commonjs',
      globals: { require: 'readonly' },
    },
    rules: { ...tseslint.configs.disableTypeChecked.rules, '@typescript-eslint/no-require-imports': 'off' },
  },
  prettier,
);
