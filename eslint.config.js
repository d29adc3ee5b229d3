// ESLint flat config: typescript-eslint's recommended rules, kept pragmatic.
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores(['node_modules/', '.data/', 'coverage/', 'dist/']),
  tseslint.configs.recommended,
  {
    rules: {
      // `_`-prefixed names are deliberately unused (placeholders, destructuring leftovers).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
    },
  },
  {
    // Tests poke at raw SDK responses and fault-injection wrappers; `any` is fine there.
    files: ['**/*.test.ts', 'test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
