/**
 * Settings of the command line's gate, config file, certificate and console (`inventory-conformance`,
 * cli/). Like every setting, each is a variable and a flag; the flag wins.
 */
import { defineGroup, setting } from './define.ts';

export const CLI_SETTINGS = defineGroup('cli', 'Gate, config file, certificate and console', [
  setting({
    name: 'CONFORMANCE_CONFIG',
    kind: 'path',
    flag: '--config',
    help: 'Config file (YAML, schemas/conformance-config.schema.json); default: conformance.yaml in the current folder when present. Keys only as ${VAR} references.',
  }),
  setting({
    name: 'CONFORMANCE_TARGET',
    kind: 'string',
    flag: '--target',
    help: 'Which target of the config file to certify (default: its `default` target, or its only one).',
  }),
  setting({
    name: 'CONFORMANCE_STRICT',
    kind: 'boolean',
    default: false,
    flag: '--strict',
    help: 'Strict gate: anything not certified (a missing key, the profile) fails the gate with exit code 4.',
  }),
  setting({
    name: 'CONFORMANCE_VERBOSE',
    kind: 'boolean',
    default: false,
    flag: '--verbose',
    help: "Console: every check as it ends, the load checks' progress and each key's pacing; default: a header, one line as each phase starts and ends, then the failures, what was not certified and the gate.",
  }),
  setting({
    name: 'CONFORMANCE_BASELINE',
    kind: 'path',
    flag: '--baseline',
    help: 'Baseline of known failures (YAML): only failures not listed fail the gate; the certificate lists the known ones and the fixed ones apart.',
  }),
  setting({
    name: 'CONFORMANCE_NO_REGRESSION_FROM',
    kind: 'path',
    flag: '--no-regression-from',
    help: 'A previous run\'s certificate.json: the gate fails only when a requirement that passed (or warned) there fails now, or a new requirement fails; the certificate gets a "compared with" section.',
  }),
  setting({
    name: 'CONFORMANCE_VALID_DAYS',
    kind: 'integer',
    default: 90,
    min: 1,
    max: 3650,
    unit: 'days',
    flag: '--valid-days',
    help: 'Days the certificate stays valid after it is issued (its validUntil); `verify` refuses it afterwards unless given --accept-expired.',
  }),
  setting({
    name: 'CONFORMANCE_SIGNING_KEY_FILE',
    kind: 'path',
    flag: '--sign-key',
    help: 'Ed25519 private key (PKCS#8 PEM file) that signs certificate.json; `verify --public-key` checks it.',
  }),
] as const);
