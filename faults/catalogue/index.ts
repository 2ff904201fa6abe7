/**
 * The fault catalogue: every `faults/catalogue/<area>.ts` in this folder, collected. Each file
 * exports `faults: FaultDefinition[]`; the file decides the area (`auth.ts` → `auth`), so a new
 * area, or a new file of faults, needs no edit here. Files are read in name order.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Fault, FaultDefinition } from '../fault.ts';

export type { Fault, FaultDefinition } from '../fault.ts';

const DIR = path.dirname(fileURLToPath(import.meta.url));

/** The catalogue's files (`<area>.ts`), in name order. */
export const CATALOGUE_FILES: readonly string[] = fs
  .readdirSync(DIR)
  .filter((f) => f.endsWith('.ts') && f !== 'index.ts' && !f.endsWith('.d.ts'))
  .sort();

const modules = await Promise.all(
  CATALOGUE_FILES.map(async (file) => ({
    file,
    module: (await import(pathToFileURL(path.join(DIR, file)).href)) as { faults?: FaultDefinition[] },
  })),
);

/** Every fault, with its area. */
export const faults: Fault[] = modules.flatMap(({ file, module }) => {
  if (!Array.isArray(module.faults)) throw new Error(`faults/catalogue/${file} exports no \`faults\` array`);
  return module.faults.map((f) => ({ ...f, area: file.replace(/\.ts$/, '') }));
});

/** The fault named `name`, or an error listing the names. */
export function faultByName(name: string): Fault {
  const f = faults.find((x) => x.name === name);
  if (!f) throw new Error(`unknown fault "${name}"; known: ${faults.map((x) => x.name).join(', ')}`);
  return f;
}
