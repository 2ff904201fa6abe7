/**
 * The submission's README: who, what, where, the verdict, the suite and spec, the validity period,
 * the signer and each file's SHA-256, and the command that checks it. Generated from product.yaml,
 * the certificate and the files alone (no date of the submit itself), so the same run gives the
 * same bytes and `verify` can regenerate it.
 */
import type { Certificate } from '../certificate/types.ts';
import type { Product } from './product.ts';

/** A table cell: one line, `|` and `<` escaped. */
const cell = (text: string): string => text.replace(/\s+/g, ' ').replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/</g, '&lt;');

/** The README of a submission folder named `name`; `digests`: file name → SHA-256 (the README itself excluded). */
export function renderSubmissionReadme(name: string, product: Product, cert: Certificate, digests: Record<string, string>): string {
  const s = cert.results.summary;
  const rows: [string, string][] = [
    ['vendor', product.vendor],
    ['product', product.product],
    ['version', product.version],
    ['deployment certified', product.url],
    ['contact', product.contact],
    [
      'verdict',
      `${cert.results.gate.result.toUpperCase()} (profile ${cert.profile}${cert.results.gate.strict ? ', strict' : ''}): ${s.pass} passed, ${s.warn} warned, ${s.fail} failed, ${s.skipped} skipped`,
    ],
    ['suite', `${cert.suite.name} ${cert.suite.version}, source SHA-256 ${cert.digests.suite}`],
    ['spec', `${cert.spec.title}, SHA-256 ${cert.digests.spec}`],
    ['certificate', `SHA-256 ${cert.digests.certificate} (canonical JSON)`],
    ['issued', cert.issuedAt ?? '(not recorded)'],
    ['valid until', cert.validUntil ?? '(not recorded)'],
    ['signed by', cert.signature ? `Ed25519 key ${cert.signature.publicKeyFingerprint}` : 'not signed'],
  ];
  const files = Object.keys(digests).sort();
  return [
    `# ${cell(product.vendor)} ${cell(product.product)} ${cell(product.version)}`,
    '',
    'A conformance submission for the Inventory Service specification, written by',
    '`inventory-conformance submit` from a signed certificate. Anyone can check it with the same',
    "harness version and the vendor's public key:",
    '',
    '```sh',
    `npx inventory-conformance@${cert.suite.version} verify ${name} --public-key <vendor-public-key.pem>`,
    '```',
    '',
    '| | |',
    '|---|---|',
    ...rows.map(([k, v]) => `| ${k} | ${cell(v)} |`),
    '',
    '## Files',
    '',
    '| file | SHA-256 |',
    '|---|---|',
    ...files.map((f) => `| \`${f}\` | \`${digests[f]}\` |`),
    '',
    '`certificate.json` records the digests of `junit.xml` and `evidence.har`; `certificate.html`',
    'renders it; `product.yaml` follows `schemas/product.schema.json` of the harness and names the',
    'deployment the certificate certifies.',
    '',
  ].join('\n');
}
