// Lint rules: typescript-eslint's type-aware recommended set, plus the project's boundaries.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import warren from './lint/floors-rule.js';

export default tseslint.config(
  { ignores: ['node_modules/**', 'vendor/**', 'data/**', 'workspaces/**', 'test/artifacts/**', 'bench/results/**', 'local-hub/page/**/*.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
    },
  },
  // The house plan: imports point down the floors written in lint/floors.js.
  { plugins: { warren }, rules: { 'warren/floors': 'error' } },
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: {
      parserOptions: { projectService: false },
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly' },
    },
  },
);
