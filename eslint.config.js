// Lint: typescript-eslint recommended, plus the purity rule for domain folders
// (no clock, no randomness, no env, no console, no SDKs: pass `now` in).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const pureFolders = ['shared/api/**', 'shared/catalog/**', 'shared/scheduling/**', 'shared/disruption/**', 'shared/launch/**'];

export default tseslint.config(
  { ignores: ['node_modules/**', 'cdk.out/**', '.nodefleet/**', 'dist/**', 'coverage/**', '**/*.js', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: pureFolders,
    rules: {
      'no-console': 'error',
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'Domain code is pure: pass `now` in.' },
        { object: 'Math', property: 'random', message: 'Domain code is pure: no randomness.' },
        { object: 'process', property: 'env', message: 'Domain code is pure: parse env in the handler.' },
      ],
      'no-restricted-syntax': ['error', { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: 'Domain code is pure: pass `now` in.' }],
      'no-restricted-imports': [
        'error',
        { patterns: ['@aws-sdk/*', '@kubernetes/*', '@aws-lambda-powertools/*', '@middy/*', 'node:fs', 'node:http', 'node:net', 'fs', 'http'] },
      ],
    },
  },
);
