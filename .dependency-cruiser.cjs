/* global module */
/**
 * Architecture boundaries (shared/STYLE.md "Where code lives and who may import whom"), checked by
 * `npm run depcruise` (part of `npm run lint`, so of `npm test`). eslint bans clock / random / env /
 * console in the pure folders; this file keeps the import table true.
 *
 * Deviations from the STYLE.md table, and why:
 * - shared/api may import zod, yaml (YAML reading with line numbers, api/yaml.ts), cron-parser
 *   (budget schedule validation, api/validate.ts) and node:crypto (deterministic drift hashes,
 *   api/hash.ts). The other pure folders (catalog, scheduling, disruption) get the same list of
 *   pure libraries (disruption/budgets.ts evaluates budget crons with cron-parser) and nothing else
 *   from npm or node: no SDKs, no fs/http/net.
 * - "The AWS SDK" means @aws-sdk/*, @smithy/* and @aws-crypto/* (request signing for the EKS token
 *   lives in shared/aws too).
 * - Package-ownership rules skip *.test.ts: a test may drive a local server with the real SDK client
 *   (infra/local/ec2/server.test.ts checks the EC2 query protocol that way). Layer rules still apply.
 * - infra/local may import functions/* (not the CLI): it composes the real handlers / task functions.
 * - infra/aws may import any Node core module (build-time code: the synth script reads the ASL files).
 *
 * Exceptions for code that breaks a rule today are in KNOWN_VIOLATIONS below, one path each, with the
 * reason; remove an entry when its file is fixed.
 */

/** Test files: layer rules apply to them, package-ownership rules do not. */
const TEST = '\\.test\\.ts$';

/** npm libraries the pure folders may use (no I/O, no clock). */
const PURE_NPM = '^node_modules/(zod|yaml|smol-toml|cron-parser|@bufbuild/cel|@bufbuild/cel-spec|@bufbuild/protobuf)/';
/** Node core modules the pure folders may use (resolved name; `node:crypto` resolves to `crypto`). */
const PURE_CORE = '^crypto$';

/**
 * Owned packages match on the resolved path (node_modules/…) or, if a subpath export does not
 * resolve, on the bare specifier, hence `(node_modules/)?`.
 */
const AWS_SDK = '^(node_modules/)?(@aws-sdk|@smithy|@aws-crypto)/';
const KUBE_CLIENT = '^(node_modules/)?@kubernetes/client-node/';
const LAMBDA_RUNTIME = '^(node_modules/)?(@aws-lambda-powertools|@middy)/';
const CDK = '^(node_modules/)?(aws-cdk-lib|constructs|cdk-nag)/';

/**
 * Files that break a rule today, by rule name. Each entry is a `from.pathNot` exception for one file,
 * with the reason and what would fix it. Keep this list short and shrinking.
 */
const KNOWN_VIOLATIONS = {
  // none today (shared/runtime gets its SDK clients from shared/aws/clients.ts)
};

/** A rule forbidding `from` → anything not matching `allowed` (local paths, npm, core). */
function onlyMayImport(name, comment, from, allowed) {
  return {
    name,
    comment,
    severity: 'error',
    from: { path: from, pathNot: [TEST, ...(KNOWN_VIOLATIONS[name] ?? [])] },
    to: { pathNot: allowed },
  };
}

/** A rule: only files under `owner` may import `pkg`. */
function onlyOwnerImports(name, comment, owner, pkg) {
  return {
    name,
    comment,
    severity: 'error',
    from: { pathNot: [owner, TEST, ...(KNOWN_VIOLATIONS[name] ?? [])] },
    to: { path: pkg },
  };
}

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    // ---- pure domain folders: a fixed list of what they may import ----
    onlyMayImport('api-imports-nothing-else', 'shared/api is the bottom layer: only itself and pure libraries.', '^shared/api/', [
      '^shared/api/',
      PURE_NPM,
      PURE_CORE,
    ]),
    onlyMayImport('catalog-imports-api', 'shared/catalog may import shared/api (and its ./data JSON), no SDKs.', '^shared/catalog/', [
      '^shared/(api|catalog)/',
      PURE_NPM,
      PURE_CORE,
    ]),
    onlyMayImport('scheduling-imports-api-catalog', 'shared/scheduling may import api and catalog; never disruption or adapters.', '^shared/scheduling/', [
      '^shared/(api|catalog|scheduling)/',
      PURE_NPM,
      PURE_CORE,
    ]),
    onlyMayImport(
      'disruption-imports-api-catalog-scheduling',
      'shared/disruption may import api, catalog, scheduling (it reuses the simulator); never adapters.',
      '^shared/disruption/',
      ['^shared/(api|catalog|scheduling|disruption)/', PURE_NPM, PURE_CORE],
    ),
    onlyMayImport(
      'launch-imports-api-catalog-scheduling-observability',
      'shared/launch (a new NodeClaim record and its launch through the ports, for the provisioner and disruption alike) may import api, catalog, scheduling types and the metric names; never adapters.',
      '^shared/launch/',
      ['^shared/(api|catalog|scheduling|launch)/', '^shared/runtime/observability\\.ts$', PURE_NPM, PURE_CORE],
    ),

    // ---- adapters and runtime: which shared layers they may use ----
    {
      name: 'aws-adapters-layers',
      comment: 'shared/aws implements ports: it may import api and catalog, not scheduling, disruption, kube or runtime.',
      severity: 'error',
      from: { path: '^shared/aws/' },
      to: { path: '^shared/(scheduling|disruption|kube|runtime)/' },
    },
    {
      name: 'kube-adapters-layers',
      comment: 'shared/kube may import api only.',
      severity: 'error',
      from: { path: '^shared/kube/' },
      to: { path: '^shared/(aws|catalog|scheduling|disruption|runtime)/' },
    },
    {
      name: 'runtime-layers',
      comment: 'shared/runtime (middy chain, env, composition root) may import api, aws, kube; it decides nothing.',
      severity: 'error',
      from: { path: '^shared/runtime/' },
      to: { path: '^shared/(catalog|scheduling|disruption)/' },
    },
    {
      name: 'shared-stays-in-shared',
      comment: 'Code in shared/ never imports functions, infra, tests, or anything outside the repo (e.g. the ../shared data folder).',
      severity: 'error',
      from: { path: '^shared/', pathNot: TEST },
      to: { path: ['^(functions|infra|test|statemachines)/', '^\\.\\./'] },
    },
    {
      name: 'no-circular-in-shared',
      comment: 'No import cycles inside shared/. A cycle closed only by a type-only import has no runtime effect and is allowed.',
      severity: 'error',
      from: { path: '^shared/' },
      to: { path: '^shared/', circular: true, dependencyTypesNot: ['type-only'], viaOnly: { dependencyTypesNot: ['type-only'] } },
    },

    // ---- functions ----
    {
      name: 'function-imports-no-other-function',
      comment: 'A Lambda never imports another Lambda (functions/cli, a dev tool, may import anything).',
      severity: 'error',
      from: { path: '^functions/([^/]+)/', pathNot: '^functions/cli/' },
      to: { path: '^functions/', pathNot: '^functions/$1/' },
    },
    {
      name: 'function-imports-no-infra',
      comment: 'Lambdas are deployed code: they never import infra/ (only the CLI composes infra/local).',
      severity: 'error',
      from: { path: '^functions/', pathNot: '^functions/cli/' },
      to: { path: '^infra/' },
    },
    {
      name: 'agent-decides-nothing',
      comment: 'functions/agent may import api, kube, the EventBridge publisher and the cluster-view store: no runtime, scheduling, disruption, catalog.',
      severity: 'error',
      from: { path: '^functions/agent/' },
      to: { path: ['^shared/(runtime|scheduling|disruption|catalog)/', '^shared/aws/(?!(eventbridge-publisher|s3-cluster-view-store)\\.ts$)'] },
    },

    // ---- infra ----
    {
      name: 'infra-aws-imports-cdk-and-contract',
      comment:
        'infra/aws: aws-cdk-lib, constructs, cdk-nag, shared/api/contract.ts (env key names, table, bus), shared/api/iam-policy.ts (the role policies), shared/api/metrics.ts (the dashboard metric names), shared/api/settings.ts (the Karpenter settings, checked at synth), statemachines/, Node core.',
      severity: 'error',
      from: { path: '^infra/aws/', pathNot: TEST },
      // Node core modules are fine in build-time code (the synth script reads the ASL, hashes names).
      to: { pathNot: ['^infra/aws/', CDK, '^shared/api/(contract|iam-policy|metrics|settings)\\.ts$', '^statemachines/'], dependencyTypesNot: ['core'] },
    },
    {
      name: 'infra-local-layers',
      comment:
        'infra/local implements ports and serves wire protocols: api, catalog and the functions it composes; never infra/aws, the CLI or other adapters.',
      severity: 'error',
      from: { path: '^infra/local/' },
      to: { path: ['^infra/aws/', '^functions/cli/', '^shared/(scheduling|disruption|aws|kube|runtime)/'] },
    },

    // ---- package ownership ----
    onlyOwnerImports('aws-sdk-only-in-shared-aws', 'Only shared/aws imports the AWS SDK (@aws-sdk, @smithy, @aws-crypto).', '^shared/aws/', AWS_SDK),
    onlyOwnerImports('kube-client-only-in-shared-kube', 'Only shared/kube imports @kubernetes/client-node.', '^shared/kube/', KUBE_CLIENT),
    onlyOwnerImports('powertools-middy-only-in-shared-runtime', 'Only shared/runtime imports Powertools and middy.', '^shared/runtime/', LAMBDA_RUNTIME),
    onlyOwnerImports('cdk-only-in-infra-aws', 'Only infra/aws imports aws-cdk-lib, constructs, cdk-nag.', '^infra/aws/', CDK),
    {
      name: 'highs-only-in-test',
      comment: 'highs (the ILP solver, a devDependency) is for test/bench and tests only, never shipped code.',
      severity: 'error',
      from: { path: '^(functions|shared|infra)/' },
      to: { path: '^(node_modules/)?highs/' },
    },
    {
      name: 'no-unresolvable-local',
      comment: 'A relative import that does not resolve is a typo or a moved file.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true, path: '^\\.' },
    },
  ],
  options: {
    // test/real is outside the cruised folders: reached from them (the CLI's dev-only
    // `demo --cluster real` loads the real tier from it) it is not followed further.
    doNotFollow: { path: ['node_modules', '^test/real/'] },
    // Worktrees may symlink node_modules; keep its paths as node_modules/… for the rules.
    preserveSymlinks: true,
    exclude: { path: '^(cdk\\.out|dist|coverage)/' },
    // Count `import type` too: a type import still couples the layers.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json', '.d.ts'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
